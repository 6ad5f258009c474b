"""Seed 002 metric 1, Memory Utilization Accuracy: the judge lists the memory keys a reply cites,
and the precision/recall/F1 against the required and forbidden keys are computed here, exactly as
seed 002 §"1. Memory Utilization Accuracy" defines them:

U = cited keys, R = required, F = forbidden; TP = |U ∩ R|, FP = |U ∩ F|, FN = |R| - TP;
P = TP / (TP + FP), and P = 1.0 when TP + FP = 0 ("no citation errors"); R = TP / |R|;
F1 = 2PR / (P + R). Neutral keys count nowhere. Micro-averaging sums TP/FP/FN over samples before
computing P/R/F1 (recommended); macro-averaging averages the per-sample P/R/F1 (reference).

Two cases the seed leaves open are defined here: recall with no required keys (|R| = 0) is 1.0
(nothing was required, nothing was missed), and F1 is 0.0 when P + R = 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from schemas import RubricRef, RubricScores
from scorers._base import Exchange

from .._base import JudgeOutput, TurnMetric


class MemoryUtilizationJudgment(JudgeOutput):
    cited_keys: list[str] = Field(max_length=500)
    explanation: str


@dataclass(frozen=True, slots=True)
class MemoryScore:
    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float


def _prf(tp: int, fp: int, n_required: int) -> tuple[float, float, float]:
    precision = 1.0 if tp + fp == 0 else tp / (tp + fp)
    recall = 1.0 if n_required == 0 else tp / n_required
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def memory_scores(cited: Iterable[str], required: Iterable[str], forbidden: Iterable[str]) -> MemoryScore:
    """Seed 002 §1 for one sample (keys are compared as exact strings; neutral keys are ignored)."""
    u, r, f = set(cited), set(required), set(forbidden)
    tp = len(u & r)
    fp = len(u & f)
    fn = len(r) - tp
    p, rec, f1 = _prf(tp, fp, len(r))
    return MemoryScore(tp, fp, fn, p, rec, f1)


def aggregate_memory(samples: Iterable[MemoryScore]) -> dict[str, dict[str, float]]:
    """Seed 002 §1 Aggregation: ``micro`` (sum TP/FP/FN, then P/R/F1) and ``macro`` (mean of P/R/F1)."""
    items = list(samples)
    if not items:
        raise ValueError("no samples to aggregate")
    tp = sum(s.tp for s in items)
    fp = sum(s.fp for s in items)
    fn = sum(s.fn for s in items)
    p, r, f1 = _prf(tp, fp, tp + fn)  # Σ|R| = Σ(TP + FN)
    n = len(items)
    return {
        "micro": {"precision": p, "recall": r, "f1": f1, "tp": tp, "fp": fp, "fn": fn},
        "macro": {
            "precision": sum(s.precision for s in items) / n,
            "recall": sum(s.recall for s in items) / n,
            "f1": sum(s.f1 for s in items) / n,
        },
    }


class MemoryUtilization(TurnMetric):
    name = "memory_utilization"
    rubric = RubricRef(id="memory-utilization-judge", version="1.0+j2", source="seed-002")
    output = MemoryUtilizationJudgment
    package = __name__

    def applies(self, ex: Exchange) -> bool:
        return bool(ex.context.memory)

    def empty_reply(self, ex: Exchange) -> JudgeOutput | None:
        return None if ex.response.strip() else MemoryUtilizationJudgment(cited_keys=[], explanation="empty response")

    def blocks(self, ex: Exchange) -> dict[str, object]:
        return {
            "memory": ex.context.memory or {},
            "exchange": {"user_message": ex.user_text, "assistant_response": ex.response},
        }

    def finalize(self, value: Any, ex: Exchange) -> tuple[RubricScores | None, dict[str, Any], str]:
        v: MemoryUtilizationJudgment = value
        memory_keys = set(ex.context.memory or {})
        cited = sorted({k for k in v.cited_keys if k in memory_keys})  # keys not in the memory are invented
        s = memory_scores(cited, ex.context.required_keys, ex.context.forbidden_keys)
        details = {
            "cited_keys": cited,
            "invented_keys": sorted({k for k in v.cited_keys if k not in memory_keys}),
            "tp": s.tp,
            "fp": s.fp,
            "fn": s.fn,
            "precision": s.precision,
            "recall": s.recall,
            "f1": s.f1,
        }
        return None, details, v.explanation


METRIC = MemoryUtilization()
