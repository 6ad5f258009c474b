"""Seed 002 metric 9, Politeness / Social Acceptability: ``PolitenessJudgment(politeness_score,
category, impolite_phrases, improvement_suggestions)`` on 0 / 0.5 / 1. Empty -> 1.0.

The score and the category say the same thing twice. A JSON Schema cannot tie them together in the subset
providers enforce, so a reply where they disagree is valid; :meth:`Politeness.finalize` then keeps the
less polite of the two readings (the lower score) and records ``consistent: false``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric

_CATEGORY_SCORE = {"polite": 1.0, "borderline": 0.5, "impolite": 0.0}


class PolitenessJudgment(JudgeOutput):
    politeness_score: Literal[0.0, 0.5, 1.0]  # type: ignore[valid-type]  # float literals: pydantic takes them
    category: Literal["polite", "borderline", "impolite"]
    impolite_phrases: list[str] = Field(max_length=50)
    improvement_suggestions: list[str] = Field(max_length=50)


class Politeness(TurnMetric):
    name = "politeness"
    rubric = RubricRef(id="politeness-judge", version="1.0+j2", source="seed-002")
    output = PolitenessJudgment
    package = __name__

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        return PolitenessJudgment(  # seed 002 §9: "Empty/non-responsive answers score 1.0"
            politeness_score=1.0, category="polite", impolite_phrases=[], improvement_suggestions=[]
        )

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        details = value.model_dump(mode="json")
        anchor = _CATEGORY_SCORE[value.category]
        details["consistent"] = anchor == value.politeness_score
        details["politeness_score"] = min(anchor, float(value.politeness_score))
        return None, details, f"category={value.category}"


METRIC = Politeness()
