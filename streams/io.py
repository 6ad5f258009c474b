"""Producing turn events and consuming output records with plain aiokafka (``publish``, ``tail``, ``demo``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from schemas import (
    Conversation,
    ConversationReplay,
    DeadLetter,
    InvalidRecord,
    dead_letter,
    decode_conversation,
    encode,
)

from . import security
from .broker import PROFILES, ProfileName, bootstrap_of
from .settings import MAX_RECORD_BYTES


@dataclass(frozen=True, slots=True)
class Scheduled:
    """One turn event and when to send it, in seconds after the start of publishing."""

    at: float
    key: bytes
    value: bytes
    conversation_id: str
    turn_index: int | None
    replay: bool = False  # a conversation_replay event, not a turn


@dataclass(slots=True)
class PublishReport:
    conversations: int = 0
    events: int = 0  # turn events (a turn or an end), not counting replays
    replays: int = 0  # conversation_replay events sent before the conversations' turns
    invalid_lines: list[str] = field(default_factory=list)
    sent_at: dict[tuple[str, int], float] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class RejectedLine:
    """A line of an input file that is not a valid conversation: its bytes, position and reason."""

    path: Path
    line: int
    raw: bytes
    error: InvalidRecord

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.error.describe()}"

    def dead_letter(self) -> DeadLetter:
        """The same record ``attune evaluate`` writes for a rejected line (source = file, offset = line)."""
        return dead_letter(self.raw, self.error, source=str(self.path), offset=self.line)


def read_conversations(path: Path) -> tuple[list[Conversation], list[RejectedLine]]:
    """Read a JSONL file of whole conversations; returns them and every rejected line, losslessly."""
    convs: list[Conversation] = []
    bad: list[RejectedLine] = []
    for n, line in enumerate(path.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            convs.append(decode_conversation(line))
        except InvalidRecord as exc:
            bad.append(RejectedLine(path, n, line, exc))
    return convs, bad


def load_conversations(path: Path) -> tuple[list[Conversation], list[str]]:
    """:func:`read_conversations` with one reason per rejected line (for callers that only report them)."""
    convs, bad = read_conversations(path)
    return convs, [b.describe() for b in bad]


def schedule(
    conversations: Sequence[Conversation], pace: float = 0.0, stagger: float | None = None, *, replay: bool = False
) -> list[Scheduled]:
    """Turn events of all conversations, interleaved as live traffic would be.

    Turn ``j`` of conversation ``c`` is due at ``j * pace + c * stagger`` (``stagger`` defaults to
    ``pace / len(conversations)``), so conversations run concurrently and each one's turns keep their order.
    With ``pace == 0`` everything is due at once (still interleaved round-robin). ``replay``: a
    ``conversation_replay`` event (``turn_index`` None) goes just before each conversation's first turn, on
    the same key, so the worker scores the conversation afresh whatever it held of it.
    """
    if stagger is None:
        stagger = pace / max(1, len(conversations))
    out: list[tuple[float, int, int, Scheduled]] = []
    for c, conv in enumerate(conversations):
        key = conv.conversation_id.encode()
        if replay:
            marker = encode(ConversationReplay(conversation_id=conv.conversation_id))
            out.append((c * stagger, -1, c, Scheduled(c * stagger, key, marker, conv.conversation_id, None, True)))
        for j, turn in enumerate(conv.as_turns()):
            at = j * pace + c * stagger
            out.append((at, j, c, Scheduled(at, key, encode(turn), conv.conversation_id, turn.turn_index)))
    out.sort(key=lambda t: (t[0], t[1], t[2]))
    return [s for *_, s in out]


def producer_for(bootstrap: str, profile: ProfileName) -> AIOKafkaProducer:
    prof = PROFILES[profile]
    kwargs: dict[str, object] = {"linger_ms": prof.linger_ms, "acks": 1, "enable_idempotence": False}
    kwargs["max_request_size"] = MAX_RECORD_BYTES  # a dead letter of a maximal rejected line fits
    return AIOKafkaProducer(bootstrap_servers=bootstrap_of(bootstrap), **kwargs, **security.client_kwargs())


async def publish(
    broker: str,
    topic: str,
    events: Sequence[Scheduled],
    *,
    profile: ProfileName = "kafka",
    on_sent: Callable[[Scheduled], None] | None = None,
) -> PublishReport:
    """Send the scheduled events at their times; returns when the broker acknowledged all of them."""
    replays = sum(e.replay for e in events)
    report = PublishReport(
        events=len(events) - replays, replays=replays, conversations=len({e.conversation_id for e in events})
    )
    producer = producer_for(broker, profile)
    try:
        await producer.start()  # inside: a failed start is stopped too (no unclosed-client warning)
        start = time.monotonic()
        futs = []
        for ev in events:
            delay = start + ev.at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            futs.append(await producer.send(topic, ev.value, key=ev.key))
            if ev.turn_index is not None:
                report.sent_at[(ev.conversation_id, ev.turn_index)] = time.time()
            if on_sent is not None:
                on_sent(ev)
        await asyncio.gather(*futs)
        report.seconds = time.monotonic() - start
    finally:
        await producer.stop()
    return report


async def send_raw(broker: str, topic: str, items: Iterable[tuple[bytes | None, bytes]], profile: ProfileName) -> None:
    """Send arbitrary key/value bytes (tests of the dead-letter path, control records)."""
    producer = producer_for(broker, profile)
    try:
        await producer.start()  # inside: a failed start is stopped too (no unclosed-client warning)
        futs = [await producer.send(topic, value, key=key) for key, value in items]
        await asyncio.gather(*futs)
    finally:
        await producer.stop()


async def broker_topics(broker: str) -> set[str]:
    """The topic names the broker knows (a metadata request: creates nothing)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_of(broker), group_id=None, enable_auto_commit=False, **security.client_kwargs()
    )
    try:
        await consumer.start()  # inside: a failed start is stopped too
        return set(await consumer.topics())
    finally:
        await consumer.stop()


async def consume(
    broker: str,
    topics: Sequence[str],
    *,
    from_beginning: bool = True,
    idle_timeout: float | None = None,
    stop: asyncio.Event | None = None,
    fetch_wait_ms: int = 10,
) -> AsyncIterator[tuple[str, bytes | None, bytes, float]]:
    """Yield ``(topic, key, value, received_at)`` from the topics (no consumer group, no commits).

    Ends after ``idle_timeout`` seconds without a record, or when ``stop`` is set. ``fetch_wait_ms``:
    the broker profile's fetch wait where it has one (``tansu-durable``: 200).
    """
    consumer = AIOKafkaConsumer(
        *topics,
        bootstrap_servers=bootstrap_of(broker),
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest" if from_beginning else "latest",
        fetch_max_wait_ms=fetch_wait_ms,
        max_partition_fetch_bytes=8 * 1024 * 1024,
        **security.client_kwargs(),
    )
    try:
        await consumer.start()  # inside: a failed start is stopped too
        last = time.monotonic()
        while not (stop is not None and stop.is_set()):
            batches = await consumer.getmany(timeout_ms=50, max_records=1000)
            now = time.time()
            got = False
            for tp, msgs in batches.items():
                for m in msgs:
                    got = True
                    yield tp.topic, m.key, m.value, now
            if got:
                last = time.monotonic()
            elif idle_timeout is not None and time.monotonic() - last > idle_timeout:
                return
    finally:
        await consumer.stop()
