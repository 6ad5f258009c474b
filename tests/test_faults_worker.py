"""Fault: the worker is killed (SIGKILL) or stopped (SIGTERM) at seeded random points, repeatedly, while
conversations stream and judge jobs are in flight; it is restarted after each.

``tests/test_stream_resilience.py`` covers one SIGKILL of a cheap-tier worker after a fixed number of
scores, and ``tests/test_stream_judging.py`` one SIGKILL with judge jobs in flight. This test draws the
kill points and signals from a seed (``ATTUNE_FAULT_SEED``), includes a kill before the restarted worker
finished recovering its tables, runs the judge fan-out throughout, and checks everything at once:

* zero turns unscored (every cheap ``turn_score`` id of the batch path arrives);
* exactly one logical ``conversation_score`` per conversation and tier (by id; redelivered copies are
  identical), and no buffered turn lost (``n_turns``);
* alerts identical by id (same ``alert_id`` -> same content apart from timestamps), equal to batch;
* every assistant turn judged, one LLM checklist per conversation, no judge call that had completed
  before a kill paid again (fake judge request log vs the SQLite result cache), at most the calls in
  flight at each kill paid twice.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _stream_helpers import comparable, diff, expected_records, read_back, synthetic

from attune.testing.fake_judge import FakeJudgeServer
from schemas.topics import (
    CONVERSATION_SCORES,
    CONVERSATION_VERDICTS,
    SAFETY_ALERTS,
    TURN_JUDGMENTS,
    TURN_SCORES,
    TURNS,
)
from scorers import exchanges_of
from scorers.checklist import CRITERIA_SPEC, count_turns
from streams.io import publish, schedule

SEED = int(os.environ.get("ATTUNE_FAULT_SEED", "6"))
JUDGE = "fake:judge-1"
JUDGE_CONCURRENCY = 8
JUDGE_LATENCY_S = 0.2
#: A call counts as answered (its reply cached) if it was sent this long plus the latency before the kill:
#: the worker parses the reply and writes the SQLite cache in between (slower on a loaded machine).
ANSWERED_MARGIN_S = 1.0
OUT = (
    TURN_SCORES.name,
    SAFETY_ALERTS.name,
    CONVERSATION_SCORES.name,
    TURN_JUDGMENTS.name,
    CONVERSATION_VERDICTS.name,
)


@pytest.fixture
def judge_server() -> Iterator[FakeJudgeServer]:
    """The fake judge on its own event-loop thread (reachable by the worker subprocesses)."""
    with FakeJudgeServer.in_thread(latency=JUDGE_LATENCY_S) as srv:
        yield srv


async def _jobs_report(bootstrap: str, seen: dict) -> str:
    """Judge jobs on the broker whose output never arrived, with their offsets and the group's commits."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from schemas import JudgeJob
    from schemas.topics import JUDGE_JOBS

    scored = {
        c[0][1].conversation_id for c in seen.values() if c[0][1].kind == "conversation_score" and c[0][1].tier == "llm"
    }
    judged = {(c[0][1].conversation_id, c[0][1].turn_index) for c in seen.values() if c[0][1].kind == "turn_judgment"}
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id="attune", enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(JUDGE_JOBS.name, p) for p in sorted(consumer.partitions_for_topic(JUDGE_JOBS.name) or ())]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        committed = {tp.partition: await consumer.committed(tp) for tp in tps}
        lines = [f"committed {committed} ends { {tp.partition: e for tp, e in ends.items()} }"]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=500)
            if not batch:
                break
            for tp, msgs in batch.items():
                for m in msgs:
                    job = JudgeJob.model_validate_json(m.value)
                    if job.job_type == "checklist" and job.conversation_id not in scored:
                        lines.append(f"  unscored checklist job {job.conversation_id} at [{tp.partition}]@{m.offset}")
                    if job.job_type == "turn" and (job.conversation_id, job.turn_index) not in judged:
                        lines.append(
                            f"  unjudged turn job {job.conversation_id}/{job.turn_index} at [{tp.partition}]@{m.offset}"
                        )
        return "\n".join(lines)
    finally:
        await consumer.stop()


def _sans_usage(rec) -> dict:
    return {k: v for k, v in comparable(rec).items() if k != "usage"}


def kill_plan(rng: random.Random, n: int) -> list[tuple[str, str, float]]:
    """(signal, when, seconds) for ``n`` kills: both signals always present, one kill during recovery."""
    signals = [rng.choice(["SIGKILL", "SIGTERM"]) for _ in range(n)]
    if len(set(signals)) == 1:  # all the same: flip one, so both signals are exercised
        i = rng.randrange(n)
        signals[i] = "SIGTERM" if signals[i] == "SIGKILL" else "SIGKILL"
    during_recovery = rng.randrange(1, n)  # not the first start: its tables are empty
    plan = []
    for i, sig in enumerate(signals):
        early = i == during_recovery
        # "before-ready": seconds after the restart, while it creates topics, joins and recovers its tables.
        plan.append(
            (sig, "before-ready" if early else "after-ready", rng.uniform(1.5, 4.0) if early else rng.uniform(0.2, 3.0))
        )
    return plan


@pytest.mark.broker
@pytest.mark.slow
def test_random_sigkill_and_sigterm_with_judge_jobs_in_flight(
    broker, start_worker, judge_server: FakeJudgeServer, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    convs = synthetic(12, 8, prefix=f"kill{SEED}")
    cfg = tmp_path / "judges.toml"
    cfg.write_text(
        f"deadline_s = 20\nbackoff_base_s = 0.01\nbackoff_max_s = 0.05\nmax_concurrency = {JUDGE_CONCURRENCY}\n"
        "[sampling]\nturn_rate = 1.0\n"
        f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{judge_server.openai_base_url}"\n'
    )
    args = ["--judge", JUDGE, "--judge-config", str(cfg), "--datadir", str(tmp_path / "data")]
    args += ["--inactivity-timeout", "60", "--loglevel", "INFO", "--metrics-port", "0"]
    plan = kill_plan(rng, 4)

    sent: list[int] = []
    publisher = threading.Thread(
        target=lambda: asyncio.run(
            publish(
                broker.url, TURNS.name, schedule(convs, pace=2.0), profile="tansu", on_sent=lambda _e: sent.append(1)
            )
        ),
        daemon=True,
    )
    worker = start_worker(*args)
    worker.wait_ready(60)
    publisher.start()
    kills: list[dict] = []
    t0 = time.monotonic()
    for sig, when, delay in plan:
        if when == "after-ready":
            worker.wait_ready(60)
        time.sleep(delay)
        before = len(judge_server.requests)
        at = time.monotonic()
        was_ready = bool(worker.ready_lines())
        if sig == "SIGKILL":
            worker.kill()
            code = worker.proc.returncode
            assert code == -9
        else:
            code = worker.stop(timeout=30)
            # Before Faust installs its handlers (topic creation, startup) SIGTERM's default action ends the
            # process at once (-15), which for the stream's state is the same as SIGKILL; after, it is graceful.
            assert code == 0 or (code == -15 and not was_ready), f"SIGTERM: code {code}:\n{worker.tail()}"
        kills.append(
            {"signal": sig, "when": when, "after_s": round(delay, 2), "ready": was_ready, "code": code}
            | {"published": len(sent), "judge_calls": before, "at": at}
            | {"judge_in_flight": sum(r.at > at - JUDGE_LATENCY_S for r in judge_server.requests[:before])}
        )
        worker = start_worker(*args)
    worker.wait_ready(60)
    publisher.join(60)
    assert len(sent) == sum(len(c.turns) for c in convs)
    assert any(k["published"] < len(sent) for k in kills), "no kill landed while turns were still streaming"
    assert any(k["judge_in_flight"] for k in kills), "no kill landed while judge calls were in flight"

    # With --judge the verdict comes from the judge agent and names the LLM checklist among its sources, so it is
    # not the batch (cheap-only) verdict: checked on its own below.
    want = {k: r for k, r in expected_records(convs).items() if r.kind != "conversation_verdict"}
    judged_turns = {(ex.conversation_id, ex.turn_index) for c in convs for ex in exchanges_of(c)}
    ids = {c.conversation_id for c in convs}
    # seed 001's N/A conditions (CP1 under 3 turns, CP3 under 10) are decided without a call.
    asked = {c.conversation_id: sum(count_turns(c.turns) >= s.min_turns for s in CRITERIA_SPEC) for c in convs}

    def done(seen: dict) -> bool:
        if not want.keys() <= seen.keys():
            return False
        recs = [copies[0][1] for copies in seen.values()]
        llm = {r.conversation_id for r in recs if r.kind == "conversation_score" and r.tier == "llm"}
        turns = {(r.conversation_id, r.turn_index) for r in recs if r.kind == "turn_judgment"}
        verdicts = {r.conversation_id for r in recs if r.kind == "conversation_verdict"}
        return ids <= llm and judged_turns <= turns and ids <= verdicts

    seen = asyncio.run(read_back(broker.url, done, timeout=120, topics=OUT))
    if not done(seen):
        recs0 = [copies[0][1] for copies in seen.values()]
        llm = {r.conversation_id for r in recs0 if r.kind == "conversation_score" and r.tier == "llm"}
        turns = {(r.conversation_id, r.turn_index) for r in recs0 if r.kind == "turn_judgment"}
        verdicts = {r.conversation_id for r in recs0 if r.kind == "conversation_verdict"}
        lost = sorted((want[m].kind, want[m].conversation_id) for m in want.keys() - seen.keys())
        pytest.fail(
            f"outputs incomplete after kills {kills}: cheap records missing {lost}; LLM scores missing "
            f"{sorted(ids - llm)}; turn judgments missing {sorted(judged_turns - turns)}; verdicts missing "
            f"{sorted(ids - verdicts)}; judge jobs:\n" + asyncio.run(_jobs_report(broker.bootstrap, seen))
        )
    recs = {rid: copies for rid, copies in seen.items()}

    # Zero turns unscored, nothing missing.
    missing = want.keys() - recs.keys()
    assert not missing, sorted((want[m].kind, want[m].conversation_id) for m in missing)[:10]
    # Redelivered copies are identical, and equal to the batch path (alerts included: same id, same content).
    changed = [rid for rid, w in want.items() for _, got in recs[rid] if comparable(got) != comparable(w)]
    assert not changed, changed[:5]
    alert_copies = [copies for copies in recs.values() if copies[0][1].kind == "safety_alert"]
    assert all(len({str(comparable(r)) for _, r in c}) == 1 for c in alert_copies)
    # One logical conversation_score per conversation and tier; every buffered turn in it.
    per_conv: dict[tuple[str, str], set[str]] = {}
    usage_copies = 0
    for rid, copies in recs.items():
        r = copies[0][1]
        if r.kind == "conversation_score":
            per_conv.setdefault((r.conversation_id, r.tier), set()).add(rid)
            assert all(c.n_turns == 8 for _, c in copies), "a buffered turn was lost"
            # A re-run judge job answers from the cache: same judgement, its own usage (what *that* run paid).
            differ = [diff(c, r) for _, c in copies if _sans_usage(c) != _sans_usage(r)]
            assert not differ, f"copies of {r.tier} score {rid} differ:\n" + "\n".join(differ)
            rerun_usage = [c.usage for _, c in copies[1:] if c.usage != r.usage]
            assert all(u.calls == 0 and u.cache_hits == asked[r.conversation_id] for u in rerun_usage), rerun_usage
            usage_copies += len(rerun_usage)
    assert set(per_conv) == {(c, t) for c in ids for t in ("cheap", "llm")}
    assert all(len(v) == 1 for v in per_conv.values()), {k: v for k, v in per_conv.items() if len(v) > 1}
    llm = [copies[0][1] for copies in recs.values() if copies[0][1].kind == "conversation_score"]
    assert all(a.answer != "ERROR" for s in llm if s.tier == "llm" for a in s.answers.values())
    # One logical verdict per conversation, from both tiers, naming exactly the cheap and LLM scores kept above.
    score_of = {(s.conversation_id, s.tier): s.record_id for s in llm}
    verdict_ids: dict[str, set[str]] = {}
    for rid, copies in recs.items():
        v = copies[0][1]
        if v.kind == "conversation_verdict":
            verdict_ids.setdefault(v.conversation_id, set()).add(rid)
            assert v.tiers == ["cheap", "llm"] and v.judge_status == "ok", (v.tiers, v.judge_status)
            assert v.source_records[:2] == [score_of[(v.conversation_id, t)] for t in ("cheap", "llm")]
            assert len({str(comparable(c)) for _, c in copies}) == 1, f"copies of verdict {rid} differ"
    assert set(verdict_ids) == ids
    assert all(len(v) == 1 for v in verdict_ids.values()), {k: v for k, v in verdict_ids.items() if len(v) > 1}

    # No judge call paid twice, except calls in flight at a kill (at most the concurrency cap per kill).
    paid: dict[str, int] = {}
    for r in judge_server.requests:
        paid[r.system + r.user] = paid.get(r.system + r.user, 0) + 1
    # Answered (and cached) before a kill: answered before the kill of the worker that sent it, the first
    # kill after the call; a call still in flight when its worker died may be paid again.
    kill_times = sorted(k["at"] for k in kills)
    completed = {
        r.system + r.user
        for r in judge_server.requests
        if (after := [t for t in kill_times if t > r.at]) and r.at + JUDGE_LATENCY_S + ANSWERED_MARGIN_S < after[0]
    }
    paid_again = [p for p in completed if paid[p] > 1]
    assert not paid_again, (
        f"{len(paid_again)} answered calls were paid again: "
        + "; ".join(
            f"sent at {[round(r.at - t0, 2) for r in judge_server.requests if r.system + r.user == p]}"
            for p in paid_again
        )
        + f"; kills at {[round(t - t0, 2) for t in kill_times]}"
    )
    distinct = len(judged_turns) + sum(asked.values())
    assert len(paid) == distinct
    repeats = len(judge_server.requests) - len(paid)
    assert repeats <= JUDGE_CONCURRENCY * len(kills)

    copies = sum(len(c) for c in recs.values())
    print(
        f"seed {SEED}: kills (signal, when, s, exit, turns published, judge calls in flight) "
        f"{[(k['signal'], k['when'], k['after_s'], k['code'], k['published'], k['judge_in_flight']) for k in kills]}; "
        f"{len(want)} cheap records expected, {len(recs)} distinct ids seen, {copies - len(recs)} redelivered "
        f"copies ({usage_copies} LLM score copies re-run from the cache); judge calls "
        f"{len(judge_server.requests)} for {distinct} distinct prompts ({repeats} repeats, "
        f"{len(completed)} completed before a kill, 0 of them paid again)"
    )


def test_judge_agent_acks_in_offset_order_when_jobs_finish_out_of_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs of one partition finish in reverse order; Faust must see the acks in offset order, each only
    after every earlier job finished (else Faust 0.15.3 commits past an unfinished job)."""
    from types import SimpleNamespace

    import streams._faust.judge_agent as judging
    from scorers.judges import JudgeConfig, JudgeTier, turn_job

    conv = synthetic(1, 12, prefix="order")[0]
    jobs = [turn_job(ex) for ex in exchanges_of(conv)]  # 6 jobs, offsets 0..5
    finished: list[int] = []
    acked: list[tuple[int, list[int]]] = []

    async def run_job(tier, job) -> list:
        await asyncio.sleep(0.01 * (len(jobs) - job.turn_index // 2))  # later offsets finish first
        finished.append(job.turn_index // 2)
        return []

    class Stream:
        def noack(self) -> Stream:
            return self

        async def events(self):
            for off, job in enumerate(jobs):
                yield SimpleNamespace(
                    message=SimpleNamespace(topic="jobs", partition=0, offset=off, value=job.model_dump_json().encode())
                )
            while agent._tasks:
                await asyncio.sleep(0.01)

        async def ack(self, event) -> None:
            acked.append((event.message.offset, list(finished)))

    async def deliver(outputs) -> None:
        return None

    monkeypatch.setattr(judging, "run_job", run_job)
    agent = judging.JudgeAgent(SimpleNamespace(), JudgeTier(JudgeConfig()), max_in_flight=16)
    monkeypatch.setattr(agent, "_deliver", deliver)
    asyncio.run(agent.consume(Stream()))
    assert finished == [5, 4, 3, 2, 1, 0]
    assert [off for off, _ in acked] == [0, 1, 2, 3, 4, 5]
    # No ack before its job and every earlier one finished.
    assert all(set(range(off + 1)) <= set(done) for off, done in acked)
