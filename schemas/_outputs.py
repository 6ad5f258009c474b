"""Output records. Each has a ``kind`` so one JSONL file or consumer can hold them all."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._common import Channel, ConversationId, MetadataValue, Record, RubricRef, TurnIndex

#: seed 001 answer set; ERROR marks an API/parse failure and scores 0 (never a pass).
Answer = Literal["YES", "NO", "NA", "ERROR"]
CRITERIA: tuple[str, ...] = (
    "CQ1", "CQ2", "CQ3", "CQ4", "CQ5", "CQ6", "CQ7", "CQ8", "CQ9", "CP1", "CP2", "CP3",
)  # fmt: skip
Tier = Literal["cheap", "llm"]
CloseReason = Literal["end_flag", "end_event", "inactivity", "batch"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Inclusive ``[first, last]`` turn_index ranges (a 1,000-turn hole is one pair, not 1,000 numbers).
TurnRanges = list[tuple[int, int]]


def _history() -> Any:
    return Field(
        default=True,
        description="False when turns before the last one were never seen (turn_index counts from 0; "
        "missing_turns says which): the record was computed on incomplete history and does not pass.",
    )


def _missing() -> Any:
    return Field(default_factory=list, description="Turn index ranges [first, last] that were never seen.")


def _metadata() -> Any:
    return Field(
        default_factory=dict,
        description="The producer's metadata of the input this record derives from (merged over the "
        "conversation's turns, first value of a key wins); {} when it sent none.",
    )


class Usage(_Strict):
    """Tokens and cost of the LLM calls behind a record (zero for the cheap tier).

    ``cost_usd`` is None when a call went to a model without a configured price: an unknown cost is
    never shown as $0 (zero calls, or only cache hits, do cost a known 0.0).
    """

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = Field(
        default=0.0, ge=0.0, description="USD at the configured list prices; null = a model without a price."
    )


class RubricScores(_Strict):
    """Seed 000 per-turn rubric v2 (1–5 each). ``None`` = the rule does not fix this dimension."""

    emotion: int | None = Field(default=None, ge=1, le=5)
    validation: int | None = Field(default=None, ge=1, le=5)
    helpfulness: int | None = Field(default=None, ge=1, le=5)
    safety: int | None = Field(default=None, ge=1, le=5)
    overall: int | None = Field(default=None, ge=1, le=5)


EdgeCaseName = Literal[
    "empty_or_incoherent",
    "wrong_language",
    "bare_acknowledgement",
    "self_harm_without_resources",
]


class EdgeCase(_Strict):
    """A deterministic pre-judgment from seed 003 §4 (edge cases)."""

    case: EdgeCaseName
    scores: RubricScores
    note: str


class TurnScore(Record):
    """Cheap-tier score of one assistant turn, emitted inline by the stream (and by batch)."""

    kind: Literal["turn_score"] = "turn_score"
    record_id: str
    conversation_id: ConversationId
    turn_index: TurnIndex
    tier: Literal["cheap"] = "cheap"
    judge: Literal["heuristic"] = "heuristic"
    rubric: RubricRef
    channel: Channel
    metrics: dict[str, float] = Field(description="seed 004's six heuristics and overall_quality, each 0.0–1.0.")
    empathy: float = Field(ge=1.0, le=5.0, description="Cheap empathy signal on the 1–5 scale (documented).")
    edge_case: EdgeCase | None = None
    flags: list[str] = Field(default_factory=list, description="Harmful-pattern flags found in the reply.")
    word_count: int
    history_complete: bool = Field(
        default=True,
        description="False when earlier turns were missing as this reply was scored (lost state, a gap given up "
        "on): its record_id then differs from a full-history score of the same turn.",
    )
    metadata: dict[str, MetadataValue] = _metadata()
    produced_at: datetime = Field(default_factory=utcnow)


class TurnJudgment(Record):
    """LLM-judge result for one assistant turn on one metric (seed 000 rubric or a seed 002 metric)."""

    kind: Literal["turn_judgment"] = "turn_judgment"
    record_id: str
    conversation_id: ConversationId
    turn_index: TurnIndex
    tier: Literal["llm"] = "llm"
    metric: str = Field(description="'turn_rubric' (seed 000) or a seed 002/004 metric name.")
    rubric: RubricRef
    judge: str = Field(description="provider:model that answered.")
    status: Literal["ok", "error"]
    scores: RubricScores | None = None
    details: dict[str, Any] = Field(default_factory=dict, description="Metric-specific validated output.")
    reasoning: str = ""
    error: str | None = Field(default=None, description="Cause, when status is error.")
    prompt_hash: str = ""
    usage: Usage = Field(default_factory=Usage)
    metadata: dict[str, MetadataValue] = _metadata()
    produced_at: datetime = Field(default_factory=utcnow)


class TurnModelScore(Record):
    """Learned-model score of one assistant turn (docs/empathy-model.md), produced off the inline path."""

    kind: Literal["turn_model_score"] = "turn_model_score"
    record_id: str
    conversation_id: ConversationId
    turn_index: TurnIndex
    tier: Literal["model"] = "model"
    rubric: RubricRef = Field(description="The model and its version, e.g. empathy-minilm-ridge@1.0.")
    embedder: str = Field(description="The sentence embedder the model's weights were trained for.")
    empathy: float = Field(ge=1.0, le=5.0, description="Overall empathy on the cheap signal's 1–5 scale.")
    components: dict[str, float] = Field(
        description="EPITOME-style mechanisms, 0–2 each: emotional_reaction, interpretation, exploration."
    )
    seeker_turn_index: int | None = Field(
        default=None,
        description="The user turn read as the seeker's message, when the model reads one; None when the "
        "reply had no earlier user turn in the conversation.",
    )
    metadata: dict[str, MetadataValue] = _metadata()
    produced_at: datetime = Field(default_factory=utcnow)


class CriterionResult(_Strict):
    answer: Answer
    reasoning: str = ""
    error: str | None = None


class ConversationScore(Record):
    """The 12-criterion checklist result (seed 001) for one closed conversation."""

    kind: Literal["conversation_score"] = "conversation_score"
    record_id: str
    conversation_id: ConversationId
    tier: Tier
    judge: str = Field(description="'heuristic' for the cheap tier, else provider:model.")
    rubric: RubricRef
    answers: dict[str, CriterionResult]
    score: float = Field(ge=0.0, le=1.0)
    passed: bool = Field(description="seed 001 'pass': score >= 0.80 and the safety gate holds.")
    category_scores: dict[str, float]
    failed_checks: list[str]
    failed_safety: list[str]
    safety_gate_failed: bool
    n_turns: int
    n_user_turns: int
    n_assistant_turns: int
    close_reason: CloseReason
    turn_summary: dict[str, float] = Field(
        default_factory=dict, description="Means of the cheap per-turn metrics over the conversation."
    )
    prompt_hash: str = Field(default="", description="LLM tier: hash over the rendered judge prompts.")
    usage: Usage = Field(default_factory=Usage)
    history_complete: bool = _history()
    missing_turns: TurnRanges = _missing()
    metadata: dict[str, MetadataValue] = _metadata()
    produced_at: datetime = Field(default_factory=utcnow)


AlertType = Literal[
    "crisis_disclosure",  # user turn with a crisis signal (emitted as soon as the turn arrives)
    "crisis_unanswered",  # the assistant reply to a crisis turn offers no crisis resources (more severe)
    "harmful_reply",  # dangerous advice, diagnosis, guarantee, harmful-coping endorsement
    "dependency",  # unhealthy-dependency language (seed 004 trust & boundaries)
    "judge_unsafe",  # an LLM judge rated a turn unsafe (safety <= 2) or failed CQ8/CQ9
    "crisis_not_covered",  # a user turn in a language the crisis detector does not cover: never treated as safe
    "judge_error",  # an LLM judge could not answer a safety criterion (operations signal, severity info)
]
#: ``possible``: crisis risk seen only by the learned model (or a conversation pattern it did not confirm) --
#: routed for review; ``medium`` to ``critical`` as before (docs/safety-detection.md). ``info``: not a safety
#: finding at all (``judge_error``: the judge infrastructure failed); ranks below every finding.
Severity = Literal["info", "possible", "medium", "high", "critical"]
SEVERITY_ORDER: dict[str, int] = {"info": -1, "possible": 0, "medium": 1, "high": 2, "critical": 3}
CrisisDetector = Literal["rule", "model", "rule+model", "conversation", "llm"]


class SafetyAlert(Record):
    """For safety teams. The id is deterministic, so a redelivered turn yields the identical alert."""

    kind: Literal["safety_alert"] = "safety_alert"
    alert_id: str
    conversation_id: ConversationId
    turn_index: TurnIndex | None
    alert_type: AlertType
    severity: Severity
    categories: list[str] = Field(description="e.g. suicidal_ideation_direct, self_harm, overdose.")
    evidence: str = Field(default="", description="The matched cue (short), never the whole text.")
    source: str = Field(description="'heuristic' or provider:model.")
    rubric: RubricRef
    metadata: dict[str, MetadataValue] = _metadata()
    detected_at: datetime = Field(default_factory=utcnow)
    # Crisis alerts only (None elsewhere): what a safety team routes and audits by.
    cssrs_category: str | None = Field(
        default=None,
        description="C-SSRS category of the most severe finding: attempt, plan, intent, preparatory, method, "
        "active_ideation, wish_dead, nssi, history; or danger_from_others / third_party_risk.",
    )
    detector: CrisisDetector | None = Field(
        default=None, description="Which detector fired: rule, model, rule+model, conversation (across turns), llm."
    )
    probability: float | None = Field(
        default=None, ge=0.0, le=1.0, description="The learned model's calibrated crisis probability for the turn."
    )
    detector_version: str | None = Field(default=None, description="Crisis detector and model versions.")


class AlertRef(_Strict):
    """What the verdict needs of one alert (the stream keeps these per open conversation, not whole alerts)."""

    alert_id: str
    alert_type: AlertType
    severity: Severity
    turn_index: TurnIndex | None = None

    @classmethod
    def of(cls, alert: SafetyAlert) -> AlertRef:
        return cls(
            alert_id=alert.alert_id, alert_type=alert.alert_type, severity=alert.severity, turn_index=alert.turn_index
        )


class TierDisagreement(_Strict):
    """One criterion the cheap tier and the LLM judge answered differently (calibration data)."""

    criterion: str
    cheap: Answer
    llm: Answer


VerdictJudgeStatus = Literal["ok", "error", "not_configured"]


class ConversationVerdict(Record):
    """The one final result per conversation: every tier combined so that no tier can clear another's
    safety finding (rules in :mod:`scorers.verdict`; docs/judges.md, "The verdict")."""

    kind: Literal["conversation_verdict"] = "conversation_verdict"
    record_id: str
    conversation_id: ConversationId
    rubric: RubricRef
    tiers: list[Tier] = Field(description="Tiers combined: ['cheap'] or ['cheap', 'llm'].")
    judge: str = Field(default="", description="provider:model of the LLM checklist, '' without one.")
    judge_status: VerdictJudgeStatus = Field(
        description="ok; error (some LLM criteria ended as ERROR); not_configured (cheap tier only)."
    )
    answers: dict[str, CriterionResult] = Field(description="The combined seed-001 answers the score is computed on.")
    answer_source: dict[str, str] = Field(
        description="Per criterion: llm, cheap, cheap_safety (the cheap tier's safety NO kept over the judge), "
        "crisis_rule (a crisis left unanswered), or seed_na (seed-001 NA condition)."
    )
    score: float = Field(ge=0.0, le=1.0)
    passed: bool = Field(description="score >= 0.80 and the safety gate holds (seed 001), after the tier rules.")
    safety_gate_failed: bool
    gate_reasons: list[str] = Field(description="Why the gate failed, one line per cause; empty when it holds.")
    failed_checks: list[str]
    safety_severity: Severity | None = Field(
        description="The most severe safety finding of any tier for this conversation (None: none)."
    )
    crisis_turns: list[int] = Field(description="User turns with a crisis finding (any detector).")
    crisis_unanswered_turns: list[int] = Field(description="Replies to a crisis turn that offered no resources.")
    disagreements: list[TierDisagreement] = Field(description="Criteria where cheap and LLM answers differ.")
    source_records: list[str] = Field(description="record_id / alert_id of every record combined.")
    n_turns: int
    close_reason: CloseReason
    history_complete: bool = _history()
    missing_turns: TurnRanges = _missing()
    metadata: dict[str, MetadataValue] = _metadata()
    produced_at: datetime = Field(default_factory=utcnow)


class FieldError(_Strict):
    loc: str
    msg: str


#: Why an input was rejected, as a fixed code (``reason`` is the human sentence): what metrics label and
#: consumers route by, never input-derived text.
ReasonCode = Literal[
    "payload_too_large",
    "invalid_utf8",
    "malformed_json",
    "not_an_object",
    "too_deep",
    "text_too_long",
    "too_many_turns",
    "key_mismatch",
    "invalid_record",
    "processing_failed",
    "other",
]


class DeadLetter(Record):
    """A rejected input: the original bytes (base64, lossless) and why it was rejected."""

    kind: Literal["dead_letter"] = "dead_letter"
    record_id: str
    source: str = Field(description="Topic (or file) the input came from.")
    partition: int | None = None
    offset: int | None = Field(default=None, description="Offset, or the 1-based line number for files.")
    reason: str
    reason_code: ReasonCode = Field(default="other", description="The reason as a fixed code (schema 1.3).")
    errors: list[FieldError] = Field(default_factory=list)
    payload_b64: str
    payload_preview: str = Field(default="", description="First 300 characters, undecodable bytes replaced.")
    metadata: dict[str, MetadataValue] = Field(
        default_factory=dict, description="The rejected input's metadata when it was itself valid (best effort)."
    )
    received_at: datetime = Field(default_factory=utcnow)


OutputRecord = Annotated[
    TurnScore | TurnJudgment | TurnModelScore | ConversationScore | ConversationVerdict | SafetyAlert | DeadLetter,
    Field(discriminator="kind"),
]
