"""The stream's conversation logic without a broker: ordering, duplicates, timers, crash consistency, size."""

from __future__ import annotations

import itertools
import random

import orjson
from _stream_helpers import Harness, comparable, diff, expected_records, rid, synthetic
from hypothesis import given, settings
from hypothesis import strategies as st

import scorers
from schemas import Conversation, ConversationEnd, Message, decode_output, encode
from schemas.topics import CONVERSATION_SCORES, CONVERSATION_VERDICTS, DEAD_LETTER, SAFETY_ALERTS, TURNS
from streams import ClosedConversation, Inbound, Outbound, Timeouts, TurnProcessor
from streams._core import (
    CHUNK,
    AlertNote,
    BufferedTurn,
    ConversationMeta,
    EndMarker,
    Tombstone,
    TurnSummary,
    decode_meta,
    is_open,
    ranges_add,
    ranges_contains,
    ranges_iter,
)


def _items(events: list[tuple[bytes | None, bytes]]) -> list[Inbound]:
    return [Inbound(TURNS.name, 0, i, k, v) for i, (k, v) in enumerate(events)]


def _turn_events(conv: Conversation) -> list[tuple[bytes, bytes]]:
    return [(conv.conversation_id.encode(), encode(t)) for t in conv.as_turns()]


def _assert_matches_batch(h: Harness, convs: list[Conversation], close_reason: str | None = None) -> None:
    want = expected_records(convs)
    got = h.records()
    assert got.keys() == want.keys()
    for k, recs in got.items():
        assert len(recs) == 1, f"{k} emitted {len(recs)} times"
        assert comparable(recs[0]) == comparable(want[k]), diff(recs[0], want[k])
        if close_reason and recs[0].kind == "conversation_score":
            assert recs[0].close_reason == close_reason


def test_in_order_batches_match_the_batch_path() -> None:
    convs = synthetic(9, 10)
    h = Harness()
    events = [e for c in convs for e in _turn_events(c)]
    for i in range(0, len(events), 13):
        h.feed(events[i : i + 13])
    _assert_matches_batch(h, convs, "end_flag")
    assert h.store.tables["turns"] == {}  # every buffer freed
    assert not any(is_open(m) for _, m in h.store.metas())  # only tombstones remain


def test_shuffled_and_duplicated_delivery_matches_the_batch_path() -> None:
    rng = random.Random(7)
    convs = synthetic(8, 12)
    events = [e for c in convs for e in _turn_events(c)]
    noisy = events + rng.sample(events, 40)
    rng.shuffle(noisy)
    h = Harness()
    for i in range(0, len(noisy), 11):
        h.feed(noisy[i : i + 11])
    h.tick(1000.0 + 5.0)  # turns held behind a gap are flushed after the reorder window
    _assert_matches_batch(h, convs)


def test_crisis_alert_is_emitted_on_arrival_even_out_of_order() -> None:
    conv = Conversation(
        conversation_id="c-crisis",
        turns=[
            Message(role="user", text="I had a long day."),
            Message(role="assistant", text="I'm sorry to hear that. What happened?"),
            Message(role="user", text="I want to kill myself."),
            Message(role="assistant", text="Have you tried going for a walk?"),
        ],
    )
    ev = _turn_events(conv)
    h = Harness()
    out = h.feed([ev[2]])  # the crisis turn arrives first, before the turns it follows
    kinds = [(decode_output(o.value).kind, decode_output(o.value).alert_type) for o in out]
    assert kinds == [("safety_alert", "crisis_disclosure")]
    assert out[0].topic == SAFETY_ALERTS.name
    h.feed([ev[0], ev[1], ev[3]])
    _assert_matches_batch(h, [conv])
    assert any(r.kind == "safety_alert" and r.alert_type == "crisis_unanswered" for r, *_ in h.records().values())


def test_inactivity_closes_end_event_closes_and_late_turns_are_dead_letters() -> None:
    a, b = synthetic(2, 6, prefix="timer")
    h = Harness(Timeouts(inactivity=30.0, reorder=1.0, tombstone_ttl=100.0))
    a_turns = [t.model_copy(update={"end_of_conversation": False}) for t in a.as_turns()]
    b_turns = [t.model_copy(update={"end_of_conversation": False}) for t in b.as_turns()]
    h.feed([(a.conversation_id.encode(), encode(t)) for t in a_turns], now=1000.0)
    h.feed([(b.conversation_id.encode(), encode(t)) for t in b_turns], now=1000.0)
    h.feed([(b.conversation_id.encode(), encode(ConversationEnd(conversation_id=b.conversation_id)))], now=1001.0)
    h.tick(1010.0)
    assert {r[0].conversation_id for r in h.records().values() if r[0].kind == "conversation_score"} == {
        b.conversation_id
    }
    h.tick(1031.0)
    scores = {r[0].conversation_id: r[0] for r in h.records().values() if r[0].kind == "conversation_score"}
    assert scores[a.conversation_id].close_reason == "inactivity"
    assert scores[b.conversation_id].close_reason == "end_event"
    _assert_matches_batch(h, [a, b])
    n = len(h.outputs)
    h.feed([(a.conversation_id.encode(), encode(a_turns[-1].model_copy(update={"turn_index": 50})))], now=1040.0)
    # The tombstone keeps a late turn from opening a new buffer; the turn is a dead letter, never silently lost.
    assert [decode_output(o.value).kind for o in h.outputs[n:]] == ["dead_letter"]
    assert h.store.get("meta", a.conversation_id)["closed"] is not None
    h.tick(1200.0)  # tombstone expiry frees the meta entry
    assert h.store.tables["meta"] == {}


def test_redelivery_after_a_crash_before_table_writes_repeats_identical_records() -> None:
    convs = synthetic(4, 8, prefix="redeliver")
    events = [e for c in convs for e in _turn_events(c)]
    h = Harness()
    h.feed(events[:10])
    crashed = h.proc.process(_items(events[10:20]), 1000.0)  # outputs sent, then the worker died
    fresh = TurnProcessor(scorers.Evaluator(), h.store)  # new worker, tables as recovered
    again = fresh.process(_items(events[10:20]), 1000.0)
    assert [(o.topic, rid(decode_output(o.value))) for o in again.outputs] == [
        (o.topic, rid(decode_output(o.value))) for o in crashed.outputs
    ]


def test_invalid_inputs_become_dead_letters_with_reason_and_bytes() -> None:
    h = Harness()
    good = encode(synthetic(1, 2)[0].as_turns()[0])
    out = h.feed([(b"x", b"{not json"), (b"someone-else", good), (None, good)])
    assert [o.topic for o in out] == [DEAD_LETTER.name] * 3
    reasons = [decode_output(o.value).reason for o in out]
    assert "malformed JSON" in reasons[0]
    assert "key must equal conversation_id" in reasons[1] and "key must equal" in reasons[2]
    assert h.store.tables["meta"] == {}


def test_close_hook_sees_the_ordered_conversation_and_its_score() -> None:
    seen: list[ClosedConversation] = []

    def hook(closed: ClosedConversation) -> list[Outbound]:
        seen.append(closed)
        job = orjson.dumps({"conversation_id": closed.conversation_id, "n": len(closed.messages)})
        return [Outbound("attune.jobs.test", closed.conversation_id.encode(), job)]

    conv = synthetic(1, 6, prefix="hook")[0]
    h = Harness(hooks=[hook])
    out = h.feed(_turn_events(conv))
    assert len(seen) == 1 and [m.turn_index for m in seen[0].messages] == list(range(6))
    assert seen[0].score.kind == "conversation_score" and seen[0].close_reason == "end_flag"
    assert out[-1].topic == "attune.jobs.test"
    assert any(o.topic == CONVERSATION_SCORES.name for o in out)


def test_deferred_closes_leave_only_the_checklist_for_later() -> None:
    """``defer_closes``: turn scores and alerts first, then ``finish_closes``; same records, same writes."""
    convs = synthetic(3, 6, prefix="defer")
    events = [e for c in convs for e in _turn_events(c)]
    seen: list[str] = []

    def hook(closed: ClosedConversation) -> list[Outbound]:
        seen.append(closed.conversation_id)
        return []

    eager, deferred = Harness(hooks=[hook]), Harness(hooks=[hook])
    eager_res = eager.proc.process(_items(events), 1000.0)
    res = deferred.proc.process(_items(events), 1000.0, defer_closes=True)
    assert [pc.conversation_id for pc in res.closes] == [c.conversation_id for c in convs]
    assert not any(o.topic == CONVERSATION_SCORES.name for o in res.outputs)
    assert res.writes == eager_res.writes  # the tables close the conversations either way
    assert seen == [c.conversation_id for c in convs]  # the eager run's hooks
    later = deferred.proc.finish_closes(res)
    assert [o.topic for o in later] == [CONVERSATION_SCORES.name, CONVERSATION_VERDICTS.name] * 3 and not res.closes
    assert seen == [c.conversation_id for c in convs] * 2

    def records(outputs: list[Outbound]) -> dict[str, object]:
        return {rid(r): comparable(r) for r in (decode_output(o.value) for o in outputs)}

    assert len(res.outputs) == len(eager_res.outputs)
    assert records(res.outputs) == records(eager_res.outputs)
    assert res.stats == eager_res.stats and deferred.proc.stats == eager.proc.stats


def test_long_conversation_never_rewrites_the_whole_buffer() -> None:
    n = 1000
    conv = Conversation(
        conversation_id="long",
        turns=[
            Message(role="user" if i % 2 == 0 else "assistant", text=f"message number {i} about my day")
            for i in range(n)
        ],
    )
    h = Harness()
    biggest = 0
    writes = 0
    for ev in _turn_events(conv)[:-1]:  # live traffic: one turn per batch
        res = h.proc.process(_items([ev]), 1000.0)
        h.store.apply(res.writes)
        h.proc.on_batch_applied(res)
        writes += len(res.writes)
        biggest = max(biggest, *(len(orjson.dumps(w.value)) for w in res.writes if w.value))
    assert writes == 2 * (n - 1)  # its chunk and the small meta entry, per turn
    assert biggest < 4_000  # bounded by one chunk, not by the conversation
    assert len(h.store.tables["turns"]) == -(-n // CHUNK)
    meta = decode_meta(h.store.tables["meta"]["long"])
    assert isinstance(meta, ConversationMeta) and meta.ranges == [[0, n - 2]] and meta.done == n - 2


@settings(max_examples=60, deadline=None)
@given(st.permutations(list(range(40))))
def test_index_ranges_merge_to_the_same_set(order: list[int]) -> None:
    ranges: list[list[int]] = []
    for k, i in enumerate(order):
        assert not ranges_contains(ranges, i)
        ranges = ranges_add(ranges, i)
        assert sorted(ranges_iter(ranges)) == sorted(order[: k + 1])
        assert all(lo <= hi for lo, hi in ranges)
        assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(ranges))
    assert ranges == [[0, 39]]


# -- the tables' wire format ----------------------------------------------------------------------------
#: A worker's tables mid-conversation, byte for byte as the processor wrote them when its state was plain dicts
#: (before issue 17): turns 0-2 processed, 3 missing, 4 held (it ends the conversation), 2 a crisis turn.
_OLD_TURNS = (
    b'{"0":{"r":"user","t":"I\'ve been feeling really low since the move and I can\'t sleep."},'
    b'"1":{"r":"assistant","t":"That sounds exhausting. What has the move changed most for you?",'
    b'"s":{"m":{"appropriateness":1.0,"conversational_quality":1.0,"helpfulness":0.9,"emotional_intelligence":0.5,'
    b'"personalization_continuity":0.6,"trust_boundaries":0.7,"overall_quality":0.785},"e":2.96}},'
    b'"2":{"r":"user","t":"Honestly I don\'t want to be alive anymore.","c":1},'
    b'"4":{"r":"user","t":"Okay. Thank you for listening."}}'
)
_OLD_META = (
    b'{"p":3,"v":1,"idx":[[0,2],[4,4]],"done":2,"crisis":2,"ctx":{"memory":null,"required_keys":[],'
    b'"forbidden_keys":[],"neutral_keys":[],"emotions":null,"persona":null,"channel":"voice","locale":"en"},'
    b'"end":{"r":"end_flag","last":4},"seen":1000.0,"held":1000.0,"closed":null,"md":{"tenant":"acme"},'
    b'"rk":["benign_activity","benign_move","ready"],"al":[["6300983dcd039da62534","crisis_disclosure","high",2]]}'
)
_WIRE_CONVERSATION = Conversation(
    conversation_id="wire-1",
    context={"channel": "voice"},
    metadata={"tenant": "acme"},
    turns=[
        Message(role="user", text="I've been feeling really low since the move and I can't sleep."),
        Message(role="assistant", text="That sounds exhausting. What has the move changed most for you?"),
        Message(role="user", text="Honestly I don't want to be alive anymore."),
        Message(role="assistant", text="I'm so sorry. Please call or text 988 right now, you deserve support."),
        Message(role="user", text="Okay. Thank you for listening."),
    ],
)


def test_wire_format_round_trips_byte_identical_to_the_dict_format() -> None:
    meta = decode_meta(orjson.loads(_OLD_META))
    assert isinstance(meta, ConversationMeta)
    assert (meta.partition, meta.version, meta.ranges, meta.done, meta.crisis) == (3, 1, [[0, 2], [4, 4]], 2, 2)
    assert meta.end == EndMarker("end_flag", 4) and meta.seen == meta.held == 1000.0
    assert meta.context is not None and meta.context["channel"] == "voice" and meta.metadata == {"tenant": "acme"}
    assert meta.cues == ["benign_activity", "benign_move", "ready"]
    assert meta.alerts == [AlertNote("6300983dcd039da62534", "crisis_disclosure", "high", 2)]
    assert orjson.dumps(meta.to_wire()) == _OLD_META
    # The optional keys keep the order they were first set in, as the dict did (alerts before cues here).
    reordered = orjson.loads(_OLD_META)
    reordered["rk"] = reordered.pop("rk")
    assert list(reordered)[-2:] == ["al", "rk"]
    assert orjson.dumps(decode_meta(reordered).to_wire()) == orjson.dumps(reordered)
    fresh = ConversationMeta(0, 5.0)
    fresh.alerts = [AlertNote("a", "dependency", "high", 1)]
    fresh.metadata = {"k": 1}
    assert list(fresh.to_wire())[-2:] == ["al", "md"]

    tomb = b'{"p":3,"closed":1002.5,"idx":[[0,4]]}'
    assert decode_meta(orjson.loads(tomb)) == Tombstone(3, 1002.5, [[0, 4]])
    assert orjson.dumps(Tombstone(3, 1002.5, [[0, 4]]).to_wire()) == tomb

    chunk = orjson.loads(_OLD_TURNS)
    entries = {int(i): BufferedTurn.from_wire(e) for i, e in chunk.items()}
    assert entries[2] == BufferedTurn("user", "Honestly I don't want to be alive anymore.", crisis=True)
    assert entries[1].summary is not None and entries[1].summary.empathy == 2.96
    assert entries[0].summary is None and not entries[0].crisis
    assert orjson.dumps({str(i): e.to_wire() for i, e in entries.items()}) == _OLD_TURNS
    scored = BufferedTurn("assistant", "ok", summary=TurnSummary({"overall_quality": 0.5}, 3.0))
    assert scored.to_wire() == {"r": "assistant", "t": "ok", "s": {"m": {"overall_quality": 0.5}, "e": 3.0}}


def test_a_worker_restarted_on_old_tables_finishes_the_conversation_as_the_batch_path() -> None:
    """A fresh processor over tables recovered from the changelog (wire dicts, no cached history) processes the
    missing turn, drains the held one, closes, and its records match the batch path: the restored reply's
    scores feed the checklist's means and the restored alert the verdict."""
    h = Harness()
    h.store.tables["turns"]["wire-1:0"] = orjson.loads(_OLD_TURNS)
    h.store.tables["meta"]["wire-1"] = orjson.loads(_OLD_META)
    turn3 = _WIRE_CONVERSATION.as_turns()[3]
    res = h.proc.process([Inbound(TURNS.name, 3, 7, b"wire-1", encode(turn3))], 1001.0)
    h.store.apply(res.writes)
    want = expected_records([_WIRE_CONVERSATION])
    got = [decode_output(o.value) for o in res.outputs]
    assert sorted(r.kind for r in got) == ["conversation_score", "conversation_verdict", "turn_score"]
    for rec in got:
        assert comparable(rec) == comparable(want[rid(rec)]), diff(rec, want[rid(rec)])
    assert h.store.tables["turns"] == {}
    assert orjson.dumps(h.store.tables["meta"]["wire-1"]) == b'{"p":3,"closed":1001.0,"idx":[[0,4]]}'
    assert {w.partition for w in res.writes} == {3}


def test_transcript_keeps_turn_order_whatever_the_arrival_order() -> None:
    order = [0, 1, 2, 5, 3, 9, 4, 6, 8, 7]
    t = scorers.Transcript()
    for i in order:
        t.add(Message(role="user" if i % 2 == 0 else "assistant", text=str(i), turn_index=i))
    assert [m.turn_index for m in t] == list(range(10)) and len(t) == 10 and t[-1].text == "9"
    assert [m.turn_index for m in t.before(4)] == [0, 1, 2, 3]
    assert [m.turn_index for m in t.before(20)] == list(range(10)) and list(t.before(0)) == []


def test_idle_history_is_dropped_and_rebuilt_with_identical_records() -> None:
    """An open conversation without a turn for ``history_idle`` seconds keeps its buffered turns in the
    tables but not their decoded copy in the processor; its next turns rebuild it and score exactly as
    the batch path does."""
    convs = synthetic(4, 10)
    h = Harness(Timeouts(history_idle=30.0, inactivity=300.0))
    events = [(c, e) for c in convs for e in _turn_events(c)]  # in conversation order
    first = [e for _, e in events if orjson.loads(e[1])["turn_index"] < 5]
    rest = [e for _, e in events if orjson.loads(e[1])["turn_index"] >= 5]
    h.feed(first, now=1000.0)
    assert len(h.proc._history) == len(convs)
    h.tick(1020.0)  # idle 20 s: kept
    assert len(h.proc._history) == len(convs)
    h.tick(1031.0)  # idle 31 s: dropped, the conversations still open
    assert h.proc._history == {} and sum(is_open(m) for _, m in h.store.metas()) == len(convs)
    h.feed(rest, now=1032.0)
    _assert_matches_batch(h, convs, "end_flag")


def test_kept_turn_chunks_are_exact_size_bytes() -> None:
    """orjson's output keeps a heap block of at least 4 KB whatever its length; a chunk held in the turns
    table is copied to its exact size (streams._faust.store.compact_dumps)."""
    import tracemalloc

    from streams._faust.store import compact_dumps

    chunk = {str(i): {"r": "user", "t": "I can't sleep since the move and evenings are lonely."} for i in range(16)}
    size = len(orjson.dumps(chunk))
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept = [compact_dumps(chunk) for _ in range(200)]
    per = (tracemalloc.get_traced_memory()[0] - base) / len(kept)
    tracemalloc.stop()
    assert kept[0] == orjson.dumps(chunk)
    assert per <= 1.2 * size + 64, (per, size)  # plain orjson.dumps: ~4 KB more per chunk on orjson 3.13
