"""Cheap-tier throughput, single process: turns/s through the same Evaluator the stream calls.

Usage: .venv/bin/python bench/cheap_tier_bench.py [--seconds 5]

Corpus: the real seeker/response texts of ../shared/data/empathy-ratings (EPITOME Reddit posts and
EmpatheticDialogues exchanges) when present, else the bundled stream samples. Every user text goes through
``on_user_turn`` (crisis + dependency detection) and every response through ``on_assistant_turn`` (seed 004
heuristics, empathy signal, edge cases, harmful-pattern detection); conversations are closed with the
heuristic checklist. Prints turns/s for each stage and for the whole per-turn path. Every text-level
cache is emptied before each pass over the corpus, and pairs repeating a seeker or response text already
in the corpus are dropped (the ratings data rates the same texts several times), so no turn profits from
having seen its text before: the figures are what new live text costs.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schemas import Message  # noqa: E402
from scorers import Evaluator, exchange_for  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "empathy-ratings" / "original_data"


def corpus() -> list[tuple[str, str]]:
    """The rated data's seeker/response pairs; no data, no figures (a small stand-in corpus would give
    figures that look like these and mean something else)."""
    ep = DATA / "sample_epitome.csv"
    ed = DATA / "sample_empatheticdialogues.csv"
    if not (ep.exists() and ed.exists()):
        raise SystemExit(f"rating data not found at {DATA} (expected ../shared/data beside the checkout)")
    pairs: list[tuple[str, str]] = []
    with ep.open(encoding="utf-8") as fh:
        pairs += [(r["seeker_post"], r["response_post"]) for r in csv.DictReader(fh)]
    with ed.open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            lines = [ln.strip() for ln in r["full_conversation"].splitlines() if ln.strip()]
            seeker = " ".join(ln.split(":", 1)[1] for ln in lines if ln.startswith("Seeker:"))
            sup = [ln.split(":", 1)[1] for ln in lines if ln.startswith("Supporter:")]
            if sup:
                pairs.append((seeker.replace("_comma_", ","), sup[-1].replace("_comma_", ",")))
    seen: set[str] = set()
    unique = []
    for u, a in pairs:
        if u not in seen and a not in seen:
            unique.append((u, a))
        seen.update((u, a))
    return unique


_CACHES: list[Any] = []


def clear_caches() -> None:
    """Empty every lru_cache in the scorers, so each pass costs what new live text would (no warm hits).

    The caches are found once, at the first call (call it after the scorers under test are imported):
    walking ``sys.modules`` costs ~0.18 ms, emptying the caches found a few µs.
    """
    if not _CACHES:
        for name, mod in list(sys.modules.items()):
            if name.startswith("scorers") and mod is not None:
                _CACHES.extend(obj for obj in vars(mod).values() if callable(getattr(obj, "cache_clear", None)))
    for cache in _CACHES:
        cache.cache_clear()


def run(seconds: float) -> dict[str, float]:
    ev = Evaluator()
    pairs = corpus()
    words = sum(len(u.split()) + len(a.split()) for u, a in pairs) / (2 * len(pairs))
    print(f"corpus: {len(pairs)} user/assistant pairs, mean {words:.0f} words per turn")

    def timed(label: str, fn) -> float:
        n = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            clear_caches()
            for u, a in pairs:
                fn(u, a)
            n += len(pairs)
        rate = n / (time.perf_counter() - t0)
        print(f"{label:<44} {rate:>10,.0f} /s")
        return rate

    def user(u: str, a: str) -> None:
        ev.on_user_turn("c", 0, u)

    def assistant(u: str, a: str) -> None:
        ex = exchange_for("c", 1, a, [(0, Message(role="user", text=u))], None)
        ev.on_assistant_turn(ex, answers_crisis_turn=None)

    def both(u: str, a: str) -> None:
        user(u, a)
        assistant(u, a)

    r_user = timed("user turns (crisis + dependency)", user)
    r_asst = timed("assistant turns (heuristics, empathy, edges)", assistant)
    r_pair = timed("user+assistant pairs", both)
    turns_per_s = 2 * r_pair

    conv = [
        Message(role=role, text=text, turn_index=2 * i + j)
        for i, (u, a) in enumerate(pairs[:10])
        for j, (role, text) in enumerate((("user", u), ("assistant", a)))
    ]
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        clear_caches()
        ev.on_close("c", conv, None, "batch")
        n += 1
    r_close = n / (time.perf_counter() - t0)
    print(f"{'checklist close (20-turn conversation)':<44} {r_close:>10,.0f} /s")
    # As in the stream: the close comes right after its turns were scored, so their text caches are warm.
    n, spent = 0, 0.0
    while spent < seconds:
        clear_caches()
        for u, a in zip(conv[::2], conv[1::2], strict=True):
            both(u.text, a.text)
        t1 = time.perf_counter()
        ev.on_close("c", conv, None, "batch")
        spent += time.perf_counter() - t1
        n += 1
    r_close_warm = n / spent
    print(f"{'  the same, after its 20 turns were scored':<44} {r_close_warm:>10,.0f} /s")
    print(f"\nper-turn path: {turns_per_s:,.0f} turns/s (mean of user and assistant turns), single process")
    return {"user": r_user, "assistant": r_asst, "turns": turns_per_s, "close20": r_close, "close20_warm": r_close_warm}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=3.0, help="time per stage")
    run(p.parse_args().seconds)


if __name__ == "__main__":
    main()
