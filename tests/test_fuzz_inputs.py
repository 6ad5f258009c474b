"""Property-based fuzzing of every input record, of ``attune evaluate`` on garbage files, and of the scorers.

Valid generated records must round-trip; every invalid one must raise :class:`schemas.InvalidRecord` with
a non-empty reason naming the field, never another exception type.
"""

from __future__ import annotations

import base64
import math
import re
from datetime import UTC
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schemas import (
    DEFAULT_LIMITS,
    Conversation,
    ConversationEnd,
    InvalidRecord,
    Limits,
    Message,
    Turn,
    TurnContext,
    decode_conversation,
    decode_output,
    decode_turn_event,
    encode,
    unknown_fields,
)

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- valid records -------------------------------------------------------------------------------------
texts = st.text(max_size=120)
ids = st.text(min_size=1, max_size=40)
# JSON has no infinity (orjson writes it as null), so a valid record cannot carry one.
json_leaf = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | texts
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def emotions(draw: st.DrawFn) -> dict[str, float]:
    names = draw(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6, unique=True))
    weights = [draw(st.floats(0.01, 1.0)) for _ in names]
    total = sum(weights)
    return {n: w / total for n, w in zip(names, weights, strict=True)}


personas = st.fixed_dictionaries(
    {k: st.floats(0.0, 1.0) for k in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")}
)


@st.composite
def contexts(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.text(max_size=8), max_size=6, unique=True))
    cut = draw(st.integers(0, len(keys)))
    ctx: dict[str, Any] = {
        "memory": draw(st.none() | st.dictionaries(st.text(max_size=8), json_value, max_size=4)),
        "required_keys": keys[:cut],
        "forbidden_keys": keys[cut:],
        "neutral_keys": draw(st.lists(st.text(max_size=8), max_size=3)),
        "emotions": draw(st.none() | emotions()),
        "persona": draw(st.none() | personas),
        "channel": draw(st.sampled_from(["voice", "text"])),
        "locale": draw(st.text(min_size=2, max_size=35)),
    }
    return {k: v for k, v in ctx.items() if draw(st.booleans())}


timestamps = st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat())


@st.composite
def turns(draw: st.DrawFn) -> dict[str, Any]:
    d: dict[str, Any] = {
        "conversation_id": draw(ids),
        "turn_index": draw(st.integers(0, 1_000_000)),
        "role": draw(st.sampled_from(["user", "assistant"])),
        "text": draw(texts),
    }
    if draw(st.booleans()):
        d["kind"] = "turn"
    if draw(st.booleans()):
        d["ts"] = draw(timestamps)
    if draw(st.booleans()):
        d["end_of_conversation"] = draw(st.booleans())
    if draw(st.booleans()):
        d["context"] = draw(contexts())
    return d


@st.composite
def ends(draw: st.DrawFn) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": "conversation_end", "conversation_id": draw(ids)}
    if draw(st.booleans()):
        d["last_turn_index"] = draw(st.none() | st.integers(0, 1_000_000))
    if draw(st.booleans()):
        d["ts"] = draw(timestamps)
    return d


@st.composite
def conversations(draw: st.DrawFn, max_turns: int = 8) -> dict[str, Any]:
    n = draw(st.integers(1, max_turns))
    indexed = draw(st.booleans())
    idx = draw(st.lists(st.integers(0, 1_000_000), min_size=n, max_size=n, unique=True)) if indexed else None
    msgs = []
    for i in range(n):
        m: dict[str, Any] = {"role": draw(st.sampled_from(["user", "assistant"])), "text": draw(texts)}
        if idx is not None:
            m["turn_index"] = idx[i]
        msgs.append(m)
    d: dict[str, Any] = {"conversation_id": draw(ids), "turns": msgs}
    if draw(st.booleans()):
        d["context"] = draw(contexts())
    return d


def _same_context(got: TurnContext | None, sent: dict[str, Any] | None) -> None:
    if sent is None:
        assert got is None
        return
    assert got is not None
    dumped = got.model_dump(mode="json")
    for k, v in sent.items():
        assert dumped[k] == v, k


@FAST
@given(turns())
def test_valid_turns_round_trip(d: dict[str, Any]) -> None:
    rec = decode_turn_event(orjson.dumps(d))
    assert isinstance(rec, Turn)
    for f in ("conversation_id", "turn_index", "role", "text"):
        assert getattr(rec, f) == d[f]
    _same_context(rec.context, d.get("context"))
    assert decode_turn_event(encode(rec)) == rec
    assert decode_turn_event(orjson.dumps(d).decode()) == rec  # str input decodes the same


@FAST
@given(ends())
def test_valid_conversation_ends_round_trip(d: dict[str, Any]) -> None:
    rec = decode_turn_event(orjson.dumps(d))
    assert isinstance(rec, ConversationEnd)
    assert rec.conversation_id == d["conversation_id"] and rec.last_turn_index == d.get("last_turn_index")
    assert decode_turn_event(encode(rec)) == rec


@FAST
@given(conversations())
def test_valid_conversations_round_trip(d: dict[str, Any]) -> None:
    conv = decode_conversation(orjson.dumps(d))
    assert [(m.role, m.text) for m in conv.turns] == [(m["role"], m["text"]) for m in d["turns"]]
    _same_context(conv.context, d.get("context"))
    assert decode_conversation(encode(conv)) == conv
    exploded = conv.as_turns()
    assert len({t.turn_index for t in exploded}) == len(exploded)
    assert [t.end_of_conversation for t in exploded].count(True) == 1


# -- invalid records -----------------------------------------------------------------------------------
garbage = st.recursive(
    # finite: orjson writes inf as null, which is a different (often valid) value, not garbage
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
not_a_string = garbage.filter(lambda v: not isinstance(v, str))
not_an_index = garbage.filter(lambda v: not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10**6))
not_a_role = garbage.filter(lambda v: v not in ("user", "assistant"))
not_a_dict = garbage.filter(lambda v: not isinstance(v, dict) and v is not None)
unknown_field = st.text(min_size=1, max_size=20).filter(
    lambda k: (
        k
        not in {
            "kind",
            "schema_version",
            "conversation_id",
            "turn_index",
            "role",
            "text",
            "ts",
            "end_of_conversation",
            "context",
            "last_turn_index",
            "metadata",
        }
    )
)
bad_indices = (
    st.integers(min_value=-(2**63), max_value=-1)
    | st.integers(min_value=1_000_001, max_value=2**63 - 1)
    | st.booleans()
)


_bad_metadata = st.one_of(
    not_a_dict,
    st.just({"nested": {"a": 1}}),
    st.just({"list": [1, 2]}),
    st.just({"": "empty key"}),
    st.just({"k" * 65: "key too long"}),
    st.just({"tenant": "x" * 257}),
    st.just({f"k{i}": i for i in range(33)}),
)


def _mutations(record: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(field expected in the error, how the record is broken)."""
    common = [
        st.tuples(st.just("conversation_id"), st.fixed_dictionaries({"set": not_a_string | st.just("")})),
        st.tuples(st.just("metadata"), st.fixed_dictionaries({"set": _bad_metadata})),
    ]
    if record == "turn":
        return st.one_of(
            *common,
            st.sampled_from(["conversation_id", "turn_index", "role", "text"]).map(lambda f: (f, {"drop": f})),
            st.tuples(st.just("turn_index"), st.fixed_dictionaries({"set": not_an_index | bad_indices})),
            st.tuples(st.just("role"), st.fixed_dictionaries({"set": not_a_role})),
            st.tuples(st.just("text"), st.fixed_dictionaries({"set": not_a_string})),
            st.tuples(st.just("context"), st.fixed_dictionaries({"set": not_a_dict})),
            st.tuples(
                st.just("end_of_conversation"),
                st.fixed_dictionaries({"set": garbage.filter(lambda v: not isinstance(v, bool))}),
            ),
            st.tuples(st.just("ts"), st.fixed_dictionaries({"set": st.text(min_size=1).filter(_not_a_date)})),
        )
    return st.one_of(
        *common,
        st.just(("conversation_id", {"drop": "conversation_id"})),
        st.tuples(st.just("last_turn_index"), st.fixed_dictionaries({"set": not_an_index.filter(bool) | bad_indices})),
    )


def _not_a_date(s: str) -> bool:
    return not re.match(r"^\s*[0-9+.-]", s)


def _apply(d: dict[str, Any], field: str, how: dict[str, Any]) -> dict[str, Any]:
    out = dict(d)
    if "drop" in how:
        out.pop(how["drop"], None)
    elif "add" in how:
        out[how["add"]] = 1
    else:
        out[field] = how["set"]
    return out


def _assert_names(exc: InvalidRecord, field: str) -> None:
    assert exc.reason.strip()
    locs = [e.loc for e in exc.errors]
    assert any(loc == field or loc.startswith(field + ".") for loc in locs) or field in exc.reason, (
        field,
        exc.reason,
        locs,
    )


@FAST
@given(turns(), _mutations("turn"))
def test_broken_turns_raise_invalid_record_naming_the_field(d: dict[str, Any], mutation: tuple) -> None:
    field, how = mutation
    bad = _apply(d, field, how)
    with pytest.raises(InvalidRecord) as info:
        decode_turn_event(orjson.dumps(bad))
    _assert_names(info.value, field)


@FAST
@given(ends(), _mutations("end"))
def test_broken_conversation_ends_raise_invalid_record_naming_the_field(d: dict[str, Any], mutation: tuple) -> None:
    field, how = mutation
    with pytest.raises(InvalidRecord) as info:
        decode_turn_event(orjson.dumps(_apply(d, field, how)))
    _assert_names(info.value, field)


@FAST
@given(turns() | ends(), st.dictionaries(unknown_field, garbage, min_size=1, max_size=3), st.booleans())
def test_unknown_fields_are_accepted_and_kept_never_rejected(d: dict[str, Any], extra: dict, in_context: bool) -> None:
    """Forward compatibility (issue 15): a producer adding fields, top level or in ``context``, loses nothing."""
    is_turn = d.get("kind") != "conversation_end"
    if in_context and is_turn:
        extra = {k: v for k, v in extra.items() if k not in TurnContext.model_fields}
        assume(extra)
        d = {**d, "context": d.get("context") or {}}
        bad = {**d, "context": {**d["context"], **extra}}
    else:
        bad = {**d, **extra}
    rec = decode_turn_event(orjson.dumps(bad))
    plain = decode_turn_event(orjson.dumps(d))
    kept = rec.context.model_extra if in_context and is_turn else rec.model_extra
    assert kept == orjson.loads(orjson.dumps(extra))  # as JSON carries them (orjson writes inf as null)
    prefix = "context." if in_context and is_turn else ""
    assert unknown_fields(rec) == sorted(prefix + k for k in extra)
    assert encode(rec) == encode(plain)  # known fields identical; unknown ones never reach an output


def _context_mutations() -> st.SearchStrategy[tuple[str, Any]]:
    """(loc prefix under ``context``, replacement value) breaking one context field."""
    return st.one_of(
        st.tuples(st.just("emotions"), st.just({"joy": 0.5})),  # does not sum to 1
        st.tuples(st.just("emotions"), st.floats(1.0001, 1e300).map(lambda x: {"joy": x})),
        st.tuples(st.just("emotions"), st.floats(max_value=-1e-9).map(lambda x: {"joy": x, "calm": 1.0})),
        st.tuples(st.just("emotions"), not_a_dict),
        st.tuples(st.just("emotions"), st.just({"joy": "high"})),
        st.tuples(st.just("persona"), st.just({"openness": 0.5})),  # four traits missing
        st.tuples(st.just("persona"), personas.map(lambda p: {**p, "openness": 1.5})),
        st.tuples(st.just("persona"), not_a_dict),
        st.tuples(st.just("memory"), not_a_dict),
        st.tuples(st.just("required_keys"), not_a_dict.filter(lambda v: not isinstance(v, list))),
        st.tuples(st.just("channel"), not_a_role.filter(lambda v: v not in ("voice", "text"))),
        st.tuples(st.just("locale"), st.just("e") | st.text(min_size=36, max_size=60) | not_a_string),
    )


@FAST
@given(turns(), conversations(), _context_mutations(), st.booleans())
def test_broken_contexts_raise_invalid_record_naming_the_field(
    t: dict[str, Any], c: dict[str, Any], mutation: tuple[str, Any], in_turn: bool
) -> None:
    field, value = mutation
    d = t if in_turn else c
    d = {**d, "context": {**(d.get("context") or {}), field: value}}
    with pytest.raises(InvalidRecord) as info:
        (decode_turn_event if in_turn else decode_conversation)(orjson.dumps(d))
    _assert_names(info.value, "context." + field if field in TurnContext.model_fields else "context")


def test_keys_both_required_and_forbidden_are_rejected() -> None:
    d = {"conversation_id": "c", "turns": [{"role": "user", "text": "x"}]}
    d["context"] = {"required_keys": ["a", "b"], "forbidden_keys": ["b"]}
    with pytest.raises(InvalidRecord) as info:
        decode_conversation(orjson.dumps(d))
    _assert_names(info.value, "context")
    assert "'b'" in info.value.describe()


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999"])
def test_non_finite_emotions_in_json_are_rejected(literal: bytes) -> None:
    raw = b'{"conversation_id":"c","turn_index":0,"role":"user","text":"x","context":{"emotions":{"joy":%s}}}'
    with pytest.raises(InvalidRecord) as info:
        decode_turn_event(raw % literal)
    assert info.value.reason.startswith("malformed JSON")  # orjson refuses them: no float ever gets that far


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_emotions_from_python_are_rejected(value: float) -> None:
    for emotions_ in ({"joy": value}, {"joy": value, "calm": 1.0}):
        with pytest.raises(ValueError, match="emotion probabilities must be finite"):
            TurnContext(emotions=emotions_)
    traits = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
    with pytest.raises(ValueError, match=r"persona\.openness\n"):
        TurnContext.model_validate({"persona": {**dict.fromkeys(traits, 0.5), "openness": value}})


@FAST
@given(conversations(), st.integers(0, 7), _mutations("turn").filter(lambda m: m[0] in ("role", "text", "turn_index")))
def test_broken_messages_in_conversations_name_the_message(d: dict[str, Any], pos: int, mutation: tuple) -> None:
    field, how = mutation
    if field == "turn_index" and "drop" in how:
        return  # turn_index is optional inside a conversation
    pos %= len(d["turns"])
    msgs = list(d["turns"])
    msgs[pos] = _apply(msgs[pos], field, how)
    if field == "turn_index" and how.get("set") is None:
        assume(False)  # null is "no index": valid
    with pytest.raises(InvalidRecord) as info:
        decode_conversation(orjson.dumps({**d, "turns": msgs}))
    _assert_names(info.value, f"turns.{pos}.{field}")


@FAST
@given(conversations(), st.one_of(st.just([]), not_a_dict.filter(lambda v: not isinstance(v, list))))
def test_conversation_without_a_list_of_turns_is_rejected(d: dict[str, Any], turns_value: Any) -> None:
    with pytest.raises(InvalidRecord) as info:
        decode_conversation(orjson.dumps({**d, "turns": turns_value}))
    _assert_names(info.value, "turns")


@FAST
@given(conversations(max_turns=4))
def test_duplicate_indices_in_a_conversation_are_rejected(d: dict[str, Any]) -> None:
    msgs = [{**m, "turn_index": 7} for m in d["turns"]]
    assume(len(msgs) > 1)
    with pytest.raises(InvalidRecord) as info:
        decode_conversation(orjson.dumps({**d, "turns": msgs}))
    assert "unique" in info.value.describe()


@pytest.mark.parametrize("depth", [DEFAULT_LIMITS.max_json_depth + 1, 253, 300, 1000, 1023])
def test_deep_nesting_is_rejected_before_it_can_break_serialisation(depth: int) -> None:
    nested = b"[" * (depth - 3) + b"]" * (depth - 3)  # record (1) > context (2) > memory (3) > arrays
    turn = b'{"conversation_id":"c","turn_index":0,"role":"user","text":"x","context":{"memory":{"k":%s}}}'
    with pytest.raises(InvalidRecord) as info:
        decode_turn_event(turn % nested)
    assert info.value.reason
    deep_kind = b'{"kind":%s}' % (b"[" * (depth - 1) + b"]" * (depth - 1))
    with pytest.raises(InvalidRecord):
        decode_turn_event(deep_kind)
    with pytest.raises(InvalidRecord):
        decode_conversation(b'{"conversation_id":"c","turns":%s}' % nested)


def test_nesting_at_the_limit_is_accepted_and_serialisable() -> None:
    depth = DEFAULT_LIMITS.max_json_depth
    nested = b"[" * (depth - 3) + b"]" * (depth - 3)
    turn = b'{"conversation_id":"c","turn_index":0,"role":"user","text":"x","context":{"memory":{"k":%s}}}'
    rec = decode_turn_event(turn % nested)
    assert decode_turn_event(encode(rec)) == rec
    assert orjson.dumps({"p": 0, "ctx": rec.context.model_dump(mode="json")})  # the stream's meta entry


def test_limits_refuse_a_depth_that_could_not_be_serialised() -> None:
    with pytest.raises(ValueError, match="max_json_depth"):
        Limits(max_json_depth=300)


# -- seed 002 samples and seed 003 generations ---------------------------------------------------------
@st.composite
def seed002(draw: st.DrawFn) -> dict[str, Any]:
    d: dict[str, Any] = {"id": draw(ids | st.integers(0, 10**9)), "query": draw(texts), "response": draw(texts)}
    ctx = draw(contexts())
    for k in ("memory", "required_keys", "forbidden_keys", "neutral_keys", "emotions", "persona", "channel"):
        if k in ctx and ctx[k] is not None:
            d[k] = ctx[k]
    return d


@st.composite
def seed003(draw: st.DrawFn) -> dict[str, Any]:
    user_key = draw(st.sampled_from(["user_statement", "user", "prompt", "query"]))
    reply_key = draw(st.sampled_from(["assistant_response", "response", "assistant"]))
    return {"sample_id": draw(ids | st.integers(0, 10**9)), user_key: draw(texts), reply_key: draw(texts)}


def _parse(obj: Any) -> Conversation:
    from attune._formats import parse_object

    return parse_object(obj, orjson.dumps(obj), DEFAULT_LIMITS)


@FAST
@given(seed002() | seed003())
def test_valid_seed_samples_become_two_message_conversations(d: dict[str, Any]) -> None:
    conv = _parse(d)
    user = next(d[k] for k in ("user_statement", "user", "prompt", "query") if k in d)
    reply = next(d[k] for k in ("assistant_response", "response", "assistant") if k in d)
    assert conv.conversation_id == str(d.get("sample_id", d.get("id")))
    assert [(m.role, m.text) for m in conv.turns] == [("user", user), ("assistant", reply)]
    if "emotions" in d:
        assert conv.context is not None and conv.context.emotions == d["emotions"]


@FAST
@given(
    seed002() | seed003(),
    st.sampled_from(["id", "user", "reply", "emotions", "persona", "memory", "deep"]),
    garbage,
)
def test_broken_seed_samples_raise_invalid_record_naming_the_field(d: dict[str, Any], what: str, junk: Any) -> None:
    d = dict(d)
    id_key = "sample_id" if "sample_id" in d else "id"
    if what == "id":
        assume(not isinstance(junk, str | int) or isinstance(junk, bool) or junk == "")
        d[id_key] = junk
        expect = id_key
    elif what in ("user", "reply"):
        keys = ("user_statement", "user", "prompt", "query")
        if what == "reply":
            keys = ("assistant_response", "response", "assistant")
        assume(not isinstance(junk, str))
        d[next(k for k in keys if k in d)] = junk
        # The error names the canonical field of the record's format, whichever alias was used.
        expect = keys[0] if id_key == "sample_id" else ("query" if what == "user" else "response")
    elif what == "emotions":
        d["emotions"] = {"joy": 0.2}
        expect = "context.emotions"
    elif what == "persona":
        d["persona"] = {"openness": 2.0}
        expect = "context.persona"
    elif what == "memory":
        assume(not isinstance(junk, dict) and junk is not None)
        d["memory"] = junk
        expect = "context.memory"
    else:
        d["memory"] = {"k": orjson.loads(b"[" * 100 + b"]" * 100)}
        expect = "memory"
    with pytest.raises(InvalidRecord) as info:
        _parse(d)
    _assert_names(info.value, expect)


@FAST
@given(garbage.filter(lambda v: not isinstance(v, dict)) | st.dictionaries(unknown_field, garbage, max_size=3))
def test_unrecognised_objects_are_rejected(obj: Any) -> None:
    assume(not isinstance(obj, dict) or not ({"turns", "conversation_id", "sample_id", "id"} & obj.keys()))
    with pytest.raises(InvalidRecord) as info:
        _parse(obj)
    assert info.value.reason


# -- attune evaluate on a fuzzed JSONL file ------------------------------------------------------------
_GARBAGE_LINES = st.one_of(
    st.binary(min_size=1, max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b and b.strip() != b""),
    st.binary(min_size=1, max_size=20).map(lambda b: b'{"conversation_id": "x\xff\xfe", "turns": []}' + b.strip()),
    garbage.filter(lambda v: not isinstance(v, dict)).map(orjson.dumps),
    st.sampled_from(
        [
            b"\xef\xbb\xbf{}",
            b'{"conversation_id": "c", "turns": [{"role": "robot", "text": "x"}]}',
            b'{"conversation_id": "c", "turns": [{"role": "user", "text": "x", "turn_index": -1}]}',
            b'{"conversation_id": "c", "turns": [{"role": "user", "text": "\\ud800"}]}',
            b'{"conversation_id": "c", "turns": [{"role": "user", "text": "a\x00b"}]}',
            b'{"sample_id": [1], "user_statement": "a", "assistant_response": "b"}',
            b'{"sample_id": "s", "user_statement": "a"}',
            b'{"id": "s", "query": "a", "response": 5}',
            b'{"conversation_id": "c", "turns": ' + b"[" * 500 + b"]" * 500 + b"}",
            b'{"sample_id": ' + b"[" * 1000 + b"]" * 1000 + b', "user_statement": "a", "assistant_response": "b"}',
            b'{"id": "s", "query": "a", "response": "b", "memory": {"k": ' + b"[" * 300 + b"]" * 300 + b"}}",
        ]
    ),
).filter(lambda b: b"\n" not in b and b"\r" not in b)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(st.one_of(conversations(max_turns=4), seed002(), seed003()), min_size=1, max_size=4),
    st.lists(_GARBAGE_LINES, min_size=1, max_size=6),
    st.randoms(use_true_random=False),
)
def test_attune_evaluate_reports_every_bad_line_and_scores_every_good_one(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    good: list[dict[str, Any]],
    bad: list[bytes],
    rnd: Any,
) -> None:
    from attune.cli import main

    monkeypatch.setenv("COLUMNS", "100000")  # rich must not wrap `file:line` reasons
    tmp = tmp_path_factory.mktemp("evaluate")
    good = [{**g, **({"conversation_id": f"good-{i}"} if "turns" in g else {})} for i, g in enumerate(good)]
    good = [{**g, "sample_id": f"good-{i}"} if "sample_id" in g else g for i, g in enumerate(good)]
    good = [{**g, "id": f"good-{i}"} if "query" in g and "id" in g else g for i, g in enumerate(good)]

    oversize = b'{"conversation_id": "big", "turns": [{"role": "user", "text": "' + b"x" * 20_000 + b'"}]}'
    lines: list[tuple[bytes, bool]] = [(orjson.dumps(g), True) for g in good]
    lines += [(b, False) for b in bad] + [(oversize, False)]
    rnd.shuffle(lines)
    path = tmp / "in.jsonl"
    path.write_bytes(b"".join(b + b"\n" for b, _ in lines))
    out = tmp / "out.jsonl"
    capsys.readouterr()
    code = main(["evaluate", str(path), "--out", str(out), "--quiet", "--max-payload-bytes", "20000"])
    err = capsys.readouterr().err
    assert code == 1
    bad_lines = {n for n, (_, ok) in enumerate(lines, start=1) if not ok}
    for n in bad_lines:
        assert re.search(rf"{re.escape(str(path))}:{n}: \S", err), (n, err)
    reported = {int(m) for m in re.findall(rf"{re.escape(str(path))}:(\d+):", err)}
    assert reported == bad_lines
    records = [decode_output(line) for line in out.read_bytes().splitlines()]
    dead = [r for r in records if r.kind == "dead_letter"]
    assert sorted(r.offset for r in dead) == sorted(bad_lines)
    for r in dead:
        assert r.reason and base64.b64decode(r.payload_b64) == lines[r.offset - 1][0]
    scored = {r.conversation_id for r in records if r.kind == "conversation_score"}
    assert scored == {f"good-{i}" for i in range(len(good))}


# -- scorers on arbitrary unicode ----------------------------------------------------------------------
_SPECIAL = st.sampled_from(
    [
        "😭",
        "👩‍👩‍👧",
        "🏳️‍🌈",
        "مرحبا، أنا حزين جدا",
        "שלום",
        "\u202e",
        "\u200b",
        "\u200d",
        "\ufeff",
        "e\u0301\u0301\u0301",
        "\x00",
        "\x1b[31m",
        "\r\n",
        "\t",
        "\u2028",
        "I want to kill myself",
        "call 988",
        "ǅ",
        "ﬃ",
        "İ",
        "\U0010ffff",
    ]
)
wild_text = st.lists(st.text(max_size=40) | _SPECIAL, max_size=12).map("".join)
huge_text = st.tuples(wild_text, st.integers(1, 20_000)).map(lambda p: ((p[0] or "x") * 20_000)[: p[1]])


def _check_score(score: Any) -> None:
    assert 1.0 <= score.empathy <= 5.0 and math.isfinite(score.empathy)
    assert score.metrics
    for k, v in score.metrics.items():
        assert math.isfinite(v) and 0.0 <= v <= 1.0, (k, v)
    decode_output(encode(score))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wild_text, wild_text, st.lists(st.tuples(st.sampled_from(["user", "assistant"]), wild_text), max_size=4))
def test_scorers_never_raise_on_wild_unicode(user: str, reply: str, history: list[tuple[str, str]]) -> None:
    _run_evaluator(user, reply, history)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(huge_text, huge_text)
def test_scorers_never_raise_on_20k_character_texts(user: str, reply: str) -> None:
    _run_evaluator(user, reply, [])


def _run_evaluator(user: str, reply: str, history: list[tuple[str, str]]) -> None:
    from scorers import Evaluator, exchange_for

    ev = Evaluator()
    msgs = [(i, Message(role=r, text=t, turn_index=i)) for i, (r, t) in enumerate(history)]
    u = len(msgs)
    ures = ev.on_user_turn("fuzz", u, user)
    for a in ures.alerts:
        decode_output(encode(a))
    msgs.append((u, Message(role="user", text=user, turn_index=u)))
    ex = exchange_for("fuzz", u + 1, reply, msgs, None)
    for crisis in (None, u):
        ares = ev.on_assistant_turn(ex, answers_crisis_turn=crisis)
        _check_score(ares.score)
        for a in ares.alerts:
            decode_output(encode(a))
    msgs.append((u + 1, Message(role="assistant", text=reply, turn_index=u + 1)))
    for ctx in (None, TurnContext(channel="text", emotions={"sad": 1.0})):
        cs = ev.on_close("fuzz", [m for _, m in msgs], ctx, "batch", [ares.score])
        assert 0.0 <= cs.score <= 1.0
        decode_output(encode(cs))
