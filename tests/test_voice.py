"""Seed 004 heuristics: clear-cut vectors with the arithmetic written out, plus the helper predicates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas import TurnContext
from scorers._base import Exchange
from scorers.voice import (
    METRICS,
    RUBRIC,
    appropriateness,
    contains_formatting_characters,
    contains_formatting_chars,
    contains_helpful_question,
    contains_personal_pronouns,
    contains_question,
    conversational_quality,
    emotional_intelligence,
    excessive_line_breaks,
    helpfulness,
    inappropriate_content_detected,
    overall_quality,
    personalization_continuity,
    raw,
    score_response,
    score_voice,
    too_formal_for_context,
    trust_boundaries,
)


def words(n: int) -> str:
    return " ".join(["word"] * n)


def test_rubric_ref() -> None:
    assert (RUBRIC.id, RUBRIC.version, RUBRIC.source) == ("voice-companion", "2.0", "seed-004")
    assert RUBRIC.tag == "voice-companion@2.0"


# -- §2 conversational quality ---------------------------------------------------------------------------
def test_conversational_quality_clamps_at_one() -> None:
    r = "I'm sorry you're dealing with that. What part of the move feels hardest for you right now?"
    assert len(r.split()) == 17
    # 0.6 base + 0.2 (10-30 words) + 0.2 (question) + 0.1 (pronoun) = 1.1 -> clamp 1.0
    assert conversational_quality(r) == 1.0
    assert raw.conversational_quality(r) == 1.0


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (9, 0.6),  # 0.6 base, below the 10-30 window
        (10, 0.8),  # 0.6 + 0.2 (10 words: inside 10-30)
        (30, 0.8),  # 0.6 + 0.2 (30 words: inside 10-30)
        (31, 0.6),  # 0.6, outside the window, not yet "> 50"
        (50, 0.6),  # 0.6, exactly 50 is not "> 50"
        (51, 0.4),  # 0.6 - 0.2 (> 50 words) = 0.4
    ],
)
def test_conversational_quality_length_window(n: int, expected: float) -> None:
    assert conversational_quality(words(n)) == expected


def test_conversational_quality_over_fifty_words_penalised() -> None:
    sentence = "I hear how much the move has taken out of you and it makes sense to feel worn down."
    r = " ".join([sentence] * 3)
    assert len(r.split()) == 57
    # 0.6 base + 0.1 (pronoun) - 0.2 (57 > 50 words); no length bonus, no question = 0.5
    assert conversational_quality(r) == 0.5


def test_conversational_quality_formatting_and_line_breaks() -> None:
    r = "**Here are some ideas:**\n- take a walk\n- call a friend\n- write it down"
    assert len(r.split()) == 16
    # 0.6 base + 0.2 (16 words) - 0.3 (formatting: ** and bullets) - 0.2 (3 line breaks) = 0.3
    assert conversational_quality(r) == 0.3
    # text channel: no formatting/line-break penalties; 16 words is inside 10-120 -> 0.6 + 0.2 = 0.8
    assert conversational_quality(r, channel="text") == 0.8


def test_conversational_quality_clamps_at_zero() -> None:
    r = "**Steps**\n\n" + words(55)
    # 0.6 base - 0.2 (56 > 50 words) - 0.3 (formatting) - 0.2 (blank line = 2 breaks) = -0.1 -> clamp 0.0
    assert conversational_quality(r) == 0.0


def test_text_channel_length_window() -> None:
    # text: 10-120 words earn the bonus, > 200 lose 0.2 (voice would give 0.6 - 0.2 = 0.4 for both)
    assert conversational_quality(words(100), channel="text") == 0.8  # 0.6 + 0.2
    assert conversational_quality(words(201), channel="text") == 0.4  # 0.6 - 0.2
    assert conversational_quality(words(100)) == 0.4  # voice: 0.6 - 0.2 (> 50)


# -- §1 appropriateness ----------------------------------------------------------------------------------
def test_appropriateness_all_penalties_floor_at_zero() -> None:
    r = "**Furthermore**, this is bullshit."
    # 1.0 - 0.3 (formatting **) - 0.2 (formal "furthermore") - 0.5 (profanity) = 0.0 -> max(0.0, .) = 0.0
    assert appropriateness(r, "hi") == 0.0


def test_appropriateness_single_penalties() -> None:
    assert appropriateness("Furthermore, it is recommended that you rest.", "hi") == 0.8  # 1.0 - 0.2 (formal)
    assert appropriateness("That guy sounds like a total asshole.", "hi") == 0.5  # 1.0 - 0.5 (profanity)
    assert appropriateness("Try this: `breathe`", "hi") == 0.7  # 1.0 - 0.3 (backtick)
    assert appropriateness("Try this: `breathe`", "hi", channel="text") == 1.0  # text: no formatting rule
    assert appropriateness("Let's assess your class schedule together.", "hi") == 1.0  # no Scunthorpe hit


def test_formal_register_matched_by_user_is_not_a_mismatch() -> None:
    r = "Furthermore, it is recommended that you rest."
    # the user writes "furthermore" too: a formal context, so no -0.2
    assert appropriateness(r, "Furthermore, I would like advice on sleep.") == 1.0


# -- §3 helpfulness --------------------------------------------------------------------------------------
def test_helpfulness_all_bonuses_clamp() -> None:
    user = "I feel so stressed about work"
    r = "I understand, work stress is hard. What part weighs on you most?"
    # 0.5 base + 0.3 (shares "i", "work") + 0.2 ('stress' in user, 'understand' in reply)
    # + 0.1 (question addressed to the user) = 1.1 -> clamp 1.0
    assert helpfulness(r, user) == 1.0


def test_helpfulness_base_and_whitespace_token_quirk() -> None:
    assert helpfulness("Good morning!", "Hello there") == 0.5  # 0.5 base, no shared token
    # seed splits on whitespace: "job." != "job", so no overlap bonus -> 0.5
    assert helpfulness("Tell me about the job.", "my job") == 0.5
    assert raw.helpfulness("Tell me about the job.", "my job") == 0.5


def test_helpfulness_substring_quirk_is_kept() -> None:
    # 'sad' in 'crusade' (seed substring test): emotional context, 'sorry' is an empathy word
    # 0.5 base + 0.2 (empathy in "emotional" context) = 0.7
    assert helpfulness("I'm sorry", "Our crusade failed") == 0.7
    assert raw.helpfulness("I'm sorry", "Our crusade failed") == pytest.approx(0.7)


# -- §4 emotional intelligence ---------------------------------------------------------------------------
def test_emotional_intelligence_empathy_and_validation() -> None:
    # 0.5 base + 0.3 ('sounds') + 0.2 ('makes sense'), user said 'sad' = 1.0
    assert emotional_intelligence("That sounds heavy, and it makes sense to feel that way.", "I'm so sad today") == 1.0


def test_emotional_intelligence_toxic_positivity() -> None:
    user = "I'm worried about my exam"
    assert emotional_intelligence("Cheer up!", user) == 0.1  # 0.5 - 0.4 (toxic 'cheer up')
    assert emotional_intelligence("I understand, but cheer up!", user) == 0.4  # 0.5 + 0.3 - 0.4
    assert emotional_intelligence("Just think positive and it could be worse.", user) == 0.1  # penalty once


def test_emotional_intelligence_needs_emotional_keyword_in_user_text() -> None:
    # no seed keyword in the user's text: the whole block is skipped, base 0.5
    assert emotional_intelligence("I understand, that sounds hard.", "What's the weather like?") == 0.5
    # substring quirk: 'sad' in 'crusade' opens the block; 'sounds' -> 0.5 + 0.3 = 0.8
    assert emotional_intelligence("That sounds interesting.", "I'm reading about a crusade") == 0.8
    assert raw.emotional_intelligence("That sounds interesting.", "I'm reading about a crusade") == 0.8


# -- §5 personalisation & continuity ---------------------------------------------------------------------
def test_personalization_all_bonuses_and_rounding() -> None:
    r = "As we discussed, since you mentioned your sister, I believe you can do this."
    # 0.4 + 0.3 (as we discussed) + 0.2 (since you mentioned) + 0.1 (I believe) = 1.0
    # (float sum is 0.9999999999999999; rounded to 4 decimals it is stored as 1.0)
    assert personalization_continuity(r) == 1.0
    # raw: 'I believe' is written with a capital and tested against response.lower(): never matches
    assert raw.personalization_continuity(r) == pytest.approx(0.9)
    assert personalization_continuity("Nice.") == 0.4  # base


# -- §6 trust & boundaries -------------------------------------------------------------------------------
def test_trust_boundary_and_transparency() -> None:
    r = "As an AI, I can't replace a therapist, but I can help you find professional help."
    # 0.7 + 0.2 (boundary: 'i can help', 'professional help') + 0.1 (transparency: 'as an ai') = 1.0
    assert trust_boundaries(r) == 1.0
    # raw: only the lower-case 'professional help' can match -> 0.7 + 0.2 = 0.9
    assert raw.trust_boundaries(r) == pytest.approx(0.9)


def test_trust_dependency_and_overpromise_penalties() -> None:
    assert trust_boundaries("I'm all you need.") == 0.2  # 0.7 - 0.5 (dependency)
    assert trust_boundaries("I’m all you need.") == 0.2  # typographic apostrophe folded
    assert raw.trust_boundaries("I'm all you need.") == 0.7  # raw: capitalised phrase never matches
    assert trust_boundaries("I guarantee I will fix this.") == 0.4  # 0.7 - 0.3 (over-promise)
    # 0.7 - 0.5 (dependency) - 0.3 (over-promise 'trust me completely') = -0.1 -> clamp 0.0
    assert trust_boundaries("Trust me completely, I'm all you need.") == 0.0
    # raw still catches the all-lower-case phrases: 0.7 - 0.5 ("don't need anyone else") = 0.2
    assert raw.trust_boundaries("You don't need anyone else.") == pytest.approx(0.2)


# -- §7 overall ------------------------------------------------------------------------------------------
def test_overall_weighted_sum() -> None:
    s = score_response("Okay.", "hello")
    # appropriateness 1.0, conversational 0.6 (1 word), helpfulness 0.5 ("okay." vs "hello"),
    # emotional intelligence 0.5, personalisation 0.4, trust 0.7
    assert s == {
        "appropriateness": 1.0,
        "conversational_quality": 0.6,
        "helpfulness": 0.5,
        "emotional_intelligence": 0.5,
        "personalization_continuity": 0.4,
        "trust_boundaries": 0.7,
        # .15*1.0 + .20*0.6 + .20*0.5 + .25*0.5 + .10*0.4 + .10*0.7
        # = .15 + .12 + .10 + .125 + .04 + .07 = 0.605
        "overall_quality": 0.605,
    }
    assert list(s) == list(METRICS)


def test_overall_weights_sum_to_one() -> None:
    assert overall_quality(dict.fromkeys(raw.OVERALL_WEIGHTS, 1.0)) == 1.0
    assert overall_quality(dict.fromkeys(raw.OVERALL_WEIGHTS, 0.0)) == 0.0
    only_ei = {**dict.fromkeys(raw.OVERALL_WEIGHTS, 0.0), "emotional_intelligence": 1.0}
    assert overall_quality(only_ei) == 0.25  # emotional intelligence carries the largest weight


def test_score_voice_uses_exchange_channel() -> None:
    r = "**Here are some ideas:**\n- take a walk\n- call a friend\n- write it down"
    voice = score_voice(Exchange("c", 1, "any tips?", r))
    text = score_voice(Exchange("c", 1, "any tips?", r, context=TurnContext(channel="text")))
    assert voice["appropriateness"] == 0.7 and text["appropriateness"] == 1.0
    assert voice["conversational_quality"] == 0.3 and text["conversational_quality"] == 0.8
    assert all(0.0 <= v <= 1.0 and round(v, 4) == v for v in voice.values())


def test_raw_score_all_matches_production_on_lower_case_text() -> None:
    r = "i hear you. that sounds really hard, and it makes sense. what happened?"
    user = "i'm so sad and worried"
    prod, lit = score_response(r, user), raw.score_all(r, user)
    assert prod == {k: round(v, 4) for k, v in lit.items()}


# -- helper predicates -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "**bold**",
        "that was *so* hard",
        "use `code`",
        "# Heading",
        "#blessed",
        "- item one",
        "• item",
        "1. first step",
        "| a | b |",
        "see [this](http://x.org)",
        "visit https://example.org",
        "go to www.example.org",
    ],
)
def test_formatting_detected(text: str) -> None:
    assert contains_formatting_characters(text)
    assert contains_formatting_chars(text)


@pytest.mark.parametrize("text", ["5 * 3 is 15", "issue #4 again", "well - maybe", "I'm here for you.", "snake_case"])
def test_formatting_not_detected(text: str) -> None:
    assert not contains_formatting_characters(text)


def test_questions_pronouns_line_breaks() -> None:
    assert contains_question("Is that right?")
    assert contains_question("how are you doing today")  # ASR transcript without '?'
    assert not contains_question("I know how you feel.")
    assert contains_personal_pronouns("You did great.")
    assert not contains_personal_pronouns("The weather is nice.")
    assert not excessive_line_breaks("One line.\nTwo lines.")
    assert excessive_line_breaks("One.\nTwo.\nThree.")
    assert excessive_line_breaks("Para one.\n\nPara two.")


def test_helpful_question() -> None:
    assert contains_helpful_question("What would help you most right now?")
    assert contains_helpful_question("Tell me more about it.")
    assert contains_helpful_question("That sounds hard. Want to talk?")
    assert not contains_helpful_question("Why would anyone do that?")
    assert not contains_helpful_question("That sounds hard.")


def test_inappropriate_and_formal() -> None:
    assert inappropriate_content_detected("You should just kill yourself")
    assert inappropriate_content_detected("Shut up.")
    assert not inappropriate_content_detected("I read Dickens in class; it helped me assess things.")
    stiff = (
        "Establishing consistent nighttime routines substantially improves restorative sleep quality, "
        "particularly following prolonged occupational stress, emotional exhaustion, unresolved "
        "interpersonal conflicts."
    )
    assert too_formal_for_context(stiff)  # 19 words, no contraction, mean word length >= 5.5
    everyday = (
        "That sounds really difficult. Dealing with panic attacks is very challenging and I can see "
        "why that would be stressful for you."
    )
    assert not too_formal_for_context(everyday)


# -- properties ------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(response=st.text(max_size=400), user=st.text(max_size=200), channel=st.sampled_from(["voice", "text"]))
def test_metrics_always_in_range_and_rounded(response: str, user: str, channel: str) -> None:
    ctx = TurnContext(channel=channel)  # type: ignore[arg-type]
    scores = score_voice(Exchange("c", 1, user, response, context=ctx))
    assert list(scores) == list(METRICS)
    assert all(0.0 <= v <= 1.0 and round(v, 4) == v for v in scores.values())
