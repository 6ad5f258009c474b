"""LLM judges in the stream (streams.judging): jobs from the turn agent, a concurrent judge agent, records back.

The broker tests run a real embedded broker, ``attune worker --judge`` subprocesses and the fake judge
server on its own thread in this process (a real HTTP server on 127.0.0.1, through the real OpenAI SDK).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _stream_helpers import synthetic

from attune.testing.fake_judge import FakeJudgeServer
from schemas import CRITERIA, Conversation, JudgeJob, Message, decode_output
from schemas.topics import (
    CONVERSATION_SCORES,
    CONVERSATION_VERDICTS,
    JUDGE_JOBS,
    SAFETY_ALERTS,
    TURN_JUDGMENTS,
    TURN_SCORES,
    TURNS,
)
from scorers import Evaluator, exchanges_of
from scorers.judges import JudgeTier, exchange_of, load_config, run_job, turn_job
from streams import DictStore, Inbound, TurnProcessor
from streams.io import consume, publish, schedule
from streams.judging import JobEmitter

JUDGE = "fake:judge-1"
OUT_TOPICS = [
    TURN_SCORES.name,
    TURN_JUDGMENTS.name,
    CONVERSATION_SCORES.name,
    CONVERSATION_VERDICTS.name,
    SAFETY_ALERTS.name,
]


# -- fixtures ---------------------------------------------------------------------------------------------
@pytest.fixture
def server() -> Iterator[FakeJudgeServer]:
    """The fake judge on its own event-loop thread, so worker subprocesses and this test can reach it."""
    with FakeJudgeServer.in_thread() as srv:
        yield srv


def judge_config(tmp_path: Path, srv: FakeJudgeServer, *, deadline: float = 5.0, concurrency: int = 64) -> Path:
    cfg = tmp_path / "judges.toml"
    cfg.write_text(
        f"deadline_s = {deadline}\nbackoff_base_s = 0.01\nbackoff_max_s = 0.05\nmax_concurrency = {concurrency}\n"
        "[sampling]\nturn_rate = 1.0\n"
        f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{srv.openai_base_url}"\nmax_retries = 1\n'
    )
    return cfg


def worker_args(tmp_path: Path, cfg: Path) -> list[str]:
    return [
        "--judge",
        JUDGE,
        "--judge-config",
        str(cfg),
        "--datadir",
        str(tmp_path / "data"),
        "--inactivity-timeout",
        "60",
    ]


def convs(n: int, turns: int = 4, prefix: str = "j") -> list[Conversation]:
    return synthetic(n, turns, prefix=prefix)


def assistant_turns(cs: list[Conversation]) -> set[tuple[str, int]]:
    return {(ex.conversation_id, ex.turn_index) for c in cs for ex in exchanges_of(c)}


class Collected:
    """Output records by id (copies kept) and the arrival time of each cheap turn score."""

    def __init__(self) -> None:
        self.by_id: dict[str, list] = {}
        self.turn_score_at: dict[tuple[str, int], float] = {}

    def llm_scores(self) -> dict[str, list]:
        out: dict[str, list] = {}
        for copies in self.by_id.values():
            r = copies[0]
            if r.kind == "conversation_score" and r.tier == "llm":
                out.setdefault(r.conversation_id, []).append(r)
        return out

    def judged_turns(self) -> set[tuple[str, int]]:
        return {(c[0].conversation_id, c[0].turn_index) for c in self.by_id.values() if c[0].kind == "turn_judgment"}

    def of_kind(self, kind: str) -> list:
        return [c[0] for c in self.by_id.values() if c[0].kind == kind]


async def collect(broker: str, until, timeout: float, into: Collected | None = None) -> Collected:
    got = into or Collected()
    stop = asyncio.Event()
    deadline = time.monotonic() + timeout

    async def run() -> None:
        async for _topic, _k, value, at in consume(broker, OUT_TOPICS, stop=stop):
            rec = decode_output(value)
            rid = rec.alert_id if rec.kind == "safety_alert" else rec.record_id
            got.by_id.setdefault(rid, []).append(rec)
            if rec.kind == "turn_score":
                got.turn_score_at.setdefault((rec.conversation_id, rec.turn_index), at)
            if until(got):
                stop.set()

    async def watchdog() -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        stop.set()

    await asyncio.gather(run(), watchdog())
    return got


#: A failed LLM safety gate is announced as judge_unsafe (a NO) or judge_error (no answer: infrastructure).
GATE_ALERT_TYPES = ("judge_unsafe", "judge_error")


def complete(cs: list[Conversation], *, gate_alerts: bool = False):
    """Done when every assistant turn is judged and every conversation has its LLM score; with
    ``gate_alerts``, also its safety-gate alert, which travels on another topic and can arrive later."""
    want_turns = assistant_turns(cs)
    ids = {c.conversation_id for c in cs}

    def done(got: Collected) -> bool:
        if not (want_turns <= got.judged_turns() and ids <= got.llm_scores().keys()):
            return False
        if not ids <= {v.conversation_id for v in got.of_kind("conversation_verdict")}:
            return False
        gated = {a.conversation_id for a in got.of_kind("safety_alert") if a.alert_type in GATE_ALERT_TYPES}
        return not gate_alerts or ids <= gated

    return done


# -- no broker ---------------------------------------------------------------------------------------------
def _tier(tmp_path: Path, srv: FakeJudgeServer | None = None, **override) -> JudgeTier:
    base = "http://127.0.0.1:9/v1" if srv is None else srv.openai_base_url
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{base}"\nmax_retries = 0\n')
    conf = load_config(cfg, override=JUDGE)
    if override:
        conf = conf.model_copy(update=override)
    return JudgeTier(conf)


def test_hooks_emit_sampled_turn_jobs_and_one_checklist_job(tmp_path: Path) -> None:
    from scorers.judges._config import SamplingConfig

    conv = synthetic(1, 6, prefix="h")[0]  # conversation 0 has a crisis disclosure at turn 2
    for rate, expect_turns in ((1.0, {1, 3, 5}), (0.0, {3})):  # rate 0: only the reply to the crisis turn
        tier = _tier(tmp_path, sampling=SamplingConfig(turn_rate=rate))
        em = JobEmitter(tier)
        proc = TurnProcessor(Evaluator(), DictStore(), close_hooks=[em.on_close], turn_hooks=[em.on_turn])
        items = [
            Inbound(TURNS.name, 0, i, conv.conversation_id.encode(), _encode(t)) for i, t in enumerate(conv.as_turns())
        ]
        res = proc.process(items, time.time())
        jobs = [JudgeJob.model_validate_json(o.value) for o in res.outputs if o.topic == JUDGE_JOBS.name]
        assert {j.turn_index for j in jobs if j.job_type == "turn"} == expect_turns
        checklists = [j for j in jobs if j.job_type == "checklist"]
        assert len(checklists) == 1 and [m.text for m in checklists[0].messages] == [t.text for t in conv.turns]
        assert all(o.key == conv.conversation_id.encode() for o in res.outputs if o.topic == JUDGE_JOBS.name)
        # Redelivery of the same turns to a fresh processor emits the same job ids.
        again = TurnProcessor(Evaluator(), DictStore(), close_hooks=[em.on_close], turn_hooks=[em.on_turn])
        ids2 = {
            JudgeJob.model_validate_json(o.value).job_id
            for o in again.process(items, time.time()).outputs
            if o.topic == JUDGE_JOBS.name
        }
        assert ids2 == {j.job_id for j in jobs}


def test_turn_job_shows_the_judge_what_batch_shows_it() -> None:
    from scorers.judges.metrics import TURN_METRICS

    conv = Conversation(
        conversation_id="long",
        turns=[Message(role="user", text="first worry")]
        + [Message(role="assistant", text=f"reply {i}") for i in range(9)],
    )
    for ex in exchanges_of(conv):
        back = exchange_of(JudgeJob.model_validate_json(turn_job(ex).model_dump_json()))
        assert (back.user_text, back.response, back.turn_index) == (ex.user_text, ex.response, ex.turn_index)
        assert TURN_METRICS["turn_rubric"].prompt(back).hash == TURN_METRICS["turn_rubric"].prompt(ex).hash


def test_batch_builds_the_jobs_the_stream_builds(tmp_path: Path) -> None:
    """One conversation through the stream's hooks and through ``attune evaluate``'s job building: the same
    turn, crisis-screen and checklist jobs (the checklist given the cheap tier's alerts, all the stream has
    at close). Each path's own: a checklist's close reason and cheap score, and batch's turn jobs carry all of
    a longer history (attune.batch)."""
    from attune.batch import _checklist_job, _screen_jobs, _turn_jobs
    from schemas import SafetyAlert
    from scorers import evaluate_conversation
    from scorers.judges._config import SamplingConfig

    texts = [
        "hi, rough week",
        "I'm sorry. What happened?",
        "quiero morir, ya no aguanto más",
        "Estoy aquí.",
        "I want to kill myself",
        "I'm here with you. Please call or text 988 now.",
    ]
    turns = [Message(role="user" if i % 2 == 0 else "assistant", text=t) for i, t in enumerate(texts)]
    conv = Conversation(conversation_id="same", turns=turns, metadata={"team": "a"})
    em = JobEmitter(_tier(tmp_path, sampling=SamplingConfig(turn_rate=1.0)))
    proc = TurnProcessor(
        Evaluator(), DictStore(), close_hooks=[em.on_close], turn_hooks=[em.on_turn], user_hooks=[em.on_user]
    )
    items = [Inbound(TURNS.name, 0, i, b"same", _encode(t)) for i, t in enumerate(conv.as_turns())]
    outputs = proc.process(items, time.time()).outputs
    streamed = [JudgeJob.model_validate_json(o.value) for o in outputs if o.topic == JUDGE_JOBS.name]
    records = evaluate_conversation(conv, Evaluator(), verdict=False)
    cheap_alerts = [r for r in records if isinstance(r, SafetyAlert)]
    batch = [*_turn_jobs(conv, None), *_screen_jobs(conv, records), _checklist_job(conv, records, cheap_alerts)]

    def shape(job: JudgeJob) -> dict:
        return job.model_dump(mode="json", exclude={"created_at", "close_reason", "cheap_score"})

    assert [j.job_type for j in batch] == ["turn"] * 3 + ["crisis_screen", "checklist"]  # the rule finding: none
    assert sorted(map(shape, batch), key=lambda d: d["job_id"]) == sorted(
        map(shape, streamed), key=lambda d: d["job_id"]
    )


def test_result_cache_survives_a_restart(tmp_path: Path) -> None:
    """The same checklist job on a new tier (a restarted worker) with the same SQLite path: zero calls."""
    from scorers.judges._config import CacheConfig

    conv = synthetic(1, 4, prefix="cache")[0]
    job = JudgeJob(
        job_id="x",
        job_type="checklist",
        conversation_id=conv.conversation_id,
        messages=conv.turns,
        close_reason="end_flag",
    )

    async def go() -> None:
        async with FakeJudgeServer() as srv:
            cache = CacheConfig(path=str(tmp_path / "cache.sqlite3"))
            first = await run_job(t1 := _tier(tmp_path, srv, cache=cache), job)
            await t1.close()
            assert srv.model_calls == 10 and first[0].usage.calls == 10
            second = await run_job(t2 := _tier(tmp_path, srv, cache=cache), job)
            await t2.close()
            assert srv.model_calls == 10, "a cached answer was paid for again"
            assert second[0].usage.cache_hits == 10 and second[0].usage.calls == 0
            assert second[0].answers == first[0].answers and second[0].record_id == first[0].record_id

    asyncio.run(go())


def _encode(turn) -> bytes:
    from schemas import encode

    return encode(turn)


# -- on a broker -------------------------------------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
def test_judgments_llm_scores_and_judge_alerts(broker, start_worker, server, tmp_path: Path) -> None:
    server.answer("Criterion CQ8 ", {"answer": "NO", "reasoning": "pinned: the reply encourages harm"})
    cs = convs(6)
    worker = start_worker(*worker_args(tmp_path, judge_config(tmp_path, server)))
    worker.wait_ready(60)
    asyncio.run(publish(broker.url, TURNS.name, schedule(cs), profile="tansu"))
    got = asyncio.run(collect(broker.url, complete(cs, gate_alerts=True), timeout=90))

    assert assistant_turns(cs) <= got.judged_turns()
    judgments = got.of_kind("turn_judgment")
    assert all(j.status == "ok" and j.judge == JUDGE and j.usage.input_tokens > 0 for j in judgments)
    scores = got.llm_scores()
    assert scores.keys() == {c.conversation_id for c in cs}
    assert all(len(v) == 1 for v in scores.values()), "more than one distinct LLM conversation_score id"
    for (s,) in scores.values():
        assert set(s.answers) == set(CRITERIA) and s.answers["CQ8"].answer == "NO"
        assert s.safety_gate_failed and not s.passed and s.usage.calls + s.usage.cache_hits == 10
        # The fake judge has no price: its calls cost "unknown" (null), never a fake $0.
        assert (s.usage.cost_usd is None) == (s.usage.calls > 0) and s.usage.input_tokens > 0
    judge_alerts = [a for a in got.of_kind("safety_alert") if a.alert_type == "judge_unsafe"]
    gate = [a for a in judge_alerts if a.turn_index is None]  # the checklist's safety gate, at close
    assert sorted(a.conversation_id for a in gate) == sorted(c.conversation_id for c in cs), (
        "gate alerts missing; the worker said:\n" + "\n".join(worker.lines[-60:])
    )
    assert all(a.categories == ["CQ8_NO"] and a.source == JUDGE for a in gate)
    # Turn alerts come from the (deterministic) rubric answers: exactly those with safety <= 2.
    unsafe = {(j.conversation_id, j.turn_index) for j in judgments if j.scores and (j.scores.safety or 5) <= 2}
    assert {(a.conversation_id, a.turn_index) for a in judge_alerts if a.turn_index is not None} == unsafe
    # Every call was made once: 2 assistant turns x 1 rubric call + 10 criteria (CP1, CP3 NA by seed).
    assert server.model_calls == len(cs) * (2 + 10)
    # One verdict per conversation, after the LLM checklist: both tiers, the judge's NO keeps the gate failed.
    verdicts = got.of_kind("conversation_verdict")
    assert sorted(v.conversation_id for v in verdicts) == sorted(c.conversation_id for c in cs)
    for v in verdicts:
        assert v.tiers == ["cheap", "llm"] and v.judge == JUDGE and v.judge_status == "ok"
        assert v.safety_gate_failed and not v.passed and v.answers["CQ8"].answer == "NO"
        assert scores[v.conversation_id][0].record_id in v.source_records


@pytest.mark.broker
@pytest.mark.slow
def test_judge_500s_are_errors_that_fail_the_gate(broker, start_worker, server, tmp_path: Path) -> None:
    server.inject("500", times=100_000)
    cs = convs(4)
    worker = start_worker(*worker_args(tmp_path, judge_config(tmp_path, server)))
    worker.wait_ready(60)
    asyncio.run(publish(broker.url, TURNS.name, schedule(cs), profile="tansu"))
    got = asyncio.run(collect(broker.url, complete(cs, gate_alerts=True), timeout=90))

    judgments = got.of_kind("turn_judgment")
    assert assistant_turns(cs) <= got.judged_turns()
    causes = {j.error for j in judgments}
    assert all(j.status == "error" and j.scores is None for j in judgments), causes
    assert all("500" in c or "circuit open" in c for c in causes) and any("500" in c for c in causes), causes
    for (s,) in got.llm_scores().values():
        assert all(a.answer == "ERROR" and a.error for c, a in s.answers.items() if c not in ("CP1", "CP3"))
        assert s.score < 0.8 and not s.passed and s.safety_gate_failed
    assert len(got.llm_scores()) == len(cs)
    # No answer is not a safety finding: an operations alert of severity info, never judge_unsafe (issue #13).
    assert not [a for a in got.of_kind("safety_alert") if a.alert_type == "judge_unsafe"]
    gate = [a for a in got.of_kind("safety_alert") if a.alert_type == "judge_error"]
    assert {a.conversation_id for a in gate} == {c.conversation_id for c in cs}
    assert {a.severity for a in gate} == {"info"}
    # The cheap tier is untouched: every turn score and the cheap checklist arrived.
    cheap = [s for s in got.of_kind("conversation_score") if s.tier == "cheap"]
    assert len(cheap) == len(cs) and len(got.of_kind("turn_score")) == len(assistant_turns(cs))


@pytest.mark.broker
@pytest.mark.slow
def test_cheap_latency_holds_while_the_judge_hangs(broker, start_worker, server, tmp_path: Path) -> None:
    """Every judge call hangs until the tier's deadline; turn scores must keep their normal latency."""
    server.inject("hang", times=100_000, hang_s=60)
    cs = convs(10, turns=8, prefix="lat")
    worker = start_worker(*worker_args(tmp_path, judge_config(tmp_path, server, deadline=6.0)))
    worker.wait_ready(60)
    sent: dict[tuple[str, int], float] = {}

    def on_sent(ev) -> None:
        sent[(ev.conversation_id, ev.turn_index)] = time.time()

    async def go() -> Collected:
        got = Collected()
        collecting = asyncio.create_task(collect(broker.url, complete(cs), timeout=60, into=got))
        await asyncio.sleep(1.0)
        # Paced traffic: 10 conversations x 8 turns over ~4 s; jobs pile up behind hanging calls meanwhile.
        await publish(broker.url, TURNS.name, schedule(cs, pace=0.5), profile="tansu", on_sent=on_sent)
        return await collecting

    got = asyncio.run(go())
    lat = sorted(got.turn_score_at[k] - sent[k] for k in assistant_turns(cs) if k in got.turn_score_at)
    assert len(lat) == len(assistant_turns(cs))
    p50, p99 = statistics.median(lat), lat[min(len(lat) - 1, round(0.99 * (len(lat) - 1)))]
    print(f"turn->score while the judge hangs: p50 {1000 * p50:.1f} ms, p99 {1000 * p99:.1f} ms, n={len(lat)}")
    assert p99 < 0.5, f"turn scores slowed by hanging judges: p50 {p50:.3f}s p99 {p99:.3f}s"
    # ... and the hanging calls end as ERROR at the deadline, failing the gate.
    assert server.model_calls > 0
    for (s,) in got.llm_scores().values():
        assert all(
            a.answer == "ERROR" and "deadline" in (a.error or "")
            for c, a in s.answers.items()
            if c not in ("CP1", "CP3")
        )
        assert s.safety_gate_failed and not s.passed
    assert all(j.status == "error" for j in got.of_kind("turn_judgment"))
    assert len(got.llm_scores()) == len(cs)


@pytest.mark.broker
@pytest.mark.slow
def test_sigkill_with_jobs_in_flight_redelivers_without_paying_twice(
    broker, start_worker, server, tmp_path: Path
) -> None:
    server.latency = 0.25
    cs = convs(8, prefix="kill")
    cfg = judge_config(tmp_path, server, concurrency=4)  # 8 x 14 calls at 4 in flight x 0.25 s: ~7 s of work
    args = worker_args(tmp_path, cfg)
    worker = start_worker(*args)
    worker.wait_ready(60)
    asyncio.run(publish(broker.url, TURNS.name, schedule(cs), profile="tansu"))
    total = len(cs) * (2 + 10)
    deadline = time.monotonic() + 60
    while server.model_calls < total // 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    killed_at = time.monotonic()
    worker.kill()
    before = list(server.requests)
    assert 0 < len(before) < total, "the kill must land while judge jobs are in flight"
    # Calls answered (latency elapsed, plus margin for the worker to store the reply) before the kill.
    completed = {r.system + r.user for r in before if r.at + server.latency + 0.3 < killed_at}
    assert completed

    restarted = start_worker(*args)
    restarted.wait_ready(60)
    got = asyncio.run(collect(broker.url, complete(cs), timeout=90))

    scores = got.llm_scores()
    assert assistant_turns(cs) <= got.judged_turns()
    assert scores.keys() == {c.conversation_id for c in cs}
    assert all(len(v) == 1 for v in scores.values())
    assert all(a.answer != "ERROR" for (s,) in scores.values() for a in s.answers.values())
    paid: dict[str, int] = {}
    for r in server.requests:
        paid[r.system + r.user] = paid.get(r.system + r.user, 0) + 1
    twice = [p[:80] for p in completed if paid[p] > 1]
    assert not twice, f"{len(twice)} calls completed before the kill were paid again: {twice[:2]}"
    # Only calls in flight at the kill (or answered in its last moments, before the worker stored the
    # reply) may be paid again, and only once more.
    recent = {r.system + r.user for r in before} - completed
    assert {p for p, n in paid.items() if n > 1} <= recent and max(paid.values()) <= 2
    assert len(paid) == total
    print(
        f"kill after {len(before)} calls ({len(completed)} completed, {len(recent)} in flight); "
        f"total calls {len(server.requests)} for {total} distinct prompts"
    )
