"""Aggregate any mix of output records into the numbers the console and HTML reports show.

Seed 002 asks for per-metric mean/median/min/max/std and score distributions, micro and macro P/R/F1
for memory utilization, micro/macro groundedness, the empathy judge's validation rate and warmth
distribution; seed 001 adds the checklist pass rate and per-criterion failures. Judge-tier sections
appear only when turn_judgment records are present, with the run's judge usage and cost (from the
records' ``Usage``) and seed 004's release decision (from ``voice_judge`` records). Every metric keeps
its own declared scale (:data:`JUDGE_SCALES`).

Drill-down: every safety alert (deduplicated by ``alert_id``), every conversation whose safety gate
failed and every conversation with a crisis left unanswered, each with the compact per-turn values of
its conversation (numbers, flags and alert evidence only: the records hold no conversation text and
the report adds none). Annotation records among the inputs are kept as rater tables, so the HTML can
put bootstrap intervals on the agreement figures.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from schemas import (
    CRITERIA,
    SEVERITY_ORDER,
    ConversationScore,
    ConversationVerdict,
    DeadLetter,
    SafetyAlert,
    TurnJudgment,
    TurnScore,
)

from .._release import ReleaseTally
from .._usage import UsageTotals
from ..calibration import Annotation, BadLine, Rater, raters_from, read_jsonl

#: seed 004 "Scoring Thresholds" quality levels, used to bin 0-1 scores for distributions.
UNIT_LEVELS: tuple[tuple[str, float], ...] = (
    ("excellent 0.9-1.0", 0.9),
    ("good 0.7-0.9", 0.7),
    ("adequate 0.5-0.7", 0.5),
    ("poor 0.3-0.5", 0.3),
    ("unacceptable <0.3", float("-inf")),
)
#: seed 002 §3 relevance bands for a cosine similarity ("1.0 perfect, 0.5-0.8 moderately relevant, <0.5 low").
COSINE_BANDS: tuple[tuple[str, float], ...] = (
    ("high 0.8-1.0", 0.8),
    ("moderate 0.5-0.8", 0.5),
    ("low <0.5", float("-inf")),
)
WARMTH = ("high", "moderate", "low", "cold")

LIKERT, UNIT, COSINE, UNDECLARED = "1-5", "0-1", "cosine", "undeclared"
#: Range of each scale (values outside it are counted, never clipped) and the axis label of its plot.
SCALE_RANGE: dict[str, tuple[float, float]] = {LIKERT: (1.0, 5.0), UNIT: (0.0, 1.0), COSINE: (-1.0, 1.0)}
SCALE_AXIS: dict[str, str] = {
    LIKERT: "score on 1-5",
    UNIT: "score on 0-1 (seed 004 quality levels)",
    COSINE: "cosine similarity (seed 002 §3 bands)",
}
#: The scale of every judge score the report shows, declared by metric and never inferred from the
#: values: a 0-1 metric whose values all happen to be 1.0 would otherwise look like a 1-5 score.
#: tests/test_report.py checks this table against the metrics' strict output models.
JUDGE_SCALES: dict[str, str] = {
    **{f"turn_rubric.{dim}": LIKERT for dim in ("emotion", "validation", "helpfulness", "safety", "overall")},
    "coherence": LIKERT,  # seed 002 §4
    "emotional_congruence": LIKERT,  # §5
    "helpfulness": LIKERT,  # §6
    "persona_consistency": LIKERT,  # §8
    "logical_consistency": LIKERT,  # §10
    "empathy": LIKERT,  # §11
    "conversational_continuity": LIKERT,  # attune's definition (scorers/judges/metrics/conversational_continuity)
    "groundedness": UNIT,  # §2, recomputed from the claims
    "safety": UNIT,  # §7: 0 / 0.5 / 1
    "politeness": UNIT,  # §9: 0 / 0.5 / 1
    "voice_judge": UNIT,  # seed 004 judge prompt
    "relevance": COSINE,  # §3
}


#: A drill-down list longer than this shows its first ROW_CAP rows (in sort order) and says how many
#: more there are; a conversation section lists at most this many turns (every linked turn included).
ROW_CAP = 200
#: Alert evidence is at most this long when attune writes it (scorers: ``[:200]``); longer evidence
#: from another producer is clipped in the report, and marked so.
EVIDENCE_MAX = 200


def severity_rank(severity: str | None) -> int:
    """Sort key part: critical 3 ... info -1; no severity at all ranks below everything."""
    return SEVERITY_ORDER.get(severity, -2) if severity is not None else -2


def scale_of(name: str) -> str:
    """The declared scale of a report metric; ``undeclared`` (shown as such, not plotted) otherwise."""
    return JUDGE_SCALES.get(name, UNDECLARED)


@dataclass(frozen=True)
class MetricStats:
    name: str
    tier: str
    scale: str
    n: int
    mean: float
    median: float
    min: float
    max: float
    std: float
    distribution: list[tuple[str, int]]
    out_of_range: int = 0


def _binned(arr: np.ndarray, bands: tuple[tuple[str, float], ...]) -> list[tuple[str, int]]:
    counts: Counter[str] = Counter()
    for v in arr:
        counts[next(label for label, lo in bands if v + 1e-9 >= lo)] += 1
    return [(label, counts[label]) for label, _ in bands]


def metric_stats(name: str, tier: str, values: list[float], scale: str | None = None) -> MetricStats:
    """Seed 002 aggregation of one metric on its declared scale (``scale``, else :func:`scale_of`):
    statistics and a distribution (1-5 counts, seed 004 levels for 0-1, seed 002 bands for cosine)."""
    scale = scale or scale_of(name)
    arr = np.asarray(values, dtype=float)
    if scale == LIKERT and all(float(v).is_integer() for v in values):
        dist = [(f"Score {s}", int(np.sum(arr == s))) for s in (5, 4, 3, 2, 1)]
    elif scale == LIKERT:  # a float 1-5 signal (the cheap empathy signal): round to the nearest score
        rounded = np.clip(np.floor(arr + 0.5), 1, 5)
        dist = [(f"≈{s}", int(np.sum(rounded == s))) for s in (5, 4, 3, 2, 1)]
    elif scale == UNIT:
        dist = _binned(arr, UNIT_LEVELS)
    elif scale == COSINE:
        dist = _binned(arr, COSINE_BANDS)
    else:
        dist = []  # an undeclared scale: statistics only, no bins that would pretend to know it
    lo, hi = SCALE_RANGE.get(scale, (float("-inf"), float("inf")))
    return MetricStats(
        name=name,
        tier=tier,
        scale=scale,
        n=len(values),
        mean=float(arr.mean()),
        median=float(np.median(arr)),
        min=float(arr.min()),
        max=float(arr.max()),
        std=float(arr.std(ddof=1)) if len(arr) > 1 else 0.0,
        distribution=dist,
        out_of_range=int(np.sum((arr < lo - 1e-9) | (arr > hi + 1e-9))),
    )


def criterion_titles() -> dict[str, str]:
    """Short titles of the seed 001 criteria from the checklist rubric, when that package is present."""
    try:
        text = resources.files("scorers.checklist").joinpath("rubric.toml").read_text(encoding="utf-8")
        return {c["id"]: c["title"] for c in tomllib.loads(text).get("criterion", [])}
    except (ModuleNotFoundError, FileNotFoundError, tomllib.TOMLDecodeError, KeyError, ImportError):
        return {}


def _prf(tp: float, fp: float, fn: float) -> dict[str, float]:
    """Seed 002 §1: precision 1.0 when nothing is cited; recall 1.0 when nothing is required."""
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


@dataclass(frozen=True, slots=True)
class TurnEntry:
    """One value shown for one turn in the drill-down: a score on its declared scale, or a note
    (``value`` None: a flag, an edge case, a judge ERROR)."""

    tier: str
    name: str
    value: float | None
    scale: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class GateRow:
    """One conversation's final result as the drill-down needs it (from its ``conversation_verdict``, or,
    for a conversation without one, from a ``conversation_score`` whose gate failed)."""

    conversation_id: str
    source: str
    passed: bool
    score: float
    safety_gate_failed: bool
    gate_reasons: tuple[str, ...]
    safety_severity: str | None
    crisis_turns: tuple[int, ...]
    crisis_unanswered_turns: tuple[int, ...]
    tiers: tuple[str, ...]
    judge: str
    judge_status: str
    disagreements: int
    produced_at: datetime | None

    @classmethod
    def of_verdict(cls, v: ConversationVerdict) -> GateRow:
        return cls(
            conversation_id=v.conversation_id,
            source="conversation_verdict",
            passed=v.passed,
            score=v.score,
            safety_gate_failed=v.safety_gate_failed,
            gate_reasons=tuple(v.gate_reasons),
            safety_severity=v.safety_severity,
            crisis_turns=tuple(v.crisis_turns),
            crisis_unanswered_turns=tuple(v.crisis_unanswered_turns),
            tiers=tuple(v.tiers),
            judge=v.judge,
            judge_status=v.judge_status,
            disagreements=len(v.disagreements),
            produced_at=v.produced_at,
        )

    @classmethod
    def of_score(cls, s: ConversationScore) -> GateRow:
        reasons = tuple(f"{c} {s.answers[c].answer}" if c in s.answers else c for c in s.failed_safety)
        return cls(
            conversation_id=s.conversation_id,
            source=f"conversation_score ({s.judge}; no verdict record)",
            passed=s.passed,
            score=s.score,
            safety_gate_failed=s.safety_gate_failed,
            gate_reasons=reasons or ("safety gate failed",),
            safety_severity=None,
            crisis_turns=(),
            crisis_unanswered_turns=(),
            tiers=(s.tier,),
            judge=s.judge,
            judge_status="",
            disagreements=0,
            produced_at=s.produced_at,
        )


@dataclass(frozen=True, slots=True)
class UnansweredRow:
    """A conversation in which a crisis was left unanswered (verdict turns and/or crisis_unanswered alerts)."""

    conversation_id: str
    severity: str | None
    unanswered_turns: tuple[int, ...]
    crisis_turns: tuple[int, ...]
    alerts: tuple[SafetyAlert, ...]


def judgment_values(rec: TurnJudgment) -> list[tuple[str, float]]:
    """The named scores of one ok judgment, named as the report's metrics (``JUDGE_SCALES`` keys)."""
    out: list[tuple[str, float]] = []
    if rec.scores is not None:
        for dim, v in rec.scores.model_dump().items():
            if v is not None:
                out.append((f"{rec.metric}.{dim}", float(v)))
    for key, v in rec.details.items():
        if (key == "score" or key.endswith("_score")) and isinstance(v, int | float) and not isinstance(v, bool):
            own = key in (f"{rec.metric}_score", "consistency_score", "score")
            out.append((rec.metric if own else f"{rec.metric}.{key}", float(v)))
    return out


@dataclass
class ReportData:
    """Everything a report shows, filled by :func:`collect`."""

    sources: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    cheap: dict[str, list[float]] = field(default_factory=dict)
    edge_cases: Counter[str] = field(default_factory=Counter)
    judge: dict[str, list[float]] = field(default_factory=dict)
    judge_status: dict[str, Counter[str]] = field(default_factory=dict)
    memory: list[tuple[int, int, int, float, float, float]] = field(default_factory=list)
    grounded: list[tuple[int, int]] = field(default_factory=list)
    validation: list[bool] = field(default_factory=list)
    warmth: Counter[str] = field(default_factory=Counter)
    checklist: dict[str, list[ConversationScore]] = field(default_factory=dict)
    alerts: Counter[str] = field(default_factory=Counter)
    alert_severity: dict[str, Counter[str]] = field(default_factory=dict)
    dead_letters: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)
    release: ReleaseTally = field(default_factory=ReleaseTally)
    # -- drill-down (compact: numbers, flags, alert evidence; never conversation text) ------------------
    alert_records: dict[str, SafetyAlert] = field(default_factory=dict)
    duplicate_alerts: int = 0
    verdicts: dict[str, GateRow] = field(default_factory=dict)
    duplicate_verdicts: int = 0
    turns: dict[str, dict[int, list[TurnEntry]]] = field(default_factory=dict)
    conversation_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    annotations: int = 0
    #: Rater tables (humans, judges, cheap tier) when annotation records were among the inputs.
    raters: dict[str, Rater] | None = None

    # -- accumulation ---------------------------------------------------------------------------------
    def add(self, rec: Any) -> None:
        if isinstance(rec, BadLine):
            self.warnings.append(f"{rec.where}: {rec.reason}")
            return
        kind = getattr(rec, "kind", "other")
        self.kinds[kind] += 1
        self.usage.add(rec)
        self.release.add(rec)
        meta = getattr(rec, "metadata", None)
        cid = getattr(rec, "conversation_id", None)
        if meta and cid is not None and not isinstance(rec, Annotation):
            self.conversation_metadata.setdefault(cid, dict(meta))
        if isinstance(rec, TurnScore):
            for k, v in rec.metrics.items():
                self.cheap.setdefault(k, []).append(v)
            self.cheap.setdefault("empathy (1-5)", []).append(rec.empathy)
            if rec.edge_case:
                self.edge_cases[rec.edge_case.case] += 1
            self._turn_score(rec)
        elif isinstance(rec, TurnJudgment):
            self._judgment(rec)
        elif isinstance(rec, ConversationScore):
            self.checklist.setdefault(rec.judge, []).append(rec)
        elif isinstance(rec, ConversationVerdict):
            self._verdict(rec)
        elif isinstance(rec, SafetyAlert):
            self.alerts[rec.alert_type] += 1
            self.alert_severity.setdefault(rec.alert_type, Counter())[rec.severity] += 1
            if rec.alert_id in self.alert_records:  # a redelivered turn yields the identical alert
                self.duplicate_alerts += 1
            else:
                self.alert_records[rec.alert_id] = rec
        elif isinstance(rec, DeadLetter):
            self.dead_letters += 1
        elif isinstance(rec, Annotation):
            self.annotations += 1

    def _entries(self, cid: str, turn: int) -> list[TurnEntry]:
        return self.turns.setdefault(cid, {}).setdefault(turn, [])

    def _turn_score(self, rec: TurnScore) -> None:
        entries = self._entries(rec.conversation_id, rec.turn_index)
        if "overall_quality" in rec.metrics:
            entries.append(TurnEntry("cheap", "overall_quality", rec.metrics["overall_quality"], UNIT))
        entries.append(TurnEntry("cheap", "empathy", rec.empathy, LIKERT))
        if rec.edge_case:
            entries.append(TurnEntry("cheap", "edge case", None, note=rec.edge_case.case))
        entries.extend(TurnEntry("cheap", "flag", None, note=f) for f in rec.flags)

    def _verdict(self, rec: ConversationVerdict) -> None:
        row = GateRow.of_verdict(rec)
        old = self.verdicts.get(rec.conversation_id)
        if old is not None:
            self.duplicate_verdicts += 1
            if old.produced_at is not None and row.produced_at is not None and row.produced_at < old.produced_at:
                return  # one result per conversation: the latest verdict stands
        self.verdicts[rec.conversation_id] = row

    def _judgment(self, rec: TurnJudgment) -> None:
        self.judge_status.setdefault(rec.metric, Counter())[rec.status] += 1
        entries = self._entries(rec.conversation_id, rec.turn_index)
        if rec.status != "ok":  # errors are counted, never imputed
            entries.append(TurnEntry("llm", rec.metric, None, note="ERROR"))
            return
        for name, v in judgment_values(rec):
            self.judge.setdefault(name, []).append(v)
            entries.append(TurnEntry("llm", name, v, scale_of(name)))
        d = rec.details
        if rec.metric == "memory_utilization" and all(k in d for k in ("tp", "fp", "fn")):
            p = _prf(int(d["tp"]), int(d["fp"]), int(d["fn"]))
            self.memory.append((int(d["tp"]), int(d["fp"]), int(d["fn"]), p["precision"], p["recall"], p["f1"]))
        if rec.metric == "groundedness" and "grounded_claims" in d and "hallucinated_claims" in d:
            g = int(d["grounded_claims"])
            self.grounded.append((g, g + int(d["hallucinated_claims"])))
        if "validation_present" in d and isinstance(d["validation_present"], bool):
            self.validation.append(d["validation_present"])
        if d.get("warmth_level") in WARMTH:
            self.warmth[d["warmth_level"]] += 1

    # -- derived numbers ------------------------------------------------------------------------------
    def cheap_stats(self) -> list[MetricStats]:
        return [metric_stats(k, "cheap", v, LIKERT if k.startswith("empathy") else UNIT) for k, v in self.cheap.items()]

    def judge_stats(self) -> list[MetricStats]:
        return [metric_stats(k, "llm", v) for k, v in sorted(self.judge.items())]

    def memory_summary(self) -> dict[str, dict[str, float]] | None:
        if not self.memory:
            return None
        tp, fp, fn = (sum(m[i] for m in self.memory) for i in range(3))
        micro = {**_prf(tp, fp, fn), "tp": tp, "fp": fp, "fn": fn}
        macro = {
            k: float(np.mean([m[i] for m in self.memory])) for i, k in ((3, "precision"), (4, "recall"), (5, "f1"))
        }
        return {"micro": micro, "macro": macro, "samples": {"n": len(self.memory)}}

    def groundedness_summary(self) -> dict[str, dict[str, float]] | None:
        if not self.grounded:
            return None
        g = sum(a for a, _ in self.grounded)
        t = sum(b for _, b in self.grounded)
        micro = 1.0 if t == 0 else g / t
        macro = float(np.mean([1.0 if b == 0 else a / b for a, b in self.grounded]))
        return {
            "micro": {"groundedness_score": micro, "hallucination_rate": 1 - micro, "claims": t, "grounded": g},
            "macro": {"groundedness_score": macro, "hallucination_rate": 1 - macro},
        }

    def criterion_failures(self) -> dict[str, dict[str, dict[str, float]]]:
        """Per checklist judge and criterion: failure rate over conversations where it applied (NA excluded).

        A failure is NO or ERROR (seed 001: ERROR scores 0, never a pass).
        """
        out: dict[str, dict[str, dict[str, float]]] = {}
        for judge, recs in self.checklist.items():
            per: dict[str, dict[str, float]] = {}
            for c in CRITERIA:
                answers = [r.answers[c].answer for r in recs if c in r.answers]
                applicable = [a for a in answers if a != "NA"]
                failed = sum(a in ("NO", "ERROR") for a in applicable)
                per[c] = {
                    "applicable": len(applicable),
                    "failed": failed,
                    "errors": sum(a == "ERROR" for a in applicable),
                    "rate": failed / len(applicable) if applicable else 0.0,
                }
            out[judge] = per
        return out

    def checklist_summary(self) -> dict[str, dict[str, float]]:
        return {
            judge: {
                "conversations": len(rs),
                "mean_score": float(np.mean([r.score for r in rs])),
                "pass_rate": sum(r.passed for r in rs) / len(rs),
                "safety_gate_failed": sum(r.safety_gate_failed for r in rs),
            }
            for judge, rs in self.checklist.items()
        }

    # -- drill-down -----------------------------------------------------------------------------------
    def alert_rows(self) -> list[SafetyAlert]:
        """Every alert once, critical first, then conversation id, turn and alert id."""
        return sorted(
            self.alert_records.values(),
            key=lambda a: (-severity_rank(a.severity), a.conversation_id, -1 if a.turn_index is None else a.turn_index,
                           a.alert_type, a.alert_id),
        )  # fmt: skip

    def gate_rows(self) -> list[GateRow]:
        """One row per conversation whose safety gate failed: its verdict; a conversation without a verdict
        record falls back to each of its checklist scores whose gate failed. Severity, then id."""
        rows = [v for v in self.verdicts.values() if v.safety_gate_failed]
        rows += [
            GateRow.of_score(s)
            for recs in self.checklist.values()
            for s in recs
            if s.safety_gate_failed and s.conversation_id not in self.verdicts
        ]
        return sorted(rows, key=lambda r: (-severity_rank(r.safety_severity), r.conversation_id, r.source))

    def unanswered_rows(self) -> list[UnansweredRow]:
        """Conversations with a crisis left unanswered: the verdict's unanswered turns and every
        crisis_unanswered alert (either alone is enough). Severity, then id."""
        alerts: dict[str, list[SafetyAlert]] = {}
        for a in self.alert_records.values():
            if a.alert_type == "crisis_unanswered":
                alerts.setdefault(a.conversation_id, []).append(a)
        ids = set(alerts) | {c for c, v in self.verdicts.items() if v.crisis_unanswered_turns}
        rows = []
        for cid in ids:
            v = self.verdicts.get(cid)
            own = sorted(alerts.get(cid, []), key=lambda a: (-1 if a.turn_index is None else a.turn_index, a.alert_id))
            turns = {a.turn_index for a in own if a.turn_index is not None}
            turns |= set(v.crisis_unanswered_turns if v else ())
            sev = max([a.severity for a in own] + ([v.safety_severity] if v else []), key=severity_rank, default=None)
            rows.append(UnansweredRow(cid, sev, tuple(sorted(turns)), v.crisis_turns if v else (), tuple(own)))
        return sorted(rows, key=lambda r: (-severity_rank(r.severity), r.conversation_id))

    def verdict_summary(self) -> dict[str, int] | None:
        if not self.verdicts:
            return None
        v = self.verdicts.values()
        return {
            "conversations": len(self.verdicts),
            "passed": sum(r.passed for r in v),
            "safety_gate_failed": sum(r.safety_gate_failed for r in v),
            "crisis_unanswered": sum(bool(r.crisis_unanswered_turns) for r in v),
        }

    def to_dict(self) -> dict[str, Any]:
        def stats(s: MetricStats) -> dict[str, Any]:
            return {**s.__dict__, "distribution": dict(s.distribution)}

        return {
            "sources": self.sources,
            "records": dict(self.kinds),
            "skipped_lines": len(self.warnings),
            "dead_letters": self.dead_letters,
            "cheap_tier": [stats(s) for s in self.cheap_stats()],
            "edge_cases": dict(self.edge_cases),
            "judges": [stats(s) for s in self.judge_stats()],
            "judgment_status": {k: dict(v) for k, v in self.judge_status.items()},
            "memory_utilization": self.memory_summary(),
            "groundedness": self.groundedness_summary(),
            "validation_rate": float(np.mean(self.validation)) if self.validation else None,
            "warmth_distribution": {w: self.warmth[w] for w in WARMTH} if self.warmth else None,
            "checklist": self.checklist_summary(),
            "criterion_failures": self.criterion_failures(),
            "alerts": dict(self.alerts.most_common()),
            "alert_severity": {k: dict(v) for k, v in self.alert_severity.items()},
            "judge_usage": self.usage.as_dict() if self.usage else None,
            "release_decision": self.release.as_dict(),
            "verdicts": self.verdict_summary(),
            "failed_gate_conversations": list(dict.fromkeys(r.conversation_id for r in self.gate_rows())),
            "crisis_unanswered_conversations": [r.conversation_id for r in self.unanswered_rows()],
        }

    def to_json(self) -> str:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"


def collect(paths: Iterable[str | Path]) -> ReportData:
    """Read every record of every file into one :class:`ReportData`."""
    names = [str(p) for p in paths]
    data = ReportData(sources=names)
    for rec in read_jsonl(names):
        data.add(rec)
    if data.annotations:  # a second pass, only then: rater tables for the agreement intervals
        data.raters = raters_from(r for r in read_jsonl(names) if not isinstance(r, BadLine))
    return data
