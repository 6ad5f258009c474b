"""The producer/consumer contract (issue 15, parts 1 and 2): unknown fields, metadata, schema evolution."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from _stream_helpers import synthetic

from schemas import (
    ALL_RECORDS,
    SCHEMA_MINOR,
    SCHEMA_VERSION,
    Conversation,
    InvalidRecord,
    JudgeJob,
    dead_letter,
    decode_conversation,
    decode_output,
    decode_turn_event,
    encode,
)
from schemas.topics import JUDGE_JOBS, TURNS
from scorers import Evaluator, evaluate_conversation
from streams import DictStore, Inbound, TurnProcessor

METADATA = {"tenant": "acme", "app_version": "4.2.0", "experiment_arm": "B", "channel": "ios", "locale": "en-GB"}


def _producer_lines(convs: list[Conversation], metadata: dict[str, Any] = METADATA) -> list[tuple[bytes, bytes]]:
    """Turn events as a newer producer sends them: unknown top-level and ``context`` fields, and metadata."""
    out = []
    for conv in convs:
        for t in conv.as_turns():
            d = orjson.loads(encode(t))
            d |= {"label": "gold", "user_id": "u-17", "asr": {"confidence": 0.93}, "metadata": metadata}
            d["context"] = {**(d["context"] or {}), "source": "mobile", "vad_ms": 340}
            out.append((conv.conversation_id.encode(), orjson.dumps(d)))
    return out


def test_a_producer_adding_fields_loses_nothing_and_metadata_reaches_every_record() -> None:
    """Must-show of issue 15: 0 dead letters, every turn scored, metadata on every derived record."""
    convs = synthetic(8, 10, prefix="fwd")
    events = _producer_lines(convs)
    proc = TurnProcessor(Evaluator(), DictStore())
    res = proc.process([Inbound(TURNS.name, 0, i, k, v) for i, (k, v) in enumerate(events)], time.time())
    records = [decode_output(o.value) for o in res.outputs]
    assert not [r for r in records if r.kind == "dead_letter"]
    assert res.stats.unknown_fields == len(events)  # every input carried unknown fields; each was counted
    # The same records, ids included, as the batch path makes from the plain conversations.
    want = [r for c in convs for r in evaluate_conversation(c)]
    assert sorted(r.record_id if hasattr(r, "record_id") else r.alert_id for r in records) == sorted(
        r.record_id if hasattr(r, "record_id") else r.alert_id for r in want
    )
    assigned = sum(1 for c in convs for m in c.turns if m.role == "assistant")
    assert sum(r.kind == "turn_score" for r in records) == assigned
    assert sum(r.kind == "conversation_verdict" for r in records) == len(convs)
    assert {r.kind for r in records} >= {"turn_score", "safety_alert", "conversation_score", "conversation_verdict"}
    assert all(r.metadata == METADATA for r in records), [r.kind for r in records if r.metadata != METADATA]


def test_the_batch_path_carries_metadata_and_accepts_unknown_fields() -> None:
    conv = synthetic(1, 6, prefix="b")[0]
    d = orjson.loads(encode(conv)) | {"metadata": METADATA, "label": "x"}
    d["turns"][0]["confidence"] = 0.5
    parsed = decode_conversation(orjson.dumps(d))
    assert parsed.model_extra == {"label": "x"} and parsed.turns[0].model_extra == {"confidence": 0.5}
    records = evaluate_conversation(parsed)
    assert records and all(r.metadata == METADATA for r in records)
    assert all(t.metadata == METADATA for t in parsed.as_turns())  # attune publish sends it on every turn


def test_metadata_merges_over_turns_first_value_wins() -> None:
    conv = synthetic(1, 4, prefix="m")[0]
    turns = conv.as_turns()
    metas = [None, {"tenant": "a"}, {"tenant": "b", "arm": "x"}, None]
    events = []
    for t, md in zip(turns, metas, strict=True):
        events.append((conv.conversation_id.encode(), encode(t.model_copy(update={"metadata": md}))))
    proc = TurnProcessor(Evaluator(), DictStore())
    res = proc.process([Inbound(TURNS.name, 0, i, k, v) for i, (k, v) in enumerate(events)], time.time())
    recs = [decode_output(o.value) for o in res.outputs]
    by_turn = {r.turn_index: r.metadata for r in recs if r.kind == "turn_score"}
    assert by_turn == {1: {"tenant": "a"}, 3: {"tenant": "a", "arm": "x"}}  # a later value never overrides
    closing = [r for r in recs if r.kind in ("conversation_score", "conversation_verdict")]
    assert closing and all(r.metadata == {"tenant": "a", "arm": "x"} for r in closing)


def test_bad_metadata_is_still_a_dead_letter_with_a_clear_reason() -> None:
    base = {"conversation_id": "c", "turn_index": 0, "role": "user", "text": "hi"}
    for md, part in (
        ({"arm": {"nested": 1}}, "flat, no nesting"),
        ({"tenant": "x" * 300}, "limit 256"),
        ({f"k{i}": i for i in range(33)}, "at most 32"),
        ("acme", "valid dictionary"),
    ):
        with pytest.raises(InvalidRecord) as info:
            decode_turn_event(orjson.dumps(base | {"metadata": md}))
        assert part in info.value.describe() and info.value.errors[0].loc.startswith("metadata")


def test_a_dead_letter_keeps_the_valid_metadata_of_its_input() -> None:
    raw = orjson.dumps({"conversation_id": "c", "turn_index": -1, "role": "user", "text": "x", "metadata": METADATA})
    with pytest.raises(InvalidRecord) as info:
        decode_turn_event(raw)
    assert dead_letter(raw, info.value, source="t").metadata == METADATA
    assert dead_letter(b"not json", InvalidRecord("malformed JSON"), source="t").metadata == {}
    bad_md = orjson.dumps({"conversation_id": "c", "metadata": {"a": [1]}})
    assert dead_letter(bad_md, InvalidRecord("x"), source="t").metadata == {}


def test_each_unknown_field_name_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    from schemas import _codec

    _codec._logged_unknown.clear()
    line = {"conversation_id": "c", "turn_index": 0, "role": "user", "text": "x", "zz_new": 1, "context": {"zz_src": 1}}
    with caplog.at_level(logging.WARNING, logger="attune.schemas"):
        for i in range(5):
            decode_turn_event(orjson.dumps(line | {"turn_index": i}))
    msgs = [r.getMessage() for r in caplog.records if "unknown field" in r.getMessage()]
    assert len(msgs) == 1 and "'context.zz_src'" in msgs[0] and "'zz_new'" in msgs[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="attune.schemas"):
        for i in range(3 * _codec.MAX_LOGGED_UNKNOWN):
            decode_turn_event(orjson.dumps(line | {f"zz_{i}": 1}))
    assert len(caplog.records) <= _codec.MAX_LOGGED_UNKNOWN + 1  # never a line per message
    _codec._logged_unknown.clear()


def test_the_unknown_fields_metric_counts_inputs() -> None:
    from streams.observability import WorkerMetrics

    proc = TurnProcessor(Evaluator(), DictStore())
    events = _producer_lines(synthetic(1, 4, prefix="metric"))
    res = proc.process([Inbound(TURNS.name, 0, i, k, v) for i, (k, v) in enumerate(events)], time.time())
    m = WorkerMetrics()
    m.observe_batch(res, [], time.time(), time.time())
    assert m.registry.get_sample_value("attune_inputs_with_unknown_fields_total") == len(events)


def test_judge_jobs_and_their_records_carry_the_metadata(tmp_path: Path) -> None:
    """Jobs carry the conversation's metadata to the judge agent, which stamps every record it makes."""
    pytest.importorskip("openai")
    from attune.testing.fake_judge import FakeJudgeServer
    from scorers.judges import JudgeTier, load_config, run_job
    from streams.judging import JobEmitter, records_outbound

    convs = synthetic(2, 6, prefix="jm")
    with FakeJudgeServer.in_thread() as srv:
        cfg = tmp_path / "j.toml"
        cfg.write_text(
            "[sampling]\nturn_rate = 1.0\n"
            f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{srv.openai_base_url}"\nmax_retries = 0\n'
        )
        tier = JudgeTier(load_config(cfg, override="fake:judge-1"))
        em = JobEmitter(tier)
        proc = TurnProcessor(
            Evaluator(),
            DictStore(),
            close_hooks=[em.on_close],
            turn_hooks=[em.on_turn],
            user_hooks=[em.on_user],
            emit_verdicts=False,
        )
        events = _producer_lines(convs)
        res = proc.process([Inbound(TURNS.name, 0, i, k, v) for i, (k, v) in enumerate(events)], time.time())
        jobs = [JudgeJob.model_validate_json(o.value) for o in res.outputs if o.topic == JUDGE_JOBS.name]
        assert {j.job_type for j in jobs} >= {"turn", "checklist"}
        assert all(j.metadata == METADATA for j in jobs)

        async def judged() -> list[Any]:
            out = []
            for job in jobs:
                out += records_outbound(await run_job(tier, job), job.metadata)
            return out

        records = [decode_output(o.value) for o in asyncio.run(judged())]
    assert {r.kind for r in records} >= {"turn_judgment", "conversation_score", "conversation_verdict"}
    assert all(r.metadata == METADATA for r in records)


# -- part 2: schema evolution --------------------------------------------------------------------------------
SNAPSHOTS = Path(__file__).parent / "data" / "schemas"
PUBLISHED = SNAPSHOTS / f"v{SCHEMA_VERSION}.{SCHEMA_MINOR}"
#: Every published minor of this major, the current one included: a record of today must validate against
#: each (a consumer may still hold any of them).
SAME_MAJOR = sorted(SNAPSHOTS.glob(f"v{SCHEMA_VERSION}.*"), key=lambda p: int(p.name.split(".")[1]))


def _validator(kind: str, version: Path = PUBLISHED) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((version / f"{kind}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def _sample_records() -> list[Any]:
    conv = synthetic(3, 8, prefix="s")
    out: list[Any] = []
    for c in conv:
        out += evaluate_conversation(c.model_copy(update={"metadata": METADATA}))
    out.append(dead_letter(b"{", InvalidRecord("malformed JSON"), source="t"))
    assert {r.kind for r in out} >= {"turn_score", "safety_alert", "conversation_score", "conversation_verdict"}
    return out


def _add_fields(model: Any, dumped: Any, depth: int = 0) -> Any:
    """``dumped`` (the JSON of ``model``) with an unknown field added to the record and to every object
    nested in it that is a record of its own (not to free-form maps such as ``metrics``): what a minor
    version may do."""
    from pydantic import BaseModel

    if isinstance(model, BaseModel):
        out = {k: _add_fields(getattr(model, k, None), v, depth + 1) for k, v in dumped.items()}
        return out | {f"added_in_a_minor_{depth}": [1, "x", {"y": None}]}
    if isinstance(model, list):
        return [_add_fields(m, d, depth + 1) for m, d in zip(model, dumped, strict=True)]
    if isinstance(model, dict):
        return {k: _add_fields(model[k], v, depth + 1) for k, v in dumped.items()}
    return dumped


def _grown(rec: Any) -> Any:
    return _add_fields(rec, orjson.loads(encode(rec)))


def test_the_published_schemas_are_the_ones_attune_schemas_writes(tmp_path: Path) -> None:
    """The snapshot under tests/data/schemas is the contract of this minor version: regenerate it (and bump
    SCHEMA_MINOR, docs/schemas.md) when a record changes; a major change needs SCHEMA_VERSION."""
    from attune._schemas_cmd import write_schemas

    written = {p.name: json.loads(p.read_text()) for p in write_schemas(tmp_path)}
    published = {p.name: json.loads(p.read_text()) for p in PUBLISHED.glob("*.schema.json")}
    assert written == published, "schemas changed: run `attune schemas --out tests/data/schemas/v<major>.<minor>`"
    for schema in written.values():
        assert schema["x-attune-schema-version"] == f"{SCHEMA_VERSION}.{SCHEMA_MINOR}"
        assert '"additionalProperties": false' not in json.dumps(schema)


def test_every_minor_of_the_major_is_kept_and_today_s_records_validate_against_each() -> None:
    """The compatibility promise, checked: what attune writes now validates against every schema a consumer
    of this major may hold (1.1 had no history_complete / missing_turns: a 1.1 consumer still accepts them)."""
    assert [p.name for p in SAME_MAJOR][-1] == PUBLISHED.name and len(SAME_MAJOR) >= 2
    for version in SAME_MAJOR:
        for rec in _sample_records():
            errors = list(_validator(rec.kind, version).iter_errors(orjson.loads(encode(rec))))
            assert not errors, (version.name, rec.kind, errors[0].message)


def test_records_with_added_fields_validate_against_the_previous_schema() -> None:
    """A consumer validating with the schema it has keeps working when attune adds an output field."""
    for rec in _sample_records():
        v = _validator(rec.kind)
        plain = orjson.loads(encode(rec))
        assert not list(v.iter_errors(plain)), rec.kind
        grown = _grown(rec)
        assert grown != plain
        assert not list(v.iter_errors(grown)), (rec.kind, next(iter(v.iter_errors(grown))).message)
        assert decode_output(orjson.dumps(grown)).model_dump() == rec.model_dump()  # attune's own reader too


def test_inputs_with_added_fields_validate_against_the_previous_schema() -> None:
    for conv in synthetic(2, 4, prefix="in"):
        for t in conv.as_turns():
            grown = _grown(t)
            assert not list(_validator("turn").iter_errors(grown))
            decode_turn_event(orjson.dumps(grown))
        assert not list(_validator("conversation").iter_errors(_grown(conv)))


def test_the_previous_schema_still_rejects_what_a_minor_may_not_change() -> None:
    """The open schemas are not empty ones: a removed or retyped field fails a consumer's validation."""
    rec = next(r for r in _sample_records() if r.kind == "safety_alert")
    plain = orjson.loads(encode(rec))
    v = _validator("safety_alert")
    assert list(v.iter_errors({k: x for k, x in plain.items() if k != "severity"}))  # removed
    assert list(v.iter_errors(plain | {"severity": 3}))  # retyped
    assert list(v.iter_errors(plain | {"severity": "urgent"}))  # a new enum value is a major change
    assert list(v.iter_errors(plain | {"schema_version": 2}))  # another major


def test_every_record_type_is_published() -> None:
    kinds = {m.model_fields["kind"].default for m in ALL_RECORDS}
    assert {p.name.removesuffix(".schema.json") for p in PUBLISHED.glob("*.schema.json")} == kinds
