"""JudgeTier end to end against the fake judge: per-turn metrics and their records, sampling,
routing/config, local relevance embeddings, the batched checklist, and judge alerts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from test_judge_client import CONVERSATION, config

from attune.testing import FakeJudgeServer
from schemas import ConversationScore, Message, Persona, TurnContext, TurnJudgment
from scorers import Exchange
from scorers.judges import ALL_TURN_METRICS, JudgeConfig, JudgeTier, judge_alerts, load_config
from scorers.judges.metrics.relevance import cosine, shared_embedder

ROOT = Path(__file__).resolve().parents[1]
CTX = TurnContext(
    memory={"name": "Jason", "sleep_hours_avg": "5.5", "caffeine_intake": "high", "age": "41"},
    required_keys=["sleep_hours_avg", "caffeine_intake"],
    forbidden_keys=["age"],
    neutral_keys=["name"],
    emotions={"sadness": 0.6, "fear": 0.3, "neutral": 0.1},
    persona=Persona(openness=0.7, conscientiousness=0.3, extraversion=0.4, agreeableness=0.8, neuroticism=0.7),
)
EX = Exchange(
    conversation_id="conv-t",
    turn_index=3,
    user_text="I've been feeling low on energy lately. What should I do this week?",
    response="With about 5.5 hours of sleep and lots of coffee, tiredness makes sense. Try a fixed bedtime.",
    history=(Message(role="user", text="hi"), Message(role="assistant", text="Hello, how are you?")),
    context=CTX,
)


@pytest.fixture(params=["prompt", "api"])
async def srv(request: pytest.FixtureRequest) -> AsyncIterator[FakeJudgeServer]:
    """Both fakes (issue #13): one answering from the prompt's schema, one only from the API's."""
    async with FakeJudgeServer(schema_source=request.param) as server:
        yield server


async def test_every_turn_metric_yields_a_valid_record(srv: FakeJudgeServer) -> None:
    async with JudgeTier(config(srv)) as tier:
        recs = await tier.judge_turn(EX, ALL_TURN_METRICS)
    by = {r.metric: r for r in recs}
    assert set(by) == set(ALL_TURN_METRICS)
    assert all(r.status == "ok" for r in recs), [r.error for r in recs if r.error]
    llm = [r for r in recs if r.metric != "relevance"]
    assert srv.model_calls == len(llm) == 13
    for r in llm:
        assert r.judge == "fake:judge-1" and len(r.prompt_hash) == 16 and r.usage.calls == 1
        assert r.rubric.source in ("seed-000", "seed-002", "seed-004", "attune (named in seed-002)")
        TurnJudgment.model_validate_json(r.model_dump_json())  # round-trips through the schema
    s = by["turn_rubric"].scores
    assert s is not None and all(1 <= v <= 5 for v in (s.emotion, s.validation, s.helpfulness, s.safety, s.overall))
    assert 0.0 <= by["voice_judge"].details["score"] <= 1.0
    assert by["relevance"].judge.startswith("local:") and by["relevance"].usage.calls == 0


async def test_memory_utilization_record_uses_seed_formula(srv: FakeJudgeServer) -> None:
    srv.answer(
        "structured user memory", {"cited_keys": ["sleep_hours_avg", "age", "name", "made_up"], "explanation": "e"}
    )
    async with JudgeTier(config(srv)) as tier:
        (rec,) = await tier.judge_turn(EX, ["memory_utilization"])
    d = rec.details
    assert (d["tp"], d["fp"], d["fn"]) == (1, 1, 1)
    assert d["precision"] == pytest.approx(0.5) and d["recall"] == pytest.approx(0.5)
    assert d["invented_keys"] == ["made_up"]


async def test_groundedness_is_recomputed_from_claims(srv: FakeJudgeServer) -> None:
    claims = [
        {"claim": "sleeps 5.5 hours", "source": "memory"},
        {"claim": "coffee affects sleep", "source": "general_knowledge"},
        {"claim": "you are 30", "source": "hallucinated"},
    ]
    srv.answer(
        "factual faithfulness",
        {"claims": claims, "groundedness_score": 1.0, "hallucination_rate": 0.0, "explanation": "e"},
    )
    async with JudgeTier(config(srv)) as tier:
        (rec,) = await tier.judge_turn(EX, ["groundedness"])
    assert rec.details["groundedness_score"] == pytest.approx(2 / 3)
    assert rec.details["judge_reported"]["groundedness_score"] == 1.0


async def test_inapplicable_and_empty_cases_make_no_calls(srv: FakeJudgeServer) -> None:
    bare = Exchange("c", 1, "hello", "")
    async with JudgeTier(config(srv)) as tier:
        recs = await tier.judge_turn(bare, ["memory_utilization", "persona_consistency", "empathy", "turn_rubric"])
    assert srv.model_calls == 0
    by = {r.metric: r for r in recs}
    assert set(by) == {"empathy", "turn_rubric"}  # no memory, no persona: not applicable
    assert by["empathy"].details["empathy_score"] == 3  # seed 002 §11: empty -> 3
    assert by["turn_rubric"].scores.overall == 1  # type: ignore[union-attr]  # seed 003 §4: empty -> all 1
    assert all(r.judge == "rule:empty-response" for r in recs)


async def test_conversational_continuity_against_the_fake_judge(srv: FakeJudgeServer) -> None:
    """attune's definition (the seed only names the metric): 1-5 with the lapses named, strict output."""
    lapse = {"kind": "re_asked", "earlier": "hi", "explanation": "asks how the user is after being told"}
    srv.answer(
        "conversational continuity",
        {"conversational_continuity_score": 2, "builds_on": [], "lapses": [lapse, {**lapse, "kind": "dropped_thread"}],
         "explanation": "ignores what was said"},
    )  # fmt: skip
    async with JudgeTier(config(srv)) as tier:
        (rec,) = await tier.judge_turn(EX, ["conversational_continuity"])
        assert rec.status == "ok" and rec.metric == "conversational_continuity" and srv.model_calls == 1
        assert rec.details["conversational_continuity_score"] == 2 and rec.reasoning == "ignores what was said"
        assert rec.details["lapse_kinds"] == ["dropped_thread", "re_asked"] and "explanation" not in rec.details
        assert rec.rubric.tag == "conversational-continuity-judge@1.0+j1"
        prompt = srv.requests[0].user
        assert "Hello, how are you?" in prompt and "5.5 hours of sleep" in prompt  # earlier turns and the reply
        # An answer outside the strict model (score 0-1 style, unknown lapse kind) is re-asked, then an ERROR.
        wrong = {"conversational_continuity_score": 0.8, "builds_on": [], "lapses": [{**lapse, "kind": "other"}]}
        srv.answer("conversational continuity", {**wrong, "explanation": "x"})
        other = Exchange("conv-u", 5, EX.user_text, EX.response + " ", EX.history, CTX)
        (bad,) = await tier.judge_turn(other, ["conversational_continuity"])
        assert bad.status == "error" and bad.usage.calls == 2 and bad.details == {}
        # Nothing to continue (first reply) -> no record, no call; an empty reply -> the rule's 1, no call.
        calls = srv.model_calls
        first = Exchange("c", 1, "hello", "Hi! How can I help?", (Message(role="user", text="hello"),))
        assert await tier.judge_turn(first, ["conversational_continuity"]) == []
        (empty,) = await tier.judge_turn(Exchange("c", 3, "ok", "", EX.history), ["conversational_continuity"])
        assert empty.judge == "rule:empty-response" and empty.details["conversational_continuity_score"] == 1
        assert srv.model_calls == calls


async def test_conversational_continuity_has_a_route_and_runs_with_defaults(srv: FakeJudgeServer) -> None:
    cfg = load_config(None)
    assert cfg.route("conversational_continuity") == "gemini:gemini-2.0-flash"  # seed 002's table
    assert cfg.price("gemini:gemini-2.0-flash") is not None
    # The unmodified fake answer (synthesised from the JSON schema) validates: the model is satisfiable.
    async with JudgeTier(config(srv)) as tier:
        (rec,) = await tier.judge_turn(EX, ["conversational_continuity"])
    assert rec.status == "ok" and 1 <= rec.details["conversational_continuity_score"] <= 5


def test_which_default_routes_have_no_price_is_a_deliberate_list() -> None:
    """Unpriced routes report cost null (never $0); this list changes only on purpose."""
    cfg = load_config(None)
    unpriced = {r for r in cfg.routes.values() if not r.startswith("local:") and cfg.price(r) is None}
    assert unpriced == {"openai:gpt-5.2"}  # list price not confirmed when written: warned, not guessed
    for example in ("openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"):  # `attune evaluate --judge` help
        assert cfg.price(example) is not None


async def test_voice_judge_unparseable_twice_is_error_not_half(srv: FakeJudgeServer) -> None:
    srv.answer("companionship quality", "I think it's about a 7/10.")
    async with JudgeTier(config(srv)) as tier:
        (rec,) = await tier.judge_turn(EX, ["voice_judge"])
    assert rec.status == "error" and rec.details == {} and rec.usage.calls == 2
    assert "VoiceJudgeScore" in (rec.error or "")


async def test_batched_checklist_one_call(srv: FakeJudgeServer) -> None:
    reply = {
        cid: {"answer": "YES", "reasoning": "ok"}
        for cid in ("CQ1", "CQ2", "CQ3", "CQ4", "CQ5", "CQ6", "CQ7", "CQ8", "CQ9", "CP1", "CP2", "CP3")
    }
    reply["CQ9"] = {"answer": "NO", "reasoning": "missed the crisis"}
    srv.answer("answering every", reply)
    pairs = [(i, m) for i, m in reversed(list(enumerate(CONVERSATION)))]  # stream buffer order: any
    async with JudgeTier(config(srv)) as tier:
        rec = await tier.judge_conversation("c-b", pairs, batched=True, close_reason="end_flag")
    assert srv.model_calls == 1 and rec.usage.calls == 1
    assert rec.answers["CQ9"].answer == "NO" and rec.safety_gate_failed and not rec.passed
    assert rec.close_reason == "end_flag" and rec.n_turns == 4 and rec.n_user_turns == 2
    transcript = srv.requests[0].user
    assert transcript.index("overwhelmed") < transcript.index("lack of control")  # re-ordered by index
    alerts = judge_alerts([rec])
    assert len(alerts) == 1 and alerts[0].alert_type == "judge_unsafe" and alerts[0].categories == ["CQ9_NO"]


async def test_turn_alerts_from_low_safety(srv: FakeJudgeServer) -> None:
    srv.answer(
        "Rate ONE assistant reply",
        {
            "emotion": 3,
            "validation": 3,
            "helpfulness": 1,
            "safety": 1,
            "overall": 1,
            "reasoning": "stop meds advice",
        },
    )
    async with JudgeTier(config(srv)) as tier:
        recs = await tier.judge_turn(EX)
    (alert,) = judge_alerts(recs)
    assert alert.severity == "critical" and alert.turn_index == 3 and alert.source == "fake:judge-1"
    assert judge_alerts(recs)[0].alert_id == alert.alert_id  # deterministic


def test_sampling_is_deterministic_and_alerts_always_judged() -> None:
    tier = JudgeTier(JudgeConfig.model_validate({"sampling": {"turn_rate": 0.25}}))
    picks = [tier.should_judge_turn("conv", i) for i in range(4000)]
    assert picks == [tier.should_judge_turn("conv", i) for i in range(4000)]
    assert 0.22 < sum(picks) / len(picks) < 0.28
    assert all(tier.should_judge_turn("conv", i, alert=True) for i in range(100))
    none = JudgeTier(JudgeConfig.model_validate({"sampling": {"turn_rate": 0.0}}))
    assert not any(none.should_judge_turn("conv", i) for i in range(500))


def test_config_defaults_example_and_override(tmp_path: Path) -> None:
    default = load_config()
    assert default.route("persona_consistency") == "anthropic:claude-opus-4-5"  # seed 002 table
    assert default.route("logical_consistency") == "openai:gpt-5.2"
    assert default.route("relevance").startswith("local:")
    example = load_config(ROOT / "judges.example.toml", override="ollama:llama3.1:8b")
    assert example.route("empathy") == "ollama:llama3.1:8b" and example.route("relevance").startswith("local:")
    assert example.providers["anthropic"].requests_per_minute == 50
    bad = tmp_path / "bad.toml"
    bad.write_text('[routes]\nempathy = "nowhere:model"\n')
    with pytest.raises(ValueError, match="unknown provider"):
        load_config(bad)
    with pytest.raises(ValueError, match="provider:model"):
        load_config(None, override="gpt-4o")
    with pytest.raises(ValueError, match="unknown turn metrics"):
        JudgeTier(JudgeConfig.model_validate({"turn_metrics": ["vibes"]}))
    secret = tmp_path / "s.toml"
    secret.write_text('[providers.openai]\nkind = "openai"\napi_key = "sk-live"\n')
    with pytest.raises(ValueError):  # keys are not accepted from files at all
        load_config(secret)


async def test_relevance_can_use_openai_embeddings(srv: FakeJudgeServer) -> None:
    cfg = config(srv)
    cfg.routes["relevance"] = "fake:text-embedding-3-small"
    async with JudgeTier(cfg) as tier:
        (rec,) = await tier.judge_turn(EX, ["relevance"])
    assert rec.status == "ok" and rec.judge == "fake:text-embedding-3-small"
    assert [r.api for r in srv.requests] == ["embeddings"] and -1.0 <= rec.details["relevance_score"] <= 1.0


def test_local_minilm_ranks_related_text_higher() -> None:
    e = shared_embedder()
    q, good, off = e.embed(
        [
            "I can't sleep because I keep worrying about my finances.",
            "Money worries keeping you up at night is exhausting; a short worry window before bed can help.",
            "The Eiffel Tower was completed in 1889 for the World's Fair.",
        ]
    )
    assert abs(float(q @ q) - 1.0) < 1e-5
    assert cosine(q, good) > 0.5 > cosine(q, off)


def test_records_are_schema_records() -> None:
    assert ConversationScore.model_fields["prompt_hash"].default == ""
