"""A self-contained HTML report: tables plus matplotlib plots inlined as SVG (no external files).

matplotlib is optional: without it the report still has every table and says plots are unavailable.
"""

from __future__ import annotations

import html
import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..calibration import DIMENSIONS, KAPPA_TARGET, AgreementReport, PairResult, Rater
from ..calibration._intervals import RESAMPLES, SEED, Interval, cluster_share_interval, kappas, mean_kappa_interval
from ..calibration._intervals import proportion_interval as _proportion
from ._collect import LIKERT, SCALE_AXIS, MetricStats, ReportData, criterion_titles
from ._drill import drilldown_section, drilldown_summary

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
    HAVE_MPL = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_MPL = False

ACCENT = "#3b6ea5"
#: Compact tick labels for seed 004's quality levels (the full names overlap under narrow bars).
_SHORT = {
    "unacceptable <0.3": "<.3",
    "poor 0.3-0.5": ".3-.5",
    "adequate 0.5-0.7": ".5-.7",
    "good 0.7-0.9": ".7-.9",
    "excellent 0.9-1.0": "≥.9",
    "low <0.5": "<.5",
    "moderate 0.5-0.8": ".5-.8",
    "high 0.8-1.0": "≥.8",
}
FAIL = "#c2452d"

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px 32px 64px}
h1{font-size:26px;margin:8px 0 4px}
h2{font-size:19px;margin:36px 0 10px;border-bottom:2px solid #dfe3ea;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}h4{font-size:14px;margin:10px 0 4px}.muted{color:#667085;font-size:13px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid #e3e6ec;border-radius:8px;padding:10px 16px;min-width:120px}
.card b{display:block;font-size:22px}.card span{color:#667085;font-size:12px}
table{border-collapse:collapse;background:#fff;margin:8px 0 12px;font-size:13px}
th,td{border:1px solid #e3e6ec;padding:4px 9px;text-align:right}th{background:#eef1f5}
td:first-child,th:first-child{text-align:left}
.bad{color:#b42318;font-weight:600}.good{color:#067647}
figure{margin:10px 0;background:#fff;border:1px solid #e3e6ec;border-radius:8px;padding:8px;overflow-x:auto}
figure svg{max-width:100%;height:auto}
table.drill td,table.drill th{text-align:left;vertical-align:top}
code{font-size:12px;background:#eef1f5;padding:0 3px;border-radius:3px;word-break:break-all}
.scale{color:#667085;font-size:11px}.sev{font-weight:600}
section.conv{background:#fff;border:1px solid #e3e6ec;border-radius:8px;padding:4px 14px;margin:12px 0}
section.conv:target,tr:target{background:#fff6d6}
"""


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _figure(svg: str | None, caption: str) -> str:
    if svg is None:
        return f'<p class="muted">Plot unavailable (matplotlib not installed): {html.escape(caption)}</p>'
    return f"<figure>{svg}<figcaption class='muted'>{html.escape(caption)}</figcaption></figure>"


def _distribution_figure(stats: list[MetricStats]) -> Any:
    """One bar chart per metric over the bins of its own scale (1-5 scores, seed 004 levels for 0-1,
    seed 002 bands for cosine), labelled with that scale: never a shared axis across scales."""
    shown = [s for s in stats if s.distribution]  # an undeclared scale has no bins to draw
    cols = 3
    rows = max(1, -(-len(shown) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(11, 2.8 * rows), squeeze=False)
    for ax, s in zip(axes.flat, shown, strict=False):
        labels = [label for label, _ in reversed(s.distribution)]
        counts = [c for _, c in reversed(s.distribution)]
        ax.bar(range(len(counts)), counts, color=ACCENT)
        short = [_SHORT.get(lab, lab.replace("Score ", "")) for lab in labels]
        ax.set_xticks(range(len(counts)), short, rotation=0)
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        unit = "/5" if s.scale == LIKERT else ""
        ax.set_title(f"{s.name}  (mean {s.mean:.2f}{unit}, n={s.n})", fontsize=9)
        ax.set_xlabel(SCALE_AXIS.get(s.scale, s.scale), fontsize=8)
        ax.set_ylabel("turns")
    for ax in list(axes.flat)[len(shown) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def _distribution_grid(stats: list[MetricStats]) -> str | None:
    if not HAVE_MPL or not any(s.distribution for s in stats):
        return None
    return _svg(_distribution_figure(stats))


def _hbar(labels: list[str], values: list[float], xlabel: str, *, percent: bool = False, color: str = ACCENT):
    if not HAVE_MPL or not labels:
        return None
    fig, ax = plt.subplots(figsize=(10, 0.34 * len(labels) + 0.9))
    y = list(range(len(labels)))[::-1]
    ax.barh(y, values, color=color)
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    if not percent:
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    if percent:
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    for yi, v in zip(y, values, strict=True):
        ax.text(v, yi, f" {v:.0%}" if percent else f" {v:g}", va="center", fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def _heatmaps(report: AgreementReport) -> str | None:
    if not HAVE_MPL or not report.pairs:
        return None
    dims = [d for d in DIMENSIONS if any(p.dimension == d and p.kappa is not None for p in report.pairs)]
    if not dims:
        return None
    cols = min(3, len(dims))
    rows = -(-len(dims) // cols)
    size = max(3.2, 0.55 * len(report.raters) + 1.6)
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols, size * rows), squeeze=False, layout="constrained")
    image = None
    for ax, dim in zip(axes.flat, dims, strict=False):
        # Only raters that share items with someone on this dimension: empty rows say nothing.
        paired = {n for p in report.pairs if p.dimension == dim and p.kappa is not None for n in (p.a, p.b)}
        names = [r.name for r in report.raters if r.name in paired]
        idx = {n: i for i, n in enumerate(names)}
        grid = [[float("nan")] * len(names) for _ in names]
        for i in range(len(names)):
            grid[i][i] = 1.0
        for p in report.pairs:
            if p.dimension == dim and p.kappa is not None:
                grid[idx[p.a]][idx[p.b]] = grid[idx[p.b]][idx[p.a]] = p.kappa
        image = ax.imshow(grid, cmap="RdYlGn", vmin=-0.2, vmax=1.0)
        ax.set_xticks(range(len(names)), names, rotation=40, ha="right")
        ax.set_yticks(range(len(names)), names)
        ax.set_title(dim)
        for i in range(len(names)):
            for j in range(len(names)):
                v = grid[i][j]
                if i != j and v == v:
                    ax.text(
                        j,
                        i,
                        f"{v:.2f}",
                        ha="center",
                        va="center",
                        fontsize=8,
                        weight="bold" if v < KAPPA_TARGET else None,
                    )
        ax.spines[:].set_visible(False)
    for ax in list(axes.flat)[len(dims) :]:
        ax.axis("off")
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.6, label="quadratic-weighted kappa")
    return _svg(fig)


def _stats_table(stats: list[MetricStats]) -> str:
    def scale(s: MetricStats) -> str:
        out = f" <span class='bad'>({s.out_of_range} outside)</span>" if s.out_of_range else ""
        return f"<span class='bad'>{s.scale}</span>" if s.scale == "undeclared" else s.scale + out

    rows = "".join(
        f"<tr><td>{html.escape(s.name)}</td><td>{scale(s)}</td><td>{s.n}</td><td>{s.mean:.3f}</td>"
        f"<td>{s.median:.3f}</td><td>{s.min:.3f}</td><td>{s.max:.3f}</td><td>{s.std:.3f}</td></tr>"
        for s in stats
    )
    return (
        "<table><tr><th>metric</th><th>scale</th><th>n</th><th>mean</th><th>median</th><th>min</th><th>max</th>"
        f"<th>std</th></tr>{rows}</table>"
    )


def _usage_section(data: ReportData) -> str:
    """Calls, cache hits, tokens and cost of the run, in total and per judge; unknown cost said so."""
    u = data.usage

    def cost(t: Any) -> str:
        if t.unpriced_records:
            return f"<span class='bad'>unknown ({t.unpriced_calls} unpriced call(s))</span>"
        return f"${t.priced_cost_usd:.4f}"

    def row(name: str, t: Any) -> str:
        return (
            f"<tr><td>{html.escape(name)}</td><td>{t.calls}</td><td>{t.cache_hits}</td><td>{t.input_tokens:,}</td>"
            f"<td>{t.output_tokens:,}</td><td>{cost(t)}</td></tr>"
        )

    judges = [(j, t) for j, t in sorted(u.by_judge.items()) if t.calls or t.cache_hits]
    rows = "".join(row(j, t) for j, t in judges) + row("total", u.total)
    note = ""
    if u.unpriced_judges:
        keys = ", ".join(f'[prices."{html.escape(j)}"]' for j in u.unpriced_judges)
        note = f"<p class='bad'>Cost unknown: no price configured for {keys} (judge TOML).</p>"
    return (
        "<h3>Judge usage and cost</h3><p class='muted'>From the records' usage: calls are HTTP attempts (retries "
        "included); cache hits cost nothing.</p><table><tr><th>judge</th><th>calls</th><th>cache hits</th>"
        f"<th>tokens in</th><th>tokens out</th><th>cost (USD)</th></tr>{rows}</table>{note}"
    )


def _release_section(data: ReportData) -> str:
    d = data.release.as_dict()
    if d is None:
        return ""
    esc = html.escape
    errors = f" {d['errors_excluded']} voice_judge ERROR(s) are not included." if d["errors_excluded"] else ""
    if d["decision"] is None:
        body = f"<p class='bad'>No decision: {esc(d['why'])}.{errors}</p>"
    else:
        cls = {"deploy": "good", "ab_test": "", "revise": "bad"}[d["decision"]]
        body = (
            f"<p>Decision: <b class='{cls}'>{esc(str(d['decision']).upper())}</b>, average voice_judge score "
            f"<b>{d['average']:.3f}</b> over {d['n']} judged turn(s).{errors}</p>"
            f"<p class='muted'>{esc(d['note'])}.</p>"
        )
    return f"<h3>Release decision (seed 004)</h3>{body}<p class='muted'>{esc(d['rule'])}; one decision per run.</p>"


def _f(x: float | None, spec: str = ".2f") -> str:
    return "–" if x is None else format(x, spec)


def _codes(raters: dict[str, Rater], pairs: list[tuple[str, str]], dim: str):
    """Code arrays (0-4, -1 = not rated) over the items any of ``pairs`` rated together, or None."""
    if any(a not in raters or b not in raters for a, b in pairs):
        return None
    shared = [raters[a].ratings[dim].keys() & raters[b].ratings[dim].keys() for a, b in pairs]
    keys = sorted(set().union(*shared))

    def code(name: str) -> np.ndarray:
        r = raters[name].ratings[dim]
        return np.array([r[k] - 1 if k in r else -1 for k in keys], dtype=np.int64)

    return [(code(a), code(b)) for a, b in pairs], keys


def _pair_interval(raters: dict[str, Rater] | None, p: PairResult) -> Interval | str | None:
    """The pair's kappa interval over the items both rated; a reason string when the records given to
    the report do not reproduce the pair of agreement.json (then no interval is shown)."""
    if p.kappa is None:
        return None
    if raters is None:  # agreement.json's own interval (attune agreement computes it from the ratings)
        return Interval(p.kappa_ci[0], p.kappa_ci[1], p.n) if p.kappa_ci else None
    got = _codes(raters, [(p.a, p.b)], p.dimension)
    if got is None:
        return "raters not in the records"
    (pair,), keys = got
    point = kappas(pair[0][None, :], pair[1][None, :])[0]
    if len(keys) != p.n or not abs(point - p.kappa) < 1e-6:
        return f"records give n={len(keys)}, kappa {point:.2f}: not the agreement.json pair"
    return mean_kappa_interval([pair])


def _ci(x: Interval | str | None, spec: str = ".2f") -> str:
    if isinstance(x, Interval):
        return x.text(spec)
    return "–" if x is None else f"<span class='bad'>{html.escape(x)}</span>"


def _agreement_section(report: AgreementReport, raters: dict[str, Rater] | None = None) -> str:
    esc = html.escape
    parts = ["<h2>Agreement</h2>"]
    parts.append(
        _figure(
            _heatmaps(report), f"Kappa per rater pair and dimension; bold values are under the {KAPPA_TARGET} target."
        )
    )
    how = (
        f"95% percentile-bootstrap intervals ({RESAMPLES:,} resamples of the items, seed {SEED}; n = items resampled)."
    )
    if raters is None and any(p.kappa is not None and p.kappa_ci is None for p in report.pairs):
        how += (
            " This agreement.json has no kappa intervals (written before attune agreement computed them): run "
            "attune agreement again, or give attune report the annotation records too (<code>attune report "
            "scored.jsonl annotations.jsonl --agreement agreement.json --html ...</code>). Shares of duplicates "
            "have intervals either way (a share and its n are enough)."
        )
    parts.append(f"<p class='muted'>{how}</p>")
    if report.pairs:
        rows = []
        for p in report.pairs:
            cls = "bad" if p.below_target else "good"
            rows.append(
                f"<tr><td>{esc(p.a)} ~ {esc(p.b)}</td><td>{esc(p.kind)}</td><td>{esc(p.dimension)}</td><td>{p.n}</td>"
                f"<td class='{cls}'>{_f(p.kappa)}</td><td>{_ci(_pair_interval(raters, p))}</td>"
                f"<td>{_f(p.spearman)}</td></tr>"
            )
        parts.append(
            "<h3>Kappa per rater pair (quadratic-weighted, 1-5)</h3><table><tr><th>pair</th><th>kind</th>"
            "<th>dimension</th><th>n items</th><th>kappa</th><th>95% CI</th><th>Spearman rho</th></tr>"
            + "".join(rows)
            + "</table>"
        )
    dim_rows = []
    for d, f in report.dimensions.items():
        hh = [p for p in report.pairs if p.dimension == d and p.kind == "human-human" and p.kappa is not None]
        ci: Interval | str | None = None
        n_items = "–"
        if raters is None and f.mean_kappa_ci:
            ci = Interval(f.mean_kappa_ci[0], f.mean_kappa_ci[1], f.mean_kappa_items or 0)
            n_items = str(f.mean_kappa_items)
        elif raters is not None and hh:
            got = _codes(raters, [(p.a, p.b) for p in hh], d)
            if got is None:
                ci = "raters not in the records"
            else:
                ci = mean_kappa_interval(got[0])
                n_items = str(len(got[1]))
        dim_rows.append(
            f"<tr><td>{esc(d)}</td><td>{f.human_human_pairs}</td><td>{n_items}</td><td>{_f(f.mean_kappa)}</td>"
            f"<td>{_ci(ci)}</td><td class='{'bad' if f.flagged else 'good'}'>{'FLAG' if f.flagged else 'ok'}</td>"
            f"<td>{esc(f.reason)}</td></tr>"
        )
    parts.append(
        "<h3>Per dimension (human-human pairs)</h3><table><tr><th>dimension</th><th>human pairs</th><th>n items</th>"
        "<th>mean kappa</th><th>95% CI</th><th>status</th><th>why</th></tr>" + "".join(dim_rows) + "</table>"
    )
    if report.self_consistency:
        head = "".join(f"<th>{d}</th>" for d in DIMENSIONS)
        body = []
        for s in report.self_consistency:
            r = raters.get(s.annotator) if raters else None
            cells = []
            for d in DIMENSIONS:
                share = s.per_dimension[d]
                n = len(r.duplicate_pairs[d]) if r is not None else s.duplicate_pairs
                ci = _proportion(round(share * n), n) if share is not None and n else None
                cells.append(f"<td>{_f(share, '.0%')}{' ' + _ci(ci, '.0%') if ci else ''}</td>")
            overall: Interval | None = None
            if r is not None and len({len(r.duplicate_pairs[d]) for d in DIMENSIONS}) == 1:
                hits = np.array(
                    [[abs(o - c) <= report.tolerance for o, c in r.duplicate_pairs[d]] for d in DIMENSIONS]
                ).T
                overall = cluster_share_interval(hits)
            body.append(
                f"<tr><td>{esc(s.annotator)}</td><td>{s.duplicate_pairs}</td>{''.join(cells)}"
                f"<td>{_f(s.overall, '.0%')}{' ' + _ci(overall, '.0%') if overall else ''}</td></tr>"
            )
        parts.append(
            f"<h3>Self-consistency on hidden duplicates (share within {report.tolerance} point, 95% CI)</h3>"
            f"<table><tr><th>annotator</th><th>pairs (n)</th>{head}<th>all</th></tr>{''.join(body)}</table>"
            "<p class='muted'>n per dimension = duplicate pairs. The \"all\" share pools five cells per pair, which "
            "are not independent: its interval resamples whole pairs and needs the annotation records.</p>"
        )
    return "".join(parts)


def render_html(data: ReportData, agreement: AgreementReport | None = None) -> str:
    d = data.to_dict()
    esc = html.escape
    out: list[str] = []
    cards: list[tuple[object, str]] = [(v, k) for k, v in sorted(data.kinds.items())]
    for judge, c in d["checklist"].items():
        cards.append((f"{c['pass_rate']:.0%}", f"checklist pass rate ({judge})"))
    cards.append((sum(data.alerts.values()), "safety alerts"))
    if data.usage:
        t = data.usage.total
        cost = f"${t.priced_cost_usd:.2f}" if not t.unpriced_records else f"unknown ({t.unpriced_calls} calls)"
        cards += [(t.calls, "judge calls"), (t.cache_hits, "judge cache hits"), (cost, "judge cost")]
    release = data.release.as_dict()
    if release is not None and release["decision"] is not None:
        cards.append((str(release["decision"]).upper(), "release decision (seed 004)"))
    out.append(
        "<div class='cards'>"
        + "".join(f"<div class='card'><b>{esc(str(v))}</b><span>{esc(k)}</span></div>" for v, k in cards)
        + "</div>"
    )
    out.append(drilldown_summary(data))
    if data.warnings:
        out.append(f"<p class='bad'>{len(data.warnings)} input line(s) were not records and were skipped.</p>")
    if data.cheap:
        stats = data.cheap_stats()
        out.append(
            "<h2>Cheap tier</h2><p class='muted'>Seed 004 heuristics (0-1, binned by its quality levels) "
            "and the empathy signal (1-5), one value per assistant turn.</p>"
        )
        out.append(_stats_table(stats))
        out.append(_figure(_distribution_grid(stats), "Score distributions, cheap tier"))
        if data.edge_cases:
            items = ", ".join(f"{esc(k)}: {v}" for k, v in data.edge_cases.most_common())
            out.append(f"<p>Edge cases (seed 003 §4): {items}</p>")
    if data.judge_status:
        out.append("<h2>LLM judges</h2>")
        rows = "".join(
            f"<tr><td>{esc(m)}</td><td>{c.get('ok', 0)}</td><td>{c.get('error', 0)}</td></tr>"
            for m, c in sorted(data.judge_status.items())
        )
        out.append(f"<table><tr><th>metric</th><th>ok</th><th>error (excluded)</th></tr>{rows}</table>")
        stats = data.judge_stats()
        if stats:
            out.append(_stats_table(stats))
            out.append(_figure(_distribution_grid(stats), "Score distributions, LLM judges, each on its own scale"))
        mem, gr = d["memory_utilization"], d["groundedness"]
        if mem:
            mi, ma = mem["micro"], mem["macro"]
            out.append(
                "<h3>Memory utilization</h3><table><tr><th></th><th>precision</th><th>recall</th><th>F1</th></tr>"
                f"<tr><td>micro (TP {mi['tp']}, FP {mi['fp']}, FN {mi['fn']})</td><td>{mi['precision']:.4f}</td>"
                f"<td>{mi['recall']:.4f}</td><td>{mi['f1']:.4f}</td></tr><tr><td>macro ({mem['samples']['n']} samples)"
                f"</td><td>{ma['precision']:.4f}</td><td>{ma['recall']:.4f}</td><td>{ma['f1']:.4f}</td></tr></table>"
            )
        if gr:
            mi, ma = gr["micro"], gr["macro"]
            out.append(
                "<h3>Groundedness</h3><table><tr><th></th><th>groundedness</th><th>hallucination rate</th></tr>"
                f"<tr><td>micro ({mi['grounded']}/{mi['claims']} claims)</td><td>{mi['groundedness_score']:.4f}</td>"
                f"<td>{mi['hallucination_rate']:.4f}</td></tr><tr><td>macro</td><td>{ma['groundedness_score']:.4f}</td>"
                f"<td>{ma['hallucination_rate']:.4f}</td></tr></table>"
            )
        if d["validation_rate"] is not None:
            out.append(f"<p>Validation rate (empathy judge): <b>{d['validation_rate']:.1%}</b></p>")
        if d["warmth_distribution"]:
            w = d["warmth_distribution"]
            out.append(_figure(_hbar(list(w), list(w.values()), "judgments"), "Warmth distribution (empathy judge)"))
        out.append(_release_section(data))
    if data.usage:
        if not data.judge_status:
            out.append("<h2>LLM judges</h2>")
        out.append(_usage_section(data))
    if data.checklist:
        out.append("<h2>Checklist (seed 001)</h2>")
        rows = "".join(
            f"<tr><td>{esc(j)}</td><td>{c['conversations']}</td><td>{c['mean_score']:.3f}</td>"
            f"<td>{c['pass_rate']:.1%}</td><td>{c['safety_gate_failed']}</td></tr>"
            for j, c in d["checklist"].items()
        )
        out.append(
            "<table><tr><th>judge</th><th>conversations</th><th>mean score</th><th>pass rate</th>"
            f"<th>safety gate failed</th></tr>{rows}</table>"
        )
        titles = criterion_titles()
        for judge, per in data.criterion_failures().items():
            labels = [_clip(f"{c} {titles.get(c, '')}", 58) for c in per]
            rates = [f["rate"] for f in per.values()]
            out.append(
                _figure(
                    _hbar(
                        labels,
                        rates,
                        "failure rate (NO or ERROR, over conversations where it applies)",
                        percent=True,
                        color=FAIL,
                    ),
                    f"Per-criterion failure rate, {judge}",
                )
            )
    out.append("<h2>Safety alerts</h2>")
    if data.alerts:
        rows = "".join(
            f"<tr><td>{esc(a)}</td><td>{c}</td><td>"
            + esc(", ".join(f"{k} {v}" for k, v in sorted(data.alert_severity[a].items())))
            + "</td></tr>"
            for a, c in data.alerts.most_common()
        )
        out.append(f"<table><tr><th>type</th><th>count</th><th>severity</th></tr>{rows}</table>")
        labels = [a for a, _ in data.alerts.most_common()]
        out.append(_figure(_hbar(labels, [data.alerts[a] for a in labels], "alerts", color=FAIL), "Alerts by type"))
    else:
        out.append("<p>No safety alerts.</p>")
    out.append(drilldown_section(data))
    if agreement is not None:
        out.append(_agreement_section(agreement, data.raters))
    sources = ", ".join(esc(s) for s in data.sources)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>attune report</title>"
        f"<meta name='viewport' content='width=device-width,initial-scale=1'><style>{CSS}</style></head><body><main>"
        f"<h1>attune evaluation report</h1><p class='muted'>{sources} · generated {generated}</p>"
        + "".join(out)
        + "</main></body></html>\n"
    )


def load_agreement(path: str | Path) -> AgreementReport:
    return AgreementReport.model_validate_json(Path(path).read_bytes())


def write_html(data: ReportData, path: str | Path, agreement: AgreementReport | None = None) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(data, agreement), encoding="utf-8")
    return out
