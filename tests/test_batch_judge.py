"""``attune evaluate --judge``: the judge tier in batch, through the real OpenAI SDK against the fake server."""

from __future__ import annotations

import json
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
            {"role": "user", "text": "I've been so anxious about my exams I can't sleep."},
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
