"""A conversation re-published whole after a loss is scored afresh (``conversation_replay``), never ignored.

The case that made it necessary (CI, test_faults_broker.py [recreated_with_traffic]): after a broker
restart, a worker on the new broker had already closed two of the conversations the old worker named as
lost, on partial history; the operator's re-publish of them, as the message told, was then dropped as
late turns of a closed conversation (counted, never scored). Here without a broker: the processor alone.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from _stream_helpers import Harness, synthetic

from schemas import (
    Conversation,
    ConversationReplay,
    InvalidRecord,
    decode_output,
    decode_turn_event,
    encode,
)
from schemas.topics import TURNS
from scorers import Evaluator, evaluate_conversation
from streams import Timeouts
from streams.io import schedule


def _harness() -> Harness:
    return Harness(Timeouts(reorder=1.0))


def _settle(h: Harness, now: float) -> None:
    """The timer at ``now`` as often as it has something to do (flush held turns, then close)."""
    for _ in range(3):
        h.tick(now)


def _out(h: Harness) -> list[Any]:
    return [decode_output(o.value) for o in h.outputs]


def _records(h: Harness, cid: str) -> dict[str, Any]:
    return {_rid(r): r for r in _out(h) if getattr(r, "conversation_id", None) == cid}


def _rid(rec: Any) -> str:
    return rec.alert_id if rec.kind == "safety_alert" else rec.record_id


def _events(conv: Conversation, keep: set[int] | None = None, *, replay: bool = False) -> list[tuple[bytes, bytes]]:
    return [
        (s.key, s.value)
        for s in schedule([conv], replay=replay)
        if keep is None or s.turn_index is None or s.turn_index in keep
    ]


def _batch(conv: Conversation) -> dict[str, Any]:
    return {_rid(r): r for r in evaluate_conversation(conv)}


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    volatile = {"produced_at", "detected_at", "received_at", "close_reason"}
    assert want.keys() <= got.keys(), f"missing: {sorted(want.keys() - got.keys())}"
    for rid, rec in want.items():
        a = {k: v for k, v in got[rid].model_dump(mode="json").items() if k not in volatile}
        b = {k: v for k, v in rec.model_dump(mode="json").items() if k not in volatile}
        assert a == b, rid


@pytest.fixture
def conv() -> Conversation:
    return synthetic(1, 8, prefix="replay")[0]  # conversation 0: a crisis disclosure at turn 2


def test_a_conversation_closed_on_partial_history_is_scored_whole_after_a_replay(conv: Conversation) -> None:
    w = _harness()
    w.feed(_events(conv, keep=set(range(4, 8))))  # its live tail on a new broker: turns 0-3 lost
    _settle(w, 1010.0)  # the reorder window passes: scored and closed on partial history
    partial = _records(w, conv.conversation_id)
    score = next(r for r in partial.values() if r.kind == "conversation_score")
    assert (score.history_complete, score.missing_turns) == (False, [(0, 3)])

    w.feed(_events(conv), now=1020.0)  # re-published without a replay: late turns of a closed conversation
    s = w.proc.stats
    assert (s.duplicates, s.after_close, s.dead_letters) == (4, 4, 4)  # 4-7 seen; 0-3 dead letters, not scored
    new = {r: x for r, x in _records(w, conv.conversation_id).items() if r not in partial}
    assert [(x.kind, x.turn_index) for x in new.values()] == [("safety_alert", 2)]  # the lost disclosure, at least

    w.feed(_events(conv, replay=True), now=1030.0)
    assert w.proc.stats.replays == 1
    _same(_records(w, conv.conversation_id), _batch(conv))  # every record of the whole conversation, as batch
    # The partial records stay on the topics under their own ids; none of the whole ones reuses one.
    assert not (set(partial) - {r for r, x in partial.items() if x.kind == "safety_alert"}) & set(_batch(conv))


def test_a_replay_discards_an_open_buffer_and_leaves_no_orphan_chunk(conv: Conversation) -> None:
    w = _harness()
    w.feed(_events(conv, keep={4, 5}))  # held behind the gap 0-3, still open
    assert any(k.startswith(conv.conversation_id) for k in w.proc.store.tables["turns"])
    w.feed(_events(conv, replay=True))
    _same(_records(w, conv.conversation_id), _batch(conv))
    assert not w.proc.store.tables["turns"]  # closed: no chunk of the old buffer or the new one is left
    meta = w.proc.store.get("meta", conv.conversation_id)
    assert meta is not None and meta.get("closed") is not None  # the tombstone of the whole conversation


def test_a_replay_in_separate_batches_and_redelivered_gives_the_same_records(conv: Conversation) -> None:
    """At least once: the replay and the first turns are redelivered after a crash; same ids, same content."""
    w = _harness()
    w.feed(_events(conv, keep={6, 7}))
    _settle(w, 1010.0)
    events = _events(conv, replay=True)
    w.feed(events[:4], now=1020.0)  # the replay and turns 0-2
    w.feed(events[:4], now=1021.0)  # redelivered: the replay forgets them, they are scored again
    for e in events[4:]:
        w.feed([e], now=1022.0)
    assert w.proc.stats.replays == 2
    got = [r for r in _out(w) if r.conversation_id == conv.conversation_id]
    whole = _batch(conv)
    _same({_rid(r): r for r in got}, whole)
    scores = [r for r in got if r.kind == "conversation_score"]
    assert [s.history_complete for s in scores] == [False, True]  # one partial close, one whole


def test_a_replay_of_a_conversation_never_seen_scores_it_as_new(conv: Conversation) -> None:
    w = _harness()
    w.feed(_events(conv, replay=True))
    assert w.proc.stats.replays == 1
    _same(_records(w, conv.conversation_id), _batch(conv))


def test_a_replay_of_another_conversation_touches_nothing_else() -> None:
    a, b = synthetic(2, 6, prefix="keep")
    w = _harness()
    w.feed(_events(a, keep={0, 1, 2}) + _events(b))
    held = dict(w.proc.store.tables["turns"])
    w.feed([(a.conversation_id.encode(), encode(ConversationReplay(conversation_id=b.conversation_id)))])
    assert w.proc.stats.dead_letters == 1  # the key must be the conversation's: a dead letter, nothing forgotten
    w.feed([(b.conversation_id.encode(), encode(ConversationReplay(conversation_id=b.conversation_id)))])
    assert dict(w.proc.store.tables["turns"]) == held  # a's open buffer untouched
    w.feed(_events(a, keep={3, 4, 5}))
    _same(_records(w, a.conversation_id), _batch(a))


def test_schedule_puts_each_replay_just_before_its_conversation_s_first_turn() -> None:
    convs = synthetic(3, 4, prefix="order")
    events = schedule(convs, replay=True)
    assert len(events) == 3 + sum(len(c.turns) for c in convs)
    for c in convs:
        mine = [e for e in events if e.conversation_id == c.conversation_id]
        first = decode_turn_event(mine[0].value)
        assert isinstance(first, ConversationReplay) and mine[0].replay and mine[0].key == c.conversation_id.encode()
        assert [e.turn_index for e in mine] == [None, *range(len(c.turns))]
    assert all(e.turn_index is not None for e in schedule(convs))  # no replay unless asked


def test_the_replay_record_decodes_and_its_errors_name_it() -> None:
    rec = decode_turn_event(orjson.dumps({"kind": "conversation_replay", "conversation_id": "c1", "new": 1}))
    assert isinstance(rec, ConversationReplay) and rec.conversation_id == "c1"
    with pytest.raises(InvalidRecord) as e:
        decode_turn_event(orjson.dumps({"kind": "conversation_replay"}))
    assert e.value.reason == "invalid conversation_replay record"
    assert "conversation_id" in e.value.describe()
    with pytest.raises(InvalidRecord) as e:
        decode_turn_event(orjson.dumps({"kind": ["conversation_replay"], "conversation_id": "c1"}))
    assert e.value.reason == "invalid turn event record"  # never echoes what it does not know


def test_the_model_stage_s_recent_messages_forget_a_replayed_conversation() -> None:
    from streams.model_stage import RecentMessages

    conv = synthetic(1, 4, prefix="stage")[0]
    recent = RecentMessages(keep=3)
    for t in conv.as_turns()[:2]:
        recent.feed(t)
    assert len(recent) == 1
    recent.feed(ConversationReplay(conversation_id=conv.conversation_id))
    assert len(recent) == 0  # the replayed turns are its history again, not a second copy of it


def test_attune_tail_shows_a_replay_for_what_it_is() -> None:
    from streams._render import render

    text = render(TURNS.name, encode(ConversationReplay(conversation_id="c9"))).plain
    assert text.startswith("replay c9")


# -- a turn its closed conversation never had ------------------------------------------------------------------


def test_a_late_turn_is_a_dead_letter_with_its_bytes_and_a_redelivered_one_a_duplicate(conv: Conversation) -> None:
    w = _harness()
    events = _events(conv)
    w.feed(events)
    closed = len(_out(w))
    w.feed(events[3:5], now=1005.0)  # redelivered after the close: processed before, ignored
    assert len(_out(w)) == closed and w.proc.stats.duplicates == 2 and w.proc.stats.dead_letters == 0
    late = conv.as_turns()[-1].model_copy(update={"turn_index": 8, "text": "one more thing", "role": "user"})
    w.feed([(conv.conversation_id.encode(), encode(late))], now=1030.0)
    (dead,) = _out(w)[closed:]
    assert dead.kind == "dead_letter" and dead.reason == "turn after its conversation closed"
    assert decode_turn_event(base64.b64decode(dead.payload_b64)) == late  # lossless: it can be replayed
    assert "closed 30 s before turn 8" in dead.errors[0].msg and "conversation_replay" in dead.errors[0].msg
    assert w.proc.stats.after_close == 1


def test_a_late_crisis_disclosure_still_raises_its_alert(conv: Conversation) -> None:
    """A missed crisis is the worst failure: a closed conversation does not silence its user."""
    w = _harness()
    w.feed(_events(conv))
    closed = len(_out(w))
    late = conv.as_turns()[0].model_copy(update={"turn_index": 9, "text": "i took all my pills an hour ago"})
    w.feed([(conv.conversation_id.encode(), encode(late))], now=1030.0)
    kinds = [r.kind for r in _out(w)[closed:]]
    assert kinds == ["safety_alert", "dead_letter"], kinds
    alert = _out(w)[closed]
    assert alert.turn_index == 9 and alert.severity == "critical"
    assert alert.alert_id == Evaluator().turn_alerts(conv.conversation_id, 9, late.text)[0].alert_id  # the path's id
