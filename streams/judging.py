"""LLM judges in the stream: judge jobs out of the turn agent, a concurrent judge agent, records back.

Why a jobs topic: a judge call takes seconds and may hang until its deadline; the turn agent scores a
turn in microseconds and raises crisis alerts on arrival. So the turn agent only *emits* jobs (through
:class:`streams._core.TurnProcessor`'s turn and close hooks, as ordinary outputs delivered before its
table writes), and a separate agent (:class:`streams._faust.judge_agent.JudgeAgent`) runs them, many at
once, on the same event loop without ever being awaited by the turn agent.

Granularity: one job per sampled assistant turn, one per user turn the crisis screen should see, and one
per closed conversation (its 12 checklist criteria run concurrently inside the job). Jobs are built and run
by :mod:`scorers.judges` (``turn_job``, ``screen_job``, ``checklist_job``, ``run_job``), as in ``attune
evaluate``; this module keeps the hooks that emit them and the worker's tier; the Faust agent that runs
them and its acks are in :mod:`streams._faust.judge_agent`. A crashed
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

import logging
from collections.abc import Iterable, Mapping, Sequence
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
    screen_job,
    turn_job,
)

from ._core import ClosedConversation, Outbound
from .settings import MAX_RECORD_BYTES, StreamSettings

log = logging.getLogger("attune.streams.judging")


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


def judge_tier_for(settings: StreamSettings) -> JudgeTier:
    """The worker's tier: ``--judge-config`` + ``--judge``, with the result cache in SQLite under the
    worker's data dir unless the config names a path, so a restarted worker still has it."""
    cfg = load_config(settings.judge_config, override=settings.judge)
    if cfg.cache.enabled and cfg.cache.path is None:
        path = Path(settings.faust_config()["datadir"]) / f"{settings.app_id}-judge-cache.sqlite3"
        cfg = cfg.model_copy(update={"cache": cfg.cache.model_copy(update={"path": str(path)})})
    return JudgeTier(cfg)
