"""Seed 002 metric 6, Helpfulness: ``HelpfulnessJudgment(helpfulness_score, missing_info,
suggested_followups)`` (1-5). Empty or non-responsive -> 1."""

from __future__ import annotations

from pydantic import Field

from schemas import RubricRef
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric


class HelpfulnessJudgment(JudgeOutput):
    helpfulness_score: int = Field(ge=1, le=5)
    missing_info: list[str] = Field(max_length=50)
    suggested_followups: list[str] = Field(max_length=50)
    explanation: str


class Helpfulness(TurnMetric):
    name = "helpfulness"
    rubric = RubricRef(id="helpfulness-judge", version="1.0+j2", source="seed-002")
    output = HelpfulnessJudgment
    package = __name__

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        return HelpfulnessJudgment(  # seed 002 §6: "Empty/non-responsive answers score 1"
            helpfulness_score=1, missing_info=["any response"], suggested_followups=[], explanation="empty response"
        )


METRIC = Helpfulness()
