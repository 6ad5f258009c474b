"""The judge agent: runs the judge jobs the turn agent emits (streams.judging), many at once, acks in order.

Faust-facing: it consumes the jobs topic through a no-ack Faust stream, re-reads jobs Faust skipped
(:mod:`.audit`), and passes acks back in offset order per partition (:mod:`.acks`). The jobs themselves are
built and run by :mod:`scorers.judges` (``run_job``, ``error_records``), as in ``attune evaluate``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from schemas import JudgeJob
from schemas.topics import JUDGE_JOBS
from scorers.judges import JudgeTier, error_records, run_job

from .._core import Inbound, Outbound
from ..broker import bootstrap_of
from ..judging import JobEmitter, judge_tier_for, records_outbound
from ..observability import METRICS
from ..settings import StreamSettings
from .acks import OrderedAcks, Partition
from .audit import OffsetAudit
from .fatal import delivery_failed
from .sender import BatchSender
from .store import raw_topic

log = logging.getLogger("attune.streams.judging")

#: Slack on top of the tier's per-call deadline before a job is declared stuck (queueing, encoding).
JOB_SLACK_S = 5.0


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
            try:
                await self._deliver(records_outbound(records, job.metadata))
            except Exception as exc:  # unacked: the restarted worker runs the job again (from the cache)
                delivery_failed(f"judge job {job.job_id} ({tp[0]}[{tp[1]}]@{offset})", exc)
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
    jobs = raw_topic(app, JUDGE_JOBS.name, partitions=settings.partitions)

    async def judge_jobs(stream: Any) -> None:
        await agent.consume(stream)

    app.agent(jobs, name="judge_jobs")(judge_jobs)

    @app.on_partitions_assigned.connect
    async def _assigned(sender: Any, assigned: Any, **kwargs: Any) -> None:
        audit.on_assigned(assigned)

    app.timer(settings.timer_interval, name="judge_jobs_tail")(agent.repair_tail)
    return JobEmitter(tier), agent
