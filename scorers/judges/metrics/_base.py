"""What a metric is: a versioned rubric, a prompt template file, a strict output model, and the logic
that turns a validated reply into record fields. One folder per metric holds the three of them."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._engine import InvalidReply
from .._prompt import Prompt, build_prompt, load_template
from .._schema import extract_json, repair, wire_schema

#: How many earlier messages a per-turn judge sees (the reply is judged in its recent context).
HISTORY_MESSAGES = 6


#: A string with at least one non-space character. A pattern, not ``min_length``: strict structured
#: outputs carry ``pattern`` but not string lengths (lengths are bounded by ``max_tokens`` instead).
NonBlank = Annotated[str, Field(pattern=r"\S")]


class JudgeOutput(BaseModel):
    """Base of every judge output model: unknown keys and type coercion are both rejected, and every
    constraint must be visible in its JSON Schema (:func:`scorers.judges._schema.wire_schema`)."""

    model_config = ConfigDict(extra="forbid", strict=True)


def parse_json(model: type[BaseModel], text: str) -> BaseModel:
    """Validate ``text`` as ``model``: the first JSON object in it (fences and preamble tolerated), with
    unknown keys dropped and numeric strings read as numbers (:func:`repair`), then strict validation of
    everything the schema says (enums, ranges, required keys, types)."""
    try:
        obj = extract_json(text)
    except ValueError as e:
        raise InvalidReply(f"reply does not contain a {model.__name__} object: {e}") from None
    try:
        return model.model_validate(repair(obj, wire_schema(model)), strict=True)
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
