"""The per-conversation logic of the stream, independent of Faust so it can be tested and reused.

:class:`TurnProcessor` takes a batch of raw messages from the turns and control topics and returns the
output records to send plus the table writes to apply *after* those outputs are delivered. That order
is what makes a crash safe under at-least-once delivery: a table never records a turn as processed
whose outputs were not acknowledged by the broker, and a redelivered turn either finds nothing (and is
processed again, producing identical ids) or finds itself buffered (and is skipped).

State lives in two tables (see :class:`StateStore`):

* ``turns``: buffered turns in small fixed chunks keyed ``conversation_id:chunk`` (:data:`CHUNK` turns
  each) — a turn rewrites at most its chunk, never the whole conversation;
* ``meta``: one small entry per conversation (index ranges, the processed frontier, ``crisis_pending``,
  context, the end marker, activity times), written at most once per conversation per batch. After a
  close it shrinks to a tombstone: a redelivered turn of that conversation is a no-op, a turn it never had
  a dead letter (never a second buffer), a ``conversation_replay`` removes it.

Turns are processed in ``turn_index`` order: a turn beyond a gap is held until the gap fills, the
reorder window passes, or the conversation closes. That keeps the records identical to the batch path
(:func:`scorers.evaluate_conversation`), which sees every turn in order.

The tables hold compact JSON objects (:data:`Wire`); the logic works on typed classes
(:class:`ConversationMeta`, :class:`Tombstone`, :class:`BufferedTurn`) that :class:`_Batch` decodes on read
and encodes on write — see :class:`_Batch` for why the conversion sits there.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, NoReturn, Protocol, TypeAlias

import orjson

from schemas import (
    DEFAULT_LIMITS,
    MAX_METADATA_KEYS,
    AlertRef,
    AlertType,
    CloseReason,
    ConversationEnd,
    ConversationReplay,
    ConversationScore,
    FieldError,
    InvalidRecord,
    Limits,
    Message,
    OutputRecord,
    SafetyAlert,
    Severity,
    Turn,
    TurnContext,
    dead_letter,
    decode_turn_event,
    encode,
    unknown_fields,
)
from schemas._common import Role
from schemas.topics import CONTROL, DEAD_LETTER, TOPIC_OF_KIND
from scorers import Transcript, exchange_after
from scorers.verdict import conversation_verdict

log = logging.getLogger("attune.streams")

TableName = Literal["turns", "meta"]
#: A table value as stored and as its changelog record carries it (one-letter keys: every record and every
#: recovery pays for key length). Only the typed classes' ``to_wire`` / ``from_wire`` and the few functions
#: beside them (:func:`decode_meta`, :func:`is_open`, :func:`stored_due`) read its keys.
Wire: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Inbound:
    """One consumed message, with its position (for dead-letter records)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class Outbound:
    """One record to produce; ``partition`` None lets the producer's key partitioner choose."""

    topic: str
    key: bytes
    value: bytes
    kind: str = ""
    partition: int | None = None


@dataclass(frozen=True, slots=True)
class Write:
    """A table change: ``value`` None deletes the key. ``partition`` is the changelog partition."""

    table: TableName
    partition: int
    key: str
    value: Wire | None


class StateStore(Protocol):
    """The two tables. The Faust implementation is in :mod:`streams._faust.store`; :class:`DictStore` is in-memory."""

    def get(self, table: TableName, key: str) -> Wire | None: ...

    def has(self, table: TableName, key: str) -> bool:
        """Whether ``key`` is held, without decoding its value (the Faust store holds turns as bytes)."""
        ...

    def apply(self, writes: Sequence[Write]) -> None: ...

    def metas(self) -> Iterable[tuple[str, Wire]]: ...


class DictStore:
    """Plain-dict state store (unit tests, and the reference semantics of the Faust tables)."""

    def __init__(self) -> None:
        self.tables: dict[TableName, dict[str, Wire]] = {"turns": {}, "meta": {}}

    def get(self, table: TableName, key: str) -> Wire | None:
        return self.tables[table].get(key)

    def has(self, table: TableName, key: str) -> bool:
        return key in self.tables[table]

    def apply(self, writes: Sequence[Write]) -> None:
        for w in writes:
            if w.value is None:
                self.tables[w.table].pop(w.key, None)
            else:
                self.tables[w.table][w.key] = w.value

    def metas(self) -> Iterable[tuple[str, Wire]]:
        return list(self.tables["meta"].items())


@dataclass(frozen=True, slots=True)
class Timeouts:
    """When the timer acts on a conversation (seconds of wall-clock time)."""

    inactivity: float = 300.0
    reorder: float = 1.0
    tombstone_ttl: float = 600.0
    #: An open conversation's decoded history is dropped from the processor's cache after this long without
    #: a turn (it is rebuilt from the tables at its next turn): a conversation waiting for its user then
    #: costs its buffered bytes, not also their decoded objects (docs/benchmarks.md, "2026-11-26").
    history_idle: float = 30.0


@dataclass(frozen=True, slots=True)
class ClosedConversation:
    """What a close hook sees: the messages in turn order and the cheap checklist score just emitted.

    The LLM checklist (judge tier) plugs in here: its hook returns a job record for the jobs topic,
    so a judge call never runs on, or blocks, the turn-processing agent.
    """

    conversation_id: str
    partition: int
    #: No longer added to: the conversation's history is dropped at its close.
    messages: Transcript
    context: TurnContext | None
    close_reason: CloseReason
    score: ConversationScore
    #: Every alert raised for the conversation while it was open (what its verdict combines).
    alerts: tuple[AlertRef, ...] = ()
    #: The producer metadata merged over the conversation's turns (carried into every derived record).
    metadata: dict[str, Any] = field(default_factory=dict)


CloseHook = Callable[[ClosedConversation], Iterable[Outbound]]
#: Called for every assistant turn scored in order, with its Exchange, whether it raised or answers an
#: alert, and the conversation's metadata (the judge tier samples turns here; it returns jobs, it never
#: judges inline).
TurnHook = Callable[[Any, bool, Mapping[str, Any]], Iterable[Outbound]]
#: Called for every user turn on arrival with (conversation_id, turn_index, text, earlier messages in order,
#: the evaluator's UserTurnResult, metadata): the crisis screen takes possible-risk turns here, as jobs.
UserHook = Callable[[str, int, str, Sequence[Message], Any, Mapping[str, Any]], Iterable[Outbound]]


@dataclass(slots=True)
class Stats:
    events: int = 0
    turns: int = 0
    scored: int = 0
    alerts: int = 0
    closed: int = 0
    dead_letters: int = 0
    duplicates: int = 0
    after_close: int = 0
    replays: int = 0  # conversation_replay events (what this worker held of the conversation discarded)
    held: int = 0
    user_turns: int = 0  # accepted (not duplicate, not after close), for the per-role metrics
    assistant_turns: int = 0
    crisis_rule: int = 0  # user turns whose crisis alert a rule raised (with or without the model)
    crisis_model: int = 0  # ... only the learned model raised (severity "possible")
    crisis_conversation: int = 0  # ... a pattern across the conversation's user turns completed
    not_covered: int = 0  # user turns in a language the crisis detector does not cover
    unknown_fields: int = 0  # accepted inputs carrying fields no schema declares (kept, never a dead letter)

    def add(self, other: Stats) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


#: One fields-set shared by every buffered Message (never mutated): model_construct would give each its own
#: empty-then-filled set, a few KB of every open conversation (docs/benchmarks.md, "2026-11-25: memory
#: per open conversation (issue #14 part 4, in part)").
_MESSAGE_FIELDS: set[str] = frozenset({"role", "text", "turn_index"})  # type: ignore[assignment]


#: Key tuples shared by every summary with the same metrics (a handful: one per rubric version); bounded.
_SUMMARY_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}


class TurnSummary:
    """What a conversation's close needs of each turn score (the checklist's ``turn_summary`` means). Kept per
    buffered reply instead of the whole ``TurnScore``, which was the largest holder of an open conversation's
    memory in the worker (docs/benchmarks.md, "2026-11-25: memory per open conversation (issue #14 part 4,
    in part)").

    Stored as a shared key tuple and one array of doubles (the metrics, then the empathy): 7 metrics took
    ~520 bytes as a dict of float objects in a tuple, ~190 this way, and a 20-turn conversation has ten
    of them. Values that are not floats (older wire data) are kept as they are, in a tuple.
    """

    __slots__ = ("_keys", "_values")

    def __init__(self, metrics: Mapping[str, float], empathy: float) -> None:
        keys = tuple(metrics)
        if keys not in _SUMMARY_KEYS and len(_SUMMARY_KEYS) < 64:
            _SUMMARY_KEYS[keys] = keys
        self._keys = _SUMMARY_KEYS.get(keys, keys)
        values = [*metrics.values(), empathy]
        self._values: Sequence[float] = array("d", values) if all(type(v) is float for v in values) else tuple(values)

    @property
    def metrics(self) -> dict[str, float]:
        return dict(zip(self._keys, self._values, strict=False))  # the keys stop before the empathy

    @property
    def empathy(self) -> float:
        return self._values[-1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TurnSummary):
            return NotImplemented
        return (self.metrics, self.empathy) == (other.metrics, other.empathy)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TurnSummary({self.metrics!r}, {self.empathy!r})"


# -- typed state and its wire encoding ---------------------------------------------------------------
# Sub-objects (index ranges, context, metadata, cue and alert lists) are shared between a typed object and
# its wire dict, never copied: nothing changes them in place, a change assigns a new one.
@dataclass(slots=True)
class BufferedTurn:
    """A turn in the turns table: what the history and the close need of it.

    Wire: ``{"r": role, "t": text}``, plus ``"c": 1`` for a crisis disclosure and ``"s": {"m": metrics,
    "e": empathy}`` once a reply is scored.
    """

    role: Role
    text: str
    #: a user turn disclosing a crisis: the next reply owes crisis resources
    crisis: bool = False
    #: a reply's scores, once scored in order (None for user turns and replies held beyond a gap)
    summary: TurnSummary | None = None

    def to_wire(self) -> Wire:
        out: Wire = {"r": self.role, "t": self.text}
        if self.crisis:
            out["c"] = 1
        if self.summary is not None:
            out["s"] = {"m": self.summary.metrics, "e": self.summary.empathy}
        return out

    @classmethod
    def from_wire(cls, w: Wire) -> BufferedTurn:
        s = w.get("s")
        return cls(w["r"], w["t"], bool(w.get("c")), None if s is None else TurnSummary(s["m"], s["e"]))


class EndMarker(NamedTuple):
    """How the producer ended the conversation. Wire: ``{"r": reason, "last": last}``."""

    reason: CloseReason  # "end_flag" (a turn's end_of_conversation) or "end_event" (a ConversationEnd)
    #: the announced last turn index: the close waits for it (None: an end event that named none)
    last: int | None


class AlertNote(NamedTuple):
    """What a conversation's verdict needs of an alert raised while it was open. Wire: a 4-item list."""

    alert_id: str
    alert_type: AlertType
    severity: Severity
    turn_index: int | None


#: The optional keys of a live meta entry (see :attr:`ConversationMeta.extras`).
_EXTRA_KEYS = frozenset({"md", "rk", "al"})


@dataclass(slots=True)
class ConversationMeta:
    """A live conversation's entry in the meta table, written at most once per batch.

    Wire keys, in this order: ``p v idx done crisis ctx end seen held closed`` (``closed`` always null),
    then those of ``md``, ``rk``, ``al`` that are set, in the order they were first set.
    """

    #: ``p``: the partition of the conversation's turns (and of both tables' changelog records)
    partition: int
    #: ``seen``: wall-clock time of the last turn or end event (inactivity and reorder timeouts)
    seen: float
    #: ``v``: bumped by every write; the processor's cached history is valid while it matches
    version: int = 0
    #: ``idx``: the buffered turn indices as sorted, disjoint, inclusive ``[lo, hi]`` ranges
    ranges: list[list[int]] = field(default_factory=list)
    #: ``done``: the highest turn index processed in order (the frontier; -1 before the first)
    done: int = -1
    #: ``crisis``: the user crisis turn the next reply answers, if any
    crisis: int | None = None
    #: ``ctx``: the first turn context seen, as JSON
    context: Wire | None = None
    #: ``end``: set once the producer ended the conversation
    end: EndMarker | None = None
    #: ``held``: when the oldest turn waiting beyond a gap was buffered
    held: float | None = None
    #: :attr:`metadata`, :attr:`cues` and :attr:`alerts` as on the wire, by wire key, in the order first set:
    #: the record keeps that order, as the dict-based processor's did, so records stay byte-identical
    extras: dict[str, Any] | None = None

    @property
    def metadata(self) -> dict[str, Any] | None:
        """``md``: the producer metadata merged over the turns (see :func:`_merge_metadata`)."""
        return self.extras.get("md") if self.extras else None

    @metadata.setter
    def metadata(self, value: dict[str, Any]) -> None:
        self._set_extra("md", value)

    @property
    def cues(self) -> list[str] | None:
        """``rk``: the risk cue tags earlier user turns left (risk built across turns), sorted."""
        return self.extras.get("rk") if self.extras else None

    @cues.setter
    def cues(self, value: list[str]) -> None:
        self._set_extra("rk", value)

    @property
    def alerts(self) -> list[AlertNote] | None:
        """``al``: every alert raised so far, for the verdict at close (few: kept as lists until read)."""
        al = self.extras.get("al") if self.extras else None
        return None if al is None else [AlertNote(*a) for a in al]

    @alerts.setter
    def alerts(self, value: list[AlertNote]) -> None:
        self._set_extra("al", [list(a) for a in value])

    def _set_extra(self, key: str, value: Any) -> None:
        if self.extras is None:
            self.extras = {}
        self.extras[key] = value

    def to_wire(self) -> Wire:
        end = self.end
        out: Wire = {
            "p": self.partition,
            "v": self.version,
            "idx": self.ranges,
            "done": self.done,
            "crisis": self.crisis,
            "ctx": self.context,
            "end": None if end is None else {"r": end.reason, "last": end.last},
            "seen": self.seen,
            "held": self.held,
            "closed": None,
        }
        if self.extras:
            out.update(self.extras)
        return out

    @classmethod
    def from_wire(cls, w: Wire) -> ConversationMeta:
        end = w.get("end")
        extras = None
        if "md" in w or "rk" in w or "al" in w:
            extras = {k: w[k] for k in w if k in _EXTRA_KEYS}
        return cls(
            w["p"],
            w["seen"],
            w["v"],
            w["idx"],
            w["done"],
            w.get("crisis"),
            w.get("ctx"),
            None if end is None else EndMarker(end["r"], end.get("last")),
            w.get("held"),
            extras,
        )


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What a closed conversation leaves in the meta table until :attr:`Timeouts.tombstone_ttl`: its index
    ranges tell a redelivered turn (a no-op) from one it never had (a dead letter), and find chunks a crash
    left behind.

    Wire: ``{"p": partition, "closed": time, "idx": ranges}``.
    """

    partition: int
    closed: float
    ranges: list[list[int]]

    def to_wire(self) -> Wire:
        return {"p": self.partition, "closed": self.closed, "idx": self.ranges}

    @classmethod
    def from_wire(cls, w: Wire) -> Tombstone:
        return cls(w["p"], w["closed"], w.get("idx", []))


def decode_meta(value: Wire) -> ConversationMeta | Tombstone:
    """A meta-table value as its typed class."""
    if is_open(value):
        return ConversationMeta.from_wire(value)
    return Tombstone.from_wire(value)


def is_open(value: Mapping[str, Any]) -> bool:
    """Whether a meta-table value (as :meth:`StateStore.metas` yields it) is a live conversation, not a tombstone."""
    return value.get("closed") is None


@dataclass(frozen=True, slots=True)
class _PendingClose:
    """A conversation closed in this batch whose checklist has not run yet (see ``process(defer_closes=)``)."""

    conversation_id: str
    partition: int
    messages: Transcript
    context: TurnContext | None
    reason: CloseReason
    scores: list[TurnSummary]
    alerts: list[AlertRef] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class BatchResult:
    outputs: list[Outbound] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    #: Closes whose checklist :meth:`TurnProcessor.finish_closes` still has to run (deferred batches only).
    closes: list[_PendingClose] = field(default_factory=list)
    #: The meta version each live conversation written by this batch ends at (see ``on_batch_applied``).
    versions: dict[str, int] = field(default_factory=dict)


# -- index ranges: a 1,000-turn conversation in order is one pair, not 1,000 numbers -----------------
def ranges_contains(ranges: list[list[int]], i: int) -> bool:
    for lo, hi in ranges:  # noqa: SIM110 -- every turn calls this; any() over a generator: 315 vs 61 ns
        if lo <= i <= hi:
            return True
    return False


def ranges_add(ranges: list[list[int]], i: int) -> list[list[int]]:
    """Insert ``i`` (absent) into sorted disjoint inclusive ranges, merging neighbours. A new list: the ranges
    given, which a stored meta entry may share, are never changed."""
    if not ranges or i > ranges[-1][1]:  # the usual case, a turn after every buffered one: no sort
        if ranges and i == ranges[-1][1] + 1:
            return [*ranges[:-1], [ranges[-1][0], i]]
        return [*ranges, [i, i]]
    out = [list(r) for r in ranges]
    out.append([i, i])
    out.sort()
    merged: list[list[int]] = []
    for lo, hi in out:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


def ranges_iter(ranges: list[list[int]]) -> Iterator[int]:
    for lo, hi in ranges:
        yield from range(lo, hi + 1)


#: Turns per entry of the turns table. A turn rewrites only its chunk (at most this many turns), never
#: the conversation; a batch touching several turns of a conversation writes each chunk once; a close
#: deletes ``n / CHUNK`` keys. On Tansu every changelog record costs a round trip, so this matters.
CHUNK = 16


def chunk_key(conversation_id: str, turn_index: int) -> str:
    """Key of the turns-table entry holding this turn: ``conversation_id:chunk``."""
    return f"{conversation_id}:{turn_index // CHUNK}"


def chunk_keys(conversation_id: str, ranges: list[list[int]]) -> list[str]:
    """Every chunk key that may hold a turn of these index ranges."""
    out: dict[str, None] = {}
    for lo, hi in ranges:
        for c in range(lo // CHUNK, hi // CHUNK + 1):
            out[f"{conversation_id}:{c}"] = None
    return list(out)


def has_held(meta: ConversationMeta) -> bool:
    """Turns buffered beyond the processed frontier (waiting for a gap to fill)."""
    return bool(meta.ranges) and meta.ranges[-1][1] > meta.done


def due_action(meta: ConversationMeta | Tombstone, now: float, t: Timeouts) -> str | None:
    """What the timer should ask the owning agent to do for this conversation now, if anything."""
    if isinstance(meta, Tombstone):
        return _due(now, t, meta.closed, 0.0, False, None)
    return _due(now, t, None, meta.seen, meta.end is not None, meta.held)


def stored_due(value: Wire, now: float, t: Timeouts) -> tuple[int, str] | None:
    """``(partition, due_action)`` of a meta-table value if an action is due, reading only the keys it needs: the
    timer asks this of every entry on every tick, where decoding whole entries made the sweep 3-5x slower."""
    action = _due(now, t, value.get("closed"), value.get("seen", 0.0), value.get("end") is not None, value.get("held"))
    return None if action is None else (value["p"], action)


def _due(now: float, t: Timeouts, closed: float | None, seen: float, ended: bool, held: float | None) -> str | None:
    if closed is not None:
        return "expire" if now - closed >= t.tombstone_ttl else None
    if now - seen >= t.inactivity:
        return "close"
    if ended and now - seen >= t.reorder:
        return "close"
    if held is not None and now - held >= t.reorder:
        return "flush"
    return None


def control_record(conversation_id: str, action: str) -> bytes:
    return orjson.dumps({"op": "tick", "conversation_id": conversation_id, "action": action})


@dataclass(slots=True)
class _History:
    """In-memory view of a conversation's processed turns, derived from the tables (never authoritative)."""

    version: int
    messages: Transcript
    scores: list[TurnSummary]
    context: TurnContext | None
    touched: float = 0.0  # the ``now`` of the last batch that used it (idle ones are dropped by ``due``)


def _message(entry: BufferedTurn, turn_index: int) -> Message:
    # Fields taken from a validated Turn (or our own table entry of one): no second validation.
    return Message.model_construct(_MESSAGE_FIELDS, role=entry.role, text=entry.text, turn_index=turn_index)


class TurnProcessor:
    """Turns and control commands in, output records and table writes out (see module docstring)."""

    def __init__(
        self,
        evaluator: Any,
        store: StateStore,
        timeouts: Timeouts | None = None,
        close_hooks: Sequence[CloseHook] = (),
        limits: Limits = DEFAULT_LIMITS,
        turn_hooks: Sequence[TurnHook] = (),
        user_hooks: Sequence[UserHook] = (),
        *,
        emit_verdicts: bool = True,
        emit_turn_alerts: bool = True,
    ) -> None:
        self.ev = evaluator
        #: Send the alerts a user turn raises on its own text; False when the alert path (streams._alert_path)
        #: sends them, so they never wait for this agent's rebalance or table recovery. The processor still
        #: keeps every alert for the verdict, and always sends those only earlier turns explain.
        self.emit_turn_alerts = emit_turn_alerts
        #: Emit each conversation's verdict at close (cheap tier only); False when the judge tier emits it
        #: after the LLM checklist (streams.judging), so there is one verdict per conversation.
        self.emit_verdicts = emit_verdicts
        self.turn_hooks = list(turn_hooks)
        self.user_hooks = list(user_hooks)
        self.store = store
        self.limits = limits
        self.timeouts = timeouts or Timeouts()
        self.close_hooks = list(close_hooks)
        self._history: dict[str, _History] = {}
        self._now = 0.0
        self.stats = Stats()

    # -- public ---------------------------------------------------------------------------------------
    def process(self, items: Sequence[Inbound], now: float, *, defer_closes: bool = False) -> BatchResult:
        """Decode and score ``items``; the result's outputs go to the broker before its writes are applied.

        ``defer_closes``: leave the checklists of the conversations closed in this batch to
        :meth:`finish_closes`, so the caller can send the batch's turn scores and alerts first and run
        the checklists (the costliest step, milliseconds for a long conversation) while those travel. The
        table writes are complete either way; only the ``conversation_score`` records (and close-hook
        outputs) wait.
        """
        self._now = now
        batch = _Batch(self.store)
        res = BatchResult()
        for item in items:
            res.stats.events += 1
            if item.topic == CONTROL.name:
                self._on_control(batch, res, item, now)
                continue
            raw = item.value or b""
            try:
                rec = decode_turn_event(raw, self.limits)
                key = item.key.decode("utf-8", "replace") if item.key is not None else None
                if key != rec.conversation_id:
                    raise InvalidRecord(
                        "message key must equal conversation_id (one conversation, one partition)",
                        code="key_mismatch",
                    )
            except InvalidRecord as exc:
                self._dead_letter(res, raw, exc, item)
                continue
            res.stats.unknown_fields += bool(unknown_fields(rec))
            try:
                if isinstance(rec, Turn):
                    self._on_turn(batch, res, rec, item.partition, now)
                elif isinstance(rec, ConversationEnd):
                    self._on_end(batch, res, rec, item.partition, now)
                else:
                    self._on_replay(batch, res, rec)
            except InvalidRecord as exc:
                self._dead_letter(res, raw, exc, item)
            except Exception as exc:
                # A scorer bug must not stop the stream; the input is kept losslessly with the cause.
                # Every state change is made after the scorer call it depends on, so state stays usable.
                log.exception("scoring failed for %s", rec.conversation_id)
                self._dead_letter(
                    res, raw, InvalidRecord(f"processing failed: {exc!r}", code="processing_failed"), item
                )
        res.writes = batch.finish()
        res.versions = batch.versions
        self.stats.add(res.stats)
        if not defer_closes:
            self.finish_closes(res)
        return res

    def finish_closes(self, res: BatchResult) -> list[Outbound]:
        """Run the deferred checklists of ``res``; returns their outputs (also appended to ``res.outputs``)."""
        out: list[Outbound] = []
        for pc in res.closes:
            score = None
            if pc.messages:
                try:
                    score = self.ev.on_close(pc.conversation_id, pc.messages, pc.context, pc.reason, pc.scores)
                except Exception:
                    # Retrying on every tick would fail the same way; the buffer is freed, so say so loudly.
                    log.exception("checklist failed for %s; closing without a conversation_score", pc.conversation_id)
            if score is None:
                continue
            if pc.metadata:
                score.metadata = pc.metadata
            out.append(Outbound(TOPIC_OF_KIND[score.kind], score.conversation_id.encode(), encode(score), score.kind))
            if self.emit_verdicts:
                v = conversation_verdict(score, pc.alerts)
                out.append(Outbound(TOPIC_OF_KIND[v.kind], v.conversation_id.encode(), encode(v), v.kind))
            res.stats.closed += 1
            self.stats.closed += 1
            closed = ClosedConversation(
                pc.conversation_id,
                pc.partition,
                pc.messages,
                pc.context,
                pc.reason,
                score,
                tuple(pc.alerts),
                pc.metadata,
            )
            for hook in self.close_hooks:
                out.extend(hook(closed))
        res.closes = []
        res.outputs.extend(out)
        return out

    def due(self, now: float) -> list[tuple[str, int, str]]:
        """(conversation_id, partition, action) for every conversation the timer should act on."""
        live = set()
        out = []
        for cid, value in self.store.metas():
            live.add(cid)
            due = stored_due(value, now, self.timeouts)
            if due is not None:
                out.append((cid, *due))
        idle = now - self.timeouts.history_idle
        for cid in [c for c, h in self._history.items() if c not in live or h.touched < idle]:
            del self._history[cid]  # partition moved away, closed elsewhere, or idle (rebuilt when needed)
        return out

    # -- events ---------------------------------------------------------------------------------------
    def _on_turn(self, batch: _Batch, res: BatchResult, turn: Turn, partition: int, now: float) -> None:
        cid, idx = turn.conversation_id, turn.turn_index
        res.stats.turns += 1
        meta = batch.meta(cid, partition, now)
        if isinstance(meta, Tombstone):
            if ranges_contains(meta.ranges, idx):
                res.stats.duplicates += 1  # redelivered after the close: processed before it
                return
            self._late_turn(res, turn, meta, now)
        if ranges_contains(meta.ranges, idx):
            res.stats.duplicates += 1
            return
        n = sum(hi - lo + 1 for lo, hi in meta.ranges)
        if n >= self.limits.max_turns_per_conversation:
            # Same limit as the batch path (decode_conversation): state per conversation stays bounded.
            limit = self.limits.max_turns_per_conversation
            raise InvalidRecord(
                "too many turns",
                [FieldError(loc="turn_index", msg=f"conversation already has {n} turns, limit {limit}")],
                code="too_many_turns",
            )
        if turn.metadata:
            _merge_metadata(meta, turn.metadata, cid)
        md = meta.metadata or {}
        alerts = []
        ures: Any = None
        entry = BufferedTurn(turn.role, turn.text)
        if turn.role == "user":
            res.stats.user_turns += 1
            # Alerts first and at arrival, before any ordering or buffering (issue: "as soon as").
            # Cue tags of earlier user turns, in arrival order, for risk built across turns.
            prior = frozenset(meta.cues or ())
            ures = self.ev.on_user_turn(cid, idx, turn.text, prior)
            alerts = ures.alerts
            if ures.cues - prior:
                meta.cues = sorted(prior | ures.cues)
            entry.crisis = bool(ures.crisis)
            if ures.detector in ("rule", "rule+model"):
                res.stats.crisis_rule += 1
            elif ures.detector == "model":
                res.stats.crisis_model += 1
            elif ures.detector == "conversation":
                res.stats.crisis_conversation += 1
            if not ures.covered:
                res.stats.not_covered += 1
        else:
            res.stats.assistant_turns += 1
        meta.ranges = ranges_add(meta.ranges, idx)
        meta.seen = now
        if turn.context is not None and meta.context is None:
            meta.context = turn.context.model_dump(mode="json")
        if turn.end_of_conversation:
            meta.end = EndMarker("end_flag", idx)
        self._emit(res, alerts if self.emit_turn_alerts or ures is None else ures.needs_history, md)
        _remember(meta, alerts)
        hist = self._hist(cid, meta)
        if turn.role == "user" and self.user_hooks:
            earlier = hist.messages.before(idx)[-4:]  # the nearest earlier messages, not the whole history
            for user_hook in self.user_hooks:
                res.outputs.extend(user_hook(cid, idx, turn.text, earlier, ures, md))
        if hist.context is None and turn.context is not None:
            hist.context = turn.context
        if idx <= meta.done + 1:
            self._advance(batch, res, cid, meta, hist, idx, entry)
            self._drain(batch, res, cid, meta, hist)
        else:
            res.stats.held += 1
            batch.put_turn(cid, idx, entry, meta.partition)
            if meta.held is None:
                meta.held = now
        self._maybe_close(batch, res, cid, meta, now)

    def _late_turn(self, res: BatchResult, turn: Turn, tomb: Tombstone, now: float) -> NoReturn:
        """A turn its closed conversation never had: its own alerts still go out, and it becomes a dead letter.

        Why not ignore it: the conversation's records are final, but the turn was never scored, and dropping it
        silently is how re-published conversations were lost after a broker restart (docs/reliability.md). A
        dead letter keeps its bytes and says how to score it (a replay of the whole conversation). A user turn
        is screened for crisis first, as on arrival: a late disclosure is still a disclosure.
        """
        res.stats.after_close += 1
        if turn.role == "user" and self.emit_turn_alerts:  # else the alert path sends these very alerts
            alerts = self.ev.turn_alerts(turn.conversation_id, turn.turn_index, turn.text)
            self._emit(res, alerts, dict(turn.metadata or {}))
        raise InvalidRecord(
            "turn after its conversation closed",
            [
                FieldError(
                    loc="turn_index",
                    msg=f"conversation closed {max(0.0, now - tomb.closed):.0f} s before turn {turn.turn_index} "
                    "arrived; not scored. To score the conversation with it, re-publish it whole after a "
                    "conversation_replay (attune publish --replay)",
                )
            ],
            code="other",
        )

    def _on_end(self, batch: _Batch, res: BatchResult, end: ConversationEnd, partition: int, now: float) -> None:
        meta = batch.meta(end.conversation_id, partition, now)
        if isinstance(meta, Tombstone):
            res.stats.after_close += 1
            return
        meta.end = EndMarker("end_event", end.last_turn_index)
        meta.seen = now
        if end.metadata:
            _merge_metadata(meta, end.metadata, end.conversation_id)
        self._maybe_close(batch, res, end.conversation_id, meta, now)

    def _on_replay(self, batch: _Batch, res: BatchResult, rep: ConversationReplay) -> None:
        """Forget the conversation (open buffer or tombstone): the turns that follow score it afresh, whole.

        The records of a full replay equal the batch path's; those already sent on partial history keep their
        own ids (``history_complete: false``), so a consumer sees both and can tell them apart. Alerts are
        raised again by the replayed turns with the same ids. Idempotent: a redelivered replay forgets the
        replayed turns, and their redelivery scores them again with the same ids.
        """
        cid = rep.conversation_id
        res.stats.replays += 1
        meta = batch.existing_meta(cid)
        if meta is None:
            log.info("replay of %s: nothing held, scored as new", cid)
            return
        self._forget(batch, cid, meta)
        n = sum(hi - lo + 1 for lo, hi in meta.ranges)
        what = "its closed record's tombstone" if isinstance(meta, Tombstone) else "the open buffer"
        log.info("replay of %s: discarded %s (%d turns seen), scoring it afresh", cid, what, n)

    def _on_control(self, batch: _Batch, res: BatchResult, item: Inbound, now: float) -> None:
        try:
            cmd = orjson.loads(item.value or b"")
            cid = cmd["conversation_id"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            log.warning("ignoring malformed control record at %s/%s", item.partition, item.offset)
            return
        meta = batch.existing_meta(cid)
        if meta is None:
            return
        # Re-check with this worker's state: a stale timer elsewhere must not close a live conversation.
        action = due_action(meta, now, self.timeouts)
        if isinstance(meta, Tombstone):
            if action == "expire":
                self._forget(batch, cid, meta)  # with orphans of a close interrupted by a crash
        elif action == "close":
            inactive = now - meta.seen >= self.timeouts.inactivity
            reason: CloseReason = meta.end.reason if meta.end is not None and not inactive else "inactivity"
            self._close(batch, res, cid, meta, reason, now)
        elif action == "flush":
            hist = self._hist(cid, meta)
            self._drain(batch, res, cid, meta, hist, force=True)
            self._maybe_close(batch, res, cid, meta, now)

    # -- ordered processing ---------------------------------------------------------------------------
    def _advance(
        self,
        batch: _Batch,
        res: BatchResult,
        cid: str,
        meta: ConversationMeta,
        hist: _History,
        idx: int,
        entry: BufferedTurn,
    ) -> None:
        """Process one turn in order: crisis_pending for users, the cheap tier for assistants.

        ``entry`` is this batch's own object (new, or decoded from the table), so it is updated in place."""
        if entry.role == "user":
            if entry.crisis:
                meta.crisis = idx
        else:
            ex = exchange_after(cid, idx, entry.text, hist.messages.before(idx), hist.context)
            crisis = meta.crisis
            # Every turn from 0 up to this one buffered (the first index range starts at 0 and reaches it)?
            # Not when a gap was given up on (flush after the reorder window) or state was lost with a broker.
            first = meta.ranges[0]
            complete = first[0] == 0 and idx <= first[1]
            ares = self.ev.on_assistant_turn(ex, answers_crisis_turn=crisis, history_complete=complete)
            meta.crisis = None
            entry.summary = TurnSummary(ares.score.metrics, ares.score.empathy)  # not the whole record
            hist.scores.append(entry.summary)
            res.stats.scored += 1
            md = meta.metadata or {}
            self._emit(res, [ares.score, *ares.alerts], md)
            _remember(meta, ares.alerts)
            for turn_hook in self.turn_hooks:
                res.outputs.extend(turn_hook(ex, bool(ares.alerts) or crisis is not None, md))
        hist.messages.add(_message(entry, idx))
        meta.done = max(meta.done, idx)
        batch.put_turn(cid, idx, entry, meta.partition)

    def _drain(
        self,
        batch: _Batch,
        res: BatchResult,
        cid: str,
        meta: ConversationMeta,
        hist: _History,
        *,
        force: bool = False,
    ) -> None:
        """Process held turns that became contiguous (or all of them, in order, when forced)."""
        if not has_held(meta):
            meta.held = None
            return
        pending = [i for i in ranges_iter(meta.ranges) if i > meta.done]
        for i in pending:
            if not force and i != meta.done + 1:
                break
            entry = batch.turn(cid, i)
            if entry is None:  # buffered index without an entry: state damaged; skip rather than loop
                log.error("turn %s of %s missing from the buffer", i, cid)
                meta.done = max(meta.done, i)
                continue
            self._advance(batch, res, cid, meta, hist, i, entry)
        if not has_held(meta):
            meta.held = None

    def _maybe_close(self, batch: _Batch, res: BatchResult, cid: str, meta: ConversationMeta, now: float) -> None:
        end = meta.end
        if end is None or has_held(meta):
            return
        last = end.last
        if last is not None and (last > meta.done or not ranges_contains(meta.ranges, last)):
            return  # waits for the announced last turn (the timer closes it after the reorder window)
        self._close(batch, res, cid, meta, end.reason, now)

    def _close(
        self, batch: _Batch, res: BatchResult, cid: str, meta: ConversationMeta, reason: CloseReason, now: float
    ) -> None:
        hist = self._hist(cid, meta)
        self._drain(batch, res, cid, meta, hist, force=True)
        # The checklist needs only what is buffered now; it runs in finish_closes (same batch).
        refs = [AlertRef(alert_id=a, alert_type=t, severity=v, turn_index=i) for a, t, v, i in meta.alerts or ()]
        md = meta.metadata or {}
        res.closes.append(
            _PendingClose(cid, meta.partition, hist.messages, hist.context, reason, hist.scores, refs, md)
        )
        # Tombstone first, then free the turns: a crash in between leaves orphans the expiry removes,
        # never a live conversation missing turns.
        batch.replace_meta(cid, Tombstone(meta.partition, now, meta.ranges))
        for key in chunk_keys(cid, meta.ranges):
            batch.delete_chunk(key, meta.partition)
        self._history.pop(cid, None)

    # -- helpers --------------------------------------------------------------------------------------
    def _forget(self, batch: _Batch, cid: str, meta: ConversationMeta | Tombstone) -> None:
        """Delete a conversation's meta entry and every chunk it still has (tombstone expiry, replay)."""
        for key in chunk_keys(cid, meta.ranges):
            if batch.has_chunk(key):
                batch.delete_chunk(key, meta.partition)
        batch.delete_meta(cid, meta.partition)
        self._history.pop(cid, None)

    def _hist(self, cid: str, meta: ConversationMeta) -> _History:
        """The cached processed history, rebuilt from the tables when it does not match ``meta``."""
        h = self._history.get(cid)
        if h is not None and h.version == meta.version:
            h.touched = self._now
            return h
        ctx = TurnContext.model_validate(meta.context) if meta.context else None
        h = _History(version=meta.version, messages=Transcript(), scores=[], context=ctx, touched=self._now)
        chunks: dict[str, Wire | None] = {}  # each chunk read (and, from the Faust store, decoded) once
        for i in ranges_iter(meta.ranges):
            if i > meta.done:
                break
            key = chunk_key(cid, i)
            if key not in chunks:
                chunks[key] = self.store.get("turns", key)
            chunk = chunks[key]
            wire = chunk.get(str(i)) if chunk else None
            if wire is None:
                continue
            entry = BufferedTurn.from_wire(wire)
            h.messages.add(_message(entry, i))
            if entry.summary is not None:
                h.scores.append(entry.summary)
        self._history[cid] = h
        return h

    def _emit(self, res: BatchResult, records: Iterable[OutputRecord], metadata: dict[str, Any]) -> None:
        for rec in records:
            if metadata:
                rec.metadata = metadata
            cid = rec.conversation_id.encode()  # type: ignore[union-attr]  # dead letters never come this way
            res.outputs.append(Outbound(TOPIC_OF_KIND[rec.kind], cid, encode(rec), rec.kind))
            if rec.kind == "safety_alert":
                res.stats.alerts += 1

    def _dead_letter(self, res: BatchResult, raw: bytes, exc: InvalidRecord, item: Inbound) -> None:
        rec = dead_letter(raw, exc, source=item.topic, partition=item.partition, offset=item.offset)
        res.outputs.append(Outbound(DEAD_LETTER.name, item.topic.encode(), encode(rec), rec.kind))
        res.stats.dead_letters += 1

    def reset_cache(self) -> None:
        """Forget the derived history (after a batch whose writes were not applied)."""
        self._history.clear()

    def on_batch_applied(self, result: BatchResult) -> None:
        """Bump cached history versions to the meta versions just written (the cache stays valid)."""
        for cid, version in result.versions.items():
            h = self._history.get(cid)
            if h is not None:
                h.version = version


def _merge_metadata(meta: ConversationMeta, md: Mapping[str, Any], cid: str) -> None:
    """Add the keys of a turn's metadata the conversation does not have yet: the first value of a key wins,
    so a redelivered or late turn never changes what earlier records carried. At most
    :data:`MAX_METADATA_KEYS` keys per conversation (later new keys are logged, not carried)."""
    cur = meta.metadata or {}
    new = {k: v for k, v in md.items() if k not in cur}
    if not new:
        return
    room = MAX_METADATA_KEYS - len(cur)
    if len(new) > room:
        log.warning("conversation %s: metadata over %d keys; %d new keys not carried", cid, MAX_METADATA_KEYS,
                    len(new) - max(room, 0))  # fmt: skip
        new = dict(list(new.items())[: max(room, 0)])
    if new:
        meta.metadata = {**cur, **new}  # a new dict: the stored wire entry shares the old one


def _remember(meta: ConversationMeta, alerts: Sequence[SafetyAlert]) -> None:
    """Keep what the conversation's verdict needs of each alert in its meta entry, so the verdict at close
    never re-scores the turns."""
    if alerts:
        notes = (AlertNote(a.alert_id, a.alert_type, a.severity, a.turn_index) for a in alerts)
        meta.alerts = [*(meta.alerts or ()), *notes]


class _Batch:
    """Read-your-writes overlay over the store for one batch; meta entries are written once at the end.

    The store holds wire dicts, and this is where they become typed objects: a meta entry is decoded once per
    conversation per batch and encoded once in :meth:`finish`, a turn entry decoded when read and encoded when
    put. Typed objects in the store would hold less per open conversation, but only if Faust's tables decoded
    their changelog into typed objects too: after a recovery a table holds what its codec made of the records,
    and a store half dicts, half objects is the bug to avoid. As dicts, a stored value is exactly its changelog
    record, before and after a recovery, whichever version wrote it. The conversions cost about what the
    dict-based processor's copy did, a small fraction of the scoring (figures: docs/benchmarks.md,
    "2026-11-25: memory per open conversation (issue #14 part 4, in part)").
    """

    def __init__(self, store: StateStore) -> None:
        self.store = store
        self.turns: dict[str, tuple[int, dict[str, Wire] | None]] = {}  # chunk key -> (partition, chunk)
        self.metas: dict[str, ConversationMeta | Tombstone | None] = {}
        self.meta_partition: dict[str, int] = {}
        #: the version each live meta ends at (set by finish)
        self.versions: dict[str, int] = {}

    def existing_meta(self, cid: str) -> ConversationMeta | Tombstone | None:
        if cid in self.metas:
            return self.metas[cid]
        stored = self.store.get("meta", cid)
        if stored is None:
            return None
        meta = decode_meta(stored)
        self.metas[cid] = meta
        self.meta_partition[cid] = meta.partition
        return meta

    def meta(self, cid: str, partition: int, now: float) -> ConversationMeta | Tombstone:
        meta = self.existing_meta(cid)
        if meta is None:
            meta = ConversationMeta(partition, now)
            self.metas[cid] = meta
            self.meta_partition[cid] = partition
        return meta

    def replace_meta(self, cid: str, value: Tombstone) -> None:
        self.metas[cid] = value

    def delete_meta(self, cid: str, partition: int) -> None:
        self.metas[cid] = None
        self.meta_partition[cid] = partition

    def turn(self, cid: str, idx: int) -> BufferedTurn | None:
        key = chunk_key(cid, idx)
        chunk = self.turns[key][1] if key in self.turns else self.store.get("turns", key)
        entry = chunk.get(str(idx)) if chunk else None
        return None if entry is None else BufferedTurn.from_wire(entry)

    def put_turn(self, cid: str, idx: int, entry: BufferedTurn, partition: int) -> None:
        key = chunk_key(cid, idx)
        if key in self.turns:
            chunk = self.turns[key][1]
            if chunk is None:  # freed earlier in this batch: a new chunk
                chunk = {}
        else:
            chunk = dict(self.store.get("turns", key) or {})  # copy-on-write: the store stays untouched
        chunk[str(idx)] = entry.to_wire()
        self.turns[key] = (partition, chunk)

    def delete_chunk(self, key: str, partition: int) -> None:
        self.turns[key] = (partition, None)

    def has_chunk(self, key: str) -> bool:
        """Whether the key holds a chunk, with this batch's own puts and deletes."""
        return self.turns[key][1] is not None if key in self.turns else self.store.has("turns", key)

    def finish(self) -> list[Write]:
        """Turn writes first, then meta (tombstones before turn deletes, see :meth:`TurnProcessor._close`)."""
        live: list[Write] = []
        tombstones: list[Write] = []
        for cid, meta in self.metas.items():
            p = self.meta_partition[cid]
            if meta is None:
                tombstones.append(Write("meta", p, cid, None))
            elif isinstance(meta, Tombstone):
                tombstones.append(Write("meta", p, cid, meta.to_wire()))
            else:
                meta.version += 1
                self.versions[cid] = meta.version
                live.append(Write("meta", p, cid, meta.to_wire()))
        # A chunk buffered and freed within this batch never reaches the changelog (nor its delete).
        turn_writes = [
            Write("turns", p, k, v) for k, (p, v) in self.turns.items() if v is not None or self.store.has("turns", k)
        ]
        puts = [w for w in turn_writes if w.value is not None]
        deletes = [w for w in turn_writes if w.value is None]
        # New turns, then the metas that reference them, then tombstones, then the turns they free.
        return [*puts, *live, *tombstones, *deletes]
