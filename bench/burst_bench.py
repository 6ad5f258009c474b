"""A burst: many turns published at once into one worker (issue 14 part 2).

Before the fix, 200,000 turns at once made the offset audit re-read 45,000-83,000 turns it wrongly judged
undelivered (a partition waiting behind the others in Faust's buffers), in one batch: the event loop
stalled 17-22 s, /healthz timed out, and ``attune_turn_scores_total`` fell short of the records produced.
This script publishes the burst, waits until every turn score is on the topic, and reports from the
worker's own ``/metrics`` and ``/proc``:

* the event loop's largest lag (``attune_event_loop_lag_max_seconds``) and how many 100 ms ticks were
  over 1 s;
* turns re-read by the audit (``attune_reread_total``) and the largest single re-read it logged;
* the turn scores the worker counted (``attune_turn_scores_total``, during this burst) next to the distinct
  ``turn_score`` records on the topic, and the duplicates the worker ignored;
* memory (issue 14 part 4), from ``/proc``: the worker's RSS at ready, after ``--warmup`` conversations
  (the level a worker that served any traffic starts a burst from), at the peak (VmHWM), once drained, and
  once every tombstone expired (anonymous / file-backed, and on jemalloc its allocated / active / metadata /
  resident from ``attune_allocator_bytes``, after the warm-up and after expiry); its allocator
  (``streams._allocator``; ``--allocator`` is passed to the worker) and the RSS of its alert path process,
  which the worker's figures leave out. ``--bursts 2`` shows whether what one burst leaves behind adds up.

    .venv/bin/python bench/burst_bench.py [--turns 200000] [--bursts 1] [--warmup 50] [--allocator A] [--json F]
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
from typing import Any

from schemas import Conversation, Message, encode
from schemas.topics import TURN_SCORES, TURNS
from streams import EmbeddedBroker, StreamSettings, WorkerProcess, create_topics
from streams._allocator import CHOICES
from streams._trim import STATS
from streams.broker import free_port
from streams.io import consume, producer_for

LINES = (
    "I've been feeling really low since the move and I can't sleep.",
    "That sounds exhausting. What has the move changed most for you?",
    "Mostly that I don't know anyone here and evenings are lonely.",
    "Lonely evenings are hard. Is there one small thing that helped before?",
)


def conversations(turns: int, per: int, burst: int = 0) -> list[Conversation]:
    n = turns // per
    return [
        Conversation(
            conversation_id=f"burst{burst or ''}-{i:06d}",
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


def children_rss_mb(pid: int) -> int:
    """RSS of the worker's child processes (its alert path), which the worker's own figures leave out."""
    kids = [k for t in Path(f"/proc/{pid}/task").iterdir() for k in (t / "children").read_text().split()]
    return round(sum(proc_kb(int(k), "VmRSS") for k in kids) / 1024)


def allocator(worker: WorkerProcess) -> str:
    """The allocator the worker says in its ready line it observes itself running on."""
    m = re.search(r"allocator=(\S+)", worker.ready_lines()[-1])
    return m.group(1) if m else "unknown"


def jemalloc_mb(port: int) -> str:
    """jemalloc's allocated / active / metadata / resident MB from the worker's metrics ("-" off jemalloc)."""
    m = metrics(port)
    values = [m.get(f'attune_allocator_bytes{{kind="{k}"}}') for k in STATS]
    return "-" if None in values else " / ".join(f"{v / 2**20:.1f}" for v in values if v is not None)


def anon_file_mb(pid: int) -> str:
    """Anonymous / file-backed resident MB: growth in file pages is library code touched, not data kept."""
    return f"{round(proc_kb(pid, 'RssAnon') / 1024)} / {round(proc_kb(pid, 'RssFile') / 1024)}"


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


async def distinct_scores(url: str, want: int, timeout: float, prefix: str = "") -> set[str]:
    """Distinct turn-score record ids of the conversations whose id starts with ``prefix`` (one burst's)."""
    ids: set[str] = set()
    stop = asyncio.Event()

    async def read() -> None:
        async for _t, key, value, _at in consume(url, [TURN_SCORES.name], stop=stop):
            if key is not None and not key.decode().startswith(prefix):
                continue
            ids.add(json.loads(value)["record_id"])
            if len(ids) >= want:
                stop.set()

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(read(), timeout)
    return ids


def burst(
    args: argparse.Namespace, url: str, worker: WorkerProcess, port: int, convs: list[Conversation]
) -> dict[str, Any]:
    """Publish one burst, wait for every turn score, then for every tombstone to expire; the figures."""
    want = sum(m.role == "assistant" for c in convs for m in c.turns)
    before = metrics(port).get("attune_turn_scores_total", 0.0)
    started = time.monotonic()
    publish_s = asyncio.run(publish_all(url, convs))
    print(f"published {len(convs) * args.turns_per_conversation} turns in {publish_s:.1f} s", flush=True)
    last = -1.0
    deadline = started + args.timeout
    while time.monotonic() < deadline:
        scored = metrics(port).get("attune_turn_scores_total", 0.0) - before
        if scored != last:
            print(f"  {time.monotonic() - started:6.1f} s: {scored:,.0f} turn scores counted", flush=True)
        last = scored
        if scored >= want:
            break
        time.sleep(2.0)
    drained_s = time.monotonic() - started
    ids = asyncio.run(distinct_scores(url, want, timeout=120, prefix=convs[0].conversation_id[:-6]))
    m = metrics(port)
    rss_drained = proc_kb(worker.pid, "VmRSS")
    time.sleep(args.tombstone_ttl + 15.0)  # every tombstone expired, its keys deleted from the tables
    rss_expired = proc_kb(worker.pid, "VmRSS")
    rereads = [int(x) for x in re.findall(r"re-read (\d+) message", "\n".join(worker.lines))]
    return {
        "turns": len(convs) * args.turns_per_conversation,
        "conversations": len(convs),
        "publish_s": round(publish_s, 1),
        "drained_s": round(drained_s, 1),
        "loop_lag_max_s": round(m.get("attune_event_loop_lag_max_seconds", float("nan")), 3),
        "loop_ticks_over_1s": m.get("attune_event_loop_lag_seconds_count", 0)
        - m.get('attune_event_loop_lag_seconds_bucket{le="1.0"}', 0),
        "reread_total": m.get('attune_reread_total{topic="attune.turns"}', 0.0),
        "largest_reread": max(rereads, default=0),
        "turn_scores_counted": m.get("attune_turn_scores_total", 0.0) - before,
        "turn_score_records": len(ids),
        "assistant_turns": want,
        "duplicates_ignored": m.get('attune_turns_ignored_total{reason="duplicate"}', 0.0),
        "worker_rss_mb_peak": round(proc_kb(worker.pid, "VmHWM") / 1024),
        "worker_rss_mb_drained": round(rss_drained / 1024),
        "worker_rss_mb_after_expiry": round(rss_expired / 1024),
        "worker_anon_file_mb_after_expiry": anon_file_mb(worker.pid),
        "worker_jemalloc_mb_after_expiry": jemalloc_mb(port),
        "open_conversations_after_expiry": m.get("attune_open_conversations", float("nan")),
    }


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
    p.add_argument(
        "--bursts",
        type=int,
        default=1,
        help="bursts in a row into the same worker, each drained and expired before the next (does the "
        "memory left after one add up?); figures of burst 2 on are prefixed burstN_",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=50,
        help="conversations run through the worker (opened, closed, expired) before the burst; RSS after them is "
        "worker_rss_mb_warm, the level a worker that has served any traffic starts a burst from (0: none)",
    )
    p.add_argument("--allocator", choices=CHOICES, default=None, help="the worker's --allocator (default: its own)")
    args = p.parse_args()
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
                *(("--allocator", args.allocator) if args.allocator else ()),
            ],
            log_path=logdir / "worker.log",
        )
        try:
            worker.wait_ready(90)
            rss0 = proc_kb(worker.pid, "VmRSS")
            result: dict[str, Any] = {
                "worker_allocator": allocator(worker),
                "worker_rss_mb_start": round(rss0 / 1024),
                "worker_anon_file_mb_start": anon_file_mb(worker.pid),
                "alert_path_rss_mb_start": children_rss_mb(worker.pid),
            }
            if args.warmup:  # a few conversations opened, closed and expired: what a worker holds once it ran
                burst(
                    args,
                    broker.url,
                    worker,
                    port,
                    conversations(args.warmup * args.turns_per_conversation, args.turns_per_conversation, 99),
                )
                result["worker_rss_mb_warm"] = round(proc_kb(worker.pid, "VmRSS") / 1024)
                result["worker_anon_file_mb_warm"] = anon_file_mb(worker.pid)
                result["worker_jemalloc_mb_warm"] = jemalloc_mb(port)
            for b in range(args.bursts):
                convs = conversations(args.turns, args.turns_per_conversation, b)
                result.update(
                    {
                        f"burst{b + 1}_{k}" if b else k: v
                        for k, v in burst(args, broker.url, worker, port, convs).items()
                    }
                )
                if b == 0:  # the first burst's peak over the level it started from (after the warm-up)
                    base = result.get("worker_rss_mb_warm", result["worker_rss_mb_start"])
                    result["kb_per_open_conversation_at_peak"] = round(
                        (result["worker_rss_mb_peak"] - base) * 1024 / len(convs), 1
                    )
            result["alert_path_rss_mb_after_expiry"] = children_rss_mb(worker.pid)
        finally:
            worker.stop(30)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    ok = True
    for b in range(args.bursts):  # every score on the topic and counted, no stall
        pre = f"burst{b + 1}_" if b else ""
        want = result[f"{pre}assistant_turns"]
        ok &= result[f"{pre}turn_score_records"] == want and result[f"{pre}turn_scores_counted"] == want
        ok &= result[f"{pre}loop_lag_max_s"] < 1.0
    print("OK" if ok else "NOT OK: see above", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
