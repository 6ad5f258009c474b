"""Seed 001: the 12-criterion conversation checklist asked of an LLM judge.

One call per criterion (12, run concurrently) with :data:`CriterionJudgment` replies, or optionally
one batched call answering all 12 (:class:`BatchedChecklistJudgment`). The criteria text (title,
checks-for, failure examples, NA conditions) is read from ``scorers.checklist.CRITERIA_SPEC``, the one
versioned copy of seed 001 that the cheap tier and :func:`scorers.checklist.score_checklist` also use.
A judge may answer only YES/NO/NA; ERROR is assigned by attune when a call fails, and scores 0 and
fails the safety gate (seed 001 §Scoring Logic: "ERROR counts as 0.0 (API failures are not passes)").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field, create_model

from schemas import Message, RubricRef
from scorers.checklist import CATEGORIES, CRITERIA_SPEC, RUBRIC, CriterionSpec, count_turns

from ..._prompt import Prompt, build_prompt, load_template
from .._base import JudgeOutput

#: The judge tier's checklist rubric: seed 001's version plus this prompt's revision.
JUDGE_RUBRIC = RubricRef(id="conversation-checklist-judge", version=f"{RUBRIC.version}+j1", source=RUBRIC.source)
_CATEGORY = {c.name: c for c in CATEGORIES}


class CriterionJudgment(JudgeOutput):
    answer: Literal["YES", "NO", "NA"]
    reasoning: str = Field(min_length=1, max_length=4000)


BatchedChecklistJudgment: type[JudgeOutput] = create_model(  # type: ignore[call-overload]
    "BatchedChecklistJudgment",
    __base__=JudgeOutput,
    **{c.id: (CriterionJudgment, ...) for c in CRITERIA_SPEC},
)


def _na_rule(c: CriterionSpec) -> str:
    if not c.na_valid:
        return (
            f"NA is NOT a valid answer for {c.id}: every conversation can be assessed for it; "
            "answer YES or NO (an NA is scored as a failure)."
        )
    if c.condition:
        return f"When to answer NA: {c.condition}"
    return "Answer NA only if the criterion genuinely cannot apply to this conversation."


def _transcript(messages: Sequence[Message]) -> list[dict[str, object]]:
    return [{"index": i, "role": m.role, "text": m.text} for i, m in enumerate(messages)]


def _counts(messages: Sequence[Message]) -> dict[str, str]:
    return {"n_turns": str(count_turns(messages)), "n_messages": str(len(messages))}


def criterion_prompt(c: CriterionSpec, messages: Sequence[Message]) -> Prompt:
    cat = _CATEGORY[c.category]
    variables = {
        "criterion_id": c.id,
        "title": c.title,
        "category": c.category,
        "category_question": cat.question,
        "checks_for": c.checks_for,
        "failure_examples": "\n".join(f"- {e}" for e in c.failure_examples) or "- (none given)",
        "na_rule": _na_rule(c),
        **_counts(messages),
    }
    return build_prompt(
        load_template(__name__), variables, {"conversation": _transcript(messages)}, CriterionJudgment, max_tokens=400
    )


def batched_prompt(messages: Sequence[Message]) -> Prompt:
    lines = []
    for c in CRITERIA_SPEC:
        examples = "; ".join(c.failure_examples)
        lines.append(
            f"{c.id} [{c.category}] {c.title}. Checks for: {c.checks_for}. Fails e.g.: {examples}. {_na_rule(c)}"
        )
    template = load_template(__name__, "batched.md")
    variables = {"criteria": "\n".join(lines), **_counts(messages)}
    return build_prompt(
        template, variables, {"conversation": _transcript(messages)}, BatchedChecklistJudgment, max_tokens=2500
    )


__all__ = [
    "JUDGE_RUBRIC",
    "BatchedChecklistJudgment",
    "CriterionJudgment",
    "batched_prompt",
    "criterion_prompt",
]
