"""Acks passed to Faust in offset order per partition, for an agent that finishes messages out of order.

Why: Faust 0.15.3 commits the first consecutive run of acked offsets (``Consumer._new_offset``) without
checking that the run starts at the committed offset before a partition's first commit, and one offset
short after it (``min(acked) - committed > 1``): with message 12 still running and 13, 14 acked it commits
15, and a crash then loses 12 (measured for judge jobs: tests/test_faults_worker.py). So a finished
message's ack waits for every earlier message of its partition, and goes with the run it completes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._core import Inbound

#: (topic, partition): Faust's ``TP`` is a named tuple of the same two, so either works as a key.
Partition = tuple[str, int]


class OrderedAcks:
    """Per partition, the offsets started and not yet acked; :meth:`done` acks every finished run in order.

    ``ack_event`` acks a Faust event on its (no-ack) stream; ``ack_read_back`` acks a message the offset
    audit read back directly (an :class:`~streams._core.Inbound`, which Faust never delivered).
    """

    def __init__(
        self, ack_event: Callable[[Any], Awaitable[Any]], ack_read_back: Callable[[Inbound], None] | None
    ) -> None:
        self._ack_event = ack_event
        self._ack_read_back = ack_read_back
        self._unacked: dict[Partition, dict[int, Any]] = {}  # partition -> offset -> finished item, None if running

    def started(self, partition: Partition, offset: int) -> None:
        self._unacked.setdefault(partition, {})[offset] = None

    async def done(self, partition: Partition, offset: int, item: Any) -> None:
        """``item`` (a Faust event or an Inbound) finished: ack it once every earlier one is acked."""
        pending = self._unacked[partition]
        pending[offset] = item
        while pending:
            first = min(pending)
            ready = pending[first]
            if ready is None:
                return
            del pending[first]
            if isinstance(ready, Inbound):
                if self._ack_read_back is not None:
                    self._ack_read_back(ready)
            else:
                await self._ack_event(ready)
