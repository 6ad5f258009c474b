"""Agreement statistics, the cheap-tier mapping, judge-error handling, and the paper's kappa table."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from attune.calibration import (
    Annotation,
    compute_agreement,
    empathy_ratings_report,
    half_of,
    load_empathy_ratings,
    raters_from,
    reproduce_kappa_table,
    weighted_kappa,
)
from attune.calibration._raters import cheap_rubric_scores, signal_to_likert, unit_to_likert
from schemas import EdgeCase, RubricRef, RubricScores, TurnJudgment, TurnScore

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "empathy-ratings"  # ../shared beside the checkout
needs_data = pytest.mark.skipif(not (DATA / "annotations" / "table_kappa.csv").exists(), reason="no empathy-ratings")
REF = RubricRef(id="t", version="1", source="seed-000")


def test_weighted_kappa_is_sklearn_on_the_full_scale() -> None:
    a, b = [1, 2, 3, 4, 5, 5, 2], [1, 3, 3, 5, 4, 5, 1]
    assert weighted_kappa(a, b, labels=(1, 2, 3, 4, 5)) == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])
    )
    # Without labels: sklearn's default (observed union), half points as ordinal labels.
    x, y = [3.0, 3.5, 4.0, 5.0], [3.0, 4.0, 4.0, 4.5]
    codes = {v: i for i, v in enumerate(sorted(set(x) | set(y)))}
    assert weighted_kappa(x, y) == pytest.approx(
        cohen_kappa_score([codes[v] for v in x], [codes[v] for v in y], weights="quadratic")
    )
    assert weighted_kappa([3], [3]) is None
    with pytest.raises(ValueError, match="not on the label scale"):
        weighted_kappa([0, 1], [1, 2], labels=(1, 2, 3, 4, 5))


def test_unit_bins_follow_seed004_quality_levels() -> None:
    assert [unit_to_likert(x) for x in (0.0, 0.29, 0.3, 0.5, 0.5 + 0.2, 0.6 + 0.1, 0.89, 0.9, 1.0)] == [
        1, 1, 2, 3, 4, 4, 4, 5, 5,
    ]  # fmt: skip
    assert [signal_to_likert(x) for x in (1.0, 1.49, 1.5, 2.5, 4.6, 5.0)] == [1, 1, 2, 3, 5, 5]


def _score(cid: str, metrics: dict[str, float], empathy: float, **kw) -> TurnScore:
    return TurnScore(
        record_id=cid, conversation_id=cid, turn_index=1, rubric=REF, channel="text", metrics=metrics,
        empathy=empathy, word_count=5, **kw,
    )  # fmt: skip


METRICS = {"emotional_intelligence": 0.8, "helpfulness": 0.55, "trust_boundaries": 0.95, "overall_quality": 0.72}


def test_cheap_mapping_edge_cases_and_flags() -> None:
    assert cheap_rubric_scores(_score("c", METRICS, 3.6)) == {
        "emotion": 4, "validation": 4, "helpfulness": 3, "safety": 5, "overall": 4,
    }  # fmt: skip
    edge = EdgeCase(
        case="bare_acknowledgement", scores=RubricScores(emotion=2, validation=2, helpfulness=1, safety=3), note="n"
    )
    mapped = cheap_rubric_scores(_score("c", METRICS, 3.6, edge_case=edge))
    assert mapped == {"emotion": 2, "validation": 2, "helpfulness": 1, "safety": 3, "overall": 4}
    assert cheap_rubric_scores(_score("c", METRICS, 3.6, flags=["diagnosis"]))["safety"] == 2


def _judgment(cid: str, status: str, emotion: int | None = None) -> TurnJudgment:
    return TurnJudgment(
        record_id=f"{cid}-{status}", conversation_id=cid, turn_index=1, metric="turn_rubric", rubric=REF,
        judge="fake:judge", status=status, scores=RubricScores(emotion=emotion) if emotion else None,
        error=None if status == "ok" else "timeout",
    )  # fmt: skip


def _ann(who: str, cid: str, score: int, dup: str | None = None) -> Annotation:
    return Annotation(
        sample_id=f"{who}{cid}{dup}", annotator_id=who, conversation_id=cid, turn_index=1, duplicate_of=dup,
        emotion=score, validation=3, helpfulness=3, safety=3, overall=score, notes="n",
    )  # fmt: skip


def test_pairs_errors_excluded_self_consistency_and_flags() -> None:
    h1 = [1, 2, 3, 4, 5, 2, 3, 4]
    h2 = [2, 2, 3, 5, 4, 1, 3, 3]
    recs: list[object] = []
    for i, (a, b) in enumerate(zip(h1, h2, strict=True)):
        recs += [_ann("h1", f"c{i}", a), _ann("h2", f"c{i}", b)]
        recs.append(_judgment(f"c{i}", "ok", emotion=a) if i < 6 else _judgment(f"c{i}", "error"))
        recs.append(_score(f"c{i}", METRICS, 1.0 + i * 0.5))
    recs += [_ann("h1", "c0", 2, dup="x"), _ann("h1", "c1", 5, dup="y")]  # one within 1 point, one not
    raters = raters_from(recs)
    assert raters["fake:judge"].errors == 2 and raters["fake:judge"].items == 6
    report = compute_agreement(raters)
    pair = next(p for p in report.pairs if p.kind == "human-human" and p.dimension == "emotion")
    assert pair.n == 8
    assert pair.kappa == pytest.approx(cohen_kappa_score(h1, h2, weights="quadratic", labels=[1, 2, 3, 4, 5]))
    assert pair.spearman == pytest.approx(spearmanr(h1, h2).statistic)
    judge = next(p for p in report.pairs if p.b == "fake:judge" and p.a == "h1" and p.dimension == "emotion")
    assert (judge.kind, judge.n, judge.kappa) == ("human-judge", 6, pytest.approx(1.0))
    assert any(p.kind == "human-cheap" for p in report.pairs)
    sc = next(s for s in report.self_consistency if s.annotator == "h1")
    assert sc.duplicate_pairs == 2 and sc.per_dimension["emotion"] == 0.5 and sc.per_dimension["safety"] == 1.0
    # validation: both humans always say 3 -> kappa undefined -> flagged, never silently "fine".
    assert report.dimensions["validation"].flagged
    assert report.dimensions["emotion"].flagged == (pair.kappa < 0.4)


@needs_data
def test_loader_joins_by_id_and_reads_multiline_records() -> None:
    epitome, ed = load_empathy_ratings(DATA)
    assert len(epitome.ids) == 50 and len(ed.ids) == 50
    assert set(epitome.ratings["gemini"]["level_explorations"]) == set(epitome.ids)  # 100 lines, 50 records
    assert all(len(epitome.dialogues[i]) == 2 for i in epitome.ids)
    assert all(any(role == "assistant" for role, _ in ed.dialogues[i]) for i in ed.ids)
    assert not any("_comma_" in text for i in ed.ids for _, text in ed.dialogues[i])
    assert {v for v in ed.ratings["crowd"]["empathy"].values()} & {3.5, 4.5}
    halves = {half_of(i) for i in epitome.ids}
    assert halves == {"A", "B"}


@needs_data
def test_paper_kappa_table_reproduced_within_rounding() -> None:
    datasets = load_empathy_ratings(DATA)
    rows, search = reproduce_kappa_table(datasets, DATA)
    assert len(rows) == 36
    assert all(r.abs_diff is not None and r.abs_diff <= 0.005 + 1e-9 and r.same_at_2dp for r in rows)
    best = min(search, key=lambda s: s["max_abs_diff"])
    assert (best["experts"], best["llm"]) == ("median", "gemini")
    assert sorted(s["max_abs_diff"] for s in search)[1] > 0.05  # the choice is not a near-tie


@needs_data
def test_cheap_tier_rows_on_both_halves() -> None:
    rep = empathy_ratings_report(DATA)
    assert rep.reproduced
    rows = [r for r in rep.cheap_tier if r.rater == "attune empathy_signal" and r.dimension == "empathy"]
    assert {r.half for r in rows} == {"A", "B", "all"}
    by = {r.half: r for r in rows}
    assert by["A"].n + by["B"].n == by["all"].n == 50 and min(by["A"].n, by["B"].n) > 10
    assert all(r.spearman is None or -1 <= r.spearman <= 1 for r in rep.cheap_tier)
