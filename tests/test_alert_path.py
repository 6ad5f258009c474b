"""The alert path (streams._alert_path): a user turn's own alerts never wait for the scoring agent."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

import scorers
from schemas import Conversation, Message, SafetyAlert, decode_output, encode
from schemas.topics import SAFETY_ALERTS, TURNS
from streams._allocator import find_jemalloc
from streams._trim import can_trim

POSSIBLE = "i'm ready. i'd like to be excused from all of it."  # model only (no anchor concept), a 'ready' cue
CUES = ["i picked up the rope today", "nobody's home till monday"]


def test_turn_alerts_are_the_alerts_that_need_no_history() -> None:
    ev = scorers.Evaluator()
    for text in (POSSIBLE, "i want to kill myself", "ich will nicht mehr leben, alles ist sinnlos", "hello there"):
        res = ev.on_user_turn("c", 4, text)
        assert res.needs_history == []
        assert [a.model_dump(exclude={"detected_at"}) for a in res.alerts] == [
            a.model_dump(exclude={"detected_at"}) for a in ev.turn_alerts("c", 4, text)
        ]


def _with_history(ev: scorers.Evaluator, text: str):
    cues: frozenset[str] = frozenset()
    for i, t in enumerate(CUES):
        cues |= ev.on_user_turn("c", 2 * i, t, cues).cues
    return ev.on_user_turn("c", 4, text, cues)


def test_history_that_raises_a_turns_own_alert_is_a_second_alert_never_a_changed_copy() -> None:
    ev = scorers.Evaluator()
    own = ev.turn_alerts("c", 4, POSSIBLE)
    assert [a.severity for a in own] == ["possible"]
    res = _with_history(ev, POSSIBLE)
    assert res.alerts[0].model_dump(exclude={"detected_at"}) == own[0].model_dump(exclude={"detected_at"})
    (raised,) = res.needs_history
    assert raised.severity == "critical" and raised.detector == "conversation"
    assert raised.alert_id != own[0].alert_id  # same turn, different content: a different id


def test_history_alone_keeps_the_turns_crisis_alert_id() -> None:
    ev = scorers.Evaluator()
    assert ev.turn_alerts("c", 4, "i'm ready") == []
    res = _with_history(ev, "i'm ready")
    (alert,) = res.needs_history
    assert res.alerts == [alert] and alert.severity == "critical"
    assert alert.alert_id == scorers.Evaluator().turn_alerts("c", 4, "i want to kill myself")[0].alert_id


def test_the_scoring_agent_sends_only_what_needs_history_when_the_alert_path_runs() -> None:
    import orjson

    from streams._core import Inbound, TurnProcessor
    from tests.test_crisis_detection import DictStore

    turns = [
        {"conversation_id": "s", "turn_index": 0, "role": "user", "text": CUES[0]},
        {"conversation_id": "s", "turn_index": 1, "role": "user", "text": "i want to kill myself"},
        {"conversation_id": "s", "turn_index": 2, "role": "user", "text": CUES[1]},
    ]
    sent = {}
    for emit in (True, False):
        store = DictStore()
        proc = TurnProcessor(scorers.Evaluator(), store, emit_turn_alerts=emit)
        res = proc.process([Inbound(TURNS.name, 0, i, b"s", orjson.dumps(t)) for i, t in enumerate(turns)], 1000.0)
        sent[emit] = [decode_output(o.value) for o in res.outputs if o.kind == "safety_alert"]
        store.apply(res.writes)
        meta = store.get("meta", "s")
        assert meta is not None and len(meta["al"]) == 3  # the verdict sees every alert either way
    assert [a.turn_index for a in sent[True]] == [0, 1, 2]
    assert [(a.turn_index, a.detector) for a in sent[False]] == [(2, "conversation")]


# -- through a real broker --------------------------------------------------------------------------------


def _convs(n: int, prefix: str) -> list[Conversation]:
    return [
        Conversation(
            conversation_id=f"{prefix}-{i}",
            turns=[Message(role="user", text="i want to kill myself"), Message(role="assistant", text="I'm here.")],
            metadata={"tenant": "t1"},
        )
        for i in range(n)
    ]


async def _alerts(url: str, want: int, timeout: float) -> dict[str, list[SafetyAlert]]:
    from streams.io import consume

    got: dict[str, list[SafetyAlert]] = {}
    stop = asyncio.Event()

    async def read() -> None:
        async for _t, _k, value, _at in consume(url, [SAFETY_ALERTS.name], stop=stop):
            rec = decode_output(value)
            assert isinstance(rec, SafetyAlert)
            got.setdefault(rec.alert_id, []).append(rec)
            if len(got) >= want:
                stop.set()

    with contextlib.suppress(TimeoutError):  # the caller checks what arrived
        await asyncio.wait_for(read(), timeout)
    return got


@pytest.mark.broker
def test_the_path_alerts_resumes_where_it_committed_and_starts_where_the_scoring_agent_did(broker: object) -> None:
    from streams._alert_path import AlertPath, wait_running
    from streams.io import publish, schedule

    url = broker.url  # type: ignore[attr-defined]

    def run_path() -> AlertPath:
        path = AlertPath(url, app_id="t", partitions=TURNS.partitions, profile="tansu").start()
        assert wait_running(path)
        return path

    asyncio.run(publish(url, TURNS.name, schedule(_convs(5, "a")), profile="tansu"))
    path = run_path()
    got = asyncio.run(_alerts(url, 5, 20))
    assert len(got) == 5 and all(len(v) == 1 for v in got.values())
    assert all(v[0].metadata == {"tenant": "t1"} for v in got.values())
    deadline = time.monotonic() + 10
    while path.sent < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    path.stop()
    asyncio.run(publish(url, TURNS.name, schedule(_convs(3, "b")), profile="tansu"))
    path = run_path()  # a restart: resumes at its committed offsets, nothing sent twice
    got = asyncio.run(_alerts(url, 8, 20))
    deadline = time.monotonic() + 10
    while path.sent < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    path.stop()
    assert len(got) == 8 and all(len(v) == 1 for v in got.values()), {k: len(v) for k, v in got.items()}
    assert path.sent == 3


@pytest.mark.broker
@pytest.mark.slow
def test_alerts_do_not_wait_for_a_restarted_worker_to_recover(broker: object, start_worker) -> None:
    """A worker is killed and restarted; crisis turns sent right after arrive as alerts before the new worker
    has rejoined the group and recovered its tables (its ready line)."""
    from aiokafka import AIOKafkaProducer

    url = broker.url  # type: ignore[attr-defined]
    first = start_worker("--metrics-port", "0", "--broker-check-interval", "0")
    first.wait_ready(90)
    first.kill()
    second = start_worker("--metrics-port", "0", "--broker-check-interval", "0")
    turns = [t for c in _convs(10, "k") for t in c.as_turns()]

    async def send_and_read() -> tuple[float, dict[str, list[SafetyAlert]]]:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)  # type: ignore[attr-defined]
        await producer.start()
        try:
            for t in turns:
                await producer.send_and_wait(TURNS.name, encode(t), key=t.conversation_id.encode())
        finally:
            await producer.stop()
        sent = time.monotonic()
        return sent, await _alerts(url, 10, 60)

    sent, got = asyncio.run(send_and_read())
    arrived = time.monotonic()
    assert len(got) == 10
    assert second.partitions() is None, "the restarted worker was ready before the alerts arrived: no evidence"
    assert arrived - sent < 8, f"alerts took {arrived - sent:.1f} s"
    second.wait_ready(90)


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


@pytest.mark.broker
@pytest.mark.slow
def test_the_alert_path_process_ends_with_its_worker(start_worker) -> None:
    """Killed alone (not its process group, as some supervisors do), the worker leaves no alert path behind.
    Both run on jemalloc where installed, else glibc malloc (``streams._allocator``), the worker under the
    PID it was started with."""
    worker = start_worker("--metrics-port", "0", "--broker-check-interval", "0")
    worker.wait_ready(90)
    (child,) = _children(worker.pid)
    if can_trim() and "PYTHONMALLOC" not in os.environ:  # re-executed with malloc, same PID
        for pid in (worker.pid, child):
            assert b"PYTHONMALLOC=malloc" in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            assert ("libjemalloc" in Path(f"/proc/{pid}/maps").read_text()) == bool(find_jemalloc())
        ready = next(line for line in worker.lines if "ATTUNE_READY" in line)
        assert f"allocator={'jemalloc' if find_jemalloc() else 'malloc'} " in ready
    os.kill(worker.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(child, os.WNOHANG)  # not our child: only reaps if it were
        if Path(f"/proc/{child}/stat").exists() and Path(f"/proc/{child}/stat").read_text().split()[2] == "Z":
            break  # exited; a zombie until init reaps it
        time.sleep(0.2)
    alive = Path(f"/proc/{child}/stat").exists() and Path(f"/proc/{child}/stat").read_text().split()[2] != "Z"
    assert not alive, "the alert path outlived its worker"
