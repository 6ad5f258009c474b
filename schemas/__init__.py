"""Record schemas and topic names of attune: the one place producers and consumers agree on.

Inputs: :class:`Turn`, :class:`ConversationEnd`, :class:`Conversation`.
Outputs (``kind``-tagged): :class:`TurnScore`, :class:`TurnJudgment`, :class:`ConversationScore`,
:class:`ConversationVerdict`, :class:`SafetyAlert`, :class:`DeadLetter`. Topics: :mod:`schemas.topics`.
"""

from ._codec import (
    DEFAULT_LIMITS,
    InvalidRecord,
    Limits,
    check_nesting,
    dead_letter,
    decode_conversation,
    decode_output,
    decode_turn_event,
    encode,
)
from ._common import SCHEMA_VERSION, RubricRef, stable_id
from ._inputs import Conversation, ConversationEnd, Message, Persona, Turn, TurnContext
from ._jobs import JudgeJob, judge_job_id
from ._outputs import (
    CRITERIA,
    SEVERITY_ORDER,
    AlertRef,
    AlertType,
    Answer,
    CloseReason,
    ConversationScore,
    ConversationVerdict,
    CrisisDetector,
    CriterionResult,
    DeadLetter,
    EdgeCase,
    FieldError,
    OutputRecord,
    RubricScores,
    SafetyAlert,
    Severity,
    TierDisagreement,
    TurnJudgment,
    TurnScore,
    Usage,
    utcnow,
)
from .topics import ALL_TOPICS, TopicSpec

#: Every record type whose JSON Schema ``attune schemas`` writes.
ALL_RECORDS = (
    Turn,
    ConversationEnd,
    Conversation,
    TurnScore,
    TurnJudgment,
    ConversationScore,
    ConversationVerdict,
    SafetyAlert,
    DeadLetter,
)

__all__ = [
    "ALL_RECORDS",
    "ALL_TOPICS",
    "CRITERIA",
    "DEFAULT_LIMITS",
    "SCHEMA_VERSION",
    "SEVERITY_ORDER",
    "AlertRef",
    "AlertType",
    "Answer",
    "CloseReason",
    "Conversation",
    "ConversationEnd",
    "ConversationScore",
    "ConversationVerdict",
    "CrisisDetector",
    "CriterionResult",
    "DeadLetter",
    "EdgeCase",
    "FieldError",
    "InvalidRecord",
    "JudgeJob",
    "Limits",
    "Message",
    "OutputRecord",
    "Persona",
    "RubricRef",
    "RubricScores",
    "SafetyAlert",
    "Severity",
    "TierDisagreement",
    "TopicSpec",
    "Turn",
    "TurnContext",
    "TurnJudgment",
    "TurnScore",
    "Usage",
    "check_nesting",
    "dead_letter",
    "decode_conversation",
    "decode_output",
    "decode_turn_event",
    "encode",
    "judge_job_id",
    "stable_id",
    "utcnow",
]
