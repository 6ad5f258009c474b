"""Judge-tier throughput: N conversations x 12 checklist calls against the fake judge at 200 ms.

Measures attune's achieved calls/s against the concurrency bound C / latency (target >= 0.9 of it),
then DeepEval evaluating the same 12 x N criterion calls (one GEval metric per seed-001 criterion, with
the criterion text as its evaluation step, through ``LocalModel`` pointed at the same fake server) at
the same concurrency. DeepEval's concurrency knob counts test cases, each running its 12 metrics at
once, so "same concurrency" means ``max_concurrent = C // 12`` test cases (C calls in flight); a second
DeepEval run with ``max_concurrent = C`` (12 x C calls allowed) is reported too.

The fake judge runs in its own process (``python -m attune.testing.fake_judge``), so the client
under test does not share an event loop with it. DeepEval runs in its own interpreter
(``--deepeval-python``; default: this one) because installing it changes pytest plugins and rich in
the project venv.

    .venv/bin/python bench/judge_bench.py --conversations 200 --concurrency 50 \
        --deepeval-python /path/to/venv-with-deepeval/bin/python
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LATENCY = 0.2

_USER = [
    "I've been feeling really overwhelmed at work. My boss keeps piling on projects.",
    "Honestly, it's the lack of control. I can't say no.",
    "Yeah, I've always struggled with that.",
    "Fear, I guess. Fear of disappointing people.",
    "It does. I never thought of it as risky before.",
    "My sister says I'm a pushover and it stings.",
    "Sometimes I lie awake replaying conversations.",
    "I tried saying no once and felt guilty all week.",
    "Maybe I could start with something small.",
    "Thanks, this helped more than I expected.",
]
_ASSISTANT = [
    "That sounds exhausting. What feels most overwhelming right now?",
    "The feeling of having no say is really frustrating. Boundaries have been hard to set there.",
    "Patterns like that often go way back. When you imagine saying no, what comes up?",
    "That fear of disappointing others runs deep for a lot of people. Saying no feels risky.",
    "Naming what's underneath can help. What would a small, manageable place to start be?",
    "Hearing that from your sister hurts. What do you make of her comment?",
    "Replaying conversations at night is draining. What usually goes through your mind?",
    "Guilt after a first no is common; it often fades as the new pattern settles.",
    "Small steps count. Which request this week could you practise on?",
    "I'm glad. You did real thinking here today.",
]


def conversations(n: int) -> list[list[dict[str, str]]]:
    """N distinct 10-turn conversations (distinct so no call is a cache hit)."""
    out = []
    for i in range(n):
        msgs: list[dict[str, str]] = []
        for t in range(10):
            msgs.append({"role": "user", "text": f"{_USER[(t + i) % 10]} (session {i})"})
            msgs.append({"role": "assistant", "text": _ASSISTANT[(t + i) % 10]})
        out.append(msgs)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_fake(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "attune.testing.fake_judge",
            "--port",
            str(port),
            "--latency",
            str(LATENCY),
            "--duration",
            "3600",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_control/health", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("fake judge did not start")


def control(port: int, path: str, method: str = "GET") -> dict[str, Any]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method, data=b"{}" if method == "POST" else None
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


async def run_attune(port: int, convs: list[list[dict[str, str]]], concurrency: int) -> dict[str, Any]:
    from schemas import Message
    from scorers.judges import JudgeConfig, JudgeTier, ProviderConfig
    from scorers.judges._config import DEFAULT_PROVIDERS

    os.environ.setdefault("BENCH_FAKE_KEY", "unused")
    cfg = JudgeConfig(
        providers={
            **DEFAULT_PROVIDERS,
            "fake": ProviderConfig(
                kind="openai_compatible", base_url=f"http://127.0.0.1:{port}/v1", max_concurrency=concurrency
            ),
        },
        override="fake:bench-judge",
        max_concurrency=concurrency,
    )
    msgs = [[Message(role=m["role"], text=m["text"]) for m in c] for c in convs]  # type: ignore[arg-type]
    async with JudgeTier(cfg) as tier:
        t0 = time.perf_counter()
        recs = await asyncio.gather(*(tier.judge_conversation(f"bench-{i}", m) for i, m in enumerate(msgs)))
        wall = time.perf_counter() - t0
        t1 = time.perf_counter()
        again = await asyncio.gather(*(tier.judge_conversation(f"bench-{i}", m) for i, m in enumerate(msgs)))
        replay = time.perf_counter() - t1
        stats = tier.stats
    errors = sum(a.answer == "ERROR" for r in recs for a in r.answers.values())
    calls = stats.requests
    return {
        "wall_s": wall,
        "calls": calls,
        "errors": errors,
        "calls_per_s": calls / wall,
        "cached_replay_s": replay,
        "cached_replay_calls": sum(r.usage.calls for r in again),
    }


def deepeval_worker(data_path: str, base_url: str, max_concurrent: int) -> None:
    """Runs inside the DeepEval interpreter: 12 GEval metrics (one per criterion) x N test cases."""
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    os.environ.setdefault("ERROR_REPORTING", "NO")
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import GEval
    from deepeval.models import LocalModel
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams

    data = json.loads(Path(data_path).read_text())
    model = LocalModel(model="bench-judge", base_url=base_url, api_key="unused", temperature=0)
    metrics = [
        GEval(
            name=c["id"],
            evaluation_steps=[f"{c['title']}. Checks for: {c['checks_for']}"],
            evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT],
            model=model,
            async_mode=True,
            verbose_mode=False,
        )
        for c in data["criteria"]
    ]
    cases = [
        LLMTestCase(
            input="\n".join(f"{m['role']}: {m['text']}" for m in conv[:-1]),
            actual_output=conv[-1]["text"],
        )
        for conv in data["conversations"]
    ]
    t0 = time.perf_counter()
    result = evaluate(
        cases,
        metrics,
        async_config=AsyncConfig(run_async=True, max_concurrent=max_concurrent),
        display_config=DisplayConfig(show_indicator=False, print_results=False, verbose_mode=False),
        cache_config=CacheConfig(write_cache=False, use_cache=False),
        error_config=ErrorConfig(ignore_errors=True),
    )
    wall = time.perf_counter() - t0
    scored = sum(1 for tr in result.test_results for md in (tr.metrics_data or []) if md.score is not None)
    print(json.dumps({"wall_s": wall, "scored": scored}))


def run_deepeval(python: str, port: int, convs: list[Any], criteria: list[Any], max_concurrent: int) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"conversations": convs, "criteria": criteria}, fh)
    control(port, "/_control/reset", "POST")
    with tempfile.TemporaryDirectory() as cwd:  # DeepEval writes .deepeval/ files into the cwd
        proc = subprocess.run(
            [
                python,
                str(Path(__file__).resolve()),
                "--worker",
                fh.name,
                "--base-url",
                f"http://127.0.0.1:{port}/v1",
                "--concurrency",
                str(max_concurrent),
            ],
            capture_output=True,
            text=True,
            timeout=3000,
            cwd=cwd,
        )
    os.unlink(fh.name)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["failed"]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["calls"] = control(port, "/_control/health")["model_calls"]
    out["calls_per_s"] = out["calls"] / out["wall_s"]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--conversations", type=int, default=200)
    p.add_argument("--concurrency", type=int, nargs="+", default=[50])
    p.add_argument("--deepeval-python", default=os.environ.get("ATTUNE_DEEPEVAL_PYTHON", sys.executable))
    p.add_argument("--skip-deepeval", action="store_true")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--base-url", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        deepeval_worker(args.worker, args.base_url, args.concurrency[0])
        return

    sys.path.insert(0, str(ROOT))
    from scorers.checklist import CRITERIA_SPEC

    convs = conversations(args.conversations)
    criteria = [{"id": c.id, "title": c.title, "checks_for": c.checks_for} for c in CRITERIA_SPEC]
    port = free_port()
    server = start_fake(port)
    try:
        for c in args.concurrency:
            control(port, "/_control/reset", "POST")
            a = asyncio.run(run_attune(port, convs, c))
            bound = c / LATENCY
            print(
                f"attune   C={c:<4} calls={a['calls']:<5} errors={a['errors']} wall={a['wall_s']:.2f}s "
                f"calls/s={a['calls_per_s']:.1f} bound={bound:.0f} ratio={a['calls_per_s'] / bound:.3f} "
                f"cached-replay={a['cached_replay_s']:.3f}s ({a['cached_replay_calls']} calls)",
                flush=True,
            )
            if args.skip_deepeval:
                continue
            for mc, label in ((max(1, c // 12), "same calls in flight"), (c, "max_concurrent=C")):
                d = run_deepeval(args.deepeval_python, port, convs, criteria, mc)
                if "error" in d:
                    print(f"deepeval C={c:<4} max_concurrent={mc}: FAILED {d['error']}", flush=True)
                    continue
                speedup = d["wall_s"] / a["wall_s"]
                print(
                    f"deepeval C={c:<4} max_concurrent={mc:<4} ({label}) calls={d['calls']:<5} scored={d['scored']} "
                    f"wall={d['wall_s']:.2f}s calls/s={d['calls_per_s']:.1f}  attune faster x{speedup:.2f}",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
