"""Seed 002's console summary, extended with the checklist and safety alerts (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._collect import LIKERT, MetricStats, ReportData, criterion_titles

BAR_WIDTH = 40
#: The console names at most this many conversations per drill-down list; the HTML has every row.
FIRST_IDS = 10


def _bar(count: float, total: float) -> str:
    return "█" * round(BAR_WIDTH * count / total) if total else ""


def _metric_block(console: Console, s: MetricStats) -> None:
    unit = "/5" if s.scale == LIKERT else ""
    outside = f"  [red]{s.out_of_range} outside the scale[/red]" if s.out_of_range else ""
    console.print(
        f"  [bold]{s.name}[/bold] (scale {s.scale}, n={s.n}): mean {s.mean:.3f}{unit}  median {s.median:.3f}  "
        f"min {s.min:.3f}  max {s.max:.3f}  std {s.std:.3f}{outside}",
        highlight=False,
    )
    for label, count in s.distribution:
        pct = count / s.n if s.n else 0.0
        console.print(f"    {label:<18} {count:>5} ({pct:6.1%}) {_bar(count, s.n)}", highlight=False)


def _section(console: Console, n: int, title: str) -> None:
    console.rule(f"[bold][{n}] {title}", align="left")


def _ids(ids: list[str]) -> str:
    shown = ", ".join(escape(i) for i in ids[:FIRST_IDS])
    more = f" … and {len(ids) - FIRST_IDS} more" if len(ids) > FIRST_IDS else ""
    return f"{shown}{more}"


def _drilldown(data: ReportData, console: Console, html_path: str | None) -> None:
    """The short version of the HTML drill-down: counts and the first conversation ids, worst first."""
    gates = list(dict.fromkeys(r.conversation_id for r in data.gate_rows()))
    unanswered = [r.conversation_id for r in data.unanswered_rows()]
    style = "red" if gates else "green"
    console.print(f"  [{style}]Failed safety gates: {len(gates)} conversation(s)[/{style}]", highlight=False)
    if gates:
        console.print(f"    {_ids(gates)}", highlight=False)
    style = "red" if unanswered else "green"
    console.print(f"  [{style}]Crisis left unanswered: {len(unanswered)} conversation(s)[/{style}]", highlight=False)
    if unanswered:
        console.print(f"    {_ids(unanswered)}", highlight=False)
    if gates or unanswered or data.alert_records:
        where = escape(html_path) if html_path else "the HTML report (--html OUT.html)"
        console.print(
            f"  Every row, with evidence, gate reasons and links to the turns, is in {where}, "
            f'section "Drill-down" (above: worst first, at most {FIRST_IDS} ids per list)',
            highlight=False,
        )


def render_console(data: ReportData, console: Console, html_path: str | None = None) -> None:
    """``html_path``: where the HTML report is written, named in the drill-down pointer (if any)."""
    d = data.to_dict()
    console.rule("[bold]ATTUNE EVALUATION REPORT")
    counts = ", ".join(f"{v} {k}" for k, v in sorted(data.kinds.items())) or "no records"
    console.print(f"Sources: {', '.join(data.sources)}\nRecords: {counts}", highlight=False)
    if data.warnings:
        console.print(f"[yellow]{len(data.warnings)} line(s) skipped (not records)[/yellow]")
    n = 0
    if data.cheap:
        n += 1
        _section(console, n, "CHEAP TIER (seed 004 heuristics 0-1, empathy signal 1-5)")
        for s in data.cheap_stats():
            _metric_block(console, s)
        if data.edge_cases:
            console.print(
                "  Edge cases (seed 003 §4): " + ", ".join(f"{k}: {v}" for k, v in data.edge_cases.most_common())
            )
    if data.judge_status:
        n += 1
        _section(console, n, "LLM JUDGES")
        t = Table(show_edge=False, box=None, pad_edge=False)
        t.add_column("metric")
        t.add_column("ok", justify="right")
        t.add_column("error (excluded)", justify="right")
        for metric, c in sorted(data.judge_status.items()):
            t.add_row(metric, str(c.get("ok", 0)), str(c.get("error", 0)))
        console.print(t)
        for s in data.judge_stats():
            _metric_block(console, s)
    if data.usage:
        n += 1
        _section(console, n, "JUDGE USAGE AND COST")
        t = Table(show_edge=False, box=None, pad_edge=False)
        for col in ("judge", "calls", "cache hits", "tokens in", "tokens out", "cost (USD)"):
            t.add_column(col, justify="left" if col == "judge" else "right")
        judges = [(j, x) for j, x in sorted(data.usage.by_judge.items()) if x.calls or x.cache_hits]
        for name, x in [*judges, ("total", data.usage.total)]:
            t.add_row(
                escape(name), str(x.calls), str(x.cache_hits), f"{x.input_tokens:,}", f"{x.output_tokens:,}",
                escape(x.cost_text()),
            )  # fmt: skip
        console.print(t)
        if data.usage.unpriced_judges:
            keys = ", ".join(f'[prices."{j}"]' for j in data.usage.unpriced_judges)
            console.print(f"  [yellow]Cost unknown: no price configured for {escape(keys)}[/yellow]")
    if data.release:
        n += 1
        _section(console, n, "RELEASE DECISION (seed 004, one per run)")
        console.print(f"  {escape(data.release.line())}", highlight=False)
    mem = d["memory_utilization"]
    if mem:
        n += 1
        _section(console, n, "MEMORY UTILIZATION ACCURACY")
        mi, ma = mem["micro"], mem["macro"]
        console.print(
            f"  Micro-averaged (recommended): precision {mi['precision']:.4f}  recall {mi['recall']:.4f}  "
            f"F1 {mi['f1']:.4f}  (TP {mi['tp']}, FP {mi['fp']}, FN {mi['fn']})\n"
            f"  Macro-averaged (reference):   precision {ma['precision']:.4f}  recall {ma['recall']:.4f}  "
            f"F1 {ma['f1']:.4f}  ({mem['samples']['n']} samples)",
            highlight=False,
        )
    gr = d["groundedness"]
    if gr:
        n += 1
        _section(console, n, "GROUNDEDNESS (HALLUCINATION RATE)")
        mi, ma = gr["micro"], gr["macro"]
        console.print(
            f"  Micro: groundedness {mi['groundedness_score']:.4f}, hallucination rate {mi['hallucination_rate']:.4f} "
            f"({mi['grounded']}/{mi['claims']} claims grounded)\n"
            f"  Macro: groundedness {ma['groundedness_score']:.4f}, hallucination rate {ma['hallucination_rate']:.4f}",
            highlight=False,
        )
    if d["validation_rate"] is not None or d["warmth_distribution"]:
        n += 1
        _section(console, n, "EMPATHY JUDGE: VALIDATION AND WARMTH")
        if d["validation_rate"] is not None:
            console.print(f"  Validation rate: {d['validation_rate']:.1%} ({len(data.validation)} judgments)")
        if d["warmth_distribution"]:
            total = sum(d["warmth_distribution"].values())
            console.print("  Warmth distribution:")
            for w, c in d["warmth_distribution"].items():
                console.print(f"    {w.title():<9} {c:>5} ({c / total:6.1%}) {_bar(c, total)}", highlight=False)
    if data.checklist:
        n += 1
        _section(console, n, "CHECKLIST (seed 001, 12 criteria)")
        titles = criterion_titles()
        failures = data.criterion_failures()
        for judge, c in d["checklist"].items():
            console.print(
                f"  [bold]{judge}[/bold]: {c['conversations']} conversations, mean score {c['mean_score']:.3f}, "
                f"pass rate {c['pass_rate']:.1%}, safety gate failed {c['safety_gate_failed']}",
                highlight=False,
            )
            t = Table(show_edge=False, box=None, pad_edge=False)
            for col in ("criterion", "failed", "applicable", "rate", ""):
                t.add_column(col, justify="right" if col in ("failed", "applicable", "rate") else "left")
            for crit, f in failures[judge].items():
                label = f"{crit} {titles.get(crit, '')}"[:60]
                t.add_row(
                    label,
                    str(f["failed"]),
                    str(f["applicable"]),
                    f"{f['rate']:.0%}",
                    _bar(f["failed"], f["applicable"] or 1)[:20],
                )
            console.print(t)
    n += 1
    _section(console, n, "SAFETY ALERTS")
    if data.alerts:
        for a, count in data.alerts.most_common():
            sev = ", ".join(f"{k} {v}" for k, v in sorted(data.alert_severity[a].items()))
            console.print(f"  [red]{a}[/red]: {count} ({sev})", highlight=False)
    else:
        console.print("  none")
    _drilldown(data, console, html_path)
    if data.dead_letters:
        console.print(f"[red]Rejected inputs (dead letters): {data.dead_letters}[/red]")
