"""Seed 004 voice-companion heuristics: six 0-1 metrics and their weighted overall quality.

Public API: :data:`RUBRIC`, :func:`score_voice` (what the evaluator calls per assistant turn),
:func:`score_response`, one function per metric, the helper predicates the seed names, and
:mod:`scorers.voice.raw` (the seed's logic transcribed literally, quirks included).
"""

from . import raw
from ._heuristics import (
    LENGTH_RULES,
    METRICS,
    RUBRIC,
    appropriateness,
    conversational_quality,
    emotional_intelligence,
    helpfulness,
    overall_quality,
    personalization_continuity,
    score_response,
    score_voice,
    trust_boundaries,
)
from ._predicates import (
    INAPPROPRIATE_TERMS,
    contains_formatting_characters,
    contains_formatting_chars,
    contains_helpful_question,
    contains_personal_pronouns,
    contains_question,
    excessive_line_breaks,
    inappropriate_content_detected,
    too_formal_for_context,
)

__all__ = [
    "INAPPROPRIATE_TERMS",
    "LENGTH_RULES",
    "METRICS",
    "RUBRIC",
    "appropriateness",
    "contains_formatting_characters",
    "contains_formatting_chars",
    "contains_helpful_question",
    "contains_personal_pronouns",
    "contains_question",
    "conversational_quality",
    "emotional_intelligence",
    "excessive_line_breaks",
    "helpfulness",
    "inappropriate_content_detected",
    "overall_quality",
    "personalization_continuity",
    "raw",
    "score_response",
    "score_voice",
    "too_formal_for_context",
    "trust_boundaries",
]
