"""OpenAI chat completions through the official ``openai`` SDK (structured outputs, SDK retries off).

A reply with a schema is requested as ``response_format={"type": "json_schema", "json_schema": {"name",
"strict": true, "schema"}}``: the API then constrains decoding to the schema attune validates. A refusal
(``message.refusal``) is a non-retryable error naming it, never an answer.
"""

from __future__ import annotations

import logging
from typing import Any

import openai

from ._base import Completion, ProviderError, SdkProvider, status_error

log = logging.getLogger("attune.judges")


class OpenAIProvider(SdkProvider):
    """``api.openai.com`` (or any base URL speaking its API; see :mod:`.openai_compatible`).

    The key is read from the environment variable ``api_key_env`` when the first request is made, so a
    route that is never used needs no key; a missing key is a non-retryable error (an ERROR record).
    """

    #: OpenAI's own API wants ``max_completion_tokens``; compatible servers mostly know ``max_tokens``.
    token_param = "max_completion_tokens"
    default_key_env: str | None = "OPENAI_API_KEY"
    key_required = True
    #: Whether a 400 to json_schema falls back to json_object (``structured="auto"`` only): compatible
    #: servers vary; OpenAI's own API supports it, so there a 400 is a real error.
    downgrades = False

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self._client: openai.AsyncOpenAI | None = None

    def _sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key(),
                base_url=self._base_url,
                max_retries=0,
                http_client=self._http_client,
            )
        return self._client

    def _mode(self, schema: dict[str, Any] | None, json_mode: bool) -> str:
        if schema is not None and self.structured in ("auto", "json_schema"):
            return "json_schema"
        if (json_mode or schema is not None) and self.structured != "prompt":
            return "json_object"
        return "text"

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
    ) -> Completion:
        request = (model, system, user, max_tokens, timeout, schema, schema_name)
        mode = self._mode(schema, json_mode)
        try:
            return await self._post(mode, *request)
        except ProviderError as e:
            if not (e.status == 400 and mode == "json_schema" and self.structured == "auto" and self.downgrades):
                raise
        # A compatible server that rejects json_schema (older Ollama, llama.cpp builds): JSON mode from now
        # on, schema in the prompt only; said once, in the log (docs/judges.md, "Structured output").
        log.warning("%s rejected response_format json_schema (HTTP 400): using json_object from now on", self.name)
        self.structured = "json_object"
        return await self._post("json_object", *request)

    async def _post(
        self,
        mode: str,
        model: str,
        system: str,
        user: str,
        max_tokens: int,
        timeout: float,
        schema: dict[str, Any] | None,
        schema_name: str,
    ) -> Completion:
        kwargs: dict[str, Any] = {self.token_param: max_tokens}
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        if mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": True, "schema": schema},
            }
        elif mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        body = {
            "model": model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            **kwargs,
        }
        try:
            # The SDK's own low-level POST: same client, HTTP stack and errors as chat.completions.create, minus
            # its TypedDict param transform and its ChatCompletion model construction, which cost milliseconds
            # of CPU per call in a client that is CPU-bound at 50 calls in flight (bench/judge_bench.py;
            # docs/benchmarks.md, "Judges"): ``cast_to=object`` hands back the decoded JSON, read by :func:`_reply`.
            data = await self._sdk().post("/chat/completions", cast_to=object, body=body, options={"timeout": timeout})
        except openai.APIStatusError as e:
            raise status_error(e.status_code, e.response.headers, self.name) from None
        except openai.APITimeoutError:
            raise ProviderError(f"{self.name}: request timed out", retryable=True) from None
        except openai.APIConnectionError:
            raise ProviderError(f"{self.name}: connection failed", retryable=True) from None
        return _reply(data, self.name)

    async def list_models(self, *, timeout: float) -> list[str]:
        """Model ids the server offers (``GET /models``), for the start-up check."""
        try:
            page = await self._sdk().models.list(timeout=timeout)
        except openai.APIStatusError as e:
            raise status_error(e.status_code, e.response.headers, self.name) from None
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise ProviderError(f"{self.name}: models request failed", retryable=True) from None
        return [m.id for m in page.data]

    async def embed(self, *, model: str, texts: list[str], timeout: float) -> list[list[float]]:
        """Embeddings (seed 002's relevance default ``text-embedding-3-small``)."""
        try:
            resp = await self._sdk().embeddings.create(model=model, input=texts, timeout=timeout)
        except openai.APIStatusError as e:
            raise status_error(e.status_code, e.response.headers, self.name) from None
        except openai.APIConnectionError:
            raise ProviderError(f"{self.name}: embeddings request failed", retryable=True) from None
        return [d.embedding for d in sorted(resp.data, key=lambda d: d.index)]

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _reply(data: object, name: str) -> Completion:
    """The text and token counts of a chat-completions response body; any other shape is a retryable error."""
    try:
        choices = data["choices"]  # type: ignore[index]
        if not choices:
            raise ProviderError(f"{name}: response without choices", retryable=True)
        message = choices[0]["message"]
        if message.get("refusal"):
            raise ProviderError(f"{name}: the model refused: {str(message['refusal'])[:120]}", retryable=False)
        text = message.get("content") or ""
        usage = data.get("usage") or {}  # type: ignore[attr-defined]
        tokens_in, tokens_out = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
    except (TypeError, KeyError, IndexError, AttributeError):
        raise ProviderError(f"{name}: response not in the chat-completions shape", retryable=True) from None
    if not isinstance(text, str) or not isinstance(tokens_in, int) or not isinstance(tokens_out, int):
        raise ProviderError(f"{name}: response not in the chat-completions shape", retryable=True)
    return Completion(text=text, input_tokens=tokens_in, output_tokens=tokens_out)
