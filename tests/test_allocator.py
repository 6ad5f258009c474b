"""The worker's allocator: ``PYTHONMALLOC=malloc`` by default on glibc, applied by re-executing (same PID)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from streams._allocator import wanted
from streams._trim import can_trim

glibc = pytest.mark.skipif(not can_trim(), reason="needs glibc's malloc_trim")


@glibc
def test_the_default_is_malloc_unless_the_environment_says_otherwise() -> None:
    assert wanted(None, {}) == "malloc"
    assert wanted(None, {"PYTHONMALLOC": "malloc"}) is None
    assert wanted(None, {"PYTHONMALLOC": "pymalloc_debug"}) is None  # an operator's explicit choice is kept


def test_an_explicit_choice_is_applied_unless_already_in_effect() -> None:
    assert wanted("pymalloc", {}) == "pymalloc"
    assert wanted("pymalloc", {"PYTHONMALLOC": "malloc"}) == "pymalloc"
    assert wanted("pymalloc", {"PYTHONMALLOC": "pymalloc"}) is None
    assert wanted("malloc", {"PYTHONMALLOC": "pymalloc"}) == "malloc"


def _run(code: str, env: dict[str, str], *args: str) -> list[str]:
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


@glibc
def test_the_process_reexecutes_itself_once_with_the_same_pid() -> None:
    code = (
        "import os, sys\n"
        "print(os.getpid(), os.environ.get('PYTHONMALLOC', '-'), flush=True)\n"
        "from streams._allocator import reexec_with\n"
        "reexec_with(sys.argv[1] if len(sys.argv) > 1 else None)\n"
        "print(os.getpid(), os.environ.get('PYTHONMALLOC', '-'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"}
    out = _run(code, env)
    # before the exec; after it (the code runs again from the top, then past the call)
    pid = out[0]
    assert out == [pid, "-", pid, "malloc", pid, "malloc"]
    kept = _run(code, {**env, "PYTHONMALLOC": "pymalloc"})  # set by the operator: no re-exec
    assert kept == [kept[0], "pymalloc", kept[0], "pymalloc"]
    switched = _run(code, {**env, "PYTHONMALLOC": "malloc"}, "pymalloc")  # --allocator pymalloc: applied
    assert switched == [switched[0], "malloc", switched[0], "pymalloc", switched[0], "pymalloc"]


def test_the_worker_command_offers_the_choice() -> None:
    from attune.cli import build_parser

    args = build_parser().parse_args(["worker", "--allocator", "pymalloc"])
    assert args.allocator == "pymalloc"
    assert build_parser().parse_args(["worker"]).allocator is None
