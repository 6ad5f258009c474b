"""Long-form reports over evaluated records: seed 002's console summary and a self-contained HTML page.

:func:`collect` reads records into :class:`ReportData`; :func:`render_console` prints it;
:func:`render_html` / :func:`write_html` build one HTML file with inline SVG plots (matplotlib), a
drill-down (failed safety gates, crises left unanswered, every alert, a section per linked conversation)
and, with an agreement report, bootstrap intervals on the agreement figures.
"""

from ._collect import MetricStats, ReportData, collect, criterion_titles, metric_stats
from ._console import render_console
from ._html import HAVE_MPL, load_agreement, render_html, write_html

__all__ = [
    "HAVE_MPL",
    "MetricStats",
    "ReportData",
    "collect",
    "criterion_titles",
    "load_agreement",
    "metric_stats",
    "render_console",
    "render_html",
    "write_html",
]
