"""Seed 002 metric 11, Empathy: ``EmpathyJudgment(empathy_score, warmth_level, validation_present,
supportive_elements, empathy_gaps, explanation)``. Empty -> 3 (neutral: no empathy, no coldness)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas import RubricRef
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric


class EmpathyJudgment(JudgeOutput):
    empathy_score: int = Field(ge=1, le=5)
    warmth_level: Literal["high", "moderate", "low", "cold"]
    validation_present: bool
    supportive_elements: list[str] = Field(max_length=50)
    empathy_gaps: list[str] = Field(max_length=50)
    explanation: str


class Empathy(TurnMetric):
    name = "empathy"
    rubric = RubricRef(id="empathy-judge", version="1.0+j2", source="seed-002")
    output = EmpathyJudgment
    package = __name__

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        return EmpathyJudgment(  # seed 002 §11: "Empty responses score 3"
            empathy_score=3,
            warmth_level="moderate",
            validation_present=False,
            supportive_elements=[],
            empathy_gaps=[],
            explanation="empty response",
        )


METRIC = Empathy()
