"""How well do the cheap empathy signals agree with expert raters on real support conversations?

Data: /work/shared/data/empathy-ratings (Kumar et al. 2025, MIT). Two 50-item samples:

* EPITOME: a Reddit seeker post and one peer response, levels 0-2 on emotional reactions,
  interpretations and explorations (targets: the sum of the three, and each level);
* EmpatheticDialogues (ED): a short Seeker/Supporter exchange rated 1-5 for empathy.

Each item becomes an :class:`Exchange` whose response is the last supporter turn. Scored by
``empathy_signal`` (ours), seed 004's literal ``emotional_intelligence`` (``scorers.voice.raw``) and,
as a reference, the LLM raters and the crowd; target: the mean of expert1..3. Items are split into two
halves by a hash of their id; weights were tuned on half A only, so half B is the honest number.

    .venv/bin/python bench/empathy_agreement.py [--data DIR] [--markdown]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cheap_tier_bench import clear_caches  # this folder is on sys.path when the script runs
from scipy.stats import spearmanr

from attune.calibration import half_of
from schemas import Message, TurnContext
from scorers._base import Exchange
from scorers.empathy import empathy_signal
from scorers.voice import raw, score_voice

DEFAULT_DATA = Path("/work/shared/data/empathy-ratings")
EXPERTS = ("expert1", "expert2", "expert3")
REFERENCE_RATERS = ("crowd", "gpt", "claude", "gemini")
EPITOME_LEVELS = ("level_emotional_reactions", "level_interpretations", "level_explorations")
TEXT_CONTEXT = TurnContext(channel="text")


@dataclass
class Item:
    """One rated exchange: the Exchange we score plus every rater's value per target."""

    dataset: str
    item_id: str
    exchange: Exchange
    supporter_turns: list[Exchange]
    ratings: dict[str, dict[str, float]] = field(default_factory=dict)  # rater -> target -> value

    @property
    def half(self) -> str:
        return half_of(self.item_id)


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _ratings(path: Path, key: str, columns: Sequence[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for row in _read(path):
        vals = {c: float(row[c]) for c in columns if row.get(c, "").strip()}
        if len(vals) == len(columns):
            out[row[key]] = vals
    return out


def load_epitome(root: Path) -> list[Item]:
    items: list[Item] = []
    for row in _read(root / "original_data" / "sample_epitome.csv"):
        user = Message(role="user", text=row["seeker_post"], turn_index=0)
        ex = Exchange(row["sp_id"], 1, row["seeker_post"], row["response_post"], (user,), TEXT_CONTEXT)
        items.append(Item("epitome", row["sp_id"], ex, [ex]))
    by_id = {it.item_id: it for it in items}
    for rater in (*EXPERTS, *REFERENCE_RATERS):
        for sp_id, vals in _ratings(
            root / "annotations" / "epitome" / f"{rater}_ratings.csv", "sp_id", EPITOME_LEVELS
        ).items():
            if sp_id in by_id:
                vals["epitome_sum"] = sum(vals[c] for c in EPITOME_LEVELS)
                by_id[sp_id].ratings[rater] = vals
    return items


def parse_dialogue(conv_id: str, full: str) -> tuple[Exchange, list[Exchange]]:
    """Seeker/Supporter lines -> (exchange for the last supporter turn, exchanges for every supporter turn)."""
    msgs: list[Message] = []
    for line in full.replace("_comma_", ",").splitlines():
        line = line.strip()
        for prefix, role in (("Seeker:", "user"), ("Supporter:", "assistant")):
            if line.startswith(prefix):
                msgs.append(Message(role=role, text=line[len(prefix) :].strip(), turn_index=len(msgs)))
    exchanges = []
    for i, m in enumerate(msgs):
        if m.role == "assistant":
            user = next((p.text for p in reversed(msgs[:i]) if p.role == "user"), "")
            exchanges.append(Exchange(conv_id, i, user, m.text, tuple(msgs[:i]), TEXT_CONTEXT))
    if not exchanges:
        raise ValueError(f"{conv_id}: no supporter turn")
    return exchanges[-1], exchanges


def load_ed(root: Path) -> list[Item]:
    seen: dict[str, Item] = {}
    for row in _read(root / "original_data" / "sample_empatheticdialogues.csv"):
        if row["conv_id"] not in seen:
            last, all_turns = parse_dialogue(row["conv_id"], row["full_conversation"])
            seen[row["conv_id"]] = Item("ed", row["conv_id"], last, all_turns)
    for rater in (*EXPERTS, *REFERENCE_RATERS):
        for cid, vals in _ratings(
            root / "annotations" / "empatheticdialogues" / f"{rater}_ratings.csv", "conv_id", ("empathy",)
        ).items():
            if cid in seen:
                seen[cid].ratings[rater] = vals
    return list(seen.values())


def expert_mean(item: Item, target: str) -> float | None:
    vals = [item.ratings[e][target] for e in EXPERTS if e in item.ratings]
    return statistics.fmean(vals) if vals else None


Scorer = Callable[[Item], float | None]


def scorers_for(target: str) -> dict[str, Scorer]:
    def ours(it: Item) -> float:
        return empathy_signal(it.exchange)

    def ours_all_turns(it: Item) -> float:
        return statistics.fmean(empathy_signal(e) for e in it.supporter_turns)

    def seed_ei(it: Item) -> float:
        return raw.emotional_intelligence(it.exchange.response, it.exchange.user_text)

    def seed_overall(it: Item) -> float:
        return raw.score_all(it.exchange.response, it.exchange.user_text)["overall_quality"]

    def rater(name: str) -> Scorer:
        return lambda it: it.ratings.get(name, {}).get(target)

    out: dict[str, Scorer] = {
        "empathy_signal": ours,
        "empathy_signal (mean of supporter turns)": ours_all_turns,
        "seed004 raw emotional_intelligence": seed_ei,
        "seed004 raw overall_quality": seed_overall,
    }
    out.update({f"{r} (reference)": rater(r) for r in REFERENCE_RATERS})
    return out


def rho(items: list[Item], target: str, scorer: Scorer) -> tuple[float | str, int]:
    """Spearman rho vs the expert mean, or why it is undefined ("too few", "constant <value>")."""
    pairs = [(s, t) for it in items if (t := expert_mean(it, target)) is not None and (s := scorer(it)) is not None]
    if len(pairs) < 5:
        return "too few", len(pairs)
    xs, ys = zip(*pairs, strict=True)
    if len(set(xs)) < 2:
        return f"constant {xs[0]:g}", len(pairs)  # Spearman is undefined for a constant scorer
    return float(spearmanr(xs, ys).statistic), len(pairs)


def agreement_rows(datasets: dict[str, list[Item]]) -> list[tuple[str, str, str, list[str]]]:
    targets = {"epitome": ["epitome_sum", *EPITOME_LEVELS], "ed": ["empathy"]}
    rows = []
    for ds, items in datasets.items():
        halves = {"A": [i for i in items if i.half == "A"], "B": [i for i in items if i.half == "B"], "all": items}
        for target in targets[ds]:
            for name, scorer in scorers_for(target).items():
                if ds == "epitome" and "supporter turns" in name:
                    continue  # one supporter turn per EPITOME item: identical to empathy_signal
                cells = []
                for part in ("A", "B", "all"):
                    r, n = rho(halves[part], target, scorer)
                    cells.append(f"{r} (n={n})" if isinstance(r, str) else f"{r:+.2f} (n={n})")
                rows.append((ds, target, name, cells))
    return rows


def _rate(exchanges: list[Exchange], fns: Sequence[Callable[[Exchange], object]], seconds: float) -> float:
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        clear_caches()
        for ex in exchanges:
            for fn in fns:
                fn(ex)
        calls += len(exchanges)
    return calls / elapsed


def throughput(items: list[Item], seconds: float = 2.0) -> dict[str, float]:
    """Exchanges/s, caches cleared before each pass over the data set (cold, like new live replies)."""
    exchanges = [e for it in items for e in it.supporter_turns]
    return {
        "score_voice + empathy_signal": _rate(exchanges, (score_voice, empathy_signal), seconds),
        "score_voice": _rate(exchanges, (score_voice,), seconds),
        "empathy_signal": _rate(exchanges, (empathy_signal,), seconds),
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--seconds", type=float, default=2.0, help="duration of each throughput run")
    args = ap.parse_args(argv)
    datasets = {"epitome": load_epitome(args.data), "ed": load_ed(args.data)}
    for ds, items in datasets.items():
        a = sum(i.half == "A" for i in items)
        print(f"{ds}: {len(items)} items (half A {a}, half B {len(items) - a})")
    print()
    print("Spearman rho vs the mean of expert1..3 (half A = tuning half, half B = held out)\n")
    print("| dataset | target | scorer | half A | half B | all |")
    print("|---|---|---|---|---|---|")
    for ds, target, name, cells in agreement_rows(datasets):
        print(f"| {ds} | {target} | {name} | {' | '.join(cells)} |")
    print()
    for name, rate in throughput(datasets["epitome"] + datasets["ed"], args.seconds).items():
        print(f"throughput {name}: {rate:,.0f} calls/s")


if __name__ == "__main__":
    main()
