"""End to end on a real broker: every record the batch path produces comes out of the stream, ids included."""

from __future__ import annotations

import asyncio
import base64

import pytest
from _stream_helpers import comparable, diff, expected_records, read_back, synthetic

from schemas import Conversation, ConversationEnd, Message, encode
from schemas.topics import TOPIC_OF_KIND, TURNS
from streams.demo import bundled_samples
from streams.io import load_conversations, publish, schedule, send_raw

pytestmark = [pytest.mark.broker, pytest.mark.slow]

INVALID: list[tuple[bytes | None, bytes, str]] = [
    (b"x", b"this is not json", "malformed JSON"),
    (b"c-bad", b'{"conversation_id": "c-bad", "turn_index": 0, "text": "hi"}', "role"),
    (b"c-bad", b'{"conversation_id": "c-bad", "turn_index": 0, "role": "bot", "text": "hi"}', "role"),
    (b"c-bad", b'{"conversation_id": "c-bad", "turn_index": -1, "role": "user", "text": "hi"}', "turn_index"),
    (b"other", b'{"conversation_id": "c-key", "turn_index": 0, "role": "user", "text": "hi"}', "key"),
    (b"c-bad", b"\xff\xfe\x00garbage", "UTF-8"),
    # ~0.9 MB of garbage: its dead letter (base64 + preview) is ~1.2 MB, over a default 1 MiB producer limit.
    (b"big", b"{" + b"x" * 900_000, "malformed JSON"),
]


def test_every_record_matches_the_batch_path(broker, start_worker) -> None:
    convs, bad = load_conversations(bundled_samples())
    assert not bad
    convs += synthetic(12, 10)
    expected = expected_records(convs)
    assert {r.kind for r in expected.values()} >= {"turn_score", "safety_alert", "conversation_score"}

    worker = start_worker("--inactivity-timeout", "60")
    worker.wait_ready(60)
    asyncio.run(send_raw(broker.url, TURNS.name, [(k, v) for k, v, _ in INVALID], "tansu"))
    asyncio.run(publish(broker.url, TURNS.name, schedule(convs), profile="tansu"))

    def complete(seen: dict) -> bool:
        dead = sum(1 for recs in seen.values() if recs[0][1].kind == "dead_letter")
        return expected.keys() <= seen.keys() and dead >= len(INVALID)

    seen = asyncio.run(read_back(broker.url, complete, timeout=90))
    missing = expected.keys() - seen.keys()
    assert not missing, f"{len(missing)} records never arrived, e.g. {[expected[m] for m in list(missing)[:3]]}"
    for record_id, want in expected.items():
        copies = seen[record_id]
        for topic, got in copies:
            assert topic == TOPIC_OF_KIND[want.kind]
            assert comparable(got) == comparable(want), diff(got, want)
    assert {r.close_reason for _, r in (seen[k][0] for k in expected) if r.kind == "conversation_score"} == {"end_flag"}
    extra = {k: v for k, v in seen.items() if k not in expected}
    dead = [recs[0][1] for recs in extra.values()]
    assert all(r.kind == "dead_letter" for r in dead), dead
    assert len(dead) == len(INVALID)
    by_payload = {base64.b64decode(r.payload_b64): r for r in dead}
    for _key, value, reason_part in INVALID:
        rec = by_payload[value]  # the original bytes, losslessly
        assert rec.source == TURNS.name and rec.offset is not None
        assert reason_part.lower() in (rec.reason + " " + " ".join(e.loc + " " + e.msg for e in rec.errors)).lower()


def test_out_of_order_duplicates_end_event_and_inactivity(broker, start_worker) -> None:
    base = synthetic(3, 8, prefix="order")
    shuffled, dup, silent = base
    silent_turns = [t.model_copy(update={"end_of_conversation": False}) for t in silent.as_turns()]
    expected = expected_records([shuffled, dup])
    expected.update(expected_records([silent]))

    events: list[tuple[bytes, bytes]] = []
    turns = shuffled.as_turns()
    order = [1, 0, 3, 2, 5, 4, 7, 6]  # every pair swapped: the stream must re-order
    events += [(shuffled.conversation_id.encode(), encode(turns[i])) for i in order]
    # Duplicate every turn of one conversation; the end is an explicit event rather than the flag.
    dup_turns = [t.model_copy(update={"end_of_conversation": False}) for t in dup.as_turns()]
    for t in dup_turns:
        events += [(dup.conversation_id.encode(), encode(t))] * 2
    end = ConversationEnd(conversation_id=dup.conversation_id, last_turn_index=dup_turns[-1].turn_index)
    events.append((dup.conversation_id.encode(), encode(end)))
    events += [(silent.conversation_id.encode(), encode(t)) for t in silent_turns]

    worker = start_worker("--inactivity-timeout", "3", "--reorder-timeout", "1")
    worker.wait_ready(60)
    asyncio.run(send_raw(broker.url, TURNS.name, events, "tansu"))
    seen = asyncio.run(read_back(broker.url, lambda s: expected.keys() <= s.keys(), timeout=60))
    assert expected.keys() <= seen.keys()
    for record_id, want in expected.items():
        for _topic, got in seen[record_id]:
            assert comparable(got) == comparable(want)
    # Duplicates were not re-scored: one copy of each record.
    assert all(len(seen[k]) == 1 for k in expected), {k: len(v) for k, v in seen.items() if len(v) > 1}
    reasons = {
        r.conversation_id: r.close_reason for _, r in (seen[k][0] for k in expected) if r.kind == "conversation_score"
    }
    assert reasons == {
        shuffled.conversation_id: "end_flag",
        dup.conversation_id: "end_event",
        silent.conversation_id: "inactivity",
    }

    # A turn arriving after its conversation closed is not a second conversation: it is a dead letter, with its bytes
    # (never a silent drop), and nothing else is produced.
    late = Message(role="user", text="one more thing", turn_index=99)
    conv_late = Conversation(conversation_id=shuffled.conversation_id, turns=[late])
    late_bytes = encode(conv_late.as_turns()[0])
    asyncio.run(send_raw(broker.url, TURNS.name, [(shuffled.conversation_id.encode(), late_bytes)], "tansu"))
    again = asyncio.run(read_back(broker.url, lambda s: len(s) > len(seen), timeout=30))
    new = {k: v for k, v in again.items() if k not in seen}
    assert {k: len(v) for k, v in again.items() if k in seen} == {k: len(v) for k, v in seen.items()}
    assert [r.kind for v in new.values() for _, r in v] == ["dead_letter"], new
    (dead,) = (r for v in new.values() for _, r in v)
    assert dead.reason == "turn after its conversation closed" and base64.b64decode(dead.payload_b64) == late_bytes


def test_a_producer_adding_fields_on_a_real_broker(broker, start_worker) -> None:
    """Issue 15 must-show, end to end: unknown top-level and ``context`` fields plus ``metadata`` on every
    turn: no dead letter, every record of the batch path arrives (ids included), each with the metadata."""
    import orjson

    metadata = {"tenant": "acme", "app_version": "4.2.0", "experiment_arm": "B", "locale": "en-GB"}
    convs = synthetic(6, 8, prefix="fwd")
    events = []
    for conv in convs:
        for t in conv.as_turns():
            d = orjson.loads(encode(t)) | {"label": "gold", "user_id": "u-1", "metadata": metadata}
            d["context"] = {**(d["context"] or {}), "source": "mobile"}
            events.append((conv.conversation_id.encode(), orjson.dumps(d)))
    expected = expected_records(convs)
    worker = start_worker("--inactivity-timeout", "60")
    worker.wait_ready(60)
    asyncio.run(send_raw(broker.url, TURNS.name, events, "tansu"))
    seen = asyncio.run(read_back(broker.url, lambda s: expected.keys() <= s.keys(), timeout=90))
    assert expected.keys() <= seen.keys(), f"{len(expected.keys() - seen.keys())} records never arrived"
    got = [copies[0][1] for copies in seen.values()]
    assert not [r for r in got if r.kind == "dead_letter"]
    assert sum(r.kind == "turn_score" for r in got) == sum(m.role == "assistant" for c in convs for m in c.turns)
    assert all(r.metadata == metadata for r in got), {r.kind for r in got if r.metadata != metadata}
    for record_id, want in expected.items():  # everything else exactly as the batch path
        assert comparable(seen[record_id][0][1]) | {"metadata": {}} == comparable(want)
