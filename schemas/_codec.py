"""orjson encoding of records and strict decoding of inputs with clear, field-level reasons."""

from __future__ import annotations

import base64
import logging
import threading
from dataclasses import dataclass

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from ._common import Metadata, stable_id
from ._inputs import Conversation, ConversationEnd, ConversationReplay, Turn
from ._outputs import DeadLetter, FieldError, OutputRecord, ReasonCode


@dataclass(frozen=True, slots=True)
class Limits:
    """Input limits; anything beyond them is rejected with a reason (dead-letter), never truncated.

    ``max_json_depth`` bounds how deeply objects/arrays may nest (the record itself is level 1). It stays
    well under orjson's serialisation limit (254) and pydantic's (255), so an accepted record can always be
    written back out (outputs, table changelogs); deeper inputs used to be accepted and then crash there.
    """

    max_payload_bytes: int = 1_048_576
    max_text_chars: int = 20_000
    max_turns_per_conversation: int = 2_000
    max_json_depth: int = 32

    def __post_init__(self) -> None:
        if not 2 <= self.max_json_depth <= _MAX_SERIALISABLE_DEPTH:
            raise ValueError(f"max_json_depth must be in [2, {_MAX_SERIALISABLE_DEPTH}], got {self.max_json_depth}")


#: orjson refuses to serialise deeper than 254 levels; leave room for the envelopes records are stored in.
_MAX_SERIALISABLE_DEPTH = 200


DEFAULT_LIMITS = Limits()


class InvalidRecord(ValueError):
    """An input that cannot be accepted; ``reason`` is one line, ``errors`` name the fields, ``code`` is the
    reason as a fixed value (metrics and consumers use it; never text taken from the input)."""

    def __init__(self, reason: str, errors: list[FieldError] | None = None, code: ReasonCode = "other") -> None:
        super().__init__(reason)
        self.reason = reason
        self.errors = errors or []
        self.code: ReasonCode = code

    def describe(self) -> str:
        if not self.errors:
            return self.reason
        return "; ".join(f"{e.loc}: {e.msg}" for e in self.errors)


_OUTPUT: TypeAdapter[OutputRecord] = TypeAdapter(OutputRecord)
_METADATA: TypeAdapter[dict] = TypeAdapter(Metadata)

log = logging.getLogger("attune.schemas")

#: Distinct unknown field names logged per process; beyond it one line says more were seen (a producer
#: sending a new name on every message must not flood the log).
MAX_LOGGED_UNKNOWN = 100
_logged_unknown: set[str] = set()
_logged_lock = threading.Lock()


def unknown_fields(rec: BaseModel) -> list[str]:
    """Dotted paths of the fields of a decoded input that no schema declares (``context.source``,
    ``turns[].confidence``), sorted. Decoding keeps them (``model_extra``); they are never written into
    output records: slicing by producer fields is what ``metadata`` is for.

    Written out for the input models' nesting (context, its persona, a conversation's messages) rather than
    a generic walk: it runs on every turn, and the walk cost a large share of a decode (docs/benchmarks.md,
    "Streaming", "Figures formerly in code comments").
    """
    out: list[str] = []
    if rec.__pydantic_extra__:
        out += rec.__pydantic_extra__
    # getattr with a default would be slow for a missing attribute (pydantic's __getattr__ builds an error;
    # docs/benchmarks.md, "2026-11-25: the cost of the forward-compatible contract (issue #15 parts 1-2)")
    ctx = rec.context if isinstance(rec, Turn | Conversation) else None
    if ctx is not None:
        if ctx.__pydantic_extra__:
            out += ("context." + k for k in ctx.__pydantic_extra__)
        if ctx.persona is not None and ctx.persona.__pydantic_extra__:
            out += ("context.persona." + k for k in ctx.persona.__pydantic_extra__)
    for m in rec.turns if isinstance(rec, Conversation) else ():
        if m.__pydantic_extra__:
            out += ("turns[]." + k for k in m.__pydantic_extra__)
    return sorted(set(out)) if out else out


def _note_unknown(rec: BaseModel) -> None:
    """Log each unknown field name once per process (counting them is the stream's metric)."""
    names = unknown_fields(rec)
    if not names or _logged_unknown.issuperset(names):
        return
    with _logged_lock:
        if len(_logged_unknown) > MAX_LOGGED_UNKNOWN:
            return
        new = [n for n in names if n not in _logged_unknown]
        _logged_unknown.update(new)
        full = len(_logged_unknown) > MAX_LOGGED_UNKNOWN
    if not new:
        return
    log.warning(
        "accepted %s record with unknown field(s) %s: kept, not scored, not copied to outputs%s",
        getattr(rec, "kind", "input"),
        ", ".join(repr(n[:80]) for n in new),
        f"; more than {MAX_LOGGED_UNKNOWN} names seen, further new names are not logged" if full else "",
    )


def encode(record: BaseModel) -> bytes:
    """Serialise any record with orjson (datetimes as RFC 3339)."""
    return orjson.dumps(record.model_dump(mode="python"), option=orjson.OPT_UTC_Z)


def _field_errors(exc: ValidationError) -> list[FieldError]:
    out = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(record)"
        out.append(FieldError(loc=loc, msg=err["msg"]))
    return out


def _load_object(raw: bytes | str, limits: Limits) -> dict:
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > limits.max_payload_bytes:
        raise InvalidRecord(
            f"payload is {size} bytes, over the limit of {limits.max_payload_bytes}", code="payload_too_large"
        )
    if isinstance(raw, bytes):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidRecord(f"payload is not valid UTF-8 (byte {e.start})", code="invalid_utf8") from None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise InvalidRecord(f"malformed JSON: {e}", code="malformed_json") from None
    # Nesting depth never exceeds the number of '{' and '[' in the text (a C-speed count): only records
    # with more of them than the limit need the walk, which would otherwise add its cost to every ordinary turn
    # (docs/benchmarks.md, "Streaming", "Figures formerly in code comments").
    if _openers(raw) > limits.max_json_depth:
        check_nesting(obj, limits)
    if not isinstance(obj, dict):
        raise InvalidRecord(f"expected a JSON object, got {type(obj).__name__}", code="not_an_object")
    return obj


def _openers(raw: bytes | str) -> int:
    if isinstance(raw, bytes):
        return raw.count(b"{") + raw.count(b"[")
    return raw.count("{") + raw.count("[")


def check_nesting(obj: object, limits: Limits = DEFAULT_LIMITS) -> None:
    """Reject JSON values nested deeper than ``limits.max_json_depth`` (iterative: no recursion on input)."""
    stack: list[tuple[object, int, tuple[str, ...]]] = [(obj, 1, ())]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, dict):
            children = list(value.items())
        elif isinstance(value, list):
            children = list(enumerate(value))
        else:
            continue
        if depth > limits.max_json_depth:
            loc = ".".join(path) if len(path) < 4 else ".".join(path[:4]) + "..."
            raise InvalidRecord(
                f"JSON nested deeper than {limits.max_json_depth} levels",
                [FieldError(loc=loc or "(record)", msg=f"nesting deeper than {limits.max_json_depth} levels")],
                code="too_deep",
            )
        for k, v in children:
            if isinstance(v, dict | list):
                stack.append((v, depth + 1, (*path, str(k)[:40]) if len(path) < 5 else path))


def _check_text(text: str, loc: str, limits: Limits) -> None:
    if len(text) > limits.max_text_chars:
        raise InvalidRecord(
            "text too long",
            [FieldError(loc=loc, msg=f"{len(text)} characters, over the limit of {limits.max_text_chars}")],
            code="text_too_long",
        )


#: The records of the turns topic by ``kind`` (an absent kind is a turn).
_TURN_EVENTS: dict[str, type[Turn | ConversationEnd | ConversationReplay]] = {
    "turn": Turn,
    "conversation_end": ConversationEnd,
    "conversation_replay": ConversationReplay,
}


def decode_turn_event(raw: bytes | str, limits: Limits = DEFAULT_LIMITS) -> Turn | ConversationEnd | ConversationReplay:
    """Decode one message of the turns topic. Raises InvalidRecord naming the failing field."""
    obj = _load_object(raw, limits)
    kind = obj.setdefault("kind", "turn")
    # Dispatch on the tag ourselves: a plain union would report every branch's errors for one bad field.
    known = kind if isinstance(kind, str) and kind in _TURN_EVENTS else None  # a list or dict is not hashable
    model = _TURN_EVENTS[known] if known else Turn
    try:
        # extra="allow": a field this version does not know is kept, not a rejection (forward compatible).
        rec = model.model_validate(obj, extra="allow")
    except ValidationError as e:
        label = known or "turn event"  # never echo arbitrary input
        raise InvalidRecord(f"invalid {label} record", _field_errors(e), code="invalid_record") from None
    if isinstance(rec, Turn):
        _check_text(rec.text, "text", limits)
    _note_unknown(rec)
    return rec


def decode_conversation(raw: bytes | str, limits: Limits = DEFAULT_LIMITS) -> Conversation:
    """Decode one whole conversation (a line of ``attune evaluate`` input)."""
    obj = _load_object(raw, limits)
    obj.setdefault("kind", "conversation")
    try:
        conv = Conversation.model_validate(obj, extra="allow")
    except ValidationError as e:
        raise InvalidRecord("invalid conversation record", _field_errors(e), code="invalid_record") from None
    if len(conv.turns) > limits.max_turns_per_conversation:
        raise InvalidRecord(
            "too many turns",
            [FieldError(loc="turns", msg=f"{len(conv.turns)} turns, limit {limits.max_turns_per_conversation}")],
            code="too_many_turns",
        )
    for i, m in enumerate(conv.turns):
        _check_text(m.text, f"turns.{i}.text", limits)
    _note_unknown(conv)
    return conv


def decode_output(raw: bytes | str) -> OutputRecord:
    """Decode any output record (for consumers, ``attune tail`` and reports).

    Fields a newer minor version added are accepted and kept in ``model_extra`` (docs/schemas.md).
    """
    return _OUTPUT.validate_json(raw, extra="allow")


def _payload_metadata(raw: bytes) -> dict:
    """The metadata of a rejected payload when that part of it is valid, else {} (dead letters, best effort)."""
    try:
        obj = orjson.loads(raw)
        return _METADATA.validate_python(obj.get("metadata")) if isinstance(obj, dict) and obj.get("metadata") else {}
    except (orjson.JSONDecodeError, ValidationError, RecursionError):
        return {}


def dead_letter(
    payload: bytes | str,
    exc: InvalidRecord,
    *,
    source: str,
    partition: int | None = None,
    offset: int | None = None,
) -> DeadLetter:
    """Wrap a rejected input losslessly. The id is stable for the same source position and bytes."""
    raw = payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else payload
    return DeadLetter(
        record_id=stable_id("dead_letter", source, partition, offset, raw[:4096]),
        source=source,
        partition=partition,
        offset=offset,
        reason=exc.reason,
        reason_code=exc.code,
        errors=exc.errors,
        payload_b64=base64.b64encode(raw).decode("ascii"),
        payload_preview=raw[:1200].decode("utf-8", "replace")[:300],
        metadata=_payload_metadata(raw) if len(raw) <= DEFAULT_LIMITS.max_payload_bytes else {},
    )
