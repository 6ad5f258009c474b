"""Narrow adjustments of Faust 0.15.3, applied in a worker process.

``limit_fetch_wait`` and ``highwaters_from_fetch`` are for the Tansu profile: each replaces a value Faust
does not let us configure. ``redeliver_instead_of_drop`` fixes a Faust race that loses messages after a
rebalance on any broker, so it is always applied.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from .. import security
from ._versions import check_versions

log = logging.getLogger("attune.streams")
#: Patches applied in this process (each once: a second create_app must not wrap a wrapper).
_APPLIED: set[str] = set()


def limit_fetch_wait(ms: int) -> None:
    """Faust hard-codes the consumer's long-poll wait (1.5 s); Tansu answers only when it expires."""
    from faust.transport.drivers import aiokafka as driver

    check_versions()
    create = driver.AIOKafkaConsumerThread._create_worker_consumer

    def _create_worker_consumer(self: Any, transport: Any) -> Any:
        consumer = create(self, transport)
        consumer._fetch_max_wait_ms = ms  # read when the consumer starts its fetcher
        return consumer

    driver.AIOKafkaConsumerThread._create_worker_consumer = _create_worker_consumer  # type: ignore[method-assign]


async def fetched_highwaters(bootstrap: str, partitions: tuple[Any, ...], timeout: float = 10.0) -> dict[Any, int]:
    """High watermarks as a fetch reports them, for brokers whose ListOffsets is wrong (Tansu).

    Tansu's ListOffsets answers "last batch's base offset + 1" (601 for 900 records sent in batches of
    300), while its fetch responses carry the true high watermark. One fetch per partition, started
    just below the reported end, therefore gives the right end without reading the log.
    """
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=10, **security.client_kwargs()
    )
    try:
        await consumer.start()  # inside: a failed start (broker down) is stopped too
        tps = {TopicPartition(tp.topic, tp.partition): tp for tp in partitions}
        consumer.assign(list(tps))
        reported = await consumer.end_offsets(list(tps))
        for tp in tps:
            consumer.seek(tp, max(reported[tp] - 1, 0))
        out: dict[Any, int] = {}
        pending = set(tps)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            await consumer.getmany(*pending, timeout_ms=100, max_records=1)
            for tp in list(pending):
                hw = consumer.highwater(tp)
                if hw is not None:
                    out[tps[tp]] = max(hw, reported[tp])
                    pending.discard(tp)
        if pending:
            raise TimeoutError(f"no fetch high watermark for {sorted(map(str, pending))}")
        return out
    finally:
        await consumer.stop()


def highwaters_from_fetch(bootstrap: str) -> None:
    """Make Faust's table recovery read to the true end of each changelog partition."""
    from faust.transport.drivers import aiokafka as driver

    check_versions()

    async def highwaters(self: Any, *partitions: Any) -> Mapping[Any, int]:
        if not partitions:
            return {}
        return await asyncio.wait_for(fetched_highwaters(bootstrap, partitions), 30)

    driver.AIOKafkaConsumerThread.highwaters = highwaters  # type: ignore[method-assign]


#: Messages Faust would have dropped as "already read" and that were delivered again instead.
REDELIVERED: dict[str, int] = {}


def redeliver_instead_of_drop() -> None:
    """Deliver a re-fetched message Faust would drop as already read; agents are idempotent, loss is not.

    Faust's fetch loop (``Consumer._drain_messages``) drops any message whose offset is below the
    partition's *read offset*, and sets the read offset after each hand-off, also when the hand-off was
    cut short because a rebalance suspended the flow. A rebalance that keeps a partition on this worker
    (or the first assignment of a restarted worker, while the fetch loop is still inside a batch) then
    goes: hand-off cut short, seek to the committed offset (read offset = committed), the loop finishes
    its batch and sets the read offset past the seek, and every re-fetched message from the committed
    offset up is dropped as a duplicate though it was never processed, logged only as
    ``DROPPED MESSAGE ROFF`` at Faust's dev log level (found by ``tests/test_faults_worker.py``; what it
    measured: docs/reliability.md, "Bugs the suite found, and the fixes").

    The fix rewinds the read offset to such a message just before the loop looks at it, so the loop
    delivers it instead (without recording an offset gap). A true duplicate is then processed twice,
    which every attune agent tolerates: turns are de-duplicated by ``turn_index``, judge jobs run once
    per id with the result cache, and records have deterministic ids.
    """
    from faust.transport.consumer import Consumer

    check_versions()
    if "redeliver" in _APPLIED:
        return
    _APPLIED.add("redeliver")
    getmany = Consumer.getmany

    async def patched(self: Any, timeout: float) -> Any:
        read_offset = self._read_offset
        async for tp, message in getmany(self, timeout):
            seen = read_offset.get(tp)
            if seen is not None and message.offset < seen:
                read_offset[tp] = message.offset
                REDELIVERED[tp.topic] = REDELIVERED.get(tp.topic, 0) + 1
                log.info("redelivering %s[%d]@%d (Faust would drop it as read)", tp.topic, tp.partition, message.offset)
            yield tp, message

    Consumer.getmany = patched  # type: ignore[method-assign]
