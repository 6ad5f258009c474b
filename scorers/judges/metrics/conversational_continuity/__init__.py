"""``conversational_continuity``: named in seed 002's judge table (routed to Gemini 2.0 Flash) but never
defined there, so the definition is attune's (README.md in this folder): how well one reply carries the
conversation forward, builds on earlier context, does not forget or re-ask, does not contradict, keeps
the thread; 1-5 with the lapses named. No earlier conversation -> not applicable; empty reply -> 1.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric

LapseKind = Literal["forgotten_context", "re_asked", "contradiction", "dropped_thread", "abrupt_shift"]


class ContinuityLapse(JudgeOutput):
    kind: LapseKind
    earlier: str = Field(description="The earlier message content concerned (short quote).")
    explanation: str


class ConversationalContinuityJudgment(JudgeOutput):
    conversational_continuity_score: int = Field(ge=1, le=5)
    builds_on: list[str] = Field(max_length=20)
    lapses: list[ContinuityLapse] = Field(max_length=20)
    explanation: str


class ConversationalContinuity(TurnMetric):
    name = "conversational_continuity"
    rubric = RubricRef(id="conversational-continuity-judge", version="1.0+j1", source="attune (named in seed-002)")
    output = ConversationalContinuityJudgment
    package = __name__

    def applies(self, ex: Exchange) -> bool:
        """Only a reply with earlier conversation before the message it answers has anything to continue."""
        return len(ex.history) >= 2

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        return ConversationalContinuityJudgment(  # attune's rule: an empty reply carries nothing forward
            conversational_continuity_score=1, builds_on=[], lapses=[], explanation="empty response"
        )

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        v: ConversationalContinuityJudgment = value
        details = v.model_dump(mode="json", exclude={"explanation"})
        details["lapse_kinds"] = sorted({lapse.kind for lapse in v.lapses})
        return None, details, v.explanation


METRIC = ConversationalContinuity()
