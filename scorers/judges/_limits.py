"""Flow control shared by every judge call: per-provider rate limits and a circuit breaker.

Why not a library: aiolimiter is a single leaky bucket; :class:`RateLimiter` needs two (requests and tokens
per minute) and gives back the part of a token reservation a call did not use, which aiolimiter cannot. The
breaker's reasons are in :class:`CircuitBreaker`.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from typing import Literal


class _Bucket:
    """Token bucket refilled continuously at ``per_minute / 60`` per second, capacity ``per_minute``."""

    def __init__(self, per_minute: float, clock: Callable[[], float]) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.level = float(per_minute)
        self._clock = clock
        self._t = clock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._t) * self.rate)
        self._t = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` is available (0 if it is now)."""
        self._refill()
        need = min(amount, self.capacity) - self.level
        return 0.0 if need <= 0 else need / self.rate

    def take(self, amount: float) -> None:
        self.level -= min(amount, self.capacity)

    def give_back(self, amount: float) -> None:
        self.level = min(self.capacity, self.level + amount)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits of one provider (either may be ``None``).

    Waiters are served in arrival order (one lock), so a large request is not starved by small ones.
    Token cost is estimated before the call (prompt chars / 4 + max output tokens, the way providers
    reserve it) and the unused part is returned once the real usage is known.
    """

    def __init__(self, rpm: float | None, tpm: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._req = _Bucket(rpm, clock) if rpm else None
        self._tok = _Bucket(tpm, clock) if tpm else None
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: int) -> None:
        if self._req is None and self._tok is None:
            return
        async with self._lock:
            while True:
                wait = max(
                    self._req.wait_for(1) if self._req else 0.0,
                    self._tok.wait_for(tokens) if self._tok else 0.0,
                )
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            if self._req:
                self._req.take(1)
            if self._tok:
                self._tok.take(tokens)

    def settle(self, reserved: int, used: int) -> None:
        if self._tok and used < reserved:
            self._tok.give_back(reserved - used)


BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Stops calling a provider that is failing most calls, and lets callers wait for it to come back.

    **Opens on a failure rate**, not a run of failures: over the outcomes of the last ``window`` calls that
    ended within ``window_s`` seconds, when at least ``min_calls`` are known and ``failure_rate`` of them
    failed. Why: with many calls in flight, timeouts that happen together are not evidence of an outage; a
    consecutive-failure count opened on them at a 20% hang rate and turned 50% of answers into "circuit
    open" (bench/judge_faults.py). **Half-open**: after ``reset_after_s`` up to ``probes`` calls go through;
    a success closes it (window cleared), a failure re-opens it for another period. **Waiting**:
    :meth:`acquire` holds a caller while the circuit is open until the probe's result, bounded by the
    caller's own deadline, so a batch run resumes after a recovery instead of failing every remaining item.
    Only retryable failures (429, 5xx, timeouts, connection errors) count; neutral outcomes (a 400, a
    deadline) count as nothing.

    Why hand-written: aiobreaker, purgatory, pybreaker and circuitbreaker (PyPI) all open on a number of
    *consecutive* failures (``fail_max`` / ``threshold`` / ``failure_threshold``), the behaviour measured
    above; none has a failure rate over a window with a minimum number of calls, nor waiters that resume
    on a successful probe.
    """

    def __init__(
        self,
        failure_rate: float = 0.5,
        min_calls: int = 20,
        window: int = 50,
        window_s: float = 60.0,
        reset_after_s: float = 30.0,
        probes: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failure_rate = failure_rate
        self.min_calls = min_calls
        self.window_s = window_s
        self.reset_after_s = reset_after_s
        self.probes = probes
        self._clock = clock
        self._outcomes: collections.deque[tuple[float, bool]] = collections.deque(maxlen=window)
        self._state: BreakerState = "closed"
        self._opened_at = 0.0
        self._probes_out = 0
        self._changed: asyncio.Event | None = None
        #: The failure that last counted against the provider: every "circuit open" ERROR names it.
        self.last_failure: str | None = None

    @property
    def state(self) -> BreakerState:
        if self._state == "open" and self._clock() - self._opened_at >= self.reset_after_s:
            return "half_open"
        return self._state

    def allow(self) -> bool:
        """Whether a call may go now (a half-open circuit hands out at most ``probes`` at a time)."""
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and self._probes_out < self.probes:
            self._state = "half_open"
            self._probes_out += 1
            return True
        return False

    async def acquire(self, deadline: float) -> bool:
        """Wait until a call may go (True) or until ``deadline`` (clock time) would pass first (False)."""
        while not self.allow():
            now = self._clock()
            if now >= deadline:
                return False
            if self._state == "open":  # the probe is due at opened_at + reset; give up now if that is too late
                due = self._opened_at + self.reset_after_s
                if due > deadline:
                    return False
                wait = max(due - now, 0.0)
            else:
                wait = deadline - now  # half-open, probes out: wait for their outcome
            if self._changed is None:
                self._changed = asyncio.Event()
            event = self._changed
            try:
                async with asyncio.timeout(wait):
                    await event.wait()
            except TimeoutError:
                pass
        return True

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _record(self, failed: bool) -> None:
        now = self._clock()
        self._outcomes.append((now, failed))
        while self._outcomes and now - self._outcomes[0][0] > self.window_s:
            self._outcomes.popleft()

    @property
    def observed(self) -> tuple[int, int]:
        """(calls, failures) in the current window."""
        return len(self._outcomes), sum(1 for _, f in self._outcomes if f)

    def success(self) -> None:
        if self._state == "half_open":
            self._state = "closed"
            self._outcomes.clear()
            self._probes_out = 0
            self._notify()
            return
        self._record(False)

    def failure(self, cause: str | None = None) -> None:
        if cause is not None:
            self.last_failure = cause
        if self._state == "half_open":
            self._open()
            return
        if self._state == "open":
            return  # a call that started before the circuit opened: already accounted for
        self._record(True)
        calls, failures = self.observed
        if calls >= self.min_calls and failures >= self.failure_rate * calls:
            self._open()

    def _open(self) -> None:
        self._state = "open"
        self._opened_at = self._clock()
        self._probes_out = 0
        self._notify()

    def neutral(self) -> None:
        """A call that ended without telling anything about the provider's health (e.g. HTTP 400)."""
        if self._state == "half_open" and self._probes_out > 0:
            self._probes_out -= 1
            self._notify()
