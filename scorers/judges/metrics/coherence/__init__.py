"""Seed 002 metric 4, Response Coherence: ``CoherenceJudgment(coherence_score, explanation,
grammar_issues, strengths)`` plus the five rubric dimension scores the seed lists. Empty -> 1."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from schemas import RubricRef
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric

Likert = Annotated[int, Field(ge=1, le=5)]


class CoherenceDimensions(JudgeOutput):
    logical_flow: Likert
    clarity: Likert
    consistency: Likert
    organization: Likert
    relevance: Likert


class CoherenceJudgment(JudgeOutput):
    coherence_score: Likert
    dimension_scores: CoherenceDimensions
    grammar_issues: list[str] = Field(max_length=50)
    strengths: list[str] = Field(max_length=50)
    explanation: str


class Coherence(TurnMetric):
    name = "coherence"
    rubric = RubricRef(id="coherence-judge", version="1.0+j2", source="seed-002")
    output = CoherenceJudgment
    package = __name__

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        ones = CoherenceDimensions(logical_flow=1, clarity=1, consistency=1, organization=1, relevance=1)
        # seed 002 §4: "Empty responses receive score of 1".
        return CoherenceJudgment(
            coherence_score=1, dimension_scores=ones, grammar_issues=[], strengths=[], explanation="empty response"
        )


METRIC = Coherence()
