"""Log hygiene for the stream processes: a library's repeated errors once per window, with a count."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable


class RepeatFilter(logging.Filter):
    """One record per (logger, message template) every ``window`` seconds; the next one let through says
    how many like it were held back.

    Why: while a broker is unreachable aiokafka logs an ERROR for every reconnect attempt and request
    (707 lines in a 9 s outage of the embedded broker, from a worker and its alert path), which buries
    the one line that matters (the broker watch's "broker unreachable"). CRITICAL always passes.
    """

    def __init__(self, window: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window = window
        self.clock = clock
        self._seen: dict[tuple[str, str], list[float]] = {}  # key -> [last let through, held since]
        self._lock = threading.Lock()  # the metrics server logs from its own thread

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.CRITICAL:
            return True
        key = (record.name, str(record.msg))
        now = self.clock()
        with self._lock:
            entry = self._seen.get(key)
            if entry is not None and now - entry[0] < self.window:
                entry[1] += 1
                return False
            held = int(entry[1]) if entry else 0
            self._seen[key] = [now, 0]
        if held:
            record.msg = f"{record.msg} ({held} more like this in the last {self.window:g} s not logged)"
        return True


def quiet_repeats(prefix: str = "aiokafka", window: float = 30.0) -> RepeatFilter:
    """Put one :class:`RepeatFilter` on every logger under ``prefix`` that exists now (call it after the
    library is imported: a logger's filter does not apply to its children)."""
    shared = RepeatFilter(window)
    names = [n for n in logging.root.manager.loggerDict if n == prefix or n.startswith(prefix + ".")]
    for name in {prefix, *names}:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RepeatFilter) for f in logger.filters):
            logger.addFilter(shared)
    return shared
