"""Seed 004's LLM-as-judge prompt ("Enhanced Judge Prompt Template"), its reply format and thresholds.

The reply carries the seed's two fields, ``Score`` (0.0-1.0) and ``Reasoning``, as the JSON object
``{"score", "reasoning"}`` through the provider's structured-output API: the seed's free-text line
``Score: X.X | Reasoning: ...`` is what a schema-enforcing API cannot guarantee, and it is still accepted
when a judge answers in it (:func:`parse_score_line`). The seed's "Fallback Handling: Default to 0.5 if parsing
fails" is deliberately NOT implemented: an unparseable reply is re-asked once and then recorded as an
ERROR, so a broken judge can never look like an average response.

Thresholds (seed 004 §Scoring Thresholds): :func:`quality_level` per score and :func:`release_decision`
/ :func:`decide_release` per run live in :mod:`scorers.voice.thresholds` (re-exported here), so the
report can apply them without importing the judge tier.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange
from scorers.voice.thresholds import (
    AB_TEST_AT,
    DEPLOY_AT,
    METRIC_FLOOR,
    Decision,
    ReleaseDecision,
    decide_release,
    quality_level,
    release_decision,
)

from ..._engine import InvalidReply
from ..._prompt import Prompt, build_prompt, load_template
from .._base import JudgeOutput, NonBlank, TurnMetric, parse_json

FORMAT = (
    "Provide your overall score (0.0-1.0) and brief reasoning addressing the key dimensions.\n"
    "Format: the JSON object below, where score is Score X.X and reasoning is the explanation focusing on "
    "emotional intelligence, boundaries, and healthy engagement patterns."
)
_LINE = re.compile(r"^\s*\**Score:?\**\s*:?\s*(\d+(?:\.\d+)?)\s*\|\s*\**Reasoning:?\**\s*:?\s*(\S.*)$", re.DOTALL)


class VoiceJudgeScore(JudgeOutput):
    score: float = Field(ge=0.0, le=1.0)
    reasoning: NonBlank


def parse_score_line(text: str) -> VoiceJudgeScore:
    m = _LINE.match(text.strip())
    if not m:
        raise InvalidReply("reply is not 'Score: X.X | Reasoning: ...'")
    score = float(m.group(1))
    if not 0.0 <= score <= 1.0:
        raise InvalidReply(f"score {score} outside 0.0-1.0")
    return VoiceJudgeScore(score=score, reasoning=m.group(2).strip())


class VoiceJudge(TurnMetric):
    name = "voice_judge"
    rubric = RubricRef(id="voice-companion-judge", version="2.0+j2", source="seed-004")
    output = VoiceJudgeScore
    package = __name__
    max_tokens = 400

    def prompt(self, ex: Exchange) -> Prompt:
        history = [{"role": m.role, "text": m.text} for m in ex.history[-6:]]
        blocks = {
            "user_message": ex.user_text,
            "assistant_response": ex.response,
            "conversation_context": history,
        }
        prompt = build_prompt(
            load_template(self.package), {}, blocks, VoiceJudgeScore, max_tokens=self.max_tokens, rendered=()
        )
        return Prompt(
            prompt.system, prompt.user.replace("Reply with exactly", FORMAT + "\n\nReply with exactly", 1),
            prompt.max_tokens, prompt.json_mode, prompt.schema, prompt.schema_name,
        )  # fmt: skip

    def parse(self, text: str) -> JudgeOutput:
        if _LINE.match(text.strip()):
            return parse_score_line(text)
        return parse_json(VoiceJudgeScore, text)  # type: ignore[return-value]

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        return None, {"score": value.score, "quality_level": quality_level(value.score)}, value.reasoning


METRIC = VoiceJudge()

__all__ = [
    "AB_TEST_AT",
    "DEPLOY_AT",
    "FORMAT",
    "METRIC",
    "METRIC_FLOOR",
    "Decision",
    "ReleaseDecision",
    "VoiceJudge",
    "VoiceJudgeScore",
    "decide_release",
    "parse_score_line",
    "quality_level",
    "release_decision",
]
