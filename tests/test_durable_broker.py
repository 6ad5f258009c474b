"""Fault: the durable embedded broker (Tansu over SeaweedFS, ``attune broker --data DIR``) is SIGKILLed
mid-stream, its storage with it, and restarted on the same directory under a running worker.

Nothing may be lost: every turn published, and every score, verdict and alert the batch path gives for
them, must be on the topics afterwards, identical to the batch result (full history, so the same ids),
and the worker must go on without exiting (the broker kept its topics, offsets and changelogs).
"""

from __future__ import annotations

import asyncio
import fcntl
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _stream_helpers import comparable, expected_records, read_back, synthetic

from schemas import Conversation, encode
from schemas.topics import SAFETY_ALERTS, TURNS
from streams import StreamSettings, WorkerProcess, create_topics
from streams.broker import _port_open, free_port
from streams.durable import DurableBroker
from streams.io import consume, publish, schedule, send_raw

pytestmark = [pytest.mark.broker, pytest.mark.slow]


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[DurableBroker]:
    d = DurableBroker(tmp_path / "data", log_dir=tmp_path).start()
    try:
        settings = StreamSettings(broker=d.url, profile="tansu-durable")
        asyncio.run(
            asyncio.wait_for(create_topics(d.bootstrap, settings.topics(), configs=settings.topic_configs()), 60)
        )
        yield d
    finally:
        d.stop()


def _turn_events(convs: list[Conversation], *, keep: int | None = None, skip: int = 0) -> list[tuple[bytes, bytes]]:
    """Turn events ``skip..keep`` of each conversation; the end flag only on a conversation's true last turn."""
    out = []
    for c in convs:
        turns = c.as_turns()
        for t in turns[skip:keep]:
            out.append((c.conversation_id.encode(), encode(t)))
    return out


async def _count_turns(url: str) -> int:
    n = 0
    async for _record in consume(url, [TURNS.name], from_beginning=True, idle_timeout=3.0):
        n += 1
    return n


def test_durable_broker_sigkill_mid_stream_loses_nothing(durable: DurableBroker, tmp_path: Path) -> None:
    worker = WorkerProcess(
        durable.url,
        "tansu-durable",
        [
            "--inactivity-timeout",
            "120",
            "--loglevel",
            "INFO",
            "--broker-check-interval",
            "1",
            "--datadir",
            str(tmp_path / "w"),
        ],
        log_path=tmp_path / "worker.log",
    )
    try:
        worker.wait_ready(90)
        done_before = synthetic(8, 6, prefix="before")
        across = synthetic(8, 6, prefix="across")  # open across the kill: 3 turns before, 3 after
        burst = synthetic(30, 6, prefix="burst")  # published just before the kill: in flight when it dies
        asyncio.run(publish(durable.url, TURNS.name, schedule(done_before), profile="tansu-durable"))
        asyncio.run(send_raw(durable.url, TURNS.name, _turn_events(across, keep=3), "tansu-durable"))
        want_before = expected_records(done_before)
        seen = asyncio.run(read_back(durable.url, lambda s: want_before.keys() <= s.keys(), timeout=60))
        assert want_before.keys() <= seen.keys()

        asyncio.run(publish(durable.url, TURNS.name, schedule(burst), profile="tansu-durable"))
        durable.kill()  # the worker is scoring the burst: outputs in flight, commits pending
        time.sleep(2.0)
        durable.start()
        asyncio.run(send_raw(durable.url, TURNS.name, _turn_events(across, skip=3), "tansu-durable"))

        want = expected_records(done_before + across + burst)
        seen = asyncio.run(read_back(durable.url, lambda s: want.keys() <= s.keys(), timeout=120))
        missing = sorted(want.keys() - seen.keys())
        assert not missing, f"{len(missing)} of {len(want)} records lost: {missing[:5]}\n{worker.tail()}"
        differ = [r for r in want if any(comparable(got) != comparable(want[r]) for _, got in seen[r])]
        assert not differ, f"{len(differ)} records differ from the batch result (partial history?): {differ[:5]}"
        alerts = [r for r in want if want[r].kind == "safety_alert"]
        assert alerts and all(t == SAFETY_ALERTS.name for r in alerts for t, _ in seen[r])
        n_turns = sum(len(c.turns) for c in done_before + across + burst)
        assert asyncio.run(_count_turns(durable.url)) == n_turns
        assert worker.proc.poll() is None, f"worker exited {worker.proc.returncode}:\n{worker.tail()}"
        assert not [ln for ln in worker.lines if "the broker lost its state" in ln], worker.tail()
        print(f"durable: {len(want)} records ({len(alerts)} alerts), {n_turns} turns, 0 lost")
    finally:
        worker.stop(timeout=15)


def _attune_broker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "attune", "broker", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("attune broker: kafka://"), line + proc.stdout.read()
    return line


async def _produce(url: str, n: int) -> None:
    await create_topics(url.removeprefix("kafka://"), {"t": 2})
    await send_raw(url, "t", [(str(i).encode(), f"v{i}".encode()) for i in range(n)], "tansu")


async def _values(url: str) -> set[bytes]:
    return {value async for _t, _k, value, _at in consume(url, ["t"], idle_timeout=3.0)}


def _restart_finds(port: str, data: Path, n: int, stop_with: signal.Signals) -> None:
    """``attune broker`` started again on ``data`` serves the ``n`` records written before, then stops cleanly."""
    again = _attune_broker("--port", port, "--data", str(data))
    try:
        _first_line(again)
        assert asyncio.run(_values(f"kafka://127.0.0.1:{port}")) == {f"v{i}".encode() for i in range(n)}
    finally:
        again.send_signal(stop_with)
        again.communicate(timeout=30)
    assert again.returncode == 0


def test_attune_broker_data_dir_survives_a_stop_and_start(tmp_path: Path) -> None:
    port = str(free_port())
    url = f"kafka://127.0.0.1:{port}"
    proc = _attune_broker("--port", port, "--data", str(tmp_path / "d"))
    try:
        assert "durable" in _first_line(proc)
        asyncio.run(_produce(url, 50))
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "attune broker: stopped" in out, out
    with socket.socket() as s:  # nothing left listening
        assert s.connect_ex(("127.0.0.1", int(port))) != 0

    _restart_finds(port, tmp_path / "d", 50, signal.SIGINT)


def test_attune_broker_says_why_an_engine_is_refused(tmp_path: Path) -> None:
    proc = _attune_broker("--port", str(free_port()), "--storage", "postgres://postgres@127.0.0.1:1/tansu")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "the broker did not start" in out and 'FeatureNotEnabled { feature: "postgres"' in out, out


def test_a_sigkilled_broker_command_takes_its_processes_along(tmp_path: Path) -> None:
    """SIGKILL of ``attune broker`` kills Tansu and SeaweedFS too (no orphan holds the port or the files);
    a new broker on the same directory finds the data."""
    port, data = str(free_port()), tmp_path / "d"
    url = f"kafka://127.0.0.1:{port}"
    proc = _attune_broker("--port", port, "--data", str(data))
    _first_line(proc)
    asyncio.run(_produce(url, 20))
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 10
    while _port_open("127.0.0.1", int(port)) and time.monotonic() < deadline:  # Tansu got its SIGKILL
        time.sleep(0.1)
    _restart_finds(port, data, 20, signal.SIGTERM)


def test_a_data_directory_in_use_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    with (data / ".attune-broker.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running broker (or its SeaweedFS) holds it
        proc = _attune_broker("--port", str(free_port()), "--data", str(data))
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "in use by another attune broker" in out, out
