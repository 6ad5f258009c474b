"""Judges against a server that honours only the API schema, with and without faults (issue #13, must-show).

The fake judge (``attune.testing.fake_judge``) runs with ``schema_source="api"``: like OpenAI structured
outputs and Anthropic forced tool use, it answers only from the schema sent through the API, with any value
that schema allows, whatever the prompt says. For each provider flavour (OpenAI, Anthropic) and each fault
mix, a fixed workload runs through :class:`scorers.judges.JudgeTier`: per conversation the seed-000 turn
rubric on every assistant reply and the seed-001 checklist (one call per criterion). Measured per scenario:
answers, ERRORs (rate and each ERROR's cause class: an ERROR without a recognised cause fails the run),
wall time against the bound (``deadline_s`` per answer), and model calls.

Scenarios: no faults; 10% each of 429, 500, malformed and hang (40% of calls fail once); 20% hang. Faults
are drawn per model call from a seeded RNG, so a run is reproducible.

    .venv/bin/python bench/judge_faults.py [--conversations 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from attune.testing.fake_judge import FakeJudgeServer
from schemas import Message
from scorers import Exchange
from scorers.judges import JudgeConfig, JudgeTier, ProviderConfig, error_cause
from scorers.judges._config import DEFAULT_PROVIDERS

SCENARIOS: dict[str, dict[str, float]] = {
    "none": {},
    "10% each of 429/500/malformed/hang": {"429": 0.1, "500": 0.1, "malformed": 0.1, "hang": 0.1},
    "20% hang": {"hang": 0.2},
}
TURNS = [
    ("I've been feeling low on energy lately.", "With little sleep, tiredness makes sense. Try a fixed bedtime."),
    ("My sister stopped calling me.", "That silence sounds painful. What do you think changed?"),
    ("i cant focus at work", "That's frustrating. When did it start?"),
]


def config(srv: FakeJudgeServer, kind: str, timeout_s: float, deadline_s: float) -> JudgeConfig:
    pc = ProviderConfig(
        kind=kind,  # type: ignore[arg-type]
        base_url=srv.anthropic_base_url if kind == "anthropic" else srv.openai_base_url,
        api_key_env="FAKE_JUDGE_KEY",
        timeout_s=timeout_s,
        max_retries=3,
        max_concurrency=32,
    )
    return JudgeConfig.model_validate(
        {
            "providers": {**DEFAULT_PROVIDERS, "fake": pc},
            "override": "fake:judge-1",
            "deadline_s": deadline_s,
            "backoff_base_s": 0.05,
            "backoff_max_s": 0.5,
            "cache": {"enabled": False},
            "prices": {"fake:judge-1": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}},
        }
    )


async def scenario(kind: str, rates: dict[str, float], n_conv: int, timeout_s: float, deadline_s: float) -> dict:
    async with FakeJudgeServer(schema_source="api") as srv:
        for fault, rate in rates.items():
            srv.fault_rate(fault, rate, seed=13, hang_s=60.0)
        cfg = config(srv, kind, timeout_s, deadline_s)
        answers: list[tuple[str, str | None]] = []  # (what, error)
        t0 = time.monotonic()
        async with JudgeTier(cfg) as tier:

            async def conversation(i: int) -> None:
                msgs: list[Message] = []
                jobs = []
                for k, (user, reply) in enumerate(TURNS):
                    ex = Exchange(f"c{i}", 2 * k + 1, f"{user} ({i})", reply, history=tuple(msgs))
                    jobs.append(tier.judge_turn(ex, ["turn_rubric"]))
                    msgs += [Message(role="user", text=f"{user} ({i})"), Message(role="assistant", text=reply)]
                turns = await asyncio.gather(*jobs)
                score = await tier.judge_conversation(f"c{i}", msgs)
                for recs in turns:
                    answers.extend((r.metric, r.error) for r in recs)
                answers.extend(
                    (c, a.error if a.answer == "ERROR" else None)
                    for c, a in score.answers.items()
                    if not (a.answer == "NA" and a.reasoning.startswith("seed 001:"))
                )

            await asyncio.gather(*(conversation(i) for i in range(n_conv)))
            stats = tier.stats
        wall = time.monotonic() - t0
    errors = [e for _, e in answers if e]
    causes: dict[str, int] = {}
    for e in errors:
        causes[error_cause(e)] = causes.get(error_cause(e), 0) + 1
    return {
        "provider": kind,
        "faults": rates,
        "answers": len(answers),
        "errors": len(errors),
        "error_rate": round(len(errors) / len(answers), 4),
        "causes": causes,
        "unnamed_errors": causes.get("other", 0),
        "wall_s": round(wall, 2),
        "bound_s": deadline_s * (len(TURNS) + 1),  # a conversation's turns, then its checklist, each bounded
        "model_calls": srv.model_calls,
        "retries": stats.retries,
        "breaker_rejections": stats.breaker_rejections,
        "invalid_replies": stats.invalid_replies,
    }


async def main_async(args: argparse.Namespace) -> list[dict]:
    out = []
    for kind in ("openai", "anthropic"):
        for name, rates in SCENARIOS.items():
            r = await scenario(kind, rates, args.conversations, args.timeout, args.deadline)
            r["scenario"] = name
            out.append(r)
            print(
                f"{kind:9s} {name:36s} answers {r['answers']:4d}  ERROR {r['errors']:3d} ({r['error_rate']:.1%})  "
                f"causes {r['causes']}  wall {r['wall_s']:.1f}s (bound {r['bound_s']:.0f}s)  "
                f"calls {r['model_calls']} retries {r['retries']} breaker-rejected {r['breaker_rejections']}",
                flush=True,
            )
    return out


def main() -> None:
    import os

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--conversations", type=int, default=10)
    p.add_argument("--timeout", type=float, default=1.0, help="per-call timeout (a hang costs this much)")
    p.add_argument(
        "--deadline",
        type=float,
        default=JudgeConfig().deadline_s,
        help="bound on one answer, retries and breaker waits included (default: as shipped)",
    )
    p.add_argument("--json", default=None)
    args = p.parse_args()
    os.environ.setdefault("FAKE_JUDGE_KEY", "sk-fake")
    results = asyncio.run(main_async(args))
    failed = [
        r
        for r in results
        if r["unnamed_errors"]
        or r["wall_s"] > r["bound_s"]
        or (not r["faults"] and r["errors"])
        or (r["faults"] == {"hang": 0.2} and r["error_rate"] > 0.25)
    ]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    print("targets:", "met" if not failed else f"MISSED in {[(r['provider'], r['scenario']) for r in failed]}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
