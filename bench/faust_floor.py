"""Faust's own floor on this machine: how fast can a Faust agent drain turns when it does (almost) nothing?

The stream benchmark's worker spends ~0.7 ms of CPU per turn while draining, of which attune's processor
is ~0.2-0.3 ms. This script measures the rest in isolation, on the same embedded Tansu broker, with the
same Faust settings (broker profile, ``take_events`` batches) and the same turn records, in one run:

* ``consume``: the agent takes batches of events and only counts them;
* ``send``: plus one output record per event through Faust's producer (the stream sends ~0.8 per turn);
* ``send+changelog``: plus two table writes per event (the stream's chunk and meta entries);
* ``send+changelog-batched``: the same records, but written with aiokafka's batch API, one batch per
  topic-partition per agent batch (what attune could do instead of Faust's per-record sends).

Each mode drains the same backlog in a fresh worker process and reports turns/s and worker CPU per turn.

    .venv/bin/python bench/faust_floor.py [--backlog 6000] [--modes consume,send,send+changelog]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("consume", "send", "send+changelog", "send+changelog-batched")


def worker_main(broker: str, mode: str, n: int, out: str) -> None:
    """One Faust worker in this process: drain ``n`` turns in ``mode``, write the timing, exit."""
    import faust

    from schemas.topics import TURNS
    from streams._faust.patches import highwaters_from_fetch, limit_fetch_wait
    from streams.broker import bootstrap_of
    from streams.settings import StreamSettings

    settings = StreamSettings(broker=broker, datadir=Path(tempfile.mkdtemp()))
    limit_fetch_wait(5)
    highwaters_from_fetch(bootstrap_of(broker))
    app = faust.App(f"floor-{mode}", **settings.faust_config())
    source = app.topic(
        TURNS.name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw", partitions=4
    )
    table = app.Table("floor-state", partitions=4)
    table.key_serializer = table.value_serializer = "raw"
    state = {"seen": 0, "first": 0.0, "cpu0": 0.0}

    async def finish() -> None:
        wall = time.monotonic() - state["first"]
        cpu = time.process_time() - state["cpu0"]
        Path(out).write_text(json.dumps({"mode": mode, "turns": state["seen"], "wall_s": wall, "cpu_s": cpu}))
        os._exit(0)

    async def drain(stream: faust.StreamT) -> None:
        producer = app.producer
        async for events in stream.take_events(500, within=0.005):
            if not state["seen"]:
                state["first"], state["cpu0"] = time.monotonic(), time.process_time()
            state["seen"] += len(events)
            if mode == "send":
                futs = [
                    await producer.send("floor.out", e.message.key, e.message.value, None, None, None) for e in events
                ]
                await asyncio.gather(*futs)
            elif mode == "send+changelog":
                futs = [
                    await producer.send("floor.out", e.message.key, e.message.value, None, None, None) for e in events
                ]
                await asyncio.gather(*futs)
                for e in events:
                    k = e.message.key or b""
                    table.send_changelog(e.message.partition, k + b":0", e.message.value, value_serializer="raw")
                    table.send_changelog(e.message.partition, k, b"{}", value_serializer="raw")
            elif mode == "send+changelog-batched":
                aio = producer._producer  # aiokafka's producer under Faust's
                changelog = table.changelog_topic.get_topic_name()
                groups: dict[tuple[str, int], list[tuple[bytes, bytes]]] = {}
                for e in events:
                    k = e.message.key or b""
                    groups.setdefault(("floor.out", e.message.partition), []).append((k, e.message.value))
                futs = []
                for (topic, p), recs in groups.items():
                    futs += await _send_batches(aio, topic, p, recs)
                await asyncio.gather(*futs)
                groups = {}
                for e in events:
                    k = e.message.key or b""
                    groups.setdefault((changelog, e.message.partition), []).extend(
                        [(k + b":0", e.message.value), (k, b"{}")]
                    )
                for (topic, p), recs in groups.items():
                    await _send_batches(aio, topic, p, recs)
            if state["seen"] >= n:
                await finish()

    app.agent(source, name="drain")(drain)
    app.topic("floor.out", partitions=4)
    worker = faust.Worker(app, loglevel="WARNING", quiet=True, redirect_stdouts=False)
    worker.spinner = None
    worker.execute_from_commandline()


async def _send_batches(aio: object, topic: str, partition: int, recs: list[tuple[bytes, bytes]]) -> list:
    futs = []
    batch = aio.create_batch()  # type: ignore[attr-defined]
    for k, v in recs:
        if batch.append(key=k, value=v, timestamp=None) is None:
            futs.append(await aio.send_batch(batch, topic, partition=partition))  # type: ignore[attr-defined]
            batch = aio.create_batch()  # type: ignore[attr-defined]
            batch.append(key=k, value=v, timestamp=None)
    if batch.record_count():
        futs.append(await aio.send_batch(batch, topic, partition=partition))  # type: ignore[attr-defined]
    return futs


async def publish_backlog(broker: str, n: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from stream_bench import conversations, interleaved

    from schemas import encode
    from schemas.topics import TURNS
    from streams.io import producer_for

    turns = interleaved(conversations(n // 6 + 1, "floor"))[:n]
    producer = producer_for(broker, "tansu")
    await producer.start()
    try:
        futs = [await producer.send(TURNS.name, encode(t), key=t.conversation_id.encode()) for t in turns]
        await asyncio.gather(*futs)
    finally:
        await producer.stop()


async def run_mode(mode: str, n: int, logdir: Path) -> dict:
    from schemas.topics import TURNS
    from streams import EmbeddedBroker, create_topics

    with EmbeddedBroker(log_path=logdir / f"tansu-{mode}.log") as broker:
        topics = {TURNS.name: 4, "floor.out": 4, f"floor-{mode}-floor-state-changelog": 4}
        await create_topics(broker.bootstrap, topics)
        await publish_backlog(broker.url, n)
        out = logdir / f"{mode}.json"
        proc = subprocess.run(
            [sys.executable, __file__, "--worker", broker.url, mode, str(n), str(out)],
            timeout=600,
            capture_output=True,
        )
        if not out.exists():
            raise RuntimeError(f"{mode}: worker exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
        return json.loads(out.read_text())


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(*sys.argv[2:4], int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backlog", type=int, default=6000)
    ap.add_argument("--modes", default=",".join(MODES))
    args = ap.parse_args()
    logdir = Path(tempfile.mkdtemp(prefix="attune-floor-"))
    print(f"{'mode':<26} {'turns/s':>9} {'CPU ms/turn':>12}")
    for mode in args.modes.split(","):
        r = asyncio.run(run_mode(mode, args.backlog, logdir))
        print(f"{mode:<26} {r['turns'] / r['wall_s']:>9,.0f} {1000 * r['cpu_s'] / r['turns']:>12.3f}", flush=True)


if __name__ == "__main__":
    main()
