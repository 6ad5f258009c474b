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
  close it shrinks to a tombstone that makes late or redelivered turns of that conversation no-ops.

Turns are processed in ``turn_index`` order: a turn beyond a gap is held until the gap fills, the
reorder window passes, or the conversation closes. That keeps the records identical to the batch path
(:func:`scorers.evaluate_conversation`), which sees every turn in order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

import orjson

from schemas import (
    DEFAULT_LIMITS,
    MAX_METADATA_KEYS,
    AlertRef,
    CloseReason,
    ConversationEnd,
    ConversationScore,
    FieldError,
    InvalidRecord,
    Limits,
    Message,
    OutputRecord,
    SafetyAlert,
    Turn,
    TurnContext,
    dead_letter,
    decode_turn_event,
    encode,
    unknown_fields,
)
from schemas.topics import CONTROL, DEAD_LETTER, TOPIC_OF_KIND
from scorers.verdict import conversation_verdict

log = logging.getLogger("attune.streams")

TableName = Literal["turns", "meta"]


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
    value: dict[str, Any] | None


class StateStore(Protocol):
    """The two tables. The Faust implementation is in :mod:`streams.app`; :class:`DictStore` is in-memory."""

    def get(self, table: TableName, key: str) -> dict[str, Any] | None: ...

    def apply(self, writes: Sequence[Write]) -> None: ...

    def metas(self) -> Iterable[tuple[str, dict[str, Any]]]: ...


class DictStore:
    """Plain-dict state store (unit tests, and the reference semantics of the Faust tables)."""

    def __init__(self) -> None:
        self.tables: dict[TableName, dict[str, dict[str, Any]]] = {"turns": {}, "meta": {}}

    def get(self, table: TableName, key: str) -> dict[str, Any] | None:
        return self.tables[table].get(key)

    def apply(self, writes: Sequence[Write]) -> None:
        for w in writes:
            if w.value is None:
                self.tables[w.table].pop(w.key, None)
            else:
                self.tables[w.table][w.key] = w.value

    def metas(self) -> Iterable[tuple[str, dict[str, Any]]]:
        return list(self.tables["meta"].items())


@dataclass(frozen=True, slots=True)
class Timeouts:
    """When the timer acts on a conversation (seconds of wall-clock time)."""

    inactivity: float = 300.0
    reorder: float = 1.0
    tombstone_ttl: float = 600.0


@dataclass(frozen=True, slots=True)
class ClosedConversation:
    """What a close hook sees: the ordered messages and the cheap checklist score just emitted.

    The LLM checklist (judge tier) plugs in here: its hook returns a job record for the jobs topic,
    so a judge call never runs on, or blocks, the turn-processing agent.
    """

    conversation_id: str
    partition: int
    messages: tuple[tuple[int, Message], ...]
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
#: empty-then-filled set, 216 bytes a turn, 4 KB of an open 20-turn conversation.
_MESSAGE_FIELDS: set[str] = frozenset({"role", "text", "turn_index"})  # type: ignore[assignment]


class TurnSummary(NamedTuple):
    """What a conversation's close needs of each turn score (the checklist's ``turn_summary`` means). Kept per
    buffered reply instead of the whole ``TurnScore``: that record was ~15 KB of every open 20-turn
    conversation's ~42 KB in the worker (tracemalloc, issue 14 part 4)."""

    metrics: dict[str, float]
    empathy: float


@dataclass(frozen=True, slots=True)
class _PendingClose:
    """A conversation closed in this batch whose checklist has not run yet (see ``process(defer_closes=)``)."""

    conversation_id: str
    partition: int
    messages: list[tuple[int, Message]]
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


# -- index ranges: a 1,000-turn conversation in order is one pair, not 1,000 numbers -----------------
def ranges_contains(ranges: list[list[int]], i: int) -> bool:
    for lo, hi in ranges:  # noqa: SIM110 -- every turn calls this; any() over a generator: 315 vs 61 ns
        if lo <= i <= hi:
            return True
    return False


def ranges_add(ranges: list[list[int]], i: int) -> list[list[int]]:
    """Insert ``i`` (absent) into sorted disjoint inclusive ranges, merging neighbours."""
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


def stored_turn(store: StateStore, conversation_id: str, turn_index: int) -> dict[str, Any] | None:
    chunk = store.get("turns", chunk_key(conversation_id, turn_index))
    return chunk.get(str(turn_index)) if chunk else None


def _max_index(meta: dict[str, Any]) -> int:
    return meta["idx"][-1][1] if meta["idx"] else -1


def has_held(meta: dict[str, Any]) -> bool:
    """Turns buffered beyond the processed frontier (waiting for a gap to fill)."""
    return _max_index(meta) > meta["done"]


def due_action(meta: dict[str, Any], now: float, t: Timeouts) -> str | None:
    """What the timer should ask the owning agent to do for this conversation now, if anything."""
    if meta.get("closed") is not None:
        return "expire" if now - meta["closed"] >= t.tombstone_ttl else None
    if now - meta["seen"] >= t.inactivity:
        return "close"
    if meta.get("end") is not None and now - meta["seen"] >= t.reorder:
        return "close"
    if meta.get("held") is not None and now - meta["held"] >= t.reorder:
        return "flush"
    return None


def control_record(conversation_id: str, action: str) -> bytes:
    return orjson.dumps({"op": "tick", "conversation_id": conversation_id, "action": action})


@dataclass(slots=True)
class _History:
    """In-memory view of a conversation's processed turns, derived from the tables (never authoritative)."""

    version: int
    messages: list[tuple[int, Message]]
    scores: list[TurnSummary]
    context: TurnContext | None
    #: The messages alone while they were appended in ascending index order (the normal case), so a reply's
    #: Exchange is a copy of this list instead of a filter and sort of the history; None once out of order.
    ordered: list[Message] | None = None


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
        self.stats = Stats()

    # -- public ---------------------------------------------------------------------------------------
    def process(self, items: Sequence[Inbound], now: float, *, defer_closes: bool = False) -> BatchResult:
        """Decode and score ``items``; the result's outputs go to the broker before its writes are applied.

        ``defer_closes``: leave the checklists of the conversations closed in this batch to
        :meth:`finish_closes`, so the caller can send the batch's turn scores and alerts first and run
        the checklists (the costliest step: ~0.3 ms for 6 turns, ~1.2 ms for 20) while those travel. The
        table writes are complete either way; only the ``conversation_score`` records (and close-hook
        outputs) wait.
        """
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
                else:
                    self._on_end(batch, res, rec, item.partition, now)
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
                tuple(pc.messages),
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
        for cid, meta in self.store.metas():
            live.add(cid)
            action = due_action(meta, now, self.timeouts)
            if action:
                out.append((cid, meta["p"], action))
        for cid in [c for c in self._history if c not in live]:
            del self._history[cid]  # partition moved away or closed elsewhere
        return out

    # -- events ---------------------------------------------------------------------------------------
    def _on_turn(self, batch: _Batch, res: BatchResult, turn: Turn, partition: int, now: float) -> None:
        cid, idx = turn.conversation_id, turn.turn_index
        res.stats.turns += 1
        meta = batch.meta(cid, partition, now)
        if meta.get("closed") is not None:
            res.stats.after_close += 1
            return
        if ranges_contains(meta["idx"], idx):
            res.stats.duplicates += 1
            return
        n = sum(hi - lo + 1 for lo, hi in meta["idx"])
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
        md = meta.get("md") or {}
        alerts = []
        ures: Any = None
        entry: dict[str, Any] = {"r": turn.role, "t": turn.text}
        if turn.role == "user":
            res.stats.user_turns += 1
            # Alerts first and at arrival, before any ordering or buffering (issue: "as soon as").
            # Cue tags of earlier user turns, in arrival order, for risk built across turns.
            prior = frozenset(meta.get("rk") or ())
            ures = self.ev.on_user_turn(cid, idx, turn.text, prior)
            alerts = ures.alerts
            if ures.cues - prior:
                meta["rk"] = sorted(prior | ures.cues)
            if ures.crisis:
                entry["c"] = 1
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
        meta["idx"] = ranges_add(meta["idx"], idx)
        meta["seen"] = now
        if turn.context is not None and meta.get("ctx") is None:
            meta["ctx"] = turn.context.model_dump(mode="json")
        if turn.end_of_conversation:
            meta["end"] = {"r": "end_flag", "last": idx}
        self._emit(res, alerts if self.emit_turn_alerts or ures is None else ures.needs_history, md)
        _remember(meta, alerts)
        hist = self._hist(cid, meta)
        if turn.role == "user" and self.user_hooks:
            # the nearest earlier messages: a bounded tail, not the whole history, on every user turn
            earlier = [m for i, m in hist.messages[-16:] if i < idx][-4:]
            for user_hook in self.user_hooks:
                res.outputs.extend(user_hook(cid, idx, turn.text, earlier, ures, md))
        if hist.context is None and turn.context is not None:
            hist.context = turn.context
        if idx <= meta["done"] or idx == meta["done"] + 1:
            self._advance(batch, res, cid, meta, hist, idx, entry)
            self._drain(batch, res, cid, meta, hist)
        else:
            res.stats.held += 1
            batch.put_turn(cid, idx, entry, meta["p"])
            if meta.get("held") is None:
                meta["held"] = now
        self._maybe_close(batch, res, cid, meta, now)

    def _on_end(self, batch: _Batch, res: BatchResult, end: ConversationEnd, partition: int, now: float) -> None:
        meta = batch.meta(end.conversation_id, partition, now)
        if meta.get("closed") is not None:
            res.stats.after_close += 1
            return
        meta["end"] = {"r": "end_event", "last": end.last_turn_index}
        meta["seen"] = now
        if end.metadata:
            _merge_metadata(meta, end.metadata, end.conversation_id)
        self._maybe_close(batch, res, end.conversation_id, meta, now)

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
        if action == "expire":
            for key in chunk_keys(cid, meta.get("idx", [])):
                if self.store.get("turns", key) is not None:
                    batch.delete_chunk(key, meta["p"])  # orphans of a close interrupted by a crash
            batch.delete_meta(cid, meta["p"])
        elif action == "close":
            reason = "inactivity" if now - meta["seen"] >= self.timeouts.inactivity else meta["end"]["r"]
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
        meta: dict[str, Any],
        hist: _History,
        idx: int,
        entry: dict[str, Any],
    ) -> None:
        """Process one turn in order: crisis_pending for users, the cheap tier for assistants."""
        if entry["r"] == "user":
            if entry.get("c"):
                meta["crisis"] = idx
        else:
            if hist.ordered is not None and (not hist.messages or hist.messages[-1][0] < idx):
                ex = _exchange_after(cid, idx, entry["t"], hist.ordered, hist.context)
            else:
                ex = _exchange_for(cid, idx, entry["t"], hist.messages, hist.context)
            crisis = meta.get("crisis")
            # Every turn from 0 up to this one buffered (the first index range starts at 0 and reaches it)?
            # Not when a gap was given up on (flush after the reorder window) or state was lost with a broker.
            first = meta["idx"][0]
            complete = first[0] == 0 and idx <= first[1]
            ares = self.ev.on_assistant_turn(ex, answers_crisis_turn=crisis, history_complete=complete)
            meta["crisis"] = None
            entry = {**entry, "s": {"m": ares.score.metrics, "e": ares.score.empathy}}
            hist.scores.append(TurnSummary(ares.score.metrics, ares.score.empathy))  # not the whole record
            res.stats.scored += 1
            md = meta.get("md") or {}
            self._emit(res, [ares.score, *ares.alerts], md)
            _remember(meta, ares.alerts)
            for turn_hook in self.turn_hooks:
                res.outputs.extend(turn_hook(ex, bool(ares.alerts) or crisis is not None, md))
        # Fields taken from a validated Turn (or our own table entry of one): no second validation.
        msg = Message.model_construct(_MESSAGE_FIELDS, role=entry["r"], text=entry["t"], turn_index=idx)
        if hist.ordered is not None:
            if hist.messages and hist.messages[-1][0] > idx:
                hist.ordered = None
            else:
                hist.ordered.append(msg)
        hist.messages.append((idx, msg))
        meta["done"] = max(meta["done"], idx)
        batch.put_turn(cid, idx, entry, meta["p"])

    def _drain(
        self,
        batch: _Batch,
        res: BatchResult,
        cid: str,
        meta: dict[str, Any],
        hist: _History,
        *,
        force: bool = False,
    ) -> None:
        """Process held turns that became contiguous (or all of them, in order, when forced)."""
        if not has_held(meta):
            meta["held"] = None
            return
        pending = [i for i in ranges_iter(meta["idx"]) if i > meta["done"]]
        for i in pending:
            if not force and i != meta["done"] + 1:
                break
            entry = batch.turn(cid, i)
            if entry is None:  # buffered index without an entry: state damaged; skip rather than loop
                log.error("turn %s of %s missing from the buffer", i, cid)
                meta["done"] = max(meta["done"], i)
                continue
            self._advance(batch, res, cid, meta, hist, i, entry)
        meta["held"] = meta["held"] if has_held(meta) else None

    def _maybe_close(self, batch: _Batch, res: BatchResult, cid: str, meta: dict[str, Any], now: float) -> None:
        end = meta.get("end")
        if end is None or has_held(meta):
            return
        last = end.get("last")
        if last is not None and (last > meta["done"] or not ranges_contains(meta["idx"], last)):
            return  # waits for the announced last turn (the timer closes it after the reorder window)
        self._close(batch, res, cid, meta, end["r"], now)

    def _close(self, batch: _Batch, res: BatchResult, cid: str, meta: dict[str, Any], reason: str, now: float) -> None:
        hist = self._hist(cid, meta)
        self._drain(batch, res, cid, meta, hist, force=True)
        # The checklist needs only what is buffered now; it runs in finish_closes (same batch).
        refs = [AlertRef(alert_id=a, alert_type=t, severity=v, turn_index=i) for a, t, v, i in meta.get("al") or ()]
        md = meta.get("md") or {}
        res.closes.append(_PendingClose(cid, meta["p"], hist.messages, hist.context, reason, hist.scores, refs, md))  # type: ignore[arg-type]
        # Tombstone first, then free the turns: a crash in between leaves orphans the expiry removes,
        # never a live conversation missing turns.
        batch.replace_meta(cid, {"p": meta["p"], "closed": now, "idx": meta["idx"]})
        for key in chunk_keys(cid, meta["idx"]):
            batch.delete_chunk(key, meta["p"])
        self._history.pop(cid, None)

    # -- helpers --------------------------------------------------------------------------------------
    def _hist(self, cid: str, meta: dict[str, Any]) -> _History:
        """The cached processed history, rebuilt from the tables when it does not match ``meta``."""
        h = self._history.get(cid)
        if h is not None and h.version == meta["v"]:
            return h
        ctx = TurnContext.model_validate(meta["ctx"]) if meta.get("ctx") else None
        h = _History(version=meta["v"], messages=[], scores=[], context=ctx)
        for i in ranges_iter(meta["idx"]):
            if i > meta["done"]:
                break
            entry = stored_turn(self.store, cid, i)
            if entry is None:
                continue
            msg = Message.model_construct(_MESSAGE_FIELDS, role=entry["r"], text=entry["t"], turn_index=i)
            h.messages.append((i, msg))
            if "s" in entry:
                h.scores.append(TurnSummary(entry["s"]["m"], entry["s"]["e"]))
        h.ordered = [m for _, m in h.messages]  # ranges_iter is ascending
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
        for w in result.writes:
            if w.table == "meta" and w.value is not None and "v" in w.value:
                h = self._history.get(w.key)
                if h is not None:
                    h.version = w.value["v"]


def _merge_metadata(meta: dict[str, Any], md: Mapping[str, Any], cid: str) -> None:
    """Add the keys of a turn's metadata the conversation does not have yet: the first value of a key wins,
    so a redelivered or late turn never changes what earlier records carried. At most
    :data:`MAX_METADATA_KEYS` keys per conversation (later new keys are logged, not carried)."""
    cur = meta.get("md") or {}
    new = {k: v for k, v in md.items() if k not in cur}
    if not new:
        return
    room = MAX_METADATA_KEYS - len(cur)
    if len(new) > room:
        log.warning("conversation %s: metadata over %d keys; %d new keys not carried", cid, MAX_METADATA_KEYS,
                    len(new) - max(room, 0))  # fmt: skip
        new = dict(list(new.items())[: max(room, 0)])
    if new:
        meta["md"] = {**cur, **new}  # a new dict: the stored meta entry is never mutated before apply


def _remember(meta: dict[str, Any], alerts: Sequence[SafetyAlert]) -> None:
    """Keep what the conversation's verdict needs of each alert (id, type, severity, turn) in its meta entry:
    a few short lists, so the verdict at close never re-scores the turns."""
    if alerts:
        meta["al"] = [*(meta.get("al") or ()), *([a.alert_id, a.alert_type, a.severity, a.turn_index] for a in alerts)]


def _exchange_for(
    cid: str, idx: int, response: str, earlier: Sequence[tuple[int, Message]], context: TurnContext | None
) -> Any:
    from scorers import exchange_for

    return exchange_for(cid, idx, response, earlier, context)


def _exchange_after(cid: str, idx: int, response: str, history: Sequence[Message], context: TurnContext | None) -> Any:
    from scorers import exchange_after

    return exchange_after(cid, idx, response, history, context)


class _Batch:
    """Read-your-writes overlay over the store for one batch; meta entries are written once at the end."""

    def __init__(self, store: StateStore) -> None:
        self.store = store
        self.turns: dict[str, tuple[int, dict[str, Any] | None]] = {}  # chunk key -> (partition, chunk)
        self.metas: dict[str, dict[str, Any] | None] = {}
        self.meta_partition: dict[str, int] = {}
        self.order: list[tuple[TableName, str]] = []

    def existing_meta(self, cid: str) -> dict[str, Any] | None:
        if cid in self.metas:
            return self.metas[cid]
        stored = self.store.get("meta", cid)
        if stored is None:
            return None
        meta = _copy_meta(stored)
        self.metas[cid] = meta
        self.meta_partition[cid] = meta["p"]
        return meta

    def meta(self, cid: str, partition: int, now: float) -> dict[str, Any]:
        meta = self.existing_meta(cid)
        if meta is None:
            meta = {"p": partition, "v": 0, "idx": [], "done": -1, "crisis": None, "ctx": None}
            meta.update({"end": None, "seen": now, "held": None, "closed": None})
            self.metas[cid] = meta
            self.meta_partition[cid] = partition
        return meta

    def replace_meta(self, cid: str, value: dict[str, Any]) -> None:
        self.metas[cid] = value

    def delete_meta(self, cid: str, partition: int) -> None:
        self.metas[cid] = None
        self.meta_partition[cid] = partition

    def turn(self, cid: str, idx: int) -> dict[str, Any] | None:
        key = chunk_key(cid, idx)
        chunk = self.turns[key][1] if key in self.turns else self.store.get("turns", key)
        return chunk.get(str(idx)) if chunk else None

    def put_turn(self, cid: str, idx: int, entry: dict[str, Any], partition: int) -> None:
        key = chunk_key(cid, idx)
        if key in self.turns:
            chunk = self.turns[key][1]
            if chunk is None:  # freed earlier in this batch: a new chunk
                chunk = {}
        else:
            chunk = dict(self.store.get("turns", key) or {})  # copy-on-write: the store stays untouched
        chunk[str(idx)] = entry
        self.turns[key] = (partition, chunk)

    def delete_chunk(self, key: str, partition: int) -> None:
        self.turns[key] = (partition, None)

    def finish(self) -> list[Write]:
        """Turn writes first, then meta (tombstones before turn deletes, see :meth:`TurnProcessor._close`)."""
        live: list[Write] = []
        tombstones: list[Write] = []
        for cid, meta in self.metas.items():
            p = self.meta_partition[cid]
            if meta is None:
                tombstones.append(Write("meta", p, cid, None))
            elif meta.get("closed") is not None:
                tombstones.append(Write("meta", p, cid, meta))
            else:
                meta["v"] = meta.get("v", 0) + 1
                live.append(Write("meta", p, cid, meta))
        # A chunk buffered and freed within this batch never reaches the changelog (nor its delete).
        turn_writes = [
            Write("turns", p, k, v)
            for k, (p, v) in self.turns.items()
            if v is not None or self.store.get("turns", k) is not None
        ]
        puts = [w for w in turn_writes if w.value is not None]
        deletes = [w for w in turn_writes if w.value is None]
        # New turns, then the metas that reference them, then tombstones, then the turns they free.
        return [*puts, *live, *tombstones, *deletes]


def _copy_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """Copy deep enough that mutations in a batch never touch the stored object before apply."""
    out = dict(meta)
    if "idx" in out:
        out["idx"] = [list(r) for r in out["idx"]]
    if out.get("end") is not None:
        out["end"] = dict(out["end"])
    return out
