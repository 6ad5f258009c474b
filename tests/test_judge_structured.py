"""Structured output against APIs that enforce a schema (issue #13, part 1).

The fake in ``schema_source="api"`` mode answers like the real providers: only from the schema sent
*through the API*, with any value that schema allows. So an ERROR here means attune validated something
other than what it sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from attune.testing import FakeJudgeServer
from attune.testing.fake_judge import synthesise
from schemas import Message, Persona, TurnContext
from scorers import Exchange
from scorers.judges import ALL_TURN_METRICS, JudgeConfig, JudgeTier, ProviderConfig
from scorers.judges._config import DEFAULT_PROVIDERS
from scorers.judges._schema import STRICT_KEYWORDS, SchemaNotPortable, wire_schema
from scorers.judges.metrics import TURN_METRICS, crisis_screen
from scorers.judges.metrics._base import JudgeOutput, parse_json
from scorers.judges.metrics.checklist import BatchedChecklistJudgment, CriterionJudgment

OUTPUT_MODELS: list[type[BaseModel]] = [
    *(m.output for m in TURN_METRICS.values()),
    CriterionJudgment,
    BatchedChecklistJudgment,
    crisis_screen.CrisisScreenJudgment,
]
CTX = TurnContext(
    memory={"name": "Jason", "sleep_hours_avg": "5.5", "caffeine_intake": "high"},
    required_keys=["sleep_hours_avg"],
    emotions={"sadness": 0.6, "neutral": 0.4},
    persona=Persona(openness=0.7, conscientiousness=0.3, extraversion=0.4, agreeableness=0.8, neuroticism=0.7),
)
TURNS = [
    ("I've been feeling low on energy lately.", "With 5.5 hours of sleep, tiredness makes sense. Try a fixed bedtime."),
    ("My sister stopped calling me.", "That silence sounds painful. What do you think changed?"),
    ("i cant focus at work", "That's frustrating. When did it start?"),
    ("Thanks, that helps a bit.", "I'm glad. Want to plan one small step for tomorrow?"),
]


@pytest.mark.parametrize("model", OUTPUT_MODELS, ids=lambda m: m.__name__)
def test_every_output_schema_is_carried_whole_by_strict_structured_outputs(model: type[BaseModel]) -> None:
    schema = wire_schema(model)  # raises SchemaNotPortable otherwise

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("properties", "$defs"):
                    for sub in v.values():
                        walk(sub)
                else:
                    assert k in STRICT_KEYWORDS, k
                    walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk(schema)
    # Whatever the schema allows validates: 200 varied instances, as an enforcing API may return them.
    for seed in range(200):
        parse_json(model, json.dumps(synthesise(schema, seed, varied=True)))


def test_a_model_with_a_hidden_constraint_is_refused() -> None:
    from pydantic import Field, field_validator

    class Hidden(JudgeOutput):
        score: float = Field(ge=0.0, le=1.0)

        @field_validator("score")
        @classmethod
        def _anchor(cls, v: float) -> float:
            return v

    class Lengthy(JudgeOutput):
        text: str = Field(max_length=10)

    class Defaulted(JudgeOutput):
        text: str = ""

    for model in (Hidden, Lengthy, Defaulted):
        with pytest.raises(SchemaNotPortable):
            wire_schema(model)


def config(srv: FakeJudgeServer, kind: str, **provider: Any) -> JudgeConfig:
    pc = ProviderConfig(
        kind=kind,  # type: ignore[arg-type]
        base_url=srv.anthropic_base_url if kind == "anthropic" else srv.openai_base_url,
        api_key_env="FAKE_JUDGE_KEY",
        timeout_s=5.0,
        **provider,
    )
    return JudgeConfig.model_validate(
        {"providers": {**DEFAULT_PROVIDERS, "fake": pc}, "override": "fake:judge-1", "backoff_base_s": 0.01}
    )


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-fake")


@pytest.fixture
async def api_srv() -> AsyncIterator[FakeJudgeServer]:
    async with FakeJudgeServer(schema_source="api") as server:
        yield server


async def test_openai_request_carries_the_validated_schema_strictly(api_srv: FakeJudgeServer) -> None:
    ex = Exchange("c", 1, TURNS[0][0], TURNS[0][1], context=CTX)
    async with JudgeTier(config(api_srv, "openai")) as tier:
        (rec,) = await tier.judge_turn(ex, ["safety"])
    assert rec.status == "ok", rec.error
    body = api_srv.requests[0].body
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["schema"] == wire_schema(TURN_METRICS["safety"].output)
    assert rf["json_schema"]["name"] == "SafetyJudgment"
    # the prompt shows the very same object
    shown = api_srv.requests[0].user.split("<output_schema>")[1].split("</output_schema>")[0]
    assert json.loads(shown) == rf["json_schema"]["schema"]


async def test_anthropic_request_forces_one_tool_with_the_schema(api_srv: FakeJudgeServer) -> None:
    ex = Exchange("c", 1, TURNS[0][0], TURNS[0][1], context=CTX)
    async with JudgeTier(config(api_srv, "anthropic")) as tier:
        (rec,) = await tier.judge_turn(ex, ["politeness"])
    assert rec.status == "ok", rec.error
    body = api_srv.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "PolitenessJudgment"}
    assert [t["input_schema"] for t in body["tools"]] == [wire_schema(TURN_METRICS["politeness"].output)]


@pytest.mark.parametrize("kind", ["openai", "anthropic", "openai_compatible"])
async def test_no_errors_against_a_server_that_honours_only_the_api_schema(api_srv: FakeJudgeServer, kind: str) -> None:
    """Every LLM metric, the checklist and the crisis screen: ERROR rate 0 with no faults (was 110/110)."""
    records: list[Any] = []
    async with JudgeTier(config(api_srv, kind)) as tier:
        for i, (user, reply) in enumerate(TURNS):
            history = tuple(Message(role=r, text=t) for u, a in TURNS[:i] for r, t in (("user", u), ("assistant", a)))
            ex = Exchange(f"c{i}", 2 * i + 1, user, reply, history=history, context=CTX)
            records += await tier.judge_turn(ex, [m for m in ALL_TURN_METRICS if m != "relevance"])
            records += await tier.screen_user_turn(f"c{i}", 2 * i, user)
        msgs = [Message(role=r, text=t) for u, a in TURNS for r, t in (("user", u), ("assistant", a))]
        conv = await tier.judge_conversation("conv", msgs)
        batched = await tier.judge_conversation("conv-b", msgs, batched=True)
    errors = [(r.metric, r.error) for r in records if getattr(r, "status", "ok") == "error"]
    assert errors == []
    judged = [r for r in records if getattr(r, "metric", None)]
    # 12 LLM turn metrics + the crisis screen per turn, plus continuity where there is earlier conversation
    assert len(judged) == 4 * 13 + 3
    for score in (conv, batched):
        assert all(a.answer in ("YES", "NO", "NA") for a in score.answers.values()), score.answers
    # values away from the anchors were offered and accepted where the schema allows them
    assert api_srv.model_calls == len(judged) + 11 + 1  # 11 criteria (CP3 NA by seed: 4 turns) + 1 batched


async def test_compatible_server_without_json_schema_falls_back_to_json_mode(caplog: pytest.LogCaptureFixture) -> None:
    async with FakeJudgeServer(schema_source="prompt", reject_json_schema=True) as srv:
        ex = Exchange("c", 1, TURNS[0][0], TURNS[0][1], context=CTX)
        async with JudgeTier(config(srv, "openai_compatible")) as tier:
            (first,) = await tier.judge_turn(ex, ["empathy"])
            (second,) = await tier.judge_turn(Exchange("c", 3, "again", "ok then"), ["empathy"])
        types = [(r.body.get("response_format") or {}).get("type") for r in srv.requests]
    assert first.status == second.status == "ok"
    assert types == ["json_schema", "json_object", "json_object"]  # one rejection, then JSON mode
    assert "using json_object from now on" in caplog.text


async def test_openai_itself_does_not_fall_back_a_400_is_an_error() -> None:
    srv = FakeJudgeServer(schema_source="prompt", reject_json_schema=True)
    async with srv, JudgeTier(config(srv, "openai")) as tier:
        (rec,) = await tier.judge_turn(Exchange("c", 1, TURNS[0][0], TURNS[0][1]), ["empathy"])
    assert rec.status == "error" and "HTTP 400" in (rec.error or "")


@pytest.mark.parametrize("mode", ["json_object", "prompt"])
async def test_fallback_modes_still_validate_the_same_schema(mode: str) -> None:
    async with FakeJudgeServer(schema_source="prompt") as srv:
        srv.answer("<<<DATA exchange", "Here is my assessment:\n```json\n" + json.dumps(
            {"safety_score": "0.5", "category": "other", "flagged_content": [], "suggested_fixes": [], "note": "x"}
        ) + "\n```")  # fmt: skip
        async with JudgeTier(config(srv, "openai_compatible", structured_output=mode)) as tier:
            (rec,) = await tier.judge_turn(Exchange("c", 1, TURNS[0][0], TURNS[0][1]), ["safety"])
        rf = srv.requests[0].body.get("response_format")
    assert rec.status == "ok" and rec.details["safety_score"] == 0.5 and "note" not in rec.details
    assert rf == ({"type": "json_object"} if mode == "json_object" else None)
