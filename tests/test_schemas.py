"""Record schemas: round trips, strict validation with field-level reasons, lossless dead letters."""

from __future__ import annotations

import base64
import json

import orjson
import pytest

from schemas import (
    ALL_RECORDS,
    ALL_TOPICS,
    Conversation,
    ConversationEnd,
    InvalidRecord,
    Limits,
    RubricRef,
    SafetyAlert,
    Turn,
    dead_letter,
    decode_conversation,
    decode_output,
    decode_turn_event,
    encode,
    stable_id,
)


def _turn(**kw) -> bytes:
    base = {"conversation_id": "c1", "turn_index": 0, "role": "user", "text": "hello"}
    base.update(kw)
    return orjson.dumps(base)


def test_turn_defaults_kind_and_round_trips() -> None:
    t = decode_turn_event(_turn(context={"channel": "text", "locale": "en-GB", "required_keys": ["a"]}))
    assert isinstance(t, Turn)
    assert t.kind == "turn" and t.schema_version == 1
    assert t.context is not None and t.context.channel == "text"
    again = decode_turn_event(encode(t))
    assert again == t


def test_conversation_end_is_recognised_by_kind() -> None:
    rec = decode_turn_event(orjson.dumps({"kind": "conversation_end", "conversation_id": "c1"}))
    assert isinstance(rec, ConversationEnd)


@pytest.mark.parametrize(
    ("payload", "reason_part", "loc"),
    [
        (b"{not json", "malformed JSON", None),
        (b"[1, 2]", "expected a JSON object", None),
        (b"\xff\xfe{}", "not valid UTF-8", None),
        (_turn(role="system"), "invalid turn record", "role"),
        (_turn(turn_index=-1), "invalid turn record", "turn_index"),
        (_turn(turn_index="three"), "invalid turn record", "turn_index"),
        (_turn(turn_index=10**12), "invalid turn record", "turn_index"),
        (_turn(text=None), "invalid turn record", "text"),
        (_turn(metadata={"arm": [1]}), "invalid turn record", "metadata"),
        (orjson.dumps({"turn_index": 0, "role": "user", "text": "x"}), "invalid turn record", "conversation_id"),
        (_turn(context={"emotions": {"sad": 0.5, "happy": 0.1}}), "invalid turn record", "context.emotions"),
        (_turn(context={"required_keys": ["a"], "forbidden_keys": ["a"]}), "invalid turn record", "context"),
    ],
)
def test_invalid_turns_name_the_field(payload: bytes, reason_part: str, loc: str | None) -> None:
    with pytest.raises(InvalidRecord) as ei:
        decode_turn_event(payload)
    assert reason_part in ei.value.reason
    if loc is not None:
        assert any(e.loc == loc for e in ei.value.errors), ei.value.errors


def test_limits_reject_rather_than_truncate() -> None:
    with pytest.raises(InvalidRecord, match="text too long"):
        decode_turn_event(_turn(text="a" * 101), Limits(max_text_chars=100))
    with pytest.raises(InvalidRecord, match="over the limit"):
        decode_turn_event(_turn(text="a" * 2000), Limits(max_payload_bytes=1000))


def test_dead_letter_keeps_original_bytes_and_reason() -> None:
    raw = b"\xff not utf8 at all"
    with pytest.raises(InvalidRecord) as ei:
        decode_turn_event(raw)
    dl = dead_letter(raw, ei.value, source="attune.turns", partition=2, offset=17)
    assert base64.b64decode(dl.payload_b64) == raw
    assert "UTF-8" in dl.reason
    assert dl.record_id == dead_letter(raw, ei.value, source="attune.turns", partition=2, offset=17).record_id
    back = decode_output(encode(dl))
    assert back.kind == "dead_letter" and back.payload_b64 == dl.payload_b64


def test_conversation_explodes_into_ordered_turns_with_end_flag() -> None:
    conv = decode_conversation(
        orjson.dumps(
            {
                "conversation_id": "c9",
                "turns": [{"role": "user", "text": "hi"}, {"role": "assistant", "text": "hello"}],
                "context": {"channel": "voice"},
            }
        )
    )
    turns = conv.as_turns()
    assert [t.turn_index for t in turns] == [0, 1]
    assert [t.end_of_conversation for t in turns] == [False, True]
    assert turns[0].context is not None


def test_conversation_rejects_duplicate_turn_indices_and_too_many_turns() -> None:
    dup = {"conversation_id": "c", "turns": [{"role": "user", "text": "a", "turn_index": 1}] * 2}
    with pytest.raises(InvalidRecord):
        decode_conversation(orjson.dumps(dup))
    many = {"conversation_id": "c", "turns": [{"role": "user", "text": "a"}] * 5}
    with pytest.raises(InvalidRecord, match="too many turns"):
        decode_conversation(orjson.dumps(many), Limits(max_turns_per_conversation=4))


def test_stable_ids_are_deterministic_and_distinct() -> None:
    a = stable_id("alert", "c1", 3, "crisis_disclosure")
    assert a == stable_id("alert", "c1", 3, "crisis_disclosure")
    assert a != stable_id("alert", "c1", 3, "crisis_unanswered")
    # Part boundaries matter: ("c1", 23) must not collide with ("c12", 3).
    assert stable_id("c1", 23) != stable_id("c12", 3)


def test_output_union_decodes_by_kind() -> None:
    alert = SafetyAlert(
        alert_id="x",
        conversation_id="c",
        turn_index=1,
        alert_type="crisis_disclosure",
        severity="critical",
        categories=["suicidal_ideation_direct"],
        source="heuristic",
        rubric=RubricRef(id="r", version="1", source="seed-000"),
    )
    back = decode_output(encode(alert))
    assert isinstance(back, SafetyAlert) and back == alert


def test_every_record_has_kind_and_schema_version() -> None:
    for model in ALL_RECORDS:
        assert "kind" in model.model_fields and "schema_version" in model.model_fields
    assert Conversation.model_fields["kind"].default == "conversation"


def test_topics_are_unique_and_explicitly_partitioned() -> None:
    names = [t.name for t in ALL_TOPICS]
    assert len(names) == len(set(names))
    assert all(t.partitions >= 1 and t.producers and t.consumers for t in ALL_TOPICS)


def test_every_producer_and_consumer_named_as_code_exists() -> None:
    """``module:attr (what)`` names attune code: each must import; plain words name people and systems."""
    import importlib
    import re

    from schemas.topics import INTERNAL_TOPICS, JUDGE_JOBS

    checked = 0
    for spec in (*ALL_TOPICS, *INTERNAL_TOPICS, JUDGE_JOBS):
        for who in (*spec.producers, *spec.consumers):
            m = re.match(r"([a-z_][a-z0-9_.]*):([A-Za-z_][A-Za-z0-9_.]*)", who)
            if m is None:
                assert "streams." not in who and "attune." not in who, f"{spec.name}: {who!r} looks like code"
                continue
            obj = importlib.import_module(m.group(1))
            for part in m.group(2).split("."):
                obj = getattr(obj, part)
            checked += 1
    assert checked >= 20


def test_every_output_kind_has_exactly_one_topic() -> None:
    from schemas.topics import TOPIC_OF_KIND

    kinds = [r.model_fields["kind"].default for t in ALL_TOPICS for r in t.records]
    assert len(kinds) == len(set(kinds)) == len(TOPIC_OF_KIND)
    outputs = {m.model_fields["kind"].default for m in ALL_RECORDS} - {"conversation"}
    assert outputs == set(TOPIC_OF_KIND)


def test_schemas_command_writes_one_json_schema_per_record(tmp_path) -> None:
    from attune._schemas_cmd import write_schemas

    paths = write_schemas(tmp_path)
    assert len(paths) == len(ALL_RECORDS)
    turn_schema = json.loads((tmp_path / "turn.schema.json").read_text())
    assert {"conversation_id", "turn_index", "role", "text"} <= set(turn_schema["required"])
