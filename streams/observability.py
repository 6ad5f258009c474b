"""Prometheus metrics, health endpoints and JSON log lines of a stream worker.

Why ``prometheus_client`` and not Faust's own Prometheus sensor (``faust.sensors.prometheus``): the
sensor needs ``prometheus_client`` anyway, is served by Faust's aiohttp web server (disabled here:
``web_enabled=False``), hooks every event and table operation, and knows only Faust concepts
(messages, topics, table gets). What operators of attune need is domain counts — turns by role,
alerts by type, dead letters by reason, open conversations, judge calls and their cost — which only
this code knows. The worker updates them once per batch (a few integer additions per batch, one
histogram observation per turn), and a small threaded HTTP server serves them together with
``/healthz`` and ``/readyz``, so a scrape never waits on, or stalls, the event loop.

Other code (e.g. the judge fan-out) reports through the module-level :data:`METRICS`:
``METRICS.judge_call("ok")``, ``METRICS.judge_usage(usage)``, or ``METRICS.watch_judge_stats(lambda:
tier.stats)`` to export a :class:`scorers.judges.JudgeTier`'s cumulative counters.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from schemas.topics import SAFETY_ALERTS

from ._core import BatchResult, is_open

log = logging.getLogger("attune.streams")

_ALERT_TYPES = frozenset({"crisis_disclosure", "crisis_unanswered", "harmful_reply", "crisis_not_covered"})

#: Seconds: from a turn's broker timestamp to the acknowledgement of the outputs of its batch.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class WorkerMetrics:
    """Every metric of one worker, in its own registry (tests build fresh ones; the worker uses :data:`METRICS`)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.turns = Counter(
            "attune_turns", "Turns accepted for processing (not duplicates), by role", ["role"], registry=r
        )
        self.ignored = Counter(
            "attune_turns_ignored", "Turns ignored: redelivered duplicates or after close", ["reason"], registry=r
        )
        self.replays = Counter(
            "attune_conversation_replays",
            "conversation_replay events: what the worker held of a conversation discarded before it is re-published",
            registry=r,
        )
        self.scored = Counter("attune_turn_scores", "Assistant turns scored by the cheap tier", registry=r)
        self.alerts = Counter("attune_alerts", "Safety alerts emitted, by alert_type", ["type"], registry=r)
        self.dead_letters = Counter(
            "attune_dead_letters", "Inputs rejected to the dead-letter topic, by reason class", ["reason"], registry=r
        )
        self.closed = Counter("attune_conversations_closed", "Conversations closed with a score", registry=r)
        self.produced = Counter("attune_records_produced", "Records acknowledged by the broker", ["topic"], registry=r)
        self.reread = Counter(
            "attune_reread",
            "Input messages read back directly because the consumer skipped them (streams._faust.audit), by topic",
            ["topic"],
            registry=r,
        )
        self.open = Gauge("attune_open_conversations", "Conversations buffered (open, not yet closed)", registry=r)
        self.lag = Gauge(
            "attune_consumer_lag",
            "Turns-topic messages not yet processed, per owned partition",
            ["partition"],
            registry=r,
        )
        self.crisis_turns = Counter(
            "attune_crisis_turns",
            "User turns with a crisis alert, by the detector that raised it (rule includes rule+model)",
            ["detector"],
            registry=r,
        )
        self.not_covered = Counter(
            "attune_crisis_not_covered_turns",
            "User turns in a language the crisis detector does not cover (alerted as crisis_not_covered)",
            registry=r,
        )
        self.unknown_fields = Counter(
            "attune_inputs_with_unknown_fields",
            "Accepted inputs carrying fields no schema declares (kept, never dead-lettered; names in the log)",
            registry=r,
        )
        self.ready = Gauge("attune_ready", "1 once partitions are assigned and tables recovered", registry=r)
        self.latency = Histogram(
            "attune_turn_latency_seconds",
            "Turn broker timestamp to the acknowledgement of its outputs (turn to score/alert)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.batch_seconds = Histogram(
            "attune_batch_seconds",
            "One agent batch: decode, score, produce, acknowledged (worker clock only)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.loop_lag = Histogram(
            "attune_event_loop_lag_seconds",
            "How late the event loop ran a 100 ms timer (a stall delays every turn, alert and health check)",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
            registry=r,
        )
        self.loop_lag_max = Gauge(
            "attune_event_loop_lag_max_seconds", "The largest event-loop lag since the worker started", registry=r
        )
        self.allocator = Gauge(
            "attune_allocator_bytes",
            "jemalloc's accounting (only where the worker runs on it): allocated = live objects, active = the "
            "pages holding them (active - allocated is fragmentation), metadata, resident",
            ["kind"],
            registry=r,
        )
        self.judge_calls = Counter("attune_judge_calls", "Judge calls by status", ["status"], registry=r)
        self.judge_cost = Counter(
            "attune_judge_cost_usd", "Judge spend in USD at the config's list prices (priced calls only)", registry=r
        )
        self.judge_unpriced = Counter(
            "attune_judge_unpriced_calls",
            "Judge calls to a model without a [prices] entry: their cost is unknown, not in attune_judge_cost_usd",
            registry=r,
        )
        self.judge_tokens = Counter("attune_judge_tokens", "Judge tokens, by direction", ["direction"], registry=r)
        self.judgments = Counter(
            "attune_judgments", "Judge output records delivered, by status", ["status"], registry=r
        )
        self.verdicts = Counter(
            "attune_verdicts",
            "Conversation verdicts, by outcome (passed, failed, gate_failed) and judge status",
            ["outcome", "judge_status"],
            registry=r,
        )
        self.disagreements = Counter(
            "attune_tier_disagreements",
            "Checklist criteria the cheap tier and the LLM judge answered differently (calibration data)",
            ["criterion"],
            registry=r,
        )
        self._judge_sources: list[tuple[Callable[[], Any], dict[str, int]]] = []
        self._lock = threading.Lock()
        self._ready = False

    # -- the stream ---------------------------------------------------------------------------------
    def observe_batch(
        self, res: BatchResult, timestamps: Iterable[float | None], acked_at: float, started: float
    ) -> None:
        """Count one processed batch. ``timestamps``: broker timestamps (epoch s) of its turns-topic events."""
        s = res.stats
        user = getattr(s, "user_turns", 0)
        assistant = getattr(s, "assistant_turns", 0)
        if user:
            self.turns.labels("user").inc(user)
        if assistant:
            self.turns.labels("assistant").inc(assistant)
        if s.duplicates:
            self.ignored.labels("duplicate").inc(s.duplicates)
        if s.after_close:
            self.ignored.labels("after_close").inc(s.after_close)
        if getattr(s, "replays", 0):
            self.replays.inc(s.replays)
        if s.scored:
            self.scored.inc(s.scored)
        for detector, n in (
            ("rule", s.crisis_rule),
            ("model", s.crisis_model),
            ("conversation", s.crisis_conversation),
        ):
            if n:
                self.crisis_turns.labels(detector).inc(n)
        if s.not_covered:
            self.not_covered.inc(s.not_covered)
        if getattr(s, "unknown_fields", 0):
            self.unknown_fields.inc(s.unknown_fields)
        if s.closed:
            self.closed.inc(s.closed)
        per_topic: dict[str, int] = {}
        for o in res.outputs:
            per_topic[o.topic] = per_topic.get(o.topic, 0) + 1
            if o.kind == "safety_alert":
                kind = orjson.loads(o.value).get("alert_type")
                self.alerts.labels(kind if kind in _ALERT_TYPES else "other").inc()
            elif o.kind == "dead_letter":
                self.dead_letters.labels(str(orjson.loads(o.value).get("reason_code", "other"))).inc()
            elif o.kind == "conversation_verdict":
                self.verdict(orjson.loads(o.value))
        for topic, n in per_topic.items():
            self.produced.labels(topic).inc(n)
        self.batch_seconds.observe(max(acked_at - started, 0.0))
        for ts in timestamps:
            if ts:
                self.latency.observe(max(acked_at - ts, 0.0))

    def count_path_alerts(self, counts: Mapping[str, int]) -> None:
        """Alerts this worker's alert path (streams._alert_path) had acknowledged, by type."""
        for kind, n in counts.items():
            self.alerts.labels(kind if kind in _ALERT_TYPES else "other").inc(n)
        self.produced.labels(SAFETY_ALERTS.name).inc(sum(counts.values()))

    async def watch_loop_lag(self, interval: float = 0.1) -> None:
        """Forever: sleep ``interval`` and record how much later than that the loop woke up."""
        worst = 0.0
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(interval)
            lag = max(loop.time() - t - interval, 0.0)
            self.loop_lag.observe(lag)
            if lag > worst:
                worst = lag
                self.loop_lag_max.set(worst)

    def set_open_conversations(self, metas: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        self.open.set(sum(1 for _, m in metas if is_open(m)))

    def set_lag(self, lag: Mapping[int, int]) -> None:
        """Replace the per-partition lag (partitions no longer owned disappear from the output)."""
        with self._lock:
            for labels in list(self.lag._metrics):  # prometheus_client keeps children by label tuple
                if int(labels[0]) not in lag:
                    self.lag.remove(*labels)
            for p, n in lag.items():
                self.lag.labels(str(p)).set(max(n, 0))

    def set_allocator(self, stats: Mapping[str, int] | None) -> None:
        for kind, value in (stats or {}).items():
            self.allocator.labels(kind).set(value)

    def set_ready(self, ready: bool) -> None:
        self._ready = ready
        self.ready.set(1 if ready else 0)

    @property
    def is_ready(self) -> bool:
        return self._ready

    # -- judges: the API the judge fan-out calls ----------------------------------------------------
    def judge_call(self, status: str, n: int = 1) -> None:
        """Count judge calls; ``status`` is a short fixed word or an HTTP status (``ok``, ``429``, ``error``)."""
        self.judge_calls.labels(status).inc(n)

    def judge_usage(self, usage: Any) -> None:
        """Add a :class:`scorers.judges.Usage` (tokens and USD) to the counters. An unknown cost (None)
        is counted as unpriced calls, so a dashboard can tell "spent nothing" from "cannot say"."""
        cost = getattr(usage, "cost_usd", 0.0)
        if cost is None:
            calls = int(getattr(usage, "calls", 0) or 0)
            if calls > 0:
                self.judge_unpriced.inc(calls)
        elif cost > 0:
            self.judge_cost.inc(float(cost))
        for direction in ("input", "output"):
            n = int(getattr(usage, f"{direction}_tokens", 0) or 0)
            if n > 0:
                self.judge_tokens.labels(direction).inc(n)

    def judge_records(self, records: Iterable[Any]) -> None:
        """Count the judge's output records (``TurnJudgment``, LLM ``ConversationScore``) once delivered.

        Adds each record's ``usage`` (USD, tokens) and counts it in ``attune_judgments_total`` by its
        ``status`` (``ok``/``error``; records without one, such as a checklist score, count as ``ok``
        unless they carry an ``error``).
        """
        for rec in records:
            if getattr(rec, "kind", None) == "conversation_verdict":
                self.verdict(rec.model_dump(mode="json"))
                continue
            usage = getattr(rec, "usage", None)
            if usage is not None:
                self.judge_usage(usage)
            status = getattr(rec, "status", None) or ("error" if getattr(rec, "error", None) else "ok")
            self.judgments.labels(status if status in ("ok", "error") else "other").inc()

    def verdict(self, v: Mapping[str, Any]) -> None:
        """Count one ``conversation_verdict`` (as JSON): its outcome and each tier disagreement in it."""
        outcome = "passed" if v.get("passed") else ("gate_failed" if v.get("safety_gate_failed") else "failed")
        self.verdicts.labels(outcome, str(v.get("judge_status", "other"))).inc()
        for d in v.get("disagreements") or ():
            self.disagreements.labels(str(d.get("criterion", "other"))).inc()

    def watch_judge_stats(self, get_stats: Callable[[], Any]) -> None:
        """Export a judge engine's cumulative ``EngineStats`` (``tier.stats``) as judge-call counters.

        Statuses: ``ok`` (HTTP attempts that got a reply), the provider's HTTP status or
        ``timeout/connection`` for failed attempts, ``cache_hit``, ``breaker_open`` (refused by the
        open circuit breaker) and ``invalid_reply``. Refreshed by :meth:`refresh_judges`.
        """
        self._judge_sources.append((get_stats, {}))

    def refresh_judges(self) -> None:
        """Turn the growth of every watched ``EngineStats`` since the last refresh into counter increments."""
        for get_stats, last in self._judge_sources:
            st = get_stats()
            if st is None:
                continue
            failed = dict(getattr(st, "by_status", {}) or {})
            now = {
                **failed,
                "ok": int(st.requests) - sum(failed.values()),
                "cache_hit": int(st.cache_hits),
                "breaker_open": int(st.breaker_rejections),
                "invalid_reply": int(st.invalid_replies),
            }
            for status, total in now.items():
                delta = total - last.get(status, 0)
                if delta > 0:
                    self.judge_calls.labels(status).inc(delta)
                last[status] = max(total, last.get(status, 0))

    def exposition(self) -> bytes:
        self.refresh_judges()
        return generate_latest(self.registry)


#: The worker's metrics (one worker per process).
METRICS = WorkerMetrics()


class HealthServer:
    """``/metrics``, ``/healthz`` and ``/readyz`` on a daemon thread (never on the worker's event loop).

    ``/healthz`` is liveness: it asks the worker's event loop to run a no-op and answers 503 if the loop
    does not within ``loop_timeout`` seconds (a blocked loop processes nothing). Before the loop is
    attached (process start-up) it answers 200. ``/readyz`` answers 200 only after the worker's
    partitions are assigned and its tables recovered, 503 otherwise (also during a rebalance).
    """

    def __init__(
        self, metrics: WorkerMetrics, host: str = "127.0.0.1", port: int = 0, loop_timeout: float = 5.0
    ) -> None:
        self.metrics = metrics
        self.loop: asyncio.AbstractEventLoop | None = None
        self.loop_timeout = loop_timeout
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="attune-metrics", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def alive(self) -> bool:
        loop = self.loop
        if loop is None:
            return True
        if loop.is_closed():
            return False
        ran = threading.Event()
        try:
            loop.call_soon_threadsafe(ran.set)
        except RuntimeError:  # loop closed in between
            return False
        return ran.wait(self.loop_timeout)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, server.metrics.exposition(), CONTENT_TYPE_LATEST)
                elif path == "/healthz":
                    ok = server.alive()
                    self._send(200 if ok else 503, b"ok\n" if ok else b"event loop not responding\n")
                elif path == "/readyz":
                    ok = server.metrics.is_ready
                    self._send(200 if ok else 503, b"ready\n" if ok else b"not ready: partitions or tables\n")
                else:
                    self._send(404, b"not found\n")

            def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # scrapes are not worth a log line
                return

        return Handler


def start_health_server(metrics: WorkerMetrics, host: str, port: int) -> HealthServer | None:
    """Serve the endpoints, or return None when ``port`` is 0 (off) or the address is taken.

    A worker whose metrics port is taken (e.g. a second worker on the same host with the default port)
    keeps processing: scoring must not depend on monitoring. The failure is logged at ERROR.
    """
    if port == 0:
        return None
    try:
        server = HealthServer(metrics, host, port)
    except OSError as exc:
        log.error("metrics endpoint disabled: cannot listen on %s:%d (%s)", host, port, exc.strerror or exc)
        return None
    return server.start()


def turns_lag(highwaters: Mapping[int, int | None], next_offsets: Mapping[int, int]) -> dict[int, int]:
    """Per partition: high watermark minus the next offset to process (partitions with both known)."""
    return {p: max(hw - next_offsets[p], 0) for p, hw in highwaters.items() if hw is not None and p in next_offsets}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg (+ exc). Never adds record arguments separately."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "pid": record.process,
        }
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out).decode()


def json_logging_config(loglevel: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for JSON lines on stderr (what ``--log-format json`` selects)."""
    level = loglevel.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {"default": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
        "root": {"level": level, "handlers": ["default"]},
    }


def event_timestamps(events: Sequence[Any], topic: str) -> list[float | None]:
    """Broker timestamps of the events of one topic (Faust gives epoch seconds)."""
    return [e.message.timestamp for e in events if e.message.topic == topic]
