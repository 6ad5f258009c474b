"""Hand freed heap memory back to the OS after the open conversations shrink (glibc ``malloc_trim``).

Why: a worker's buffered turns are held as one bytes object per chunk of turns (``streams._faust.store``),
allocated by the C allocator. When thousands of conversations close, glibc keeps their freed chunks on its
free lists and the process's RSS stays at its peak; ``malloc_trim(0)`` returns the free pages. Measured
after a 200,000-turn burst, once every conversation had closed and its tombstone expired: RSS 383 → 275 MB
(docs/benchmarks.md, "2026-11-25: memory per open conversation"). Python's own small-object arenas are not
affected (an arena is freed only when every object in it is), which is what keeps RSS above its start.

The trim runs off the event loop (ctypes releases the GIL), at most once per halving of the buffered turns
since the last one, and not at all where glibc is absent.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import time
from collections.abc import Callable

log = logging.getLogger("attune.streams")


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
        return trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim with
        return None


class Trimmer:
    """Calls ``malloc_trim(0)`` when the buffered-turn count fell to half its high-water mark since the
    last trim (and that mark was at least ``min_peak``), so a steady load never trims."""

    def __init__(self, min_peak: int = 2000) -> None:
        self.min_peak = min_peak
        self.peak = 0
        self.trims = 0
        self._trim = _malloc_trim()
        self._running = False

    def due(self, size: int) -> bool:
        self.peak = max(self.peak, size)
        return self._trim is not None and not self._running and self.peak >= self.min_peak and size * 2 <= self.peak

    async def maybe_trim(self, size: int) -> None:
        """``size``: buffered-turn chunks held now (the turns table's key count)."""
        if not self.due(size):
            return
        self._running = True
        self.peak = size
        started = time.monotonic()
        try:
            await asyncio.get_running_loop().run_in_executor(None, self._trim, 0)  # type: ignore[arg-type]
        finally:
            self._running = False
        self.trims += 1
        log.info(
            "malloc_trim after the buffered turns halved (%d chunks now): %.0f ms",
            size,
            (time.monotonic() - started) * 1e3,
        )
