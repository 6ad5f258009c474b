"""The learned empathy signal (issue #16): weights file, the shared stage logic, batch, and the stream stage."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")  # the `embeddings` extra; CI installs it

from test_crisis_second_look import CONFIRMED, QUIET, RAISED, quiet_conversation  # turns the second look flags

from schemas import (
    Conversation,
    ConversationEnd,
    ConversationReplay,
    Message,
    SafetyAlert,
    Turn,
    TurnModelScore,
    decode_output,
)
from schemas.topics import TURN_MODEL_SCORES
from scorers.empathy_model import COMPONENTS, EmpathyModel, ModelFileError, ModelStage, conversation_inputs

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "scorers" / "empathy_model" / "weights.json"


@pytest.fixture(scope="module")
def model() -> EmpathyModel:
    return EmpathyModel.load()


def _turn(cid: str, i: int, role: str, text: str, **kw: object) -> Turn:
    return Turn(conversation_id=cid, turn_index=i, role=role, text=text, **kw)  # type: ignore[arg-type]


# -- the weights file -----------------------------------------------------------------------------------


def test_shipped_weights_name_their_model_data_and_licences(model: EmpathyModel) -> None:
    w = json.loads(WEIGHTS.read_text())
    assert model.tag == f"{w['id']}@{w['version']}"
    assert set(w["heads"]) == {"empathy", *COMPONENTS}
    sources = w["training"]["sources"]
    assert sources and all(s["licence"] == "MIT" for s in sources)  # nothing non-commercial in shipped weights
    for s in sources:
        if s["source"].startswith("tests/"):  # the writers' files in the repo are the ones trained on
            assert hashlib.sha256((ROOT / s["source"]).read_bytes()).hexdigest() == s["sha256"], s["source"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda w: w.pop("heads"), "lacks"),
        (lambda w: w["heads"].pop("exploration"), "no head"),
        (lambda w: w["heads"]["empathy"].update(coef=[0.0]), "disagree"),
        (lambda w: w.update(features="tf-idf"), "unknown feature kind"),
    ],
)
def test_a_broken_weights_file_is_a_clear_error(tmp_path: Path, change, message: str) -> None:
    w = json.loads(WEIGHTS.read_text())
    change(w)
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w))
    with pytest.raises(ModelFileError, match=message):
        EmpathyModel.load(path).score(["hello"], ["hi"])


def test_weights_for_another_embedder_are_refused(tmp_path: Path) -> None:
    w = json.loads(WEIGHTS.read_text())
    w["embedder"] = "all-mpnet-base-v2"
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w))
    with pytest.raises(ModelFileError, match="embedder"):
        EmpathyModel.load(path).score(["hello"], ["hi"])


# -- what it says ---------------------------------------------------------------------------------------

SEEKER = "My dad was diagnosed with cancer last week and I can't focus on anything, I just keep crying at work."
WARM = (
    "I'm so sorry, that is a huge shock and it makes sense that you can't focus. It sounds like you're "
    "carrying a lot of fear for him. How are you holding up when you get home in the evenings?"
)
COLD = "Focus techniques: make a to-do list, use a timer, and avoid your phone. Productivity matters at work."


def test_an_attuned_reply_reads_as_more_empathetic_than_a_cold_one(model: EmpathyModel) -> None:
    warm, cold = model.score([WARM, COLD], [SEEKER, SEEKER])
    assert warm.empathy > cold.empathy + 0.5
    assert warm.components["exploration"] > cold.components["exploration"]
    for e in (warm, cold):
        assert 1.0 <= e.empathy <= 5.0
        assert all(0.0 <= v <= 2.0 for v in e.components.values())


def test_scores_are_deterministic_and_independent_of_the_batch(model: EmpathyModel) -> None:
    alone = model.score([WARM], [SEEKER])[0]
    batched = model.score([COLD, WARM, "ok"], [SEEKER, SEEKER, None])[1]
    assert alone.empathy == pytest.approx(batched.empathy, abs=1e-3)  # padding must not change a row


def test_predict_clips_to_the_scales(model: EmpathyModel) -> None:
    dims = model._coef["empathy"].shape[0]
    big = np.full((1, dims), 100.0, dtype=np.float32)
    (e,) = model.predict(big)
    assert e.empathy in (1.0, 5.0)
    assert all(v in (0.0, 2.0) for v in e.components.values())


# -- the stage logic the stream and batch share -------------------------------------------------------


def test_the_stage_reads_each_reply_with_the_latest_earlier_user_turn(model: EmpathyModel) -> None:
    stage = ModelStage(model)
    assert stage.feed(_turn("c", 0, "user", "first")) is None
    assert stage.feed(_turn("c", 2, "user", "second")) is None
    late = stage.feed(_turn("c", 1, "user", "late, older"))  # an older user turn arriving late
    assert late is None
    inp = stage.feed(_turn("c", 3, "assistant", "reply"))
    assert inp is not None and (inp.seeker, inp.seeker_turn_index) == ("second", 2)
    first = stage.feed(_turn("d", 0, "assistant", "hello, how can I help?"))
    assert first is not None and first.seeker is None and first.seeker_turn_index is None
    stage.feed(ConversationEnd(conversation_id="c"))
    after = stage.feed(_turn("c", 5, "assistant", "again"))
    assert after is not None and after.seeker is None  # the end forgot it
    stage.feed(_turn("d", 2, "user", "before the replay"))
    assert stage.feed(ConversationReplay(conversation_id="d")) is None
    replayed = stage.feed(_turn("d", 0, "assistant", "hello, how can I help?"))
    assert replayed is not None and replayed.seeker is None  # a replay forgets it too


def test_the_stage_memory_is_bounded_and_counts_what_it_forgot(model: EmpathyModel) -> None:
    stage = ModelStage(model, max_conversations=3)
    for i in range(5):
        stage.feed(_turn(f"c{i}", 0, "user", "hi"))
    assert len(stage) == 3 and stage.forgotten == 2
    assert stage.feed(_turn("c0", 1, "assistant", "x")).seeker is None  # type: ignore[union-attr]
    assert stage.feed(_turn("c4", 1, "assistant", "x")).seeker == "hi"  # type: ignore[union-attr]
    stage.feed(_turn("c4", 2, "user", "bye", end_of_conversation=True))
    assert len(stage) == 2


def test_records_carry_model_version_metadata_and_an_id_that_depends_on_the_context(model: EmpathyModel) -> None:
    stage = ModelStage(model)
    conv = Conversation(
        conversation_id="m1",
        turns=[Message(role="user", text=SEEKER), Message(role="assistant", text=WARM)],
        metadata={"tenant": "acme"},
    )
    (with_ctx,) = stage.score(conversation_inputs(stage, [conv]))
    assert isinstance(with_ctx, TurnModelScore)
    assert with_ctx.rubric.tag == model.tag and with_ctx.embedder == model.embedder_id
    assert with_ctx.metadata == {"tenant": "acme"} and with_ctx.seeker_turn_index == 0
    assert set(with_ctx.components) == set(COMPONENTS)
    bare = stage.feed(_turn("m1", 1, "assistant", WARM))
    (without,) = stage.score([bare])  # type: ignore[list-item]
    assert without.seeker_turn_index is None and without.record_id != with_ctx.record_id
    assert decode_output(with_ctx.model_dump_json().encode()) == with_ctx


def test_batch_evaluate_writes_one_model_score_per_assistant_turn(tmp_path: Path) -> None:
    convs = [
        Conversation(
            conversation_id=f"b{i}",
            turns=[Message(role="user", text=SEEKER), Message(role="assistant", text=WARM if i else COLD)] * 2,
        )
        for i in range(3)
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(c.model_dump_json() + "\n" for c in convs))
    out = tmp_path / "out.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "attune", "evaluate", str(src), "--out", str(out), "--empathy-model", "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    recs = [decode_output(line) for line in out.read_bytes().splitlines()]
    model_recs = [r for r in recs if r.kind == "turn_model_score"]
    assert sorted((r.conversation_id, r.turn_index) for r in model_recs) == [
        (f"b{i}", t) for i in range(3) for t in (1, 3)
    ]
    assert all(r.seeker_turn_index == r.turn_index - 1 for r in model_recs)
    by = {(r.conversation_id, r.turn_index): r.empathy for r in model_recs}
    assert by[("b1", 1)] > by[("b0", 1)]


# -- the stage's memory for crisis-screen jobs -------------------------------------------------------------


def test_recent_messages_keep_the_last_few_before_a_turn_bounded_and_forget_ended_conversations() -> None:
    from streams.model_stage import RecentMessages

    recent = RecentMessages(keep=3, max_conversations=2)
    for i in range(5):
        recent.feed(_turn("a", i, "user" if i % 2 == 0 else "assistant", f"a{i}"))
    assert [m.text for m in recent.before(_turn("a", 5, "user", "now"))] == ["a2", "a3", "a4"]
    assert [m.text for m in recent.before(_turn("a", 3, "user", "late"))] == ["a2"]  # only earlier turns
    recent.feed(_turn("b", 0, "user", "b0"))
    recent.feed(_turn("c", 0, "user", "c0"))  # a third conversation: the least recently active one goes
    assert recent.before(_turn("a", 9, "user", "x")) == [] and recent.forgotten == 1 and len(recent) == 2
    recent.feed(ConversationEnd(conversation_id="b"))
    recent.feed(_turn("c", 1, "user", "bye", end_of_conversation=True))
    assert len(recent) == 0
    with pytest.raises(ValueError):
        RecentMessages(keep=3, max_conversations=0)


# -- the stream stage ----------------------------------------------------------------------------------


@pytest.mark.broker
@pytest.mark.slow
def test_the_stream_stage_scores_every_reply_as_batch_does_and_resumes_after_a_restart(broker: object) -> None:
    """Empathy scores of every reply and the crisis second look's alerts, as batch computes them."""
    from schemas.topics import SAFETY_ALERTS
    from scorers.safety import SecondLook
    from streams.io import consume, publish, schedule
    from streams.model_stage import run_stage

    url = broker.url  # type: ignore[attr-defined]
    convs = [
        Conversation(
            conversation_id=f"s{i}",
            turns=[
                Message(role="user", text=f"{SEEKER} ({i})"),
                Message(role="assistant", text=WARM if i % 2 else COLD),
                Message(role="user", text=QUIET if i in (2, 9) else "thanks, it helps to say it"),
                Message(role="assistant", text="Of course. What would help most tonight?"),
            ],
        )
        for i in range(12)
    ]
    stage = ModelStage(EmpathyModel.load())
    want = {r.record_id: r for r in stage.score(conversation_inputs(stage, convs))}
    look = SecondLook.load()
    candidates = [look.feed(t) for c in convs for t in c.as_turns()]
    want_alerts = {a.alert_id: a for a in look.alerts([x for x in candidates if x is not None])}
    assert len(want_alerts) == 2

    async def scenario() -> tuple[dict[str, TurnModelScore], dict[str, SafetyAlert]]:
        await publish(url, "attune.turns", schedule(convs[:6]), profile="tansu")
        first = await run_stage(url, profile="tansu", batch_max=8, idle_timeout=3.0)
        assert first.scored == 12 and first.crisis_alerts == 1
        await publish(url, "attune.turns", schedule(convs[6:]), profile="tansu")
        second = await run_stage(url, profile="tansu", batch_max=8, idle_timeout=3.0)
        assert second.scored == 12  # resumed at the committed offset: nothing scored twice, nothing skipped
        assert second.crisis_alerts == 1
        got: dict[str, TurnModelScore] = {}
        async for _t, _k, value, _at in consume(url, [TURN_MODEL_SCORES.name], idle_timeout=2.0):
            rec = decode_output(value)
            assert isinstance(rec, TurnModelScore)
            assert rec.record_id not in got
            got[rec.record_id] = rec
        alerts: dict[str, SafetyAlert] = {}
        async for _t, _k, value, _at in consume(url, [SAFETY_ALERTS.name], idle_timeout=2.0):
            alert = decode_output(value)
            assert isinstance(alert, SafetyAlert) and alert.alert_id not in alerts
            alerts[alert.alert_id] = alert
        return got, alerts

    got, alerts = asyncio.run(scenario())
    assert set(alerts) == set(want_alerts)
    for aid, alert in alerts.items():
        assert alert.model_dump(exclude={"detected_at"}) == want_alerts[aid].model_dump(exclude={"detected_at"})
    assert set(got) == set(want)
    for rid, rec in got.items():
        assert rec.model_dump(exclude={"produced_at"}) == want[rid].model_dump(exclude={"produced_at"})


@pytest.mark.broker
@pytest.mark.slow
def test_with_crisis_screen_the_stage_sends_the_screen_jobs_batch_builds(broker: object) -> None:
    """``--crisis-screen``: each possible second-look alert's turn becomes the crisis-screen job that batch builds
    for it (issue #12, item 5), with the same earlier messages, on the worker's judge-jobs topic. A high one (an
    anchor confirmed on a turn with no inline alert, or the inline model's possible alert raised) gets none: as in
    batch, an anchor needs no opinion, and the worker screens the inline possible alert itself."""
    from attune.batch import _screen_jobs, second_look_alerts
    from schemas import JudgeJob
    from schemas.topics import JUDGE_JOBS
    from scorers import evaluate_conversation
    from scorers.safety import SecondLook
    from streams.io import consume, publish, schedule
    from streams.model_stage import run_stage

    url = broker.url  # type: ignore[attr-defined]
    last = {1: QUIET, 4: QUIET, 2: CONFIRMED, 5: RAISED}
    convs = [
        Conversation(
            conversation_id=f"j{i}",
            metadata={"team": "t"},
            turns=[
                Message(role="user", text=f"{SEEKER} ({i})"),
                Message(role="assistant", text=WARM),
                Message(role="user", text="thanks, it helps to say it"),
                Message(role="assistant", text="Of course. What would help most tonight?"),
                # the other conversations end on a reply no tier flags ("I think I'll sleep now" is a known
                # `possible` false alarm of model 1.10: docs/safety-detection.md, "What falls short")
                Message(role="user", text=last.get(i, "Good night, talk tomorrow")),
            ],
        )
        for i in range(6)
    ]
    look = SecondLook.load()
    want: dict[str, JudgeJob] = {}
    inline: list[int] = []
    for conv in convs:
        records = [*evaluate_conversation(conv, verdict=False), *second_look_alerts(look, conv)]
        jobs = _screen_jobs(conv, records)
        want.update({j.job_id: j for j in jobs if j.messages[-1].text == QUIET})
        inline += [j.turn_index for j in jobs if j.messages[-1].text == RAISED]  # the worker's job, not the stage's
    assert len(want) == 2 and inline == [4]

    async def scenario() -> dict[str, JudgeJob]:
        await publish(url, "attune.turns", schedule(convs), profile="tansu")
        stats = await run_stage(url, profile="tansu", batch_max=7, idle_timeout=3.0, crisis_screen=True)
        assert (stats.crisis_alerts, stats.screen_jobs) == (4, 2)
        got: dict[str, JudgeJob] = {}
        async for _t, _k, value, _at in consume(url, [JUDGE_JOBS.name], idle_timeout=2.0):
            job = JudgeJob.model_validate_json(value)
            assert job.job_id not in got
            got[job.job_id] = job
        return got

    got = asyncio.run(scenario())
    assert set(got) == set(want)
    for jid, job in got.items():
        assert job.model_dump(exclude={"created_at"}) == want[jid].model_dump(exclude={"created_at"})
        assert [m.text for m in job.messages][-1] == QUIET and len(job.messages) == 5  # 4 earlier + the turn


@pytest.mark.broker
@pytest.mark.slow
def test_the_worker_judge_agent_screens_what_the_stage_sends(broker: object, start_worker, tmp_path: Path) -> None:
    """End to end on the embedded broker: a worker with a judge, and ``attune model-stage --crisis-screen``
    beside it. The turn only the second look flags gets the worker's LLM crisis screen, whose critical answer
    raises an alert of its own; the second look's ``possible`` alert stands (issue #12, item 5)."""
    from attune.testing.fake_judge import FakeJudgeServer
    from schemas import TurnJudgment
    from schemas.topics import SAFETY_ALERTS, TURN_JUDGMENTS
    from streams.io import consume, publish, schedule
    from streams.model_stage import run_stage

    url = broker.url  # type: ignore[attr-defined]
    conv = quiet_conversation("e2e")
    with FakeJudgeServer.in_thread() as srv:
        srv.answer(f'"user_message": "{QUIET}"', {"risk": "critical", "cssrs_category": "nssi", "evidence": "cut"})
        cfg = tmp_path / "judges.toml"
        cfg.write_text(
            "deadline_s = 10\nbackoff_base_s = 0.01\nbackoff_max_s = 0.05\n[sampling]\nturn_rate = 0.0\n"
            f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{srv.openai_base_url}"\n'
        )
        worker = start_worker("--judge", "fake:judge-1", "--judge-config", str(cfg), "--datadir", str(tmp_path / "d"))
        worker.wait_ready(60)

        async def scenario() -> tuple[list[TurnJudgment], list[SafetyAlert]]:
            await publish(url, "attune.turns", schedule([conv]), profile="tansu")
            stats = await run_stage(url, profile="tansu", batch_max=8, idle_timeout=3.0, crisis_screen=True)
            assert (stats.crisis_alerts, stats.screen_jobs) == (1, 1)
            judgments: list[TurnJudgment] = []
            alerts: list[SafetyAlert] = []
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            loop.call_later(60, stop.set)
            async for _t, _k, value, _at in consume(url, [TURN_JUDGMENTS.name, SAFETY_ALERTS.name], stop=stop):
                rec = decode_output(value)
                if isinstance(rec, TurnJudgment) and rec.metric == "crisis_screen":
                    judgments.append(rec)
                elif isinstance(rec, SafetyAlert) and rec.conversation_id == "e2e":
                    alerts.append(rec)
                if judgments and any(a.detector == "llm" for a in alerts):
                    stop.set()
            return judgments, alerts

        judgments, alerts = asyncio.run(scenario())
    assert [(j.turn_index, j.status, j.details["risk"]) for j in judgments] == [(2, "ok", "critical")], worker.tail()
    by_detector = {a.detector: a for a in alerts if a.alert_type == "crisis_disclosure"}
    assert by_detector["model"].severity == "possible" and "second_look" in by_detector["model"].categories
    assert by_detector["llm"].severity == "critical" and by_detector["llm"].turn_index == 2


def test_with_crisis_screen_the_stage_waits_for_the_worker_to_create_the_jobs_topic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stage never creates the judge-jobs topic (the worker does, with its retention); it waits for it,
    and a stop while waiting ends the stage cleanly."""
    from schemas.topics import JUDGE_JOBS
    from streams import model_stage

    listed: list[set[str]] = [set(), set(), {JUDGE_JOBS.name}]
    calls = 0

    async def topics(_broker: str) -> set[str]:
        nonlocal calls
        calls += 1
        return listed[min(calls, len(listed)) - 1]

    monkeypatch.setattr(model_stage, "broker_topics", topics)

    async def go() -> tuple[bool, bool]:
        found = await model_stage._wait_for_topic("kafka://x:1", JUDGE_JOBS.name, asyncio.Event(), every=0.01)
        stop = asyncio.Event()
        stop.set()
        listed[:] = [set()]
        stopped = await model_stage._wait_for_topic("kafka://x:1", JUDGE_JOBS.name, stop, every=0.01)
        return found, stopped

    assert asyncio.run(go()) == (True, False)
    assert calls == 3


def test_without_the_embeddings_extra_the_model_commands_exit_2_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from attune.cli import main

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime now raises ImportError
    src = tmp_path / "in.jsonl"
    src.write_text(Conversation(conversation_id="x", turns=[Message(role="user", text="hi")]).model_dump_json() + "\n")
    assert main(["evaluate", str(src), "--out", str(tmp_path / "o.jsonl"), "--empathy-model", "--quiet"]) == 2
    assert main(["model-stage", "--broker", "kafka://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("attune[embeddings]") == 2


def test_without_the_embeddings_extra_evaluate_says_the_second_look_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The crisis second look is on by default in batch; without its extra the run goes on with the inline
    tier and says so (never off silently); asking for it by name makes the missing extra an error."""
    from attune.cli import main

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    src = tmp_path / "in.jsonl"
    src.write_text(Conversation(conversation_id="x", turns=[Message(role="user", text="hi")]).model_dump_json() + "\n")
    assert main(["evaluate", str(src), "--out", str(tmp_path / "o.jsonl")]) == 0
    said = capsys.readouterr()
    assert "warning:" in said.err and "inline tier only" in said.err and "attune[embeddings]" in said.err
    assert "crisis second look: off (" in said.out
    assert main(["evaluate", str(src), "--out", str(tmp_path / "o.jsonl"), "--second-look", "--quiet"]) == 2
    assert "attune[embeddings]" in capsys.readouterr().err
    assert main(["evaluate", str(src), "--out", str(tmp_path / "o.jsonl"), "--no-second-look", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
