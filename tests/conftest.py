"""Shared fixtures. Broker tests get a fresh embedded Tansu (memory only, starts in milliseconds) each."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _judge_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``attune evaluate --judge`` keeps a result cache in a file by default: every test gets its own,
    never the real user cache (a hit left by another test would hide the calls it means to count)."""
    cache_home = tmp_path_factory.mktemp("cache-home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    monkeypatch.setenv("ATTUNE_JUDGE_CACHE", str(cache_home / "attune" / "judge-cache.sqlite3"))
    return cache_home


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[object]:
    """A real Kafka-protocol broker (Tansu) on a free loopback port, with every attune topic created."""
    from streams import EmbeddedBroker, StreamSettings, create_topics, tansu_binary

    try:
        tansu_binary()
    except FileNotFoundError as exc:
        pytest.skip(f"no Tansu binary: {exc}")
    b = EmbeddedBroker(log_path=tmp_path / "tansu.log").start()
    try:
        settings = StreamSettings(broker=b.url, profile="tansu")
        creating = create_topics(b.bootstrap, settings.topics(), configs=settings.topic_configs())
        asyncio.run(asyncio.wait_for(creating, 30))
        yield b
    finally:
        b.stop()


@pytest.fixture
def start_worker(broker: object, tmp_path: Path) -> Iterator[Callable[..., object]]:
    """Start ``attune worker`` subprocesses on the test broker; all are stopped (or killed) at teardown."""
    from streams import WorkerProcess

    started: list[WorkerProcess] = []

    def start(*args: str) -> WorkerProcess:
        w = WorkerProcess(
            broker.url,  # type: ignore[attr-defined]
            "tansu",
            list(args),
            log_path=tmp_path / f"worker-{len(started)}.log",
        )
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop(timeout=15)
