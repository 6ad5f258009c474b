"""Example safety-team consumer of ``attune.alerts.safety``: route by severity, acknowledge, never lose an alert.

    python examples/alerts_consumer.py --broker kafka://127.0.0.1:9092 --group safety-team --ack-store acks.sqlite

Guarantees (docs/consumers.md):

* **At-least-once delivery, exactly-once acknowledgement.** Each alert is handed to the handler of its
  route, then recorded in the ack store (sqlite, one row per ``alert_id``, fsync'd), and only then is
  its offset committed. A crash between the ack and the commit redelivers the alert; the ack store
  already has it, so the handler is not called again and no second row appears. Alerts the stream
  itself sends twice (it is at-least-once; ``alert_id`` is deterministic) are absorbed the same way.
* **Never commit past an alert that failed.** A handler that raises stops its partition at that alert:
  the offsets before it are committed, the consumer seeks back to it and retries with a growing pause.
* **Nothing is silently skipped.** A record that does not decode as a ``safety_alert`` this code knows
  (garbage, another kind, a ``schema_version`` of a newer major, a severity added by a newer major) is
  appended to the parking file (JSONL, fsync'd, original bytes in base64) before its offset is committed.
* **A recreated topic is noticed** (a broker that lost its state, a topic deleted and created again: its
  offsets start again at 0, and a consumer that keeps its old position skips every new alert below it).
  At each assignment and every ``--verify-interval`` seconds the consumer reads back the record at the
  offset it last acknowledged on each partition; if that record is gone or is another alert, the
  partition is read again from its beginning (the ack store absorbs what was already handled) and a
  warning says so.

Uses the ``schemas`` package (the record contract), attune's connection settings (``streams.security``:
TLS/SASL from ``ATTUNE_KAFKA_*``, as the worker) and aiokafka: no attune runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import logging
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaConnectionError, KafkaError

from schemas import SafetyAlert, decode_output
from schemas.topics import SAFETY_ALERTS
from streams.broker import bootstrap_of
from streams.security import client_kwargs

log = logging.getLogger("alerts_consumer")

#: Severity -> route. An example policy: a team sets its own. Every severity of the contract has a route
#: (adding a severity is a major schema version, docs/schemas.md), so no alert can fall through.
ROUTES: dict[str, str] = {
    "critical": "page",  # crisis left unanswered, dangerous advice: a human now
    "high": "page",  # crisis disclosure confirmed by the rules
    "medium": "review",  # dependency, lesser harmful replies: the review queue
    "possible": "review",  # crisis risk seen only by the learned model: a human decides
    "info": "ops_log",  # judge infrastructure failures: not a safety finding
}

Handler = Callable[[SafetyAlert], None]


def _announce(route: str) -> Handler:
    """The default handlers print one line per alert (ids and labels, no evidence text).

    Replace them with the pager, ticket or log client of your team; a handler that raises keeps the
    alert unacknowledged and uncommitted, and it will be retried.
    """

    def handle(alert: SafetyAlert) -> None:
        turn = "-" if alert.turn_index is None else alert.turn_index
        tenant = alert.metadata.get("tenant", "-")
        print(
            f"{route.upper():8} {alert.severity:8} {alert.alert_type:20} conversation={alert.conversation_id} "
            f"turn={turn} tenant={tenant} alert={alert.alert_id}",
            flush=True,
        )

    return handle


DEFAULT_HANDLERS: dict[str, Handler] = {route: _announce(route) for route in set(ROUTES.values())}


class Message(Protocol):
    """The part of ``aiokafka.ConsumerRecord`` this consumer reads (tests pass their own)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


class AckStore:
    """Durable record of handled alerts, one row per ``alert_id``.

    sqlite with ``synchronous=FULL``: a returned :meth:`ack` has reached the disk, so committing the offset
    afterwards can never lose an alert. ``deliveries`` counts how often the alert was seen (redeliveries
    after a crash, or the stream's own duplicates); the row itself is written once.
    """

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute(
            """CREATE TABLE IF NOT EXISTS acks (
                alert_id TEXT PRIMARY KEY, route TEXT NOT NULL, severity TEXT NOT NULL, alert_type TEXT NOT NULL,
                conversation_id TEXT NOT NULL, turn_index INTEGER, topic TEXT NOT NULL, partition INTEGER NOT NULL,
                "offset" INTEGER NOT NULL, acked_at REAL NOT NULL, deliveries INTEGER NOT NULL DEFAULT 1,
                record TEXT NOT NULL)"""
        )
        # One row per detected recreation of a partition: acks before it belong to the old topic.
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS recreations (topic TEXT NOT NULL, partition INTEGER NOT NULL, at REAL NOT NULL)"
        )
        # Per partition, an acknowledged (offset, alert_id) already verified against the broker: the next check
        # reads that offset again (checking only the newest ack would miss a recreation followed by new acks).
        self.db.execute(
            """CREATE TABLE IF NOT EXISTS checkpoints (topic TEXT NOT NULL, partition INTEGER NOT NULL,
                "offset" INTEGER NOT NULL, alert_id TEXT NOT NULL, PRIMARY KEY (topic, partition))"""
        )

    def is_acked(self, alert_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM acks WHERE alert_id = ?", (alert_id,)).fetchone() is not None

    def ack(self, alert: SafetyAlert, route: str, msg: Message) -> None:
        """Plain INSERT (no OR IGNORE): a second ack of one alert is a bug and must fail loudly."""
        self.db.execute(
            "INSERT INTO acks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
            (
                alert.alert_id,
                route,
                alert.severity,
                alert.alert_type,
                alert.conversation_id,
                alert.turn_index,
                msg.topic,
                msg.partition,
                msg.offset,
                time.time(),
                alert.model_dump_json(),
            ),
        )
        # The first ack on a partition is its checkpoint (it was just read from the broker): a recreation
        # before the first check is then noticed too.
        self.db.execute(
            "INSERT OR IGNORE INTO checkpoints VALUES (?, ?, ?, ?)",
            (msg.topic, msg.partition, msg.offset, alert.alert_id),
        )

    def last_ack(self, topic: str, partition: int) -> tuple[int, str] | None:
        """(offset, alert_id) of the latest alert acknowledged on this partition since its last recreation."""
        row = self.db.execute(
            """SELECT "offset", alert_id FROM acks WHERE topic = ? AND partition = ? AND acked_at > COALESCE(
                   (SELECT MAX(at) FROM recreations WHERE topic = ? AND partition = ?), 0)
               ORDER BY acked_at DESC LIMIT 1""",
            (topic, partition, topic, partition),
        ).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def checkpoint(self, topic: str, partition: int) -> tuple[int, str] | None:
        row = self.db.execute(
            'SELECT "offset", alert_id FROM checkpoints WHERE topic = ? AND partition = ?', (topic, partition)
        ).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def set_checkpoint(self, topic: str, partition: int, offset: int, alert_id: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?)", (topic, partition, offset, alert_id))

    def recreated(self, topic: str, partition: int) -> None:
        self.db.execute("INSERT INTO recreations VALUES (?, ?, ?)", (topic, partition, time.time()))
        self.db.execute("DELETE FROM checkpoints WHERE topic = ? AND partition = ?", (topic, partition))

    def redelivered(self, alert_id: str) -> None:
        self.db.execute("UPDATE acks SET deliveries = deliveries + 1 WHERE alert_id = ?", (alert_id,))

    def close(self) -> None:
        self.db.close()


class ParkingFile:
    """Records that are not alerts this code can route: kept whole (JSONL, fsync'd), once per offset."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parked: set[tuple[str, int, int]] = set()
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError, KeyError):  # a torn last line from a crash
                    d = json.loads(line)
                    self.parked.add((d["topic"], d["partition"], d["offset"]))

    def park(self, msg: Message, reason: str) -> None:
        if (msg.topic, msg.partition, msg.offset) in self.parked:
            return
        entry = {
            "topic": msg.topic,
            "partition": msg.partition,
            "offset": msg.offset,
            "reason": reason[:2000],
            "key_b64": base64.b64encode(msg.key).decode() if msg.key is not None else None,
            "value_b64": base64.b64encode(msg.value or b"").decode(),
            "parked_at": time.time(),
        }
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.parked.add((msg.topic, msg.partition, msg.offset))


class Committer(Protocol):
    """What :class:`AlertProcessor` needs of the consumer: commit and seek (a fake in the tests)."""

    async def commit(self, offsets: Mapping[TopicPartition, int]) -> None: ...

    def seek(self, partition: TopicPartition, offset: int) -> None: ...


@dataclass
class AlertProcessor:
    """Route, acknowledge, then commit: the ordering that makes a crash anywhere safe."""

    store: AckStore
    parking: ParkingFile
    handlers: Mapping[str, Handler] = field(default_factory=lambda: DEFAULT_HANDLERS)
    routes: Mapping[str, str] = field(default_factory=lambda: ROUTES)
    commit_interval: float = 0.0
    #: Next offset per partition whose records before it are all acknowledged or parked, not yet committed.
    pending: dict[TopicPartition, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: {"acked": 0, "duplicate": 0, "parked": 0, "failed": 0})
    _last_commit: float = 0.0

    def handle(self, msg: Message) -> str:
        """Handle one record durably; returns ``acked``, ``duplicate`` or ``parked``; raises if the handler did."""
        try:
            rec = decode_output(msg.value or b"")
        except ValueError as exc:  # not JSON, invalid, a newer major, a value this version does not know
            self.parking.park(msg, f"undecodable: {exc}")
            return "parked"
        if not isinstance(rec, SafetyAlert):
            self.parking.park(msg, f"not a safety_alert: kind {rec.kind!r}")
            return "parked"
        if self.store.is_acked(rec.alert_id):
            self.store.redelivered(rec.alert_id)
            return "duplicate"
        route = self.routes[rec.severity]
        self.handlers[route](rec)  # deliver first ...
        self.store.ack(rec, route, msg)  # ... then record it durably; only then may the offset move on
        return "acked"

    async def process(self, consumer: Committer, batch: Mapping[TopicPartition, Sequence[Message]]) -> bool:
        """Handle a fetched batch in partition order; commit what is done. False if a handler failed."""
        ok = True
        for tp, msgs in batch.items():
            for msg in msgs:
                try:
                    outcome = self.handle(msg)
                except Exception:
                    log.exception("handling %s[%d]@%d failed; will retry it", tp.topic, tp.partition, msg.offset)
                    self.counts["failed"] += 1
                    consumer.seek(tp, msg.offset)  # fetch it again; nothing after it counts as done
                    ok = False
                    break
                self.counts[outcome] += 1
                self.pending[tp] = msg.offset + 1
        await self.commit(consumer, force=not ok)
        return ok

    async def commit(self, consumer: Committer, *, force: bool = False) -> None:
        """Commit the acknowledged progress, at most every ``commit_interval`` seconds unless forced."""
        if not self.pending or (not force and time.monotonic() - self._last_commit < self.commit_interval):
            return
        offsets, self.pending = self.pending, {}
        try:
            await consumer.commit(offsets)
        except KafkaError as exc:  # CommitFailedError, IllegalStateError, ...
            # Kept for the next attempt (a revocation drops it: the next owner redelivers, the ack store dedupes).
            log.warning("commit of %s failed (%s); retrying with the next commit", offsets, exc)
            for tp, offset in offsets.items():
                self.pending.setdefault(tp, offset)
        self._last_commit = time.monotonic()

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.pending.pop(tp, None)


RecordReader = Callable[[TopicPartition, int], Awaitable[bytes | None]]


class TopicGuard:
    """Notices a recreated partition: the record at the offset last acknowledged there is gone or another alert.

    Why: a broker that lost its state (the embedded broker keeps everything in memory) or a topic deleted and
    created again starts its offsets at 0; a consumer that keeps its position (or its committed offset) skips
    every new alert below it, silently. Reading back one record per partition is cheap and decides it.
    """

    def __init__(self, store: AckStore, read: RecordReader) -> None:
        self.store, self.read = store, read
        self.recreations = 0

    async def verify(self, consumer: Any, partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
        """Partitions found recreated; each is sought to its beginning (the ack store dedupes the re-read)."""
        found = []
        for tp in partitions:
            last = self.store.last_ack(tp.topic, tp.partition)
            checked = self.store.checkpoint(tp.topic, tp.partition) or last
            if checked is None:
                continue
            offset, alert_id = checked
            try:
                value = await self.read(tp, offset)
            except KafkaError as exc:  # the broker is down or restarting: decide at the next check
                log.warning("cannot verify %s[%d] now (%s); checking again later", tp.topic, tp.partition, exc)
                continue
            try:
                now = decode_output(value).alert_id if value is not None else None  # type: ignore[union-attr]
            except (ValueError, AttributeError):
                now = None
            if now == alert_id:
                if last is not None:  # verified: next time, check from the newest acknowledgement
                    self.store.set_checkpoint(tp.topic, tp.partition, *last)
                continue
            what = "is gone" if value is None else "holds another record"
            log.warning(
                "%s[%d] was recreated: offset %d, where alert %s was acknowledged, %s; reading the partition "
                "again from its beginning (alerts already handled are not handled twice)",
                tp.topic,
                tp.partition,
                offset,
                alert_id,
                what,
            )
            self.store.recreated(tp.topic, tp.partition)
            await consumer.seek_to_beginning(tp)
            self.recreations += 1
            found.append(tp)
        return found


def record_reader(bootstrap: str) -> RecordReader:
    """Read one record at an offset with a throwaway consumer outside the group (no effect on positions)."""

    async def read(tp: TopicPartition, offset: int) -> bytes | None:
        reader = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **client_kwargs())
        await reader.start()
        try:
            reader.assign([tp])
            start = (await reader.beginning_offsets([tp]))[tp]
            end = (await reader.end_offsets([tp]))[tp]
            if not start <= offset < max(end, offset + 1):
                return None
            reader.seek(tp, offset)
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:
                for msg in (await reader.getmany(tp, timeout_ms=500)).get(tp, []):
                    if msg.offset == offset:
                        return msg.value or b""
                    if msg.offset > offset:
                        return None
                if await reader.position(tp) > offset:
                    return None
            return None
        finally:
            await reader.stop()

    return read


class _CommitOnRevoke(ConsumerRebalanceListener):
    """Before partitions move to another member, commit what this one acknowledged (fewer redeliveries)."""

    def __init__(self, processor: AlertProcessor, consumer: AIOKafkaConsumer, guard: TopicGuard) -> None:
        self.processor, self.consumer, self.guard = processor, consumer, guard

    async def on_partitions_revoked(self, revoked: Any) -> None:
        await self.processor.commit(self.consumer, force=True)
        self.processor.forget(revoked)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        log.info("assigned %s", sorted((tp.topic, tp.partition) for tp in assigned))
        await self.guard.verify(self.consumer, assigned)


async def run(args: argparse.Namespace) -> int:
    store = AckStore(args.ack_store)
    parking = ParkingFile(args.parking or args.ack_store.with_suffix(".parked.jsonl"))
    processor = AlertProcessor(store, parking, commit_interval=args.commit_interval)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_of(args.broker),
        group_id=args.group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",  # a new group starts at the oldest retained alert, never "now"
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=max(100, args.session_timeout_ms // 3),
        fetch_max_wait_ms=args.fetch_max_wait_ms,
        **client_kwargs(),
    )
    guard = TopicGuard(store, record_reader(bootstrap_of(args.broker)))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    backoff = 0.0
    try:
        await consumer.start()
        consumer.subscribe([SAFETY_ALERTS.name], listener=_CommitOnRevoke(processor, consumer, guard))
        print(f"ALERTS_CONSUMER_STARTED group={args.group} pid={os.getpid()}", flush=True)
        verified = time.monotonic()
        while not stop.is_set():
            if args.verify_interval > 0 and time.monotonic() - verified >= args.verify_interval:
                await processor.commit(consumer, force=True)
                await guard.verify(consumer, consumer.assignment())
                verified = time.monotonic()
            batch = await consumer.getmany(timeout_ms=200, max_records=args.max_records)
            if await processor.process(consumer, batch):
                backoff = 0.0
                await processor.commit(consumer)  # an idle poll still flushes an interval's progress
            else:
                backoff = min(30.0, max(0.5, backoff * 2))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), backoff)
        await processor.commit(consumer, force=True)
    except KafkaConnectionError as exc:
        print(f"cannot reach the broker at {args.broker}: {exc}", file=sys.stderr)
        return 69  # EX_UNAVAILABLE, as attune's own commands
    finally:
        await consumer.stop()  # leaves the group: the partition moves to a standby at once
        store.close()
    c = processor.counts
    print(
        f"stopped: acked={c['acked']} duplicate={c['duplicate']} parked={c['parked']} failed={c['failed']} "
        f"recreated={guard.recreations}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Route attune safety alerts by severity; acknowledge each once.")
    p.add_argument("--broker", default="kafka://127.0.0.1:9092", help="kafka://host:port (default: %(default)s)")
    p.add_argument("--group", default="safety-team", help="consumer group id (default: %(default)s)")
    p.add_argument("--ack-store", type=Path, default=Path("acks.sqlite"), help="sqlite file (default: %(default)s)")
    p.add_argument(
        "--parking", type=Path, help="JSONL of records that are not routable alerts (default: ACK_STORE.parked.jsonl)"
    )
    p.add_argument(
        "--commit-interval",
        type=float,
        default=0.0,
        help="commit acknowledged offsets at most every N s; 0 = after every batch (default: %(default)s)",
    )
    p.add_argument(
        "--session-timeout-ms",
        type=int,
        default=10_000,
        help="group session timeout; Kafka refuses < 6000 by default (default: %(default)s)",
    )
    p.add_argument("--fetch-max-wait-ms", type=int, default=100, help="long-poll wait (default: %(default)s)")
    p.add_argument("--max-records", type=int, default=100, help="records per poll (default: %(default)s)")
    p.add_argument(
        "--verify-interval",
        type=float,
        default=30.0,
        help="check every N s that no partition was recreated (also at each assignment); 0 = only then "
        "(default: %(default)s)",
    )
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
