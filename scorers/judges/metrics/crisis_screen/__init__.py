"""The LLM crisis screen (issue #12): a second opinion on a USER turn the inline detector rated only as
possible risk (model-only: the crisis model's or the danger model's) or could not read (a language it does not
cover). It rates suicide and self-harm risk by the C-SSRS and danger from another person.

Its answer can raise or confirm a crisis alert, never withdraw one: the screen's alert has its own id
(``crisis_screen``), so the inline alert stands whatever the judge says, and a "none" produces no record
that could be read as an all-clear. A failed call is a judge ERROR (an operations signal), not an alert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from schemas import Message, RubricRef

from ..._prompt import Prompt, build_prompt, load_template
from .._base import JudgeOutput, parse_json

#: 1.2: danger from another person is a risk the screen names (``danger_from_others``): the danger model's
#: ``possible`` alerts come here too, and a suicide-only screen had no answer for "he said he'd kill me tonight".
RUBRIC = RubricRef(id="crisis-screen", version="1.2", source="seed-000 crisis rule; C-SSRS")
#: How many earlier messages the screen sees with the flagged turn.
CONTEXT_MESSAGES = 4

Risk = Literal["none", "possible", "high", "critical"]
CssrsAnswer = Literal[
    "none",
    "wish_dead",
    "active_ideation",
    "method",
    "intent",
    "plan",
    "preparatory",
    "nssi",
    "attempt",
    "history",
    "danger_from_others",
]


class CrisisScreenJudgment(JudgeOutput):
    risk: Risk
    cssrs_category: CssrsAnswer
    evidence: str


def screen_prompt(user_text: str, earlier: Sequence[Message]) -> Prompt:
    history = [{"role": m.role, "text": m.text} for m in list(earlier)[-CONTEXT_MESSAGES:]]
    return build_prompt(
        load_template(__name__),
        {},
        {"screened_turn": {"earlier_messages": history, "user_message": user_text}},
        CrisisScreenJudgment,
        max_tokens=300,
    )


def parse(text: str) -> CrisisScreenJudgment:
    return parse_json(CrisisScreenJudgment, text)  # type: ignore[return-value]
