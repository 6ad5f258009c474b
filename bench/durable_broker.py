"""Broker SIGKILL + restart mid-stream under live traffic: what is lost (issue #14 part 1).

One worker scores live traffic (``--rate`` turns/s of ``--conversations`` six-turn conversations, two crisis
disclosures in every seventh). At ``--kill-at`` of the run the broker is SIGKILLed (``durable``: Tansu *and*
the SeaweedFS holding its data, as if the machine lost both processes), left down ``--down`` seconds and
restarted on the same directory. The sender behaves as a producer application must: a turn counts as
published once the broker acknowledged it, and a send that failed is retried until it is.

Reported: turns acknowledged vs distinct turns on the turns topic; the records the batch path gives for
those conversations vs those on the output topics (missing, and present but different: a partial-history
score), by kind; whether the worker kept running; crisis-alert latency (send → alert) overall and for
turns sent in the ``--window`` seconds after the restart. ``--storage memory`` runs the same against the
memory broker for contrast (there the worker must exit 75 and name the open conversations).

    .venv/bin/python bench/durable_broker.py [--storage durable|memory] [--rate 60] [--conversations 300] [--json F]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from collections import Counter
from pathlib import Path

from aiokafka import AIOKafkaProducer
from alert_kill_bench import pct  # this folder is on sys.path when the script runs

from schemas import Conversation, Message, decode_output
from schemas.topics import ALL_TOPICS, TURNS
from scorers import evaluate_conversation
from streams import PROFILES, EmbeddedBroker, StreamSettings, create_topics
from streams.durable import DurableBroker
from streams.io import consume, schedule
from streams.worker import WorkerProcess

CRISIS = "honestly i want to kill myself, i cant keep doing this anymore"
OUTPUTS = [t.name for t in ALL_TOPICS if t.name != TURNS.name and not t.name.endswith("judge-jobs")]


def conversations(n: int) -> list[Conversation]:
    out = []
    for i in range(n):
        turns = []
        for j in range(6):
            if j % 2 == 0:
                text = (
                    CRISIS if i % 7 == 0 and j in (2, 4) else f"rough week {j}: my manager keeps piling things on ({i})"
                )
                turns.append(Message(role="user", text=text))
            else:
                turns.append(Message(role="assistant", text=f"That sounds draining. What weighs on you most, {i}?"))
        out.append(Conversation(conversation_id=f"d-{i:05d}", turns=turns))
    return out


def rid(rec: object) -> str:
    return rec.alert_id if rec.kind == "safety_alert" else rec.record_id  # type: ignore[attr-defined]


async def send_all(
    url: str, events: list[tuple[float, bytes, bytes, str]], sent_at: dict[str, float], retries: Counter[str]
) -> None:
    """Send each event at its time; retry a failed send until the broker acknowledges it."""
    producer = AIOKafkaProducer(bootstrap_servers=url.removeprefix("kafka://"), acks="all", linger_ms=1)
    await producer.start()
    t0 = time.monotonic()

    async def one(key: bytes, value: bytes, tag: str) -> None:
        while True:
            try:
                await (await producer.send(TURNS.name, value, key=key))
                return
            except Exception as e:  # the broker is down: keep trying, as a producer application must
                retries[type(e).__name__] += 1
                await asyncio.sleep(0.5)

    tasks = []
    try:
        for due, key, value, tag in events:
            await asyncio.sleep(max(0.0, t0 + due - time.monotonic()))
            sent_at[tag] = time.time()  # consume() stamps arrivals with time.time()
            tasks.append(asyncio.create_task(one(key, value, tag)))
        await asyncio.gather(*tasks)
    finally:
        await producer.stop()


async def run(args: argparse.Namespace, root: Path) -> dict[str, object]:
    convs = conversations(args.conversations)
    want = {rid(r): r for c in convs for r in evaluate_conversation(c)}
    pace = len(convs) / args.rate  # schedule() spaces all turns evenly: rate turns/s overall
    events = [(e.at, e.key, e.value, f"{e.conversation_id}:{e.turn_index}") for e in schedule(convs, pace)]
    duration = events[-1][0]
    b: DurableBroker | EmbeddedBroker
    if args.storage == "durable":
        b = DurableBroker(root / "data", log_dir=root).start()
    else:
        b = EmbeddedBroker(log_path=root / "tansu.log").start()
    worker = None
    try:
        profile = "tansu-durable" if args.storage == "durable" else "tansu"
        settings = StreamSettings(broker=b.url, profile=profile)
        await create_topics(b.bootstrap, settings.topics(), configs=settings.topic_configs(), timeout=60)
        worker = WorkerProcess(
            b.url,
            profile,
            ["--inactivity-timeout", "300", "--broker-check-interval", "1", "--datadir", str(root / "worker")],
            log_path=root / "worker.log",
        )
        worker.wait_ready(90)
        sent_at: dict[str, float] = {}
        retries: Counter[str] = Counter()
        alert_at: dict[str, float] = {}
        seen: dict[str, list[object]] = {}
        stop = asyncio.Event()

        async def read() -> None:
            async for _topic, _k, value, at in consume(b.url, OUTPUTS, stop=stop, fetch_wait_ms=wait):
                rec = decode_output(value)
                seen.setdefault(rid(rec), []).append(rec)
                if rec.kind == "safety_alert" and rec.alert_type == "crisis_disclosure":
                    alert_at.setdefault(f"{rec.conversation_id}:{rec.turn_index}", at)

        wait = PROFILES[profile].fetch_max_wait_ms or 10
        reader = asyncio.create_task(read())
        sender = asyncio.create_task(send_all(b.url, events, sent_at, retries))
        if args.no_kill:
            killed = restarted = float("inf")
        else:
            await asyncio.sleep(args.kill_at * duration)
            killed = time.time()
            b.kill()
            await asyncio.sleep(args.down)
            await asyncio.to_thread(b.start)
            restarted = time.time()
        await sender
        deadline = time.monotonic() + args.drain
        while time.monotonic() < deadline and not want.keys() <= seen.keys():
            await asyncio.sleep(0.5)
        stop.set()
        reader.cancel()
        turns_on_topic = set()
        async for _t, _k, value, _at in consume(b.url, [TURNS.name], idle_timeout=5.0, fetch_wait_ms=wait):
            t = json.loads(value)
            turns_on_topic.add((t["conversation_id"], t["turn_index"]))
        missing = want.keys() - seen.keys()
        differ = [r for r in want.keys() & seen.keys() if any(_diff(g, want[r]) for g in seen[r])]
        crisis = [t for t in sent_at if t.endswith((":2", ":4")) and int(t.split("-")[1].split(":")[0]) % 7 == 0]
        lat = [alert_at[t] - sent_at[t] for t in crisis if t in alert_at]
        after = [
            alert_at[t] - sent_at[t]
            for t in crisis
            if t in alert_at and restarted <= sent_at[t] <= restarted + args.window
        ]
        during = [alert_at[t] - sent_at[t] for t in crisis if t in alert_at and killed <= sent_at[t] < restarted]
        code = worker.proc.poll()
        return {
            "storage": args.storage,
            "profile": profile,
            "rate_turns_per_s": args.rate,
            "conversations": len(convs),
            "turns_acknowledged": len(sent_at),
            "turns_on_topic": len(turns_on_topic),
            "send_retries": dict(retries),
            "down_s": None if args.no_kill else round(restarted - killed, 2),
            "records_expected": len(want),
            "records_missing": len(missing),
            "missing_by_kind": dict(Counter(want[r].kind for r in missing)),
            "records_differing": len(differ),
            "duplicates": sum(len(v) - 1 for v in seen.values()),
            "worker_exit_code": code,
            "worker_named_lost": [ln[:200] for ln in worker.lines if "lost" in ln and "CRITICAL" in ln][:1],
            "crisis_alerts": {"n": len(crisis), "arrived": len(lat), "p50_s": pct(lat, 0.5), "p99_s": pct(lat, 0.99),
                              "max_s": pct(lat, 1.0)},
            "crisis_sent_while_down": {"n": len(during), "p50_s": pct(during, 0.5), "max_s": pct(during, 1.0)},
            f"crisis_sent_{args.window:g}s_after_restart": {"n": len(after), "p50_s": pct(after, 0.5),
                                                            "max_s": pct(after, 1.0)},
        }  # fmt: skip
    finally:
        if worker is not None:
            worker.stop(timeout=15)
        b.stop()


VOLATILE = {"produced_at", "detected_at", "received_at", "close_reason"}


def _diff(got: object, want: object) -> bool:
    g = {k: v for k, v in got.model_dump(mode="json").items() if k not in VOLATILE}  # type: ignore[attr-defined]
    w = {k: v for k, v in want.model_dump(mode="json").items() if k not in VOLATILE}  # type: ignore[attr-defined]
    return g != w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--storage", choices=("durable", "memory"), default="durable")
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--rate", type=float, default=60.0, help="turns per second")
    ap.add_argument("--kill-at", type=float, default=0.4, help="fraction of the sending time")
    ap.add_argument("--no-kill", action="store_true", help="no kill: what the storage sustains at --rate")
    ap.add_argument("--down", type=float, default=2.0, help="seconds between the kill and the restart")
    ap.add_argument("--window", type=float, default=5.0, help="seconds after the restart for the latency window")
    ap.add_argument("--drain", type=float, default=120.0, help="max seconds to wait for the outputs after sending")
    ap.add_argument("--json", default=None, help="also write the result here")
    ap.add_argument("--workdir", default=None, help="keep the logs and data here (default: a temp dir, removed)")
    args = ap.parse_args()
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)  # its reconnect errors while the broker is down
    if args.workdir:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
        result = asyncio.run(run(args, Path(args.workdir)))
    else:
        with tempfile.TemporaryDirectory(prefix="attune-durable-") as tmp:
            result = asyncio.run(run(args, Path(tmp)))
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
