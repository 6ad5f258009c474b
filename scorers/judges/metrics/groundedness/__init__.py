"""Seed 002 metric 2, Groundedness / Hallucination Rate: the judge extracts claims and labels each
grounded (memory / query / general knowledge) or hallucinated.

The scores are recomputed here from the labelled claims, per seed 002 §2: groundedness = grounded /
total, hallucination rate = 1 - groundedness; an empty response (or no claims) gives 1.0 / 0.0. The
judge's own arithmetic is kept in ``details["judge_reported"]`` but never used. :func:`aggregate_groundedness`
gives the seed's micro (sum claims) and macro (mean of scores) averages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._base import JudgeOutput, NonBlank, TurnMetric

GROUNDED = ("memory", "query", "general_knowledge")


class FactualClaim(JudgeOutput):
    claim: NonBlank
    source: Literal["memory", "query", "general_knowledge", "hallucinated"]


class GroundednessJudgment(JudgeOutput):
    claims: list[FactualClaim] = Field(max_length=200)
    groundedness_score: float = Field(ge=0.0, le=1.0)
    hallucination_rate: float = Field(ge=0.0, le=1.0)
    explanation: str


def groundedness_counts(claims: Iterable[FactualClaim]) -> tuple[int, int]:
    """(grounded, total)."""
    items = list(claims)
    return sum(c.source in GROUNDED for c in items), len(items)


def groundedness_score(grounded: int, total: int) -> float:
    return 1.0 if total == 0 else grounded / total


def aggregate_groundedness(samples: Iterable[tuple[int, int]]) -> dict[str, dict[str, float]]:
    """Seed 002 §2 Aggregation over (grounded, total) pairs: micro sums claims, macro averages scores."""
    items = list(samples)
    if not items:
        raise ValueError("no samples to aggregate")
    g = sum(a for a, _ in items)
    t = sum(b for _, b in items)
    micro = groundedness_score(g, t)
    macro = sum(groundedness_score(a, b) for a, b in items) / len(items)
    return {
        "micro": {"groundedness_score": micro, "hallucination_rate": 1.0 - micro, "claims": t, "grounded": g},
        "macro": {"groundedness_score": macro, "hallucination_rate": 1.0 - macro},
    }


class Groundedness(TurnMetric):
    name = "groundedness"
    rubric = RubricRef(id="groundedness-judge", version="1.0+j2", source="seed-002")
    output = GroundednessJudgment
    package = __name__
    max_tokens = 1500

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        if ex.response.strip():
            return None
        # seed 002 §2: "Empty responses have groundedness_score=1.0, hallucination_rate=0.0".
        return GroundednessJudgment(claims=[], groundedness_score=1.0, hallucination_rate=0.0, explanation="empty")

    def blocks(self, ex: Exchange) -> dict[str, object]:
        return {
            "memory": ex.context.memory or {},
            "exchange": {"user_message": ex.user_text, "assistant_response": ex.response},
        }

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        v: GroundednessJudgment = value
        grounded, total = groundedness_counts(v.claims)
        score = groundedness_score(grounded, total)
        details = {
            "claims": [c.model_dump() for c in v.claims],
            "grounded_claims": grounded,
            "hallucinated_claims": total - grounded,
            "groundedness_score": score,
            "hallucination_rate": 1.0 - score,
            "judge_reported": {"groundedness_score": v.groundedness_score, "hallucination_rate": v.hallucination_rate},
        }
        return None, details, v.explanation


METRIC = Groundedness()
