"""Notices a broker that lost its state under a running worker, and stops the worker with the reason.

Why: the embedded Tansu broker keeps everything in memory. Restarted under a running worker, it comes
back empty (or with topics auto-created empty), the worker's Kafka clients reconnect without an error,
and the worker then waits forever at offsets that no longer exist — silently: nothing is scored, nothing
is logged. Its tables hold state whose changelogs are gone, so no other worker could recover it either.

The watch compares, every ``interval`` seconds, what the broker reports with what it reported before:

* a topic of the worker that was present and is gone;
* a partition whose end offset (high watermark, taken from a fetch: Tansu's ListOffsets under-reports)
  went *down*, or is below the position this worker already consumed on a turns partition — a Kafka
  log never shrinks, so the partition was recreated;
* a committed offset of the consumer group that went back or disappeared.

Any of these means the broker lost data. The worker logs one CRITICAL line saying what was lost
(topics, offsets, table changelogs), then stops through its normal SIGTERM path and exits with
:data:`EXIT_BROKER_STATE_LOST`, so a supervisor restarts it against the broker's current state (the new
worker recreates the topics). Against real Kafka none of this happens in normal operation.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition

from schemas.topics import TURNS

from .. import security
from ..broker import bootstrap_of
from .patches import fetched_highwaters

log = logging.getLogger("attune.streams")

#: Exit code of a worker whose broker lost its state (EX_TEMPFAIL: restart it).
EXIT_BROKER_STATE_LOST = 75
#: Default seconds between two checks (``StreamSettings.broker_check_interval``).
DEFAULT_CHECK_INTERVAL = 5.0


class BrokerWatch:
    """One worker's view of the broker: topics, end offsets and committed offsets seen so far."""

    def __init__(
        self,
        broker: str,
        group_id: str,
        topics: Mapping[str, int],
        consumed: Callable[[], Mapping[int, int]] = dict,
        table_keys: Callable[[], Mapping[str, int]] = dict,
        timeout: float = 10.0,
        open_conversations: Callable[[], Iterable[str]] = list,
        lost_dir: Path | None = None,
    ) -> None:
        self.bootstrap = bootstrap_of(broker)
        self.group_id = group_id
        self.topics = dict(topics)
        self.consumed = consumed  # turns partition -> next offset this worker expects (already consumed below)
        self.table_keys = table_keys  # changelog topic -> keys this worker's table holds in memory
        self.open_conversations = open_conversations  # ids of the conversations this worker buffers (open)
        self.lost_dir = lost_dir  # where the ids of the affected conversations are written
        self.lost_file: Path | None = None
        self.timeout = timeout
        self.present: set[str] = set()
        self.highwater: dict[tuple[str, int], int] = {}
        self.committed: dict[int, int] = {}
        self.lost: str | None = None
        self._unreachable = False

    async def check(self) -> str | None:
        """What the broker lost since the previous check (a sentence for the log), or None."""
        # Positions first, broker ends second: records the worker consumes while the fetch is under way
        # would otherwise put a position past an end offset that was read a moment earlier.
        consumed_before = dict(self.consumed())
        try:
            found = await asyncio.wait_for(self._observe(), self.timeout)
        except Exception as exc:  # broker down or restarting: the clients retry, so does the watch
            if not self._unreachable:
                log.warning("broker watch: broker unreachable (%r); checking again", exc)
            self._unreachable = True
            return None
        self._unreachable = False
        present, hws, committed = found
        gone = sorted(self.present - present)
        back = [
            f"{t}[{p}] {self.highwater[(t, p)]}->{hw}"
            for (t, p), hw in sorted(hws.items())
            if hw < self.highwater.get((t, p), 0)
        ]
        behind = [
            f"{TURNS.name}[{p}] consumed up to {pos - 1}, broker ends at {hws[(TURNS.name, p)]}"
            for p, pos in sorted(consumed_before.items())
            if (TURNS.name, p) in hws and pos > hws[(TURNS.name, p)]
        ]
        uncommitted = [
            f"{TURNS.name}[{p}] {was}->{committed.get(p, 'none')}"
            for p, was in sorted(self.committed.items())
            if committed.get(p) is None or committed[p] < was
        ]
        self.present |= present
        for key, hw in hws.items():
            self.highwater[key] = max(hw, self.highwater.get(key, 0))
        for p, off in committed.items():
            self.committed[p] = max(off, self.committed.get(p, 0))
        if not (gone or back or behind or uncommitted):
            return None
        parts = [
            "the broker lost its state under this worker (an embedded Tansu broker keeps everything in memory: "
            "was it restarted?)"
        ]
        if gone:
            parts.append(f"topics gone: {', '.join(gone)}")
        if back or behind:
            parts.append(f"partition offsets reset: {', '.join(back + behind)}")
        if uncommitted:
            parts.append(f"consumer group {self.group_id!r} committed offsets lost: {', '.join(uncommitted)}")
        held = {t: n for t, n in self.table_keys().items() if n}
        if held:
            on_broker = {t: sum(hw for (tt, _p), hw in hws.items() if tt == t) for t in held}
            parts.append(
                "table changelogs lost: "
                + ", ".join(f"{t} has {on_broker[t]} records, this worker's table {n} keys" for t, n in held.items())
                + " (buffered turns of open conversations now exist only in this worker's memory)"
            )
        parts.append(self._name_open_conversations())
        parts.append(
            f"exiting with code {EXIT_BROKER_STATE_LOST}; restart the worker to recreate the topics, then "
            "re-publish the turns of conversations that were open"
        )
        self.lost = "; ".join(p for p in parts if p)
        return self.lost

    def _name_open_conversations(self) -> str:
        """The conversations whose buffered turns exist only in this worker's memory now: named in the log
        (the first few) and written, one id per line, to a file ``attune publish --only-conversations`` reads."""
        ids = sorted(set(self.open_conversations()))
        if not ids:
            return "no conversation was open on this worker"
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        where = ""
        if self.lost_dir is not None:
            try:
                self.lost_dir.mkdir(parents=True, exist_ok=True)
                stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
                path = self.lost_dir / f"lost-conversations-{stamp}-{os.getpid()}.txt"
                path.write_text("".join(i + "\n" for i in ids), encoding="utf-8")
                self.lost_file = path
                where = (
                    f"; their ids are in {path}: re-publish them from your source with "
                    f"`attune publish SOURCE.jsonl --only-conversations {path}` (each goes after a "
                    "conversation_replay event: a worker that closed one on partial history scores it again, whole)"
                )
            except OSError as e:
                where = f"; could not write their ids to {self.lost_dir} ({e})"
        return f"{len(ids)} open conversation(s) lost their earlier turns: {shown}{where}"

    async def _observe(self) -> tuple[set[str], dict[tuple[str, int], int], dict[int, int]]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group_id,
            enable_auto_commit=False,
            request_timeout_ms=int(self.timeout * 1000),
            **security.client_kwargs(),
        )
        try:
            await consumer.start()  # inside: a failed start (broker down) is stopped too
            listed = await consumer.topics()  # metadata of every topic: never auto-creates one
            present = {t for t in self.topics if t in listed}
            tps = [
                TopicPartition(t, p) for t in sorted(present) for p in sorted(consumer.partitions_for_topic(t) or ())
            ]
            committed: dict[int, int] = {}
            if TURNS.name in present:
                for p in sorted(consumer.partitions_for_topic(TURNS.name) or ()):
                    off = await consumer.committed(TopicPartition(TURNS.name, p))
                    if off is not None:
                        committed[p] = off
        finally:
            await consumer.stop()
        hws = await fetched_highwaters(self.bootstrap, tuple(tps), timeout=self.timeout) if tps else {}
        return present, {(tp.topic, tp.partition): hw for tp, hw in hws.items()}, committed

    async def tick(self) -> None:
        """One check; on a loss, log it and stop the worker the way SIGTERM does (graceful, then exit)."""
        if self.lost is not None:
            return
        reason = await self.check()
        if reason is not None:
            log.critical("%s", reason)
            os.kill(os.getpid(), signal.SIGTERM)
