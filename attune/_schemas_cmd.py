"""``attune schemas``: JSON Schema files for producers and consumers in other languages.

The files follow the compatibility policy of docs/schemas.md: every object is open (no
``additionalProperties: false``), so a record from a newer minor version, which may only add fields,
still validates against the schema a consumer already has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schemas import (
    ALL_RECORDS,
    SCHEMA_MINOR,
    SCHEMA_VERSION,
    Conversation,
    ConversationEnd,
    ConversationReplay,
    Turn,
)

#: Records producers send: their schema is the validation one (optional fields may be left out); outputs
#: get the serialization one (attune always writes every field).
_INPUTS = (Turn, ConversationEnd, ConversationReplay, Conversation)


def _open(node: Any) -> Any:
    """Drop ``additionalProperties: false`` everywhere (the models forbid extras when attune builds a record,
    which says nothing about what a reader must accept)."""
    if isinstance(node, dict):
        return {k: _open(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)}
    if isinstance(node, list):
        return [_open(v) for v in node]
    return node


def record_schema(model: type) -> dict[str, Any]:
    kind = model.model_fields["kind"].default  # type: ignore[attr-defined]
    schema = _open(model.model_json_schema(mode="validation" if model in _INPUTS else "serialization"))  # type: ignore[attr-defined]
    schema["$id"] = f"https://attune.dev/schemas/v{SCHEMA_VERSION}/{kind}.schema.json"
    schema["x-attune-schema-version"] = f"{SCHEMA_VERSION}.{SCHEMA_MINOR}"
    schema["$comment"] = (
        "Open content model: readers must accept fields they do not know (a minor version only adds). "
        "Compatibility policy: docs/schemas.md."
    )
    return schema


def write_schemas(out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for model in ALL_RECORDS:
        kind = model.model_fields["kind"].default
        path = out / f"{kind}.schema.json"
        path.write_text(json.dumps(record_schema(model), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written
