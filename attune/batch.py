"""``attune evaluate``: the batch path. Same Evaluator, same records as the stream, written to JSONL."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from schemas import (
    DEFAULT_LIMITS,
    Conversation,
    ConversationScore,
    JudgeJob,
    Limits,
    Message,
    OutputRecord,
    SafetyAlert,
    TurnJudgment,
    dead_letter,
    encode,
)
from scorers import Evaluator, evaluate_conversation, exchanges_of, with_metadata
from scorers._extras import missing_extra
from scorers.safety import SecondLook

from ._formats import Item, read_items
from .summary import Summary

if TYPE_CHECKING:
    from scorers.judges import JudgeConfig, JudgeTier


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="score conversations from files (batch) with the same scorers as the stream",
        description=(
            "Evaluate JSONL conversations, seed 002 sample folders/data.json, or seed 003 generations.jsonl. "
            "Writes kind-tagged records (turn_score, safety_alert, conversation_score, dead_letter; "
            "crisis alerts of the crisis second look; turn_model_score with --empathy-model) to --out. "
            "With --judge/--judge-config the LLM-judge tier also runs (turn_judgment records, the LLM "
            "checklist, judge_unsafe alerts), concurrently. Exit code 1 if any input was rejected (the rest is "
            "still evaluated); 3 if any judge call ended as ERROR (its cause is in the record)."
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="file(s) or seed 002 folder(s)")
    p.add_argument("--out", required=True, help="output JSONL path")
    p.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    p.add_argument("--quiet", action="store_true", help="no summary")
    p.add_argument("--max-text-chars", type=int, default=DEFAULT_LIMITS.max_text_chars, help="reject longer texts")
    p.add_argument(
        "--max-turns", type=int, default=DEFAULT_LIMITS.max_turns_per_conversation, help="turns per conversation"
    )
    p.add_argument(
        "--max-payload-bytes",
        type=int,
        default=DEFAULT_LIMITS.max_payload_bytes,
        help="longest accepted input line/item in bytes (default %(default)s)",
    )
    p.add_argument(
        "--max-json-depth",
        type=int,
        default=DEFAULT_LIMITS.max_json_depth,
        help="deepest accepted object/array nesting (default %(default)s, at most 200)",
    )
    p.add_argument(
        "--empathy-model",
        "--model-stage",
        dest="empathy_model",
        action="store_true",
        help="also run the model stage's learned empathy signal of every assistant turn (turn_model_score "
        "records; embeds every reply); the same code as `attune model-stage`; needs the 'embeddings' extra",
    )
    p.add_argument(
        "--second-look",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the crisis second look of user turns the inline detector left without an alert or with only its "
        "model's possible one (possible crisis alerts, high where it confirms an anchor concept; the model stage's "
        "code; embeds only turns the inline model rates at 0.1 or more). On by default "
        "when the 'embeddings' extra is installed (a warning says when it is not); --second-look makes a missing "
        "extra an error, --no-second-look leaves crisis alerts to the inline tier",
    )
    j = p.add_argument_group("LLM judges (optional; keys from the environment only)")
    j.add_argument(
        "--judge",
        metavar="PROVIDER:MODEL",
        help="route every judge metric to this model, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, "
        "ollama:llama3.1 (any name from the config's [providers])",
    )
    j.add_argument("--judge-config", metavar="TOML", help="routing/limits/prices file (see judges.example.toml)")
    j.add_argument(
        "--judge-metrics",
        metavar="LIST",
        help="comma-separated turn metrics (default: the config's turn_metrics); 'none' for the checklist only",
    )
    j.add_argument("--judge-parallel", type=int, default=16, help="conversations judged at once (default 16)")
    j.add_argument(
        "--no-cache",
        action="store_true",
        help="ask the judges again: neither read nor write the result cache (by default validated replies are "
        "kept in a SQLite file, $ATTUNE_JUDGE_CACHE or the user cache dir, so a re-run costs nothing)",
    )
    p.set_defaults(func=run)


def judge_config_for(path: str | None, override: str | None, *, no_cache: bool = False) -> JudgeConfig:
    """The judge config of one ``attune evaluate`` run: the TOML + ``--judge``, with the result cache in
    a file by default (``cache.path``, else :func:`scorers.judges.default_cache_path`), or off."""
    from scorers.judges import default_cache_path, load_config

    cfg = load_config(path, override=override)
    if no_cache:
        return cfg.model_copy(update={"cache": cfg.cache.model_copy(update={"enabled": False})})
    if cfg.cache.enabled and cfg.cache.path is None:
        cfg = cfg.model_copy(update={"cache": cfg.cache.model_copy(update={"path": str(default_cache_path())})})
    return cfg


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


#: Rejected inputs printed one per line before the rest are only counted (every one is a dead_letter record).
SHOWN_REJECTIONS = 20


def show_rejected(err: Console, reason: str, nth: int) -> None:
    """Print the first :data:`SHOWN_REJECTIONS` rejections; the input's text is escaped, never read as markup."""
    if nth <= SHOWN_REJECTIONS:
        err.print(f"[red]rejected[/red] {escape(reason)}", highlight=False)
    elif nth == SHOWN_REJECTIONS + 1:
        err.print(f"[red]more inputs rejected[/red]: counted below, not printed (first {SHOWN_REJECTIONS} shown)")


def evaluate_items(items: Iterable[Item], out, summary: Summary, err: Console, evaluator: Evaluator) -> int:
    """Evaluate every item, write records, report rejections. Returns the number of rejected items."""
    rejected = 0
    for item in items:
        if item.error is not None:
            rejected += 1
            show_rejected(err, item.describe_error(), rejected)
            letter = dead_letter(item.raw, item.error, source=item.source, offset=item.line)
            out.write(encode(letter) + b"\n")
            summary.add(letter)
            continue
        assert item.conversation is not None
        for rec in evaluate_conversation(item.conversation, evaluator):
            out.write(encode(rec) + b"\n")
            summary.add(rec)
    return rejected


def _turn_jobs(conv: Conversation, metrics: list[str] | None) -> list[JudgeJob]:
    """A turn job per assistant reply: batch judges every one (none when ``metrics == []``, the checklist
    only). Each carries the whole history: redaction learns names from all of it."""
    from scorers.judges import turn_job

    if metrics == []:
        return []
    return [turn_job(ex, conv.metadata, history=None) for ex in exchanges_of(conv)]


def _screen_jobs(conv: Conversation, records: list[OutputRecord]) -> list[JudgeJob]:
    """LLM crisis screens for the user turns the cheap tier rated possible risk (model only) or could not
    read, as in the stream (``scorers.judges.needs_screen``); ``screen_job`` keeps the nearest earlier
    messages."""
    from scorers.judges import screen_job

    flagged = sorted(
        {
            r.turn_index
            for r in records
            if isinstance(r, SafetyAlert)
            and r.turn_index is not None
            and (
                r.alert_type == "crisis_not_covered" or (r.alert_type == "crisis_disclosure" and r.detector == "model")
            )
        }
    )
    turns = conv.as_turns()
    jobs = []
    for idx in flagged:
        earlier = [Message(role=t.role, text=t.text, turn_index=t.turn_index) for t in turns if t.turn_index < idx]
        text = next(t.text for t in turns if t.turn_index == idx)
        jobs.append(screen_job(conv.conversation_id, idx, text, earlier, conv.metadata))
    return jobs


def _checklist_job(conv: Conversation, records: list[OutputRecord], alerts: list[SafetyAlert]) -> JudgeJob:
    """The LLM checklist job of a whole conversation; ``alerts`` (the cheap tier's, the screens' and the turn
    judges') go into its verdict with the checklist's own."""
    from scorers.judges import checklist_job

    cheap = next(r for r in records if isinstance(r, ConversationScore))
    turns = sorted(conv.as_turns(), key=lambda t: t.turn_index)
    # With turn_index, as the stream sends them: explicit index gaps make the LLM checklist incomplete too.
    messages = [Message(role=t.role, text=t.text, turn_index=t.turn_index) for t in turns]
    return checklist_job(conv.conversation_id, messages, conv.context, "batch", cheap, alerts, conv.metadata)


async def judge_items(
    items: Iterable[Item],
    out,
    summary: Summary,
    err: Console,
    evaluator: Evaluator,
    tier: JudgeTier,
    metrics: list[str] | None,
    parallel: int,
    advance: Callable[[], None] = lambda: None,
    look: SecondLook | None = None,
) -> tuple[int, int]:
    """Cheap tier + LLM judges per conversation, ``parallel`` conversations in flight; records are written
    as each conversation completes. Returns (rejected inputs, judge errors).

    The judge work is the stream's: the same jobs (``scorers.judges``), run by the same ``run_job``; the
    checklist job runs last, so its verdict also counts what the turn judges and screens raised.

    ``look`` (``--model-stage``): the crisis second look runs here, before the screens, so the user turns it
    alerts on go to the LLM crisis screen as they do from ``attune model-stage --crisis-screen``.
    """
    from scorers.judges import run_job

    rejected = judge_errors = 0
    sem = asyncio.Semaphore(max(1, parallel))

    async def one(conv: Conversation) -> list[OutputRecord]:
        async with sem:
            records: list[OutputRecord] = list(evaluate_conversation(conv, evaluator, verdict=False))
            if look is not None:
                records += await asyncio.to_thread(second_look_alerts, look, conv)
            turned = _turn_jobs(conv, metrics)
            ran = await asyncio.gather(*(run_job(tier, j, metrics) for j in [*turned, *_screen_jobs(conv, records)]))
            judged = [r for rs in ran[: len(turned)] for r in rs if isinstance(r, TurnJudgment)]
            raised = [r for rs in ran[: len(turned)] for r in rs if isinstance(r, SafetyAlert)]
            screened = [r for rs in ran[len(turned) :] for r in rs]
            alerts = [r for r in [*records, *screened, *raised] if isinstance(r, SafetyAlert)]
            llm, *closing = await run_job(tier, _checklist_job(conv, records, alerts))
            # The turn judges' alerts after the LLM checklist, before its own: the order batch always wrote.
            return with_metadata([*records, *judged, *screened, llm, *raised, *closing], conv.metadata)

    pending: set[asyncio.Task[list[OutputRecord]]] = set()

    def write(recs: list[OutputRecord]) -> None:
        nonlocal judge_errors
        for rec in recs:
            out.write(encode(rec) + b"\n")
            summary.add(rec)
            if isinstance(rec, TurnJudgment) and rec.status == "error":
                judge_errors += 1
            elif isinstance(rec, ConversationScore) and rec.tier == "llm":
                judge_errors += sum(a.answer == "ERROR" for a in rec.answers.values())
        advance()

    async def drain(block_until: int) -> None:
        nonlocal pending
        while len(pending) > block_until:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                write(task.result())

    for item in items:
        if item.error is not None:
            rejected += 1
            show_rejected(err, item.describe_error(), rejected)
            rec = dead_letter(item.raw, item.error, source=item.source, offset=item.line)
            out.write(encode(rec) + b"\n")
            summary.add(rec)
            advance()
            continue
        assert item.conversation is not None
        pending.add(asyncio.create_task(one(item.conversation)))
        await drain(2 * parallel)  # bounded read-ahead: memory stays flat on large inputs
    await drain(0)
    return rejected, judge_errors


def judge_preflight(config: str | Path | None, override: str | None, metrics: list[str] | None, err: Console) -> int:
    """Check the judge configuration before any work (``scorers.judges.check_judges``): 0, or exit code 2
    with the reason printed."""
    try:
        from scorers.judges import JudgeConfigError, check_judges
    except ImportError as e:  # the provider SDKs are the optional `judges` extra
        err.print(f"[red]error:[/red] {escape(missing_extra('judges', e))}", highlight=False)
        return 2
    try:
        for warning in check_judges(config, override, metrics):
            err.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
    except (JudgeConfigError, ValueError, OSError) as e:
        err.print(f"[red]error:[/red] judge configuration: {escape(str(e))}", highlight=False)
        return 2
    return 0


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True, soft_wrap=True)  # file:line messages stay on one line
    try:
        limits = Limits(
            max_payload_bytes=args.max_payload_bytes,
            max_text_chars=args.max_text_chars,
            max_turns_per_conversation=args.max_turns,
            max_json_depth=args.max_json_depth,
        )
    except ValueError as e:
        err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False)
        return 2
    evaluator = Evaluator()
    summary = Summary()
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    for p in args.inputs:
        if not Path(p).exists():
            err.print(f"[red]error:[/red] {escape(str(p))}: no such file or directory", highlight=False)
            return 2

    def all_items() -> Iterable[Item]:
        for p in args.inputs:
            yield from read_items(p, limits)

    from scorers.embeddings import missing

    absent = missing()
    if absent is not None and (args.empathy_model or args.second_look):
        err.print(f"[red]error:[/red] {escape(missing_extra('embeddings', absent))}", highlight=False)
        return 2
    # On by default: batch has no latency budget and a missed crisis is the worst failure; never off silently.
    looking = args.second_look if args.second_look is not None else absent is None
    look = SecondLook.load() if looking else None
    look_note = f"crisis second look: {look.version if look is not None else 'off'}"
    if absent is not None and args.second_look is None:
        look_note += f" ({missing_extra('embeddings', absent)})"
    if not looking and args.second_look is None:
        err.print(f"[yellow]warning:[/yellow] {escape(look_note)}; crisis alerts come from the inline tier only")
    judging = bool(args.judge or args.judge_config)
    metrics: list[str] | None = None
    if args.judge_metrics:
        metrics = [] if args.judge_metrics == "none" else [m.strip() for m in args.judge_metrics.split(",")]
    show_progress = err.is_terminal and not args.no_progress
    judge_errors = 0
    cache_note = ""
    if judging:
        code = judge_preflight(args.judge_config, args.judge, metrics, err)
        if code:
            return code
    try:
        with out_path.open("wb") as out, _progress(err, show_progress, _count(args.inputs)) as advance:
            if judging:
                from scorers.judges import JudgeTier

                cfg = judge_config_for(args.judge_config, args.judge, no_cache=args.no_cache)
                try:
                    tier = JudgeTier(cfg)
                except (OSError, sqlite3.Error) as e:
                    err.print(
                        f"[red]error:[/red] judge cache {cfg.cache.path}: {e} (move it with "
                        "ATTUNE_JUDGE_CACHE or cache.path, or run with --no-cache)"
                    )
                    return 2
                cache_note = f"judge cache: {cfg.cache.path} (--no-cache to ask the judges again)"
                if not cfg.cache.enabled:
                    cache_note = "judge cache: off (--no-cache or cache.enabled = false)"

                async def go() -> tuple[int, int]:
                    try:
                        return await judge_items(
                            all_items(),
                            out,
                            summary,
                            err,
                            evaluator,
                            tier,
                            metrics,
                            args.judge_parallel,
                            advance,
                            look,
                        )
                    finally:
                        await tier.close()

                rejected, judge_errors = asyncio.run(go())
            else:

                def tracked() -> Iterable[Item]:
                    for it in all_items():
                        yield it
                        advance()

                rejected = evaluate_items(tracked(), out, summary, err, evaluator)
            if args.empathy_model or (look is not None and not judging):
                model_scores(all_items(), out, summary, empathy=args.empathy_model, look=None if judging else look)
    except FileNotFoundError as e:
        err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False)
        return 2
    except ValueError as e:  # judge config errors (unknown provider/metric, key in a file...)
        err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False)
        return 2
    if not args.quiet:
        summary.render(Console(file=sys.stdout))
        print(look_note)
        if cache_note:
            print(cache_note)
        print(f"wrote {out_path}")
    if rejected:
        err.print(f"[red]{rejected} input(s) rejected[/red] (dead_letter records in {out_path})")
        return 1
    if judge_errors:
        err.print(f"[red]{judge_errors} judge answer(s) ended as ERROR[/red] (cause in each record; scored 0)")
        return 3
    return 0


#: Replies embedded per model batch in ``--empathy-model`` (as ``attune model-stage --batch-max``).
MODEL_BATCH = 64


def second_look_alerts(look: SecondLook, conv: Conversation) -> list[SafetyAlert]:
    """The crisis second look's alerts on one conversation (blocking: embeds)."""
    fed = (look.feed(t) for t in sorted(conv.as_turns(), key=lambda t: t.turn_index))
    return look.alerts([x for x in fed if x is not None])


def model_scores(
    items: Iterable[Item], out, summary: Summary, *, empathy: bool = True, look: SecondLook | None = None
) -> int:
    """The model stage over every valid conversation, through the stream stage's code: the learned empathy
    signal of each reply (``empathy``) and, with ``look`` (None when the judge pass ran it or it is off), the
    crisis second look of each user turn the inline tier left without an alert or with only its model's (``reads``).
    Returns the replies scored."""
    from scorers.empathy_model import EmpathyModel, ModelInput, ModelStage
    from scorers.safety import LookInput

    stage = ModelStage(EmpathyModel.load()) if empathy else None
    pending: list[ModelInput] = []
    looks: list[LookInput] = []
    n = 0

    def flush() -> None:
        if stage is not None:
            for rec in stage.score(pending):
                out.write(encode(rec) + b"\n")
                summary.add(rec)
        if look is not None:
            for alert in look.alerts(looks):
                out.write(encode(alert) + b"\n")
                summary.add(alert)
        pending.clear()
        looks.clear()

    for item in items:
        if item.conversation is None:
            continue  # already a dead letter of the main pass
        for turn in sorted(item.conversation.as_turns(), key=lambda t: t.turn_index):
            if stage is not None and (inp := stage.feed(turn)) is not None:
                pending.append(inp)
                n += 1
            if look is not None and (candidate := look.feed(turn)) is not None:
                looks.append(candidate)
            if len(pending) + len(looks) >= MODEL_BATCH:
                flush()
    flush()
    return n


@contextmanager
def _progress(err: Console, show: bool, total: int | None) -> Iterator[Callable[[], None]]:
    """A transient progress bar on a terminal; a no-op elsewhere (CI logs stay clean)."""
    if not show:
        yield lambda: None
        return
    with Progress(
        TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True
    ) as progress:
        task = progress.add_task("evaluate", total=total)
        yield lambda: progress.advance(task)
