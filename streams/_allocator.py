"""The worker's memory allocator: glibc ``malloc`` instead of pymalloc, chosen by re-executing the process.

Why: after a burst, a worker on pymalloc keeps most of its peak. An arena (1 MiB) goes back to the OS only
when every object in it is freed, and the few thousand small objects that outlive a burst (caches, Faust's
and aiokafka's own bookkeeping, the crisis model) are scattered over most arenas. With ``PYTHONMALLOC=malloc``
every object is a glibc chunk, and ``malloc_trim(0)`` (``streams._trim``) returns any free page, not only
whole arenas. ``bench/burst_bench.py --turns 200000`` (10,000 open conversations, then all closed and their
tombstones expired): RSS after expiry 166-210 MB on pymalloc, 103-112 MB on malloc, from 76-79 MB at start,
and a second burst leaves 1-4 MB more. The price: the peak is higher (glibc's 16 bytes per chunk) and the
stream bench measured 5-8% more worker CPU per turn (docs/benchmarks.md, "the worker's allocator").

The allocator is fixed when the interpreter starts (``PYTHONMALLOC`` is read before any Python code runs),
so ``attune worker`` re-executes itself once with the variable set: same PID, same arguments, so a
supervisor, a PID file or a signal sent to it is unaffected. An explicit ``PYTHONMALLOC`` in the
environment is left as it is; so is a platform without glibc's ``malloc_trim`` (there pymalloc stays).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

from ._trim import can_trim

log = logging.getLogger("attune.streams")

ENV = "PYTHONMALLOC"
#: ``--allocator`` values: what ``PYTHONMALLOC`` the worker runs with.
CHOICES = ("malloc", "pymalloc")


def wanted(choice: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The ``PYTHONMALLOC`` value to re-execute with, or None to run on as this process is.

    ``choice`` None (the default) means malloc where glibc can trim, unless ``PYTHONMALLOC`` is already set;
    an explicit choice is applied unless the environment already says exactly that."""
    current = environ.get(ENV)
    if choice is None:
        if current is not None or not can_trim():
            return None
        choice = "malloc"
    return None if current == choice else choice


def reexec_with(choice: str | None) -> None:
    """Re-execute this process with the allocator ``choice`` if it does not run with it already.

    Returns only when no re-execution is needed or it failed (then the worker runs on, and says so)."""
    value = wanted(choice)
    if value is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, ENV: value})
    except OSError as e:  # e.g. the interpreter's file is gone after an upgrade: run on, with pymalloc
        log.warning("could not restart with %s=%s (%s); running with the default allocator", ENV, value, e)
