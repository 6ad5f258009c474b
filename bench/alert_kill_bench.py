"""Crisis-alert latency across worker SIGKILLs (issue #14 part 3), on the embedded broker.

Live traffic at ``--rate`` turns/s for ``--seconds``: conversations of four turns whose second user turn is
a crisis disclosure. ``--workers`` workers share the topics; at each of ``--kills`` evenly spaced moments
worker 0 is SIGKILLed and restarted at once (a supervisor's restart). The bench measures, for every crisis
turn, the time from its send to the first arrival of its ``crisis_disclosure`` alert, and reports p50 / p99
/ max over all of them and over those sent in the ``--window`` seconds after each kill, plus any alert that
never came. One process sends and reads, one clock.

    .venv/bin/python bench/alert_kill_bench.py [--workers 1] [--kills 3] [--rate 20] [--seconds 80] [--json F]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from aiokafka import AIOKafkaProducer

from schemas import Conversation, Message, decode_output, encode, stable_id
from schemas.topics import SAFETY_ALERTS, TURNS
from streams import EmbeddedBroker, StreamSettings, create_topics
from streams.io import consume
from streams.worker import WorkerProcess, worker_env

CRISIS = "honestly i want to kill myself, i cant keep doing this anymore"


def conversations(n: int) -> list[Conversation]:
    return [
        Conversation(
            conversation_id=f"k-{i:05d}",
            turns=[
                Message(role="user", text="rough week at work, my manager keeps piling things on"),
                Message(role="assistant", text="That sounds draining. What weighs on you most?"),
                Message(role="user", text=CRISIS),
                Message(role="assistant", text="I'm really glad you told me. Are you safe right now?"),
            ],
        )
        for i in range(n)
    ]


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, round(q * (len(values) - 1)))], 3)


def summary(lat: list[float]) -> dict[str, object]:
    return {"n": len(lat), "p50_s": pct(lat, 0.5), "p99_s": pct(lat, 0.99), "max_s": pct(lat, 1.0)}


async def run(args: argparse.Namespace, logdir: Path) -> dict[str, object]:
    with EmbeddedBroker(log_path=logdir / "tansu.log") as broker:
        settings = StreamSettings(broker=broker.url, profile="tansu")
        await create_topics(broker.bootstrap, settings.topics(), configs=settings.topic_configs())
        started = 0

        def start() -> WorkerProcess:
            nonlocal started
            started += 1
            return WorkerProcess(
                broker.url,
                "tansu",
                ["--metrics-port", "0", "--broker-check-interval", "0", *args.worker_arg],
                log_path=logdir / f"worker-{started}.log",
                env=worker_env(plaintext=True),
            )

        workers = [start() for _ in range(args.workers)]
        for w in workers:
            await asyncio.to_thread(w.wait_ready, 90)
        n = int(args.rate * args.seconds / 4)
        convs = conversations(n)
        per_turn = 1.0 / args.rate
        crisis_sent: dict[str, float] = {}
        stop = asyncio.Event()
        first_alert: dict[str, float] = {}

        async def reader() -> None:
            async for _t, _k, value, at in consume(broker.url, [SAFETY_ALERTS.name], stop=stop):
                rec = decode_output(value)
                if rec.kind == "safety_alert" and rec.alert_type == "crisis_disclosure":
                    first_alert.setdefault(rec.alert_id, at)

        reading = asyncio.create_task(reader())
        kill_at = [args.seconds * (k + 1) / (args.kills + 1) for k in range(args.kills)]
        kills: list[float] = []

        async def killer(t0: float) -> None:
            for at in kill_at:
                await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))
                victim = workers[0]
                await asyncio.to_thread(victim.kill)
                kills.append(time.time())
                workers[0] = start()

        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=1)
        await producer.start()
        t0 = time.monotonic()
        killing = asyncio.create_task(killer(t0))
        try:
            # two conversations interleaved at a time: each turn 1/rate s after the previous one
            turns = [
                t
                for a, b in zip(convs[::2], convs[1::2], strict=False)
                for pair in zip(a.as_turns(), b.as_turns(), strict=True)
                for t in pair
            ]
            for slot, turn in enumerate(turns):
                delay = t0 + slot * per_turn - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                await producer.send(TURNS.name, encode(turn), key=turn.conversation_id.encode())
                if turn.text == CRISIS:
                    aid = stable_id("alert", turn.conversation_id, turn.turn_index, "crisis_disclosure")
                    crisis_sent[aid] = time.time()
            await producer.flush()
        finally:
            await producer.stop()
        await killing
        deadline = time.monotonic() + args.drain
        while time.monotonic() < deadline and len(set(crisis_sent) & set(first_alert)) < len(crisis_sent):
            await asyncio.sleep(0.5)
        stop.set()
        await reading
        for w in workers:
            await asyncio.to_thread(w.stop)
    lat = [first_alert[a] - s for a, s in crisis_sent.items() if a in first_alert]
    after = [
        first_alert[a] - s
        for a, s in crisis_sent.items()
        if a in first_alert and any(0 <= s - k <= args.window for k in kills)
    ]
    return {
        "workers": args.workers,
        "kills": len(kills),
        "rate": args.rate,
        "crisis_turns": len(crisis_sent),
        "alerts_missing": len(set(crisis_sent) - set(first_alert)),
        "all": summary(lat),
        f"sent_within_{args.window:g}s_after_a_kill": summary(after),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--rate", type=float, default=20.0, help="turns/s (a quarter of them crisis turns)")
    ap.add_argument("--seconds", type=float, default=80.0)
    ap.add_argument("--window", type=float, default=20.0, help="seconds after a kill that count as 'after a kill'")
    ap.add_argument("--drain", type=float, default=60.0, help="max seconds to wait for the last alerts")
    ap.add_argument("--worker-arg", action="append", default=[])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    logdir = Path(tempfile.mkdtemp(prefix="attune-alert-kill-"))
    result = asyncio.run(run(args, logdir))
    result["logs"] = str(logdir)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
