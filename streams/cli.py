"""``attune worker | model-stage | publish | tail | demo``: the streaming subcommands."""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

from schemas import DEFAULT_LIMITS, Limits
from schemas.topics import ALL_TOPICS, TURNS
from scorers._extras import missing_extra

from ._allocator import CHOICES
from ._core import Timeouts
from .settings import DEFAULT_METRICS_PORT, DEFAULT_RETENTION_HOURS

DEFAULT_BROKER = "kafka://127.0.0.1:9092"
#: Invalid input lines ``publish`` prints one by one before it only counts the rest.
SHOWN_SKIPS = 20


def _broker_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--broker",
        default=os.environ.get("ATTUNE_BROKER", DEFAULT_BROKER),
        help="kafka://host:port of the broker (env ATTUNE_BROKER; default %(default)s)",
    )
    p.add_argument(
        "--profile",
        choices=("kafka", "tansu", "tansu-durable"),
        default=os.environ.get("ATTUNE_BROKER_PROFILE", "kafka"),
        help="broker profile: 'tansu' applies the Tansu workarounds, 'tansu-durable' those with a longer fetch "
        "wait (attune broker --data), 'kafka' none (env ATTUNE_BROKER_PROFILE)",
    )


def _topic_name(name: str) -> str:
    """Accept a full topic name or a short one ('turns', 'alerts.safety', 'deadletter')."""
    for spec in ALL_TOPICS:
        if name in (spec.name, spec.name.removeprefix("attune.")):
            return spec.name
    return name


#: Exit code when the broker cannot be reached at start (sysexits EX_UNAVAILABLE; 75 is "broker state lost").
EXIT_BROKER_UNREACHABLE = 69


def _reaching_broker(cmd: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command that needs the broker: an unreachable one is one line saying what to check, not a traceback."""

    @functools.wraps(cmd)
    def run(args: argparse.Namespace) -> int:
        from aiokafka.errors import KafkaConnectionError, KafkaError

        from . import security

        try:
            sec = security.current()  # TLS/SASL settings are checked before anything connects
        except security.SecurityConfigError as e:
            print(f"error: broker security settings: {e} (docs/operations.md, 'Secure Kafka')", file=sys.stderr)
            return 2
        how = "" if sec.protocol == "PLAINTEXT" else f" with {sec.describe()}"
        try:
            return cmd(args)
        except KafkaConnectionError as e:
            print(
                f"error: cannot reach the Kafka broker at {args.broker}{how} ({e}); check --broker (or ATTUNE_BROKER), "
                "that the broker is running and that this host can reach it"
                + ("" if not how else ", and the ATTUNE_KAFKA_* security settings"),
                file=sys.stderr,
            )
            return EXIT_BROKER_UNREACHABLE
        except KafkaError as e:  # e.g. SASL authentication failed, a mechanism the broker does not offer
            print(
                f"error: the Kafka broker at {args.broker} refused the connection{how}: {e.__class__.__name__}: {e}; "
                "check the ATTUNE_KAFKA_* security settings (docs/operations.md, 'Secure Kafka')",
                file=sys.stderr,
            )
            return EXIT_BROKER_UNREACHABLE

    return run


@_reaching_broker
def _cmd_worker(args: argparse.Namespace) -> int:
    from .settings import StreamSettings

    settings = StreamSettings(
        broker=args.broker,
        profile=args.profile,
        app_id=args.app_id,
        partitions=args.partitions,
        batch_max=args.batch_max,
        batch_within=args.batch_within,
        timeouts=Timeouts(
            inactivity=args.inactivity_timeout,
            reorder=args.reorder_timeout,
            tombstone_ttl=args.tombstone_ttl,
            history_idle=args.history_idle,
        ),
        timer_interval=args.timer_interval,
        naive=args.naive,
        alert_path=not args.no_alert_path,
        limits=Limits(
            max_payload_bytes=args.max_payload_bytes,
            max_text_chars=args.max_text_chars,
            max_turns_per_conversation=args.max_turns,
        ),
        datadir=Path(args.datadir) if args.datadir else None,
        judge=args.judge,
        judge_config=Path(args.judge_config) if args.judge_config else None,
        judge_max_in_flight=args.judge_max_in_flight,
        broker_check_interval=args.broker_check_interval,
        retention_hours=args.retention_hours,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
    )
    if settings.judge or settings.judge_config:
        try:
            from scorers.judges import JudgeConfigError, check_judges
        except ImportError as e:  # the provider SDKs are the optional `judges` extra
            print(f"error: {missing_extra('judges', e)}", file=sys.stderr)
            return 2
        try:
            for warning in check_judges(settings.judge_config, settings.judge):
                print(f"warning: {warning}", file=sys.stderr)
        except (JudgeConfigError, ValueError, OSError) as e:
            print(f"error: judge configuration: {e}", file=sys.stderr)
            return 2
    from ._allocator import AllocatorError, reexec_with

    try:
        reexec_with(args.allocator)  # once the arguments are known good; returns when the allocator is right
    except AllocatorError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from ._faust import run_worker

    return run_worker(settings, loglevel=args.loglevel, log_format=args.log_format)


@_reaching_broker
def _cmd_publish(args: argparse.Namespace) -> int:
    """Every valid conversation becomes turn events; every invalid line a dead letter (as in ``evaluate``)."""
    from schemas import encode
    from schemas.topics import DEAD_LETTER

    from .io import publish, read_conversations, schedule, send_raw
    from .settings import MAX_RECORD_BYTES

    convs, bad = read_conversations(Path(args.file))
    absent: list[str] = []
    if args.only_conversations:
        wanted = {ln.strip() for ln in Path(args.only_conversations).read_text(encoding="utf-8").splitlines()}
        wanted.discard("")
        convs = [c for c in convs if c.conversation_id in wanted]
        absent = sorted(wanted - {c.conversation_id for c in convs})
        if absent:  # asked for, not in the source: say so, an operator may be reading the wrong file
            print(
                f"not in {args.file}: {len(absent)} listed conversation(s), e.g. {', '.join(absent[:5])}",
                file=sys.stderr,
            )
    for rejected in bad[:SHOWN_SKIPS]:
        print(f"rejected: {rejected.describe()}", file=sys.stderr)
    if len(bad) > SHOWN_SKIPS:
        more = len(bad) - SHOWN_SKIPS
        print(f"rejected: {more} more invalid line(s), not printed ({len(bad)} in all)", file=sys.stderr)
    if bad:
        letters = [(str(args.file).encode(), encode(r.dead_letter())) for r in bad]
        fits = [(k, v) for k, v in letters if len(v) <= MAX_RECORD_BYTES]
        for r, (_k, v) in zip(bad, letters, strict=True):
            if len(v) > MAX_RECORD_BYTES:  # the dead-letter topic's own limit: the line stays in the file only
                print(f"rejected: {r.path}:{r.line}: too large for a dead letter ({len(v)} bytes)", file=sys.stderr)
        asyncio.run(send_raw(args.broker, DEAD_LETTER.name, fits, args.profile))
        print(f"{len(fits)} invalid line(s) sent to {DEAD_LETTER.name} with their bytes and reasons", file=sys.stderr)
    if bad and args.strict:
        print("--strict: no turn published because some lines were invalid", file=sys.stderr)
        return 1
    if convs:
        # Re-publishing listed conversations is a recovery: a worker may hold them closed on partial history.
        replay = args.replay or bool(args.only_conversations)
        events = schedule(convs, pace=args.pace, replay=replay)
        report = asyncio.run(publish(args.broker, _topic_name(args.topic), events, profile=args.profile))
        replays = ", each after a conversation_replay event" if report.replays else ""
        print(
            f"published {report.events} turn events of {report.conversations} conversations{replays} "
            f"to {_topic_name(args.topic)} in {report.seconds:.1f} s"
        )
    else:
        print("no valid conversation to publish", file=sys.stderr)
    return 1 if bad or absent or not convs else 0


@_reaching_broker
def _cmd_tail(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ._render import render
    from .broker import PROFILES
    from .io import broker_topics, consume

    console = Console(highlight=False)
    topics = [_topic_name(t) for t in args.topics]
    ours = {spec.name for spec in ALL_TOPICS}
    if not set(topics) <= ours:  # another team's topic is fine if it exists; a typo must not print nothing
        missing = sorted(set(topics) - ours - asyncio.run(broker_topics(args.broker)))
        if missing:
            known = ", ".join(spec.name.removeprefix("attune.") for spec in ALL_TOPICS)
            print(
                f"attune tail: no topic {', '.join(missing)} on {args.broker}; attune's topics: {known}",
                file=sys.stderr,
            )
            return 2

    async def run() -> int:
        n = 0
        wait = PROFILES[args.profile].fetch_max_wait_ms or 10
        async for topic, _key, value, _at in consume(
            args.broker, topics, from_beginning=args.from_beginning, idle_timeout=args.idle_timeout, fetch_wait_ms=wait
        ):
            if args.json:
                sys.stdout.write(value.decode("utf-8", "replace") + "\n")
                sys.stdout.flush()
            else:
                console.print(render(topic, value))
            n += 1
            if args.max and n >= args.max:
                break
        return n

    asyncio.run(run())
    return 0


@_reaching_broker
def _cmd_model_stage(args: argparse.Namespace) -> int:
    from scorers.embeddings import missing

    if (e := missing()) is not None:  # onnxruntime / tokenizers / the model are the optional `embeddings` extra
        print(f"error: {missing_extra('embeddings', e)}", file=sys.stderr)
        return 2
    if args.crisis_screen:
        try:  # screen jobs are built by scorers.judges, which needs the `judges` extra
            import scorers.judges  # noqa: F401
        except ImportError as absent:
            print(f"error: --crisis-screen: {missing_extra('judges', absent)}", file=sys.stderr)
            return 2
    from .model_stage import main

    return main(
        args.broker,
        profile=args.profile,
        app_id=args.app_id,
        batch_max=args.batch_max,
        max_conversations=args.max_conversations,
        nice=args.nice,
        crisis_screen=args.crisis_screen,
    )


def _cmd_broker(args: argparse.Namespace) -> int:
    from ._broker_cmd import run_broker

    return run_broker(args.port, Path(args.data) if args.data else None, args.storage)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(pace=args.pace, samples=Path(args.samples) if args.samples else None, timeout=args.timeout)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the streaming subcommands to ``attune``."""
    p = sub.add_parser("worker", help="run a stream worker (Faust); N workers may share the topics")
    _broker_args(p)
    p.add_argument("--app-id", default="attune", help="consumer group / table namespace (default %(default)s)")
    p.add_argument("--partitions", type=int, default=TURNS.partitions, help="turns topic partitions")
    p.add_argument("--batch-max", type=int, default=500, help="max events per agent batch (stream.take)")
    p.add_argument("--batch-within", type=float, default=0.005, help="max seconds to fill a batch")
    p.add_argument("--inactivity-timeout", type=float, default=300.0, help="close a silent conversation (s)")
    p.add_argument("--reorder-timeout", type=float, default=1.0, help="max wait for a missing turn (s)")
    p.add_argument("--tombstone-ttl", type=float, default=600.0, help="how long a closed id ignores turns (s)")
    p.add_argument(
        "--history-idle", type=float, default=30.0, help="drop an idle open conversation's decoded history (s)"
    )
    p.add_argument("--timer-interval", type=float, default=0.5, help="inactivity sweep interval (s)")
    p.add_argument("--naive", action="store_true", help="per-event agent without batching (benchmark baseline)")
    p.add_argument(
        "--no-alert-path",
        action="store_true",
        help="send user turns' own alerts from the scoring agent (waits for its rebalances) instead of the alert path",
    )
    p.add_argument("--max-payload-bytes", type=int, default=DEFAULT_LIMITS.max_payload_bytes, help="reject larger")
    p.add_argument("--max-text-chars", type=int, default=DEFAULT_LIMITS.max_text_chars, help="reject longer texts")
    p.add_argument(
        "--max-turns", type=int, default=DEFAULT_LIMITS.max_turns_per_conversation, help="turns per conversation"
    )
    p.add_argument("--datadir", default=None, help="worker data dir (Faust, judge result cache; default: temp dir)")
    j = p.add_argument_group("LLM judges (off unless --judge or --judge-config; keys from the environment only)")
    j.add_argument("--judge", metavar="PROVIDER:MODEL", help="judge sampled turns and closed conversations")
    j.add_argument("--judge-config", metavar="TOML", help="routing/limits/sampling/prices (judges.example.toml)")
    j.add_argument("--judge-max-in-flight", type=int, default=256, help="judge jobs run at once per worker")
    p.add_argument(
        "--broker-check-interval",
        type=float,
        default=5.0,
        help="seconds between checks that the broker kept the worker's topics/offsets; exit 75 if not (0: off)",
    )
    p.add_argument(
        "--retention-hours",
        type=float,
        default=DEFAULT_RETENTION_HOURS,
        help="raw text on the broker: retention of turns/dead letters/judge jobs, compaction bound of the "
        "changelogs, applied when the worker creates the topics; 0 = broker defaults (default %(default)s)",
    )
    o = p.add_argument_group("observability")
    o.add_argument(
        "--metrics-port",
        type=int,
        default=DEFAULT_METRICS_PORT,
        help="serve /metrics, /healthz, /readyz on this port; 0 = off (default %(default)s)",
    )
    o.add_argument("--metrics-host", default="127.0.0.1", help="address of the metrics endpoint (default %(default)s)")
    o.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="log lines as text or JSON objects on stderr"
    )
    p.add_argument(
        "--allocator",
        choices=CHOICES,
        default=None,
        help="memory allocator: 'jemalloc' (the default where libjemalloc is installed) hands the most memory back "
        "after a burst, then 'malloc' (glibc, the default without it), 'pymalloc' is Python's own; the worker "
        "restarts itself once to apply it (same PID); an explicit PYTHONMALLOC is kept",
    )
    p.add_argument("--loglevel", default="WARNING", help="log level (default %(default)s)")
    p.set_defaults(func=_cmd_worker)

    p = sub.add_parser(
        "model-stage",
        help="learned empathy signal on every assistant turn and the crisis second look on user turns, off the "
        "inline path (own consumer group)",
    )
    _broker_args(p)
    p.add_argument("--app-id", default="attune", help="consumer group prefix: <app-id>-model (default %(default)s)")
    p.add_argument("--batch-max", type=int, default=128, help="turn events read per model batch (default %(default)s)")
    p.add_argument(
        "--max-conversations",
        type=int,
        default=50_000,
        help="open conversations whose last user turn is remembered as context (default %(default)s)",
    )
    p.add_argument(
        "--nice",
        type=int,
        default=10,
        help="lower this process's CPU priority by N, so a worker on the same machine keeps its latency "
        "(default %(default)s; 0 = unchanged)",
    )
    p.add_argument(
        "--crisis-screen",
        action="store_true",
        help="send each turn the crisis second look alerts on to the LLM crisis screen, as a job for the worker's "
        "judge agent (use with a worker running --judge/--judge-config)",
    )
    p.set_defaults(func=_cmd_model_stage)

    p = sub.add_parser("publish", help="publish JSONL conversations as turn events keyed by conversation_id")
    _broker_args(p)
    p.add_argument("file", help="JSONL, one conversation per line (schemas.Conversation)")
    p.add_argument("--pace", type=float, default=0.0, help="seconds between turns of a conversation (live traffic)")
    p.add_argument("--topic", default=TURNS.name, help="target topic (default %(default)s)")
    p.add_argument(
        "--strict", action="store_true", help="publish no turn at all if any line is invalid (all or nothing)"
    )
    p.add_argument(
        "--only-conversations",
        metavar="IDS_FILE",
        default=None,
        help="publish only the conversations whose ids this file lists, one per line (e.g. the "
        "lost-conversations file a worker writes when the broker lost its state); implies --replay",
    )
    p.add_argument(
        "--replay",
        action="store_true",
        help="send a conversation_replay event before each conversation: the worker discards what it holds "
        "of it (an open buffer, or a close on partial history) and scores the conversation afresh, whole",
    )
    p.set_defaults(func=_cmd_publish)

    p = sub.add_parser("tail", help="print the records of one or more topics")
    _broker_args(p)
    p.add_argument("topics", nargs="+", metavar="TOPIC", help="topic name(s), e.g. alerts.safety")
    p.add_argument("--json", action="store_true", help="print raw JSON lines instead of the pretty view")
    p.add_argument("--from-beginning", action="store_true", help="start at the earliest offset")
    p.add_argument("--max", type=int, default=0, help="stop after this many records")
    p.add_argument("--idle-timeout", type=float, default=None, help="stop after this many silent seconds")
    p.set_defaults(func=_cmd_tail)

    p = sub.add_parser("broker", help="run the embedded broker (Tansu) until Ctrl-C: in memory, or durable with --data")
    p.add_argument("--port", type=int, default=9092, help="loopback port to listen on (default %(default)s)")
    s = p.add_mutually_exclusive_group()
    s.add_argument(
        "--data",
        metavar="DIR",
        default=None,
        help="durable: keep topics, records and offsets in DIR (SeaweedFS; extra 'durable'); a restart on the "
        "same DIR, even after a SIGKILL, finds them all",
    )
    s.add_argument(
        "--storage",
        metavar="URL",
        default=None,
        help="Tansu's --storage-engine as is, e.g. s3://bucket/ with AWS_ENDPOINT etc. set (the bundled "
        "Tansu has no postgres:// engine)",
    )
    p.set_defaults(func=_cmd_broker)

    p = sub.add_parser("demo", help="embedded broker + worker + sample conversations, scored live (~1 min)")
    p.add_argument("--pace", type=float, default=1.5, help="seconds between turns of a conversation")
    p.add_argument("--samples", default=None, help="JSONL of conversations (default: the bundled samples)")
    p.add_argument("--timeout", type=float, default=120.0, help="give up after this many seconds")
    p.set_defaults(func=_cmd_demo)
