"""``attune evaluate``: the batch path. Same Evaluator, same records as the stream, written to JSONL."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from schemas import DEFAULT_LIMITS, Limits, dead_letter, encode
from scorers import Evaluator, evaluate_conversation

from ._formats import Item, read_items
from .summary import Summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="score conversations from files (batch) with the same scorers as the stream",
        description=(
            "Evaluate JSONL conversations, seed 002 sample folders/data.json, or seed 003 generations.jsonl. "
            "Writes kind-tagged records (turn_score, safety_alert, conversation_score, dead_letter) to --out. "
            "Exit code 1 if any input was rejected (the rest is still evaluated)."
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="file(s) or seed 002 folder(s)")
    p.add_argument("--out", required=True, help="output JSONL path")
    p.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    p.add_argument("--quiet", action="store_true", help="no summary")
    p.add_argument("--max-text-chars", type=int, default=DEFAULT_LIMITS.max_text_chars)
    p.add_argument("--max-turns", type=int, default=DEFAULT_LIMITS.max_turns_per_conversation)
    p.set_defaults(func=run)


def _count(paths: Iterable[str]) -> int | None:
    """Cheap pre-count of JSONL lines so the progress bar has a total; None for folders/JSON."""
    total = 0
    for p in paths:
        path = Path(p)
        if not path.is_file() or path.suffix == ".json":
            return None
        with path.open("rb") as fh:
            total += sum(1 for line in fh if line.strip())
    return total


def evaluate_items(items: Iterable[Item], out, summary: Summary, err: Console, evaluator: Evaluator) -> int:
    """Evaluate every item, write records, report rejections. Returns the number of rejected items."""
    rejected = 0
    for item in items:
        if item.error is not None:
            rejected += 1
            err.print(f"[red]rejected[/red] {item.describe_error()}", highlight=False)
            rec = dead_letter(item.raw, item.error, source=item.source, offset=item.line)
            out.write(encode(rec) + b"\n")
            summary.add(rec)
            continue
        assert item.conversation is not None
        for rec in evaluate_conversation(item.conversation, evaluator):
            out.write(encode(rec) + b"\n")
            summary.add(rec)
    return rejected


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    limits = Limits(max_text_chars=args.max_text_chars, max_turns_per_conversation=args.max_turns)
    evaluator = Evaluator()
    summary = Summary()
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    for p in args.inputs:
        if not Path(p).exists():
            err.print(f"[red]error:[/red] {p}: no such file or directory")
            return 2

    def all_items() -> Iterable[Item]:
        for p in args.inputs:
            yield from read_items(p, limits)

    show_progress = err.is_terminal and not args.no_progress
    try:
        with out_path.open("wb") as out:
            if show_progress:
                with Progress(
                    TextColumn("evaluating"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    console=err,
                    transient=True,
                ) as progress:
                    task = progress.add_task("evaluate", total=_count(args.inputs))

                    def tracked() -> Iterable[Item]:
                        for it in all_items():
                            yield it
                            progress.advance(task)

                    rejected = evaluate_items(tracked(), out, summary, err, evaluator)
            else:
                rejected = evaluate_items(all_items(), out, summary, err, evaluator)
    except FileNotFoundError as e:
        err.print(f"[red]error:[/red] {e}")
        return 2
    if not args.quiet:
        summary.render(Console(file=sys.stdout))
        print(f"wrote {out_path}")
    if rejected:
        err.print(f"[red]{rejected} input(s) rejected[/red] (dead_letter records in {out_path})")
        return 1
    return 0
