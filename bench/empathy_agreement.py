"""How well do the empathy signals agree with expert raters on real support conversations?

Data: ../shared/data/empathy-ratings beside the checkout (Kumar et al. 2025, MIT; ``--data`` to move it).
Two 50-item samples:

* EPITOME: a Reddit seeker post and one peer response, levels 0-2 on emotional reactions,
  interpretations and explorations (targets: the sum of the three, and each level);
* EmpatheticDialogues (ED): a short Seeker/Supporter exchange rated 1-5 for empathy.

Each item becomes an :class:`Exchange` whose response is the last supporter turn. Scored by
``empathy_signal`` (ours), seed 004's literal ``emotional_intelligence`` (``scorers.voice.raw``) and,
as a reference, the LLM raters and the crowd; target: the mean of expert1..3. Items are split into two
halves by a hash of their id; the lexicon's weights were tuned on half A only, so half B is its honest number.

The learned signal (``scorers.empathy_model``, issue #16) never saw any of these items in training or model
selection, so it is reported on every item, with 95% bootstrap intervals, next to the lexicon, length alone,
the crowd and the LLM raters, all in one run (``--no-model`` skips it where the embeddings extra is missing).

    .venv/bin/python bench/empathy_agreement.py [--data DIR] [--no-model]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from cheap_tier_bench import clear_caches  # this folder is on sys.path when the script runs
from scipy.stats import rankdata, spearmanr

from attune.calibration import half_of
from attune.calibration._intervals import Interval, bootstrap
from schemas import Conversation, Message, TurnContext
from scorers._base import Exchange
from scorers.empathy import empathy_signal
from scorers.voice import raw, score_voice

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "empathy-ratings"
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


# -- every item, with intervals: the learned signal next to its baselines ------------------------------


def learned_scores(datasets: dict[str, list[Item]]) -> dict[tuple[str, str], dict[str, float]]:
    """The learned model's readings per item, through the stream stage's own code (ModelStage).

    EPITOME: the one reply, read with the seeker post. ED: every supporter turn, each read with the seeker
    turn before it; ``mean`` (the conversation-level reading, declared before any figure was seen: the
    experts rated the whole exchange) and ``last``. Components: the three mechanism heads, 0-2.
    """
    from scorers.empathy_model import COMPONENTS, EmpathyModel, ModelStage, conversation_inputs

    stage = ModelStage(EmpathyModel.load())
    out: dict[tuple[str, str], dict[str, float]] = {}
    for ds, items in datasets.items():
        convs = []
        for it in items:
            ex = it.exchange
            msgs = [*ex.history, Message(role="assistant", text=ex.response, turn_index=len(ex.history))]
            msgs = [Message(role=m.role, text=m.text, turn_index=i) for i, m in enumerate(msgs)]
            convs.append(Conversation(conversation_id=it.item_id, turns=msgs))
        records = stage.score(conversation_inputs(stage, convs))
        by_conv: dict[str, list] = {}
        for r in records:
            by_conv.setdefault(r.conversation_id, []).append(r)
        for it in items:
            recs = sorted(by_conv[it.item_id], key=lambda r: r.turn_index)
            vals = {"mean": statistics.fmean(r.empathy for r in recs), "last": recs[-1].empathy}
            for c in COMPONENTS:
                vals[c] = recs[-1].components[c]
            vals["components_sum"] = sum(recs[-1].components[c] for c in COMPONENTS)
            out[(ds, it.item_id)] = vals
    return out


def spearman_interval(xs: Sequence[float], ys: Sequence[float]) -> Interval | None:
    """95% bootstrap interval of Spearman's rho (items resampled; ranks with ties averaged per resample)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)

    def stat(idx: np.ndarray) -> np.ndarray:
        rx = rankdata(x[idx], axis=1)
        ry = rankdata(y[idx], axis=1)
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        den = np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, (rx * ry).sum(axis=1) / den, np.nan)

    return bootstrap(len(x), stat)


#: EPITOME mechanism level -> the model's component head.
_COMPONENT_OF = dict(zip(EPITOME_LEVELS, ("emotional_reaction", "interpretation", "exploration"), strict=True))


def interval_rows(
    datasets: dict[str, list[Item]], learned: dict[tuple[str, str], dict[str, float]] | None
) -> list[tuple[str, str, str, str]]:
    """(dataset, target, scorer, "rho [low, high] (n)") on every item."""
    rows = []
    targets = {"epitome": ["epitome_sum", *EPITOME_LEVELS], "ed": ["empathy"]}
    for ds, items in datasets.items():
        for target in targets[ds]:
            cands: dict[str, Scorer] = {}
            if learned is not None:
                if target == "epitome_sum":
                    cands["learned model: empathy"] = lambda it, ds=ds: learned[(ds, it.item_id)]["last"]
                    cands["learned model: sum of components"] = lambda it, ds=ds: learned[(ds, it.item_id)][
                        "components_sum"
                    ]
                elif target in _COMPONENT_OF:
                    comp = _COMPONENT_OF[target]
                    cands[f"learned model: {comp}"] = lambda it, ds=ds, c=comp: learned[(ds, it.item_id)][c]
                else:
                    cands["learned model: mean of supporter turns"] = lambda it, ds=ds: learned[(ds, it.item_id)][
                        "mean"
                    ]
                    cands["learned model: last supporter turn"] = lambda it, ds=ds: learned[(ds, it.item_id)]["last"]
            cands["lexicon empathy_signal (last turn)"] = lambda it: empathy_signal(it.exchange)
            if ds == "ed":
                cands["lexicon empathy_signal (mean of supporter turns)"] = lambda it: statistics.fmean(
                    empathy_signal(e) for e in it.supporter_turns
                )
            cands["length alone (words of the reply)"] = lambda it: float(len(it.exchange.response.split()))
            for r in REFERENCE_RATERS:
                cands[f"{r} (reference)"] = lambda it, r=r, t=target: it.ratings.get(r, {}).get(t)
            for name, scorer in cands.items():
                pairs = [
                    (sc, t)
                    for it in items
                    if (t := expert_mean(it, target)) is not None and (sc := scorer(it)) is not None
                ]
                xs, ys = zip(*pairs, strict=True)
                r, _ = rho(items, target, scorer)
                ci = spearman_interval(xs, ys)
                cell = f"{r:+.2f} {ci.text() if ci else '[undefined]'}" if isinstance(r, float) else str(r)
                rows.append((ds, target, name, f"{cell} (n={len(pairs)})"))
    return rows


def model_throughput(texts: list[str], seeker: list[str], batch: int, seconds: float) -> float:
    """Replies/s of the learned model on one core (ONNX session with one thread), batches of ``batch``."""
    from scorers.empathy_model import EmpathyModel

    model = EmpathyModel.load()
    model.score(texts[:2], seeker[:2])  # load the session outside the timing
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(0, len(texts), batch):
            model.score(texts[i : i + batch], seeker[i : i + batch])
            done += len(texts[i : i + batch])
    return done / (time.perf_counter() - start)


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
    ap.add_argument("--no-model", action="store_true", help="leave out the learned model (no embeddings extra)")
    args = ap.parse_args(argv)
    if not (args.data / "original_data").is_dir():
        raise SystemExit(f"rating data not found at {args.data} (expected ../shared/data beside the checkout)")
    datasets = {"epitome": load_epitome(args.data), "ed": load_ed(args.data)}
    for ds, items in datasets.items():
        a = sum(i.half == "A" for i in items)
        print(f"{ds}: {len(items)} items (half A {a}, half B {len(items) - a})")
    learned = None if args.no_model else learned_scores(datasets)
    print()
    print("Spearman rho vs the mean of expert1..3 on every item, 95% bootstrap interval (2,000 resamples)\n")
    print("| dataset | target | scorer | rho [95% CI] (n) |")
    print("|---|---|---|---|")
    for ds, target, name, cell in interval_rows(datasets, learned):
        print(f"| {ds} | {target} | {name} | {cell} |")
    print()
    print("Lexicon history: Spearman rho by half (half A = the lexicon's tuning half, half B = held out)\n")
    print("| dataset | target | scorer | half A | half B | all |")
    print("|---|---|---|---|---|---|")
    for ds, target, name, cells in agreement_rows(datasets):
        print(f"| {ds} | {target} | {name} | {' | '.join(cells)} |")
    print()
    for name, rate in throughput(datasets["epitome"] + datasets["ed"], args.seconds).items():
        print(f"throughput {name}: {rate:,.0f} calls/s")
    if not args.no_model:
        exs = [e for it in datasets["epitome"] + datasets["ed"] for e in it.supporter_turns]
        texts, seekers = [e.response for e in exs], [e.user_text for e in exs]
        for batch in (1, 16, 64):
            rate = model_throughput(texts, seekers, batch, args.seconds * 2)
            print(f"throughput learned model, batches of {batch}: {rate:,.1f} replies/s on one core")


if __name__ == "__main__":
    main()
