"""``attune agreement``: every rater pair, every dimension, plus self-consistency on hidden duplicates."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np
from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from ._intervals import Interval, mean_kappa_interval
from ._models import DIMENSIONS, KAPPA_TARGET, SELF_CONSISTENCY_TOLERANCE
from ._raters import Rater
from ._stats import share_within, spearman, weighted_kappa

LIKERT = (1, 2, 3, 4, 5)
_KIND_ORDER = {"human": 0, "judge": 1, "cheap": 2}


class RaterInfo(BaseModel):
    name: str
    kind: str
    items: int
    excluded_errors: int = Field(description="turn_judgment records with status error (excluded, not imputed).")


class PairResult(BaseModel):
    a: str
    b: str
    kind: str = Field(description="e.g. human-human, human-judge, human-cheap.")
    dimension: str
    n: int
    kappa: float | None = Field(description="Quadratic-weighted Cohen's kappa on the 1-5 scale.")
    kappa_ci: tuple[float, float] | None = Field(
        default=None, description="95% percentile-bootstrap interval of kappa over the n items (None: undefined)."
    )
    spearman: float | None
    spearman_p: float | None
    exact: float | None
    within_one: float | None
    below_target: bool = Field(description=f"kappa < {KAPPA_TARGET} (seed 003 §5) or undefined.")


class SelfConsistency(BaseModel):
    annotator: str
    duplicate_pairs: int
    per_dimension: dict[str, float | None]
    overall: float | None = Field(description="Share of all (pair, dimension) cells within 1 point.")


class DimensionFlag(BaseModel):
    human_human_pairs: int
    mean_kappa: float | None
    mean_kappa_ci: tuple[float, float] | None = Field(
        default=None, description="95% bootstrap interval of the mean human-human kappa (items resampled jointly)."
    )
    mean_kappa_items: int | None = Field(default=None, description="Items that interval resampled.")
    min_kappa: float | None
    flagged: bool
    reason: str


class AgreementReport(BaseModel):
    kappa_target: float = KAPPA_TARGET
    tolerance: int = SELF_CONSISTENCY_TOLERANCE
    raters: list[RaterInfo]
    pairs: list[PairResult]
    self_consistency: list[SelfConsistency]
    dimensions: dict[str, DimensionFlag]
    empathy_ratings: dict[str, object] | None = None


def _pair_kind(a: Rater, b: Rater) -> str:
    return "-".join(sorted((a.kind, b.kind), key=_KIND_ORDER.__getitem__))


def _pair(a: Rater, b: Rater, dim: str) -> PairResult:
    ra, rb = a.ratings[dim], b.ratings[dim]
    keys = sorted(ra.keys() & rb.keys())
    x = [ra[k] for k in keys]
    y = [rb[k] for k in keys]
    kappa = weighted_kappa(x, y, labels=LIKERT)
    rho, p = spearman(x, y)
    codes = (np.array(x, dtype=np.int64) - 1, np.array(y, dtype=np.int64) - 1)
    ci = mean_kappa_interval([codes]) if kappa is not None else None
    return PairResult(
        a=a.name,
        b=b.name,
        kind=_pair_kind(a, b),
        dimension=dim,
        n=len(keys),
        kappa=kappa,
        kappa_ci=(round(ci.low, 4), round(ci.high, 4)) if ci else None,
        spearman=rho,
        spearman_p=p,
        exact=share_within(x, y, 0),
        within_one=share_within(x, y, 1),
        below_target=kappa is None or kappa < KAPPA_TARGET,
    )


def _self_consistency(r: Rater) -> SelfConsistency:
    per_dim: dict[str, float | None] = {}
    cells_a: list[int] = []
    cells_b: list[int] = []
    for dim in DIMENSIONS:
        pairs = r.duplicate_pairs[dim]
        per_dim[dim] = share_within([p[0] for p in pairs], [p[1] for p in pairs], SELF_CONSISTENCY_TOLERANCE)
        cells_a += [p[0] for p in pairs]
        cells_b += [p[1] for p in pairs]
    return SelfConsistency(
        annotator=r.name,
        duplicate_pairs=max(len(v) for v in r.duplicate_pairs.values()),
        per_dimension=per_dim,
        overall=share_within(cells_a, cells_b, SELF_CONSISTENCY_TOLERANCE),
    )


def _mean_kappa_ci(raters: Mapping[str, Rater], hh: list[PairResult], dim: str) -> tuple[Interval | None, int]:
    """The mean human-human kappa's interval: every item any of the pairs rated, resampled jointly (a rater
    who did not rate an item codes it -1), so pairs that share items move together."""
    defined = [p for p in hh if p.kappa is not None]
    if not defined:
        return None, 0
    keys = sorted(set().union(*(raters[p.a].ratings[dim].keys() & raters[p.b].ratings[dim].keys() for p in defined)))

    def code(name: str) -> np.ndarray:
        r = raters[name].ratings[dim]
        return np.array([r[k] - 1 if k in r else -1 for k in keys], dtype=np.int64)

    return mean_kappa_interval([(code(p.a), code(p.b)) for p in defined]), len(keys)


def _flag(dim: str, pairs: list[PairResult], raters: Mapping[str, Rater]) -> DimensionFlag:
    hh = [p for p in pairs if p.dimension == dim and p.kind == "human-human"]
    kappas = [p.kappa for p in hh if p.kappa is not None]
    if not hh:
        return DimensionFlag(human_human_pairs=0, mean_kappa=None, min_kappa=None, flagged=True, reason="no two humans")
    below = [f"{p.a}/{p.b}" for p in hh if p.below_target]
    ci, n_items = _mean_kappa_ci(raters, hh, dim)
    return DimensionFlag(
        human_human_pairs=len(hh),
        mean_kappa=sum(kappas) / len(kappas) if kappas else None,
        mean_kappa_ci=(round(ci.low, 4), round(ci.high, 4)) if ci else None,
        mean_kappa_items=n_items or None,
        min_kappa=min(kappas) if kappas else None,
        flagged=bool(below),
        reason=f"kappa < {KAPPA_TARGET}: {', '.join(below)}" if below else "meets target",
    )


def compute_agreement(raters: Mapping[str, Rater]) -> AgreementReport:
    """Pairwise statistics over the items both raters rated; humans' duplicates feed self-consistency only."""
    ordered = sorted(raters.values(), key=lambda r: (_KIND_ORDER[r.kind], r.name))
    pairs = [_pair(a, b, dim) for a, b in combinations(ordered, 2) for dim in DIMENSIONS]
    pairs = [p for p in pairs if p.n > 0]
    return AgreementReport(
        raters=[RaterInfo(name=r.name, kind=r.kind, items=r.items, excluded_errors=r.errors) for r in ordered],
        pairs=pairs,
        self_consistency=[_self_consistency(r) for r in ordered if r.kind == "human"],
        dimensions={d: _flag(d, pairs, raters) for d in DIMENSIONS},
    )


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "–" if x is None else format(x, spec)


def render_agreement(report: AgreementReport, console: Console) -> None:
    """Rich tables: kappa / rho per pair and dimension (red under target), self-consistency, flags."""
    raters = ", ".join(
        f"{r.name} ({r.kind}, {r.items} items"
        + (f", {r.excluded_errors} errors excluded)" if r.excluded_errors else ")")
        for r in report.raters
    )
    console.print(f"[bold]Raters:[/bold] {raters or 'none'}")
    if report.pairs:
        t = Table(
            title=f"Agreement per dimension: quadratic-weighted kappa [95% bootstrap CI] / Spearman rho (n); "
            f"red = kappa < {KAPPA_TARGET}",
            title_justify="left",
        )
        t.add_column("pair")
        t.add_column("kind")
        for d in DIMENSIONS:
            t.add_column(d, justify="right")
        by_pair: dict[tuple[str, str, str], dict[str, PairResult]] = {}
        for p in report.pairs:
            by_pair.setdefault((p.a, p.b, p.kind), {})[p.dimension] = p
        for (a, b, kind), cells in by_pair.items():
            row = []
            for d in DIMENSIONS:
                cell = cells.get(d)
                if cell is None:
                    row.append("")
                    continue
                style = "red" if cell.below_target else "green"
                ci = f" [{cell.kappa_ci[0]:.2f}, {cell.kappa_ci[1]:.2f}]" if cell.kappa_ci else ""
                row.append(f"[{style}]{_fmt(cell.kappa)}[/{style}]{ci} / {_fmt(cell.spearman)} ({cell.n})")
            t.add_row(f"{a} ~ {b}", kind, *row)
        console.print(t)
    if report.self_consistency:
        t = Table(title="Self-consistency on hidden duplicates (share within 1 point)", title_justify="left")
        t.add_column("annotator")
        t.add_column("pairs", justify="right")
        for d in DIMENSIONS:
            t.add_column(d, justify="right")
        t.add_column("all", justify="right")
        for s in report.self_consistency:
            t.add_row(
                s.annotator,
                str(s.duplicate_pairs),
                *(_fmt(s.per_dimension[d], ".0%") for d in DIMENSIONS),
                _fmt(s.overall, ".0%"),
            )
        console.print(t)
    for dim, f in report.dimensions.items():
        mark = "[red]FLAG[/red]" if f.flagged else "[green]ok[/green]"
        ci = ""
        if f.mean_kappa_ci:
            ci = f" [95% CI {f.mean_kappa_ci[0]:.2f}, {f.mean_kappa_ci[1]:.2f}; {f.mean_kappa_items} items]"
        console.print(f"{mark} {dim}: human-human mean kappa {_fmt(f.mean_kappa)}{ci} ({f.reason})", highlight=False)
