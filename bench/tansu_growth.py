"""How the embedded broker's cost grows with the records a topic holds (Tansu 0.6, memory engine).

One producer sends 420-byte records at a fixed rate into a fresh 4-partition topic, one consumer reads
them (``fetch_max_wait_ms`` 5, as the worker's Tansu profile); every ``--every`` seconds the script
prints how many records the topic holds, the produce->consume latency p50/p99 of that interval and the
broker's CPU (percent of one core). No attune code runs: this is the broker alone.

Why it matters: ``bench/stream_bench.py`` measures live latency on a fresh broker because of this, and a
long-running demo on the embedded broker slows down the same way (real Kafka's per-request cost does not
grow with the log).

    .venv/bin/python bench/tansu_growth.py [--rate 1000] [--seconds 36] [--every 4]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from stream_bench import CpuMeter, pct  # this folder is on sys.path when the script runs

from streams import EmbeddedBroker

PAD = b"x" * 400


async def run(rate: float, seconds: int, every: int) -> None:
    with EmbeddedBroker() as broker:
        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        await admin.create_topics([NewTopic("growth", 4, 1)])
        await admin.close()
        consumer = AIOKafkaConsumer(
            "growth", bootstrap_servers=broker.bootstrap, fetch_max_wait_ms=5, auto_offset_reset="earliest"
        )
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=1)
        await consumer.start()
        await producer.start()
        latencies: list[float] = []

        async def read() -> None:
            async for rec in consumer:
                latencies.append(1000 * (time.time() - float(rec.value[:20])))

        reader = asyncio.create_task(read())
        print("records in topic | latency p50 / p99 ms | broker CPU %")
        sent, start = 0, time.monotonic()
        try:
            for interval in range(seconds // every):
                meter = CpuMeter({"broker": broker.pid})
                latencies.clear()
                while time.monotonic() < start + (interval + 1) * every:
                    delay = start + sent / rate - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    await producer.send("growth", f"{time.time():<20}".encode() + PAD, partition=random.randrange(4))
                    sent += 1
                cpu = meter.stop()["broker"]
                print(f"{sent:>16,} | {pct(latencies, 0.5):8.1f} / {pct(latencies, 0.99):7.1f} | {cpu:>4}", flush=True)
        finally:
            reader.cancel()
            await producer.stop()
            await consumer.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=float, default=1000.0, help="records per second")
    p.add_argument("--seconds", type=int, default=36)
    p.add_argument("--every", type=int, default=4, help="seconds per printed interval")
    args = p.parse_args()
    asyncio.run(run(args.rate, args.seconds, args.every))


if __name__ == "__main__":
    main()
