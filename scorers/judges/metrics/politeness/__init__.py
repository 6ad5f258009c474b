"""Seed 002 metric 9, Politeness / Social Acceptability: ``PolitenessJudgment(politeness_score,
category, impolite_phrases, improvement_suggestions)`` on 0 / 0.5 / 1. Empty -> 1.0."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric

_CATEGORY_SCORE = {"polite": 1.0, "borderline": 0.5, "impolite": 0.0}


class PolitenessJudgment(JudgeOutput):
    politeness_score: float = Field(ge=0.0, le=1.0)
    category: Literal["polite", "borderline", "impolite"]
    impolite_phrases: list[str] = Field(max_length=50)
    improvement_suggestions: list[str] = Field(max_length=50)

    @model_validator(mode="after")
    def _consistent(self) -> PolitenessJudgment:
        if _CATEGORY_SCORE[self.category] != self.politeness_score:
            raise ValueError("politeness_score must be the anchor of its category (1.0 / 0.5 / 0.0)")
        return self


class Politeness(TurnMetric):
    name = "politeness"
    rubric = RubricRef(id="politeness-judge", version="1.0+j1", source="seed-002")
    output = PolitenessJudgment
    package = __name__

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        return PolitenessJudgment(  # seed 002 §9: "Empty/non-responsive answers score 1.0"
            politeness_score=1.0, category="polite", impolite_phrases=[], improvement_suggestions=[]
        )

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        return None, value.model_dump(mode="json"), f"category={value.category}"


METRIC = Politeness()
