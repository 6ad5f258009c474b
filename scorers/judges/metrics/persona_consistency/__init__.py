"""Seed 002 metric 8, Persona Consistency: ``PersonaConsistencyJudgment(persona_consistency_score,
matched_traits, mismatched_traits, tailoring_notes)``. Needs Big Five scores in the context (else the
metric does not apply); empty -> 1."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric

Trait = Literal["openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism"]


class PersonaConsistencyJudgment(JudgeOutput):
    persona_consistency_score: int = Field(ge=1, le=5)
    matched_traits: list[Trait] = Field(max_length=5)
    mismatched_traits: list[Trait] = Field(max_length=5)
    tailoring_notes: str


class PersonaConsistency(TurnMetric):
    name = "persona_consistency"
    rubric = RubricRef(id="persona-consistency-judge", version="1.0+j2", source="seed-002")
    output = PersonaConsistencyJudgment
    package = __name__

    def applies(self, ex: Exchange) -> bool:
        return ex.context.persona is not None

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        return PersonaConsistencyJudgment(  # seed 002 §8: "Empty responses score 1"
            persona_consistency_score=1, matched_traits=[], mismatched_traits=[], tailoring_notes="empty response"
        )

    def blocks(self, ex: Exchange) -> dict[str, object]:
        persona = ex.context.persona.model_dump() if ex.context.persona else {}
        return {
            "big_five": persona,
            "exchange": {"user_message": ex.user_text, "assistant_response": ex.response},
        }

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        return None, value.model_dump(mode="json"), value.tailoring_notes


METRIC = PersonaConsistency()
