"""The empathy-ratings data set (Kumar et al. 2025, MIT): loader, kappa-table reproduction, cheap tier.

Findings the loader encodes (see docs/calibration.md):

* Files are joined by id (EPITOME ``sp_id``, EmpatheticDialogues ``conv_id``), never by row order:
  the rows come in different orders, and gpt/claude files carry an unnamed pandas index column and
  only ``sp_id`` (it is unique in every EPITOME file, so it is a sufficient key).
* EPITOME ``gemini_ratings.csv`` has 100 *lines* but 50 records: its ``full_conversation`` cell spans
  two lines (``Seeker: ...`` / ``Supporter: ...``). A CSV reader, not a line count, is the truth.
* EmpatheticDialogues crowd ratings are means of two workers, so half points (3.5) occur; they are
  kept as their own ordinal labels. ``_comma_`` in the text stands for a comma.
* The paper's aggregates: "experts" is the per-item **median** of expert1-3, and "llm" is **Gemini**
  (2.5 Pro) alone. :func:`reproduce_kappa_table` shows the candidate search that establishes this.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, median

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from ._raters import signal_to_likert, unit_to_likert
from ._stats import spearman, weighted_kappa

RATERS = ("expert1", "expert2", "expert3", "crowd", "gpt", "claude", "gemini")
EXPERTS = ("expert1", "expert2", "expert3")
LLMS = ("gpt", "claude", "gemini")
#: The aggregations that reproduce the paper's table (established by the search below).
EXPERT_AGGREGATE = "median"
PAPER_LLM = "gemini"
REPRODUCED_PAIRS = (
    ("expert1", "expert2"),
    ("expert2", "expert3"),
    ("expert3", "expert1"),
    ("experts", "crowd"),
    ("experts", "llm"),
    ("llm", "crowd"),
)
#: The paper rounds kappa to 2 decimals: a reproduction is exact when |ours - paper| <= 0.005.
ROUNDING = 0.005


@dataclass
class EmpathyDataset:
    """One of the two samples: item texts and every rater's ratings, keyed by item id."""

    key: str
    title: str
    id_field: str
    dimensions: tuple[str, ...]
    scale: tuple[int, ...]
    dialogues: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    ratings: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return sorted(self.ratings["expert1"][self.dimensions[0]])

    def column(self, rater: str, dim: str, ids: Sequence[str]) -> list[float]:
        return [self.ratings[rater][dim][i] for i in ids]


_SPECS = {
    "epitome": (
        "EPITOME",
        "sp_id",
        ("level_emotional_reactions", "level_interpretations", "level_explorations"),
        (0, 1, 2),
    ),
    "empatheticdialogues": ("Empathetic Dialogues", "conv_id", ("empathy", "relevance", "fluency"), (1, 2, 3, 4, 5)),
}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _text(s: str) -> str:
    return s.replace("_comma_", ",").strip()


def _dialogue_ed(full: str) -> list[tuple[str, str]]:
    """``Seeker: ... \\n Supporter: ...`` -> [(role, text)] with attune roles (user/assistant)."""
    turns: list[tuple[str, str]] = []
    for line in full.split("\n"):
        line = line.strip()
        for prefix, role in (("Seeker:", "user"), ("Supporter:", "assistant")):
            if line.startswith(prefix):
                turns.append((role, _text(line[len(prefix) :])))
                break
        else:
            if line and turns:  # a wrapped line continues the previous message
                turns[-1] = (turns[-1][0], f"{turns[-1][1]} {_text(line)}")
    return turns


def load_empathy_ratings(root: str | Path) -> list[EmpathyDataset]:
    """Both samples, every rater joined by id. Raises ValueError naming the file if ids disagree."""
    base = Path(root)
    out = []
    for key, (title, id_field, dims, scale) in _SPECS.items():
        ds = EmpathyDataset(key, title, id_field, dims, scale)
        for rater in RATERS:
            path = base / "annotations" / key / f"{rater}_ratings.csv"
            by_dim: dict[str, dict[str, float]] = {d: {} for d in dims}
            for row in _rows(path):
                item = row[id_field]
                if item in by_dim[dims[0]]:
                    raise ValueError(f"{path}: {id_field} '{item}' appears twice, cannot join by id")
                for d in dims:
                    by_dim[d][item] = float(row[d])
            ds.ratings[rater] = by_dim
        reference = set(ds.ratings["expert1"][dims[0]])
        for rater, by_dim in ds.ratings.items():
            if set(by_dim[dims[0]]) != reference:
                diff = sorted(set(by_dim[dims[0]]) ^ reference)[:3]
                raise ValueError(f"{key}/{rater}_ratings.csv: ids differ from expert1 (e.g. {diff})")
        if key == "epitome":
            for row in _rows(base / "original_data" / "sample_epitome.csv"):
                ds.dialogues[row["sp_id"]] = [
                    ("user", _text(row["seeker_post"])),
                    ("assistant", _text(row["response_post"])),
                ]
        else:
            for row in _rows(base / "original_data" / "sample_empatheticdialogues.csv"):
                ds.dialogues.setdefault(row["conv_id"], _dialogue_ed(row["full_conversation"]))
        out.append(ds)
    return out


# -- aggregation and the kappa table ------------------------------------------------------------------
def _half_up(x: float) -> float:
    return float(math.floor(x + 0.5))


_EXPERT_AGGS: dict[str, Callable[[list[float]], float]] = {
    "median": lambda v: float(median(v)),
    "mean-rounded": lambda v: _half_up(fmean(v)),
}
_LLM_AGGS: dict[str, Callable[[list[float]], float] | str] = {
    "gemini": "gemini",
    "gpt": "gpt",
    "claude": "claude",
    "median-of-3": lambda v: float(median(v)),
    "mean-rounded-of-3": lambda v: _half_up(fmean(v)),
}


def _aggregate(ds: EmpathyDataset, members: Sequence[str], how: Callable[[list[float]], float] | str, dim: str):
    if isinstance(how, str):
        return ds.ratings[how][dim]
    return {i: how([ds.ratings[m][dim][i] for m in members]) for i in ds.ids}


def expert_aggregate(ds: EmpathyDataset, dim: str) -> dict[str, float]:
    """The paper's "experts" rater: per-item median of the three experts."""
    return _aggregate(ds, EXPERTS, _EXPERT_AGGS[EXPERT_AGGREGATE], dim)


class ReproRow(BaseModel):
    dataset: str
    dimension: str
    pair: str
    paper: float
    ours: float | None
    abs_diff: float | None
    same_at_2dp: bool = False


class CheapRow(BaseModel):
    dataset: str
    dimension: str
    rater: str
    half: str
    n: int
    kappa: float | None
    spearman: float | None


class EmpathyRatingsReport(BaseModel):
    aggregation: dict[str, str]
    aggregation_search: list[dict[str, object]]
    reproduction: list[ReproRow]
    max_abs_diff: float
    reproduced: bool
    cheap_tier: list[CheapRow]
    notes: list[str]


def _paper_table(root: Path) -> dict[tuple[str, str, str], float]:
    out = {}
    for row in _rows(root / "annotations" / "table_kappa.csv"):
        out[(row["Dataset"], row["Dimension"], row["Annotator Pair"])] = float(row["Weighted Cohen's Kappa"])
    return out


def _pair_kappa(ds: EmpathyDataset, dim: str, a: str, b: str, experts_how: str, llm_how: str) -> float | None:
    def series(name: str) -> dict[str, float]:
        if name == "experts":
            return _aggregate(ds, EXPERTS, _EXPERT_AGGS[experts_how], dim)
        if name == "llm":
            return _aggregate(ds, LLMS, _LLM_AGGS[llm_how], dim)
        return ds.ratings[name][dim]

    sa, sb = series(a), series(b)
    ids = ds.ids
    # No labels: sklearn's default ordered union of observed values, as the paper computed it.
    return weighted_kappa([sa[i] for i in ids], [sb[i] for i in ids])


def reproduce_kappa_table(
    datasets: Sequence[EmpathyDataset], root: str | Path
) -> tuple[list[ReproRow], list[dict[str, object]]]:
    """Our kappa next to the paper's for every reproduced row, and the aggregation search behind it."""
    paper = _paper_table(Path(root))
    search = []
    for e_how in _EXPERT_AGGS:
        for l_how in _LLM_AGGS:
            diffs = []
            for ds in datasets:
                for dim in ds.dimensions:
                    for a, b in REPRODUCED_PAIRS[3:]:
                        k = _pair_kappa(ds, dim, a, b, e_how, l_how)
                        diffs.append(abs((k or 0.0) - paper[(ds.title, dim, str((a, b)))]))
            search.append({"experts": e_how, "llm": l_how, "max_abs_diff": round(max(diffs), 4), "rows": len(diffs)})
    rows = []
    for ds in datasets:
        for a, b in REPRODUCED_PAIRS:
            for dim in ds.dimensions:
                k = _pair_kappa(ds, dim, a, b, EXPERT_AGGREGATE, PAPER_LLM)
                ref = paper[(ds.title, dim, str((a, b)))]
                rows.append(
                    ReproRow(
                        dataset=ds.title,
                        dimension=dim,
                        pair=f"{a} ~ {b}",
                        paper=ref,
                        ours=k,
                        abs_diff=None if k is None else abs(k - ref),
                        same_at_2dp=k is not None and f"{k:.2f}" == f"{ref:.2f}",
                    )
                )
    return rows, search


# -- the cheap tier as one more rater -----------------------------------------------------------------
def half_of(item_id: str) -> str:
    """Deterministic split of items into halves A and B by a hash of the id (not by row order).

    This is the split the cheap empathy signal was tuned on (half A only); every agreement report uses it.
    """
    return "A" if int(hashlib.blake2b(item_id.encode(), digest_size=4).hexdigest(), 16) % 2 == 0 else "B"


def _thirds(x: float, lo: float, hi: float) -> int:
    """A signal on [lo, hi] -> EPITOME level 0/1/2 by equal thirds of its range."""
    return min(2, max(0, int((x - lo) / (hi - lo) * 3)))


def _binned(value: float, signal_range: tuple[float, float], scale: tuple[int, ...]) -> int:
    lo, hi = signal_range
    if scale == (0, 1, 2):
        return _thirds(value, lo, hi)
    return signal_to_likert(value) if (lo, hi) == (1.0, 5.0) else unit_to_likert(value)


def cheap_signals(ds: EmpathyDataset) -> dict[str, tuple[tuple[float, float], dict[str, float]]]:
    """Per item: attune's empathy signal (1-5), seed 004 EI as attune implements it and as the seed
    writes it (0-1). A multi-turn item scores every supporter turn and averages (the rating is of the
    listener over the whole exchange)."""
    from schemas import Message
    from scorers import Exchange
    from scorers.empathy import empathy_signal
    from scorers.voice import emotional_intelligence
    from scorers.voice.raw import emotional_intelligence as raw_emotional_intelligence

    sig: dict[str, dict[str, float]] = {"attune empathy_signal": {}, "seed 004 EI": {}, "seed 004 EI (raw)": {}}
    for item, turns in ds.dialogues.items():
        per: dict[str, list[float]] = {k: [] for k in sig}
        history: list[Message] = []
        user = ""
        for idx, (role, text) in enumerate(turns):
            if role == "assistant":
                ex = Exchange(
                    conversation_id=item, turn_index=idx, user_text=user, response=text, history=tuple(history)
                )
                per["attune empathy_signal"].append(empathy_signal(ex))
                per["seed 004 EI"].append(emotional_intelligence(text, user))
                per["seed 004 EI (raw)"].append(raw_emotional_intelligence(text, user))
            else:
                user = text
            history.append(Message(role=role, text=text, turn_index=idx))
        for k, v in per.items():
            if v:
                sig[k][item] = fmean(v)
    return {
        "attune empathy_signal": ((1.0, 5.0), sig["attune empathy_signal"]),
        "seed 004 EI": ((0.0, 1.0), sig["seed 004 EI"]),
        "seed 004 EI (raw)": ((0.0, 1.0), sig["seed 004 EI (raw)"]),
    }


def cheap_tier_agreement(datasets: Sequence[EmpathyDataset]) -> list[CheapRow]:
    """Kappa (binned, on the data set's scale) and Spearman (raw signal) vs the expert median, per half.

    Gemini (the paper's LLM) is included on the same halves as a reference point.
    """
    rows = []
    for ds in datasets:
        signals = cheap_signals(ds)
        for dim in ds.dimensions:
            experts = expert_aggregate(ds, dim)
            for half in ("A", "B", "all"):
                ids = [i for i in ds.ids if half == "all" or half_of(i) == half]
                for name, (rng, values) in signals.items():
                    used = [i for i in ids if i in values]
                    x = [experts[i] for i in used]
                    rho, _ = spearman([values[i] for i in used], x)
                    kappa = weighted_kappa([_binned(values[i], rng, ds.scale) for i in used], x, labels=ds.scale)
                    rows.append(
                        CheapRow(
                            dataset=ds.title,
                            dimension=dim,
                            rater=name,
                            half=half,
                            n=len(used),
                            kappa=kappa,
                            spearman=rho,
                        )
                    )
                gem = ds.ratings["gemini"][dim]
                rho, _ = spearman([gem[i] for i in ids], [experts[i] for i in ids])
                kappa = weighted_kappa([gem[i] for i in ids], [experts[i] for i in ids], labels=ds.scale)
                rows.append(
                    CheapRow(
                        dataset=ds.title,
                        dimension=dim,
                        rater="gemini (reference)",
                        half=half,
                        n=len(ids),
                        kappa=kappa,
                        spearman=rho,
                    )
                )
    return rows


NOTES = [
    "joined by id: rows come in different orders; gpt/claude files have an unnamed index column and only sp_id "
    "(unique per EPITOME file)",
    "EPITOME gemini_ratings.csv: 100 lines but 50 records (full_conversation spans two lines)",
    "EmpatheticDialogues crowd = mean of two workers: half points kept as ordinal labels",
    "experts = per-item median of expert1-3; llm = Gemini alone (other candidates in aggregation_search)",
    "kappa for reproduction: sklearn quadratic weights over the observed label set (its default); "
    "cheap tier: the data set's full scale",
]


def empathy_ratings_report(root: str | Path, *, with_cheap_tier: bool = True) -> EmpathyRatingsReport:
    datasets = load_empathy_ratings(root)
    rows, search = reproduce_kappa_table(datasets, root)
    diffs = [r.abs_diff for r in rows if r.abs_diff is not None]
    max_diff = max(diffs) if diffs else math.inf
    return EmpathyRatingsReport(
        aggregation={"experts": EXPERT_AGGREGATE, "llm": PAPER_LLM},
        aggregation_search=search,
        reproduction=rows,
        max_abs_diff=max_diff,
        reproduced=len(diffs) == len(rows) and max_diff <= ROUNDING + 1e-9,
        cheap_tier=cheap_tier_agreement(datasets) if with_cheap_tier else [],
        notes=NOTES,
    )


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def render_empathy_ratings(rep: EmpathyRatingsReport, console: Console) -> None:
    t = Table(title="Paper kappa table reproduced (quadratic-weighted Cohen's kappa)", title_justify="left")
    for c in ("dataset", "dimension", "pair", "paper", "ours", "|diff|"):
        t.add_column(c, justify="right" if c in ("paper", "ours", "|diff|") else "left")
    for r in rep.reproduction:
        style = "green" if r.abs_diff is not None and r.abs_diff <= ROUNDING + 1e-9 else "red"
        t.add_row(
            r.dataset,
            r.dimension,
            r.pair,
            f"{r.paper:.2f}",
            "–" if r.ours is None else f"{r.ours:.4f}",
            f"[{style}]{'–' if r.abs_diff is None else f'{r.abs_diff:.4f}'}[/{style}]",
        )
    console.print(t)
    verdict = "[green]reproduced within rounding[/green]" if rep.reproduced else "[red]NOT reproduced[/red]"
    console.print(f"max |diff| {rep.max_abs_diff:.4f}: {verdict} (experts={EXPERT_AGGREGATE}, llm={PAPER_LLM})")
    s = Table(title="Aggregation search (max |diff| over the experts/llm/crowd rows)", title_justify="left")
    for c in ("experts", "llm", "max |diff|"):
        s.add_column(c)
    for row in sorted(rep.aggregation_search, key=lambda r: float(r["max_abs_diff"])):  # type: ignore[arg-type]
        s.add_row(str(row["experts"]), str(row["llm"]), f"{row['max_abs_diff']:.3f}")
    console.print(s)
    if rep.cheap_tier:
        ct = Table(title="Cheap tier vs expert median: kappa / Spearman rho, halves by id hash", title_justify="left")
        for col in ("dataset", "dimension", "rater", "A", "B", "all"):
            ct.add_column(col, justify="right" if col in ("A", "B", "all") else "left")
        cells: dict[tuple[str, str, str], dict[str, CheapRow]] = {}
        for cr in rep.cheap_tier:
            cells.setdefault((cr.dataset, cr.dimension, cr.rater), {})[cr.half] = cr
        for (dset, dim, rater), by_half in cells.items():
            ct.add_row(
                dset,
                dim,
                rater,
                *(f"{_f(by_half[h].kappa)} / {_f(by_half[h].spearman)} ({by_half[h].n})" for h in ("A", "B", "all")),
            )
        console.print(ct)
