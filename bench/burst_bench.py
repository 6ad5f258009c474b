"""A burst: many turns published at once into one worker (issue 14 part 2).

Before the fix, 200,000 turns at once made the offset audit re-read 45,000-83,000 turns it wrongly judged
undelivered (a partition waiting behind the others in Faust's buffers), in one batch: the event loop
stalled 17-22 s, /healthz timed out, and ``attune_turn_scores_total`` fell short of the records produced.
This script publishes the burst, waits until every turn score is on the topic, and reports from the
worker's own ``/metrics`` and ``/proc``:

* the event loop's largest lag (``attune_event_loop_lag_max_seconds``) and how many 100 ms ticks were
  over 1 s;
* turns re-read by the audit (``attune_reread_total``) and the largest single re-read it logged;
* ``attune_turn_scores_total`` next to the distinct ``turn_score`` records on the topic, and the
  duplicates the worker ignored;
* the worker's peak RSS (VmHWM) and RSS at the end; wall time.

    .venv/bin/python bench/burst_bench.py [--turns 200000] [--turns-per-conversation 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from schemas import Conversation, Message, encode
from schemas.topics import TURN_SCORES, TURNS
from streams import EmbeddedBroker, StreamSettings, WorkerProcess, create_topics
from streams.broker import free_port
from streams.io import consume, producer_for

LINES = (
    "I've been feeling really low since the move and I can't sleep.",
    "That sounds exhausting. What has the move changed most for you?",
    "Mostly that I don't know anyone here and evenings are lonely.",
    "Lonely evenings are hard. Is there one small thing that helped before?",
)


def conversations(turns: int, per: int) -> list[Conversation]:
    n = turns // per
    return [
        Conversation(
            conversation_id=f"burst-{i:06d}",
            turns=[Message(role="user" if j % 2 == 0 else "assistant", text=LINES[j % 4]) for j in range(per)],
        )
        for i in range(n)
    ]


def metrics(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def proc_kb(pid: int, field: str) -> int:
    m = re.search(rf"^{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return int(m.group(1)) if m else 0


async def publish_all(url: str, convs: list[Conversation]) -> float:
    producer = producer_for(url, "tansu")
    await producer.start()
    t = time.monotonic()
    try:
        futs = []
        exploded = [(c.conversation_id.encode(), c.as_turns()) for c in convs]  # once per conversation
        # all conversations open together: turn j of every conversation, then turn j + 1
        for j in range(len(convs[0].turns)):
            for key, turns in exploded:
                futs.append(await producer.send(TURNS.name, encode(turns[j]), key=key))
        await asyncio.gather(*futs)
    finally:
        await producer.stop()
    return time.monotonic() - t


async def distinct_scores(url: str, want: int, timeout: float) -> set[str]:
    ids: set[str] = set()
    stop = asyncio.Event()

    async def read() -> None:
        async for _t, _k, value, _at in consume(url, [TURN_SCORES.name], stop=stop):
            ids.add(json.loads(value)["record_id"])
            if len(ids) >= want:
                stop.set()

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(read(), timeout)
    return ids


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--turns", type=int, default=200_000)
    p.add_argument("--turns-per-conversation", type=int, default=20)
    p.add_argument("--timeout", type=float, default=900.0)
    p.add_argument("--json", default=None)
    p.add_argument(
        "--tombstone-ttl",
        type=float,
        default=20.0,
        help="the worker's --tombstone-ttl: after the drain, RSS is read again once every closed conversation's "
        "tombstone has expired (that long plus 15 s)",
    )
    args = p.parse_args()
    convs = conversations(args.turns, args.turns_per_conversation)
    want = sum(m.role == "assistant" for c in convs for m in c.turns)
    logdir = Path(tempfile.mkdtemp(prefix="attune-burst-"))
    port = free_port()
    with EmbeddedBroker(log_path=logdir / "tansu.log") as broker:
        settings = StreamSettings(broker=broker.url, profile="tansu")
        asyncio.run(create_topics(broker.bootstrap, settings.topics(), configs=settings.topic_configs()))
        worker = WorkerProcess(
            broker.url,
            "tansu",
            [
                *("--inactivity-timeout", "3600", "--metrics-port", str(port), "--loglevel", "WARNING"),
                *("--tombstone-ttl", str(args.tombstone_ttl)),
            ],
            log_path=logdir / "worker.log",
        )
        try:
            worker.wait_ready(90)
            rss0 = proc_kb(worker.pid, "VmRSS")
            started = time.monotonic()
            publish_s = asyncio.run(publish_all(broker.url, convs))
            print(f"published {len(convs) * args.turns_per_conversation} turns in {publish_s:.1f} s", flush=True)
            last = -1.0
            deadline = started + args.timeout
            while time.monotonic() < deadline:
                m = metrics(port)
                scored = m.get("attune_turn_scores_total", 0.0)
                if scored != last:
                    print(f"  {time.monotonic() - started:6.1f} s: {scored:,.0f} turn scores counted", flush=True)
                last = scored
                if scored >= want:
                    break
                time.sleep(2.0)
            drained_s = time.monotonic() - started
            ids = asyncio.run(distinct_scores(broker.url, want, timeout=120))
            m = metrics(port)
            rss_drained = proc_kb(worker.pid, "VmRSS")
            time.sleep(args.tombstone_ttl + 15.0)  # every tombstone expired, its keys deleted from the tables
            rss_expired = proc_kb(worker.pid, "VmRSS")
            rereads = [int(x) for x in re.findall(r"re-read (\d+) message", "\n".join(worker.lines))]
            result = {
                "turns": len(convs) * args.turns_per_conversation,
                "conversations": len(convs),
                "publish_s": round(publish_s, 1),
                "drained_s": round(drained_s, 1),
                "loop_lag_max_s": round(m.get("attune_event_loop_lag_max_seconds", float("nan")), 3),
                "loop_ticks_over_1s": m.get("attune_event_loop_lag_seconds_count", 0)
                - m.get('attune_event_loop_lag_seconds_bucket{le="1.0"}', 0),
                "reread_total": m.get('attune_reread_total{topic="attune.turns"}', 0.0),
                "largest_reread": max(rereads, default=0),
                "turn_scores_total": m.get("attune_turn_scores_total", 0.0),
                "turn_score_records": len(ids),
                "assistant_turns": want,
                "duplicates_ignored": m.get('attune_turns_ignored_total{reason="duplicate"}', 0.0),
                "worker_rss_mb_start": round(rss0 / 1024),
                "worker_rss_mb_peak": round(proc_kb(worker.pid, "VmHWM") / 1024),
                "worker_rss_mb_drained": round(rss_drained / 1024),
                "worker_rss_mb_after_expiry": round(rss_expired / 1024),
                "open_conversations_after_expiry": m.get("attune_open_conversations", float("nan")),
            }
        finally:
            worker.stop(30)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    ok = result["turn_scores_total"] == result["turn_score_records"] == want and result["loop_lag_max_s"] < 1.0
    print("OK" if ok else "NOT OK: see above", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
