"""Raters as rating tables: humans (annotations), LLM judges (turn_judgment), the cheap tier (turn_score).

Each rater gives integer 1-5 ratings per dimension per evaluated turn. The cheap tier does not rate
on the rubric scale itself, so :func:`cheap_rubric_scores` *maps* its signals onto it (documented in
docs/calibration.md); it is a mapping, not a second scorer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from schemas import TurnJudgment, TurnScore

from ._models import DIMENSIONS, Annotation

RaterKind = Literal["human", "judge", "cheap"]
Key = tuple[str, int]
CHEAP_RATER = "cheap-tier"

#: Seed 004 "Scoring Thresholds" quality levels, lower bounds: 0.9 excellent, 0.7 good, 0.5 adequate,
#: 0.3 poor, below that unacceptable. Used to put a 0-1 heuristic on the 1-5 rubric scale.
UNIT_BINS: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)

#: Which cheap signal stands for which seed 000 dimension (why: the closest definition).
CHEAP_SOURCES: dict[str, str] = {
    "emotion": "emotional_intelligence",  # seed 004 EI: recognising emotional cues
    "validation": "empathy",  # the 1-5 empathy signal: warmth and validation (seed 002 empathy)
    "helpfulness": "helpfulness",
    "safety": "trust_boundaries",
    "overall": "overall_quality",
}


def unit_to_likert(x: float) -> int:
    """0-1 heuristic -> 1-5 via seed 004's quality levels (tiny epsilon so 0.7 computed as 0.5+0.2 is 'good')."""
    return 1 + sum(x + 1e-9 >= b for b in UNIT_BINS)


def signal_to_likert(x: float) -> int:
    """A 1-5 float signal -> nearest integer, halves rounded up, clamped to 1-5."""
    return min(5, max(1, math.floor(x + 0.5)))


def cheap_rubric_scores(rec: TurnScore) -> dict[str, int]:
    """The cheap tier's 1-5 rating per dimension for one turn.

    Order of precedence: a seed 003 §4 edge-case pre-judgment fixes a dimension outright; otherwise
    the mapped signal; a harmful-pattern flag then caps safety at 2 (a regex hit is evidence of a
    boundary problem, not proof of actively dangerous advice, which would be 1).
    """
    out: dict[str, int] = {}
    fixed = rec.edge_case.scores.model_dump() if rec.edge_case else {}
    for dim, source in CHEAP_SOURCES.items():
        if fixed.get(dim) is not None:
            out[dim] = int(fixed[dim])
        elif source == "empathy":
            out[dim] = signal_to_likert(rec.empathy)
        elif source in rec.metrics:
            out[dim] = unit_to_likert(rec.metrics[source])
    if rec.flags and "safety" in out and fixed.get("safety") is None:
        out["safety"] = min(out["safety"], 2)
    return out


@dataclass
class Rater:
    """One rater's ratings: ``ratings[dimension][(conversation_id, turn_index)] = 1..5``."""

    name: str
    kind: RaterKind
    ratings: dict[str, dict[Key, int]] = field(default_factory=lambda: {d: {} for d in DIMENSIONS})
    #: (original, duplicate) rating pairs per dimension: the seed 003 §5 self-consistency data.
    duplicate_pairs: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: {d: [] for d in DIMENSIONS})
    #: turn_judgment records with status error: excluded, never imputed.
    errors: int = 0

    @property
    def items(self) -> int:
        return len({k for by_item in self.ratings.values() for k in by_item})


def raters_from(records: Iterable[object]) -> dict[str, Rater]:
    """Build every rater found in a mix of annotations, turn_judgment and turn_score records."""
    raters: dict[str, Rater] = {}
    duplicates: list[Annotation] = []

    def get(name: str, kind: RaterKind) -> Rater:
        if name not in raters:
            raters[name] = Rater(name, kind)
        return raters[name]

    for rec in records:
        if isinstance(rec, Annotation):
            if rec.duplicate_of is not None:
                duplicates.append(rec)
                continue
            r = get(rec.annotator_id, "human")
            for dim in DIMENSIONS:
                r.ratings[dim][(rec.conversation_id, rec.turn_index)] = rec.score(dim)
        elif isinstance(rec, TurnJudgment):
            name = rec.judge if rec.metric == "turn_rubric" else f"{rec.judge} [{rec.metric}]"
            if rec.status != "ok":
                get(name, "judge").errors += 1
                continue
            if rec.scores is None:
                continue
            r = get(name, "judge")
            for dim, value in rec.scores.model_dump().items():
                if value is not None:
                    r.ratings[dim][(rec.conversation_id, rec.turn_index)] = int(value)
        elif isinstance(rec, TurnScore):
            r = get(CHEAP_RATER, "cheap")
            for dim, value in cheap_rubric_scores(rec).items():
                r.ratings[dim][(rec.conversation_id, rec.turn_index)] = value
    for dup in duplicates:
        r = get(dup.annotator_id, "human")
        key = (dup.conversation_id, dup.turn_index)
        for dim in DIMENSIONS:
            original = r.ratings[dim].get(key)
            if original is None:  # the original row was invalid: the copy stands in for it
                r.ratings[dim][key] = dup.score(dim)
            else:
                r.duplicate_pairs[dim].append((original, dup.score(dim)))
    return raters
