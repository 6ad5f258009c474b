"""Two narrow adjustments of Faust's aiokafka driver, applied in a worker process for the Tansu profile.

Both replace a value Faust does not let us configure; neither changes Faust's logic.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition


def limit_fetch_wait(ms: int) -> None:
    """Faust hard-codes the consumer's long-poll wait (1.5 s); Tansu answers only when it expires."""
    from faust.transport.drivers import aiokafka as driver

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
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=10)
    await consumer.start()
    try:
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

    async def highwaters(self: Any, *partitions: Any) -> Mapping[Any, int]:
        if not partitions:
            return {}
        return await asyncio.wait_for(fetched_highwaters(bootstrap, partitions), 30)

    driver.AIOKafkaConsumerThread.highwaters = highwaters  # type: ignore[method-assign]
