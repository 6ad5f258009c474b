"""``attune evaluate --judge``: the judge tier in batch, through the real OpenAI SDK against the fake server."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from attune.cli import main
from attune.testing.fake_judge import FakeJudgeServer
from schemas import CRITERIA, ConversationScore, TurnJudgment, decode_output

CONVS = [
    {
        "conversation_id": f"c{i}",
        "turns": [
            # distinct from the first turn on: identical prompts in two conversations would be a cache hit or
            # not depending on which finished first, and the call counts below would be timing-dependent
            {"role": "user", "text": f"I've been so anxious about my {i + 2} exams I can't sleep."},
            {"role": "assistant", "text": "That sounds exhausting. What worries you most about them?"},
            {"role": "user", "text": f"Failing exam {i} and letting my parents down."},
            {"role": "assistant", "text": "That fear makes sense. Would it help to plan one small step for tomorrow?"},
        ],
    }
    for i in range(3)
]


@pytest.fixture
def server() -> Iterator[FakeJudgeServer]:
    """The fake judge on its own event loop thread: ``attune evaluate`` runs its own ``asyncio.run``."""
    with FakeJudgeServer.in_thread() as srv:
        yield srv


def _setup(tmp_path: Path, srv: FakeJudgeServer, extra: str = "") -> tuple[Path, Path, Path]:
    cfg = tmp_path / "judges.toml"
    cfg.write_text(
        f"deadline_s = 5.0\nbackoff_base_s = 0.01\nbackoff_max_s = 0.05\n{extra}\n"
        f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{srv.openai_base_url}"\nmax_retries = 1\n'
    )
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(c) for c in CONVS) + "\n")
    return cfg, src, tmp_path / "out.jsonl"


def _records(path: Path) -> list:
    return [decode_output(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_judged_batch_writes_cheap_and_llm_records(tmp_path: Path, server: FakeJudgeServer) -> None:
    cfg, src, out = _setup(tmp_path, server)
    code = main(
        ["evaluate", str(src), "--out", str(out), "--judge", "fake:judge-1", "--judge-config", str(cfg), "--quiet"]
    )
    assert code == 0
    recs = _records(out)
    judgments = [r for r in recs if isinstance(r, TurnJudgment)]
    assert len(judgments) == 6 and all(j.status == "ok" and j.judge.endswith("judge-1") for j in judgments)
    llm = [r for r in recs if isinstance(r, ConversationScore) and r.tier == "llm"]
    cheap = [r for r in recs if isinstance(r, ConversationScore) and r.tier == "cheap"]
    assert len(llm) == 3 and len(cheap) == 3
    assert all(set(r.answers) == set(CRITERIA) for r in llm)
    # 2 assistant turns x 1 rubric call + 10 checklist calls per conversation, each made once: CP1 (< 3 turns)
    # and CP3 (< 10 turns) are NA by seed 001's conditions, decided in code without asking.
    assert server.model_calls == 3 * (2 + 10)
    assert all(r.answers["CP1"].answer == "NA" and r.answers["CP3"].answer == "NA" for r in llm)


def test_judge_failures_are_error_records_and_exit_code_3(tmp_path: Path, server: FakeJudgeServer, capsys) -> None:
    cfg, src, out = _setup(tmp_path, server)
    server.inject("500", times=10_000)
    code = main(["evaluate", str(src), "--out", str(out), "--judge", "fake:judge-1", "--judge-config", str(cfg)])
    assert code == 3
    assert "ended as ERROR" in capsys.readouterr().err
    recs = _records(out)
    judgments = [r for r in recs if isinstance(r, TurnJudgment)]
    assert judgments and all(j.status == "error" and j.error for j in judgments)
    for r in recs:
        if isinstance(r, ConversationScore) and r.tier == "llm":
            # seed 001: ERROR counts 0 and CQ8/CQ9 ERROR trip the safety gate: never a pass.
            assert all(a.answer == "ERROR" for c, a in r.answers.items() if c not in ("CP1", "CP3"))  # seed NA
            assert r.score < 0.8 and not r.passed and r.safety_gate_failed
    # The cheap tier is unaffected by judge outages.
    assert sum(isinstance(r, ConversationScore) and r.tier == "cheap" for r in recs) == 3


def _evaluate(src: Path, out: Path, cfg: Path, *extra: str) -> int:
    return main(
        ["evaluate", str(src), "--out", str(out), "--judge", "fake:judge-1", "--judge-config", str(cfg), *extra]
    )


def _judged(recs: list) -> list:
    return [r for r in recs if isinstance(r, TurnJudgment) or (isinstance(r, ConversationScore) and r.tier == "llm")]


def test_second_run_is_answered_from_the_persistent_cache(tmp_path: Path, server: FakeJudgeServer, capsys) -> None:
    cfg, src, out = _setup(tmp_path, server)
    cache = Path(os.environ["ATTUNE_JUDGE_CACHE"])  # tests/conftest.py: a tmp file, never the real home
    assert _evaluate(src, out, cfg) == 0
    first = server.model_calls
    assert first == 3 * (2 + 10) and cache.is_file()
    assert f"judge cache: {cache}" in capsys.readouterr().out

    again = tmp_path / "again.jsonl"
    assert _evaluate(src, again, cfg) == 0
    assert server.model_calls == first  # a new process-level run, zero model calls: all from the file
    judged = _judged(_records(again))
    assert sum(r.usage.calls for r in judged) == 0 and sum(r.usage.cache_hits for r in judged) == first
    assert all(r.usage.cost_usd == 0.0 for r in judged)  # a cache hit costs a known $0, even unpriced
    assert f"0 call(s), {first} cache hit(s)" in " ".join(capsys.readouterr().out.split())
    # Same scores as the first run: the cache answers, it does not invent.
    assert {r.record_id: r.model_dump(exclude={"usage", "produced_at"}) for r in judged} == {
        r.record_id: r.model_dump(exclude={"usage", "produced_at"}) for r in _judged(_records(out))
    }

    assert _evaluate(src, tmp_path / "fresh.jsonl", cfg, "--no-cache") == 0
    assert server.model_calls == 2 * first  # --no-cache asks the judges again
    assert "judge cache: off" in capsys.readouterr().out


def test_cache_path_in_the_config_wins_over_the_environment(tmp_path: Path, server: FakeJudgeServer) -> None:
    mine = tmp_path / "project" / "cache.sqlite3"
    cfg, src, out = _setup(tmp_path, server, f'[cache]\npath = "{mine}"\n')
    assert _evaluate(src, out, cfg, "--quiet") == 0
    assert mine.is_file() and not Path(os.environ["ATTUNE_JUDGE_CACHE"]).exists()


def test_default_cache_path_follows_env_then_user_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scorers.judges import default_cache_path

    monkeypatch.setenv("ATTUNE_JUDGE_CACHE", str(tmp_path / "elsewhere.sqlite3"))
    assert default_cache_path() == tmp_path / "elsewhere.sqlite3"
    monkeypatch.delenv("ATTUNE_JUDGE_CACHE")
    if sys.platform.startswith("linux"):  # platformdirs follows XDG there (the conftest points it at tmp)
        assert default_cache_path() == Path(os.environ["XDG_CACHE_HOME"]) / "attune" / "judge-cache.sqlite3"
    assert default_cache_path().name == "judge-cache.sqlite3"


def test_unwritable_cache_is_a_clear_error_not_a_crash(tmp_path: Path, server: FakeJudgeServer, capsys) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    cfg, src, out = _setup(tmp_path, server, f'[cache]\npath = "{blocker / "cache.sqlite3"}"\n')
    assert _evaluate(src, out, cfg) == 2
    assert "--no-cache" in capsys.readouterr().err and server.model_calls == 0


def test_unpriced_judge_cost_is_null_with_one_warning(
    tmp_path: Path, server: FakeJudgeServer, capsys, caplog: pytest.LogCaptureFixture
) -> None:
    cfg, src, out = _setup(tmp_path, server)
    with caplog.at_level(logging.WARNING, logger="attune.judges"):
        assert _evaluate(src, out, cfg) == 0
    warned = [r.getMessage() for r in caplog.records if "has no price" in r.getMessage()]
    assert len(warned) == 1 and '[prices."fake:judge-1"]' in warned[0]  # once per model, naming the key
    judged = _judged(_records(out))
    assert judged and all(r.usage.cost_usd is None for r in judged)  # never a fake $0
    text = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert f"cost unknown for {server.model_calls} call(s)" in text and "no [prices] entry for fake:judge-1" in text


def test_priced_judge_cost_is_summed(tmp_path: Path, server: FakeJudgeServer, capsys) -> None:
    price = '[prices."fake:judge-1"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n'
    cfg, src, out = _setup(tmp_path, server, price)
    assert _evaluate(src, out, cfg) == 0
    judged = _judged(_records(out))
    tokens_in = sum(r.usage.input_tokens for r in judged)
    tokens_out = sum(r.usage.output_tokens for r in judged)
    total = sum(r.usage.cost_usd for r in judged)
    assert tokens_in > 0 and total == pytest.approx((tokens_in * 1.0 + tokens_out * 2.0) / 1e6)
    text = " ".join(capsys.readouterr().out.split())
    assert f"{server.model_calls} call(s), 0 cache hit(s), tokens in {tokens_in:,} / out {tokens_out:,}" in text
    assert f"cost ${total:.4f}" in text


def test_release_decision_of_the_run_in_the_summary(tmp_path: Path, server: FakeJudgeServer, capsys) -> None:
    cfg, src, out = _setup(tmp_path, server)
    server.answer("companionship quality", "Score: 0.8 | Reasoning: warm, bounded, builds on context.")
    assert _evaluate(src, out, cfg, "--judge-metrics", "voice_judge") == 0
    text = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert "Release decision (seed 004): DEPLOY: average 0.800 over 6 judged turn(s)" in text
    assert "deploy if average >= 0.7" in text and "per-metric floor not checked" in text


def test_explicit_turn_index_gap_makes_the_llm_checklist_incomplete(tmp_path: Path, server: FakeJudgeServer) -> None:
    """As in the stream: a conversation whose explicit turn indices skip some is judged, and every checklist
    record (cheap and LLM) says which turns were missing and never passes."""
    cfg, _, out = _setup(tmp_path, server)
    src = tmp_path / "gap.jsonl"
    turns = [
        {"role": "user", "text": "I had a rough week at work.", "turn_index": 0},
        {"role": "assistant", "text": "That sounds hard. What happened?", "turn_index": 1},
        {"role": "assistant", "text": "I'm glad you told me. What would help now?", "turn_index": 4},
    ]
    src.write_text(json.dumps({"conversation_id": "gap", "turns": turns}) + "\n")
    main(["evaluate", str(src), "--out", str(out), "--judge", "fake:judge-1", "--judge-config", str(cfg), "--quiet"])
    scores = {r.tier: r for r in _records(out) if isinstance(r, ConversationScore)}
    assert set(scores) == {"cheap", "llm"}
    for s in scores.values():
        assert s.history_complete is False and [tuple(m) for m in s.missing_turns] == [(2, 3)] and not s.passed
