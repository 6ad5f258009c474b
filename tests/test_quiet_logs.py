"""streams._quiet: a library's repeated errors (aiokafka while a broker is down) once per window, with a count."""

from __future__ import annotations

import logging

import pytest

from streams._quiet import RepeatFilter, quiet_repeats


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _logger(name: str, f: logging.Filter) -> tuple[logging.Logger, list[str]]:
    out: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda r: out.append(r.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger(name)
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.filters[:] = [f]
    return logger, out


def test_repeats_pass_once_per_window_and_the_next_one_counts_the_rest() -> None:
    clock = Clock()
    log, out = _logger("test.quiet.a", RepeatFilter(window=30.0, clock=clock))
    for i in range(100):
        log.error("Unable connect to node with id %s: %s", 111, f"attempt {i}")
    log.warning("another template")  # a different message is not held back
    assert out == ["Unable connect to node with id 111: attempt 0", "another template"]
    clock.t = 29.9
    log.error("Unable connect to node with id %s: %s", 111, "late")
    assert len(out) == 2
    clock.t = 30.0
    log.error("Unable connect to node with id %s: %s", 111, "again")
    assert out[-1] == "Unable connect to node with id 111: again (100 more like this in the last 30 s not logged)"
    clock.t = 61.0
    log.error("Unable connect to node with id %s: %s", 111, "quiet since")
    assert out[-1] == "Unable connect to node with id 111: quiet since"


def test_critical_always_passes() -> None:
    log, out = _logger("test.quiet.b", RepeatFilter(window=30.0, clock=Clock()))
    for _ in range(3):
        log.critical("the broker lost its state")
    assert len(out) == 3


@pytest.mark.filterwarnings("ignore")
def test_quiet_repeats_reaches_the_library_s_child_loggers() -> None:
    import aiokafka  # noqa: F401  (its modules create their loggers on import)

    shared = quiet_repeats()
    try:
        assert shared in logging.getLogger("aiokafka").filters
        assert shared in logging.getLogger("aiokafka.consumer.fetcher").filters
        assert quiet_repeats() is not shared and shared in logging.getLogger("aiokafka.conn").filters  # not twice
        assert sum(isinstance(f, RepeatFilter) for f in logging.getLogger("aiokafka.conn").filters) == 1
    finally:  # other tests in this process see aiokafka's logs as they are
        for name in list(logging.root.manager.loggerDict):
            if name.startswith("aiokafka"):
                logger = logging.getLogger(name)
                logger.filters[:] = [f for f in logger.filters if not isinstance(f, RepeatFilter)]
