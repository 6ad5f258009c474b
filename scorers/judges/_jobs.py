"""Judge jobs: what to judge (:class:`schemas.JudgeJob`) and how a job becomes records, for both paths.

The stream's turn agent builds jobs and its judge agent runs them (``streams.judging``); ``attune
evaluate --judge`` builds the same jobs and runs them with the same :func:`run_job`, so a reply, a
screened user turn or a checklist is judged one way wherever it was read. Building is pure (no I/O);
running goes through :class:`JudgeTier`, which bounds every call and reports failures as ERROR records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schemas import (
    AlertRef,
    CloseReason,
    ConversationScore,
    CriterionResult,
    JudgeJob,
    Message,
    OutputRecord,
    SafetyAlert,
    TurnContext,
    TurnJudgment,
    judge_job_id,
    stable_id,
)
from scorers import Exchange, exchange_for
from scorers.checklist import CRITERIA_SPEC, checklist_record
from scorers.redact import teaches_names
from scorers.verdict import conversation_verdict

from ._tier import JudgeTier, judge_alerts
from .metrics import TURN_METRICS
from .metrics._base import HISTORY_MESSAGES
from .metrics.checklist import JUDGE_RUBRIC as CHECKLIST_JUDGE_RUBRIC
from .metrics.crisis_screen import CONTEXT_MESSAGES as SCREEN_HISTORY
from .metrics.crisis_screen import RUBRIC as SCREEN_RUBRIC

#: Earlier messages a stream turn job carries: what a per-turn prompt shows (``HISTORY_MESSAGES``), plus
#: the nearest user message when it is older, so a job stays small however long the conversation.
TURN_JOB_HISTORY = HISTORY_MESSAGES


# -- building (pure) ---------------------------------------------------------------------------------------
def turn_job(
    ex: Exchange, metadata: Mapping[str, Any] | None = None, *, history: int | None = TURN_JOB_HISTORY
) -> JudgeJob:
    """The job judging one assistant reply: earlier messages, then the reply itself.

    ``history`` bounds the recent messages carried (None: all; batch passes None). Older messages travel too
    when they are the nearest user message or introduce a name (``teaches_names``): redaction learns names
    only from what the job carries, so without them a name introduced further back would reach the judge
    unredacted in the stream while batch hides it. Learning order, and so the placeholder numbering, is the
    same as over the whole history; the prompt shows only the most recent messages either way.
    """
    if history is None or len(ex.history) <= history:
        earlier = list(ex.history)
    else:
        recent = list(ex.history[-history:])
        older = ex.history[:-history]
        nearest = None
        if ex.user_text and not any(m.role == "user" for m in recent):
            nearest = next((m for m in reversed(older) if m.role == "user"), None)
        earlier = [m for m in older if m is nearest or teaches_names(m.text)] + recent
    reply = Message(role="assistant", text=ex.response, turn_index=ex.turn_index)
    return JudgeJob(
        job_id=judge_job_id("turn", ex.conversation_id, ex.turn_index),
        job_type="turn",
        conversation_id=ex.conversation_id,
        turn_index=ex.turn_index,
        messages=[*earlier, reply],
        context=ex.context,
        metadata=dict(metadata or {}),
    )


def checklist_job(
    conversation_id: str,
    messages: Sequence[Message],
    context: TurnContext | None,
    close_reason: CloseReason,
    cheap_score: ConversationScore,
    alerts: Iterable[AlertRef | SafetyAlert] = (),
    metadata: Mapping[str, Any] | None = None,
) -> JudgeJob:
    """The job running the LLM checklist over a closed conversation (``messages``: all of it, in order).

    ``cheap_score`` and ``alerts`` (every alert known for the conversation when the job is built) go into
    the verdict :func:`with_verdict` appends, with the LLM checklist and its own alerts.
    """
    return JudgeJob(
        job_id=judge_job_id("checklist", conversation_id, None),
        job_type="checklist",
        conversation_id=conversation_id,
        messages=list(messages),
        context=context,
        close_reason=close_reason,
        cheap_score=cheap_score,
        alerts=[a if isinstance(a, AlertRef) else AlertRef.of(a) for a in alerts],
        metadata=dict(metadata or {}),
    )


def screen_job(
    conversation_id: str,
    turn_index: int,
    text: str,
    earlier: Sequence[Message],
    metadata: Mapping[str, Any] | None = None,
) -> JudgeJob:
    """The job asking the LLM crisis screen about one user turn: the last ``SCREEN_HISTORY`` messages of
    ``earlier`` (those before the turn, in order), then the turn. The one place that count is applied, so
    both paths (and redaction, which learns names from what the job carries) see the same messages."""
    user = Message(role="user", text=text, turn_index=turn_index)
    return JudgeJob(
        job_id=judge_job_id("crisis_screen", conversation_id, turn_index),
        job_type="crisis_screen",
        conversation_id=conversation_id,
        turn_index=turn_index,
        messages=[*list(earlier)[-SCREEN_HISTORY:], user],
        metadata=dict(metadata or {}),
    )


def needs_screen(ures: Any) -> bool:
    """A user turn goes to the LLM crisis screen when only the model flagged it (possible risk) or the
    detector does not cover its language; rule findings are alerted already and need no opinion."""
    return ures.detector == "model" or not ures.covered


def exchange_of(job: JudgeJob) -> Exchange:
    """Rebuild the :class:`Exchange` of a turn job (the inverse of :func:`turn_job`)."""
    *earlier, reply = job.messages
    indexed = [(m.turn_index if m.turn_index is not None else i, m) for i, m in enumerate(earlier)]
    idx = job.turn_index if job.turn_index is not None else len(earlier)
    return exchange_for(job.conversation_id, idx, reply.text, indexed, job.context)


# -- running -----------------------------------------------------------------------------------------------
async def run_job(tier: JudgeTier, job: JudgeJob, metrics: Sequence[str] | None = None) -> list[OutputRecord]:
    """Judge one job: ``turn_judgment`` records or the LLM ``conversation_score``, then their alerts (a
    checklist job's end with the verdict). ``metrics``: a turn job's metrics (default: the tier's config).

    The tier bounds every call by its deadline and turns failures into ERROR records, so this returns
    records for every outcome.
    """
    judged: list[Any]
    if job.job_type == "crisis_screen":
        *earlier, user = job.messages
        idx = job.turn_index if job.turn_index is not None else len(earlier)
        return list(await tier.screen_user_turn(job.conversation_id, idx, user.text, earlier))
    if job.job_type == "turn":
        judged = await tier.judge_turn(exchange_of(job), metrics)
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
    """ERROR records for a job that could not run at all (stuck past its bound, too big to send, or a bug):
    each judged item is reported with the cause, and a checklist ERROR fails the safety gate (with its
    alert)."""
    if job.job_type == "checklist":
        return _checklist_error(tier, job, cause)
    if job.job_type == "crisis_screen":
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
