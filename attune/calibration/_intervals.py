"""95% percentile-bootstrap intervals for the report's agreement figures.

The conventions are those of ``bench/crisis_eval.py`` (the repo's other bootstrap: 2,000 resamples,
seed 12, the 2.5th and 97.5th percentiles of the resampled statistic), so every interval attune
publishes is computed the same way. That helper is a script outside the installed package and only
does proportions, so the report has its own, vectorised with numpy: a kappa is recomputed 2,000
times per figure from confusion matrices, not through scikit-learn one resample at a time.

Deterministic: the same inputs give the same interval on every run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
SEED = 12
LEVEL = 0.95
#: The rubric scale kappa is computed on (attune.calibration: quadratic weights over 1-5).
LABELS = 5
_W = np.subtract.outer(np.arange(LABELS), np.arange(LABELS)).astype(float) ** 2


@dataclass(frozen=True)
class Interval:
    """A 95% bootstrap interval; ``n`` is what was resampled (items, pairs), ``undefined`` the resamples
    in which the statistic did not exist (a kappa with no variation), left out of the percentiles."""

    low: float
    high: float
    n: int
    undefined: int = 0

    def text(self, spec: str = ".2f") -> str:
        return f"[{format(self.low, spec)}, {format(self.high, spec)}]"


def bootstrap(n: int, statistic: Callable[[np.ndarray], np.ndarray], *, min_defined: float = 0.95) -> Interval | None:
    """Resample ``n`` units with replacement :data:`RESAMPLES` times; ``statistic`` maps the
    (resamples, n) index matrix to one value per resample (nan = undefined). None when n < 2 or the
    statistic is undefined in more than ``1 - min_defined`` of the resamples (no honest interval)."""
    if n < 2:
        return None
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, n, size=(RESAMPLES, n))
    values = np.asarray(statistic(idx), dtype=float)
    defined = values[np.isfinite(values)]
    if len(defined) < min_defined * RESAMPLES:
        return None
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return Interval(float(low), float(high), n, RESAMPLES - len(defined))


def proportion_interval(k: int, n: int) -> Interval | None:
    """A share k/n of 0/1 outcomes: its bootstrap depends only on k and n, so a published share and its
    n are enough (the outcomes themselves are not needed)."""
    flags = np.zeros(n, dtype=float)
    flags[:k] = 1.0
    return bootstrap(n, lambda idx: flags[idx].mean(axis=1))


def kappas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quadratic-weighted Cohen's kappa per row of two (resamples, n) code matrices (codes 0-4 for
    scores 1-5, -1 = not rated by that rater); nan where undefined (fewer than 2 items, no variation).
    Same definition as :func:`attune.calibration.weighted_kappa` with ``labels=1..5``."""
    rows = a.shape[0]
    valid = (a >= 0) & (b >= 0)
    cell = np.where(valid, a * LABELS + b, LABELS * LABELS)  # invalid -> an overflow bin, dropped
    flat = (cell + np.arange(rows)[:, None] * (LABELS * LABELS + 1)).ravel()
    counts = np.bincount(flat, minlength=rows * (LABELS * LABELS + 1)).reshape(rows, -1)[:, : LABELS * LABELS]
    observed = counts.reshape(rows, LABELS, LABELS).astype(float)
    total = observed.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :] / total[:, None, None]
        num = (observed * _W).sum(axis=(1, 2))
        den = (expected * _W).sum(axis=(1, 2))
        out = 1.0 - num / den
    out[(total < 2) | ~np.isfinite(out) | (den == 0)] = np.nan
    return out


def mean_kappa_interval(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> Interval | None:
    """Interval of the mean kappa over rater pairs that rate the same n items (codes -1 where a rater
    did not rate an item): items are resampled jointly, so pairs sharing items move together. With one
    pair this is that pair's kappa interval over the items both rated."""
    if not pairs:
        return None
    n = len(pairs[0][0])

    def stat(idx: np.ndarray) -> np.ndarray:
        per_pair = np.stack([kappas(a[idx], b[idx]) for a, b in pairs])
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(per_pair).any(axis=0), np.nan, per_pair.mean(axis=0))

    return bootstrap(n, stat)


def cluster_share_interval(hits: np.ndarray) -> Interval | None:
    """Share of all cells within tolerance when each unit (row: one duplicate pair) has several cells
    (columns: dimensions) that are not independent: rows are resampled, never single cells."""
    if hits.ndim != 2 or not hits.size:
        return None
    per_row = hits.astype(float)
    return bootstrap(len(per_row), lambda idx: per_row[idx].mean(axis=(1, 2)))
