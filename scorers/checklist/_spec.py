"""Seed 001's rubric as frozen data, loaded once from ``rubric.toml`` next to this module.

The data lives in TOML (not code) so the heuristic tier, the score function and the LLM judge tier
(which builds its 12 prompts from ``CRITERIA_SPEC``) all read one versioned definition. Loading
validates it against the seed's invariants (12 criteria matching ``schemas.CRITERIA``, weights
summing to 1, every criterion in exactly one category), so an edit that breaks them fails at import.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from schemas import CRITERIA, RubricRef


@dataclass(frozen=True, slots=True)
class CriterionSpec:
    """One seed-001 criterion. ``condition`` is the seed's NA rule ("" = always assessed)."""

    id: str
    category: str
    title: str
    checks_for: str
    failure_examples: tuple[str, ...]
    condition: str
    min_turns: int
    na_valid: bool

    @property
    def conditional(self) -> bool:
        return bool(self.condition)


@dataclass(frozen=True, slots=True)
class CategorySpec:
    """One seed-001 category with its weight (seed 001 §Category Weights)."""

    name: str
    number: int
    question: str
    weight: float
    criteria: tuple[str, ...]
    gate: bool


def _load() -> dict[str, Any]:
    with resources.files(__package__).joinpath("rubric.toml").open("rb") as fh:
        return tomllib.load(fh)


_RAW = _load()
_R = _RAW["rubric"]

RUBRIC = RubricRef(id=_R["id"], version=_R["version"], source=_R["source"])
PASS_THRESHOLD: float = float(_R["pass_threshold"])
NA_INVALID: frozenset[str] = frozenset(_R["na_invalid"])
ANSWERS: tuple[str, ...] = tuple(_R["answers"])

CATEGORIES: tuple[CategorySpec, ...] = tuple(
    CategorySpec(
        name=c["name"],
        number=int(c["number"]),
        question=c["question"],
        weight=float(c["weight"]),
        criteria=tuple(c["criteria"]),
        gate=bool(c.get("gate", False)),
    )
    for c in _RAW["category"]
)
#: category name -> weight, in the seed's order (the order of the weighted sum matters for floats).
CATEGORY_WEIGHTS: MappingProxyType[str, float] = MappingProxyType({c.name: c.weight for c in CATEGORIES})
SAFETY_CRITERIA: tuple[str, ...] = tuple(cid for c in CATEGORIES if c.gate for cid in c.criteria)

CRITERIA_SPEC: tuple[CriterionSpec, ...] = tuple(
    CriterionSpec(
        id=c["id"],
        category=c["category"],
        title=c["title"],
        checks_for=c["checks_for"],
        failure_examples=tuple(c["failure_examples"]),
        condition=c["condition"],
        min_turns=int(c["min_turns"]),
        na_valid=c["id"] not in NA_INVALID,
    )
    for c in _RAW["criterion"]
)
CRITERIA_BY_ID: MappingProxyType[str, CriterionSpec] = MappingProxyType({c.id: c for c in CRITERIA_SPEC})


def _validate() -> None:
    ids = [c.id for c in CRITERIA_SPEC]
    if tuple(ids) != CRITERIA:
        raise ValueError(f"rubric.toml criteria {ids} differ from schemas.CRITERIA {list(CRITERIA)}")
    in_categories = [cid for c in CATEGORIES for cid in c.criteria]
    if sorted(in_categories) != sorted(ids):
        raise ValueError("every criterion must sit in exactly one category")
    for cat in CATEGORIES:
        for cid in cat.criteria:
            if CRITERIA_BY_ID[cid].category != cat.name:
                raise ValueError(f"{cid}: category {CRITERIA_BY_ID[cid].category!r} but listed under {cat.name!r}")
    if not math.isclose(sum(CATEGORY_WEIGHTS.values()), 1.0, abs_tol=1e-9):
        raise ValueError("category weights must sum to 1")
    if not set(ids) >= NA_INVALID:
        raise ValueError("na_invalid names unknown criteria")
    if set(ANSWERS) != {"YES", "NO", "NA", "ERROR"}:
        raise ValueError("answers must be YES, NO, NA, ERROR")


_validate()
