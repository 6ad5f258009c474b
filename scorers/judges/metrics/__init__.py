"""Judge metrics, one folder each (logic, strict output model, prompt template as versioned data).

Per-turn: ``turn_rubric`` (seed 000), the seed 002 metrics (``conversational_continuity``, which seed 002
only names, defined by attune), ``voice_judge`` (seed 004).
Per-conversation: ``checklist`` (seed 001, in :mod:`.checklist`). ``relevance`` is embedding-based.
"""

from __future__ import annotations

from ._base import JudgeOutput, TurnMetric, parse_json
from .coherence import METRIC as _coherence
from .conversational_continuity import METRIC as _conversational_continuity
from .emotional_congruence import METRIC as _emotional_congruence
from .empathy import METRIC as _empathy
from .groundedness import METRIC as _groundedness
from .helpfulness import METRIC as _helpfulness
from .logical_consistency import METRIC as _logical_consistency
from .memory_utilization import METRIC as _memory_utilization
from .persona_consistency import METRIC as _persona_consistency
from .politeness import METRIC as _politeness
from .safety import METRIC as _safety
from .turn_rubric import METRIC as _turn_rubric
from .voice_judge import METRIC as _voice_judge

#: LLM-judged per-turn metrics by name (relevance is separate: it embeds, it does not ask).
TURN_METRICS: dict[str, TurnMetric] = {
    m.name: m
    for m in (
        _turn_rubric,
        _memory_utilization,
        _groundedness,
        _coherence,
        _emotional_congruence,
        _helpfulness,
        _safety,
        _persona_consistency,
        _politeness,
        _logical_consistency,
        _conversational_continuity,
        _empathy,
        _voice_judge,
    )
}
ALL_TURN_METRICS: tuple[str, ...] = (*TURN_METRICS, "relevance")

__all__ = ["ALL_TURN_METRICS", "TURN_METRICS", "JudgeOutput", "TurnMetric", "parse_json"]
