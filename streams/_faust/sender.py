"""Records out through aiokafka's batch API: one producer batch per topic-partition, not one send per record.

Why: Faust's per-record changelog path (``Table.send_changelog``: a buffer entry, a future and a callback
per record) cost more per turn than all of attune's scoring and alone capped a worker's throughput; the same
records appended to one ``BatchBuilder`` per topic-partition cost a fraction of it (``bench/faust_floor.py``;
figures in docs/benchmarks.md, "2026-11-23: the worker's fetch wait, and where a slow turn waits").

Same guarantees as Faust's own path: records go through Faust's aiokafka producer (so Faust's commit,
which flushes that producer before committing offsets, also waits for them); keys without a partition are
placed by the producer's partitioner, as ``producer.send`` would; a record larger than a batch gets a batch
of its own. Each batch is closed before it is queued: aiokafka sends a closed batch with the next request
instead of holding it for ``linger_ms`` (1 ms on the Tansu profile, 5 ms on Kafka's), which for a batch
that is already complete would only be latency.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

#: (topic, partition or None, key, value); value None is a tombstone.
Record = tuple[str, int | None, bytes | None, bytes | None]


class BatchSender:
    """Sends groups of records with one aiokafka batch per topic-partition (see module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def _aiokafka(self) -> Any:
        aio = self.app.producer._producer  # None until Faust's producer started
        if aio is None or self.app.conf.producer_threaded:  # not started, or lives on another event loop
            return None
        return aio

    async def send(self, records: Iterable[Record]) -> list[asyncio.Future[Any]]:
        """Queue ``records`` for sending; returns the futures of their batches (await them for delivery)."""
        aio = self._aiokafka()
        if aio is None:
            producer = self.app.producer
            return [await producer.send(t, k, v, p, None, None) for t, p, k, v in records]
        groups: dict[tuple[str, int], list[tuple[bytes | None, bytes | None]]] = {}
        known: set[str] = set()
        for topic, partition, key, value in records:
            if partition is None:
                if topic not in known:  # the partitioner needs the topic's partitions (cached after once)
                    await aio.client._wait_on_metadata(topic)
                    known.add(topic)
                partition = aio._partition(topic, None, None, None, key, value)
            groups.setdefault((topic, partition), []).append((key, value))
        futs: list[asyncio.Future[Any]] = []
        for (topic, partition), recs in groups.items():
            batch = aio.create_batch()
            for key, value in recs:
                if batch.append(key=key, value=value, timestamp=None) is None:  # full (and closed): send it
                    futs.append(await aio.send_batch(batch, topic, partition=partition))
                    batch = aio.create_batch()
                    batch.append(key=key, value=value, timestamp=None)  # a first record always fits
            batch.close()  # complete: the sender takes a closed batch at once instead of lingering on it
            futs.append(await aio.send_batch(batch, topic, partition=partition))
        return futs

    async def deliver(self, records: Iterable[Record]) -> None:
        """Send ``records`` and wait until the broker acknowledged every one of them."""
        futs = await self.send(records)
        if futs:
            await asyncio.gather(*futs)
