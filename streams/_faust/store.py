"""Faust tables as the processor's :class:`streams._core.StateStore`, with an orjson codec."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import faust
import orjson
from faust.serializers import codecs
from faust.stores.memory import Store as MemoryStore

from .._core import TableName, Write
from .sender import Record


class _OrjsonCodec(codecs.Codec):
    """Table keys and values as orjson (Faust's own json codec goes through the stdlib)."""

    def _dumps(self, obj: Any) -> bytes:
        return orjson.dumps(obj)

    def _loads(self, s: bytes) -> Any:
        return orjson.loads(s)


codecs.register("orjson", _OrjsonCodec())


class FaustStore:
    """:class:`streams._core.StateStore` over two Faust tables, with explicit changelog partitions.

    A batch mixes partitions, so the partition of a write cannot come from Faust's "current event";
    :meth:`apply` updates the tables' local stores and queues each change for the table's changelog on the
    partition the processor names (the partition of the conversation's turns), serialized exactly as
    ``Table.__setitem__`` / ``send_changelog`` would (orjson key and value, ``None`` for a delete). The
    runtime sends the queue with :class:`streams._faust.sender.BatchSender` (one producer batch per changelog
    partition instead of Faust's per-record path, the worker's largest cost; see ``bench/faust_floor.py``).
    """

    def __init__(self, turns: faust.Table, meta: faust.Table) -> None:
        self._tables: dict[TableName, faust.Table] = {"turns": turns, "meta": meta}
        self._pending: list[Record] = []

    def get(self, table: TableName, key: str) -> dict[str, Any] | None:
        return self._tables[table].data.get(key)

    def apply(self, writes: Sequence[Write]) -> None:
        dumps = orjson.dumps
        for w in writes:
            t = self._tables[w.table]
            store = cast(MemoryStore, t.data)  # StreamSettings.faust_config: store memory://
            topic = t.changelog_topic.get_topic_name()
            if w.value is None:
                store.pop(w.key, None)
                self._pending.append((topic, w.partition, dumps(w.key), None))
            else:
                store[w.key] = w.value
                self._pending.append((topic, w.partition, dumps(w.key), dumps(w.value)))
            # Faust's memory store maps each key to its partition to drop the keys of partitions it no
            # longer owns; writes made here bypass the event that would have recorded it.
            if w.value is None:
                store._key_partition.pop(w.key, None)
            else:
                store._key_partition[w.key] = w.partition

    def take_changelog(self) -> list[Record]:
        """The changelog records of the writes applied since the last call, in order."""
        out, self._pending = self._pending, []
        return out

    def changelog_sizes(self) -> dict[str, int]:
        """Changelog topic -> keys held: what the broker watch reports lost with a broker's state."""
        return {t.changelog_topic.get_topic_name(): len(t.data) for t in self._tables.values()}

    def metas(self) -> list[tuple[str, dict[str, Any]]]:
        return list(self._tables["meta"].data.items())
