"""One output schema per judge reply: the object sent to the provider's API and the one validated.

Why one object: a provider that enforces a schema (OpenAI ``response_format`` json_schema with
``strict``, Anthropic forced tool use) may return any value that schema allows. If attune then validated
something stricter (a Python validator the JSON Schema cannot show), a perfectly obedient judge would end
as ERROR. So every judge output model must be fully described by its JSON Schema, in the subset OpenAI's
strict mode accepts; :func:`wire_schema` refuses a model that is not (checked for every metric in
``tests/test_judge_structured.py``), and the same dict goes into the prompt, the API request and the
validator's model.

Tolerance before strictness (:func:`extract_json`, :func:`repair`): judges without API enforcement wrap
objects in Markdown fences, put a preamble before them ("Here is my assessment:"), add a key or write a
number as a string. None of that can change what a known field says, so it is undone before the strict
validation; a value outside its enum or range, a missing key or a wrong type still fails (re-ask, then
ERROR).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import BaseModel

#: JSON Schema keywords OpenAI's strict structured outputs accept (platform docs, "Supported schemas");
#: Anthropic's tool ``input_schema`` accepts them all. ``minLength``/``maxLength`` and ``default`` are not
#: in it, so output models bound strings by ``max_tokens`` and require every field.
STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref",
        "$defs", "description", "title", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "multipleOf", "minItems", "maxItems", "pattern", "format",
    }
)  # fmt: skip
_NAME = re.compile(r"[^a-zA-Z0-9_-]")


class SchemaNotPortable(TypeError):
    """An output model whose constraints a provider's structured-output mode cannot carry."""


def _check(node: Any, where: str) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    _check(sub, f"{where}.{name}")
                continue
            if key not in STRICT_KEYWORDS:
                raise SchemaNotPortable(f"{where}: keyword {key!r} is not carried by strict structured outputs")
            _check(value, where)
        if node.get("type") == "object":
            props = set(node.get("properties", {}))
            if node.get("additionalProperties") is not False:
                raise SchemaNotPortable(f"{where}: objects must forbid additional properties")
            if set(node.get("required", [])) != props:
                raise SchemaNotPortable(f"{where}: every property must be required (no defaults)")
    elif isinstance(node, list):
        for item in node:
            _check(item, where)


@functools.cache
def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of ``model`` exactly as sent to providers; raises :class:`SchemaNotPortable` when
    the model's constraints are not all in it (validators, string lengths, defaults)."""
    validators = getattr(model, "__pydantic_decorators__", None)
    if validators is not None and (validators.field_validators or validators.model_validators):
        raise SchemaNotPortable(f"{model.__name__}: validators are invisible to the provider's schema")
    schema = model.model_json_schema()
    _check(schema, model.__name__)
    for name, sub in schema.get("$defs", {}).items():
        _check(sub, name)
    return schema


def schema_name(model: type[BaseModel]) -> str:
    """The name OpenAI (``^[a-zA-Z0-9_-]{1,64}$``) and Anthropic tool names accept."""
    return _NAME.sub("_", model.__name__)[:64]


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)\n?\s*```", re.DOTALL)
_DECODER = json.JSONDecoder()


def extract_json(text: str) -> Any:
    """The first JSON object in ``text``: inside a Markdown fence if there is one, after any preamble,
    ignoring trailing prose. Raises ``ValueError`` when there is none."""
    m = _FENCE.search(text)
    if m:
        text = m.group(1)
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    raise ValueError("no JSON object in the reply")


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def repair(value: Any, schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """Undo harmless drift against ``schema``: drop keys it does not define, turn numeric strings into
    numbers where it wants a number. Nothing else changes, so strict validation still decides."""
    defs = schema.get("$defs", {}) if defs is None else defs
    schema = _resolve(schema, defs)
    if "anyOf" in schema:
        return value  # ambiguous which branch was meant: leave it to strict validation
    kind = schema.get("type")
    if kind == "object" and isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: repair(v, props[k], defs) for k, v in value.items() if k in props}
    if kind == "array" and isinstance(value, list) and "items" in schema:
        return [repair(v, schema["items"], defs) for v in value]
    if kind in ("number", "integer") and isinstance(value, str):
        try:
            num = float(value.strip())
        except ValueError:
            return value
        if kind == "integer" and num.is_integer():
            return int(num)
        return num if kind == "number" else value
    return value
