"""The LLM crisis screen (issue #12): possible-risk and uncovered user turns get a second opinion through
the judge tier; it can raise or confirm an alert, never withdraw one, and a failure is a judge ERROR."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
import pytest
from test_judge_client import config

import scorers
from attune.testing import FakeJudgeServer
from schemas import Conversation, JudgeJob, Message, SafetyAlert, TurnJudgment, decode_output
from schemas.topics import JUDGE_JOBS, TURNS
from scorers.judges import JudgeTier, run_job
from streams import DictStore, Inbound, TurnProcessor
from streams.judging import JobEmitter


def _model_only_example() -> str:
    """A dev-split sealed item that only the model flags (severity possible): what the screen is for.
    Chosen at run time so the tests follow the shipped model."""
    import json
    from pathlib import Path

    from test_crisis_detection import _split

    path = Path(__file__).parent / "data" / "crisis_eval" / "items.jsonl"
    ev = scorers.Evaluator()
    for line in path.read_text().splitlines():
        text = json.loads(line)["text"]
        if _split(text) != "dev":
            continue  # test split: never used here
        res = ev.on_user_turn("probe", 0, text)
        if res.detector == "model" and res.covered and len(text) < 120:
            return text
    raise AssertionError("no model-only item on dev: the model adds nothing over the rules")


POSSIBLE = _model_only_example()


@pytest.fixture
async def srv() -> AsyncIterator[FakeJudgeServer]:
    async with FakeJudgeServer() as server:
        yield server


def test_the_example_is_model_only() -> None:
    res = scorers.Evaluator().on_user_turn("c", 0, POSSIBLE)
    assert res.detector == "model" and not res.crisis


async def test_screen_raises_an_alert_of_its_own(srv: FakeJudgeServer) -> None:
    srv.answer(POSSIBLE, {"risk": "critical", "cssrs_category": "plan", "evidence": "the plan"})
    async with JudgeTier(config(srv)) as tier:
        recs = await tier.screen_user_turn("c1", 4, POSSIBLE, [Message(role="user", text="i'm done")])
    judgment = next(r for r in recs if isinstance(r, TurnJudgment))
    alert = next(r for r in recs if isinstance(r, SafetyAlert))
    assert judgment.metric == "crisis_screen" and judgment.status == "ok" and judgment.turn_index == 4
    assert alert.alert_type == "crisis_disclosure" and alert.detector == "llm" and alert.severity == "critical"
    assert alert.cssrs_category == "plan" and alert.source == "fake:judge-1"
    inline = scorers.Evaluator().on_user_turn("c1", 4, POSSIBLE).alerts[0]
    assert alert.alert_id != inline.alert_id  # a record of its own: it cannot replace the inline alert
    assert POSSIBLE in srv.requests[-1].user  # the judge was shown the turn


@pytest.mark.parametrize("risk", ["none", "possible"])
async def test_a_lenient_screen_withdraws_nothing(srv: FakeJudgeServer, risk: str) -> None:
    srv.answer(POSSIBLE, {"risk": risk, "cssrs_category": "none", "evidence": ""})
    async with JudgeTier(config(srv)) as tier:
        recs = await tier.screen_user_turn("c1", 4, POSSIBLE)
    assert [type(r) for r in recs] == [TurnJudgment]  # a judgment only: no alert, no all-clear record
    assert recs[0].details["risk"] == risk


async def test_screen_failure_is_an_error_not_an_alert(srv: FakeJudgeServer) -> None:
    srv.inject("500", times=10)
    async with JudgeTier(config(srv, max_retries=1)) as tier:
        recs = await tier.screen_user_turn("c1", 4, POSSIBLE)
    assert len(recs) == 1 and isinstance(recs[0], TurnJudgment)
    assert recs[0].status == "error" and recs[0].error


async def test_stream_emits_screen_jobs_for_possible_and_uncovered_turns(srv: FakeJudgeServer) -> None:
    srv.answer(POSSIBLE, {"risk": "high", "cssrs_category": "active_ideation", "evidence": "bridge"})
    async with JudgeTier(config(srv)) as tier:
        emitter = JobEmitter(tier)
        proc = TurnProcessor(scorers.Evaluator(), DictStore(), user_hooks=[emitter.on_user])
        turns = [
            {"conversation_id": "s", "turn_index": 0, "role": "user", "text": "hi, rough week"},
            {"conversation_id": "s", "turn_index": 1, "role": "assistant", "text": "I'm sorry. What happened?"},
            {"conversation_id": "s", "turn_index": 2, "role": "user", "text": POSSIBLE},
            {"conversation_id": "s", "turn_index": 3, "role": "user", "text": "quiero morir, ya no aguanto más"},
            {"conversation_id": "s", "turn_index": 4, "role": "user", "text": "I want to kill myself"},
        ]
        items = [Inbound(TURNS.name, 0, i, b"s", orjson.dumps(t)) for i, t in enumerate(turns)]
        res = proc.process(items, 1000.0)
        jobs = [JudgeJob.model_validate_json(o.value) for o in res.outputs if o.topic == JUDGE_JOBS.name]
        # the model-only turn and the Spanish one; the rule finding needs no second opinion
        assert sorted(j.turn_index for j in jobs) == [2, 3]
        assert all(j.job_type == "crisis_screen" for j in jobs)
        first = next(j for j in jobs if j.turn_index == 2)
        assert [m.text for m in first.messages] == ["hi, rough week", "I'm sorry. What happened?", POSSIBLE]
        recs = await run_job(tier, first)
    assert any(isinstance(r, SafetyAlert) and r.detector == "llm" for r in recs)
    assert any(isinstance(r, TurnJudgment) and r.metric == "crisis_screen" for r in recs)
    for r in recs:
        decode_output(r.model_dump_json().encode())


async def test_batch_screens_possible_turns(srv: FakeJudgeServer) -> None:
    from attune.batch import _screen_jobs

    srv.answer(POSSIBLE, {"risk": "high", "cssrs_category": "wish_dead", "evidence": "bridge"})
    conv = Conversation.model_validate(
        {
            "conversation_id": "b",
            "turns": [
                {"role": "user", "text": POSSIBLE},
                {"role": "assistant", "text": "Oh, what's at the bridge?"},
                {"role": "user", "text": "I want to kill myself"},
                {"role": "assistant", "text": "I'm here. Please call 988 now."},
            ],
        }
    )
    records = scorers.evaluate_conversation(conv)
    jobs = _screen_jobs(conv, records)
    assert [j.turn_index for j in jobs] == [0]  # only the model-only turn
    async with JudgeTier(config(srv)) as tier:
        out = await run_job(tier, jobs[0])
    assert any(isinstance(r, SafetyAlert) and r.detector == "llm" and r.turn_index == 0 for r in out)


def _danger_model_only_example() -> str:
    """A danger set dev-split item only the danger model flags (possible): the screen now names this risk too."""
    import hashlib
    import json
    from pathlib import Path

    path = Path(__file__).parent / "data" / "danger_eval" / "items.jsonl"
    ev = scorers.Evaluator()
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if int(hashlib.sha256(("danger-eval-v1:" + d["text"]).encode()).hexdigest(), 16) % 2:
            continue  # test split: never used here
        res = ev.on_user_turn("probe", 0, d["text"])
        if d["label"] == "danger" and res.detector == "model" and not res.crisis:
            return str(d["text"])
    raise AssertionError("no danger-model-only item on the danger set's dev split")


async def test_the_screen_names_danger_from_another_person(srv: FakeJudgeServer) -> None:
    text = _danger_model_only_example()
    res = scorers.Evaluator().on_user_turn("d", 2, text)
    assert "danger_from_others" in res.alerts[0].categories and res.alerts[0].severity == "possible"
    srv.answer(text, {"risk": "critical", "cssrs_category": "danger_from_others", "evidence": text[:40]})
    async with JudgeTier(config(srv)) as tier:
        emitter = JobEmitter(tier)
        proc = TurnProcessor(scorers.Evaluator(), DictStore(), user_hooks=[emitter.on_user])
        turn = {"conversation_id": "d", "turn_index": 2, "role": "user", "text": text}
        out = proc.process([Inbound(TURNS.name, 0, 0, b"d", orjson.dumps(turn))], 1000.0).outputs
        jobs = [JudgeJob.model_validate_json(o.value) for o in out if o.topic == JUDGE_JOBS.name]
        assert [j.job_type for j in jobs] == ["crisis_screen"]  # the danger model's possible alert is screened
        recs = await run_job(tier, jobs[0])
    alert = next(r for r in recs if isinstance(r, SafetyAlert))
    assert alert.severity == "critical" and alert.cssrs_category == "danger_from_others" and alert.detector == "llm"
    assert alert.rubric.version == "1.2"
    shown = " ".join((srv.requests[-1].system + " " + srv.requests[-1].user).split())
    assert "danger to the user from another person" in shown and '"danger_from_others"' in shown  # prompt, schema
