"""LLM judges in the stream: judge jobs out of the turn agent, a concurrent judge agent, records back.

Why a jobs topic: a judge call takes seconds and may hang until its deadline; the turn agent scores a
turn in microseconds and raises crisis alerts on arrival. So the turn agent only *emits* jobs (through
:class:`streams._core.TurnProcessor`'s turn and close hooks, as ordinary outputs delivered before its
table writes), and a separate agent (:class:`JudgeAgent`) runs them, many at once, on the same event loop
without ever being awaited by the turn agent.

Granularity: one job per sampled assistant turn and one per closed conversation (its 12 checklist
criteria run concurrently inside the job). A crashed job is redelivered whole, and the result cache
(SQLite under the worker's data dir, key: rubric version, model, prompt hash) answers every criterion that
had completed before the crash, so the retry pays only for the calls that had not. See docs/judges.md,
"In the stream".

Delivery: jobs are consumed without automatic acks; a job is acked only after its output records were
acknowledged by the broker, and acks are passed to Faust in offset order per partition (a finished job's
ack waits for every earlier job of its partition), so jobs finishing out of order never skip an unfinished
one: Faust 0.15.3 alone would commit past it (see :meth:`JudgeAgent._ack_in_order`). Records have
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

from faust.types import TP

from schemas import (
    AlertRef,
    ConversationScore,
    CriterionResult,
    JudgeJob,
    Message,
    OutputRecord,
    SafetyAlert,
    TurnJudgment,
    encode,
    judge_job_id,
)
from schemas.topics import (
    JUDGE_JOBS,
    TOPIC_OF_KIND,
)
from scorers._base import Exchange
from scorers.checklist import CRITERIA_SPEC, checklist_record
from scorers.judges import CHECKLIST_JUDGE_RUBRIC, TURN_METRICS, JudgeTier, judge_alerts, load_config
from scorers.judges.metrics._base import HISTORY_MESSAGES
from scorers.verdict import conversation_verdict

from ._audit import OffsetAudit
from ._core import ClosedConversation, Inbound, Outbound
from ._send import BatchSender
from .broker import bootstrap_of
from .observability import METRICS
from .settings import MAX_RECORD_BYTES, StreamSettings

log = logging.getLogger("attune.streams.judging")

#: Earlier messages a turn job carries: what a per-turn judge is shown (``HISTORY_MESSAGES``), plus the
#: nearest user message when it is older, so the judge sees exactly what the batch path shows it.
TURN_JOB_HISTORY = HISTORY_MESSAGES
#: Slack on top of the tier's per-call deadline before a job is declared stuck (queueing, encoding).
JOB_SLACK_S = 5.0


# -- jobs (built on the turn agent: pure, no I/O) ----------------------------------------------------------
def turn_job(ex: Exchange, metadata: Mapping[str, Any] | None = None) -> JudgeJob:
    """The job judging one assistant reply: its recent history, then the reply itself."""
    history = list(ex.history[-TURN_JOB_HISTORY:])
    if ex.user_text and not any(m.role == "user" for m in history):
        nearest = next((m for m in reversed(ex.history) if m.role == "user"), None)
        if nearest is not None:
            history.insert(0, nearest)
    reply = Message(role="assistant", text=ex.response, turn_index=ex.turn_index)
    return JudgeJob(
        job_id=judge_job_id("turn", ex.conversation_id, ex.turn_index),
        job_type="turn",
        conversation_id=ex.conversation_id,
        turn_index=ex.turn_index,
        messages=[*history, reply],
        context=ex.context,
        metadata=dict(metadata or {}),
    )


def checklist_job(closed: ClosedConversation) -> JudgeJob:
    """The job running the LLM checklist over a closed conversation (all its messages, in order)."""
    return JudgeJob(
        job_id=judge_job_id("checklist", closed.conversation_id, None),
        job_type="checklist",
        conversation_id=closed.conversation_id,
        messages=[m for _, m in sorted(closed.messages, key=lambda p: p[0])],
        context=closed.context,
        close_reason=closed.close_reason,
        cheap_score=closed.score,
        alerts=list(closed.alerts),
        metadata=closed.metadata,
    )


def screen_job(
    conversation_id: str,
    turn_index: int,
    text: str,
    earlier: Sequence[Message],
    metadata: Mapping[str, Any] | None = None,
) -> JudgeJob:
    """The job asking the LLM crisis screen about one user turn (a few earlier messages, then the turn)."""
    user = Message(role="user", text=text, turn_index=turn_index)
    return JudgeJob(
        job_id=judge_job_id("crisis_screen", conversation_id, turn_index),
        job_type="crisis_screen",
        conversation_id=conversation_id,
        turn_index=turn_index,
        messages=[*earlier, user],
        metadata=dict(metadata or {}),
    )


def needs_screen(ures: Any) -> bool:
    """A user turn goes to the LLM crisis screen when only the model flagged it (possible risk) or the
    detector does not cover its language; rule findings are alerted already and need no opinion."""
    return ures.detector == "model" or not ures.covered


def exchange_of(job: JudgeJob) -> Exchange:
    """Rebuild the :class:`Exchange` of a turn job (the inverse of :func:`turn_job`)."""
    from scorers import exchange_for

    *earlier, reply = job.messages
    indexed = [(m.turn_index if m.turn_index is not None else i, m) for i, m in enumerate(earlier)]
    idx = job.turn_index if job.turn_index is not None else len(earlier)
    return exchange_for(job.conversation_id, idx, reply.text, indexed, job.context)


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
        job = checklist_job(closed)
        out = self._job(job)
        if len(out.value) > self.max_job_bytes:
            # Too big for one record: an ERROR checklist (fails the gate), never a silent skip.
            cause = f"conversation too large for a judge job ({len(out.value)} bytes > {self.max_job_bytes})"
            log.error("%s: %s", closed.conversation_id, cause)
            return records_outbound(_checklist_error(self.tier, job, cause), job.metadata)
        self.checklist_jobs += 1
        return [out]

    @staticmethod
    def _job(job: JudgeJob) -> Outbound:
        return Outbound(JUDGE_JOBS.name, job.conversation_id.encode(), encode(job), job.kind)


# -- running jobs (the judge agent's side) -----------------------------------------------------------------
async def run_job(tier: JudgeTier, job: JudgeJob) -> list[OutputRecord]:
    """Judge one job: ``turn_judgment`` records or the LLM ``conversation_score``, then their alerts.

    The tier bounds every call by its deadline and turns failures into ERROR records, so this returns
    records for every outcome.
    """
    judged: list[Any]
    if job.job_type == "crisis_screen":
        *earlier, user = job.messages
        idx = job.turn_index if job.turn_index is not None else len(earlier)
        return list(await tier.screen_user_turn(job.conversation_id, idx, user.text, earlier))
    if job.job_type == "turn":
        judged = await tier.judge_turn(exchange_of(job))
    else:
        indexed = [(m.turn_index if m.turn_index is not None else i, m) for i, m in enumerate(job.messages)]
        score = await tier.judge_conversation(
            job.conversation_id, indexed, job.context, close_reason=job.close_reason or "inactivity"
        )
        judged = [score]
    return with_verdict(job, [*judged, *judge_alerts(judged)])


def with_verdict(job: JudgeJob, records: list[OutputRecord]) -> list[OutputRecord]:
    """Append the conversation's verdict to a checklist job's records: the cheap checklist and the alerts the
    job carries, the LLM checklist and its alerts just made (scorers.verdict). Other jobs: unchanged."""
    if job.job_type != "checklist" or job.cheap_score is None:
        return records
    llm = next((r for r in records if isinstance(r, ConversationScore)), None)
    alerts = [*job.alerts, *(AlertRef.of(r) for r in records if isinstance(r, SafetyAlert))]
    return [*records, conversation_verdict(job.cheap_score, alerts, llm)]


def error_records(tier: JudgeTier, job: JudgeJob, cause: str) -> list[OutputRecord]:
    """ERROR records for a job that could not run at all (stuck past its bound, or a bug): each judged
    item is reported with the cause, and a checklist ERROR fails the safety gate (with its alert)."""
    if job.job_type == "checklist":
        return _checklist_error(tier, job, cause)
    if job.job_type == "crisis_screen":
        from scorers.judges.metrics.crisis_screen import RUBRIC as SCREEN_RUBRIC

        idx = job.turn_index if job.turn_index is not None else len(job.messages) - 1
        judge = tier.config.route("crisis_screen")
        ex = Exchange(conversation_id=job.conversation_id, turn_index=idx, user_text=job.messages[-1].text, response="")
        return [
            TurnJudgment(
                record_id=_turn_record_id(ex, "crisis_screen", SCREEN_RUBRIC.tag, judge),
                conversation_id=job.conversation_id,
                turn_index=idx,
                metric="crisis_screen",
                rubric=SCREEN_RUBRIC,
                judge=judge,
                status="error",
                error=cause,
            )
        ]
    ex = exchange_of(job)
    recs: list[Any] = []
    for name in tier.config.turn_metrics:
        metric = TURN_METRICS.get(name)
        if metric is None or not metric.applies(ex):
            continue  # relevance (embeddings, no LLM) and metrics without inputs
        recs.append(
            TurnJudgment(
                record_id=_turn_record_id(ex, name, metric.rubric.tag, tier.config.route(name)),
                conversation_id=ex.conversation_id,
                turn_index=ex.turn_index,
                metric=name,
                rubric=metric.rubric,
                judge=tier.config.route(name),
                status="error",
                error=cause,
            )
        )
    return recs


def _turn_record_id(ex: Exchange, metric: str, tag: str, judge: str) -> str:
    from schemas import stable_id

    # The same id the tier gives the record (JudgeTier._turn_record), so a later success replaces it.
    return stable_id("turn_judgment", ex.conversation_id, ex.turn_index, metric, tag, judge)


def _checklist_error(tier: JudgeTier, job: JudgeJob, cause: str) -> list[OutputRecord]:
    score = checklist_record(
        job.conversation_id,
        {c.id: CriterionResult(answer="ERROR", error=cause) for c in CRITERIA_SPEC},
        job.messages,
        tier="llm",
        judge=tier.config.route("checklist"),
        rubric=CHECKLIST_JUDGE_RUBRIC,
        close_reason=job.close_reason or "inactivity",
    )
    return with_verdict(job, [score, *judge_alerts([score])])


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
        self._unacked: dict[Any, dict[int, Any]] = {}  # partition -> offset -> finished event, None if running
        self._stream: Any = None
        self.audit = audit  # the jobs topic's offset audit (streams._audit); None in unit tests of acking
        self.sender = BatchSender(app)

    async def consume(self, stream: Any) -> None:
        manual = stream.noack()
        self._stream = manual
        try:
            async for event in manual.events():
                m = event.message
                if self.audit is not None:  # jobs Faust skipped before this one first (streams._audit)
                    for missed in await self.audit.check(m.topic, m.partition, m.offset):
                        await self._start(missed, TP(missed.topic, missed.partition), missed.offset)
                await self._start(event, m.tp, m.offset)
        finally:
            for task in list(self._tasks):
                task.cancel()  # unacked: redelivered to whoever owns the partition next
            await self.tier.close()

    async def _start(self, item: Any, tp: Any, offset: int) -> None:
        """Run one job (a Faust event, or an :class:`Inbound` job read back by the audit) as its own task."""
        await self._slots.acquire()
        self._unacked.setdefault(tp, {})[offset] = None
        self.stats.received += 1
        self.stats.in_flight += 1
        self.stats.max_in_flight_seen = max(self.stats.max_in_flight_seen, self.stats.in_flight)
        task = asyncio.create_task(self._one(self._stream, item, tp, offset))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def repair_tail(self) -> None:
        """Run jobs the consumer never delivered at a partition's tail (none as a rule; see streams._audit)."""
        if self.audit is None or self._stream is None:
            return
        for missed in await self.audit.tail(busy=lambda _t, _p: self._slots.locked()):
            await self._start(missed, TP(missed.topic, missed.partition), missed.offset)

    async def _one(self, stream: Any, item: Any, tp: Any, offset: int) -> None:
        started = time.monotonic()
        value = item.value if isinstance(item, Inbound) else item.message.value
        try:
            try:
                # extra="allow": a job written by a newer worker (rolling upgrade) still runs
                job = JudgeJob.model_validate_json(value or b"", extra="allow")
            except ValueError:
                log.error("dropping an undecodable judge job at %s@%d", tp, offset)
                self.stats.failed += 1
                await self._ack_in_order(stream, item, tp, offset)
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
            await self._ack_in_order(stream, item, tp, offset)
            self.stats.done += 1
            self.stats.seconds += time.monotonic() - started
        finally:
            self.stats.in_flight -= 1
            self._slots.release()

    async def _ack_in_order(self, stream: Any, item: Any, tp: Any, offset: int) -> None:
        """Ack ``event`` once every earlier job of its partition is acked, with the finished ones after it.

        Why: Faust 0.15.3 commits the first consecutive run of acked offsets (``Consumer._new_offset``)
        without checking that the run starts at the committed offset before a partition's first commit,
        and one offset short after it (``min(acked) - committed > 1``): with jobs 12 running and 13, 14
        acked it commits 15, and a crash then loses job 12 (measured: tests/test_faults_worker.py).
        """
        pending = self._unacked[tp]
        pending[offset] = item
        while pending:
            first = min(pending)
            ready = pending[first]
            if ready is None:
                return
            del pending[first]
            if isinstance(ready, Inbound):
                if self.audit is not None:
                    self.audit.ack(ready)
            else:
                await stream.ack(ready)

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
