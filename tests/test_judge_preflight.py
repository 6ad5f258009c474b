"""A judge configuration that cannot work stops the run before any work, and pages nobody (issue #13, 3)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from attune.cli import main
from attune.testing.fake_judge import FakeJudgeServer
from scorers.judges import JudgeConfigError, active_routes, load_config

ROOT = Path(__file__).resolve().parents[1]

CONV = {
    "conversation_id": "c1",
    "turns": [
        {"role": "user", "text": "I want to kill myself tonight."},
        {"role": "assistant", "text": "I hear you."},
    ],
}


@pytest.fixture
def server() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer.in_thread(models={"judge-1", "judge-2"}) as srv:
        yield srv


def _run(tmp_path: Path, srv: FakeJudgeServer, kind: str, judge: str, env_line: str = "") -> tuple[int, Path]:
    cfg = tmp_path / "judges.toml"
    base = srv.anthropic_base_url if kind == "anthropic" else srv.openai_base_url
    cfg.write_text(f'[providers.fake]\nkind = "{kind}"\nbase_url = "{base}"\n{env_line}\n')
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(CONV) + "\n")
    out = tmp_path / "out.jsonl"
    code = main(["evaluate", str(src), "--out", str(out), "--judge", judge, "--judge-config", str(cfg), "--quiet"])
    return code, out


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_missing_key_exits_non_zero_before_any_work_and_sends_no_alert(
    tmp_path: Path, server: FakeJudgeServer, kind: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.delenv("ATTUNE_TEST_NO_SUCH_KEY", raising=False)
    code, out = _run(tmp_path, server, kind, "fake:judge-1", 'api_key_env = "ATTUNE_TEST_NO_SUCH_KEY"')
    err = capsys.readouterr().err
    assert code == 2
    assert "ATTUNE_TEST_NO_SUCH_KEY" in err and "checklist" in err
    assert not out.exists()  # no records at all, so no alert of any kind
    assert server.model_calls == 0


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_unknown_model_exits_non_zero_naming_it(
    tmp_path: Path, server: FakeJudgeServer, kind: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("ATTUNE_TEST_KEY", "sk-test")
    code, out = _run(tmp_path, server, kind, "fake:gpt-nonexistent", 'api_key_env = "ATTUNE_TEST_KEY"')
    err = capsys.readouterr().err
    assert code == 2 and "gpt-nonexistent" in err and "judge-1" in err
    assert not out.exists() and server.model_calls == 0


def test_known_model_runs(tmp_path: Path, server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_TEST_KEY", "sk-test")
    code, out = _run(tmp_path, server, "openai", "fake:judge-2", 'api_key_env = "ATTUNE_TEST_KEY"')
    assert code == 0 and out.exists() and server.model_calls > 0


def test_a_server_without_a_model_list_is_a_warning_not_a_failure(tmp_path: Path, capsys) -> None:
    with FakeJudgeServer.in_thread() as srv:  # models=None: GET /v1/models answers 404
        code, _ = _run(tmp_path, srv, "openai_compatible", "fake:anything")
    assert code == 0
    assert "models not verified" in capsys.readouterr().err


def test_active_routes_are_what_a_run_calls() -> None:
    cfg = load_config(None)
    routes = active_routes(cfg, ["turn_rubric", "relevance"])
    assert set(routes) == {"turn_rubric", "checklist", "crisis_screen"}  # relevance is local embeddings
    assert issubclass(JudgeConfigError, ValueError)


def test_worker_with_a_missing_key_exits_before_starting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.delenv("ATTUNE_TEST_NO_SUCH_KEY", raising=False)
    cfg = tmp_path / "judges.toml"
    cfg.write_text(
        '[providers.fake]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "ATTUNE_TEST_NO_SUCH_KEY"\n'
    )
    # no broker at all: the check must fail before the worker tries to reach one
    code = main(["worker", "--broker", "kafka://127.0.0.1:9", "--judge", "fake:m", "--judge-config", str(cfg)])
    assert code == 2 and "ATTUNE_TEST_NO_SUCH_KEY" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["evaluate", "worker"])
def test_judge_without_the_judges_extra_names_the_extra(tmp_path: Path, command: str) -> None:
    """The provider SDKs made unimportable (as without ``attune[judges]``): exit 2 and a one-line fix, no traceback."""
    import subprocess
    import sys

    args = (
        ["evaluate", str(ROOT / "streams" / "samples" / "conversations.jsonl"), "--out", str(tmp_path / "o")]
        if command == "evaluate"
        else ["worker", "--broker", "kafka://127.0.0.1:9"]
    )
    code = (
        "import sys; sys.modules['openai'] = sys.modules['anthropic'] = None\n"
        "from attune.cli import main\n"
        f"sys.exit(main({[*args, '--judge', 'openai:gpt-4o-mini']!r}))"
    )
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 2, res.stderr
    assert "pip install 'attune[judges]'" in res.stderr and "Traceback" not in res.stderr, res.stderr
