"""The alert path: every user turn's own alerts, sent without waiting for the scoring agent.

Why: the scoring agent (Faust, ``process_turns``) owns table state, so after a worker is killed its turns
wait for the consumer group to notice, rebalance, and recover the tables: alerts for turns arriving meanwhile
were 8-23 s late (docs/reliability.md). A user turn's own alerts need no state (:meth:`Evaluator.turn_alerts`:
the crisis detector on the turn's text, language coverage, dependency), so this path computes them apart:

* **no consumer group membership**: a plain aiokafka consumer *assigned* every turns partition, so there is
  no rebalance to wait for. A restarted worker resumes at once from the offsets this path committed (group
  ``<app-id>-alerts``, commits only); every worker's path reads every partition, so with N workers each alert
  is sent N times, always identical (deterministic ``alert_id``; consumers de-duplicate by it, as for any
  redelivery), and a kill of one worker does not pause alerts at all;
* **its own thread and event loop**: a scoring agent busy with a batch, a table recovery or a rebalance does
  not delay it;
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

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from schemas import DEFAULT_LIMITS, InvalidRecord, Limits, Turn, decode_turn_event, encode
from schemas.topics import SAFETY_ALERTS, TURNS

from . import security
from .broker import PROFILES, ProfileName, bootstrap_of

log = logging.getLogger("attune.alert_path")

#: Events read per batch, and how long a fetch may wait for them.
BATCH_MAX = 500
#: Seconds before a failed path is started again (a broker outage, a lost connection).
RESTART_AFTER = 1.0


class AlertPath:
    """Runs in a daemon thread of the worker process; :meth:`start` / :meth:`stop`."""

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
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            linger_ms=self.profile.linger_ms,
            acks=1,
            enable_idempotence=False,
            **security.client_kwargs(),
        )
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
