"""The offset audit: every message of an append-only input topic is processed, whatever Faust's consumer does.

Why: Faust 0.15.3's consumer can count a message as read and never hand it to the agent (seen right after
a restart or rebalance: its read offset races the seek to the committed offsets; see
``streams._faust.patches.redeliver_instead_of_drop`` for the part of the race fixed at its source), and
its commit logic treats an offset it did not see as done when a later one is acked (``Consumer._new_offset``
accepts ``min(acked) == committed + 1``). The input topics attune audits (turns, judge jobs) are never
compacted and are written without transactions, so a partition's offsets are contiguous and a worker can
know exactly which offset must come next:

* the first expected offset of a partition is the group's committed offset at assignment;
* a message beyond the expected offset means the ones in between were skipped: they are read back
  directly from the broker (:meth:`OffsetAudit.check`), processed first, and acked to Faust like any other;
* a skipped message at a partition's tail has no later message to reveal it, so
  :meth:`OffsetAudit.tail` compares the expected offset with the partition's high watermark (from fetch
  responses, which Tansu reports correctly) once the agent has been idle -- on every partition, not just
  that one: under a burst Faust serves partitions unevenly, and one may wait many seconds behind the others
  with its messages fetched and buffered, not lost (before this rule, a burst had tens of thousands of them
  re-read in one go, stalling the event loop for seconds: docs/benchmarks.md, "2026-11-25: a 200,000-turn
  burst into one worker (issue #14 part 2)");
* a re-read is bounded: at most :data:`MAX_REREAD` messages per partition at a time; a larger gap is kept
  and repaired in such chunks by the timer, so neither memory nor the event loop takes the whole gap at once.

A message read back and then also delivered by Faust is processed twice; every attune agent tolerates that
(turns are de-duplicated by ``turn_index``, judge jobs run once per id with the result cache, records have
deterministic ids).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from .. import security
from .._core import Inbound
from ..observability import METRICS

log = logging.getLogger("attune.streams")

#: A partition behind its end with nothing arriving for this long is read back (a skip at its tail).
TAIL_IDLE_S = 5.0
#: How long a direct read-back may take before the worker gives up (and Faust's error handling takes over).
FETCH_TIMEOUT_S = 30.0
#: Most messages re-read (and then processed as one batch) at a time per partition: a fraction of a second.
MAX_REREAD = 2000
#: While other partitions still deliver, a partition's tail counts as skipped only after this many times
#: ``TAIL_IDLE_S`` of quiet (a skip there is still repaired, later; a buffered partition is left alone).
BUSY_QUIET_FACTOR = 6


class OffsetAudit:
    """Expected next offset per owned partition of ``topics``, and the read-back of what Faust skipped.

    ``check`` is called by the agent for each message it receives, in the order received; ``tail`` by a
    timer. Both hold one lock, so expectations change one call at a time.
    """

    def __init__(self, app: Any, bootstrap: str, group_id: str, topics: Collection[str]) -> None:
        self.app = app
        self.bootstrap = bootstrap
        self.group_id = group_id
        self.topics = frozenset(topics)
        self.repaired = 0
        self._next: dict[tuple[str, int], int] = {}
        self._arrived: dict[tuple[str, int], float] = {}
        self._behind: dict[tuple[str, int], tuple[int, float]] = {}  # expected offset, first seen behind at
        self._gaps: dict[tuple[str, int], list[tuple[int, int]]] = {}  # skipped [start, end) not re-read yet
        self._last_any = time.monotonic()  # the last message of any partition
        self._baseline: asyncio.Future[None] | None = None
        self._lock = asyncio.Lock()

    # -- assignment ------------------------------------------------------------------------------------------
    def on_assigned(self, assigned: Collection[Any]) -> None:
        """Start from the committed offsets of this assignment, before any of its messages is checked."""
        tps = sorted({(tp.topic, tp.partition) for tp in assigned if tp.topic in self.topics})
        self._next = {}
        self._arrived = dict.fromkeys(tps, time.monotonic())
        self._behind = {}
        self._gaps = {}
        self._baseline = asyncio.ensure_future(self._committed(tps))

    async def _committed(self, tps: list[tuple[str, int]]) -> None:
        try:
            consumer = AIOKafkaConsumer(
                bootstrap_servers=self.bootstrap,
                group_id=self.group_id,
                enable_auto_commit=False,
                **security.client_kwargs(),
            )
            try:
                await consumer.start()  # inside: a failed start (broker down) is stopped too
                for topic, partition in tps:
                    offset = await consumer.committed(TopicPartition(topic, partition))
                    self._next[(topic, partition)] = offset if offset is not None else 0
            finally:
                await consumer.stop()
        except Exception as exc:  # broker unreachable: no audit for this assignment, and say so
            self._next = {}
            log.warning("offset audit off until the next assignment: committed offsets unreadable (%r)", exc)

    async def _ready(self) -> None:
        while self._baseline is not None:  # a newer assignment may replace it while we wait
            baseline = self._baseline
            await baseline
            if self._baseline is baseline:
                self._baseline = None

    def next_offsets(self, topic: str) -> dict[int, int]:
        """Partition -> the next offset expected on ``topic`` (everything below it was received)."""
        return {p: o for (t, p), o in self._next.items() if t == topic}

    # -- the checks ------------------------------------------------------------------------------------------
    def check_now(self, topic: str, partition: int, offset: int) -> bool:
        """The common case without awaiting: True when ``offset`` skips nothing (recorded as received);
        False when :meth:`check` must run (a gap, or the assignment's baseline not read yet)."""
        if topic not in self.topics:
            return True
        if self._baseline is not None:
            return False
        key = (topic, partition)
        expected = self._next.get(key)
        if expected is not None and offset > expected:
            return False
        self._next[key] = offset + 1 if expected is None or offset >= expected else expected
        self._arrived[key] = self._last_any = time.monotonic()
        return True

    async def check(self, topic: str, partition: int, offset: int) -> list[Inbound]:
        """Messages of this partition skipped before ``offset`` (read back, in order); empty as a rule."""
        if self.check_now(topic, partition, offset):
            return []
        async with self._lock:
            await self._ready()
            key = (topic, partition)
            self._arrived[key] = self._last_any = time.monotonic()
            expected = self._next.get(key)
            missed: list[Inbound] = []
            if expected is not None and offset > expected:
                upto = min(offset, expected + MAX_REREAD)
                missed = await self.fetch(topic, partition, expected, upto)
                self._repaired(topic, partition, expected, upto, missed, "skipped")
                if upto < offset:  # the rest of a large gap: re-read in bounded chunks by the timer
                    self._gaps.setdefault(key, []).append((upto, offset))
            self._next[key] = max(offset + 1, expected or 0)
            return missed

    def pending_gaps(self) -> int:
        """Messages known skipped and not re-read yet (chunks the timer still has to repair)."""
        return sum(end - start for gaps in self._gaps.values() for start, end in gaps)

    async def tail(
        self, busy: Callable[[str, int], bool] = lambda t, p: False, idle_s: float = TAIL_IDLE_S
    ) -> list[Inbound]:
        """Messages below a partition's high watermark that never arrived: behind the end, with nothing
        arriving, for ``idle_s`` (two calls at least ``idle_s`` apart see the same expected offset).

        A partition is skipped while the consumer is rebalancing or its flow is suspended, while Faust has
        paused it (its buffer is full), and while ``busy(topic, partition)`` says the agent is still working
        through what it has (backpressure): then undelivered messages are expected, not lost.
        """
        app = self.app
        if app.rebalancing or not app.flow_control.is_active():
            return []
        found: list[Inbound] = []
        async with self._lock:
            await self._ready()
            for key, gaps in list(self._gaps.items()):  # known skips first: one bounded chunk per partition
                start, end = gaps[0]
                upto = min(end, start + MAX_REREAD)
                missed = await self.fetch(key[0], key[1], start, upto)
                self._repaired(key[0], key[1], start, upto, missed, "skipped (rest of a large gap)")
                found += missed
                gaps[0] = (upto, end)
                if upto >= end:
                    gaps.pop(0)
                if not gaps:
                    del self._gaps[key]
            if found:
                return found
            consumer = app.consumer
            paused = {(tp.topic, tp.partition) for tp in consumer._paused_partitions}
            now = time.monotonic()
            # While the agent still receives on other partitions, a quiet partition is most likely waiting in
            # Faust's buffers: it must be quiet far longer before its tail counts as skipped.
            quiet = idle_s if now - self._last_any >= idle_s else BUSY_QUIET_FACTOR * idle_s
            for key, expected in list(self._next.items()):
                topic, partition = key
                if key in paused or busy(topic, partition) or now - self._arrived.get(key, 0.0) < quiet:
                    continue
                try:
                    end = consumer.highwater(TopicPartition(topic, partition))
                except Exception:  # not assigned any more (a rebalance began): the next assignment resets us
                    continue
                if end is None or end <= expected:
                    self._behind.pop(key, None)
                    continue
                # Behind the end since when? Only a stall that lasts idle_s is a skip (not a message in transit).
                since = self._behind.get(key)
                if since is None or since[0] != expected:
                    self._behind[key] = (expected, now)
                    continue
                if now - since[1] < quiet:
                    continue
                del self._behind[key]
                upto = min(end, expected + MAX_REREAD)
                missed = await self.fetch(topic, partition, expected, upto)
                self._repaired(topic, partition, expected, upto, missed, "never delivered at the tail")
                self._next[key] = max(upto, self._next.get(key, expected))  # check_now may have moved on
                if upto < end:  # more behind: the next call goes on from here without waiting again
                    self._behind[key] = (upto, now - quiet)
                else:
                    self._arrived[key] = now
                found += missed
        return found

    def _repaired(self, topic: str, partition: int, start: int, end: int, missed: list[Inbound], how: str) -> None:
        log.warning(
            "consumer %s offsets %d-%d of %s[%d]; re-read %d message(s)",
            how,
            start,
            end - 1,
            topic,
            partition,
            len(missed),
        )
        self.repaired += len(missed)
        METRICS.reread.labels(topic).inc(len(missed))

    async def fetch(self, topic: str, partition: int, start: int, end: int) -> list[Inbound]:
        """Messages with offsets in [start, end) of one partition, read directly (not through Faust)."""
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, enable_auto_commit=False, fetch_max_wait_ms=10, **security.client_kwargs()
        )
        try:
            await consumer.start()  # inside: a failed start (broker down) is stopped too
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            consumer.seek(tp, start)
            found: list[Inbound] = []
            deadline = time.monotonic() + FETCH_TIMEOUT_S
            while time.monotonic() < deadline:
                batch = await consumer.getmany(tp, timeout_ms=200)
                found += [
                    Inbound(topic, partition, m.offset, m.key, m.value)
                    for m in batch.get(tp, [])
                    if start <= m.offset < end
                ]
                if await consumer.position(tp) >= end:
                    return found
            raise TimeoutError(f"could not re-read {topic}[{partition}] offsets {start}-{end - 1}")
        finally:
            await consumer.stop()

    def ack(self, item: Inbound) -> None:
        """Tell Faust a read-back message is done, so its commit can move past it (it never saw it)."""
        from faust.types import TP, Message

        tp = TP(item.topic, item.partition)
        msg = Message(item.topic, item.partition, item.offset, 0.0, 0, None, item.key, item.value, None, tp=tp)
        self.app.consumer.ack(msg)
