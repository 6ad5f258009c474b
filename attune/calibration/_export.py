"""``attune annotate export``: a seed 003 annotation batch from evaluated records.

The batch is what raters receive (one CSV per annotator plus ``generations.jsonl``) and what the
coordinator keeps (``duplicates.key.json``). Everything is a pure function of the inputs and ``seed``.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from attune._formats import read_items
from schemas import Message, TurnScore, stable_id
from scorers import Transcript

from ._models import CSV_HEADER, BatchKey, ItemRef
from ._records import BadLine, read_jsonl

GENERATIONS = "generations.jsonl"
KEY_FILE = "duplicates.key.json"


class ExportError(ValueError):
    """The batch cannot be built (nothing to annotate, too many duplicates...)."""


@dataclass(frozen=True, slots=True)
class Sample:
    sample_id: str
    item: ItemRef
    user_statement: str
    assistant_response: str


@dataclass
class ExportResult:
    out_dir: Path
    csv_files: list[Path]
    generations: Path
    key: Path
    n_items: int
    n_duplicates: int
    warnings: list[str] = field(default_factory=list)


def csv_name(annotator: str) -> str:
    """Seed 003 §7: ``{your_annotator_id}_annotations.csv``."""
    return f"{annotator}_annotations.csv"


def _evaluated_items(records: Iterable[str | Path], warnings: list[str]) -> list[ItemRef]:
    """Assistant turns that have a cheap-tier score, in file order, each once."""
    seen: dict[tuple[str, int], None] = {}
    for rec in read_jsonl(records):
        if isinstance(rec, BadLine):
            warnings.append(f"{rec.where}: skipped, {rec.reason}")
        elif isinstance(rec, TurnScore):
            seen.setdefault((rec.conversation_id, rec.turn_index), None)
    return [ItemRef(conversation_id=c, turn_index=t) for c, t in seen]


def _texts(conversations: Iterable[str | Path], warnings: list[str]) -> dict[tuple[str, int], tuple[str, str]]:
    """(conversation_id, turn_index) -> (user statement, assistant response), numbered as ``evaluate`` does.

    The user statement is the nearest earlier user message, the same rule the evaluator's Exchange uses.
    """
    out: dict[tuple[str, int], tuple[str, str]] = {}
    for path in conversations:
        for it in read_items(path):
            if it.conversation is None:
                warnings.append(f"{it.where}: skipped, {it.error.describe() if it.error else 'invalid'}")
                continue
            prior = Transcript()
            for turn in it.conversation.as_turns():
                if turn.role == "assistant":
                    earlier = prior.before(turn.turn_index)
                    user = next((m.text for m in reversed(earlier) if m.role == "user"), "")
                    out[(turn.conversation_id, turn.turn_index)] = (user, turn.text)
                prior.add(Message(role=turn.role, text=turn.text, turn_index=turn.turn_index))
    return out


def _spread(order: list[str], duplicates: dict[str, str], rng: random.Random) -> list[str]:
    """Shuffle so no duplicate sits close to its original (a rater would recognise it).

    The minimum gap is a quarter of the batch, at most 5; a few reshuffles almost always suffice and
    the best order found is kept otherwise.
    """
    gap = min(5, len(order) // 4)
    best, best_bad = list(order), len(order) + 1
    for _ in range(200):
        rng.shuffle(order)
        pos = {s: i for i, s in enumerate(order)}
        bad = sum(abs(pos[d] - pos[o]) < gap for d, o in duplicates.items())
        if bad < best_bad:
            best, best_bad = list(order), bad
        if bad == 0:
            break
    return best


def export_batch(
    records: Sequence[str | Path],
    conversations: Sequence[str | Path],
    out_dir: str | Path,
    *,
    annotators: Sequence[str] = ("a1", "a2"),
    duplicates: int = 10,
    limit: int | None = None,
    seed: int = 0,
) -> ExportResult:
    """Write the CSVs, ``generations.jsonl`` and the key for one batch; returns what was written."""
    if not annotators or len(set(annotators)) != len(annotators) or any(not a.strip() for a in annotators):
        raise ExportError(f"annotator ids must be distinct and non-empty, got {list(annotators)}")
    warnings: list[str] = []
    items = _evaluated_items(records, warnings)
    texts = _texts(conversations, warnings)
    missing = [i for i in items if (i.conversation_id, i.turn_index) not in texts]
    if missing:
        shown = ", ".join(f"{m.conversation_id}#{m.turn_index}" for m in missing[:5])
        warnings.append(f"{len(missing)} scored turn(s) have no text in the conversations input: {shown}")
    items = [i for i in items if (i.conversation_id, i.turn_index) in texts]
    if not items:
        raise ExportError("no scored assistant turn found in both the records and the conversations input")
    rng = random.Random(seed)
    if limit is not None and limit < len(items):
        items = rng.sample(items, limit)
    if duplicates < 0 or duplicates > len(items):
        raise ExportError(f"--duplicates must be between 0 and the number of items ({len(items)}), got {duplicates}")

    def new_id(item: ItemRef, copy: int) -> str:
        return "s" + stable_id("annotation-sample", seed, item.conversation_id, item.turn_index, copy)[:12]

    samples = {new_id(i, 0): i for i in items}
    originals = list(samples)
    dup_map: dict[str, str] = {}
    for orig in rng.sample(originals, duplicates):
        dup_id = new_id(samples[orig], 1)
        dup_map[dup_id] = orig
        samples[dup_id] = samples[orig]
    order = _spread(list(samples), dup_map, rng)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    gen_path = out / GENERATIONS
    with gen_path.open("wb") as gen:
        for sid in order:
            user, response = texts[(samples[sid].conversation_id, samples[sid].turn_index)]
            row = {"sample_id": sid, "user_statement": user, "assistant_response": response}
            gen.write(orjson.dumps(row) + b"\n")
    csv_paths = []
    for annotator in annotators:
        path = out / csv_name(annotator)
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(CSV_HEADER)
            for sid in order:
                w.writerow([sid, annotator, "", "", "", "", "", ""])
        csv_paths.append(path)
    key = BatchKey(seed=seed, annotators=list(annotators), samples=samples, duplicates=dup_map)
    key_path = out / KEY_FILE
    key_path.write_text(key.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return ExportResult(out, csv_paths, gen_path, key_path, len(items), len(dup_map), warnings)
