"""Seed 002 metric 5, Emotional Congruence: ``EmotionalCongruenceJudgment(emotional_congruence_score,
matched_emotions, mismatched_emotions, tone_notes)``; the detected distribution goes in as data."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric


class EmotionalCongruenceJudgment(JudgeOutput):
    emotional_congruence_score: int = Field(ge=1, le=5)
    matched_emotions: list[str] = Field(max_length=50)
    mismatched_emotions: list[str] = Field(max_length=50)
    tone_notes: str


class EmotionalCongruence(TurnMetric):
    name = "emotional_congruence"
    rubric = RubricRef(id="emotional-congruence-judge", version="1.0+j2", source="seed-002")
    output = EmotionalCongruenceJudgment
    package = __name__

    def blocks(self, ex: Exchange) -> dict[str, object]:
        return {
            "detected_emotions": ex.context.emotions or "not provided",
            "exchange": {"user_message": ex.user_text, "assistant_response": ex.response},
        }

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        details = value.model_dump(mode="json")
        return None, details, value.tone_notes


METRIC = EmotionalCongruence()
