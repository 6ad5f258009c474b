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
from dataclasses import dataclass
from typing import Literal

from pydantic import create_model

from schemas import Message, RubricRef
from scorers.checklist import CATEGORIES, CRITERIA_SPEC, RUBRIC, CriterionSpec, count_turns

from ..._prompt import Prompt, build_prompt, data_block, load_template
from .._base import JudgeOutput, NonBlank

#: The judge tier's checklist rubric: seed 001's version plus this prompt's revision.
JUDGE_RUBRIC = RubricRef(id="conversation-checklist-judge", version=f"{RUBRIC.version}+j2", source=RUBRIC.source)
_CATEGORY = {c.name: c for c in CATEGORIES}


class CriterionJudgment(JudgeOutput):
    answer: Literal["YES", "NO", "NA"]
    reasoning: NonBlank


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


@dataclass(frozen=True, slots=True)
class ConversationView:
    """What all 12 prompts of one conversation share, rendered once (not 12 times)."""

    block: str
    counts: dict[str, str]


def conversation_view(messages: Sequence[Message]) -> ConversationView:
    counts = {"n_turns": str(count_turns(messages)), "n_messages": str(len(messages))}
    return ConversationView(data_block("conversation", _transcript(messages)), counts)


def criterion_prompt(c: CriterionSpec, messages: Sequence[Message] | ConversationView) -> Prompt:
    view = messages if isinstance(messages, ConversationView) else conversation_view(messages)
    cat = _CATEGORY[c.category]
    variables = {
        "criterion_id": c.id,
        "title": c.title,
        "category": c.category,
        "category_question": cat.question,
        "checks_for": c.checks_for,
        "failure_examples": "\n".join(f"- {e}" for e in c.failure_examples) or "- (none given)",
        "na_rule": _na_rule(c),
        **view.counts,
    }
    return build_prompt(
        load_template(__name__), variables, {}, CriterionJudgment, max_tokens=400, rendered=[view.block]
    )


def batched_prompt(messages: Sequence[Message]) -> Prompt:
    lines = []
    for c in CRITERIA_SPEC:
        examples = "; ".join(c.failure_examples)
        lines.append(
            f"{c.id} [{c.category}] {c.title}. Checks for: {c.checks_for}. Fails e.g.: {examples}. {_na_rule(c)}"
        )
    view = conversation_view(messages)
    variables = {"criteria": "\n".join(lines), **view.counts}
    return build_prompt(
        load_template(__name__, "batched.md"),
        variables,
        {},
        BatchedChecklistJudgment,
        max_tokens=2500,
        rendered=[view.block],
    )


__all__ = [
    "JUDGE_RUBRIC",
    "BatchedChecklistJudgment",
    "ConversationView",
    "CriterionJudgment",
    "batched_prompt",
    "conversation_view",
    "criterion_prompt",
]
