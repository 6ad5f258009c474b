"""How the embedded broker's cost grows with the records a topic holds (Tansu 0.6, memory engine).

One producer sends 420-byte records at a fixed rate into a fresh 4-partition topic, one consumer reads
them (``fetch_max_wait_ms`` 5, the Tansu profile's value until 2026-11-23, now 10); every ``--every`` seconds the script
prints how many records the topic holds, the produce->consume latency p50/p99 of that interval and the
broker's CPU (percent of one core). No attune code runs: this is the broker alone.

``--per-batch N`` sends N records per producer batch (same record rate): the cost follows the number of
*batches* a partition holds, not records (the memory engine stores one object per batch and a fetch lists
a partition's objects). ``--fetch-other`` has the consumer read a second, nearly empty topic instead: then
nothing grows, so it is fetching a long partition that costs, not producing to one.

Why it matters: ``bench/stream_bench.py`` measures live latency on a fresh broker because of this, and a
long-running demo on the embedded broker slows down the same way (real Kafka's per-request cost does not
grow with the log).

``--storage durable`` runs the broker as ``attune broker --data`` does (S3 engine over SeaweedFS in a temp
dir) and also prints the resident memory of the broker and of SeaweedFS and the data on disk: whether the
broker's memory still grows with what it holds.

    .venv/bin/python bench/tansu_growth.py [--rate 1000] [--seconds 36] [--every 4] [--per-batch 1] [--fetch-other]
        [--storage memory|durable] [--fetch-wait 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from stream_bench import CpuMeter, pct  # this folder is on sys.path when the script runs

from streams import EmbeddedBroker
from streams.durable import DurableBroker, DurableStore

PAD = b"x" * 400


def rss_mb(pid: int | None) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


@contextlib.contextmanager
def broker_with(storage: str) -> Iterator[tuple[EmbeddedBroker, DurableStore | None]]:
    if storage == "memory":
        with EmbeddedBroker() as broker:
            yield broker, None
        return
    with tempfile.TemporaryDirectory() as tmp, DurableBroker(Path(tmp)) as durable:
        yield durable.broker, durable.store


async def run(
    rate: float, seconds: int, every: int, per_batch: int, fetch_other: bool, storage: str, fetch_wait: int
) -> None:
    with broker_with(storage) as (broker, store):
        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        await admin.create_topics([NewTopic("growth", 4, 1), NewTopic("probe", 4, 1)])
        await admin.close()
        read_from = "probe" if fetch_other else "growth"
        consumer = AIOKafkaConsumer(
            read_from, bootstrap_servers=broker.bootstrap, fetch_max_wait_ms=fetch_wait, auto_offset_reset="earliest"
        )
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=1)
        await consumer.start()
        await producer.start()
        latencies: list[float] = []

        async def read() -> None:
            async for rec in consumer:
                latencies.append(1000 * (time.time() - float(rec.value[:20])))

        reader = asyncio.create_task(read())
        print(
            "records in topic | latency p50 / p99 ms | broker CPU %"
            + (" | RSS broker / SeaweedFS MB | disk MB" if store else " | RSS MB")
        )
        sent, start = 0, time.monotonic()
        try:
            for interval in range(seconds // every):
                meter = CpuMeter({"broker": broker.pid})
                latencies.clear()
                while time.monotonic() < start + (interval + 1) * every:
                    delay = start + sent / rate - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    batch = producer.create_batch()
                    for _ in range(per_batch):
                        batch.append(key=None, value=f"{time.time():<20}".encode() + PAD, timestamp=None)
                    batch.close()
                    await producer.send_batch(batch, "growth", partition=random.randrange(4))
                    if fetch_other and sent % (10 * per_batch) == 0:  # the probe topic: 1/10 of the batches
                        await producer.send("probe", f"{time.time():<20}".encode() + PAD, partition=random.randrange(4))
                    sent += per_batch
                cpu = meter.stop()["broker"]
                mem = f" | {rss_mb(broker.pid):6.1f}"
                if store is not None:
                    mem += f" / {rss_mb(store.pid):6.1f} | {disk_mb(store.data_dir):6.1f}"
                print(
                    f"{sent:>16,} | {pct(latencies, 0.5):8.1f} / {pct(latencies, 0.99):7.1f} | {cpu:>4}{mem}",
                    flush=True,
                )
        finally:
            reader.cancel()
            await producer.stop()
            await consumer.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=float, default=1000.0, help="records per second")
    p.add_argument("--seconds", type=int, default=36)
    p.add_argument("--every", type=int, default=4, help="seconds per printed interval")
    p.add_argument("--per-batch", type=int, default=1, help="records per producer batch")
    p.add_argument("--fetch-other", action="store_true", help="consume a second, small topic instead")
    p.add_argument("--storage", choices=("memory", "durable"), default="memory")
    p.add_argument("--fetch-wait", type=int, default=5, help="the consumer's fetch_max_wait_ms")
    args = p.parse_args()
    asyncio.run(
        run(args.rate, args.seconds, args.every, args.per_batch, args.fetch_other, args.storage, args.fetch_wait)
    )


if __name__ == "__main__":
    main()
