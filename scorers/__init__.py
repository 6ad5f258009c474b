"""attune scorers: one interface (:class:`Evaluator`) for the stream and the batch CLI.

The cheap tier is deterministic and offline (seed 004 heuristics, seed 003 edge cases, crisis
detection, the heuristic seed-001 checklist). LLM judges live in :mod:`scorers.judges`.
"""

from ._base import Exchange, Signal, Transcript
from ._evaluator import (
    AssistantTurnResult,
    Evaluator,
    UserTurnResult,
    evaluate_conversation,
    exchange_after,
    exchange_for,
    exchanges_of,
    with_metadata,
)

__all__ = [
    "AssistantTurnResult",
    "Evaluator",
    "Exchange",
    "Signal",
    "Transcript",
    "UserTurnResult",
    "evaluate_conversation",
    "exchange_after",
    "exchange_for",
    "exchanges_of",
    "with_metadata",
]
