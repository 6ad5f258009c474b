"""A worker that cannot deliver records it produced stops at once, as a crash would, instead of going on.

Why: aiokafka retries retriable produce errors itself, up to its request timeout; a delivery that still
fails leaves outputs (turn scores, crisis alerts, judge records, verdicts) unsent for inputs that Faust
may already count as done. ``Stream.take_events`` acks a batch in a ``finally`` even when the agent
raised, and a judge job's task would die unseen with its job never acked, holding back every later
commit of its partition. Going on would commit past the first or stall behind the second, silently.
Exiting without a commit (what SIGKILL does, which the crash tests show loses nothing) leaves those
inputs uncommitted, so the restarted worker processes them again; their record ids are the same, so a
consumer can tell repeats (docs/reliability.md, "Delivery failures").
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

log = logging.getLogger("attune.streams")

#: Exit code of a worker that could not deliver its records (EX_TEMPFAIL: restart it).
EXIT_DELIVERY_FAILED = 75

#: How the process ends; tests replace it with a function that raises.
_exit: Callable[[int], NoReturn] = os._exit


def delivery_failed(what: str, exc: BaseException) -> NoReturn:
    """Log why (one CRITICAL line naming the inputs held back), flush, and exit without committing."""
    log.critical(
        "could not deliver the records of %s (%r) after the producer's own retries; exiting with code %d "
        "without committing, so a restarted worker processes these inputs again",
        what,
        exc,
        EXIT_DELIVERY_FAILED,
    )
    for handler in logging.getLogger().handlers + log.handlers:
        handler.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    _exit(EXIT_DELIVERY_FAILED)


def inputs_of(items: Iterable[Any]) -> str:
    """The inputs a failed delivery holds back, for the log: ``topic[partition]@first-last`` each."""
    spans: dict[tuple[str, int], list[int]] = {}
    for m in items:
        span = spans.setdefault((m.topic, m.partition), [m.offset, m.offset])
        span[0], span[1] = min(span[0], m.offset), max(span[1], m.offset)
    return ", ".join(f"{t}[{p}]@{a}" + (f"-{b}" if b != a else "") for (t, p), (a, b) in sorted(spans.items()))
