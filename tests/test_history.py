"""Scores on incomplete history say so (issue 14, part 1): never a silent pass, never a reused record id."""

from __future__ import annotations

from _stream_helpers import synthetic

from schemas import Conversation, Message, decode_output, encode, stable_id
from schemas.topics import CONTROL, TURNS
from scorers import Evaluator, evaluate_conversation
from scorers.checklist import missing_turns
from scorers.verdict import conversation_verdict
from streams import DictStore, Inbound, Timeouts, TurnProcessor
from streams._core import control_record


def _run(conv: Conversation, keep: set[int] | None = None, *, flush_at: float | None = None) -> list:
    """Feed the turns of ``conv`` whose index is in ``keep`` (all by default) to a fresh processor; with
    ``flush_at``, run the timer at that time (the reorder window passes, the conversation closes)."""
    proc = TurnProcessor(Evaluator(), DictStore(), Timeouts(reorder=1.0))
    turns = [t for t in conv.as_turns() if keep is None or t.turn_index in keep]
    items = [Inbound(TURNS.name, 0, i, conv.conversation_id.encode(), encode(t)) for i, t in enumerate(turns)]
    res = proc.process(items, 1000.0)
    proc.store.apply(res.writes)
    proc.on_batch_applied(res)
    out = [decode_output(o.value) for o in res.outputs]
    if flush_at is not None:
        for _ in range(3):  # flush, then close
            for cid, _p, action in proc.due(flush_at):
                r = proc.process([Inbound(CONTROL.name, 0, 0, cid.encode(), control_record(cid, action))], flush_at)
                proc.store.apply(r.writes)
                proc.on_batch_applied(r)
                out += [decode_output(o.value) for o in r.outputs]
    return out


def _by_kind(records: list, kind: str) -> list:
    return [r for r in records if r.kind == kind]


def test_missing_turns_are_ranges_below_the_last_turn() -> None:
    assert missing_turns([0, 1, 2]) == [] and missing_turns([None, None]) == []
    assert missing_turns([3, 4]) == [(0, 2)]
    assert missing_turns([0, 2, 3, 7]) == [(1, 1), (4, 6)]


def test_a_whole_conversation_is_complete_and_keeps_its_ids() -> None:
    conv = synthetic(1, 8, prefix="whole")[0]
    recs = _run(conv)
    assert all(r.history_complete for r in recs if hasattr(r, "history_complete"))
    ts = _by_kind(recs, "turn_score")[0]
    assert ts.record_id == stable_id("turn_score", conv.conversation_id, ts.turn_index, ts.rubric.tag)  # as before


def test_state_lost_with_the_first_turns_never_passes_and_names_the_gap() -> None:
    """The broker-restart case: a worker that lost the state sees a conversation from turn 4 on."""
    conv = synthetic(3, 10, prefix="lost")[1]  # no crisis in this one: it passes when whole
    whole = _run(conv)
    assert _by_kind(whole, "conversation_verdict")[0].passed
    part = _run(conv, keep=set(range(4, 10)), flush_at=1010.0)  # held for the missing 0-3, then given up on
    score = _by_kind(part, "conversation_score")[0]
    verdict = _by_kind(part, "conversation_verdict")[0]
    assert (score.history_complete, score.missing_turns, score.passed) == (False, [(0, 3)], False)
    assert (verdict.history_complete, verdict.missing_turns, verdict.passed) == (False, [(0, 3)], False)
    assert not verdict.safety_gate_failed  # not a safety finding: a result that cannot be trusted to pass
    ids_whole = {r.record_id for r in whole if hasattr(r, "record_id")}
    partial_scores = _by_kind(part, "turn_score")
    assert partial_scores and all(not r.history_complete for r in partial_scores)
    assert not ids_whole & {r.record_id for r in part if hasattr(r, "record_id")}  # no id reused for other content


def test_a_gap_given_up_on_is_named_and_the_turns_after_it_are_partial() -> None:
    conv = synthetic(1, 8, prefix="gap")[0]
    recs = _run(conv, keep={0, 1, 2, 4, 5, 6, 7}, flush_at=1010.0)
    score = _by_kind(recs, "conversation_score")[0]
    assert score.missing_turns == [(3, 3)] and not score.passed
    flags = {r.turn_index: r.history_complete for r in _by_kind(recs, "turn_score")}
    assert flags == {1: True, 5: False, 7: False}


def test_batch_and_stream_agree_on_a_conversation_with_gaps() -> None:
    conv = Conversation(
        conversation_id="batch-gap",
        turns=[
            Message(role="user", text="I had a rough week at work.", turn_index=0),
            Message(role="assistant", text="That sounds tiring. What happened?", turn_index=1),
            Message(role="user", text="My manager yelled at me again.", turn_index=4),
            Message(role="assistant", text="I'm sorry, that sounds upsetting. How are you feeling now?", turn_index=5),
        ],
    )
    batch = evaluate_conversation(conv)
    stream = _run(conv, flush_at=1010.0)
    key = {"conversation_score": "record_id", "turn_score": "record_id", "conversation_verdict": "record_id"}
    for kind, attr in key.items():
        assert {getattr(r, attr) for r in _by_kind(batch, kind)} == {getattr(r, attr) for r in _by_kind(stream, kind)}
    assert _by_kind(batch, "conversation_score")[0].missing_turns == [(2, 3)]
    assert {r.turn_index: r.history_complete for r in _by_kind(batch, "turn_score")} == {1: True, 5: False}


def test_the_verdict_takes_the_gaps_of_either_tier() -> None:
    conv = synthetic(1, 6, prefix="tiers")[0]
    cheap = _by_kind(evaluate_conversation(conv), "conversation_score")[0]
    llm = cheap.model_copy(update={"tier": "llm", "judge": "x:y", "history_complete": False, "missing_turns": [(2, 2)]})
    v = conversation_verdict(cheap, [], llm)
    assert not v.history_complete and v.missing_turns == [(2, 2)] and not v.passed
    assert conversation_verdict(cheap, []).history_complete


def test_partial_records_round_trip() -> None:
    conv = synthetic(1, 6, prefix="rt")[0]
    recs = _run(conv, keep={2, 3, 4, 5}, flush_at=1010.0)
    assert any(getattr(r, "history_complete", True) is False for r in recs)
    for r in recs:
        assert decode_output(encode(r)) == r
