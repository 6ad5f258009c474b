"""The worker's memory allocator: jemalloc where installed, else glibc ``malloc``, chosen by re-executing.

Why: after a burst, a worker on pymalloc keeps most of its peak. An arena (1 MiB) goes back to the OS only
when every object in it is freed, and the few thousand small objects that outlive a burst (caches, Faust's
and aiokafka's own bookkeeping) are scattered over most arenas. With ``PYTHONMALLOC=malloc`` every object
goes to the C allocator. On glibc ``malloc_trim(0)`` (``streams._trim``) then returns free pages, but the
survivors still pin pages all over the heap. jemalloc (preloaded, Debian/Ubuntu package ``libjemalloc2``)
packs small objects into per-size slabs and allocates from the lowest-addressed slab that has room, so what
outlives a burst gathers into few slabs and the rest are purged. ``bench/burst_bench.py --turns 200000
--bursts 2`` (10,000 open conversations, all closed and their tombstones expired, twice): RSS after expiry
166-210 MB on pymalloc, 103-112 MB on glibc malloc, 88-90 MB on jemalloc, from 80-82 MB before the burst
(docs/benchmarks.md, "2026-11-26 (evening): jemalloc").

The allocator is fixed when the process starts (``PYTHONMALLOC`` is read before any Python code runs, and a
preloaded library must be in place before the first ``malloc``), so ``attune worker`` re-executes itself
once with the environment set: same PID, same arguments, so a supervisor, a PID file or a signal sent to it
is unaffected. Its children (the alert path) inherit the environment. An explicit ``PYTHONMALLOC`` in the
environment is left as it is, and so is an operator's ``MALLOC_CONF``; without jemalloc and without glibc's
``malloc_trim`` pymalloc stays.
"""

from __future__ import annotations

import ctypes.util
import logging
import os
import sys
from collections.abc import Mapping

from ._trim import can_trim, on_jemalloc

log = logging.getLogger("attune.streams")

ENV = "PYTHONMALLOC"
#: ``--allocator`` values.
CHOICES = ("jemalloc", "malloc", "pymalloc")
#: jemalloc's settings for the worker unless ``MALLOC_CONF`` is set: a background thread purges pages unused for
#: a second (no muzzy stage: purged pages leave the RSS at once), and one arena, since the worker allocates
#: from one thread. Measured against the defaults (8 arenas here): 88-89 vs 90-91 MB after expiry, inside the
#: run-to-run spread; one arena is kept for the smaller number of partly used slabs it can leave.
JEMALLOC_CONF = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:1"


class AllocatorError(RuntimeError):
    """An allocator was asked for that this machine does not have."""


def find_jemalloc() -> str | None:
    """The jemalloc shared library the dynamic loader knows (e.g. ``libjemalloc.so.2``), or None."""
    return ctypes.util.find_library("jemalloc")


def _preloads(environ: Mapping[str, str]) -> list[str]:
    return [p for p in environ.get("LD_PRELOAD", "").replace(":", " ").split() if p]


def _is_jemalloc(path: str) -> bool:
    return os.path.basename(path).startswith("libjemalloc")


def current(environ: Mapping[str, str]) -> str:
    """The allocator an environment gives a Python process: one of ``CHOICES`` or ``PYTHONMALLOC``'s value."""
    mode = environ.get(ENV, "pymalloc")
    if mode == "malloc" and any(_is_jemalloc(p) for p in _preloads(environ)):
        return "jemalloc"
    return mode


def running() -> str:
    """The allocator this process runs on, as observed (a preload that failed to load is not counted)."""
    if on_jemalloc():
        return "jemalloc"
    return os.environ.get(ENV, "pymalloc")


def wanted(
    choice: str | None, environ: Mapping[str, str] = os.environ, jemalloc: str | None = None
) -> dict[str, str] | None:
    """The environment to re-execute with, or None to run on as this process is.

    ``choice`` None (the default) means jemalloc where ``jemalloc`` (the library, default: looked up) exists,
    else glibc malloc where it can trim, unless ``PYTHONMALLOC`` is already set. An explicit choice is applied
    unless the environment already gives exactly that; ``jemalloc`` asked for but missing raises."""
    if choice is None and ENV in environ:
        return None
    preloaded = [p for p in _preloads(environ) if _is_jemalloc(p)]  # an operator's own jemalloc is kept
    lib = preloaded[0] if preloaded else None
    if lib is None and choice in (None, "jemalloc"):  # looked up (ldconfig) only when it can matter
        lib = jemalloc if jemalloc is not None else find_jemalloc()
    if choice is None:
        choice = "jemalloc" if lib else "malloc" if can_trim() else None
        if choice is None:
            return None
    if current(environ) == choice:
        return None
    env = dict(environ)
    kept = [p for p in _preloads(environ) if not _is_jemalloc(p)]
    if choice == "jemalloc":
        if not lib:
            raise AllocatorError(
                "--allocator jemalloc: no jemalloc library found (Debian/Ubuntu: apt-get install libjemalloc2)"
            )
        kept.insert(0, lib)
        env.setdefault("MALLOC_CONF", JEMALLOC_CONF)
    if kept:
        env["LD_PRELOAD"] = " ".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    env[ENV] = "pymalloc" if choice == "pymalloc" else "malloc"
    return env


def reexec_with(choice: str | None) -> None:
    """Re-execute this process with the allocator ``choice`` if it does not run with it already.

    Returns only when no re-execution is needed or it failed (then the worker runs on, and says so).
    Raises ``AllocatorError`` for an explicit choice this machine cannot give."""
    env = wanted(choice)
    if env is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    except OSError as e:  # e.g. the interpreter's file is gone after an upgrade: run on, with pymalloc
        log.warning("could not restart with the %s allocator (%s); running with the default", current(env), e)
