"""Hand freed heap memory back to the OS after the open conversations shrink (``malloc_trim`` or jemalloc's purge).

Why: a worker's buffered turns are held as one bytes object per chunk of turns (``streams._faust.store``),
allocated by the C allocator. When thousands of conversations close, glibc keeps their freed chunks on its
free lists and the process's RSS stays at its peak; ``malloc_trim(0)`` returns the free pages. Measured
after a 200,000-turn burst, once every conversation had closed and its tombstone expired: RSS 383 → 275 MB
(docs/benchmarks.md, "2026-11-25: memory per open conversation"). Python's own small-object arenas are not
affected (an arena is freed only when every object in it is), which is why the worker runs on glibc malloc
(``streams._allocator``, jemalloc where installed): there every freed page can be trimmed. Under jemalloc
the same policy calls ``arena.<all>.purge``; its background thread also purges pages unused for a second.

The trim runs off the event loop (ctypes releases the GIL), at most once per halving of the keys the state
tables hold (buffered-turn chunks, conversation metas and tombstones) since the last one, all the way down
to zero once they were large, and not at all where neither allocator is present. Counting the tombstones
matters: most of what a closed conversation leaves is freed when its tombstone expires, minutes after the
close, and in-process a trim after that expiry took RSS from 348 to 111 MB (2,000 conversations, 72 MB at
start).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("attune.streams")


#: jemalloc's ``MALLCTL_ARENAS_ALL``: ``arena.<this>.purge`` purges every arena.
_ALL_ARENAS = 4096


@functools.cache
def _mallctl() -> Any:
    """jemalloc's ``mallctl`` where jemalloc serves this process (``streams._allocator`` preloads it), else None."""
    try:
        mallctl = ctypes.CDLL(None).mallctl
    except (OSError, AttributeError):
        return None
    mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return mallctl


def _jemalloc_purge() -> Callable[[int], int] | None:
    """``arena.<all>.purge`` where jemalloc serves this process."""
    mallctl = _mallctl()
    if mallctl is None:
        return None
    name = f"arena.{_ALL_ARENAS}.purge".encode()
    return lambda _pad: int(mallctl(name, None, None, None, 0))


#: jemalloc's own accounting, read by ``allocator_stats``: live bytes, bytes of the pages holding them,
#: its metadata, and its resident pages (what it adds to the RSS).
STATS = ("allocated", "active", "metadata", "resident")


def allocator_stats() -> dict[str, int] | None:
    """jemalloc's ``stats.*`` in bytes (after an ``epoch`` refresh), or None where jemalloc does not serve us.

    Why: RSS alone cannot tell live objects from pages pinned by a few of them; ``active - allocated`` is the
    fragmentation, ``allocated`` the live data."""
    mallctl = _mallctl()
    if mallctl is None:
        return None
    epoch = ctypes.c_uint64(1)
    size = ctypes.c_size_t(ctypes.sizeof(epoch))
    if mallctl(b"epoch", ctypes.byref(epoch), ctypes.byref(size), ctypes.byref(epoch), size):
        return None
    out: dict[str, int] = {}
    for name in STATS:
        value = ctypes.c_size_t(0)
        size = ctypes.c_size_t(ctypes.sizeof(value))
        if mallctl(f"stats.{name}".encode(), ctypes.byref(value), ctypes.byref(size), None, 0):
            return None  # a build without statistics
        out[name] = value.value
    return out


def _malloc_trim() -> Callable[[int], int] | None:
    """The call that hands free pages back: jemalloc's purge where it is loaded, else glibc's ``malloc_trim``."""
    purge = _jemalloc_purge()
    if purge is not None:
        return purge
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
        return trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim with
        return None


def can_trim() -> bool:
    """Whether this process can hand freed pages back (jemalloc or glibc): elsewhere nothing here can."""
    return _malloc_trim() is not None


def on_jemalloc() -> bool:
    """Whether jemalloc serves this process's ``malloc`` (it exports ``mallctl``; glibc does not)."""
    return _mallctl() is not None


class Trimmer:
    """Hands free pages back (``malloc_trim(0)``, or jemalloc's purge) each time the state held fell to half its
    high-water mark since the last trim, once that mark reached ``min_peak``, down to zero; a steady load never
    trims."""

    def __init__(self, min_peak: int = 2000) -> None:
        self.min_peak = min_peak
        self.peak = 0
        self.trims = 0
        self._trim = _malloc_trim()
        self._running = False
        self._armed = False  # the state was large since the last trim at zero: trim its descent to the end

    def due(self, size: int) -> bool:
        self.peak = max(self.peak, size)
        self._armed = self._armed or self.peak >= self.min_peak
        return self._trim is not None and not self._running and self._armed and 0 < self.peak >= 2 * size

    async def maybe_trim(self, size: int) -> None:
        """``size``: keys the state tables hold now (buffered-turn chunks + metas and tombstones)."""
        if not self.due(size):
            return
        self._running = True
        self.peak = size
        self._armed = size > 0
        started = time.monotonic()
        try:
            await asyncio.get_running_loop().run_in_executor(None, self._trim, 0)  # type: ignore[arg-type]
        finally:
            self._running = False
        self.trims += 1
        log.info(
            "freed pages handed back after the state held halved (%d keys now): %.0f ms",
            size,
            (time.monotonic() - started) * 1e3,
        )
