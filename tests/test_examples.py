"""The example consumers (examples/, docs/consumers.md): unit tests of their ordering, then both against a broker.

Alerts: acknowledged (durably) before the offset is committed, so a SIGKILL between the two redelivers and the
ack store absorbs the copy; a failing handler is never committed past; what is not a routable alert is
parked. Analytics: one DuckDB row per record_id, slices equal to counts computed here from the topics.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import orjson
import pytest
from _stream_helpers import expected_records, read_back, synthetic
from aiokafka import AIOKafkaConsumer, TopicPartition

from schemas import Conversation, RubricRef, SafetyAlert, decode_output, encode
from schemas.topics import CONVERSATION_SCORES, CONVERSATION_VERDICTS, SAFETY_ALERTS, TURN_SCORES, TURNS

ROOT = Path(__file__).resolve().parents[1]
#: The routing docs/consumers.md documents, written out here rather than imported: a changed table in the
#: example must fail this test, not silently agree with itself.
DOCUMENTED_ROUTES = {"critical": "page", "high": "page", "medium": "review", "possible": "review", "info": "ops_log"}


def _load(name: str) -> ModuleType:
    """The examples are scripts, not a package: load one by path."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


alerts_mod = _load("alerts_consumer")


def _analytics() -> ModuleType:
    pytest.importorskip("duckdb", reason="pip install -e '.[examples]' (CI installs it with '.[all]')")
    return _load("analytics_consumer")


# -- alerts consumer: the ordering, with a fake consumer --------------------------------------------------

TP = TopicPartition(SAFETY_ALERTS.name, 0)
RUBRIC = RubricRef(id="crisis", version="1.0", source="seed-004")


@dataclass
class Msg:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def _alert(n: int, severity: str) -> SafetyAlert:
    return SafetyAlert(
        alert_id=f"a{n}",
        conversation_id=f"c{n}",
        turn_index=n,
        alert_type="judge_error" if severity == "info" else "crisis_disclosure",
        severity=severity,  # type: ignore[arg-type]
        categories=["suicidal_ideation_direct"],
        source="heuristic",
        rubric=RUBRIC,
        metadata={"tenant": "acme"},
    )


def _msgs(values: list[bytes], start: int = 0) -> list[Msg]:
    return [Msg(TP.topic, TP.partition, start + i, b"k", v) for i, v in enumerate(values)]


class FakeConsumer:
    """Records commits and seeks in the shared event log; ``crash_on_commit`` stands in for a SIGKILL."""

    def __init__(self, events: list[tuple], crash_on_commit: bool = False) -> None:
        self.events, self.crash_on_commit = events, crash_on_commit
        self.committed: dict[TopicPartition, int] = {}

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        if self.crash_on_commit:
            raise KeyboardInterrupt("killed before the commit reached the broker")
        self.events.append(("commit", dict(offsets)))
        self.committed.update(offsets)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.events.append(("seek", tp, offset))


def _processor(tmp_path: Path, events: list[tuple], fail: Callable[[SafetyAlert], bool] = lambda a: False):
    """An AlertProcessor whose handlers, ack store and parking file write to ``events`` as things happen."""

    class LoggedStore(alerts_mod.AckStore):
        def ack(self, alert, route, msg) -> None:
            super().ack(alert, route, msg)
            events.append(("ack", msg.offset, alert.alert_id))

    class LoggedParking(alerts_mod.ParkingFile):
        def park(self, msg, reason: str) -> None:
            super().park(msg, reason)
            events.append(("parked", msg.offset))

    def handler(route: str):
        def handle(alert: SafetyAlert) -> None:
            if fail(alert):
                raise RuntimeError("pager unreachable")
            events.append(("handled", route, alert.alert_id))

        return handle

    proc = alerts_mod.AlertProcessor(
        LoggedStore(tmp_path / "acks.sqlite"),
        LoggedParking(tmp_path / "parked.jsonl"),
        handlers={r: handler(r) for r in set(DOCUMENTED_ROUTES.values())},
    )
    handle = proc.handle

    def logged_handle(msg: Msg) -> str:
        outcome = handle(msg)
        if outcome == "duplicate":  # of an alert the store already holds: done, nothing to do
            events.append(("duplicate", msg.offset))
        return outcome

    proc.handle = logged_handle
    return proc


def _acks(path: Path) -> dict[str, tuple]:
    with sqlite3.connect(path) as db:
        return {r[0]: r[1:] for r in db.execute('SELECT alert_id, route, severity, "offset", deliveries FROM acks')}


def _committed_only_after_ack(events: list[tuple]) -> None:
    """Every commit covers only offsets acknowledged, parked or found already acknowledged earlier in the log."""
    done: set[int] = set()
    for ev in events:
        if ev[0] in ("ack", "parked", "duplicate"):
            done.add(ev[1])
        elif ev[0] == "commit":
            for nxt in ev[1].values():
                assert set(range(nxt)) <= done, f"committed up to {nxt} with only {sorted(done)} acknowledged"


async def test_alerts_are_routed_by_severity_and_acknowledged_before_the_commit(tmp_path: Path) -> None:
    events: list[tuple] = []
    proc = _processor(tmp_path, events)
    severities = ["critical", "high", "medium", "possible", "info"]
    values = [encode(_alert(i, s)) for i, s in enumerate(severities)]
    values.append(values[0])  # the stream's own duplicate (at-least-once): same alert_id
    values.append(b'{"not": "an alert"')  # undecodable: parked, never skipped
    consumer = FakeConsumer(events)
    assert await proc.process(consumer, {TP: _msgs(values)})
    _committed_only_after_ack(events)
    assert consumer.committed == {TP: len(values)}
    # Each alert handled once, on its documented route, and acknowledged right after its handler returned.
    handled = [e for e in events if e[0] == "handled"]
    assert [(r, a) for _, r, a in handled] == [(DOCUMENTED_ROUTES[s], f"a{i}") for i, s in enumerate(severities)]
    for _, _, alert_id in handled:
        at = events.index(next(e for e in events if e[0] == "handled" and e[2] == alert_id))
        assert events[at + 1][0] == "ack" and events[at + 1][2] == alert_id
    acks = _acks(tmp_path / "acks.sqlite")
    assert {k: v[:2] for k, v in acks.items()} == {f"a{i}": (DOCUMENTED_ROUTES[s], s) for i, s in enumerate(severities)}
    assert acks["a0"][3] == 2  # the duplicate counted, not acknowledged again
    assert proc.counts == {"acked": 5, "duplicate": 1, "parked": 1, "failed": 0}


class SeekingConsumer(FakeConsumer):
    async def seek_to_beginning(self, tp: TopicPartition) -> None:
        self.events.append(("seek_to_beginning", tp))


async def test_a_recreated_topic_is_read_again_from_its_beginning(tmp_path: Path) -> None:
    """Issue 14: after a broker lost its state the alerts topic starts again at offset 0; a consumer keeping its
    position skipped 22 of 27 new alerts. The guard reads back the record at the last acknowledged offset."""
    events: list[tuple] = []
    proc = _processor(tmp_path, events)
    consumer = SeekingConsumer(events)
    old = [encode(_alert(i, "high")) for i in range(30)]
    assert await proc.process(consumer, {TP: _msgs(old)})
    topic: dict[int, bytes] = dict(enumerate(old))

    async def read(tp: TopicPartition, offset: int) -> bytes | None:
        return topic.get(offset)

    guard = alerts_mod.TopicGuard(proc.store, read)
    assert await guard.verify(consumer, [TP]) == []  # the same topic: nothing to do
    # The broker comes back empty and 40 new alerts arrive: offset 29 now holds another alert.
    new = [encode(_alert(100 + i, "high")) for i in range(40)]
    topic = dict(enumerate(new))
    assert await guard.verify(consumer, [TP]) == [TP]
    assert events[-1] == ("seek_to_beginning", TP) and guard.recreations == 1
    assert await proc.process(consumer, {TP: _msgs(new)})  # from the beginning: every new alert handled
    assert {f"a{100 + i}" for i in range(40)} <= set(_acks(tmp_path / "acks.sqlite"))
    assert await guard.verify(consumer, [TP]) == []  # the new topic is now the one acknowledged
    # Shorter than before (offset 39 gone): recreated as well.
    topic = {0: encode(_alert(500, "high"))}
    assert await guard.verify(consumer, [TP]) == [TP]


async def test_a_failing_handler_is_never_committed_past_and_is_retried(tmp_path: Path) -> None:
    events: list[tuple] = []
    failures = {"a2": 1}  # the pager is down for one attempt at alert a2

    def fail(alert: SafetyAlert) -> bool:
        if failures.get(alert.alert_id, 0) > 0:
            failures[alert.alert_id] -= 1
            return True
        return False

    proc = _processor(tmp_path, events, fail)
    values = [encode(_alert(i, "high")) for i in range(5)]
    consumer = FakeConsumer(events)
    assert not await proc.process(consumer, {TP: _msgs(values)})
    assert consumer.committed == {TP: 2}  # a0, a1 done; nothing at or after a2
    assert ("seek", TP, 2) in events
    assert set(_acks(tmp_path / "acks.sqlite")) == {"a0", "a1"}
    assert await proc.process(consumer, {TP: _msgs(values[2:], start=2)})  # the redelivery after the seek
    _committed_only_after_ack(events)
    assert consumer.committed == {TP: 5}
    assert [e[2] for e in events if e[0] == "handled"] == ["a0", "a1", "a2", "a3", "a4"]  # each once
    assert proc.counts["failed"] == 1


async def test_a_crash_between_ack_and_commit_redelivers_without_a_second_ack(tmp_path: Path) -> None:
    events: list[tuple] = []
    values = [encode(_alert(i, s)) for i, s in enumerate(["critical", "medium", "possible"])]
    proc = _processor(tmp_path, events)
    with pytest.raises(KeyboardInterrupt):
        await proc.process(FakeConsumer(events, crash_on_commit=True), {TP: _msgs(values)})
    proc.store.close()
    assert len(_acks(tmp_path / "acks.sqlite")) == 3  # durable before the (lost) commit
    # The restart: a new process, the same files, the same records again (nothing was committed).
    again: list[tuple] = []
    proc2 = _processor(tmp_path, again)
    consumer = FakeConsumer(again)
    assert await proc2.process(consumer, {TP: _msgs(values)})
    assert not [e for e in again if e[0] in ("handled", "ack")]  # nobody paged twice
    assert consumer.committed == {TP: 3}
    assert {k: v[3] for k, v in _acks(tmp_path / "acks.sqlite").items()} == {"a0": 2, "a1": 2, "a2": 2}
    assert proc2.counts == {"acked": 0, "duplicate": 3, "parked": 0, "failed": 0}


async def test_records_it_cannot_route_are_parked_once_and_newer_fields_are_not(tmp_path: Path) -> None:
    events: list[tuple] = []
    ok = orjson.loads(encode(_alert(0, "high"))) | {"escalation_policy": "p1"}  # a field a newer minor adds
    v2 = orjson.loads(encode(_alert(1, "high"))) | {"schema_version": 2}  # a newer major: park, never misread
    new_severity = orjson.loads(encode(_alert(2, "high"))) | {"severity": "urgent"}  # only a major adds one
    turn_score_like = {"kind": "turn_score", "schema_version": 1}
    values = [orjson.dumps(x) for x in (ok, v2, new_severity, turn_score_like)] + [b"\xff garbage"]
    proc = _processor(tmp_path, events)
    consumer = FakeConsumer(events)
    assert await proc.process(consumer, {TP: _msgs(values)})
    assert set(_acks(tmp_path / "acks.sqlite")) == {"a0"}
    lines = [json.loads(x) for x in (tmp_path / "parked.jsonl").read_text().splitlines()]
    assert [p["offset"] for p in lines] == [1, 2, 3, 4]
    assert all(p["value_b64"] and p["reason"] for p in lines)
    assert consumer.committed == {TP: 5}
    # Redelivered after a restart: parked entries are not written twice.
    proc2 = _processor(tmp_path, [])
    assert await proc2.process(FakeConsumer([]), {TP: _msgs(values)})
    assert len((tmp_path / "parked.jsonl").read_text().splitlines()) == 4


def test_every_severity_of_the_contract_has_its_documented_route() -> None:
    from typing import get_args

    from schemas import Severity

    assert alerts_mod.ROUTES == DOCUMENTED_ROUTES
    assert set(alerts_mod.ROUTES) == set(get_args(Severity))
    assert set(alerts_mod.DEFAULT_HANDLERS) == set(DOCUMENTED_ROUTES.values())


async def test_a_failed_commit_is_retried_with_the_next_one(tmp_path: Path) -> None:
    from aiokafka.errors import KafkaConnectionError

    events: list[tuple] = []
    proc = _processor(tmp_path, events)
    consumer = FakeConsumer(events)
    real_commit, calls = consumer.commit, []

    async def flaky(offsets: dict[TopicPartition, int]) -> None:
        calls.append(dict(offsets))
        if len(calls) == 1:
            raise KafkaConnectionError("broker gone for a moment")
        await real_commit(offsets)

    consumer.commit = flaky  # type: ignore[method-assign]
    assert await proc.process(consumer, {TP: _msgs([encode(_alert(0, "high"))])})
    assert consumer.committed == {} and proc.pending == {TP: 1}  # not lost: still pending
    assert await proc.process(consumer, {})  # the next poll (empty) commits it
    assert consumer.committed == {TP: 1} and calls == [{TP: 1}, {TP: 1}]


async def test_the_commit_interval_defers_commits_but_never_skips_one(tmp_path: Path) -> None:
    events: list[tuple] = []
    proc = _processor(tmp_path, events)
    proc.commit_interval = 3600.0
    proc._last_commit = time.monotonic()
    consumer = FakeConsumer(events)
    assert await proc.process(consumer, {TP: _msgs([encode(_alert(0, "high"))])})
    assert consumer.committed == {}  # acknowledged, commit deferred: the window a SIGKILL may hit
    await proc.commit(consumer, force=True)  # what shutdown and a partition revocation do
    assert consumer.committed == {TP: 1}


# -- analytics consumer: rows and slices, without a broker ------------------------------------------------


def _tagged(convs: list[Conversation]) -> list[Conversation]:
    """Two tenants x two experiment arms, every combination used."""
    tenants, arms = ("acme", "globex"), ("A", "B")
    return [
        c.model_copy(update={"metadata": {"tenant": tenants[i % 2], "experiment_arm": arms[(i // 2) % 2], "n": i}})
        for i, c in enumerate(convs)
    ]


def _bundled() -> list[Conversation]:
    from streams.demo import bundled_samples
    from streams.io import load_conversations

    convs, bad = load_conversations(bundled_samples())
    assert not bad
    return convs


def _expected_slices(records: list, key: str) -> dict[str, list[dict]]:
    """The report's slices computed in plain Python from decoded records (one per record_id)."""
    verdicts: dict[tuple, list[bool]] = {}
    turns: dict[tuple, list[float]] = {}
    for r in records:
        if not getattr(r, "history_complete", True):
            continue
        value = r.metadata.get(key)
        group = (None if value is None else str(value), r.rubric.tag)
        if r.kind == "conversation_verdict":
            verdicts.setdefault(group, []).append(r.passed)
        elif r.kind == "turn_score":
            turns.setdefault(group, []).append(r.empathy)
    order = sorted(verdicts, key=lambda g: (g[0] is None, g))
    return {
        "verdicts": [
            {"value": g[0], "rubric": g[1], "verdicts": len(v), "passed": sum(v), "pass_rate": sum(v) / len(v)}
            for g in order
            for v in [verdicts[g]]
        ],
        "turn_empathy": [
            {"value": g[0], "rubric": g[1], "turns": len(v), "mean_empathy": sum(v) / len(v)}
            for g in sorted(turns, key=lambda g: (g[0] is None, g))
            for v in [turns[g]]
        ],
    }


def _same_slices(got: dict, want: dict) -> None:
    for part in ("verdicts", "turn_empathy"):
        assert len(got[part]) == len(want[part]), (part, got[part], want[part])
        for g, w in zip(got[part], want[part], strict=True):
            assert g.keys() == w.keys()
            for k in g:
                assert g[k] == pytest.approx(w[k]), (part, k, g, w)


def test_analytics_rows_are_deduplicated_and_never_averaged_across_rubric_versions(tmp_path: Path) -> None:
    from scorers import evaluate_conversation

    an = _analytics()
    recs = [r for c in _tagged(_bundled()[:4]) for r in evaluate_conversation(c) if r.kind != "safety_alert"]
    ts = next(r for r in recs if r.kind == "turn_score")
    upgraded = ts.model_copy(update={"record_id": "rid-v9", "rubric": ts.rubric.model_copy(update={"version": "9.0"})})
    verdict = next(r for r in recs if r.kind == "conversation_verdict" and r.passed)
    partial = verdict.model_copy(  # a re-published conversation's earlier, partial-history verdict
        update={"record_id": "rid-partial", "history_complete": False, "missing_turns": [(0, 1)], "passed": False}
    )
    recs.append(partial)
    newer = orjson.loads(encode(upgraded)) | {"calibration_id": "x"}  # a newer minor's field: loaded, not skipped
    topic_of = {"turn_score": TURN_SCORES.name, "conversation_score": CONVERSATION_SCORES.name}
    batch: dict[TopicPartition, list[Msg]] = {}
    for r in [*recs, recs[0], recs[-1]]:  # two records delivered twice
        tp = TopicPartition(topic_of.get(r.kind, CONVERSATION_VERDICTS.name), 0)
        batch.setdefault(tp, []).append(Msg(tp.topic, 0, len(batch.get(tp, [])), None, encode(r)))
    tp = TopicPartition(TURN_SCORES.name, 0)
    batch[tp] += [Msg(tp.topic, 0, len(batch[tp]) + i, None, v) for i, v in enumerate([orjson.dumps(newer), b"{"])]

    con = an.open_db(tmp_path / "s.duckdb")
    new, skipped = an.load_batch(con, batch)
    assert (new, skipped) == (len(recs) + 1, 1)
    assert an.load_batch(con, batch) == (0, 1)  # the whole batch again: nothing new (the skip is re-counted)
    assert con.execute("SELECT count(*), count(DISTINCT record_id) FROM scores").fetchone() == (new, new)
    assert con.execute("SELECT count(*) FROM skipped").fetchone() == (1,)
    offsets = dict(((t, p), o) for t, p, o in con.execute("SELECT * FROM consumer_offsets").fetchall())
    assert offsets == {(t.topic, t.partition): len(m) for t, m in batch.items()}
    rep = an.report(con, ["tenant", "experiment_arm", "n"])
    assert rep["incomplete_history"] == 1  # counted, and left out of the slices (a pass rate would drop)
    decoded = [*recs, upgraded]
    for key in ("tenant", "experiment_arm", "n"):
        _same_slices(rep["slices"][key], _expected_slices(decoded, key))
    # The upgraded rubric is its own group, never averaged into the current one.
    rubrics = {r["rubric"] for r in rep["slices"]["tenant"]["turn_empathy"]}
    assert rubrics == {ts.rubric.tag, f"{ts.rubric.id}@9.0"}
    con.close()


# -- both consumers against the embedded broker -----------------------------------------------------------


class ExampleProcess:
    """One example script as a subprocess in its own process group, output to a log file."""

    def __init__(self, script: str, args: list[str], log: Path) -> None:
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(ROOT / "examples" / script), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 20) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def text(self) -> str:
        return self.log.read_text(errors="replace")


Record = tuple[str, int, int, bytes]


async def _topic_contents(bootstrap: str, topics: list[str], timeout: float = 30) -> list[Record]:
    """Everything on the topics now, (topic, partition, offset, value), read without a group: up to each
    partition's high watermark as of its latest fetch (an idle timer would stop early on a slow machine)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    out: list[Record] = []
    await consumer.start()
    try:
        await consumer.topics()
        tps = [TopicPartition(t, p) for t in topics for p in sorted(consumer.partitions_for_topic(t) or ())]
        assert len({tp.topic for tp in tps}) == len(topics), tps
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + timeout
        while True:
            for tp, msgs in (await consumer.getmany(timeout_ms=100)).items():
                out += [(tp.topic, tp.partition, m.offset, m.value) for m in msgs]
            behind = [tp for tp in tps if (h := consumer.highwater(tp)) is None or await consumer.position(tp) < h]
            if not behind:
                return out
            assert time.monotonic() < deadline, f"could not read {behind} to their end"
    finally:
        await consumer.stop()


def _renamed(convs: list[Conversation], copies: int) -> list[Conversation]:
    return [c.model_copy(update={"conversation_id": f"{c.conversation_id}-{k}"}) for k in range(copies) for c in convs]


@pytest.mark.broker
@pytest.mark.slow
def test_alerts_consumer_killed_mid_stream_acknowledges_every_alert_once(broker, start_worker, tmp_path) -> None:
    """Issue 15 part 6 must-show: SIGKILLed twice while acknowledged alerts were not yet committed, restarted,
    and in the end every alert on the topic has exactly one ack row with the documented route."""
    from streams.io import publish, schedule, send_raw

    convs = _tagged(_renamed(_bundled(), 4))
    expected = {k: r for k, r in expected_records(convs).items() if r.kind == "safety_alert"}
    assert {r.severity for r in expected.values()} >= {"critical", "high", "medium", "possible"}
    worker = start_worker("--inactivity-timeout", "60")
    worker.wait_ready(60)

    group, acks = "safety-team-test", tmp_path / "acks.sqlite"
    args = ["--broker", broker.url, "--group", group, "--ack-store", str(acks), "--parking", str(tmp_path / "p.jsonl")]
    args += ["--session-timeout-ms", "1500", "--commit-interval", "2", "--max-records", "5"]
    runs: list[ExampleProcess] = []

    def start() -> ExampleProcess:
        runs.append(ExampleProcess("alerts_consumer.py", args, tmp_path / f"alerts-{len(runs)}.log"))
        return runs[-1]

    # One probe of the group's committed offset (OffsetFetch; it never joins), on a loop of its own.
    probe_loop = asyncio.new_event_loop()

    async def start_probe() -> AIOKafkaConsumer:
        probe = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
        await probe.start()
        return probe

    probe = probe_loop.run_until_complete(start_probe())

    def committed() -> int:
        return probe_loop.run_until_complete(probe.committed(TopicPartition(SAFETY_ALERTS.name, 0))) or 0

    def acked_at_or_after(offset: int) -> set[str]:
        try:
            with sqlite3.connect(acks) as db:
                return {r[0] for r in db.execute('SELECT alert_id FROM acks WHERE "offset" >= ?', (offset,))}
        except sqlite3.OperationalError:  # the consumer has not created its table yet
            return set()

    traffic = threading.Thread(  # paced, so the consumer works while alerts still arrive
        target=lambda: asyncio.run(publish(broker.url, TURNS.name, schedule(convs, pace=0.5), profile="tansu"))
    )
    try:
        current = start()
        traffic.start()
        not_routable = [b"\xff not json", orjson.dumps(orjson.loads(encode(_alert(0, "high"))) | {"schema_version": 2})]
        asyncio.run(send_raw(broker.url, SAFETY_ALERTS.name, [(b"x", v) for v in not_routable], "tansu"))
        windows: list[set[str]] = []
        kills = 0
        while len(windows) < 2:
            # Kill while this run has acknowledged alerts whose offsets are not committed: the dangerous window
            # (alerts of an earlier window are acknowledged but uncommitted too until this run commits them).
            earlier = set().union(*windows)
            deadline = time.monotonic() + 30
            while not acked_at_or_after(committed()) - earlier:
                assert time.monotonic() < deadline, f"no uncommitted ack to kill in:\n{current.text()}"
                assert current.proc.poll() is None, current.text()
                time.sleep(0.05)
            current.kill()
            kills += 1
            # A commit the process sent just before it died may still be applied: wait until the offset holds.
            last, now = -1, committed()
            while now != last:
                time.sleep(0.5)
                last, now = now, committed()
            window = acked_at_or_after(now) - earlier  # exact now: the process is dead
            if window:
                windows.append(window)
            # else: its commit timer fired between the probe and the kill (a loaded machine); kill again
            assert kills <= 6, f"{kills} kills, {len(windows)} of them inside the window"
            current = start()
        traffic.join(60)

        on_topic = asyncio.run(_topic_contents(broker.bootstrap, [SAFETY_ALERTS.name]))
        alerts: dict[str, SafetyAlert] = {}
        unroutable: list[int] = []
        for _t, _p, offset, value in on_topic:
            try:
                rec = decode_output(value)
                alerts[rec.alert_id] = rec  # type: ignore[union-attr]
            except ValueError:
                unroutable.append(offset)
        assert expected.keys() <= alerts.keys(), "the stream did not produce every alert"
        end = max(offset for *_, offset, _v in on_topic) + 1
        deadline = time.monotonic() + 30
        while committed() < end:  # caught up: the redeliveries after the last kill are done too
            assert time.monotonic() < deadline, f"{len(alerts.keys() - set(_acks(acks)))} alerts never acknowledged"
            time.sleep(0.1)
        assert current.terminate() == 0, current.text()
    finally:
        for r in runs:
            r.kill()
        traffic.join(60)
        probe_loop.run_until_complete(probe.stop())
        probe_loop.close()

    rows = _acks(acks)
    assert rows.keys() == alerts.keys()  # exactly the alerts on the topic, each one row (alert_id is the key)
    for alert_id, (route, severity, _offset, _deliveries) in rows.items():
        assert (route, severity) == (DOCUMENTED_ROUTES[alerts[alert_id].severity], alerts[alert_id].severity)
    # Every alert caught in a kill window was redelivered after the restart and counted, not acknowledged again.
    assert all(rows[a][3] >= 2 for w in windows for a in w), {a: rows[a][3] for w in windows for a in w}
    # Every alert reached its handler; a restart re-handles at most the one alert a kill interrupted between
    # its handler and its ack (documented), never the acknowledged ones.
    handled = [ln.split("alert=")[1] for r in runs for ln in r.text().splitlines() if " alert=" in ln]
    assert set(handled) == alerts.keys()
    assert len(handled) - len(set(handled)) <= kills, sorted(handled)
    parked = [json.loads(x)["offset"] for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert sorted(parked) == sorted(unroutable) and len(unroutable) == 2
    assert "acked=0 duplicate=0" not in current.text()  # the last run did work: it redelivered the last window


@pytest.mark.broker
@pytest.mark.slow
def test_analytics_consumer_loads_one_row_per_record_and_slices_match_the_topics(
    broker, start_worker, tmp_path
) -> None:
    from streams.io import publish, schedule, send_raw

    _analytics()
    convs = _tagged(_bundled() + synthetic(8, 6, prefix="ana"))
    expected = {k for k, r in expected_records(convs).items() if r.kind != "safety_alert"}
    worker = start_worker("--inactivity-timeout", "60")
    worker.wait_ready(60)
    asyncio.run(publish(broker.url, TURNS.name, schedule(convs), profile="tansu"))
    score_topics = [TURN_SCORES.name, CONVERSATION_SCORES.name, CONVERSATION_VERDICTS.name]
    seen = asyncio.run(read_back(broker.url, lambda s: expected <= s.keys(), timeout=60, topics=score_topics))
    assert expected <= seen.keys()
    # At-least-once input: copies of records already there, and one record no reader can decode.
    copies = [recs[0][1] for recs in list(seen.values())[:6]]
    topic_of = {"turn_score": TURN_SCORES.name, "conversation_score": CONVERSATION_SCORES.name}
    for r in copies:
        asyncio.run(
            send_raw(broker.url, topic_of.get(r.kind, CONVERSATION_VERDICTS.name), [(None, encode(r))], "tansu")
        )
    asyncio.run(send_raw(broker.url, CONVERSATION_VERDICTS.name, [(b"x", b"not json")], "tansu"))

    on_topics = asyncio.run(_topic_contents(broker.bootstrap, score_topics))
    records: dict[str, object] = {}
    undecodable = 0
    for _t, _p, _o, value in on_topics:
        try:
            rec = decode_output(value)
            records.setdefault(rec.record_id, rec)  # type: ignore[union-attr]
        except ValueError:
            undecodable += 1
    assert len(on_topics) > len(records) + undecodable  # the copies are really on the topics
    db, report = tmp_path / "scores.duckdb", tmp_path / "report.json"
    cmd = ["--broker", broker.url, "--db", str(db), "--json", str(report), "--by", "tenant", "--by", "experiment_arm"]
    first = ExampleProcess("analytics_consumer.py", cmd, tmp_path / "analytics-0.log")
    assert first.proc.wait(60) == 0, first.text()
    assert f"read {len(on_topics)} records: {len(records)} new rows, {undecodable} skipped" in first.text()

    rep = json.loads(report.read_text())
    kinds: dict[str, int] = {}
    for r in records.values():
        kinds[r.kind] = kinds.get(r.kind, 0) + 1  # type: ignore[attr-defined]
    assert rep["rows"] == kinds and rep["skipped"] == undecodable == 1 and rep["incomplete_history"] == 0
    for key in ("tenant", "experiment_arm"):
        want = _expected_slices(list(records.values()), key)
        _same_slices(rep["slices"][key], want)
        assert {r["value"] for r in want["verdicts"]} == ({"acme", "globex"} if key == "tenant" else {"A", "B"})

    # A second run resumes from the offsets stored with the rows: nothing read twice, the table unchanged.
    second = ExampleProcess("analytics_consumer.py", cmd, tmp_path / "analytics-1.log")
    assert second.proc.wait(60) == 0, second.text()
    assert "read 0 records: 0 new rows, 0 skipped" in second.text()
    assert json.loads(report.read_text()) == rep


@pytest.mark.broker
@pytest.mark.slow
def test_alerts_consumer_notices_the_broker_lost_its_topics_and_skips_nothing(broker, tmp_path) -> None:
    """Issue 14 part 1: the embedded broker restarts (memory: topics recreated, offsets from 0) under a running
    alerts consumer, and more new alerts arrive than it had read: every new alert is acknowledged."""
    from streams import StreamSettings, create_topics
    from streams.io import send_raw

    def publish(alerts: list[SafetyAlert]) -> None:
        settings = StreamSettings(broker=broker.url, profile="tansu")
        asyncio.run(create_topics(broker.bootstrap, settings.topics(), configs=settings.topic_configs()))
        asyncio.run(
            send_raw(broker.url, SAFETY_ALERTS.name, [(a.conversation_id.encode(), encode(a)) for a in alerts], "tansu")
        )

    def acked() -> set[str]:
        try:
            return set(_acks(acks)) if acks.exists() else set()
        except sqlite3.OperationalError:  # the file exists, its table not yet: the consumer is starting
            return set()

    def wait_for(ids: set[str], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ids <= acked():
            assert time.monotonic() < deadline, f"{len(ids - acked())} never acknowledged:\n{consumer.text()[-3000:]}"
            time.sleep(0.3)

    acks = tmp_path / "acks.sqlite"
    old = [_alert(i, "high") for i in range(12)]
    publish(old)
    args = ["--broker", broker.url, "--group", "safety-recreated", "--ack-store", str(acks)]
    args += ["--session-timeout-ms", "1500", "--verify-interval", "1"]
    consumer = ExampleProcess("alerts_consumer.py", args, tmp_path / "consumer.log")
    try:
        wait_for({a.alert_id for a in old})
        broker.stop()
        broker.start()  # same port, empty: the topics start again at offset 0
        new = [_alert(1000 + i, "high") for i in range(40)]  # more than it had read on any partition
        publish(new)
        wait_for({a.alert_id for a in new})
        assert consumer.terminate() == 0
    finally:
        consumer.kill()
    assert "was recreated" in consumer.text() and re.search(r"recreated=[1-9]", consumer.text())
    assert acked() == {a.alert_id for a in old + new}
