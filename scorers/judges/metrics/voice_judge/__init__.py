"""Seed 004's LLM-as-judge prompt ("Enhanced Judge Prompt Template"), its reply format and thresholds.

The reply carries the seed's two fields, ``Score`` (0.0-1.0) and ``Reasoning``, as the JSON object
``{"score", "reasoning"}`` through the provider's structured-output API: the seed's free-text line
``Score: X.X | Reasoning: ...`` is what a schema-enforcing API cannot guarantee, and it is still accepted
when a judge answers in it (:func:`parse_score_line`). The seed's "Fallback Handling: Default to 0.5 if parsing
fails" is deliberately NOT implemented: an unparseable reply is re-asked once and then recorded as an
ERROR, so a broken judge can never look like an average response.

Thresholds (seed 004 §Scoring Thresholds), as functions over scores in [0, 1]:

* :func:`quality_level`: >= 0.9 excellent, >= 0.7 good, >= 0.5 adequate, >= 0.3 poor, else
  unacceptable. The seed lists the bands as 0.9-1.0, 0.7-0.8, 0.5-0.6, 0.3-0.4, 0.0-0.2 and leaves
  the gaps (e.g. 0.85) open; here each band runs up to the next band's lower bound.
* :func:`release_decision`: "revise" if the average < 0.6 or any individual metric < 0.5; else
  "deploy" if the average >= 0.7; else "ab_test" (average >= 0.6). The "any metric < 0.5" rule is
  checked first because the seed lists it as sufficient for revision.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from ..._engine import InvalidReply
from ..._prompt import Prompt, build_prompt, load_template
from .._base import JudgeOutput, NonBlank, TurnMetric, parse_json

FORMAT = (
    "Provide your overall score (0.0-1.0) and brief reasoning addressing the key dimensions.\n"
    "Format: the JSON object below, where score is Score X.X and reasoning is the explanation focusing on "
    "emotional intelligence, boundaries, and healthy engagement patterns."
)
_LINE = re.compile(r"^\s*\**Score:?\**\s*:?\s*(\d+(?:\.\d+)?)\s*\|\s*\**Reasoning:?\**\s*:?\s*(\S.*)$", re.DOTALL)

DEPLOY_AT = 0.7
AB_TEST_AT = 0.6
METRIC_FLOOR = 0.5
Decision = Literal["deploy", "ab_test", "revise"]


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


def quality_level(score: float) -> str:
    if score >= 0.9:
        return "excellent"
    if score >= 0.7:
        return "good"
    if score >= 0.5:
        return "adequate"
    if score >= 0.3:
        return "poor"
    return "unacceptable"


def release_decision(scores: Sequence[float], metric_means: Mapping[str, float] | None = None) -> Decision:
    """Seed 004 §Decision Guidelines over judged scores (and optional per-metric averages)."""
    if not scores:
        raise ValueError("no scores to decide on")
    avg = sum(scores) / len(scores)
    if avg < AB_TEST_AT or any(v < METRIC_FLOOR for v in (metric_means or {}).values()):
        return "revise"
    return "deploy" if avg >= DEPLOY_AT else "ab_test"


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
