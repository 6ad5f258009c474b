"""What every provider module implements, and how HTTP failures are classified.

A provider only *talks*: one request, one :class:`Completion` or one :class:`ProviderError`. Retries,
rate limits, timeouts, the circuit breaker and the cache live in :mod:`scorers.judges._engine`, so they
behave identically for every vendor and the SDKs' own retry loops are switched off (``max_retries=0``).
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

#: Status codes worth retrying: timeouts, conflicts, rate limits, and every 5xx (529 = overloaded).
RETRYABLE_STATUS = frozenset({408, 409, 429})


@dataclass(frozen=True, slots=True)
class Completion:
    """The judge's raw text and the tokens the provider billed for it."""

    text: str
    input_tokens: int
    output_tokens: int


class ProviderError(Exception):
    """One failed request. ``retryable`` says whether the same request could succeed later;
    ``retry_after`` is the server's own hint in seconds (``Retry-After``), honoured by the engine."""

    def __init__(
        self, message: str, *, retryable: bool, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


#: How a provider is asked for a structured reply. ``auto``: the strongest its API has (OpenAI and
#: OpenAI-compatible servers: ``json_schema``; Anthropic: ``tool``); ``json_schema``: OpenAI structured
#: outputs, strict; ``tool``: Anthropic tool use with the tool forced; ``json_object``: JSON mode, the schema
#: only in the prompt; ``prompt``: nothing but the prompt (servers that know neither).
StructuredMode = Literal["auto", "json_schema", "tool", "json_object", "prompt"]


class Provider(Protocol):
    """One vendor API. Implementations must never log or echo the API key.

    ``schema`` (with ``schema_name``) is the reply's JSON Schema, to be enforced through the API where the
    provider can; ``json_mode`` without a schema asks for any JSON object; neither asks for free text.
    """

    name: str

    async def complete(
        self,
        *,
        model: str,
        system: str,
        user: str,
        max_tokens: int,
        timeout: float,
        json_mode: bool,
        schema: dict[str, Any] | None = None,
        schema_name: str = "judgment",
    ) -> Completion: ...

    async def close(self) -> None: ...


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (OpenAI/Anthropic) or ``retry-after`` (seconds or HTTP date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_error(status: int, headers: Mapping[str, str] | None, provider: str) -> ProviderError:
    """Classify an HTTP error status. The message names the status only: bodies may echo request data."""
    retryable = status in RETRYABLE_STATUS or status >= 500
    return ProviderError(
        f"{provider}: HTTP {status}",
        retryable=retryable,
        retry_after=parse_retry_after(headers) if retryable else None,
        status=status,
    )


class SdkProvider:
    """What every SDK-backed provider shares: its settings and the key lookup.

    The key is read from the environment variable ``api_key_env`` (default :attr:`default_key_env`) at the
    first request, never from a file and never logged; a provider whose ``key_required`` is false (local
    OpenAI-compatible servers) sends a placeholder when the variable is unset.
    """

    default_key_env: str | None = None
    key_required: bool = True

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        temperature: float | None = 0.0,
        http_client: Any = None,
        structured: StructuredMode = "auto",
    ) -> None:
        self.name = name
        self._base_url = base_url
        self._key_env = api_key_env if api_key_env is not None else self.default_key_env
        self._temperature = temperature
        self._http_client = http_client
        self.structured: StructuredMode = structured

    @property
    def key_env(self) -> str | None:
        return self._key_env

    def missing_key(self) -> str | None:
        """The environment variable this provider needs and lacks, else ``None`` (checked at start-up)."""
        if self.key_required and self._key_env and not os.environ.get(self._key_env):
            return self._key_env
        return None

    def _api_key(self) -> str:
        key = os.environ.get(self._key_env) if self._key_env else None
        if not key:
            if self.key_required:
                raise ProviderError(f"{self.name}: environment variable {self._key_env} is not set", retryable=False)
            return "unused"  # local servers (Ollama, llama.cpp) accept any bearer token
        return key
