"""The worker's malloc_trim policy (streams._trim): only after the buffered turns halved, never on a steady load."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from streams._trim import Trimmer


def _counting(min_peak: int) -> tuple[Trimmer, list[int], Callable[[list[int]], None]]:
    """A trimmer whose ``malloc_trim`` only records its calls, and a feed of table sizes to it."""
    calls: list[int] = []
    t = Trimmer(min_peak=min_peak)
    t._trim = lambda pad: calls.append(pad) or 1  # type: ignore[assignment]

    def run(sizes: list[int]) -> None:
        async def feed() -> None:
            for n in sizes:
                await t.maybe_trim(n)

        asyncio.run(feed())

    return t, calls, run


def test_trims_once_per_halving_and_never_under_a_steady_load() -> None:
    t, calls, run = _counting(min_peak=100)

    run([10, 50, 90, 60, 50, 60])  # below min_peak: a small worker never trims
    assert calls == []
    run([400, 380, 390, 250, 210])  # steady around the peak
    assert calls == []
    run([200])  # half of the 400 peak
    assert calls == [0] and t.trims == 1 and t.peak == 200
    run([150, 120])  # not half of 200 yet
    assert len(calls) == 1
    run([100])
    assert len(calls) == 2 and t.peak == 100  # half of 200
    run([0])  # everything closed: half of a peak that still counts (min_peak)
    assert len(calls) == 3 and t.peak == 0
    run([0, 0, 0])  # nothing more to hand back
    assert len(calls) == 3


def test_a_descent_that_began_large_is_trimmed_to_the_end() -> None:
    """Below ``min_peak`` on the way down (tombstones expiring after the conversations closed) still trims:
    the last frees are the ones that leave the process's RSS above its start."""
    t, calls, run = _counting(min_peak=300)

    run([400, 200])
    assert len(calls) == 1
    run([150, 100, 40, 0])  # 100 = half of 200, 40 < half of 100, then 0
    assert len(calls) == 4 and t.peak == 0
    run([0, 5, 0, 200, 100])  # a small load after the end: disarmed, no trims
    assert len(calls) == 4


def test_no_glibc_no_trim() -> None:
    t = Trimmer(min_peak=1)
    t._trim = None
    assert not t.due(10) and not t.due(0)
