"""The two agreement statistics, thin wrappers over scikit-learn and scipy.

Quadratic-weighted Cohen's kappa weighs a disagreement by the squared distance between the two
labels' positions in the ordered label set. ``labels`` fixes that set (attune passes the full 1-5
scale); without it the set is the ordered union of observed values, which is scikit-learn's default
and what the empathy-ratings paper used.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def weighted_kappa(a: Sequence[float], b: Sequence[float], labels: Sequence[float] | None = None) -> float | None:
    """Quadratic-weighted Cohen's kappa; None when undefined (fewer than 2 items, no variation at all).

    Values are encoded as positions in the ordered label set first, so half points (a mean of two crowd
    workers) are ordinal labels rather than a "continuous" target scikit-learn would refuse.
    """
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    if len(a) < 2:
        return None
    scale = np.unique(np.concatenate([np.asarray(a, float), np.asarray(b, float)])) if labels is None else labels
    scale = np.asarray(scale, float)
    index = {v: i for i, v in enumerate(scale.tolist())}
    try:
        ca = [index[float(v)] for v in a]
        cb = [index[float(v)] for v in b]
    except KeyError as e:
        raise ValueError(f"value {e.args[0]} is not on the label scale {scale.tolist()}") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined kappa -> nan -> None, reported as such
        k = cohen_kappa_score(ca, cb, weights="quadratic", labels=list(range(len(scale))))
    return _finite(k)


def spearman(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, float | None]:
    """Spearman's rho and its p-value; (None, None) when a rater gives one constant value."""
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None, None
    res = spearmanr(a, b)
    return _finite(res.statistic), _finite(res.pvalue)


def share_within(a: Sequence[float], b: Sequence[float], tolerance: float) -> float | None:
    """Share of paired ratings that differ by at most ``tolerance`` (0 = exact agreement)."""
    if not a:
        return None
    return float(np.mean(np.abs(np.asarray(a, float) - np.asarray(b, float)) <= tolerance + 1e-9))
