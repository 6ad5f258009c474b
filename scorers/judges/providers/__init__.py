"""One small module per judge vendor; :func:`make_provider` picks one from a provider config."""

from __future__ import annotations

from typing import Any

from ._base import Completion, Provider, ProviderError, StructuredMode, parse_retry_after
from .anthropic import AnthropicProvider
from .openai import OpenAIProvider
from .openai_compatible import OpenAICompatibleProvider

KINDS = ("openai", "anthropic", "openai_compatible")


_CLASSES: dict[str, type[Any]] = {
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
    "openai_compatible": OpenAICompatibleProvider,
}


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
    cls = _CLASSES.get(kind)
    if cls is None:
        raise ValueError(f"unknown provider kind {kind!r} (expected one of {', '.join(KINDS)})")
    if kind == "openai_compatible":
        base_url = base_url or ""  # the class refuses an empty one with a clear message
    return cls(
        name,
        base_url=base_url,
        api_key_env=api_key_env,
        temperature=temperature,
        http_client=http_client,
        structured=structured,
    )


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
