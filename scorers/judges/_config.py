"""Judge routing and client settings, from TOML (see ``judges.example.toml`` at the repository root).

Defaults mirror seed 002's "Automatic Optimal Judge Models" table (metric -> vendor), with the model
*names* as plain strings you can change; metrics seed 002 does not list (the seed-000 turn rubric, the
seed-001 checklist, the seed-004 voice judge) default to an inexpensive OpenAI model. A file only
needs the keys it changes: ``providers``, ``routes`` and ``prices`` are merged over the defaults.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, model_validator

from scorers.redact import is_loopback_url

#: Route of the relevance metric when it runs on the local ONNX MiniLM (no API call).
LOCAL_EMBEDDINGS = "local:all-MiniLM-L6-v2-int8"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProviderConfig(_Model):
    """One API endpoint. Keys come only from the environment variable named here, never from files."""

    kind: Literal["openai", "anthropic", "openai_compatible"]
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="Env var holding the key (defaults: OPENAI_API_KEY, ANTHROPIC_API_KEY, none)."
    )
    max_concurrency: int = Field(default=32, ge=1, le=10_000)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=30.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries on 429/5xx/timeouts.")
    temperature: float | None = Field(default=0.0, description="None omits it (models that refuse it).")
    structured_output: Literal["auto", "json_schema", "tool", "json_object", "prompt"] = Field(
        default="auto",
        description="How the reply schema is enforced: auto = json_schema (OpenAI kinds) or forced tool use "
        "(Anthropic); json_object / prompt for servers without structured outputs.",
    )

    @model_validator(mode="after")
    def _needs_url(self) -> ProviderConfig:
        if self.kind == "openai_compatible" and not self.base_url:
            raise ValueError("openai_compatible providers need base_url")
        return self


class Price(_Model):
    input_per_mtok: float = Field(ge=0, description="USD per million input tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens.")


class SamplingConfig(_Model):
    """Live traffic: judge this fraction of assistant turns, but every turn that raised an alert."""

    turn_rate: float = Field(default=0.1, ge=0.0, le=1.0)
    always_on_alert: bool = True


class BreakerConfig(_Model):
    """Per-provider circuit breaker (:class:`scorers.judges.CircuitBreaker`): opens on a failure rate."""

    failure_rate: float = Field(default=0.5, gt=0.0, le=1.0, description="Share of failed calls that opens it.")
    min_calls: int = Field(default=20, ge=1, description="Calls in the window before the rate is trusted.")
    window: int = Field(default=50, ge=1, description="Outcomes of the last N calls ...")
    window_s: float = Field(default=60.0, gt=0, description="... that ended within this many seconds.")
    reset_after_s: float = Field(default=30.0, gt=0, description="Open this long, then probe.")
    probes: int = Field(default=1, ge=1, description="Calls let through at once when half-open.")
    wait: bool = Field(
        default=True, description="Callers wait for the probe (within their deadline) instead of failing."
    )


class CacheConfig(_Model):
    """Where validated judge replies are kept. ``path`` unset: ``attune evaluate`` uses
    :func:`default_cache_path` (so a re-run is free), a stream worker its data dir, and a
    :class:`JudgeTier` built in Python keeps the cache in memory (a library call writes no files)."""

    enabled: bool = True
    max_entries: int = Field(default=50_000, ge=1)
    path: str | None = Field(
        default=None,
        description="SQLite file. Unset: attune evaluate -> $ATTUNE_JUDGE_CACHE or the user cache dir; "
        "worker -> its data dir; Python API -> memory only.",
    )


CACHE_FILE = "judge-cache.sqlite3"


def default_cache_path() -> Path:
    """``$ATTUNE_JUDGE_CACHE`` if set, else ``judge-cache.sqlite3`` in the user cache directory
    (``platformdirs``: ``$XDG_CACHE_HOME/attune`` or ``~/.cache/attune`` on Linux, ``~/Library/Caches/attune``
    on macOS, ``%LOCALAPPDATA%\\attune\\Cache`` on Windows)."""
    env = os.environ.get("ATTUNE_JUDGE_CACHE")  # moves the file; ``cache.path`` in the config wins
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("attune", appauthor=False)) / CACHE_FILE


class RedactionConfig(_Model):
    """PII redaction before a prompt leaves the machine (see docs/data-protection.md).

    ``auto``: redact for every provider except an ``openai_compatible`` one whose ``base_url`` is
    loopback (a model on this host); ``on``: redact for every provider; ``off``: never (only for
    judges that run where the data may go). ``providers`` forces one provider on (true) or off (false).
    """

    mode: Literal["auto", "on", "off"] = "auto"
    providers: dict[str, bool] = Field(default_factory=dict)


DEFAULT_PROVIDERS: dict[str, ProviderConfig] = {
    "openai": ProviderConfig(kind="openai"),
    "anthropic": ProviderConfig(kind="anthropic"),
    "gemini": ProviderConfig(
        kind="openai_compatible",
        base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
        api_key_env="GOOGLE_API_KEY",
    ),
    "ollama": ProviderConfig(kind="openai_compatible", base_url="http://localhost:11434/v1"),
}

# seed 002 §"Automatic Optimal Judge Models": Claude Opus 4.5 / GPT-4o / GPT-5.2 / Gemini 2.0 Flash (for
# conversational_continuity, which the seed only names) / OpenAI embeddings. Relevance defaults to the
# local ONNX MiniLM instead (offline, free); set routes.relevance = "openai:text-embedding-3-small" for
# the seed's choice.
DEFAULT_ROUTES: dict[str, str] = {
    "persona_consistency": "anthropic:claude-opus-4-5",
    "emotional_congruence": "openai:gpt-4o",
    "memory_utilization": "anthropic:claude-opus-4-5",
    "coherence": "openai:gpt-4o",
    "helpfulness": "anthropic:claude-opus-4-5",
    "empathy": "openai:gpt-4o",
    "politeness": "openai:gpt-4o",
    "safety": "anthropic:claude-opus-4-5",
    "logical_consistency": "openai:gpt-5.2",
    "conversational_continuity": "gemini:gemini-2.0-flash",  # seed 002 names it; its definition is attune's
    "groundedness": "anthropic:claude-opus-4-5",
    "relevance": LOCAL_EMBEDDINGS,
    "turn_rubric": "openai:gpt-4o-mini",
    "checklist": "openai:gpt-4o-mini",
    "voice_judge": "openai:gpt-4o-mini",
    "crisis_screen": "openai:gpt-4o-mini",  # issue #12: second opinion on possible-risk user turns
}

#: USD per million tokens: the vendors' published list prices (standard tier, no batch or cache
#: discounts) as of late 2025, not re-checked online since; edit them in TOML when they change. A model
#: missing here (``openai:gpt-5.2``, the logical_consistency default, whose price we could not confirm;
#: any ``ollama:`` model) gets ``cost_usd: null`` and a warning naming the ``[prices]`` key to set.
DEFAULT_PRICES: dict[str, Price] = {
    "openai:gpt-4o": Price(input_per_mtok=2.50, output_per_mtok=10.00),
    "openai:gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.60),
    "anthropic:claude-opus-4-5": Price(input_per_mtok=5.00, output_per_mtok=25.00),
    "anthropic:claude-sonnet-4-5": Price(input_per_mtok=3.00, output_per_mtok=15.00),  # the --judge help example
    "gemini:gemini-2.0-flash": Price(input_per_mtok=0.10, output_per_mtok=0.40),  # text input price
    "openai:text-embedding-3-small": Price(input_per_mtok=0.02, output_per_mtok=0.0),
}


class JudgeConfig(_Model):
    providers: dict[str, ProviderConfig] = Field(default_factory=lambda: dict(DEFAULT_PROVIDERS))
    routes: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_ROUTES))
    override: str | None = Field(default=None, description="provider:model for every LLM metric (--judge).")
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    turn_metrics: list[str] = Field(default_factory=lambda: ["turn_rubric"])
    checklist_mode: Literal["per_criterion", "batched"] = "per_criterion"
    max_concurrency: int = Field(default=64, ge=1, le=100_000, description="All judge calls in flight.")
    deadline_s: float = Field(default=120.0, gt=0, description="Bound on one judge call, retries included.")
    backoff_base_s: float = Field(default=0.5, gt=0)
    backoff_max_s: float = Field(default=20.0, gt=0)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    breaker: BreakerConfig = Field(default_factory=BreakerConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    redaction: RedactionConfig = Field(default_factory=RedactionConfig)

    @model_validator(mode="after")
    def _routes_resolve(self) -> JudgeConfig:
        specs = list(self.routes.values()) + ([self.override] if self.override else [])
        for spec in specs:
            provider, sep, model = spec.partition(":")
            if not sep or not model:
                raise ValueError(f"judge route {spec!r} must look like provider:model")
            if provider != "local" and provider not in self.providers:
                raise ValueError(f"judge route {spec!r}: unknown provider {provider!r} (define [providers.{provider}])")
        return self

    @model_validator(mode="after")
    def _redaction_providers_exist(self) -> JudgeConfig:
        unknown = sorted(set(self.redaction.providers) - set(self.providers))
        if unknown:
            raise ValueError(f"[redaction.providers] names unknown providers {unknown}")
        return self

    def route(self, metric: str) -> str:
        """provider:model for ``metric``; the global override applies to every LLM metric.

        Relevance keeps its embedding route under an override, because a chat model cannot embed.
        """
        if metric not in self.routes:
            raise KeyError(f"no judge route for metric {metric!r}")
        if self.override and metric != "relevance":
            return self.override
        return self.routes[metric]

    def price(self, judge: str) -> Price | None:
        return self.prices.get(judge)

    def redacts(self, provider: str) -> bool:
        """Whether text for ``provider`` is redacted first. Vendor APIs (openai, anthropic kinds) count
        as external even at a loopback URL: that is usually a proxy forwarding to the vendor."""
        forced = self.redaction.providers.get(provider)
        if forced is not None:
            return forced
        if self.redaction.mode != "auto":
            return self.redaction.mode == "on"
        pc = self.providers.get(provider)
        if pc is None:
            return provider != "local"
        return not (pc.kind == "openai_compatible" and is_loopback_url(pc.base_url))


def load_config(path: str | Path | None = None, *, override: str | None = None) -> JudgeConfig:
    """Defaults, then the TOML file's keys (dict tables merged key by key), then ``override``."""
    data: dict[str, object] = {}
    if path is not None:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    merged: dict[str, object] = dict(data)
    for key, defaults in (("providers", DEFAULT_PROVIDERS), ("routes", DEFAULT_ROUTES), ("prices", DEFAULT_PRICES)):
        given = data.get(key, {})
        if not isinstance(given, dict):
            raise ValueError(f"[{key}] must be a table")
        base = {k: (v.model_dump() if isinstance(v, BaseModel) else v) for k, v in defaults.items()}
        merged[key] = {**base, **given}
    if override is not None:
        merged["override"] = override
    return JudgeConfig.model_validate(merged)
