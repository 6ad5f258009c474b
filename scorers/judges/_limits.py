"""Flow control shared by every judge call: per-provider rate limits and a circuit breaker."""

from __future__ import annotations

import asyncio
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
    """Stops calling a provider that keeps failing, so jobs fail fast (ERROR) instead of queueing.

    ``failure_threshold`` consecutive retryable failures open it; after ``reset_after_s`` one probe
    call is let through (half-open): success closes it, failure re-opens it for another period.
    """

    def __init__(
        self, failure_threshold: int = 5, reset_after_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.failure_threshold = failure_threshold
        self.reset_after_s = reset_after_s
        self._clock = clock
        self._state: BreakerState = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._probe_out = False
        #: The failure that last counted against the provider: every "circuit open" ERROR names it.
        self.last_failure: str | None = None

    @property
    def state(self) -> BreakerState:
        if self._state == "open" and self._clock() - self._opened_at >= self.reset_after_s:
            return "half_open"
        return self._state

    def allow(self) -> bool:
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and not self._probe_out:
            self._state = "half_open"
            self._probe_out = True
            return True
        return False

    def success(self) -> None:
        self._state = "closed"
        self._failures = 0
        self._probe_out = False

    def failure(self, cause: str | None = None) -> None:
        self._failures += 1
        if cause is not None:
            self.last_failure = cause
        if self._state == "half_open" or self._failures >= self.failure_threshold:
            self._state = "open"
            self._opened_at = self._clock()
            self._probe_out = False

    def neutral(self) -> None:
        """A call that ended without telling anything about the provider's health (e.g. HTTP 400)."""
        if self._state == "half_open":
            self._probe_out = False
