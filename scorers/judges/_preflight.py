"""Start-up checks of the judge configuration: fail before any work, never page anyone about it.

Why here and not per call: a missing key used to surface as an ERROR on every answer, and each failed
checklist as a ``judge_unsafe`` alert to the safety team. A configuration mistake is the operator's, so
``attune evaluate --judge`` and ``attune worker --judge`` run :func:`preflight` first and exit non-zero with
a message naming the variable or model to fix.

What is checked, for every provider an active route uses: the API key variable is set (providers that need
one); then the provider's model list (``GET /v1/models``, free on OpenAI, Anthropic and most compatible
servers) must contain each routed model. A key the server rejects (401/403) fails too. A list that cannot be
fetched (no such endpoint, network down) is a warning, not a failure: the judge may still work, and the
breaker and ERROR records cover an outage at run time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from ._config import LOCAL_EMBEDDINGS, JudgeConfig
from .providers import Provider, ProviderError

log = logging.getLogger("attune.judges")

#: Routes a run uses besides its per-turn metrics: the seed-001 checklist and the crisis screen.
ALWAYS = ("checklist", "crisis_screen")


class JudgeConfigError(ValueError):
    """The judge configuration cannot work (missing key, unknown model): fix it before running."""


def active_routes(config: JudgeConfig, turn_metrics: Iterable[str] | None = None) -> dict[str, str]:
    """metric -> provider:model for what a run will call (local embeddings excluded)."""
    names = list(turn_metrics) if turn_metrics is not None else list(config.turn_metrics)
    routes = {m: config.route(m) for m in [*names, *ALWAYS]}
    return {m: r for m, r in routes.items() if r != LOCAL_EMBEDDINGS and not r.startswith("local:")}


def _listed(model: str, available: set[str]) -> bool:
    # Gemini's OpenAI endpoint lists "models/gemini-2.0-flash"; accept the bare name for it.
    return model in available or any(a.endswith("/" + model) for a in available)


async def preflight(
    config: JudgeConfig,
    providers: dict[str, Provider],
    turn_metrics: Iterable[str] | None = None,
    *,
    timeout: float = 10.0,
) -> list[str]:
    """Raise :class:`JudgeConfigError` for a missing key, a rejected key or a model the provider does not
    list; return warnings (model lists that could not be read). ``providers``: name -> provider object."""
    routes = active_routes(config, turn_metrics)
    wanted: dict[str, set[str]] = {}
    for route in routes.values():
        name, _, model = route.partition(":")
        wanted.setdefault(name, set()).add(model)
    problems: list[str] = []
    for name in sorted(wanted):
        missing = getattr(providers[name], "missing_key", lambda: None)()
        if missing:
            uses = sorted(m for m, r in routes.items() if r.partition(":")[0] == name)
            problems.append(f"provider {name!r} needs the environment variable {missing} (used by {', '.join(uses)})")
    if problems:
        raise JudgeConfigError("; ".join(problems))
    warnings: list[str] = []
    results = await asyncio.gather(
        *(_models_of(providers[name], timeout) for name in sorted(wanted)), return_exceptions=True
    )
    for name, got in zip(sorted(wanted), results, strict=True):
        if isinstance(got, ProviderError) and got.status in (401, 403):
            problems.append(f"provider {name!r} rejected its API key (HTTP {got.status})")
            continue
        if isinstance(got, BaseException):
            warnings.append(f"provider {name!r}: could not list its models ({got}); models not verified")
            continue
        unknown = sorted(m for m in wanted[name] if not _listed(m, got))
        if unknown:
            sample = ", ".join(sorted(got)[:8]) + (" ..." if len(got) > 8 else "")
            problems.append(f"provider {name!r} does not offer model(s) {', '.join(unknown)} (it lists: {sample})")
    if problems:
        raise JudgeConfigError("; ".join(problems))
    for w in warnings:
        log.warning("judge preflight: %s", w)
    return warnings


async def _models_of(provider: Any, timeout: float) -> set[str]:
    lister = getattr(provider, "list_models", None)
    if lister is None:
        raise ProviderError("no model list for this provider kind", retryable=False)
    async with asyncio.timeout(timeout):
        return set(await lister(timeout=timeout))


def check_judges(config_path: Any, override: str | None, turn_metrics: Iterable[str] | None = None) -> list[str]:
    """:func:`preflight` for a CLI, before its own event loop exists: a throwaway tier on a short loop of
    its own (SDK clients belong to the loop that made them). Raises :class:`JudgeConfigError`."""
    from ._config import load_config
    from ._tier import JudgeTier

    config = load_config(config_path, override=override)
    config = config.model_copy(update={"cache": config.cache.model_copy(update={"enabled": False})})  # no file

    async def check() -> list[str]:
        async with JudgeTier(config) as tier:
            return await tier.preflight(list(turn_metrics) if turn_metrics is not None else None)

    return asyncio.run(check())
