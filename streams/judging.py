"""LLM judges in the stream: judge jobs out of the turn agent, a concurrent judge agent, records back.

Why a jobs topic: a judge call takes seconds and may hang until its deadline; the turn agent scores a
turn in microseconds and raises crisis alerts on arrival. So the turn agent only *emits* jobs (through
:class:`streams._core.TurnProcessor`'s turn and close hooks, as ordinary outputs delivered before its
table writes), and a separate agent (:class:`JudgeAgent`) runs them, many at once, on the same event loop
without ever being awaited by the turn agent.

Granularity: one job per sampled assistant turn, one per user turn the crisis screen should see, and one
per closed conversation (its 12 checklist criteria run concurrently inside the job). Jobs are built and run
by :mod:`scorers.judges` (``turn_job``, ``screen_job``, ``checklist_job``, ``run_job``), as in ``attune
evaluate``; this module keeps the hooks that emit them, the agent that runs them and the acks. A crashed
job is redelivered whole, and the result cache (SQLite under the worker's data dir, key: rubric version,
model, prompt hash) answers every criterion that had completed before the crash, so the retry pays only
for the calls that had not. See docs/judges.md, "In the stream".

Delivery: jobs are consumed without automatic acks; a job is acked only after its output records were
acknowledged by the broker, and acks are passed to Faust in offset order per partition (a finished job's
ack waits for every earlier job of its partition), so jobs finishing out of order never skip an unfinished
one: Faust 0.15.3 alone would commit past it (see :mod:`streams._faust.acks`). Records have
deterministic ids; consumers de-duplicate by them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas import JudgeJob, Message, OutputRecord, encode
from schemas.topics import (
    JUDGE_JOBS,
    TOPIC_OF_KIND,
)
from scorers._base import Exchange
from scorers.judges import (
    JudgeTier,
    checklist_job,
    error_records,
    load_config,
    needs_screen,
    run_job,
    screen_job,
    turn_job,
)

from ._core import ClosedConversation, Inbound, Outbound
from ._faust.acks import OrderedAcks, Partition
from ._faust.audit import OffsetAudit
from ._faust.sender import BatchSender
from .broker import bootstrap_of
from .observability import METRICS
from .settings import MAX_RECORD_BYTES, StreamSettings

log = logging.getLogger("attune.streams.judging")

#: Slack on top of the tier's per-call deadline before a job is declared stuck (queueing, encoding).
JOB_SLACK_S = 5.0


def records_outbound(records: Iterable[OutputRecord], metadata: Mapping[str, Any] | None = None) -> list[Outbound]:
    """Encode records for their topics, stamped with the job's producer metadata."""
    out = []
    for r in records:
        if metadata:
            r.metadata = dict(metadata)
        out.append(Outbound(TOPIC_OF_KIND[r.kind], r.conversation_id.encode(), encode(r), r.kind))  # type: ignore[union-attr]
    return out


class JobEmitter:
    """The turn agent's side: the turn hook samples assistant turns, the close hook emits the checklist.

    Sampling is :meth:`JudgeTier.should_judge_turn` (deterministic, every alerted turn), so a redelivered
    turn emits the same job id again.
    """

    def __init__(self, tier: JudgeTier, max_job_bytes: int = MAX_RECORD_BYTES) -> None:
        self.tier = tier
        self.max_job_bytes = max_job_bytes
        self.turn_jobs = 0
        self.checklist_jobs = 0
        self.screen_jobs = 0

    def on_turn(self, ex: Exchange, alert: bool, metadata: Mapping[str, Any] | None = None) -> list[Outbound]:
        if not self.tier.should_judge_turn(ex.conversation_id, ex.turn_index, alert=alert):
            return []
        self.turn_jobs += 1
        return [self._job(turn_job(ex, metadata))]

    def on_user(
        self,
        cid: str,
        idx: int,
        text: str,
        earlier: Sequence[Message],
        ures: Any,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Outbound]:
        if not needs_screen(ures):
            return []
        self.screen_jobs += 1
        return [self._job(screen_job(cid, idx, text, earlier, metadata))]

    def on_close(self, closed: ClosedConversation) -> list[Outbound]:
        job = checklist_job(
            closed.conversation_id,
            closed.messages,  # a Transcript: already in turn order
            closed.context,
            closed.close_reason,
            closed.score,
            closed.alerts,
            closed.metadata,
        )
        out = self._job(job)
        if len(out.value) > self.max_job_bytes:
            # Too big for one record: an ERROR checklist (fails the gate), never a silent skip.
            cause = f"conversation too large for a judge job ({len(out.value)} bytes > {self.max_job_bytes})"
            log.error("%s: %s", closed.conversation_id, cause)
            return records_outbound(error_records(self.tier, job, cause), job.metadata)
        self.checklist_jobs += 1
        return [out]

    @staticmethod
    def _job(job: JudgeJob) -> Outbound:
        return Outbound(JUDGE_JOBS.name, job.conversation_id.encode(), encode(job), job.kind)


@dataclass(slots=True)
class AgentStats:
    received: int = 0
    done: int = 0
    failed: int = 0
    in_flight: int = 0
    max_in_flight_seen: int = 0
    seconds: float = 0.0


class JudgeAgent:
    """The judge agent's body: up to ``max_in_flight`` jobs at once, each acked after its outputs.

    Backpressure instead of an unbounded queue: when ``max_in_flight`` jobs run, the agent stops taking
    events, Faust's per-partition buffer for the jobs topic fills to its high-water mark and the fetcher
    pauses that partition only (turns partitions keep flowing). Each job is bounded by the tier's
    deadline plus :data:`JOB_SLACK_S`, which must stay under Faust's ``stream_processing_timeout``.
    """

    def __init__(self, app: Any, tier: JudgeTier, max_in_flight: int = 256, audit: OffsetAudit | None = None) -> None:
        self.app = app
        self.tier = tier
        self.max_in_flight = max_in_flight
        self.job_bound = tier.config.deadline_s + JOB_SLACK_S
        self.stats = AgentStats()
        self._slots = asyncio.Semaphore(max_in_flight)
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: dict[str, list[Any]] = {}  # job id -> [lock, holders]
        self._acks: OrderedAcks | None = None  # made with the stream (its acks) in consume()
        self._stream: Any = None
        self.audit = audit  # the jobs topic's offset audit (streams._faust.audit); None in unit tests of acking
        self.sender = BatchSender(app)

    async def consume(self, stream: Any) -> None:
        manual = stream.noack()
        self._stream = manual
        self._acks = OrderedAcks(manual.ack, self.audit.ack if self.audit is not None else None)
        try:
            async for event in manual.events():
                m = event.message
                if self.audit is not None:  # jobs Faust skipped before this one first (streams._faust.audit)
                    for missed in await self.audit.check(m.topic, m.partition, m.offset):
                        await self._start(missed, (missed.topic, missed.partition), missed.offset)
                await self._start(event, (m.topic, m.partition), m.offset)
        finally:
            for task in list(self._tasks):
                task.cancel()  # unacked: redelivered to whoever owns the partition next
            await self.tier.close()

    async def _start(self, item: Any, tp: Partition, offset: int) -> None:
        """Run one job (a Faust event, or an :class:`Inbound` job read back by the audit) as its own task."""
        await self._slots.acquire()
        acks = self._acks
        assert acks is not None  # _start runs only once consume() has the stream
        acks.started(tp, offset)
        self.stats.received += 1
        self.stats.in_flight += 1
        self.stats.max_in_flight_seen = max(self.stats.max_in_flight_seen, self.stats.in_flight)
        task = asyncio.create_task(self._one(acks, item, tp, offset))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def repair_tail(self) -> None:
        """Run jobs the consumer never delivered at a partition's tail (none as a rule; streams._faust.audit)."""
        if self.audit is None or self._stream is None:
            return
        for missed in await self.audit.tail(busy=lambda _t, _p: self._slots.locked()):
            await self._start(missed, (missed.topic, missed.partition), missed.offset)

    async def _one(self, acks: OrderedAcks, item: Any, tp: Partition, offset: int) -> None:
        started = time.monotonic()
        value = item.value if isinstance(item, Inbound) else item.message.value
        try:
            try:
                # extra="allow": a job written by a newer worker (rolling upgrade) still runs
                job = JudgeJob.model_validate_json(value or b"", extra="allow")
            except ValueError:
                log.error("dropping an undecodable judge job at %s@%d", tp, offset)
                self.stats.failed += 1
                await acks.done(tp, offset, item)
                return
            try:
                async with self._single_flight(job.job_id), asyncio.timeout(self.job_bound):
                    records = await run_job(self.tier, job)
            except TimeoutError:
                self.stats.failed += 1
                records = error_records(self.tier, job, f"judge job exceeded {self.job_bound:g}s")
            except Exception as exc:  # a bug in a metric must not stop the agent; the record says why
                log.exception("judge job %s failed", job.job_id)
                self.stats.failed += 1
                records = error_records(self.tier, job, f"judge job failed: {exc!r}")
            await self._deliver(records_outbound(records, job.metadata))
            METRICS.judge_records(records)  # cost, tokens, judgments by status: once delivered
            await acks.done(tp, offset, item)
            self.stats.done += 1
            self.stats.seconds += time.monotonic() - started
        finally:
            self.stats.in_flight -= 1
            self._slots.release()

    @contextlib.asynccontextmanager
    async def _single_flight(self, job_id: str) -> AsyncIterator[None]:
        """One run per job id at a time. A job emitted twice (its turns redelivered after a crash) waits
        for the first copy and then finds every answer in the cache, instead of paying for it again."""
        entry = self._running.setdefault(job_id, [asyncio.Lock(), 0])
        entry[1] += 1
        try:
            async with entry[0]:
                yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del self._running[job_id]

    async def _deliver(self, outputs: Sequence[Outbound]) -> None:
        await self.sender.deliver((o.topic, o.partition, o.key, o.value) for o in outputs)


def judge_tier_for(settings: StreamSettings) -> JudgeTier:
    """The worker's tier: ``--judge-config`` + ``--judge``, with the result cache in SQLite under the
    worker's data dir unless the config names a path, so a restarted worker still has it."""
    cfg = load_config(settings.judge_config, override=settings.judge)
    if cfg.cache.enabled and cfg.cache.path is None:
        path = Path(settings.faust_config()["datadir"]) / f"{settings.app_id}-judge-cache.sqlite3"
        cfg = cfg.model_copy(update={"cache": cfg.cache.model_copy(update={"path": str(path)})})
    return JudgeTier(cfg)


def install(app: Any, settings: StreamSettings) -> tuple[JobEmitter, JudgeAgent]:
    """Register the judge agent on ``app``; returns the emitter whose hooks the turn processor calls."""
    tier = judge_tier_for(settings)
    limit = float(app.conf.stream_processing_timeout)
    if tier.config.deadline_s + JOB_SLACK_S >= limit:
        raise ValueError(
            f"judge deadline_s {tier.config.deadline_s:g} + {JOB_SLACK_S:g}s must stay under Faust's "
            f"stream_processing_timeout ({limit:g}s)"
        )
    audit = OffsetAudit(app, bootstrap_of(settings.broker), settings.app_id, [JUDGE_JOBS.name])
    agent = JudgeAgent(app, tier, settings.judge_max_in_flight, audit)
    jobs = app.topic(
        JUDGE_JOBS.name,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.partitions,
    )

    async def judge_jobs(stream: Any) -> None:
        await agent.consume(stream)

    app.agent(jobs, name="judge_jobs")(judge_jobs)

    @app.on_partitions_assigned.connect
    async def _assigned(sender: Any, assigned: Any, **kwargs: Any) -> None:
        audit.on_assigned(assigned)

    app.timer(settings.timer_interval, name="judge_jobs_tail")(agent.repair_tail)
    return JobEmitter(tier), agent
