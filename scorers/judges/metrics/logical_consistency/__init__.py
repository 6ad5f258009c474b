"""Seed 002 metric 10, Logical Consistency: ``LogicalConsistencyJudgment(consistency_score,
contradictions, reasoning_issues, consistent_elements, explanation)`` with ``Contradiction(statement1,
statement2, explanation)``. Empty -> 5 (nothing said, nothing contradicted)."""

from __future__ import annotations

from pydantic import Field

from schemas import RubricRef
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric


class Contradiction(JudgeOutput):
    statement1: str
    statement2: str
    explanation: str


class LogicalConsistencyJudgment(JudgeOutput):
    consistency_score: int = Field(ge=1, le=5)
    contradictions: list[Contradiction] = Field(max_length=50)
    reasoning_issues: list[str] = Field(max_length=50)
    consistent_elements: list[str] = Field(max_length=50)
    explanation: str


class LogicalConsistency(TurnMetric):
    name = "logical_consistency"
    rubric = RubricRef(id="logical-consistency-judge", version="1.0+j2", source="seed-002")
    output = LogicalConsistencyJudgment
    package = __name__

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        return LogicalConsistencyJudgment(  # seed 002 §10: "Empty responses score 5"
            consistency_score=5, contradictions=[], reasoning_issues=[], consistent_elements=[], explanation="empty"
        )


METRIC = LogicalConsistency()
