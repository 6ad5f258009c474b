"""Batch input formats, all turned into :class:`schemas.Conversation` with file/line provenance.

Accepted:
- JSONL of whole conversations: ``{"conversation_id", "turns": [{"role", "text"}, ...], "context": {...}}``.
- seed 002 benchmark samples: a folder of ``<id>/sample.json`` files, or a ``data.json`` (a list, or
  ``{"samples": [...]}``), each ``{"id", "query", "response", "memory", "required_keys", ...}``; the
  ``response`` is the generated answer being evaluated (seed 002 ``test.py`` output).
- seed 003 ``generations.jsonl``: ``{"sample_id", "user_statement", "assistant_response"}`` (aliases:
  ``user``/``prompt``/``query`` and ``response``/``assistant``).
- the empathy-ratings data set folder (``original_data/`` + ``annotations/``, Kumar et al. 2025): each
  rated item becomes a text-channel conversation ``epitome:<sp_id>`` or ``empatheticdialogues:<conv_id>``
  whose last assistant turn is the rated response.
JSONL lines may mix the three shapes; each line is recognised by its keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from schemas import (
    DEFAULT_LIMITS,
    Conversation,
    FieldError,
    InvalidRecord,
    Limits,
    check_nesting,
    decode_conversation,
)

_USER_ALIASES = ("user_statement", "user", "prompt", "query")
_RESPONSE_ALIASES = ("assistant_response", "response", "assistant")
_SEED002_CONTEXT = ("memory", "required_keys", "forbidden_keys", "neutral_keys")


@dataclass(frozen=True, slots=True)
class Item:
    """One input unit: a conversation, or the reason it was rejected.

    ``line`` is the 1-based line (JSONL) or item number (JSON list); ``where`` says which, for messages.
    """

    source: str
    line: int | None
    where: str
    raw: bytes
    conversation: Conversation | None = None
    error: InvalidRecord | None = None

    def describe_error(self) -> str:
        assert self.error is not None
        where = self.where
        if self.error.errors:
            return "\n".join(f"{where}: field '{e.loc}': {e.msg}" for e in self.error.errors)
        return f"{where}: {self.error.reason}"


def _first(obj: dict[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    for n in names:
        if n in obj:
            return n, obj[n]
    return None, None


def _from_pair(obj: dict[str, Any], id_field: str, limits: Limits) -> Conversation:
    """seed 002 sample or seed 003 generation → a two-message conversation."""
    cid = obj.get(id_field)
    if cid is None or cid == "":
        raise InvalidRecord("missing id", [FieldError(loc=id_field, msg="Field required")], code="invalid_record")
    if isinstance(cid, bool) or not isinstance(cid, str | int):
        raise InvalidRecord(
            "invalid id", [FieldError(loc=id_field, msg="string or integer required")], code="invalid_record"
        )
    _, user = _first(obj, _USER_ALIASES)
    _, response = _first(obj, _RESPONSE_ALIASES)
    errors = []
    if not isinstance(user, str):
        errors.append(FieldError(loc=_USER_ALIASES[0] if id_field == "sample_id" else "query", msg="string required"))
    if not isinstance(response, str):
        errors.append(
            FieldError(
                loc=_RESPONSE_ALIASES[0] if id_field == "sample_id" else "response",
                msg="string required (the assistant reply to evaluate)",
            )
        )
    if errors:
        raise InvalidRecord("incomplete sample", errors, code="invalid_record")
    context: dict[str, Any] = {k: obj[k] for k in _SEED002_CONTEXT if k in obj}
    for src, dst in (("emotions", "emotions"), ("emotion_distribution", "emotions"), ("persona", "persona")):
        if src in obj:
            context[dst] = obj[src]
    conv: dict[str, Any] = {
        "conversation_id": str(cid),
        "turns": [{"role": "user", "text": user}, {"role": "assistant", "text": response}],
    }
    if context or "channel" in obj or "locale" in obj:
        context.update({k: obj[k] for k in ("channel", "locale") if k in obj})
        conv["context"] = context
    return decode_conversation(orjson.dumps(conv), limits)


def parse_object(obj: Any, raw: bytes, limits: Limits) -> Conversation:
    """Recognise one JSON object by its keys and validate it."""
    if not isinstance(obj, dict):
        raise InvalidRecord(f"expected a JSON object, got {type(obj).__name__}", code="not_an_object")
    check_nesting(obj, limits)  # before anything re-serialises or stringifies parts of it
    if "turns" in obj or "conversation_id" in obj:
        return decode_conversation(raw, limits)
    if "sample_id" in obj:
        return _from_pair(obj, "sample_id", limits)
    if "id" in obj and ("query" in obj or "response" in obj):
        return _from_pair(obj, "id", limits)
    raise InvalidRecord(
        "unrecognised record: expected a conversation (conversation_id, turns), a seed 002 sample "
        "(id, query, response) or a seed 003 generation (sample_id, user_statement, assistant_response)",
        code="invalid_record",
    )


def _jsonl(path: Path, limits: Limits) -> Iterator[Item]:
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            raw = line.rstrip(b"\r\n")
            if not raw.strip():
                continue
            try:
                if len(raw) > limits.max_payload_bytes:
                    raise InvalidRecord(
                        f"line is {len(raw)} bytes, over the limit of {limits.max_payload_bytes}",
                        code="payload_too_large",
                    )
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError as e:
                    raise InvalidRecord(f"malformed JSON: {e}", code="malformed_json") from None
                item = Item(str(path), lineno, f"{path}:{lineno}", raw, conversation=parse_object(obj, raw, limits))
            except InvalidRecord as e:
                item = Item(str(path), lineno, f"{path}:{lineno}", raw, error=e)
            yield item


def _json_samples(path: Path, limits: Limits) -> Iterator[Item]:
    raw = path.read_bytes()
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        yield Item(str(path), None, str(path), raw, error=InvalidRecord(f"malformed JSON: {e}", code="malformed_json"))
        return
    single = isinstance(data, dict) and "samples" not in data
    if isinstance(data, dict):
        data = [data] if single else data["samples"]
    if not isinstance(data, list):
        err = InvalidRecord("expected a list of samples or {'samples': [...]}", code="invalid_record")
        yield Item(str(path), None, str(path), raw, error=err)
        return
    for i, obj in enumerate(data, start=1):
        try:
            item_raw = orjson.dumps(obj)
        except orjson.JSONEncodeError:  # nested beyond orjson's limit: keep the file's bytes (rejected below)
            item_raw = raw
        where = str(path) if single else f"{path}: item {i}"
        try:
            item = Item(
                str(path), None if single else i, where, item_raw, conversation=parse_object(obj, item_raw, limits)
            )
        except InvalidRecord as e:
            item = Item(str(path), None if single else i, where, item_raw, error=e)
        yield item


def _empathy_ratings(root: Path, limits: Limits) -> Iterator[Item]:
    from .calibration import load_empathy_ratings

    for ds in load_empathy_ratings(root):
        for n, (item_id, dialogue) in enumerate(sorted(ds.dialogues.items()), start=1):
            obj = {
                "conversation_id": f"{ds.key}:{item_id}",
                "turns": [{"role": role, "text": text} for role, text in dialogue],
                "context": {"channel": "text"},
            }
            raw = orjson.dumps(obj)
            where = f"{root} ({ds.key} item {item_id})"
            try:
                yield Item(str(root), n, where, raw, conversation=decode_conversation(raw, limits))
            except InvalidRecord as e:
                yield Item(str(root), n, where, raw, error=e)


def read_items(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> Iterator[Item]:
    """Yield every conversation (or rejection) found at ``path`` — a file or a seed 002 folder."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or directory")
    if p.is_dir() and (p / "original_data").is_dir() and (p / "annotations").is_dir():
        yield from _empathy_ratings(p, limits)
        return
    if p.is_dir():
        samples = sorted(p.glob("*/sample.json"))
        if not samples and (p / "data.json").exists():
            yield from _json_samples(p / "data.json", limits)
            return
        if not samples:
            samples = sorted(p.glob("**/sample.json"))
        if not samples:
            raise FileNotFoundError(f"{p}: a folder must hold <id>/sample.json files or data.json (seed 002)")
        for s in samples:
            yield from _json_samples(s, limits)
        return
    if p.suffix == ".json":
        yield from _json_samples(p, limits)
    else:
        yield from _jsonl(p, limits)
