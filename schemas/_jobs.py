"""Judge jobs: the unit of LLM-judge work the stream hands from the turn agent to the judge agent.

A job is self-contained (the judge agent never reads the turn agent's tables), keyed by
``conversation_id`` and identified deterministically, so a redelivered or re-emitted job is the same job.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from ._common import ConversationId, MetadataValue, Record, TurnIndex, stable_id
from ._inputs import Message, TurnContext
from ._outputs import AlertRef, CloseReason, ConversationScore, utcnow

JobType = Literal["turn", "checklist", "crisis_screen"]


def judge_job_id(job_type: JobType, conversation_id: str, turn_index: int | None) -> str:
    """Same conversation, type and turn -> same id, on every worker and every redelivery."""
    return stable_id("judge_job", job_type, conversation_id, turn_index)


class JudgeJob(Record):
    """One judge job on ``attune.internal.judge_jobs``.

    ``turn``: judge one sampled assistant reply; ``messages`` are the earlier messages then the reply
    (last), each with its ``turn_index``. ``checklist``: the seed-001 checklist of a closed conversation;
    ``messages`` are all its messages in order. ``crisis_screen``: a second opinion on one USER turn the
    inline crisis detector rated possible risk or could not read; ``messages`` are a few earlier messages
    then that turn (last). Outputs: ``turn_judgment`` records or the LLM ``conversation_score``, plus
    ``judge_unsafe`` / ``judge_error`` alerts; a crisis screen may add a ``crisis_disclosure`` alert (detector
    ``llm``); a checklist job ends with the conversation's ``conversation_verdict``.
    """

    kind: Literal["judge_job"] = "judge_job"
    job_id: str
    job_type: JobType
    conversation_id: ConversationId
    turn_index: TurnIndex | None = Field(
        default=None, description="The judged assistant turn (turn jobs) or screened user turn (crisis_screen)."
    )
    messages: list[Message] = Field(min_length=1)
    context: TurnContext | None = None
    close_reason: CloseReason | None = Field(default=None, description="Checklist jobs: why the conversation closed.")
    cheap_score: ConversationScore | None = Field(
        default=None, description="Checklist jobs: the cheap tier's checklist, combined into the verdict."
    )
    alerts: list[AlertRef] = Field(
        default_factory=list, description="Checklist jobs: the alerts raised while the conversation was open."
    )
    metadata: dict[str, MetadataValue] = Field(
        default_factory=dict, description="The conversation's producer metadata, stamped on every output record."
    )
    created_at: datetime = Field(default_factory=utcnow)
