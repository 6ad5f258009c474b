"""The call engine: one judge request from cache lookup to a validated value or an ERROR.

Order of operations for one job: cache -> circuit breaker -> concurrency caps (global, provider) ->
rate limit -> request under a timeout -> classify failure -> backoff (``Retry-After`` honoured, full
jitter otherwise) -> parse + strict validation -> one re-ask on invalid output -> cache the valid reply.
Everything is bounded by ``deadline_s`` so a caller (a Faust agent) never waits longer than that.
The retry loop is hand-written, not tenacity's: with tenacity's ``AsyncRetrying`` around every call (same
wait and stop rules) the judge fan-out at 50 calls in flight fell measurably further below the Little's-law
bound (bench/judge_bench.py, runs alternated; docs/benchmarks.md, "Judges"): its per-call set-up costs CPU
in a client that is CPU-bound there. The breaker and the rate limiter: :mod:`._limits` says why.
A failure is returned as :class:`Outcome` with ``error`` set; callers turn it into ERROR records, never
into a default score.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from schemas import Usage

from ._cache import ResultCache, cache_key
from ._config import JudgeConfig
from ._limits import CircuitBreaker, RateLimiter
from ._prompt import Prompt
from .providers import Completion, Provider, ProviderError, make_provider

log = logging.getLogger("attune.judges")

T = TypeVar("T")


#: ERROR text -> cause class, in match order (the messages are made in this module and the providers).
ERROR_CAUSES: tuple[tuple[str, str], ...] = (
    ("circuit open", "circuit_open"),
    ("HTTP 429", "http_429"),
    ("HTTP 5", "http_5xx"),
    ("HTTP 4", "http_4xx"),
    ("no reply within", "timeout"),
    ("deadline", "deadline"),
    ("invalid reply", "invalid_reply"),
    ("connection failed", "connection"),
    ("is not set", "missing_key"),
    ("refused", "refusal"),
)


def error_cause(error: str | None) -> str:
    """The cause class of a judge ERROR message (``none`` for no error, ``other`` if unrecognised), for
    metrics and benchmarks: every ERROR attune makes names one of :data:`ERROR_CAUSES`."""
    if not error:
        return "none"
    return next((name for needle, name in ERROR_CAUSES if needle in error), "other")


class InvalidReply(ValueError):
    """The judge answered, but not in the required structure."""


@dataclass(slots=True)
class Outcome(Generic[T]):
    value: T | None
    error: str | None
    usage: Usage
    prompt_hash: str
    judge: str

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(slots=True)
class EngineStats:
    """Counters for progress bars, tests and benchmarks (requests = HTTP attempts actually sent)."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    invalid_replies: int = 0
    errors: int = 0
    breaker_rejections: int = 0
    breaker_waits: int = 0
    by_status: dict[str, int] = field(default_factory=dict)


class _Failure(Exception):
    pass


class _ProviderSlot:
    def __init__(self, provider: Provider, max_concurrency: int, limiter: RateLimiter, breaker: CircuitBreaker):
        self.provider = provider
        self.sem = asyncio.Semaphore(max_concurrency)
        self.limiter = limiter
        self.breaker = breaker


class JudgeEngine:
    def __init__(
        self,
        config: JudgeConfig,
        *,
        http_client: Any = None,
        cache: ResultCache | None = None,
        providers: dict[str, Provider] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.stats = EngineStats()
        self._http_client = http_client
        self._given = providers or {}
        self._slots: dict[str, _ProviderSlot] = {}
        self._global = asyncio.Semaphore(config.max_concurrency)
        self._rng = rng or random.Random()
        self._unpriced: set[str] = set()  # judges already warned about (once per model)
        if cache is None and config.cache.enabled:
            cache = ResultCache(config.cache.max_entries, config.cache.path)
        self.cache = cache

    def slot(self, provider_name: str) -> _ProviderSlot:
        slot = self._slots.get(provider_name)
        if slot is None:
            pc = self.config.providers[provider_name]
            provider = self._given.get(provider_name) or make_provider(
                provider_name,
                pc.kind,
                base_url=pc.base_url,
                api_key_env=pc.api_key_env,
                temperature=pc.temperature,
                http_client=self._http_client,
                structured=pc.structured_output,
            )
            slot = _ProviderSlot(
                provider,
                pc.max_concurrency,
                RateLimiter(pc.requests_per_minute, pc.tokens_per_minute),
                CircuitBreaker(
                    failure_rate=self.config.breaker.failure_rate,
                    min_calls=self.config.breaker.min_calls,
                    window=self.config.breaker.window,
                    window_s=self.config.breaker.window_s,
                    reset_after_s=self.config.breaker.reset_after_s,
                    probes=self.config.breaker.probes,
                ),
            )
            self._slots[provider_name] = slot
        return slot

    def breaker_state(self, provider_name: str) -> str:
        return self.slot(provider_name).breaker.state

    def cost(self, judge: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD at the configured list price, or None (logged once per model) when ``judge`` has no price:
        an unknown cost must never read as $0."""
        price = self.config.price(judge)
        if price is None:
            if judge not in self._unpriced:
                self._unpriced.add(judge)
                log.warning(
                    'judge %s has no price: cost_usd is null for its calls; set [prices."%s"] '
                    "input_per_mtok and output_per_mtok (USD per million tokens) in the judge config",
                    judge,
                    judge,
                )
            return None
        return round((input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6, 8)

    async def run(self, judge: str, rubric_tag: str, prompt: Prompt, parse: Callable[[str], T]) -> Outcome[T]:
        """Ask ``judge`` (provider:model) and return the parsed value, or an error; never raises for
        provider trouble or invalid replies."""
        provider_name, _, model = judge.partition(":")
        key = cache_key(rubric_tag, judge, prompt.hash)
        if self.cache is not None:
            cached = await self.cache.get(key)
            if cached is not None:
                try:
                    value = parse(cached)
                except (InvalidReply, ValueError):
                    value = None  # a cached reply that no longer validates (model changed): ask again
                if value is not None:
                    self.stats.cache_hits += 1
                    return Outcome(value, None, Usage(cache_hits=1), prompt.hash, judge)
        deadline = time.monotonic() + self.config.deadline_s
        usage = Usage()
        current = prompt
        problem = ""
        for ask in range(2):  # the answer, then one re-ask if it was not valid
            try:
                comp = await self._call(provider_name, model, current, deadline, usage)
            except _Failure as e:
                self.stats.errors += 1
                return Outcome(None, str(e), self._priced(judge, usage), prompt.hash, judge)
            try:
                value = parse(comp.text)
            except (InvalidReply, ValueError) as e:
                self.stats.invalid_replies += 1
                problem = _short(e)
                # The problem text may quote the reply (which may quote the conversation): DEBUG only.
                log.info("judge %s: invalid reply, ask %d", judge, ask + 1)
                log.debug("judge %s: invalid reply detail: %s", judge, problem)
                current = prompt.with_correction(problem)
                continue
            if self.cache is not None:
                await self.cache.put(key, comp.text)
            return Outcome(value, None, self._priced(judge, usage), prompt.hash, judge)
        self.stats.errors += 1
        return Outcome(
            None, f"invalid reply after one retry: {problem}", self._priced(judge, usage), prompt.hash, judge
        )

    def _priced(self, judge: str, usage: Usage) -> Usage:
        # No request sent (breaker open, deadline passed before the first attempt): a known $0.
        usage.cost_usd = self.cost(judge, usage.input_tokens, usage.output_tokens) if usage.calls else 0.0
        return usage

    async def _call(self, provider_name: str, model: str, prompt: Prompt, deadline: float, usage: Usage) -> Completion:
        slot = self.slot(provider_name)
        pc = self.config.providers[provider_name]
        reserve = (len(prompt.system) + len(prompt.user)) // 4 + prompt.max_tokens
        attempt = 0
        while True:
            allowed = slot.breaker.allow()
            if not allowed and self.config.breaker.wait:
                self.stats.breaker_waits += 1
                allowed = await slot.breaker.acquire(deadline)  # the probe's outcome, within our deadline
            if not allowed:
                self.stats.breaker_rejections += 1
                why = f" after: {slot.breaker.last_failure}" if slot.breaker.last_failure else ""
                raise _Failure(f"{provider_name}: circuit open{why}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                slot.breaker.neutral()
                raise _Failure(f"{provider_name}: deadline of {self.config.deadline_s:g}s exceeded")
            err: ProviderError
            try:
                async with asyncio.timeout(remaining):
                    async with self._global, slot.sem:
                        await slot.limiter.acquire(reserve)
                        per_call = min(pc.timeout_s, deadline - time.monotonic())
                        self.stats.requests += 1
                        usage.calls += 1
                        try:
                            async with asyncio.timeout(per_call):
                                comp = await slot.provider.complete(
                                    model=model,
                                    system=prompt.system,
                                    user=prompt.user,
                                    max_tokens=prompt.max_tokens,
                                    timeout=per_call,
                                    json_mode=prompt.json_mode,
                                    schema=prompt.schema,
                                    schema_name=prompt.schema_name,
                                )
                        except TimeoutError:
                            raise ProviderError(
                                f"{provider_name}: no reply within {per_call:.3g}s", retryable=True
                            ) from None
            except ProviderError as e:
                err = e
            except TimeoutError:
                slot.breaker.neutral()
                raise _Failure(f"{provider_name}: deadline of {self.config.deadline_s:g}s exceeded") from None
            else:
                slot.breaker.success()
                slot.limiter.settle(reserve, comp.input_tokens + comp.output_tokens)
                usage.input_tokens += comp.input_tokens
                usage.output_tokens += comp.output_tokens
                return comp
            status = str(err.status) if err.status is not None else "timeout/connection"
            self.stats.by_status[status] = self.stats.by_status.get(status, 0) + 1
            if err.retryable:
                slot.breaker.failure(str(err))
            else:
                slot.breaker.neutral()
            if not err.retryable or attempt >= pc.max_retries:
                raise _Failure(str(err) + (f" (after {attempt + 1} attempts)" if err.retryable else ""))
            delay = self._delay(attempt, err.retry_after)
            if time.monotonic() + delay > deadline:
                raise _Failure(f"{err} and the retry wait ({delay:.3g}s) would pass the deadline")
            self.stats.retries += 1
            await asyncio.sleep(delay)
            attempt += 1

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """``Retry-After`` when the server gave one (plus up to 10% jitter so waiters do not stampede),
        else full-jitter exponential backoff: uniform(0, min(max, base * 2**attempt))."""
        if retry_after is not None:
            return retry_after * (1.0 + 0.1 * self._rng.random())
        cap = min(self.config.backoff_max_s, self.config.backoff_base_s * (2**attempt))
        return self._rng.uniform(0.0, cap)

    async def close(self) -> None:
        for slot in self._slots.values():
            await slot.provider.close()
        self._slots.clear()
        if self.cache is not None:
            self.cache.close()


def _short(e: Exception) -> str:
    text = str(e).replace("\n", " ")
    return text[:300]
