"""Streaming benchmark: the batched Faust agent next to a naive per-event agent, on a real broker.

For each agent (``batched`` = ``attune worker``, ``naive`` = ``attune worker --naive``: one event at a
time, each output awaited on its own, same scoring and tables) on a fresh embedded Tansu broker:

1. **throughput**: a backlog of conversations is published first, then one worker drains it; turns/s is
   the number of turns over the time from the first to the last output record (join and recovery
   excluded), and every record the batch path produces must arrive (checked by id);
2. **latency**: live traffic at a fixed rate (default 500 turns/s); turn→score is the time from sending
   an assistant turn to receiving its ``turn_score``, crisis-turn→alert from sending a crisis user turn
   to receiving its ``crisis_disclosure`` alert (both measured by the same process, one clock).

Conversations are the bundled demo samples (realistic text, crisis turns included) under fresh ids.

    .venv/bin/python bench/stream_bench.py [--backlog 600] [--rate 500] [--seconds 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import orjson

from schemas import Conversation, Turn, decode_output, encode
from schemas.topics import CONVERSATION_SCORES, SAFETY_ALERTS, TURN_SCORES, TURNS
from scorers import evaluate_conversation
from streams import EmbeddedBroker, StreamSettings, WorkerProcess, create_topics
from streams.demo import bundled_samples
from streams.io import consume, load_conversations, producer_for

OUTPUTS = [TURN_SCORES.name, SAFETY_ALERTS.name, CONVERSATION_SCORES.name]


def conversations(n: int, prefix: str) -> list[Conversation]:
    base, _ = load_conversations(bundled_samples())
    return [base[i % len(base)].model_copy(update={"conversation_id": f"{prefix}-{i:05d}"}) for i in range(n)]


def interleaved(convs: list[Conversation]) -> list[Turn]:
    """Round-robin over conversations: each keeps its order, many are open at once (live shape)."""
    per = [c.as_turns() for c in convs]
    out: list[Turn] = []
    for j in range(max(len(p) for p in per)):
        out += [p[j] for p in per if j < len(p)]
    return out


def expected_ids(convs: list[Conversation]) -> set[str]:
    ids = set()
    for c in convs:
        for r in evaluate_conversation(c):
            ids.add(r.alert_id if r.kind == "safety_alert" else r.record_id)  # type: ignore[union-attr]
    return ids


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


class Collector:
    """Reads the output topics in the background; records the first arrival time of every id."""

    def __init__(self, broker: str) -> None:
        self.broker = broker
        self.first: dict[str, float] = {}
        self.records: dict[str, object] = {}
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for _topic, _k, value, at in consume(self.broker, OUTPUTS, stop=self.stop):
            rec = decode_output(value)
            rid = rec.alert_id if rec.kind == "safety_alert" else rec.record_id  # type: ignore[union-attr]
            if rid not in self.first:
                self.first[rid] = at
                self.records[rid] = rec

    async def wait_for(self, ids: set[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ids <= self.first.keys():
                return True
            await asyncio.sleep(0.05)
        return False

    async def close(self) -> None:
        self.stop.set()
        if self.task is not None:
            await self.task


async def send_all(broker: str, turns: list[Turn], rate: float | None) -> dict[tuple[str, int], float]:
    """Publish turns (at ``rate`` per second, or as fast as possible); returns send times by (cid, idx)."""
    producer = producer_for(broker, "tansu")
    await producer.start()
    sent: dict[tuple[str, int], float] = {}
    try:
        start = time.monotonic()
        futs = []
        for i, t in enumerate(turns):
            if rate:
                delay = start + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            futs.append(await producer.send(TURNS.name, encode(t), key=t.conversation_id.encode()))
            sent[(t.conversation_id, t.turn_index)] = time.time()
        await asyncio.gather(*futs)
    finally:
        await producer.stop()
    return sent


async def run_mode(mode: str, args: argparse.Namespace, logdir: Path) -> dict[str, object]:
    result: dict[str, object] = {"mode": mode}
    with EmbeddedBroker(log_path=logdir / f"tansu-{mode}.log") as broker:
        settings = StreamSettings(broker=broker.url, profile="tansu")
        await create_topics(broker.bootstrap, settings.topics(), configs=settings.topic_configs())
        collector = Collector(broker.url)
        collector.start()

        backlog = conversations(args.backlog, f"{mode}-backlog")
        backlog_turns = interleaved(backlog)
        want = expected_ids(backlog)
        t0 = time.monotonic()
        await send_all(broker.url, backlog_turns, None)
        result["publish_turns_per_s"] = round(len(backlog_turns) / (time.monotonic() - t0))

        extra = ["--naive"] if mode == "naive" else []
        worker = WorkerProcess(broker.url, "tansu", [*extra, "--inactivity-timeout", "120"], logdir / f"w-{mode}.log")
        try:
            await asyncio.to_thread(worker.wait_ready, 90)
            complete = await collector.wait_for(want, args.drain_timeout)
            arrivals = [collector.first[i] for i in want if i in collector.first]
            span = max(arrivals) - min(arrivals) if arrivals else float("nan")
            result.update(
                backlog_turns=len(backlog_turns),
                backlog_complete=complete,
                backlog_records=len(want),
                backlog_received=len(arrivals),
                turns_per_s=round(len(backlog_turns) / span) if complete and span > 0 else None,
            )

            live = conversations(max(1, int(args.rate * args.seconds / 6.5)), f"{mode}-live")
            live_turns = interleaved(live)
            live_want = expected_ids(live)
            sent = await send_all(broker.url, live_turns, args.rate)
            live_complete = await collector.wait_for(live_want, args.drain_timeout)
            score_lat, alert_lat = [], []
            trace: list[tuple[float, str, float]] = []
            for rid in live_want:
                rec = collector.records.get(rid)
                if rec is None or rec.kind == "conversation_score":  # type: ignore[attr-defined]
                    continue
                key = (rec.conversation_id, rec.turn_index)  # type: ignore[attr-defined]
                if rec.kind == "turn_score" and key in sent:  # type: ignore[attr-defined]
                    score_lat.append(1000 * (collector.first[rid] - sent[key]))
                    trace.append((sent[key], "score", score_lat[-1]))
                elif rec.kind == "safety_alert" and rec.alert_type == "crisis_disclosure" and key in sent:  # type: ignore[attr-defined]
                    alert_lat.append(1000 * (collector.first[rid] - sent[key]))
            if args.trace:
                t0 = min(t for t, _, _ in trace)
                rows = sorted((round(t - t0, 3), kind, round(ms, 1)) for t, kind, ms in trace)
                Path(f"{args.trace}.{mode}.json").write_bytes(orjson.dumps(rows))
            result.update(
                live_rate=args.rate,
                live_turns=len(live_turns),
                live_complete=live_complete,
                score_ms_p50=round(pct(score_lat, 0.5), 1),
                score_ms_p99=round(pct(score_lat, 0.99), 1),
                alert_ms_p50=round(pct(alert_lat, 0.5), 1),
                alert_ms_p99=round(pct(alert_lat, 0.99), 1),
                n_scores=len(score_lat),
                n_alerts=len(alert_lat),
            )
        finally:
            worker.stop()
            await collector.close()
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backlog", type=int, default=600, help="conversations in the throughput backlog")
    p.add_argument("--rate", type=float, default=500.0, help="live traffic, turns per second")
    p.add_argument("--seconds", type=float, default=10.0, help="duration of the live phase")
    p.add_argument("--drain-timeout", type=float, default=120.0)
    p.add_argument("--modes", default="batched,naive")
    p.add_argument("--json", default=None, help="also write the results here")
    p.add_argument("--trace", default=None, help="write (sent_at, kind, latency_ms) rows to TRACE.<mode>.json")
    args = p.parse_args(argv)
    logdir = Path(tempfile.mkdtemp(prefix="attune-bench-"))
    results = [asyncio.run(run_mode(m, args, logdir)) for m in args.modes.split(",")]
    by = {r["mode"]: r for r in results}
    summary: dict[str, object] = {"results": results, "logs": str(logdir)}
    if "batched" in by and "naive" in by and by["batched"].get("turns_per_s") and by["naive"].get("turns_per_s"):
        summary["throughput_ratio"] = round(by["batched"]["turns_per_s"] / by["naive"]["turns_per_s"], 2)  # type: ignore[operator]
    cols = ["mode", "turns_per_s", "backlog_complete", "score_ms_p50", "score_ms_p99", "alert_ms_p50", "alert_ms_p99"]
    print(" | ".join(cols))
    for r in results:
        print(" | ".join(str(r.get(c)) for c in cols))
    if "throughput_ratio" in summary:
        print(f"batched / naive throughput: {summary['throughput_ratio']}x")
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    ok = all(r.get("backlog_complete") and r.get("live_complete") for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
