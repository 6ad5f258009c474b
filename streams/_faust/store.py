"""Faust tables as the processor's :class:`streams._core.StateStore`, with an orjson codec."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

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


def compact_dumps(obj: Any) -> bytes:
    """``orjson.dumps`` for bytes that are kept: an exact-size copy.

    Why: orjson (3.13 here) returns bytes whose heap block is never shrunk to the output: at least 4 KB
    for any output (21 bytes included), 8 KB for a 2.2 KB chunk of buffered turns (tracemalloc). A chunk is
    kept until its conversation's next turn, so an open 20-turn conversation's two chunks held ~12 KB for
    ~4 KB of data. The copy costs less than the allocation it frees (3.7 us against 6.0 us for a whole
    ``dumps`` of a 16-turn chunk: the oversized block goes straight back to the allocator). Figures:
    docs/benchmarks.md, "2026-11-26: memory per open conversation".
    """
    return memoryview(orjson.dumps(obj)).tobytes()


def state_table(app: faust.App, name: str, kind: TableName, partitions: int, help: str = "") -> faust.Table:
    """One of the processor's two tables, with the serializers :class:`FaustStore` needs.

    Faust derives serializers from key/value *types* only. They are set before the store (created lazily)
    reads them, and the changelog topic is made again: registering the table already made it with the
    default (json) serializers, and table recovery decodes the changelog through that topic.
    """
    table = cast(faust.Table, app.Table(name, partitions=partitions, help=help))
    table.key_serializer = "orjson"
    table.value_serializer = FaustStore.VALUE_SERIALIZERS[kind]
    table.changelog_topic = table._new_changelog_topic()
    return table


def raw_topic(app: faust.App, *names: str, partitions: int) -> faust.TopicT:
    """Topics an agent consumes as bytes: attune decodes (and dead-letters) records itself."""
    return app.topic(
        *names,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=partitions,
    )


class FaustStore:
    """:class:`streams._core.StateStore` over two Faust tables, with explicit changelog partitions.

    A batch mixes partitions, so the partition of a write cannot come from Faust's "current event";
    :meth:`apply` updates the tables' local stores and queues each change for the table's changelog on the
    partition the processor names (the partition of the conversation's turns), serialized exactly as
    ``Table.__setitem__`` / ``send_changelog`` would (orjson key and value, ``None`` for a delete). The
    runtime sends the queue with :class:`streams._faust.sender.BatchSender` (one producer batch per changelog
    partition instead of Faust's per-record path, the worker's largest cost; see ``bench/faust_floor.py``).

    The turns table holds each chunk of buffered turns as its changelog bytes (value serializer ``raw``,
    :data:`VALUE_SERIALIZERS`), decoded when the processor reads it (about once per chunk per batch). Why:
    as decoded dicts, an open conversation's buffered turns were most of what a worker holds for it, and
    thousands of small long-lived objects per conversation, interleaved with every turn's temporaries, left
    the allocator's arenas fragmented after the conversations closed (docs/benchmarks.md, "2026-11-25:
    memory per open conversation"). One bytes object per chunk is several times smaller and lives outside
    the small-object arenas. After a recovery the table holds the same bytes (the changelog's, through the
    ``raw`` codec), so a stored value is the same before and after a restart. The meta table, read on every
    turn, keeps decoded dicts.
    """

    #: Faust value serializer per table (keys are orjson in both). Set by ``create_app`` before the tables'
    #: changelog topics and stores exist.
    VALUE_SERIALIZERS: ClassVar[dict[TableName, str]] = {"turns": "raw", "meta": "orjson"}

    def __init__(self, turns: faust.Table, meta: faust.Table) -> None:
        self._tables: dict[TableName, faust.Table] = {"turns": turns, "meta": meta}
        self._pending: list[Record] = []

    def get(self, table: TableName, key: str) -> dict[str, Any] | None:
        value = self._tables[table].data.get(key)
        if table == "turns" and value is not None:
            return orjson.loads(value)  # held as its changelog bytes (see the class docstring)
        return value

    def has(self, table: TableName, key: str) -> bool:
        return key in self._tables[table].data

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
                if w.table == "turns":  # kept as its changelog bytes
                    encoded = compact_dumps(w.value)
                    store[w.key] = encoded
                else:
                    encoded = dumps(w.value)
                    store[w.key] = w.value
                self._pending.append((topic, w.partition, dumps(w.key), encoded))
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

    def keys_held(self) -> int:
        """Keys of both tables: buffered-turn chunks, conversation metas and tombstones."""
        return sum(len(t.data) for t in self._tables.values())

    def changelog_sizes(self) -> dict[str, int]:
        """Changelog topic -> keys held: what the broker watch reports lost with a broker's state."""
        return {t.changelog_topic.get_topic_name(): len(t.data) for t in self._tables.values()}

    def metas(self) -> list[tuple[str, dict[str, Any]]]:
        return list(self._tables["meta"].data.items())
