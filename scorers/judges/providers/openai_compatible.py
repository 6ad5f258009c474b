"""Any server speaking OpenAI chat completions at a base URL: Ollama, vLLM, llama.cpp, Gemini's endpoint.

Differences from :mod:`.openai`: a ``base_url`` is required, the key is optional (local servers ignore
it), the token limit is sent as ``max_tokens``, which those servers understand, and with
``structured_output = "auto"`` a server that answers HTTP 400 to ``json_schema`` is asked in JSON mode
from then on (the schema still travels in the prompt and is validated the same way).
"""

from __future__ import annotations

from typing import Any

from ._base import StructuredMode
from .openai import OpenAIProvider


class OpenAICompatibleProvider(OpenAIProvider):
    token_param = "max_tokens"
    default_key_env = None
    key_required = False
    downgrades = True

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        api_key_env: str | None = None,
        temperature: float | None = 0.0,
        http_client: Any = None,
        structured: StructuredMode = "auto",
    ) -> None:
        if not base_url:
            raise ValueError(f"provider {name!r}: openai_compatible needs a base_url")
        super().__init__(
            name,
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=temperature,
            http_client=http_client,
            structured=structured,
        )
