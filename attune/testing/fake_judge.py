"""A fake LLM judge: a real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions and the
Anthropic messages APIs, for tests and benchmarks. A test double only: nothing in attune defaults to it.

* deterministic answers, seeded by a hash of the prompt, so the same request always gets the same reply;
  ``answers`` pins replies by a substring of the prompt. Where the reply comes from is
  ``schema_source``:

  - ``"prompt"`` (default): synthesised from the JSON Schema the prompt carries between
    ``<output_schema>`` tags (else an OpenAI ``response_format`` json_schema); seed 004's
    ``Score: X.X | Reasoning`` format is answered in kind;
  - ``"api"``: like the real providers, only from the schema sent *through the API* (OpenAI
    ``response_format`` json_schema; Anthropic forced tool use, answered as a ``tool_use`` block), with
    any value that schema allows (numbers anywhere in range, not only the anchors); JSON mode without a
    schema gets a generic object and a plain request plain prose, whatever the prompt says;
* ``reject_json_schema``: HTTP 400 to an OpenAI ``response_format`` json_schema (servers without it);
* ``models``: when set, ``GET /v1/models`` lists exactly these ids (else it answers 404, like a server
  without the endpoint);
* configurable latency (``--latency``) applied to every model call;
* injected faults, each for ``times`` requests (optionally only those whose prompt contains
  ``match``): ``429`` (with ``retry-after``), ``500``, ``503``, ``hang`` (no reply for ``hang_s``),
  ``malformed`` (200 with broken JSON), ``bad_schema`` (200 with valid JSON of the wrong shape);
* echo: every request that reached it is kept (``server.requests`` or ``GET /_control/requests``), so a
  test can see exactly what a judge was shown.

Run: ``python -m attune.testing.fake_judge --port 8765 --latency 0.2``. In-process:
``async with FakeJudgeServer(latency=0.0) as srv: ...`` and point a provider at ``srv.openai_base_url``
or ``srv.anthropic_base_url``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import random
import re
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

FAULT_KINDS = ("429", "500", "503", "hang", "malformed", "bad_schema")
_SCHEMA = re.compile(r"<output_schema>\s*(.*?)\s*</output_schema>", re.DOTALL)
_ID = re.compile(r"Criterion (C[QP]\d)\b")


@dataclass
class Fault:
    kind: str
    times: int = 1
    match: str | None = None
    retry_after: float | None = 1.0
    hang_s: float = 3600.0

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; one of {FAULT_KINDS}")


@dataclass
class Received:
    api: str
    model: str
    system: str
    user: str
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


def _h(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def synthesise(
    schema: dict[str, Any], seed: int, defs: dict[str, Any] | None = None, path: str = "", *, varied: bool = False
) -> Any:
    """A deterministic instance of a (pydantic-generated) JSON Schema. ``varied``: any value the schema
    allows (a random enum member, a number anywhere in range), as an API that enforces only the schema
    may return; otherwise the first enum member and a number at the low end, middle or top of its range."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return synthesise(defs[schema["$ref"].split("/")[-1]], seed, defs, path, varied=varied)
    s = _h(f"{seed}:{path}")
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"] or schema["anyOf"]
        return synthesise(options[s % len(options) if varied else 0], seed, defs, path, varied=varied)
    if "enum" in schema:
        return schema["enum"][s % len(schema["enum"])] if varied else schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    t = schema.get("type")
    if t == "object":
        props = schema.get("properties", {})
        return {k: synthesise(v, seed, defs, f"{path}.{k}", varied=varied) for k, v in props.items()}
    if t == "array":
        items = schema.get("items", {"type": "string"})
        n = 1
        if varied:
            lo_n, hi_n = int(schema.get("minItems", 0)), min(int(schema.get("maxItems", 3)), 3)
            n = lo_n + s % (max(hi_n, lo_n) - lo_n + 1)
        return [synthesise(items, seed, defs, f"{path}[{i}]", varied=varied) for i in range(n)]
    if t == "integer":
        lo, hi = int(schema.get("minimum", 0)), int(schema.get("maximum", 10))
        return lo + s % (hi - lo + 1)
    if t == "number":
        flo, fhi = float(schema.get("minimum", 0.0)), float(schema.get("maximum", 1.0))
        if varied:
            return round(flo + (s % 1001) / 1000 * (fhi - flo), 3)
        return round(flo + (s % 3) / 2 * (fhi - flo), 3)  # lo, midpoint or hi: matches 0/0.5/1 anchors
    if t == "boolean":
        return bool(s % 2)
    if t == "string":
        return f"fake {path.strip('.') or 'text'} {s % 1000}"
    return None


class FakeJudgeServer:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        schema_source: str = "prompt",
        models: set[str] | None = None,
        reject_json_schema: bool = False,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the fake judge listens on loopback only")
        if schema_source not in ("prompt", "api"):
            raise ValueError("schema_source is 'prompt' or 'api'")
        self.host = host
        self.port = port
        self.latency = latency
        self.schema_source = schema_source
        self.models = models
        #: Answer HTTP 400 to ``response_format`` json_schema, like a compatible server without it.
        self.reject_json_schema = reject_json_schema
        self.faults: list[Fault] = []
        #: Random faults: kind -> share of model calls (after the counted ``faults``), drawn from a seeded RNG.
        self.rates: dict[str, float] = {}
        self.hang_s = 3600.0
        self._rng = random.Random(0)
        self.answers: dict[str, Any] = {}
        self.requests: list[Received] = []
        self.model_calls = 0
        #: The loop serving this server when it runs :meth:`in_thread` (control calls go through it).
        self.loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None

    # -- control --------------------------------------------------------------------------------------
    def inject(
        self,
        kind: str,
        times: int = 1,
        *,
        match: str | None = None,
        retry_after: float | None = 1.0,
        hang_s: float = 3600.0,
    ) -> None:
        self.faults.append(Fault(kind, times, match, retry_after, hang_s))

    def fault_rate(self, kind: str, rate: float, *, seed: int | None = None, hang_s: float | None = None) -> None:
        """Fail this share of model calls with ``kind`` at random (reproducible with ``seed``); rates of
        several kinds add up (at most 1)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; one of {FAULT_KINDS}")
        self.rates[kind] = rate
        if sum(self.rates.values()) > 1.0:
            raise ValueError("fault rates add up to more than 1")
        if seed is not None:
            self._rng = random.Random(seed)
        if hang_s is not None:
            self.hang_s = hang_s

    def answer(self, match: str, reply: Any) -> None:
        """Reply ``reply`` (dict -> JSON, str -> verbatim) to every prompt containing ``match``; when
        several pins match, the one set last wins."""
        self.answers.pop(match, None)
        self.answers[match] = reply

    def reset(self) -> None:
        self.faults.clear()
        self.rates.clear()
        self.answers.clear()
        self.requests.clear()
        self.model_calls = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # -- lifecycle ------------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/_control/requests", self._ctl_requests)
        app.router.add_post("/_control/fault", self._ctl_fault)
        app.router.add_post("/_control/answer", self._ctl_answer)
        app.router.add_post("/_control/reset", self._ctl_reset)
        app.router.add_get("/_control/health", self._ctl_health)
        return app

    async def start(self) -> FakeJudgeServer:
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        server = getattr(site, "_server", None)
        if self.port == 0 and server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeJudgeServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @classmethod
    @contextlib.contextmanager
    def in_thread(cls, **kwargs: Any) -> Iterator[FakeJudgeServer]:
        """Serve on an event loop of its own thread: reachable from code that runs its own
        ``asyncio.run`` (``attune evaluate``) and from worker subprocesses."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="fake-judge", daemon=True)
        thread.start()
        srv = cls(**kwargs)
        srv.loop = loop
        asyncio.run_coroutine_threadsafe(srv.start(), loop).result(10)
        try:
            yield srv
        finally:
            asyncio.run_coroutine_threadsafe(srv._stop_all(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(5)
            loop.close()

    async def _stop_all(self) -> None:
        """Stop, then cancel what is still running on this loop (requests held by a ``hang`` fault): a loop
        closed with pending tasks prints "Task was destroyed but it is pending!" at exit."""
        await self.stop()
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in rest:
            t.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    # -- model APIs -----------------------------------------------------------------------------------
    def _take_fault(self, prompt: str) -> Fault | None:
        for f in self.faults:
            if f.times > 0 and (f.match is None or f.match in prompt):
                f.times -= 1
                return f
        if self.rates:
            draw, edge = self._rng.random(), 0.0
            for kind, rate in self.rates.items():
                edge += rate
                if draw < edge:
                    return Fault(kind, retry_after=0.5, hang_s=self.hang_s)
        return None

    def _reply_text(
        self, system: str, user: str, response_format: dict[str, Any] | None, api_schema: dict[str, Any] | None = None
    ) -> str:
        prompt = system + "\n" + user
        for needle, reply in reversed(self.answers.items()):  # the latest pin wins
            if needle in prompt:
                return reply if isinstance(reply, str) else json.dumps(reply)
        seed = _h(prompt)
        if self.schema_source == "api":
            if api_schema is not None:
                return json.dumps(synthesise(api_schema, seed, varied=True))
            if response_format and response_format.get("type") == "json_object":
                return json.dumps({"assessment": "supportive", "score": seed % 11})
            return f"The response seems supportive overall; I would rate it fairly well ({seed % 1000})."
        if "Format: Score: X.X" in prompt:
            return f"Score: {(seed % 11) / 10:.1f} | Reasoning: deterministic fake judgement {seed % 1000}."
        schema: dict[str, Any] | None = None
        found = _SCHEMA.findall(user)
        if found:
            schema = json.loads(found[-1])
        elif response_format and response_format.get("type") == "json_schema":
            schema = response_format.get("json_schema", {}).get("schema")
        if schema is None:
            return json.dumps({"score": seed % 11, "reason": f"deterministic fake reason {seed % 1000}"})
        return json.dumps(synthesise(schema, seed))

    async def _model_call(
        self, api: str, model: str, system: str, user: str, body: dict[str, Any], api_schema: dict[str, Any] | None
    ) -> tuple[str, Fault | None]:
        self.requests.append(Received(api, model, system, user, body))
        self.model_calls += 1
        fault = self._take_fault(system + "\n" + user)
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.hang_s)
        elif self.latency > 0:
            await asyncio.sleep(self.latency)
        if fault is not None and fault.kind == "malformed":
            return '{"answer": "YES", "reasoning": "trunc', None
        if fault is not None and fault.kind == "bad_schema":
            return json.dumps({"verdict": "MAYBE", "ignore": "the rubric"}), None
        return self._reply_text(system, user, body.get("response_format"), api_schema), fault

    @staticmethod
    def _error(fault: Fault, api: str) -> web.Response:
        status = int(fault.kind)
        headers = (
            {"retry-after": f"{fault.retry_after:g}"} if fault.kind == "429" and fault.retry_after is not None else {}
        )
        if api == "anthropic":
            body = {
                "type": "error",
                "error": {
                    "type": "rate_limit_error" if status == 429 else "api_error",
                    "message": f"injected {status}",
                },
            }
        else:
            body = {"error": {"message": f"injected {status}", "type": "fake", "code": str(status)}}
        return web.json_response(body, status=status, headers=headers)

    async def _openai(self, request: web.Request) -> web.Response:
        body = await request.json()
        msgs = body.get("messages", [])
        system = "\n".join(_content(m) for m in msgs if m.get("role") == "system")
        user = "\n".join(_content(m) for m in msgs if m.get("role") != "system")
        rf = body.get("response_format") or {}
        if self.reject_json_schema and rf.get("type") == "json_schema":
            self.requests.append(Received("openai", body.get("model", ""), "", "", body))
            return web.json_response({"error": {"message": "response_format json_schema unsupported"}}, status=400)
        api_schema = rf.get("json_schema", {}).get("schema") if rf.get("type") == "json_schema" else None
        text, fault = await self._model_call("openai", body.get("model", ""), system, user, body, api_schema)
        if fault is not None and fault.kind in ("429", "500", "503"):
            return self._error(fault, "openai")
        return web.json_response(
            {
                "id": f"chatcmpl-fake-{self.model_calls}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "logprobs": None,
                        "message": {"role": "assistant", "content": text, "refusal": None},
                    }
                ],
                "usage": {
                    "prompt_tokens": (len(system) + len(user)) // 4,
                    "completion_tokens": max(1, len(text) // 4),
                    "total_tokens": (len(system) + len(user)) // 4 + max(1, len(text) // 4),
                },
            }
        )

    async def _anthropic(self, request: web.Request) -> web.Response:
        body = await request.json()
        system = body.get("system", "")
        if isinstance(system, list):
            system = "\n".join(b.get("text", "") for b in system)
        user = "\n".join(_content(m) for m in body.get("messages", []))
        tool = _forced_tool(body)
        api_schema = tool.get("input_schema") if tool is not None else None
        text, fault = await self._model_call("anthropic", body.get("model", ""), system, user, body, api_schema)
        if fault is not None and fault.kind in ("429", "500", "503"):
            return self._error(fault, "anthropic")
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        stop = "end_turn"
        if tool is not None:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):  # tool input is an object; anything else stays text (a broken reply)
                tid = f"toolu_fake_{self.model_calls}"
                content = [{"type": "tool_use", "id": tid, "name": tool["name"], "input": parsed}]
                stop = "tool_use"
        return web.json_response(
            {
                "id": f"msg_fake_{self.model_calls}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", ""),
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": (len(system) + len(user)) // 4, "output_tokens": max(1, len(text) // 4)},
            }
        )

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        inputs = body.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else inputs
        self.requests.append(Received("embeddings", body.get("model", ""), "", "\n".join(inputs), body))
        data = []
        for i, text in enumerate(inputs):
            words = set(re.findall(r"[a-z]+", text.lower()))
            vec = [float(sum(_h(w) % 7 == d for w in words)) for d in range(7)] + [1.0]  # bag-of-words-ish
            data.append({"object": "embedding", "index": i, "embedding": vec})
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", ""),
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    async def _models(self, request: web.Request) -> web.Response:
        if self.models is None:
            return web.json_response({"error": {"message": "no models endpoint", "type": "not_found"}}, status=404)
        ids = sorted(self.models)
        if "anthropic-version" in request.headers:
            data = [{"type": "model", "id": i, "display_name": i, "created_at": "2025-01-01T00:00:00Z"} for i in ids]
            first, last = (ids[0], ids[-1]) if ids else (None, None)
            return web.json_response({"data": data, "has_more": False, "first_id": first, "last_id": last})
        return web.json_response(
            {"object": "list", "data": [{"id": i, "object": "model", "created": 0, "owned_by": "fake"} for i in ids]}
        )

    # -- control endpoints (for a server in another process) -----------------------------------------
    async def _ctl_requests(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "model_calls": self.model_calls,
                "requests": [
                    {"api": r.api, "model": r.model, "system": r.system, "user": r.user} for r in self.requests
                ]
                if request.query.get("full")
                else len(self.requests),
            }
        )

    async def _ctl_fault(self, request: web.Request) -> web.Response:
        self.inject(**(await request.json()))
        return web.json_response({"ok": True})

    async def _ctl_answer(self, request: web.Request) -> web.Response:
        data = await request.json()
        self.answer(data["match"], data["reply"])
        return web.json_response({"ok": True})

    async def _ctl_reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"ok": True})

    async def _ctl_health(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "model_calls": self.model_calls})


def _forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The tool an Anthropic request forces (``tool_choice={"type": "tool", "name": ...}``), if any."""
    choice = body.get("tool_choice") or {}
    if choice.get("type") != "tool":
        return None
    return next((t for t in body.get("tools", []) if t.get("name") == choice.get("name")), None)


def _content(message: dict[str, Any]) -> str:
    c = message.get("content", "")
    if isinstance(c, list):
        return "\n".join(part.get("text", "") for part in c if isinstance(part, dict))
    return str(c)


async def _serve(host: str, port: int, latency: float, duration: float | None, schema_source: str = "prompt") -> None:
    server = await FakeJudgeServer(host=host, port=port, latency=latency, schema_source=schema_source).start()
    print(f"fake judge listening on {server.url} (latency {latency:g}s)", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=duration)
    await server.stop()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m attune.testing.fake_judge", description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--latency", type=float, default=0.0, help="seconds added to every model call")
    p.add_argument("--duration", type=float, default=None, help="stop by itself after this many seconds")
    p.add_argument(
        "--schema-source",
        choices=("prompt", "api"),
        default="prompt",
        help="answer from the schema in the prompt (default) or only from the one sent through the API",
    )
    args = p.parse_args(argv)
    asyncio.run(_serve(args.host, args.port, args.latency, args.duration, args.schema_source))


if __name__ == "__main__":
    main()
