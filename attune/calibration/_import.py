"""``attune annotate import``: validate filled seed 003 CSVs and keep every valid row.

Every problem is collected (not just the first) and names its file, line and column, so one round
trip with a rater fixes them all.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._models import CSV_HEADER, DIMENSIONS, Annotation, BatchKey

_EXTREMES = frozenset({1, 5})


@dataclass(frozen=True, slots=True)
class CsvError:
    """One validation failure. ``line`` is the physical CSV line (the header is line 1)."""

    file: str
    line: int | None
    column: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        col = f" column '{self.column}':" if self.column else ""
        return f"{where}:{col} {self.message}"


@dataclass
class ImportResult:
    annotations: list[Annotation] = field(default_factory=list)
    errors: list[CsvError] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def load_key(path: str | Path) -> BatchKey:
    return BatchKey.model_validate_json(Path(path).read_bytes())


def find_csvs(inputs: Iterable[str | Path]) -> list[Path]:
    """CSV files named directly, or every ``*.csv`` in a named folder (sorted, for stable messages)."""
    out: list[Path] = []
    for p in map(Path, inputs):
        if p.is_dir():
            out.extend(sorted(p.glob("*.csv")))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
    return out


def _score(raw: str) -> tuple[int | None, str | None]:
    text = raw.strip()
    if not text:
        return None, "blank score (seed 003 §7: fill every score cell)"
    try:
        value = int(text)
    except ValueError:
        return None, f"'{text}' is not an integer 1-5"
    if not 1 <= value <= 5:
        return None, f"{value} is outside the 1-5 scale"
    return value, None


def _check_file(path: Path, key: BatchKey, result: ImportResult, seen_annotators: dict[str, Path]) -> None:
    name = str(path)

    def err(line: int | None, column: str | None, message: str) -> None:
        result.errors.append(CsvError(name, line, column, message))

    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            err(None, None, "empty file")
            return
        if tuple(h.strip() for h in header) != CSV_HEADER:
            err(1, None, f"header must be exactly {','.join(CSV_HEADER)} (got {','.join(header)})")
            return
        annotator: str | None = None
        seen_ids: dict[str, int] = {}
        while True:
            line = reader.line_num + 1
            row = next(reader, None)
            if row is None:
                break
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(CSV_HEADER):
                err(line, None, f"expected {len(CSV_HEADER)} cells, found {len(row)}")
                continue
            cells = dict(zip(CSV_HEADER, row, strict=True))
            ok = True
            sid = cells["sample_id"].strip()
            if sid not in key.samples:
                err(line, "sample_id", f"unknown sample_id '{sid}' (not in this batch)")
                ok = False
            elif sid in seen_ids:
                err(line, "sample_id", f"sample_id '{sid}' already rated on line {seen_ids[sid]}")
                ok = False
            else:
                seen_ids[sid] = line
            aid = cells["annotator_id"].strip()
            if not aid:
                err(line, "annotator_id", "blank annotator_id")
                ok = False
            elif annotator is None:
                annotator = aid
            elif aid != annotator:
                err(line, "annotator_id", f"'{aid}' differs from '{annotator}' above: one annotator per file")
                ok = False
            scores: dict[str, int] = {}
            for dim in DIMENSIONS:
                value, problem = _score(cells[dim])
                if problem:
                    err(line, dim, problem)
                    ok = False
                else:
                    assert value is not None
                    scores[dim] = value
            extremes = [d for d, v in scores.items() if v in _EXTREMES]
            notes = cells["notes"].strip()
            if extremes and not notes:
                err(line, "notes", f"notes required when a score is 1 or 5 (seed 003 §3.1): {', '.join(extremes)}")
                ok = False
            if ok:
                ref = key.samples[sid]
                result.annotations.append(
                    Annotation(
                        sample_id=sid,
                        annotator_id=aid,
                        conversation_id=ref.conversation_id,
                        turn_index=ref.turn_index,
                        duplicate_of=key.duplicates.get(sid),
                        notes=notes,
                        source=f"{name}:{line}",
                        **scores,
                    )
                )
    if annotator is not None:
        if annotator in seen_annotators:
            err(None, "annotator_id", f"annotator '{annotator}' also has a file: {seen_annotators[annotator]}")
        seen_annotators[annotator] = path
    missing = [s for s in key.samples if s not in seen_ids]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        err(None, "sample_id", f"{len(missing)} sample(s) of the batch not rated: {shown}")


def import_annotations(inputs: Sequence[str | Path], key: BatchKey) -> ImportResult:
    """Validate every CSV against the batch key; valid rows become :class:`Annotation` records."""
    result = ImportResult(files=find_csvs(inputs))
    if not result.files:
        result.errors.append(CsvError(", ".join(map(str, inputs)), None, None, "no CSV file found"))
    seen: dict[str, Path] = {}
    for path in result.files:
        _check_file(path, key, result, seen)
    return result
