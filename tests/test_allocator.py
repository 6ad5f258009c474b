"""The worker's allocator (streams._allocator): jemalloc where installed, else glibc malloc, applied by
re-executing under the same PID; an operator's PYTHONMALLOC, MALLOC_CONF and other preloads are kept."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from streams._allocator import JEMALLOC_CONF, AllocatorError, current, find_jemalloc, wanted
from streams._trim import can_trim

glibc = pytest.mark.skipif(not can_trim(), reason="needs glibc's malloc_trim")
jemalloc = pytest.mark.skipif(
    not find_jemalloc(), reason="needs jemalloc (Debian/Ubuntu: libjemalloc2; .ci/run installs it)"
)
LIB = "libjemalloc.so.2"
NONE = ""  # ``jemalloc=""``: as on a machine without the library


def _alloc(env: dict[str, str] | None) -> dict[str, str | None] | None:
    keys = ("PYTHONMALLOC", "LD_PRELOAD", "MALLOC_CONF")
    return None if env is None else {k: env.get(k) for k in keys}


def test_the_default_is_jemalloc_where_installed() -> None:
    env = wanted(None, {"PATH": "/bin"}, jemalloc=LIB)
    assert _alloc(env) == {"PYTHONMALLOC": "malloc", "LD_PRELOAD": LIB, "MALLOC_CONF": JEMALLOC_CONF}
    assert env is not None and env["PATH"] == "/bin" and current(env) == "jemalloc"
    assert wanted(None, env, jemalloc=LIB) is None  # after the re-exec: no second one


@glibc
def test_without_jemalloc_the_default_is_glibc_malloc() -> None:
    assert _alloc(wanted(None, {}, jemalloc=NONE)) == {
        "PYTHONMALLOC": "malloc",
        "LD_PRELOAD": None,
        "MALLOC_CONF": None,
    }
    assert wanted(None, {"PYTHONMALLOC": "malloc"}, jemalloc=NONE) is None


def test_an_operators_settings_are_kept() -> None:
    assert wanted(None, {"PYTHONMALLOC": "pymalloc_debug"}, jemalloc=LIB) is None  # explicit: no change at all
    env = wanted(None, {"MALLOC_CONF": "narenas:2", "LD_PRELOAD": "/opt/libfoo.so"}, jemalloc=LIB)
    assert _alloc(env) == {"PYTHONMALLOC": "malloc", "LD_PRELOAD": f"{LIB} /opt/libfoo.so", "MALLOC_CONF": "narenas:2"}
    own = wanted(None, {"LD_PRELOAD": "/opt/lib/libjemalloc.so.2"}, jemalloc=LIB)  # their jemalloc, not ours
    assert own is not None and own["LD_PRELOAD"] == "/opt/lib/libjemalloc.so.2"


def test_an_explicit_choice_is_applied_unless_already_in_effect() -> None:
    on_je = {"PYTHONMALLOC": "malloc", "LD_PRELOAD": f"{LIB}:/opt/libfoo.so"}
    assert current(on_je) == "jemalloc"
    assert _alloc(wanted("malloc", on_je, jemalloc=LIB)) == {
        "PYTHONMALLOC": "malloc",
        "LD_PRELOAD": "/opt/libfoo.so",  # jemalloc dropped, the other preload kept
        "MALLOC_CONF": None,
    }
    assert _alloc(wanted("pymalloc", {"PYTHONMALLOC": "malloc", "LD_PRELOAD": LIB}, jemalloc=LIB)) == {
        "PYTHONMALLOC": "pymalloc",
        "LD_PRELOAD": None,
        "MALLOC_CONF": None,
    }
    assert wanted("pymalloc", {"PYTHONMALLOC": "pymalloc"}, jemalloc=LIB) is None
    assert wanted("jemalloc", on_je, jemalloc=LIB) is None
    assert current(wanted("jemalloc", {"PYTHONMALLOC": "pymalloc"}, jemalloc=LIB) or {}) == "jemalloc"


def test_jemalloc_asked_for_but_missing_is_an_error_not_a_fallback() -> None:
    with pytest.raises(AllocatorError, match="libjemalloc2"):
        wanted("jemalloc", {}, jemalloc=NONE)


def _run(code: str, env: dict[str, str], *args: str) -> list[str]:
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


REEXEC = (
    "import os, sys\n"
    "from streams._trim import on_jemalloc\n"
    "print(os.getpid(), os.environ.get('PYTHONMALLOC', '-'), on_jemalloc(), flush=True)\n"
    "from streams._allocator import reexec_with\n"
    "reexec_with(sys.argv[1] if len(sys.argv) > 1 else None)\n"
    "print(os.getpid(), os.environ.get('PYTHONMALLOC', '-'), on_jemalloc())\n"
)
CLEAN = {k: v for k, v in os.environ.items() if k not in ("PYTHONMALLOC", "LD_PRELOAD", "MALLOC_CONF")}


@glibc
def test_the_process_reexecutes_itself_once_with_the_same_pid() -> None:
    je = str(bool(find_jemalloc()))
    out = _run(REEXEC, CLEAN)
    # before the exec; after it (the code runs again from the top, then past the call)
    pid = out[0]
    assert out == [pid, "-", "False", pid, "malloc", je, pid, "malloc", je]
    kept = _run(REEXEC, {**CLEAN, "PYTHONMALLOC": "pymalloc"})  # set by the operator: no re-exec
    assert kept == [kept[0], "pymalloc", "False", kept[0], "pymalloc", "False"]
    switched = _run(REEXEC, {**CLEAN, "PYTHONMALLOC": "malloc"}, "pymalloc")  # --allocator pymalloc: applied
    assert switched[3:] == [switched[0], "pymalloc", "False", switched[0], "pymalloc", "False"]


@jemalloc
def test_on_jemalloc_the_trim_purges_and_hands_memory_back() -> None:
    code = (
        "import re, sys\n"
        "from streams._allocator import reexec_with\n"
        "reexec_with('jemalloc')\n"
        "from streams._trim import _malloc_trim, allocator_stats, on_jemalloc\n"
        "rss = lambda: int(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024\n"
        "x = [str(i) * 20 for i in range(1_000_000)]\n"
        "peak, live = rss(), allocator_stats()['allocated'] // 2**20\n"
        "del x\n"
        "freed = [v // 2**20 for k, v in allocator_stats().items() if k in ('allocated', 'active')]\n"
        "print(on_jemalloc(), _malloc_trim()(0), peak, rss(), live, *freed)\n"
    )
    env = {**CLEAN, "MALLOC_CONF": "dirty_decay_ms:-1"}  # no decay: only the purge hands pages back
    on, rc, peak, after, live, live_after, active_after = _run(code, env)
    assert (on, rc) == ("True", "0")
    assert int(peak) - int(after) > 100, (peak, after)  # ~150 MB of strings freed and purged
    assert int(live) - int(live_after) > 100 and int(live_after) <= int(active_after)  # the stats follow


def test_no_allocator_stats_off_jemalloc() -> None:
    from streams._trim import allocator_stats, on_jemalloc

    assert (allocator_stats() is None) == (not on_jemalloc())


def test_the_worker_command_offers_the_choice() -> None:
    from attune.cli import build_parser

    args = build_parser().parse_args(["worker", "--allocator", "jemalloc"])
    assert args.allocator == "jemalloc"
    assert build_parser().parse_args(["worker"]).allocator is None
