"""Judge provider outage under live traffic: all 429, then all 500, then hanging connections, then healthy.

One embedded Tansu broker, one ``attune worker --judge`` (every assistant turn sampled, the LLM checklist at
every close) and the fake judge server (``attune.testing.fake_judge``) on 127.0.0.1. Paced conversations
stream through four phases: healthy warm-up, the outage (its length split evenly between ``429``, ``500``
and ``hang``), then recovery. Measured:

* **inline latency**: turn -> cheap ``turn_score`` (p50/p99) per phase, one clock (sent and received here);
* **bounded memory**: the worker's RSS (``VmRSS`` of ``/proc/PID/status``, every 0.5 s), and the judge-jobs
  backlog on the broker (end offsets minus the judge agent's committed offsets): the queue lives on the
  broker, the worker holds at most ``--judge-max-in-flight`` jobs;
* **circuit breaker**: judge calls the server received per phase (an open breaker stops them) and
  judgments whose error is ``circuit open``; judgments ``ok`` again after the outage (it closed);
* **ERROR with a cause**: every sampled turn gets a ``turn_judgment`` and every conversation an LLM
  ``conversation_score``; each unanswered one is ``status=error`` / ``answer=ERROR`` with its cause,
  counted by cause class.

CI runs a 20-second outage (tests/test_faults_judge.py); the full-length run is minutes long:

    .venv/bin/python bench/judge_outage.py --minutes 3 [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attune.testing.fake_judge import FakeJudgeServer
from schemas import Conversation, Message, decode_output
from schemas.topics import CONVERSATION_SCORES, JUDGE_JOBS, SAFETY_ALERTS, TURN_JUDGMENTS, TURN_SCORES, TURNS
from scorers.judges import error_cause
from streams import EmbeddedBroker, StreamSettings, WorkerProcess, create_topics
from streams._faust import fetched_highwaters
from streams.io import consume, publish, schedule

JUDGE = "fake:judge-1"
FAULTS = ("429", "500", "hang")
OUT_TOPICS = [TURN_SCORES.name, TURN_JUDGMENTS.name, CONVERSATION_SCORES.name, SAFETY_ALERTS.name]
cause_of = error_cause  # the cause classes of scorers.judges.ERROR_CAUSES


@dataclass
class Outage:
    """Phase boundaries in seconds from the start of traffic."""

    warmup_s: float
    outage_s: float
    recovery_s: float

    @property
    def phases(self) -> list[tuple[str, float, float]]:
        out = [("healthy", 0.0, self.warmup_s)]
        step = self.outage_s / len(FAULTS)
        for i, kind in enumerate(FAULTS):
            out.append((kind, self.warmup_s + i * step, self.warmup_s + (i + 1) * step))
        end = self.warmup_s + self.outage_s
        out.append(("recovered", end, end + self.recovery_s))
        return out

    def phase_at(self, t: float) -> str:
        for name, lo, hi in self.phases:
            if lo <= t < hi:
                return name
        return "recovered"


@dataclass
class Observed:
    sent: dict[tuple[str, int], float] = field(default_factory=dict)
    turn_score_at: dict[tuple[str, int], float] = field(default_factory=dict)
    judgments: dict[str, Any] = field(default_factory=dict)
    llm_scores: dict[str, Any] = field(default_factory=dict)
    rss_mb: list[tuple[float, float]] = field(default_factory=list)
    backlog: list[tuple[float, int]] = field(default_factory=list)
    calls: list[tuple[float, int]] = field(default_factory=list)


def conversations(n: int, turns: int, prefix: str) -> list[Conversation]:
    out = []
    for i in range(n):
        msgs = []
        for j in range(turns):
            if j % 2 == 0:
                text = f"I keep replaying the argument with my sister, day {j}; I can't sleep and I feel awful."
            else:
                text = f"That sounds exhausting. What stays with you most when you lie awake, {i}?"
            msgs.append(Message(role="user" if j % 2 == 0 else "assistant", text=text))
        out.append(Conversation(conversation_id=f"{prefix}-{i:05d}", turns=msgs))
    return out


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def jobs_backlog(bootstrap: str, group: str = "attune") -> int:
    """Judge jobs on the broker not yet committed by the judge agent (the queue length)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(JUDGE_JOBS.name, p) for p in sorted(consumer.partitions_for_topic(JUDGE_JOBS.name) or ())]
        committed = {tp: (await consumer.committed(tp)) or 0 for tp in tps}
    finally:
        await consumer.stop()
    ends = await fetched_highwaters(bootstrap, tuple(tps))
    return sum(max(0, ends[tp] - committed[tp]) for tp in tps)


def judge_config(path: Path, base_url: str, breaker_reset_s: float, deadline_s: float, call_timeout_s: float) -> Path:
    path.write_text(
        f"deadline_s = {deadline_s}\nbackoff_base_s = 0.05\nbackoff_max_s = 0.5\nmax_concurrency = 64\n"
        "[sampling]\nturn_rate = 1.0\n"
        f"[breaker]\nmin_calls = 5\nreset_after_s = {breaker_reset_s}\n"
        f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{base_url}"\nmax_retries = 2\n'
        f"timeout_s = {call_timeout_s}\n"
    )
    return path


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def run(
    outage_s: float = 180.0,
    *,
    warmup_s: float = 5.0,
    recovery_s: float = 15.0,
    conv_every_s: float = 0.5,
    turns: int = 6,
    pace: float = 0.5,
    breaker_reset_s: float = 5.0,
    deadline_s: float = 6.0,
    call_timeout_s: float = 2.0,
    max_in_flight: int = 256,
    workdir: Path | None = None,
    drain_timeout_s: float = 90.0,
) -> dict[str, Any]:
    """Run the scenario; returns the summary (see :func:`summarise`)."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="judge-outage-"))
    outage = Outage(warmup_s, outage_s, recovery_s)
    traffic_s = warmup_s + outage_s + recovery_s - turns * pace  # the last conversation ends with recovery
    convs = conversations(max(1, int(traffic_s / conv_every_s)), turns, prefix=f"outage{int(time.time())}")
    events = schedule(convs, pace=pace, stagger=conv_every_s)

    with FakeJudgeServer.in_thread(latency=0.05) as server:
        loop = server.loop
        assert loop is not None
        broker = EmbeddedBroker(log_path=workdir / "tansu.log").start()
        worker: WorkerProcess | None = None
        obs = Observed()
        try:
            settings = StreamSettings(broker=broker.url, profile="tansu")
            asyncio.run(create_topics(broker.bootstrap, settings.topics(), configs=settings.topic_configs()))
            base_url = server.openai_base_url
            cfg = judge_config(workdir / "judges.toml", base_url, breaker_reset_s, deadline_s, call_timeout_s)
            worker = WorkerProcess(
                broker.url,
                "tansu",
                [
                    *("--judge", JUDGE, "--judge-config", str(cfg), "--datadir", str(workdir / "data")),
                    *("--inactivity-timeout", "120", "--metrics-port", "0"),
                    *("--judge-max-in-flight", str(max_in_flight)),
                ],
                log_path=workdir / "worker.log",
            )
            worker.wait_ready(90)

            def set_fault(kind: str | None) -> None:
                def apply() -> None:
                    server.faults.clear()
                    if kind is not None:
                        server.inject(kind, times=10**9, retry_after=1.0, hang_s=3600.0)

                loop.call_soon_threadsafe(apply)

            asyncio.run(_drive(broker, worker, server, events, convs, outage, obs, set_fault, drain_timeout_s))
        finally:
            if worker is not None:
                worker.stop(20)
            broker.stop()
    return summarise(obs, outage, convs, max_in_flight)


async def _drive(broker, worker, server, events, convs, outage, obs: Observed, set_fault, drain_timeout_s) -> None:
    start = time.monotonic()
    stop = asyncio.Event()
    want_turns = {(c.conversation_id, j) for c in convs for j in range(1, len(c.turns), 2)}
    want_convs = {c.conversation_id for c in convs}

    def on_sent(ev) -> None:
        obs.sent[(ev.conversation_id, ev.turn_index)] = time.monotonic() - start

    async def collect() -> None:
        async for _topic, _k, value, at in consume(broker.url, OUT_TOPICS, stop=stop):
            rec = decode_output(value)
            t = at - (time.time() - (time.monotonic() - start))  # receive time on the monotonic clock
            if rec.kind == "turn_score":
                obs.turn_score_at.setdefault((rec.conversation_id, rec.turn_index), t)
            elif rec.kind == "turn_judgment":
                obs.judgments[rec.record_id] = (t, rec)
            elif rec.kind == "conversation_score" and rec.tier == "llm":
                obs.llm_scores[rec.conversation_id] = (t, rec)

    async def faults() -> None:
        for name, lo, _hi in outage.phases:
            await asyncio.sleep(max(0.0, lo - (time.monotonic() - start)))
            set_fault(name if name in FAULTS else None)

    async def sample() -> None:
        while not stop.is_set():
            now = time.monotonic() - start
            mb = rss_mb(worker.pid)
            if mb is not None:
                obs.rss_mb.append((now, mb))
            obs.calls.append((now, server.model_calls))
            with contextlib.suppress(Exception):  # the broker busy for > 5 s: skip one sample
                obs.backlog.append((now, await asyncio.wait_for(jobs_backlog(broker.bootstrap), 5)))
            await asyncio.sleep(0.5)

    def done() -> bool:
        judged = {(r.conversation_id, r.turn_index) for _t, r in obs.judgments.values()}
        return want_turns <= judged and want_convs <= obs.llm_scores.keys()

    tasks = [asyncio.create_task(c) for c in (collect(), faults(), sample())]
    await publish(broker.url, TURNS.name, events, profile="tansu", on_sent=on_sent)
    end = outage.warmup_s + outage.outage_s + outage.recovery_s
    await asyncio.sleep(max(0.0, end - (time.monotonic() - start)))
    deadline = time.monotonic() + drain_timeout_s
    while not done() and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    # Faust commits the judge agent's offsets every second: give the last commits time to land.
    settle = time.monotonic() + 10
    while obs.backlog and obs.backlog[-1][1] > 0 and time.monotonic() < settle:
        await asyncio.sleep(0.5)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def summarise(obs: Observed, outage: Outage, convs: list[Conversation], max_in_flight: int) -> dict[str, Any]:
    phases: dict[str, dict[str, Any]] = {}
    for name, lo, hi in outage.phases:
        sent = [(k, t) for k, t in obs.sent.items() if lo <= t < hi and k[1] % 2]  # assistant turns
        lat = [obs.turn_score_at[k] - t for k, t in sent if k in obs.turn_score_at]
        calls = [c for t, c in obs.calls if lo <= t < hi]
        judged = [r for t, r in obs.judgments.values() if lo <= t < hi]
        phases[name] = {
            "seconds": round(hi - lo, 1),
            "turn_to_score_ms": {
                "n": len(lat),
                "p50": round(1000 * statistics.median(lat), 1) if lat else None,
                "p99": round(1000 * pct(lat, 0.99), 1) if lat else None,
            },
            "judge_calls_received": (calls[-1] - calls[0]) if len(calls) > 1 else 0,
            "judgments_out": {
                "ok": sum(r.status == "ok" for r in judged),
                **_count(cause_of(r.error) for r in judged if r.status != "ok"),
            },
        }
    want_turns = {(c.conversation_id, j) for c in convs for j in range(1, len(c.turns), 2)}
    judged_turns = {(r.conversation_id, r.turn_index) for _t, r in obs.judgments.values()}
    errors = [r for _t, r in obs.judgments.values() if r.status != "ok"]
    scores = [s for _t, s in obs.llm_scores.values()]
    error_answers = [a for s in scores for a in s.answers.values() if a.answer == "ERROR"]
    rss = [mb for _t, mb in obs.rss_mb]
    warm = [mb for t, mb in obs.rss_mb if t < outage.warmup_s] or rss[:1]
    return {
        "outage_s": outage.outage_s,
        "phases": phases,
        "turns_sent": len(obs.sent),
        "turn_scores_received": len(obs.turn_score_at),
        "sampled_turns": len(want_turns),
        "sampled_turns_without_judgment": len(want_turns - judged_turns),
        "judgments_error": len(errors),
        "judgments_error_without_cause": sum(not r.error for r in errors),
        "error_causes": _count(cause_of(r.error) for r in errors),
        "conversations": len(convs),
        "conversations_without_llm_score": len({c.conversation_id for c in convs} - obs.llm_scores.keys()),
        "llm_scores_with_error": sum(any(a.answer == "ERROR" for a in s.answers.values()) for s in scores),
        "error_answers_without_cause": sum(not a.error for a in error_answers),
        "checklist_error_causes": _count(cause_of(a.error) for a in error_answers),
        "rss_mb": {
            "warmup_max": round(max(warm), 1) if warm else None,
            "max": round(max(rss), 1) if rss else None,
            "end": round(rss[-1], 1) if rss else None,
        },
        "jobs_backlog_max": max((n for _t, n in obs.backlog), default=None),
        "jobs_backlog_end": obs.backlog[-1][1] if obs.backlog else None,
        "judge_max_in_flight": max_in_flight,
    }


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in items:
        out[it] = out.get(it, 0) + 1
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=3.0, help="outage length, split evenly over 429/500/hang")
    p.add_argument("--warmup", type=float, default=10.0, help="healthy seconds before the outage")
    p.add_argument("--recovery", type=float, default=30.0, help="healthy seconds after it")
    p.add_argument("--breaker-reset", type=float, default=30.0, help="[breaker] reset_after_s (default as shipped)")
    p.add_argument("--json", metavar="PATH", help="also write the summary here")
    args = p.parse_args(argv)
    summary = run(
        args.minutes * 60,
        warmup_s=args.warmup,
        recovery_s=max(args.recovery, args.breaker_reset + 10),
        breaker_reset_s=args.breaker_reset,
    )
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
