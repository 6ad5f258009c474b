"""A running summary of output records, shared by ``attune evaluate`` and ``attune demo``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schemas import ConversationScore, DeadLetter, OutputRecord, SafetyAlert, TurnJudgment, TurnScore

from ._release import ReleaseTally
from ._usage import UsageTotals


@dataclass
class Summary:
    """Counts, mean scores, alerts by type and checklist pass rate over any stream of records."""

    kinds: Counter[str] = field(default_factory=Counter)
    alerts: Counter[str] = field(default_factory=Counter)
    turn_metrics: dict[str, list[float]] = field(default_factory=dict)
    checklist: dict[str, list[ConversationScore]] = field(default_factory=dict)
    failed_criteria: Counter[str] = field(default_factory=Counter)
    judgment_status: Counter[str] = field(default_factory=Counter)
    usage: UsageTotals = field(default_factory=UsageTotals)
    release: ReleaseTally = field(default_factory=ReleaseTally)
    rejected: int = 0

    def add(self, rec: OutputRecord) -> None:
        self.kinds[rec.kind] += 1
        self.usage.add(rec)
        self.release.add(rec)
        if isinstance(rec, TurnScore):
            for k, v in rec.metrics.items():
                self.turn_metrics.setdefault(k, []).append(v)
            self.turn_metrics.setdefault("empathy (1-5)", []).append(rec.empathy)
        elif isinstance(rec, ConversationScore):
            self.checklist.setdefault(rec.judge, []).append(rec)
            self.failed_criteria.update(rec.failed_checks)
        elif isinstance(rec, SafetyAlert):
            self.alerts[f"{rec.alert_type} ({rec.severity})"] += 1
        elif isinstance(rec, TurnJudgment):
            self.judgment_status[rec.status] += 1
        elif isinstance(rec, DeadLetter):  # verdicts and model scores are counted in ``kinds`` only
            self.rejected += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": dict(self.kinds),
            "rejected": self.rejected,
            "mean_turn_metrics": {k: round(fmean(v), 4) for k, v in self.turn_metrics.items()},
            "checklist": {
                judge: {
                    "conversations": len(rs),
                    "mean_score": round(fmean(r.score for r in rs), 4),
                    "pass_rate": round(sum(r.passed for r in rs) / len(rs), 4),
                    "safety_gate_failed": sum(r.safety_gate_failed for r in rs),
                }
                for judge, rs in self.checklist.items()
            },
            "failed_criteria": dict(self.failed_criteria.most_common()),
            "alerts": dict(self.alerts.most_common()),
            "judgments": dict(self.judgment_status),
            "judge_usage": self.usage.as_dict() if self.usage else None,
            "release_decision": self.release.as_dict(),
        }

    def render(self, console: Console) -> None:
        d = self.as_dict()
        counts = ", ".join(f"{v} {k}" for k, v in sorted(self.kinds.items())) or "no records"
        console.print(f"[bold]Records:[/bold] {counts}")
        if self.turn_metrics:
            t = Table(title="Cheap tier, mean per assistant turn (seed 004, 0-1; empathy 1-5)", title_justify="left")
            t.add_column("metric")
            t.add_column("mean", justify="right")
            t.add_column("n", justify="right")
            for k, v in self.turn_metrics.items():
                t.add_row(k, f"{fmean(v):.3f}", str(len(v)))
            console.print(t)
        for judge, c in d["checklist"].items():
            console.print(
                f"[bold]Checklist ({judge}):[/bold] {c['conversations']} conversations, mean score "
                f"{c['mean_score']:.3f}, pass rate {c['pass_rate']:.0%}, safety gate failed {c['safety_gate_failed']}"
            )
        if self.failed_criteria:
            top = ", ".join(f"{k}×{v}" for k, v in self.failed_criteria.most_common(6))
            console.print(f"[bold]Most failed criteria:[/bold] {top}")
        if self.alerts:
            console.print(
                "[bold red]Safety alerts:[/bold red] " + ", ".join(f"{k}: {v}" for k, v in self.alerts.items())
            )
        else:
            console.print("[bold]Safety alerts:[/bold] none")
        if self.judgment_status:
            console.print("[bold]Judgments:[/bold] " + ", ".join(f"{k}: {v}" for k, v in self.judgment_status.items()))
        if self.usage:
            console.print(f"[bold]Judge usage:[/bold] {escape(self.usage.line())}", highlight=False)
        if self.release:
            console.print(f"[bold]Release decision (seed 004):[/bold] {escape(self.release.line())}", highlight=False)
        if self.rejected:
            console.print(f"[bold red]Rejected inputs:[/bold red] {self.rejected}")
