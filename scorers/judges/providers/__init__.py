"""One small module per judge vendor; :func:`make_provider` picks one from a provider config."""

from __future__ import annotations

from typing import Any

from ._base import Completion, Provider, ProviderError, StructuredMode, parse_retry_after
from .anthropic import AnthropicProvider
from .openai import OpenAIProvider
from .openai_compatible import OpenAICompatibleProvider

KINDS = ("openai", "anthropic", "openai_compatible")


def make_provider(
    name: str,
    kind: str,
    *,
    base_url: str | None,
    api_key_env: str | None,
    temperature: float | None,
    http_client: Any = None,
    structured: StructuredMode = "auto",
) -> Provider:
    if kind == "openai":
        return OpenAIProvider(
            name,
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=temperature,
            http_client=http_client,
            structured=structured,
        )
    if kind == "anthropic":
        return AnthropicProvider(
            name,
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=temperature,
            http_client=http_client,
            structured=structured,
        )
    if kind == "openai_compatible":
        return OpenAICompatibleProvider(
            name,
            base_url=base_url or "",
            api_key_env=api_key_env,
            temperature=temperature,
            http_client=http_client,
            structured=structured,
        )
    raise ValueError(f"unknown provider kind {kind!r} (expected one of {', '.join(KINDS)})")


__all__ = [
    "KINDS",
    "AnthropicProvider",
    "Completion",
    "OpenAICompatibleProvider",
    "OpenAIProvider",
    "Provider",
    "ProviderError",
    "StructuredMode",
    "make_provider",
    "parse_retry_after",
]
