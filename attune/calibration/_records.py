"""Reading kind-tagged JSONL: attune output records and stored annotations, line by line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import ValidationError

from schemas import OutputRecord, decode_output

from ._models import Annotation


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that is neither an output record nor an annotation; reported, never silently dropped."""

    where: str
    reason: str


def read_jsonl(paths: Iterable[str | Path]) -> Iterator[OutputRecord | Annotation | BadLine]:
    """Yield every record of every file; the ``kind`` field says which model validates a line."""
    for p in paths:
        path = Path(p)
        with path.open("rb") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    kind = orjson.loads(line).get("kind")
                    if kind == "annotation":
                        yield Annotation.model_validate_json(line)
                    else:
                        yield decode_output(line)
                except (orjson.JSONDecodeError, AttributeError) as e:
                    yield BadLine(where, f"not a JSON object: {e}")
                except ValidationError as e:
                    first = e.errors(include_url=False)[0]
                    loc = ".".join(str(x) for x in first["loc"])
                    yield BadLine(where, f"not a record ({loc}: {first['msg']})")
