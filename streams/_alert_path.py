"""The alert path: every user turn's own alerts, sent without waiting for the scoring agent.

Why: the scoring agent (Faust, ``process_turns``) owns table state, so after a worker is killed its turns
wait for the consumer group to notice, rebalance, and recover the tables: alerts for turns arriving meanwhile
were seconds late (docs/reliability.md, "Alerts across a worker kill (issue 14, part 3)"). A user turn's own
alerts need no state (:meth:`Evaluator.turn_alerts`: the crisis detector on the turn's text, language
coverage, dependency), so this path computes them apart:

* **no consumer group membership**: a plain aiokafka consumer *assigned* every turns partition, so there is
  no rebalance to wait for. A restarted worker resumes at once from the offsets this path committed (group
  ``<app-id>-alerts``, commits only); every worker's path reads every partition, so with N workers each alert
  is sent N times, always identical (deterministic ``alert_id``; consumers de-duplicate by it, as for any
  redelivery), and a kill of one worker does not pause alerts at all;
* **its own process** (:class:`AlertPathProcess`, started and kept running by the worker): a scoring agent
  busy with a batch, a table recovery or a rebalance does not delay it, and it does not take the scoring
  agent's GIL;
* **at least once**: offsets are committed only after the broker acknowledged the batch's alerts.

The scoring agent still computes every alert for the conversation's verdict, and itself sends only those
that earlier turns explain (risk built across turns). Where nothing was committed yet, the path starts at the
scoring agent's committed offsets (so turning it on in a running deployment does not resend a week of
alerts), else at the beginning of the topic.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from schemas import DEFAULT_LIMITS, InvalidRecord, Limits, Turn, decode_turn_event, encode
from schemas.topics import SAFETY_ALERTS, TURNS

from . import security
from ._quiet import quiet_repeats
from .broker import PROFILES, ProfileName, bootstrap_of
from .io import producer_for

log = logging.getLogger("attune.alert_path")

#: Events read per batch, and how long a fetch may wait for them.
BATCH_MAX = 500
#: Seconds before a failed path is started again (a broker outage, a lost connection).
RESTART_AFTER = 1.0
#: The key of the child's count lines on its stdout.
COUNTS_KEY = "attune_alert_path_sent"


class AlertPath:
    """The consumer loop; in the worker it runs in its own process (:func:`main`), in tests in a thread
    (:meth:`start` / :meth:`stop`)."""

    def __init__(
        self,
        broker: str,
        *,
        app_id: str,
        partitions: int,
        profile: ProfileName = "kafka",
        limits: Limits = DEFAULT_LIMITS,
        evaluator: Any = None,
        on_alerts: Callable[[list[Any]], None] | None = None,
    ) -> None:
        if evaluator is None:
            from scorers import Evaluator

            evaluator = Evaluator()
        self.ev = evaluator
        self.broker = broker
        self.group = f"{app_id}-alerts"
        self.scoring_group = app_id
        self.partitions = partitions
        self.profile_name = profile
        self.profile = PROFILES[profile]
        self.limits = limits
        self.on_alerts = on_alerts
        self.sent = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.running = threading.Event()  # set once the consumer is positioned (tests, readiness)

    def start(self) -> AlertPath:
        self._thread = threading.Thread(target=self._main, name="attune-alert-path", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _main(self) -> None:
        while not self._stop.is_set():
            try:
                asyncio.run(self._run())
            except Exception:  # never silently dead: log, count, start again
                self.failures += 1
                self.running.clear()
                log.exception("alert path failed; starting it again in %.0f s", RESTART_AFTER)
                self._stop.wait(RESTART_AFTER)

    async def _start_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The scoring agent's committed offsets, for partitions this path never committed."""
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_of(self.broker), **security.client_kwargs())
        await admin.start()
        try:
            offsets = await admin.list_consumer_group_offsets(self.scoring_group, partitions=tps)
        finally:
            await admin.close()
        return {tp: meta.offset for tp, meta in offsets.items() if meta is not None and meta.offset >= 0}

    async def _run(self) -> None:
        bootstrap = bootstrap_of(self.broker)
        extra = {} if self.profile.fetch_max_wait_ms is None else {"fetch_max_wait_ms": self.profile.fetch_max_wait_ms}
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=self.group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            **extra,
            **security.client_kwargs(),
        )
        producer = producer_for(self.broker, self.profile_name)
        try:
            await consumer.start()
            await producer.start()
            tps = [TopicPartition(TURNS.name, p) for p in range(self.partitions)]
            consumer.assign(tps)
            fallback: dict[TopicPartition, int] | None = None
            for tp in tps:
                committed = await consumer.committed(tp)
                if committed is not None:
                    consumer.seek(tp, committed)
                    continue
                if fallback is None:
                    fallback = await self._start_offsets(tps)
                if tp in fallback:
                    consumer.seek(tp, fallback[tp])
                else:
                    await consumer.seek_to_beginning(tp)
            self.running.set()
            while not self._stop.is_set():
                batches = await consumer.getmany(timeout_ms=100, max_records=BATCH_MAX)
                if not batches:
                    continue
                alerts = []
                for msgs in batches.values():
                    for m in msgs:
                        alerts += self._alerts_of(m.value)
                futs = [
                    await producer.send(SAFETY_ALERTS.name, encode(a), key=a.conversation_id.encode()) for a in alerts
                ]
                if futs:
                    await asyncio.gather(*futs)
                    self.sent += len(alerts)
                    if self.on_alerts is not None:
                        self.on_alerts(alerts)
                await consumer.commit({tp: msgs[-1].offset + 1 for tp, msgs in batches.items() if msgs})
        finally:
            self.running.clear()
            await consumer.stop()
            await producer.stop()

    def _alerts_of(self, raw: bytes | None) -> list[Any]:
        """A user turn's own alerts, stamped with the turn's metadata; nothing for anything else (the scoring
        agent dead-letters what does not decode)."""
        if raw is None:
            return []
        try:
            event = decode_turn_event(raw, self.limits)
        except InvalidRecord:
            return []
        if not isinstance(event, Turn) or event.role != "user":
            return []
        alerts = self.ev.turn_alerts(event.conversation_id, event.turn_index, event.text)
        for a in alerts:
            a.metadata = dict(event.metadata or {})
        return alerts


def wait_running(path: AlertPath, timeout: float = 30.0) -> bool:
    """True once the path is positioned on every partition (or False after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.running.wait(0.1):
            return True
    return False


class AlertPathProcess:
    """The alert path in a child process, kept running by a supervisor thread of the worker.

    Why a process and not a thread of the worker: as a thread, the path raised the worker's turn->score p50
    and p99 well beyond the run-to-run spread (its I/O wake-ups, one per fetch wait, take the GIL from the
    scoring agent; docs/benchmarks.md, "Alert path (issue #14 part 3)"); a child process has its own
    interpreter. It is in the worker's process group (a SIGKILL of the group ends it too) and exits by itself
    when its parent is gone.
    """

    def __init__(
        self,
        broker: str,
        *,
        app_id: str,
        partitions: int,
        profile: str,
        limits: Limits,
        on_counts: Callable[[dict[str, int]], None] | None = None,
    ) -> None:
        """``on_counts``: called (in the supervisor thread) with ``{alert_type: n}`` for every batch of alerts
        the child had acknowledged, so the worker's metrics count them."""
        import dataclasses
        import json
        import sys

        self.cmd = [
            sys.executable,
            "-m",
            "streams._alert_path",
            "--broker",
            broker,
            "--app-id",
            app_id,
            "--partitions",
            str(partitions),
            "--profile",
            profile,
            "--limits",
            json.dumps(dataclasses.asdict(limits)),
        ]
        self.restarts = 0
        self.on_counts = on_counts
        self._stop = threading.Event()
        self._proc: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> AlertPathProcess:
        self._thread = threading.Thread(target=self._supervise, name="attune-alert-path", daemon=True)
        self._thread.start()
        return self

    def _supervise(self) -> None:
        import subprocess

        while not self._stop.is_set():
            self._proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
            assert self._proc.stdout is not None
            for line in self._proc.stdout:  # the child's counts, one JSON line per acknowledged batch
                self._counted(line)
            code = self._proc.wait()
            if self._stop.is_set():
                return
            self.restarts += 1
            log.error("alert path process exited with %s; starting it again in %.0f s", code, RESTART_AFTER)
            self._stop.wait(RESTART_AFTER)

    def _counted(self, line: str) -> None:
        import json

        try:
            counts = json.loads(line)[COUNTS_KEY]
        except (ValueError, KeyError, TypeError):
            log.warning("alert path: unexpected output %r", line[:200])
            return
        if self.on_counts is not None:
            self.on_counts({str(k): int(v) for k, v in counts.items()})

    def stop(self, timeout: float = 10.0) -> None:
        import subprocess

        self._stop.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self._thread is not None:
            self._thread.join(timeout)


def _watch_parent(path: AlertPath, parent: int) -> None:
    """Stop when the worker that started this process is gone (e.g. SIGKILLed alone, not its group)."""
    import os

    while not path._stop.wait(0.5):
        if os.getppid() != parent:
            log.warning("alert path: the worker process is gone; stopping")
            path._stop.set()


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import os
    import signal

    ap = argparse.ArgumentParser(description="attune's alert path (started by `attune worker`)")
    ap.add_argument("--broker", required=True)
    ap.add_argument("--app-id", default="attune")
    ap.add_argument("--partitions", type=int, default=TURNS.partitions)
    ap.add_argument("--profile", default="kafka", choices=sorted(PROFILES))
    ap.add_argument("--limits", default=None, help="the worker's input limits as JSON")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet_repeats()  # aiokafka's reconnect errors while a broker is down: one per 30 s, with a count
    limits = Limits(**json.loads(args.limits)) if args.limits else DEFAULT_LIMITS

    def report(alerts: list[Any]) -> None:  # to the worker's supervisor thread, which counts them in its metrics
        counts: dict[str, int] = {}
        for a in alerts:
            counts[a.alert_type] = counts.get(a.alert_type, 0) + 1
        print(json.dumps({COUNTS_KEY: counts}), flush=True)

    from scorers.safety import detector_version

    detector_version()  # loads the crisis model: the first alert does not wait for it
    path = AlertPath(
        args.broker,
        app_id=args.app_id,
        partitions=args.partitions,
        profile=args.profile,
        limits=limits,
        on_alerts=report,
    )
    signal.signal(signal.SIGTERM, lambda *_: path._stop.set())
    signal.signal(signal.SIGINT, lambda *_: path._stop.set())
    threading.Thread(target=_watch_parent, args=(path, os.getppid()), daemon=True).start()
    path._main()  # runs until stopped; restarts itself after a failure
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
