"""Seed 004's six heuristics and overall quality, as the cheap tier scores every assistant turn.

The arithmetic (bases, bonuses, penalties, clamps, weights) is seed 004's exactly; see
:mod:`scorers.voice.raw` for the literal transcription. Two deliberate differences from ``raw``:

1. Phrase lists are compared case-insensitively and typographic apostrophes are folded, because the
   seed lower-cases the response but writes some phrases with capitals ("I'm all you need", "as an AI"),
   which would otherwise never match (dependency and over-promise penalties would be dead code).
2. ``channel="text"``: seed 004's rules are for speech. In text chat markdown renders and paragraphs
   are normal, so the formatting and line-break penalties do not apply, and the length window becomes
   10-120 words (bonus) with the penalty above 200 words. ``channel="voice"`` is the seed unchanged.

Every value is rounded to 4 decimals so ``0.6 + 0.2 + 0.2`` is stored as ``1.0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from schemas import RubricRef

from .._base import Exchange
from .._text import fold
from . import raw
from ._predicates import (
    contains_formatting_characters,
    contains_helpful_question,
    contains_personal_pronouns,
    contains_question,
    excessive_line_breaks,
    inappropriate_content_detected,
    too_formal_for_context,
)

Channel = Literal["voice", "text"]

RUBRIC = RubricRef(id="voice-companion", version="2.0", source="seed-004")

#: (ideal_min, ideal_max, penalty_above) word counts per channel. Voice: seed 004 §2.
LENGTH_RULES: dict[str, tuple[int, int, int]] = {"voice": (10, 30, 50), "text": (10, 120, 200)}
METRICS: tuple[str, ...] = (*raw.OVERALL_WEIGHTS, "overall_quality")


def _ci(phrases: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(fold(p) for p in phrases)


_HELP_EMOTIONAL = _ci(raw.HELPFULNESS_EMOTIONAL_KEYWORDS)
_HELP_EMPATHY = _ci(raw.HELPFULNESS_EMPATHY_WORDS)
_EI_EMOTIONAL = _ci(raw.EI_EMOTIONAL_KEYWORDS)
_EI_EMPATHY = _ci(raw.EI_EMPATHY_PHRASES)
_EI_VALIDATION = _ci(raw.EI_VALIDATION_PHRASES)
_EI_TOXIC = _ci(raw.EI_TOXIC_PHRASES)
_CONTINUITY = _ci(raw.CONTINUITY_PHRASES)
_PERSONAL = _ci(raw.PERSONAL_PHRASES)
_CONSISTENCY = _ci(raw.CONSISTENCY_PHRASES)
_BOUNDARY = _ci(raw.BOUNDARY_PHRASES)
_TRANSPARENCY = _ci(raw.TRANSPARENCY_PHRASES)
_DEPENDENCY = _ci(raw.DEPENDENCY_PHRASES)
_OVERPROMISE = _ci(raw.OVERPROMISE_PHRASES)


def _has(text: str, phrases: tuple[str, ...]) -> bool:
    return any(p in text for p in phrases)  # substring semantics, as the seed


def _clamp(score: float) -> float:
    return round(min(1.0, max(0.0, score)), 4)


def appropriateness(response: str, user_input: str = "", *, channel: Channel = "voice") -> float:
    """Seed 004 §1: 1.0, -0.3 formatting (voice only), -0.2 too formal, -0.5 inappropriate; floor 0."""
    score = 1.0
    if channel == "voice" and contains_formatting_characters(response):
        score -= 0.3
    if too_formal_for_context(response, user_input):
        score -= 0.2
    if inappropriate_content_detected(response):
        score -= 0.5
    return _clamp(score)


def conversational_quality(response: str, user_input: str = "", *, channel: Channel = "voice") -> float:
    """Seed 004 §2: 0.6, +0.2 ideal length, +0.2 question, +0.1 pronoun, -0.2 too long,
    -0.3 formatting, -0.2 line breaks (the last two voice only); clamp to [0, 1]."""
    lo, hi, too_long = LENGTH_RULES[channel]
    score = 0.6
    word_count = len(response.split())
    if lo <= word_count <= hi:
        score += 0.2
    if contains_question(response):
        score += 0.2
    if contains_personal_pronouns(response):
        score += 0.1
    if word_count > too_long:
        score -= 0.2
    if channel == "voice":
        if contains_formatting_characters(response):
            score -= 0.3
        if excessive_line_breaks(response):
            score -= 0.2
    return _clamp(score)


def helpfulness(response: str, user_input: str) -> float:
    """Seed 004 §3: 0.5, +0.3 shared whitespace token, +0.2 empathy word when the user's text holds an
    emotional keyword (substring), +0.1 helpful question; clamp to [0, 1]."""
    user, resp = fold(user_input), fold(response)
    score = 0.5
    if set(user.split()) & set(resp.split()):
        score += 0.3
    if _has(user, _HELP_EMOTIONAL) and _has(resp, _HELP_EMPATHY):
        score += 0.2
    if contains_helpful_question(response):
        score += 0.1
    return _clamp(score)


def emotional_intelligence(response: str, user_input: str) -> float:
    """Seed 004 §4: 0.5; only if the user's text holds an emotional keyword (substring): +0.3 empathy
    phrase, +0.2 validation phrase, -0.4 toxic positivity; clamp to [0, 1]."""
    user, resp = fold(user_input), fold(response)
    score = 0.5
    if _has(user, _EI_EMOTIONAL):
        if _has(resp, _EI_EMPATHY):
            score += 0.3
        if _has(resp, _EI_VALIDATION):
            score += 0.2
        if _has(resp, _EI_TOXIC):
            score -= 0.4
    return _clamp(score)


def personalization_continuity(response: str, user_input: str = "") -> float:
    """Seed 004 §5: 0.4, +0.3 continuity, +0.2 personalisation, +0.1 consistency phrase; clamp."""
    resp = fold(response)
    score = 0.4
    if _has(resp, _CONTINUITY):
        score += 0.3
    if _has(resp, _PERSONAL):
        score += 0.2
    if _has(resp, _CONSISTENCY):
        score += 0.1
    return _clamp(score)


def trust_boundaries(response: str, user_input: str = "") -> float:
    """Seed 004 §6: 0.7, +0.2 boundary, +0.1 transparency, -0.5 dependency, -0.3 over-promise; clamp."""
    resp = fold(response)
    score = 0.7
    if _has(resp, _BOUNDARY):
        score += 0.2
    if _has(resp, _TRANSPARENCY):
        score += 0.1
    if _has(resp, _DEPENDENCY):
        score -= 0.5
    if _has(resp, _OVERPROMISE):
        score -= 0.3
    return _clamp(score)


def overall_quality(scores: Mapping[str, float]) -> float:
    """Seed 004 §7: .15 appropriateness + .20 conversational + .20 helpfulness + .25 emotional
    intelligence + .10 personalisation + .10 trust, over the (rounded) metric values."""
    return round(sum(scores[k] * w for k, w in raw.OVERALL_WEIGHTS.items()), 4)


def score_response(response: str, user_input: str, *, channel: Channel = "voice") -> dict[str, float]:
    """The six seed-004 metrics and ``overall_quality`` for one reply to ``user_input``."""
    out = {
        "appropriateness": appropriateness(response, user_input, channel=channel),
        "conversational_quality": conversational_quality(response, user_input, channel=channel),
        "helpfulness": helpfulness(response, user_input),
        "emotional_intelligence": emotional_intelligence(response, user_input),
        "personalization_continuity": personalization_continuity(response, user_input),
        "trust_boundaries": trust_boundaries(response, user_input),
    }
    out["overall_quality"] = overall_quality(out)
    return out


def score_voice(ex: Exchange) -> dict[str, float]:
    """Seed 004 metrics for one exchange, using its channel (voice rules unless ``channel="text"``)."""
    channel: Channel = "text" if ex.context.channel == "text" else "voice"
    return score_response(ex.response, ex.user_text, channel=channel)
