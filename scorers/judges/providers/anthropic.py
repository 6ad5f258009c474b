"""Anthropic messages API through the official ``anthropic`` SDK (SDK retries off).

A reply with a schema is requested through tool use: one tool whose ``input_schema`` is the reply schema,
forced with ``tool_choice={"type": "tool", "name": ...}``, so the model answers with a ``tool_use`` block
whose ``input`` the API has checked against that schema; attune validates the same schema again. With
``structured_output = "prompt"`` the schema travels only in the prompt (plain text reply).

The installed SDK (anthropic 2.x) no longer accepts ``temperature`` on ``messages.create``, so the
configured temperature is not sent; repeatability comes from the strict schema and the result cache.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic

from ._base import Completion, ProviderError, SdkProvider, status_error


class AnthropicProvider(SdkProvider):
    default_key_env = "ANTHROPIC_API_KEY"

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self._client: anthropic.AsyncAnthropic | None = None

    def _sdk(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key(), base_url=self._base_url, max_retries=0, http_client=self._http_client
            )
        return self._client

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
        kwargs: dict[str, Any] = {}
        use_tool = schema is not None and self.structured in ("auto", "tool")
        if use_tool:
            tool = {
                "name": schema_name,
                "description": "Record your judgment in this structure.",
                "input_schema": schema,
            }
            kwargs["tools"] = [tool]
            kwargs["tool_choice"] = {"type": "tool", "name": schema_name}
        try:
            resp = await self._sdk().messages.create(
                model=model,
                system=system,
                messages=[{"role": "user", "content": user}],
                max_tokens=max_tokens,
                timeout=timeout,
                **kwargs,
            )
        except anthropic.APIStatusError as e:
            raise status_error(e.status_code, e.response.headers, self.name) from None
        except anthropic.APITimeoutError:
            raise ProviderError(f"{self.name}: request timed out", retryable=True) from None
        except anthropic.APIConnectionError:
            raise ProviderError(f"{self.name}: connection failed", retryable=True) from None
        except anthropic.APIResponseValidationError:
            raise ProviderError(f"{self.name}: response not in the messages shape", retryable=True) from None
        tool_input = next((b.input for b in resp.content if getattr(b, "type", "") == "tool_use"), None)
        if use_tool and tool_input is not None:
            text = json.dumps(tool_input, ensure_ascii=False)
        else:  # no tool call (a refusal, or prompt mode): the text is validated like any other reply
            text = "".join(getattr(block, "text", "") for block in resp.content)
        return Completion(text=text, input_tokens=resp.usage.input_tokens, output_tokens=resp.usage.output_tokens)

    async def list_models(self, *, timeout: float) -> list[str]:
        """Model ids the API offers (``GET /v1/models``), for the start-up check."""
        try:
            page = await self._sdk().models.list(limit=1000, timeout=timeout)
        except anthropic.APIStatusError as e:
            raise status_error(e.status_code, e.response.headers, self.name) from None
        except (anthropic.APIConnectionError, anthropic.APITimeoutError):
            raise ProviderError(f"{self.name}: models request failed", retryable=True) from None
        return [m.id for m in page.data]

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
