"""The HTML drill-down: which conversations failed the safety gate, which left a crisis unanswered, every
alert with its evidence, and a section per linked conversation listing its turns' records.

Anchors are stable: ``#conv-<id>`` per conversation and ``#conv-<id>-turn-<n>`` per turn, the id
percent-encoded (with ``-`` encoded too, so no id can produce another conversation's turn anchor).
Every value that came from the input (ids, evidence, reasons, metadata) is HTML-escaped. Nothing here
shows conversation text: the records carry none beyond an alert's short evidence cue.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from schemas import SafetyAlert

from ._collect import (
    COSINE,
    EVIDENCE_MAX,
    LIKERT,
    ROW_CAP,
    UNIT,
    GateRow,
    ReportData,
    TurnEntry,
    UnansweredRow,
    severity_rank,
)

esc = html.escape


def anchor(conversation_id: str, turn: int | None = None) -> str:
    """``conv-<id>`` / ``conv-<id>-turn-<n>``; the id percent-encoded, ``-`` included (unambiguous)."""
    q = quote(conversation_id, safe="").replace("-", "%2D")
    return f"conv-{q}" if turn is None else f"conv-{q}-turn-{turn}"


def conv_link(cid: str) -> str:
    return f"<a href='#{esc(anchor(cid))}'><code>{esc(cid)}</code></a>"


def turn_link(cid: str, turn: int | None) -> str:
    if turn is None:
        return "<span class='muted'>conversation</span>"
    return f"<a href='#{esc(anchor(cid, turn))}'>{turn}</a>"


def turn_links(cid: str, turns: Iterable[int]) -> str:
    return ", ".join(turn_link(cid, t) for t in turns) or "–"


def metadata_text(meta: Mapping[str, Any] | None) -> str:
    if not meta:
        return "–"
    return "; ".join(f"<code>{esc(str(k))}={esc(str(v))}</code>" for k, v in sorted(meta.items()))


def evidence_text(evidence: str) -> str:
    if not evidence:
        return "–"
    if len(evidence) > EVIDENCE_MAX:
        return f"{esc(evidence[:EVIDENCE_MAX])}… <span class='muted'>(clipped to {EVIDENCE_MAX} characters)</span>"
    return esc(evidence)


def severity_text(severity: str | None) -> str:
    if severity is None:
        return "<span class='muted'>none</span>"
    cls = "bad" if severity in ("critical", "high") else ""
    return f"<span class='sev {cls}'>{esc(severity)}</span>"


def value_text(e: TurnEntry) -> str:
    """A value labelled with its own declared scale: never a 0-1 score shown as if out of 5."""
    if e.value is None:
        return (
            f"{esc(e.name)}: <b class='bad'>{esc(e.note)}</b>" if e.note == "ERROR" else f"{esc(e.name)}: {esc(e.note)}"
        )
    if e.scale == LIKERT:
        num = f"{e.value:g}" if float(e.value).is_integer() else f"{e.value:.2f}"
    elif e.scale in (UNIT, COSINE):
        num = f"{e.value:.2f}"
    else:
        num = f"{e.value:g}"
    scale = e.scale if e.scale in (LIKERT, UNIT, COSINE) else "undeclared scale"
    return f"{esc(e.name)} {num} <span class='scale'>({esc(scale)})</span>"


def _cap_note(total: int, what: str, where: str) -> str:
    if total <= ROW_CAP:
        return ""
    return (
        f"<p class='bad'>Showing the first {ROW_CAP} of {total} {what} (cap {ROW_CAP}, in the order above); the other "
        f"{total - ROW_CAP} are not listed here: they are in the input records ({esc(where)}).</p>"
    )


def _table(head: Iterable[str], rows: Iterable[str]) -> str:
    cols = "".join(f"<th>{h}</th>" for h in head)
    return f"<table class='drill'><tr>{cols}</tr>{''.join(rows)}</table>"


def _gate_table(rows: list[GateRow], meta: Mapping[str, Mapping[str, Any]]) -> str:
    body = (
        f"<tr><td>{conv_link(r.conversation_id)}</td><td>{severity_text(r.safety_severity)}</td>"
        f"<td>{'<br>'.join(esc(x) for x in r.gate_reasons) or '–'}</td>"
        f"<td>{turn_links(r.conversation_id, r.crisis_turns)}</td>"
        f"<td>{turn_links(r.conversation_id, r.crisis_unanswered_turns)}</td>"
        f"<td>{r.score:.3f} <span class='scale'>(0-1)</span></td><td>{esc(', '.join(r.tiers))}"
        + (f" · {esc(r.judge)}" if r.judge else "")
        + (f" <span class='muted'>({esc(r.source)})</span>" if r.source != "conversation_verdict" else "")
        + f"</td><td>{metadata_text(meta.get(r.conversation_id))}</td></tr>"
        for r in rows
    )
    head = ("conversation", "severity", "gate reasons", "crisis turns", "unanswered", "score", "tiers", "metadata")
    return _table(head, body)


def _alert_brief(a: SafetyAlert) -> str:
    return (
        f"{severity_text(a.severity)} {esc(a.alert_type)} <code>{esc(a.alert_id)}</code>: {evidence_text(a.evidence)}"
    )


def _unanswered_table(rows: list[UnansweredRow], meta: Mapping[str, Mapping[str, Any]]) -> str:
    body = (
        f"<tr><td>{conv_link(r.conversation_id)}</td><td>{severity_text(r.severity)}</td>"
        f"<td>{turn_links(r.conversation_id, r.unanswered_turns)}</td>"
        f"<td>{turn_links(r.conversation_id, r.crisis_turns)}</td>"
        f"<td>{'<br>'.join(_alert_brief(a) for a in r.alerts) or '–'}</td>"
        f"<td>{metadata_text(meta.get(r.conversation_id))}</td></tr>"
        for r in rows
    )
    head = ("conversation", "severity", "unanswered replies (turn)", "crisis turns", "alerts: id, evidence", "metadata")
    return _table(head, body)


def _detector(a: SafetyAlert) -> str:
    parts = [esc(a.detector)] if a.detector else []
    if a.cssrs_category:
        parts.append(f"C-SSRS {esc(a.cssrs_category)}")
    if a.probability is not None:
        parts.append(f"p={a.probability:.2f} <span class='scale'>(0-1)</span>")
    return ", ".join(parts) or "–"


def _alert_table(alerts: list[SafetyAlert]) -> str:
    body = (
        f"<tr><td>{severity_text(a.severity)}</td><td>{esc(a.alert_type)}</td><td>{conv_link(a.conversation_id)}</td>"
        f"<td>{turn_link(a.conversation_id, a.turn_index)}</td><td><code>{esc(a.alert_id)}</code></td>"
        f"<td>{evidence_text(a.evidence)}</td><td>{esc(', '.join(a.categories)) or '–'}</td><td>{_detector(a)}</td>"
        f"<td>{esc(a.source)}</td><td>{metadata_text(a.metadata)}</td></tr>"
        for a in alerts
    )
    head = ("severity", "type", "conversation", "turn", "alert id", "evidence", "categories", "detector", "source",
            "metadata")  # fmt: skip
    return _table(head, body)


def _conversation_section(data: ReportData, cid: str, alerts: list[SafetyAlert]) -> str:
    v = data.verdicts.get(cid)
    turns = data.turns.get(cid, {})
    by_turn: dict[int | None, list[SafetyAlert]] = {}
    for a in alerts:
        by_turn.setdefault(a.turn_index, []).append(a)
    linked = {a.turn_index for a in alerts if a.turn_index is not None}
    if v is not None:
        linked |= set(v.crisis_turns) | set(v.crisis_unanswered_turns)
    others = sorted(set(turns) - linked)
    keep = set(linked) | set(others[: max(0, ROW_CAP - len(linked))])
    left = len(set(turns) | linked) - len(keep)
    out = [f"<section class='conv' id='{esc(anchor(cid))}'><h4>Conversation <code>{esc(cid)}</code></h4>"]
    out.append(f"<p>Metadata: {metadata_text(data.conversation_metadata.get(cid))}</p>")
    if v is None:
        out.append("<p class='muted'>No conversation_verdict record for this conversation.</p>")
    else:
        status = "<b class='good'>passed</b>" if v.passed else "<b class='bad'>failed</b>"
        gate = "<b class='bad'>failed</b>: " + esc("; ".join(v.gate_reasons)) if v.safety_gate_failed else "holds"
        out.append(
            f"<p>Verdict: {status}, score {v.score:.3f} <span class='scale'>(0-1)</span>; safety gate {gate}; "
            f"severity {severity_text(v.safety_severity)}; crisis turns {turn_links(cid, v.crisis_turns)}; "
            f"unanswered {turn_links(cid, v.crisis_unanswered_turns)}; tiers {esc(', '.join(v.tiers))}"
            + (f" ({esc(v.judge)}, {esc(v.judge_status)})" if v.judge else "")
            + (f"; {v.disagreements} tier disagreement(s)" if v.disagreements else "")
            + "</p>"
        )
    if by_turn.get(None):
        out.append("<p>Conversation-level alerts:<br>" + "<br>".join(_alert_brief(a) for a in by_turn[None]) + "</p>")
    rows = []
    for t in sorted(keep):
        entries = turns.get(t, [])
        cheap = " · ".join(value_text(e) for e in entries if e.tier == "cheap") or "–"
        llm = " · ".join(value_text(e) for e in entries if e.tier == "llm") or "–"
        here = "<br>".join(_alert_brief(a) for a in by_turn.get(t, [])) or "–"
        rows.append(
            f"<tr id='{esc(anchor(cid, t))}'><td>turn {t}</td><td>{cheap}</td><td>{llm}</td><td>{here}</td></tr>"
        )
    if rows:
        out.append(_table(("turn", "cheap tier", "judge tier", "alerts: id, evidence"), rows))
    else:
        out.append("<p class='muted'>No turn records for this conversation in the inputs.</p>")
    if left:
        out.append(
            f"<p class='bad'>{left} more turn(s) of this conversation not listed (cap {ROW_CAP} turns; every "
            "turn with an alert or a crisis finding is listed).</p>"
        )
    out.append("<p class='muted'><a href='#drill-down'>back to the drill-down</a></p></section>")
    return "".join(out)


def drilldown_summary(data: ReportData) -> str:
    """One line under the cards: the counts, each linking to its drill-down list."""
    return (
        f"<p>Drill-down: <a href='#failed-gates'>{len(data.gate_rows())} failed safety gate(s)</a> · "
        f"<a href='#crisis-unanswered'>{len(data.unanswered_rows())} conversation(s) with a crisis left "
        f"unanswered</a> · <a href='#alert-rows'>{len(data.alert_records)} alert(s)</a></p>"
    )


def drilldown_section(data: ReportData) -> str:
    gates, unanswered, alerts = data.gate_rows(), data.unanswered_rows(), data.alert_rows()
    meta = data.conversation_metadata
    out = [
        "<h2 id='drill-down'>Drill-down</h2><p class='muted'>Rows sorted by severity (critical first), then "
        f"conversation id. A list longer than {ROW_CAP} rows shows its first {ROW_CAP} and says how many more "
        "there are. Ids and turn numbers link to the conversation's section below, which lists its turns' records. "
        "Evidence is the short cue the alert carries; the report shows no conversation text. Each score is labelled "
        "with its own scale.</p>"
    ]
    out.append(f"<h3 id='failed-gates'>Failed safety gates ({len(gates)} conversation(s))</h3>")
    if gates:
        out.append(_gate_table(gates[:ROW_CAP], meta) + _cap_note(len(gates), "conversations", "conversation_verdict"))
    else:
        out.append("<p>No conversation failed the safety gate.</p>")
    out.append(f"<h3 id='crisis-unanswered'>Crisis left unanswered ({len(unanswered)} conversation(s))</h3>")
    if unanswered:
        out.append(
            _unanswered_table(unanswered[:ROW_CAP], meta)
            + _cap_note(len(unanswered), "conversations", "conversation_verdict, crisis_unanswered alerts")
        )
    else:
        out.append("<p>No crisis was left unanswered.</p>")
    dup = (
        f"; {data.duplicate_alerts} duplicate alert record(s) (same alert_id) shown once"
        if data.duplicate_alerts
        else ""
    )
    out.append(f"<h3 id='alert-rows'>Every safety alert ({len(alerts)}{dup})</h3>")
    if alerts:
        out.append(_alert_table(alerts[:ROW_CAP]) + _cap_note(len(alerts), "alerts", "safety_alert"))
    else:
        out.append("<p>No safety alerts.</p>")

    linked: dict[str, int] = {}
    for cid, sev in (
        *((r.conversation_id, r.safety_severity) for r in gates[:ROW_CAP]),
        *((r.conversation_id, r.severity) for r in unanswered[:ROW_CAP]),
        *((a.conversation_id, a.severity) for a in alerts[:ROW_CAP]),
    ):
        linked[cid] = max(linked.get(cid, -2), severity_rank(sev))
    if linked:
        per_conv: dict[str, list[SafetyAlert]] = {}
        for a in alerts:
            if a.conversation_id in linked:
                per_conv.setdefault(a.conversation_id, []).append(a)
        out.append(
            f"<h3 id='conversations'>Conversations ({len(linked)} linked above)</h3><p class='muted'>Each lists the "
            "records of its turns: cheap-tier scores, judge-tier scores (ERROR when a judge failed) and alerts.</p>"
        )
        for cid in sorted(linked, key=lambda c: (-linked[c], c)):
            out.append(_conversation_section(data, cid, per_conv.get(cid, [])))
    return "".join(out)
