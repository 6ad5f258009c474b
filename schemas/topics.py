"""Every Kafka topic attune reads or writes, defined once.

Each spec names who produces and who consumes it, so a reader finds both in one hop.
Partition counts are defaults; ``attune worker --partitions`` overrides the turns topic.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from ._inputs import ConversationEnd, ConversationReplay, Turn
from ._jobs import JudgeJob
from ._outputs import (
    ConversationScore,
    ConversationVerdict,
    DeadLetter,
    SafetyAlert,
    TurnJudgment,
    TurnModelScore,
    TurnScore,
)

#: Producers and consumers are named as ``module:attribute (what)`` where they are attune code (a test imports
#: every one), in plain words where they are not (your system, safety teams, analytics consumers).
_AGENT = "streams._faust.runtime:create_app (agent process_turns"
_TAIL = "streams.cli:_cmd_tail (attune tail)"


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int
    key: str
    records: tuple[type[BaseModel], ...]
    producers: tuple[str, ...]
    consumers: tuple[str, ...]
    doc: str


TURNS = TopicSpec(
    name="attune.turns",
    partitions=4,
    key="conversation_id",
    records=(Turn, ConversationEnd, ConversationReplay),
    producers=("your voice/text system", "streams.cli:_cmd_publish (attune publish)"),
    consumers=(
        f"{_AGENT})",
        "streams._alert_path:AlertPath (the alert path of every worker)",
        "streams.model_stage:run_stage (attune model-stage)",
    ),
    doc="Live turns, conversation-end and conversation-replay events; keyed so one conversation stays on one "
    "partition.",
)
TURN_SCORES = TopicSpec(
    name="attune.scores.turn",
    partitions=4,
    key="conversation_id",
    records=(TurnScore,),
    producers=(f"{_AGENT})",),
    consumers=("analytics consumers", _TAIL),
    doc="Cheap-tier score of every assistant turn, emitted inline.",
)
TURN_JUDGMENTS = TopicSpec(
    name="attune.scores.judgment",
    partitions=4,
    key="conversation_id",
    records=(TurnJudgment,),
    producers=("streams._faust.judge_agent:install (agent judge_jobs)",),
    consumers=("analytics consumers", _TAIL),
    doc="LLM-judge results per sampled assistant turn.",
)
TURN_MODEL_SCORES = TopicSpec(
    name="attune.scores.model",
    partitions=4,
    key="conversation_id",
    records=(TurnModelScore,),
    producers=("streams.model_stage:run_stage (attune model-stage, its own consumer group)",),
    consumers=("analytics consumers", _TAIL),
    doc="Learned-model scores (empathy and its components) of every assistant turn, off the inline path.",
)
CONVERSATION_SCORES = TopicSpec(
    name="attune.scores.conversation",
    partitions=4,
    key="conversation_id",
    records=(ConversationScore,),
    producers=(f"{_AGENT}: cheap checklist)", "streams._faust.judge_agent:install (LLM checklist)"),
    consumers=("analytics consumers", _TAIL),
    doc="12-criterion checklist per closed conversation; consumers de-duplicate by record_id.",
)
CONVERSATION_VERDICTS = TopicSpec(
    name="attune.scores.verdict",
    partitions=4,
    key="conversation_id",
    records=(ConversationVerdict,),
    producers=(
        f"{_AGENT}: at close, without --judge)",
        "streams._faust.judge_agent:install (after the LLM checklist, with --judge)",
    ),
    consumers=("analytics consumers", "safety teams", _TAIL),
    doc="One final verdict per closed conversation, every tier combined; no judge can clear a safety finding.",
)
SAFETY_ALERTS = TopicSpec(
    name="attune.alerts.safety",
    partitions=1,
    key="conversation_id",
    records=(SafetyAlert,),
    producers=(
        "streams._alert_path:AlertPath (every worker: a user turn's own alerts, never waits for a rebalance)",
        f"{_AGENT}: alerts that need earlier turns, harmful replies, unanswered crises)",
        "streams._faust.judge_agent:install (judge_unsafe alerts, the crisis screen)",
        "streams.model_stage:run_stage (possible crisis alerts of the crisis second look, off the inline path)",
    ),
    consumers=("safety teams", "examples/alerts_consumer.py", _TAIL),
    doc="Crisis and harm alerts; alert_id is deterministic so redelivery never changes an alert.",
)
DEAD_LETTER = TopicSpec(
    name="attune.deadletter",
    partitions=1,
    key="source",
    records=(DeadLetter,),
    producers=(f"{_AGENT})", "streams.cli:_cmd_publish (attune publish: invalid lines)"),
    consumers=("operators", _TAIL),
    doc="Inputs that failed validation, with the original bytes and the reason.",
)

ALL_TOPICS: tuple[TopicSpec, ...] = (
    TURNS,
    TURN_SCORES,
    TURN_JUDGMENTS,
    TURN_MODEL_SCORES,
    CONVERSATION_SCORES,
    CONVERSATION_VERDICTS,
    SAFETY_ALERTS,
    DEAD_LETTER,
)

#: The topic of every record kind (``turn_score`` -> ``attune.scores.turn``...), derived from the specs above:
#: the one place a producer looks up where a record goes.
TOPIC_OF_KIND: dict[str, str] = {
    record.model_fields["kind"].default: spec.name for spec in ALL_TOPICS for record in spec.records
}

# -- internal topics of the stream processor (streams/) ----------------------------------------------
# They must have the turns topic's partition count (``attune worker --partitions`` moves them all):
# a conversation's turns, its control records and its table changelog entries share one partition.
CONTROL = TopicSpec(
    name="attune.internal.control",
    partitions=TURNS.partitions,
    key="conversation_id",
    records=(),
    producers=("streams._faust.runtime:Runtime.sweep (timer: inactivity close, reorder flush, tombstone expiry)",),
    consumers=(f"{_AGENT})",),
    doc="Internal JSON commands; a timer cannot write tables, so it asks the owning agent to act.",
)
TURN_BUFFER_CHANGELOG = TopicSpec(
    name="attune-turn_buffer-changelog",
    partitions=TURNS.partitions,
    key="conversation_id:chunk",
    records=(),
    producers=("streams._faust.store:FaustStore (Faust table 'turn_buffer' of app 'attune')",),
    consumers=("streams._faust.store:FaustStore (table recovery)",),
    doc="Compacted changelog of buffered turns in chunks of 16 per key; deleted when the conversation closes.",
)
CONVERSATIONS_CHANGELOG = TopicSpec(
    name="attune-conversations-changelog",
    partitions=TURNS.partitions,
    key="conversation_id",
    records=(),
    producers=("streams._faust.store:FaustStore (Faust table 'conversations' of app 'attune')",),
    consumers=("streams._faust.store:FaustStore (table recovery)",),
    doc="Compacted changelog of per-conversation state: index ranges, crisis_pending, end, tombstone.",
)

JUDGE_JOBS = TopicSpec(
    name="attune.internal.judge_jobs",
    partitions=TURNS.partitions,
    key="conversation_id",
    records=(JudgeJob,),
    producers=(
        "streams.judging:JobEmitter (hooks of process_turns: sampled turns, crisis screens, the checklist at close;"
        " --judge)",
        "streams.model_stage:run_stage (crisis screens of the second look's alerts; --crisis-screen)",
    ),
    consumers=("streams._faust.judge_agent:install (agent judge_jobs)",),
    doc="LLM-judge work, one self-contained job per sampled turn, per screened user turn and per closed "
    "conversation; no traffic unless the worker runs with --judge/--judge-config (or a model stage with "
    "--crisis-screen).",
)

#: Topics only the stream processor reads and writes; all co-partitioned with TURNS.
INTERNAL_TOPICS: tuple[TopicSpec, ...] = (CONTROL, TURN_BUFFER_CHANGELOG, CONVERSATIONS_CHANGELOG, JUDGE_JOBS)
