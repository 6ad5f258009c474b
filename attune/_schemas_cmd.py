"""``attune schemas``: JSON Schema files for producers and consumers in other languages."""

from __future__ import annotations

import json
from pathlib import Path

from schemas import ALL_RECORDS


def write_schemas(out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for model in ALL_RECORDS:
        kind = model.model_fields["kind"].default
        path = out / f"{kind}.schema.json"
        schema = model.model_json_schema(mode="serialization")
        schema["$id"] = f"https://attune.dev/schemas/{kind}.schema.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written
