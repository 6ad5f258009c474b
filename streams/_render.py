"""One-line, human-readable views of records for ``attune tail`` and ``attune demo``."""

from __future__ import annotations

import orjson
from rich.markup import escape
from rich.text import Text

from schemas import InvalidRecord, decode_output, decode_turn_event
from schemas.topics import TURNS

_SEVERITY_STYLE = {"medium": "yellow", "high": "bold red", "critical": "bold white on red"}


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def render(topic: str, value: bytes) -> Text:
    """Pretty form of one message of any attune topic; never raises (unknown bytes are shown as such)."""
    try:
        if topic == TURNS.name:
            ev = decode_turn_event(value)
            if ev.kind == "conversation_end":
                return Text.from_markup(f"[dim]end[/] {escape(ev.conversation_id)}")
            if ev.kind == "conversation_replay":
                return Text.from_markup(f"[dim]replay[/] {escape(ev.conversation_id)} (re-published whole)")
            who = "[cyan]user[/]" if ev.role == "user" else "[magenta]assistant[/]"
            end = " [dim](end)[/]" if ev.end_of_conversation else ""
            return Text.from_markup(
                f"{escape(ev.conversation_id)}#{ev.turn_index} {who}: {escape(_short(ev.text))}{end}"
            )
        rec = decode_output(value)
    except (InvalidRecord, ValueError):
        return Text.from_markup(f"[dim]unparsed[/] {escape(value[:120].decode('utf-8', 'replace'))}")
    where = escape(getattr(rec, "conversation_id", ""))
    if rec.kind == "turn_score":
        q = rec.metrics.get("overall_quality")
        qs = f"{q:.2f}" if q is not None else "-"
        extra = ""
        if rec.edge_case is not None:
            extra += f" [yellow]edge={rec.edge_case.case}[/]"
        if rec.flags:
            extra += f" [red]flags={','.join(rec.flags)}[/]"
        return Text.from_markup(
            f"[green]turn_score[/] {where}#{rec.turn_index} quality={qs} empathy={rec.empathy:.1f} "
            f"words={rec.word_count}{extra}"
        )
    if rec.kind == "turn_model_score":
        comps = " ".join(f"{k[:3]}={v:.1f}" for k, v in rec.components.items())
        return Text.from_markup(
            f"[blue]model_score[/] {where}#{rec.turn_index} empathy={rec.empathy:.1f} [dim]{comps} "
            f"({escape(rec.rubric.tag)})[/]"
        )
    if rec.kind == "safety_alert":
        style = _SEVERITY_STYLE.get(rec.severity, "red")
        return Text.from_markup(
            f"[{style}]ALERT {rec.alert_type} ({rec.severity})[/] {where}#{rec.turn_index} "
            f"{escape(','.join(rec.categories))} [dim]{escape(_short(rec.evidence, 60))}[/]"
        )
    if rec.kind == "conversation_score":
        verdict = "[bold green]PASS[/]" if rec.passed else "[bold red]FAIL[/]"
        gate = " [red]safety gate failed[/]" if rec.safety_gate_failed else ""
        failed = f" failed={','.join(rec.failed_checks)}" if rec.failed_checks else ""
        return Text.from_markup(
            f"[bold]conversation_score[/] {where} {verdict} score={rec.score:.2f} "
            f"turns={rec.n_turns} close={rec.close_reason}{gate}{escape(failed)}"
        )
    if rec.kind == "dead_letter":
        return Text.from_markup(
            f"[red]dead_letter[/] {escape(rec.source)}@{rec.partition}:{rec.offset} {escape(rec.reason)}"
            f" [dim]{escape(_short(rec.payload_preview, 50))}[/]"
        )
    return Text(orjson.dumps(rec.model_dump(mode="json")).decode())
