"""The circuit breaker opens on a failure rate, probes, and lets callers wait (issue #13, part 4)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from scorers.judges import CircuitBreaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import judge_faults


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-fake")


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_simultaneous_timeouts_among_many_calls_do_not_open_it() -> None:
    clock = Clock()
    b = CircuitBreaker(failure_rate=0.5, min_calls=20, window=50, clock=clock)
    for i in range(30):  # 5 timeouts arriving together, then 25 successes, in any order
        (b.failure("timeout") if i < 5 else b.success())
    assert b.state == "closed" and b.observed == (30, 5)
    # the old rule (5 consecutive failures) would have opened here; a rate of 1/6 does not


def test_it_opens_on_the_rate_once_enough_calls_are_known() -> None:
    clock = Clock()
    b = CircuitBreaker(failure_rate=0.5, min_calls=10, window=20, clock=clock)
    for _ in range(9):
        b.failure("HTTP 500")
    assert b.state == "closed"  # 9 calls < min_calls: not yet trusted
    b.failure("HTTP 500")
    assert b.state == "open" and b.last_failure == "HTTP 500" and not b.allow()


def test_old_outcomes_leave_the_window() -> None:
    clock = Clock()
    b = CircuitBreaker(failure_rate=0.5, min_calls=4, window=50, window_s=10.0, clock=clock)
    for _ in range(3):
        b.failure("x")
    clock.t += 11
    b.failure("x")
    assert b.observed == (1, 1) and b.state == "closed"


def test_half_open_probe_closes_or_reopens() -> None:
    clock = Clock()
    b = CircuitBreaker(failure_rate=0.5, min_calls=2, reset_after_s=5.0, probes=1, clock=clock)
    b.failure("x")
    b.failure("x")
    assert b.state == "open"
    clock.t += 5
    assert b.state == "half_open" and b.allow() and not b.allow()  # one probe at a time
    b.failure("still down")
    assert b.state == "open" and b.last_failure == "still down"
    clock.t += 5
    assert b.allow()
    b.success()
    assert b.state == "closed" and b.observed == (0, 0) and b.allow()


def test_a_neutral_probe_frees_its_slot() -> None:
    clock = Clock()
    b = CircuitBreaker(min_calls=1, reset_after_s=1.0, clock=clock)
    b.failure("x")
    clock.t += 1
    assert b.allow() and not b.allow()
    b.neutral()  # e.g. the probe hit a 400 or its deadline: says nothing about health
    assert b.allow()


async def test_waiters_proceed_after_a_successful_probe() -> None:
    b = CircuitBreaker(failure_rate=0.5, min_calls=2, reset_after_s=0.2)
    b.failure("HTTP 503")
    b.failure("HTTP 503")
    deadline = time.monotonic() + 5.0
    waiters = [asyncio.create_task(b.acquire(deadline)) for _ in range(5)]
    await asyncio.sleep(0.05)
    assert not any(w.done() for w in waiters)  # open: everyone waits, nobody fails
    await asyncio.sleep(0.25)
    # one of them got the probe; it succeeds, the others are released
    done = [w for w in waiters if w.done()]
    assert len(done) == 1 and done[0].result() is True
    b.success()
    results = await asyncio.wait_for(asyncio.gather(*waiters), 1.0)
    assert results == [True] * 5 and b.state == "closed"


async def test_a_waiter_whose_deadline_comes_first_gives_up_at_once() -> None:
    b = CircuitBreaker(failure_rate=0.5, min_calls=1, reset_after_s=30.0)
    b.failure("HTTP 503")
    t0 = time.monotonic()
    assert await b.acquire(t0 + 1.0) is False  # the probe is due in 30 s: no point waiting
    assert time.monotonic() - t0 < 0.1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_twenty_percent_hangs_end_at_most_hang_rate_plus_five_points(kind: str) -> None:
    """End to end through the SDKs against the API-schema-only fake: 20% of calls hang (per-call timeout
    0.5 s, 3 retries, 32 in flight). Was 50% ERROR ("circuit open") with the consecutive-failure breaker."""
    r = await judge_faults.scenario(kind, {"hang": 0.2}, n_conv=6, timeout_s=0.5, deadline_s=15.0)
    assert r["unnamed_errors"] == 0 and r["wall_s"] < r["bound_s"]
    assert r["error_rate"] <= 0.25, r


async def test_a_real_outage_opens_it_then_a_probe_closes_it_and_calls_succeed() -> None:
    from attune.testing import FakeJudgeServer
    from scorers import Exchange
    from scorers.judges import JudgeTier

    async with FakeJudgeServer(schema_source="api") as srv:
        cfg = judge_faults.config(srv, "openai", timeout_s=1.0, deadline_s=10.0)
        cfg = cfg.model_copy(update={"breaker": cfg.breaker.model_copy(update={"min_calls": 4, "reset_after_s": 0.5})})
        srv.inject("500", times=8)  # every attempt of the first two answers (1 + 3 retries each) fails
        async with JudgeTier(cfg) as tier:
            first = await tier.judge_turn(Exchange("o", 1, "hi", "hello"), ["turn_rubric"])
            assert first[0].status == "error" and tier.engine.breaker_state("fake") == "open"
            # the next calls wait for the probe (wait = true), which succeeds: no ERROR, breaker closed
            later = await asyncio.gather(
                *(tier.judge_turn(Exchange("o", 2 * i + 3, "hi", f"reply {i}"), ["turn_rubric"]) for i in range(6))
            )
            assert [r[0].status for r in later] == ["ok"] * 6
            assert tier.engine.breaker_state("fake") == "closed" and tier.stats.breaker_waits >= 1
