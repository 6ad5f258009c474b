"""CLI of the calibration loop and reports: ``annotate export|import``, ``agreement``, ``report``.

Registered from :mod:`attune.cli` via :func:`register`. Imports of the heavy parts happen inside the
handlers so ``attune --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``annotate``, ``agreement`` and ``report`` to the ``attune`` command."""
    p = sub.add_parser("annotate", help="seed 003 human annotation batches: export for raters, import their CSVs")
    asub = p.add_subparsers(dest="annotate_command", required=True, metavar="ACTION")

    e = asub.add_parser(
        "export",
        help="write a seed 003 annotation batch (CSVs, generations.jsonl, hidden duplicates key)",
        description=(
            "From evaluated records (attune evaluate --out) and the conversations they came from, write one "
            "blank CSV per annotator, generations.jsonl for raters, and duplicates.key.json (keep it: it maps "
            "the opaque sample ids back to turns and names the hidden duplicates; never give it to raters)."
        ),
    )
    e.add_argument("records", nargs="+", metavar="RECORDS.jsonl", help="records written by attune evaluate")
    e.add_argument(
        "--conversations",
        required=True,
        action="append",
        metavar="FILE",
        help="the input attune evaluate read (for the texts); repeatable",
    )
    e.add_argument("--out", required=True, metavar="DIR")
    e.add_argument("--annotators", default="a1,a2", help="comma-separated annotator ids (default a1,a2)")
    e.add_argument("--duplicates", type=int, default=10, help="hidden duplicate samples (seed 003 §5: 10)")
    e.add_argument("--limit", type=int, default=None, help="sample at most this many turns")
    e.add_argument("--seed", type=int, default=0, help="seed for sampling, duplicates and order")
    e.set_defaults(func=_export)

    i = asub.add_parser(
        "import",
        help="validate filled CSVs and store them as annotation records",
        description=(
            "Checks the exact header, known sample ids, one annotator per file, integer scores 1-5 with no "
            "blanks, and notes wherever a score is 1 or 5 (seed 003 §3.1). Every error names file, line and "
            "column. Valid rows are written even when some rows fail; the exit code is then 1."
        ),
    )
    i.add_argument("inputs", nargs="+", metavar="DIR_OR_CSV")
    i.add_argument("--key", required=True, metavar="duplicates.key.json")
    i.add_argument("--out", required=True, metavar="annotations.jsonl")
    i.set_defaults(func=_import)

    a = sub.add_parser(
        "agreement",
        help="kappa and Spearman for every rater pair; self-consistency on duplicates",
        description=(
            "Inputs: annotation files (attune annotate import) and record files (attune evaluate and the judge "
            "tier: turn_score = cheap tier, turn_judgment = LLM judges; judgments with status error are counted "
            "and excluded). With --empathy-ratings, also reproduce the paper's kappa table on that data set and "
            "score attune's cheap tier against its experts."
        ),
    )
    a.add_argument("inputs", nargs="*", metavar="FILE.jsonl")
    a.add_argument("--json", metavar="OUT", help="write the machine-readable result here")
    a.add_argument("--empathy-ratings", metavar="PATH", help="the empathy-ratings folder (README.md, annotations/)")
    a.set_defaults(func=_agreement)

    r = sub.add_parser(
        "report",
        help="long-form summary of evaluated records (console, optional self-contained HTML with plots)",
    )
    r.add_argument("records", nargs="+", metavar="RECORDS.jsonl")
    r.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML report with plots")
    r.add_argument("--agreement", metavar="AGREEMENT.json", help="attune agreement --json output, for a heat-map")
    r.add_argument("--json", metavar="OUT", help="write the aggregated numbers as JSON")
    r.set_defaults(func=_report)


def _missing(paths: list[str], err: Console) -> bool:
    gone = [p for p in paths if not Path(p).exists()]
    for p in gone:
        err.print(f"[red]error:[/red] {p}: no such file or directory", highlight=False)
    return bool(gone)


def _export(args: argparse.Namespace) -> int:
    from .calibration import ExportError, export_batch

    err = Console(stderr=True, soft_wrap=True)
    if _missing([*args.records, *args.conversations], err):
        return 2
    try:
        res = export_batch(
            args.records,
            args.conversations,
            args.out,
            annotators=[a.strip() for a in args.annotators.split(",") if a.strip()],
            duplicates=args.duplicates,
            limit=args.limit,
            seed=args.seed,
        )
    except ExportError as e:
        err.print(f"[red]error:[/red] {e}", highlight=False)
        return 2
    for w in res.warnings:
        err.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    print(f"{res.n_items} samples + {res.n_duplicates} hidden duplicates")
    for p in (*res.csv_files, res.generations):
        print(f"for raters: {p}")
    print(f"keep (do not share): {res.key}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from schemas import encode

    from .calibration import import_annotations, load_key

    err = Console(stderr=True, soft_wrap=True)
    try:
        key = load_key(args.key)
    except (OSError, ValidationError) as e:
        err.print(f"[red]error:[/red] {args.key}: not a batch key ({e})", highlight=False)
        return 2
    try:
        res = import_annotations(args.inputs, key)
    except FileNotFoundError as e:
        err.print(f"[red]error:[/red] {e}", highlight=False)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:
        for ann in res.annotations:
            fh.write(encode(ann) + b"\n")
    for problem in res.errors:
        err.print(f"[red]invalid[/red] {problem}", highlight=False)
    print(f"{len(res.annotations)} valid rows from {len(res.files)} file(s) -> {out}")
    if res.errors:
        err.print(f"[red]{len(res.errors)} error(s)[/red]; fix them and import again")
        return 1
    return 0


def _agreement(args: argparse.Namespace) -> int:
    from .calibration import (
        BadLine,
        compute_agreement,
        empathy_ratings_report,
        raters_from,
        read_jsonl,
        render_agreement,
        render_empathy_ratings,
    )

    err = Console(stderr=True, soft_wrap=True)
    out = Console(file=sys.stdout)
    if not args.inputs and not args.empathy_ratings:
        err.print("[red]error:[/red] give annotation/record files, --empathy-ratings PATH, or both")
        return 2
    if _missing(args.inputs, err):
        return 2
    records = []
    for rec in read_jsonl(args.inputs):
        if isinstance(rec, BadLine):
            err.print(f"[yellow]skipped[/yellow] {rec.where}: {rec.reason}", highlight=False)
        else:
            records.append(rec)
    report = compute_agreement(raters_from(records))
    if args.inputs:
        render_agreement(report, out)
    if args.empathy_ratings:
        if _missing([args.empathy_ratings], err):
            return 2
        er = empathy_ratings_report(args.empathy_ratings)
        render_empathy_ratings(er, out)
        report.empathy_ratings = er.model_dump(mode="json")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from .report import collect, load_agreement, render_console, write_html

    err = Console(stderr=True, soft_wrap=True)
    if _missing([*args.records, *([args.agreement] if args.agreement else [])], err):
        return 2
    data = collect(args.records)
    for w in data.warnings:
        err.print(f"[yellow]skipped[/yellow] {w}", highlight=False)
    render_console(data, Console(file=sys.stdout), html_path=args.html)
    if args.json:
        Path(args.json).write_text(data.to_json(), encoding="utf-8")
        print(f"wrote {args.json}")
    if args.html:
        agreement = load_agreement(args.agreement) if args.agreement else None
        write_html(data, args.html, agreement=agreement)
        print(f"wrote {args.html}")
    return 0
