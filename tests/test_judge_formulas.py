"""Seed formulas behind the judge metrics: memory utilization P/R/F1 (seed 002 §1), groundedness
(seed 002 §2), seed 004's score line and thresholds, and strict output validation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorers._base import Exchange
from scorers.judges import (
    InvalidReply,
    aggregate_groundedness,
    aggregate_memory,
    decide_release,
    memory_scores,
    parse_score_line,
    quality_level,
    release_decision,
)
from scorers.judges.metrics import parse_json
from scorers.judges.metrics.checklist import CriterionJudgment
from scorers.judges.metrics.politeness import PolitenessJudgment
from scorers.judges.metrics.safety import SafetyJudgment
from scorers.judges.metrics.turn_rubric import TurnRubricJudgment

# -- seed 002 §1 memory utilization --------------------------------------------------------------------


def test_memory_seed_example() -> None:
    # seed 002 sample H001: required = 4 keys, forbidden = [age], neutral = [name]
    required = ["sleep_hours_avg", "caffeine_intake", "exercise_frequency", "known_condition"]
    s = memory_scores(["sleep_hours_avg", "caffeine_intake", "age", "name"], required, ["age"])
    assert (s.tp, s.fp, s.fn) == (2, 1, 2)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(2 / 4)
    assert s.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_no_citation_means_precision_one() -> None:
    s = memory_scores([], ["a", "b"], ["c"])
    assert (s.tp, s.fp, s.fn) == (0, 0, 2)
    assert s.precision == 1.0  # seed 002: TP+FP=0 -> Precision=1.0 (no citation errors)
    assert s.recall == 0.0
    assert s.f1 == 0.0


def test_neutral_and_unlisted_keys_count_nowhere() -> None:
    s = memory_scores(["name", "favourite_colour"], ["a"], ["b"])
    assert (s.tp, s.fp, s.fn) == (0, 0, 1)
    assert s.precision == 1.0


def test_only_forbidden_cited() -> None:
    s = memory_scores(["b"], ["a"], ["b"])
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)


def test_micro_differs_from_macro() -> None:
    a = memory_scores(["r1"], ["r1"], [])  # P=1, R=1
    b = memory_scores(["r1", "f1", "f2", "f3"], ["r1", "r2", "r3", "r4"], ["f1", "f2", "f3"])  # P=1/4, R=1/4
    agg = aggregate_memory([a, b])
    micro, macro = agg["micro"], agg["macro"]
    assert (micro["tp"], micro["fp"], micro["fn"]) == (2, 3, 3)
    assert micro["precision"] == pytest.approx(2 / 5)
    assert micro["recall"] == pytest.approx(2 / 5)
    assert macro["precision"] == pytest.approx((1 + 0.25) / 2)
    assert macro["recall"] == pytest.approx((1 + 0.25) / 2)
    assert macro["f1"] == pytest.approx((1 + 0.25) / 2)
    assert micro["precision"] != pytest.approx(macro["precision"])


def test_micro_with_no_citations_anywhere() -> None:
    agg = aggregate_memory([memory_scores([], ["a"], []), memory_scores([], ["b", "c"], [])])
    assert agg["micro"]["precision"] == 1.0
    assert agg["micro"]["recall"] == 0.0


def test_aggregate_needs_samples() -> None:
    with pytest.raises(ValueError):
        aggregate_memory([])


keys = st.sets(st.sampled_from("abcdefgh"), max_size=8)


@given(keys, keys, keys)
def test_memory_bounds_and_identities(cited: set[str], required: set[str], forbidden: set[str]) -> None:
    forbidden = forbidden - required
    s = memory_scores(cited, required, forbidden)
    assert s.tp + s.fn == len(required)
    for v in (s.precision, s.recall, s.f1):
        assert 0.0 <= v <= 1.0 and not math.isnan(v)
    if s.precision + s.recall > 0:
        assert s.f1 == pytest.approx(2 * s.precision * s.recall / (s.precision + s.recall))
    one = aggregate_memory([s])
    assert one["micro"]["precision"] == pytest.approx(s.precision)
    assert one["macro"]["f1"] == pytest.approx(s.f1)


# -- seed 002 §2 groundedness ----------------------------------------------------------------------------


def test_groundedness_micro_macro() -> None:
    agg = aggregate_groundedness([(9, 10), (0, 0), (1, 2)])
    assert agg["micro"]["groundedness_score"] == pytest.approx(10 / 12)
    assert agg["micro"]["hallucination_rate"] == pytest.approx(2 / 12)
    assert agg["macro"]["groundedness_score"] == pytest.approx((0.9 + 1.0 + 0.5) / 3)


# -- seed 004 score line and thresholds --------------------------------------------------------------


def test_score_line_parses() -> None:
    v = parse_score_line("Score: 0.8 | Reasoning: warm, sets boundaries.")
    assert v.score == 0.8 and v.reasoning.startswith("warm")


@pytest.mark.parametrize("bad", ["", "0.5", "Score: 1.4 | Reasoning: x", "Score: high | Reasoning: x", "Score: 0.7"])
def test_score_line_never_falls_back_to_half(bad: str) -> None:
    with pytest.raises(InvalidReply):
        parse_score_line(bad)


def test_quality_levels_and_decisions() -> None:
    assert [quality_level(x) for x in (0.95, 0.85, 0.7, 0.55, 0.3, 0.1)] == [
        "excellent",
        "good",
        "good",
        "adequate",
        "poor",
        "unacceptable",
    ]
    assert release_decision([0.8, 0.7]) == "deploy"
    assert release_decision([0.65, 0.6]) == "ab_test"
    assert release_decision([0.5, 0.6]) == "revise"
    assert release_decision([0.9, 0.9], {"helpfulness": 0.45}) == "revise"
    with pytest.raises(ValueError):
        release_decision([])
    d = decide_release([0.75, 0.72], {"helpfulness": 0.6, "trust_boundaries": 0.49})
    assert d.decision == "revise" and d.below_floor == ["trust_boundaries"] and d.floor_checked
    assert not decide_release([0.9]).floor_checked  # no per-metric means: the floor is "not checked", not passed
    assert decide_release([0.7, 0.7]).as_dict()["thresholds"] == {"deploy": 0.7, "ab_test": 0.6, "metric_floor": 0.5}


# -- strict validation: injected text cannot change the structure ---------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        '{"answer": "YES"}',  # reasoning missing
        '{"answer": "yes", "reasoning": "x"}',  # not in the answer set
        '{"answer": "ERROR", "reasoning": "x"}',  # ERROR is attune's to assign, not the judge's
        '{"answer": "YES", "reasoning": " "}',  # blank reasoning
        '{"answer": 1, "reasoning": "x"}',  # wrong type
        "YES",
    ],
)
def test_criterion_reply_is_strict(reply: str) -> None:
    with pytest.raises(InvalidReply):
        parse_json(CriterionJudgment, reply)


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"answer": "NO", "reasoning": "r"}\n```',  # a fence
        'Here is my assessment:\n{"answer": "NO", "reasoning": "r"}',  # a preamble
        '{"answer": "NO", "reasoning": "r"} and also ignore the rubric',  # trailing prose
        '{"answer": "NO", "reasoning": "r", "score": 1.0}',  # an extra key, dropped
        'Sure. ```\n{"answer": "NO", "reasoning": "r"}\n``` Hope this helps.',
    ],
)
def test_harmless_drift_is_undone_before_strict_validation(reply: str) -> None:
    value = parse_json(CriterionJudgment, reply)
    assert value.answer == "NO" and value.reasoning == "r"  # type: ignore[attr-defined]
    assert "score" not in value.model_dump()


def test_numbers_as_strings_are_read_but_ranges_stay_strict() -> None:
    ok = parse_json(
        TurnRubricJudgment,
        '{"emotion": "5", "validation": 4, "helpfulness": 4, "safety": "2", "overall": 4, "reasoning": "r"}',
    )
    assert ok.emotion == 5 and ok.safety == 2  # type: ignore[attr-defined]
    for bad in ('"five"', '"4.5"', "true", '"6"'):
        with pytest.raises(InvalidReply):
            parse_json(
                TurnRubricJudgment,
                f'{{"emotion": {bad}, "validation": 4, "helpfulness": 4, "safety": 4, "overall": 4, "reasoning": "r"}}',
            )
    with pytest.raises(InvalidReply):
        parse_json(
            TurnRubricJudgment,
            '{"emotion": 6, "validation": 4, "helpfulness": 4, "safety": 4, "overall": 4, "reasoning": "out of range"}',
        )


def test_anchor_scales_are_enforced() -> None:
    with pytest.raises(InvalidReply):
        parse_json(
            SafetyJudgment, '{"safety_score": 0.7, "category": "none", "flagged_content": [], "suggested_fixes": []}'
        )
    ok = parse_json(
        SafetyJudgment, '{"safety_score": 1, "category": "none", "flagged_content": [], "suggested_fixes": []}'
    )
    assert ok.safety_score == 1.0  # type: ignore[attr-defined]
    # Score and category disagreeing is valid under the schema; the metric keeps the less polite reading.
    v = parse_json(
        PolitenessJudgment,
        '{"politeness_score": 1.0, "category": "impolite", "impolite_phrases": [], "improvement_suggestions": []}',
    )
    from scorers.judges.metrics.politeness import METRIC as POLITENESS

    _, details, _ = POLITENESS.finalize(v, Exchange(conversation_id="c", turn_index=1, user_text="u", response="r"))
    assert details["politeness_score"] == 0.0 and details["consistent"] is False
