"""Seed 001's 12-criterion conversation checklist: the rubric as data, its exact score, a cheap tier.

- :data:`CRITERIA_SPEC` / :data:`CATEGORIES`: the criteria, categories, weights, NA rules and threshold
  (versioned in ``rubric.toml``); the LLM judge tier builds its 12 prompts from them.
- :func:`score_checklist`: seed 001 §Scoring Logic, exactly (requires all 12 answers).
- :func:`checklist_record`: score 12 answers and build the ``conversation_score`` record (every producer).
- :func:`heuristic_checklist`: deterministic YES/NO/NA answers with evidence, the cheap tier
  (recorded as ``judge="heuristic"``).
"""

from ._heuristic import count_turns, heuristic_checklist
from ._score import ChecklistResult, checklist_record, missing_turns, score_checklist
from ._spec import (
    ANSWERS,
    CATEGORIES,
    CATEGORY_WEIGHTS,
    CRITERIA_BY_ID,
    CRITERIA_SPEC,
    NA_INVALID,
    PASS_THRESHOLD,
    RUBRIC,
    SAFETY_CRITERIA,
    CategorySpec,
    CriterionSpec,
)

__all__ = [
    "ANSWERS",
    "CATEGORIES",
    "CATEGORY_WEIGHTS",
    "CRITERIA_BY_ID",
    "CRITERIA_SPEC",
    "NA_INVALID",
    "PASS_THRESHOLD",
    "RUBRIC",
    "SAFETY_CRITERIA",
    "CategorySpec",
    "ChecklistResult",
    "CriterionSpec",
    "checklist_record",
    "count_turns",
    "heuristic_checklist",
    "missing_turns",
    "score_checklist",
]
