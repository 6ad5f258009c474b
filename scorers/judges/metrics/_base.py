"""What a metric is: a versioned rubric, a prompt template file, a strict output model, and the logic
that turns a validated reply into record fields. One folder per metric holds the three of them."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._engine import InvalidReply
from .._prompt import Prompt, build_prompt, load_template

#: How many earlier messages a per-turn judge sees (the reply is judged in its recent context).
HISTORY_MESSAGES = 6

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


class JudgeOutput(BaseModel):
    """Base of every judge output model: unknown keys and type coercion are both rejected."""

    model_config = ConfigDict(extra="forbid", strict=True)


def parse_json(model: type[BaseModel], text: str) -> BaseModel:
    """Strictly validate ``text`` as ``model``. One Markdown code fence around the object is tolerated
    (models add it despite instructions); nothing inside the object is."""
    m = _FENCE.match(text)
    if m:
        text = m.group(1)
    try:
        return model.model_validate_json(text.strip())
    except ValidationError as e:
        errs = "; ".join(f"{'.'.join(map(str, x['loc'])) or '<root>'}: {x['msg']}" for x in e.errors()[:5])
        raise InvalidReply(f"reply does not match {model.__name__}: {errs}") from None


def exchange_payload(ex: Exchange) -> dict[str, object]:
    history = [{"role": m.role, "text": m.text} for m in ex.history[-HISTORY_MESSAGES:]]
    return {"earlier_messages": history, "user_message": ex.user_text, "assistant_response": ex.response}


class TurnMetric:
    """A per-turn judge metric. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    rubric: ClassVar[RubricRef]
    output: ClassVar[type[JudgeOutput]]
    package: ClassVar[str]
    max_tokens: ClassVar[int] = 700
    #: True for metrics with no LLM call (relevance); the tier calls :meth:`compute` instead.
    local: ClassVar[bool] = False

    def applies(self, ex: Exchange) -> bool:
        """False when the inputs the metric needs are absent (e.g. no memory for memory utilization)."""
        return True

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        """The seed's fixed result for an empty response, produced without calling a judge."""
        return None

    def variables(self, ex: Exchange) -> dict[str, str]:
        return {}

    def blocks(self, ex: Exchange) -> dict[str, object]:
        return {"exchange": exchange_payload(ex)}

    def prompt(self, ex: Exchange) -> Prompt:
        return build_prompt(
            load_template(self.package), self.variables(ex), self.blocks(ex), self.output, max_tokens=self.max_tokens
        )

    def parse(self, text: str) -> JudgeOutput:
        return parse_json(self.output, text)  # type: ignore[return-value]

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        """(seed-000 scores or None, metric details, reasoning) for the TurnJudgment."""
        details = value.model_dump(mode="json")
        reasoning = str(details.pop("explanation", "") or details.pop("reasoning", ""))
        return None, details, reasoning


def dumps_compact(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
