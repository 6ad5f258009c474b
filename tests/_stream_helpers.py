"""Helpers for the stream tests: expected records from the batch path, reading output topics back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence

import scorers
from schemas import Conversation, Message, OutputRecord, decode_output
from schemas.topics import (
    CONTROL,
    CONVERSATION_SCORES,
    CONVERSATION_VERDICTS,
    DEAD_LETTER,
    SAFETY_ALERTS,
    TURN_SCORES,
    TURNS,
)
from streams import DictStore, Inbound, Outbound, Timeouts, TurnProcessor
from streams._core import control_record

OUTPUT_TOPICS = (
    TURN_SCORES.name,
    SAFETY_ALERTS.name,
    CONVERSATION_SCORES.name,
    CONVERSATION_VERDICTS.name,
    DEAD_LETTER.name,
)
#: Fields that legitimately differ between the stream and the batch path.
VOLATILE = {"produced_at", "detected_at", "received_at", "close_reason"}


def rid(rec: OutputRecord) -> str:
    return rec.alert_id if rec.kind == "safety_alert" else rec.record_id  # type: ignore[union-attr]


def comparable(rec: OutputRecord) -> dict:
    return {k: v for k, v in rec.model_dump(mode="json").items() if k not in VOLATILE}


def expected_records(convs: Iterable[Conversation]) -> dict[str, OutputRecord]:
    from scorers import evaluate_conversation

    out: dict[str, OutputRecord] = {}
    for conv in convs:
        for rec in evaluate_conversation(conv):
            out[rid(rec)] = rec
    return out


async def read_back(
    broker: str,
    until: Callable[[dict[str, list[tuple[str, OutputRecord]]]], bool],
    timeout: float,
    topics: Sequence[str] = OUTPUT_TOPICS,
) -> dict[str, list[tuple[str, OutputRecord]]]:
    """Every record on the output topics, grouped by id (duplicates kept), until ``until`` holds."""
    from streams.io import consume

    seen: dict[str, list[tuple[str, OutputRecord]]] = {}
    stop = asyncio.Event()
    deadline = time.monotonic() + timeout

    async def run() -> None:
        async for topic, _k, value, _at in consume(broker, list(topics), stop=stop):
            rec = decode_output(value)
            seen.setdefault(rid(rec), []).append((topic, rec))
            if until(seen):
                stop.set()
            if time.monotonic() > deadline:
                stop.set()

    async def watchdog() -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        stop.set()

    await asyncio.gather(run(), watchdog())
    return seen


def synthetic(n: int, turns: int, prefix: str = "conv") -> list[Conversation]:
    """Conversations with a crisis disclosure every seventh conversation (answered without resources)."""
    convs = []
    for i in range(n):
        msgs = []
        for j in range(turns):
            if j % 2 == 0:
                text = f"Work has been rough this week, day {j}. My boss keeps piling things on and I feel stuck."
                if i % 7 == 0 and j == 2:
                    text = "Honestly I want to kill myself, I can't keep doing this."
            else:
                text = f"That sounds really draining. What part of it weighs on you most right now, {i}?"
            msgs.append(Message(role="user" if j % 2 == 0 else "assistant", text=text))
        convs.append(Conversation(conversation_id=f"{prefix}-{i:04d}", turns=msgs))
    return convs


def diff(got: OutputRecord, want: OutputRecord) -> str:
    """The differing fields (one level into dicts), for assertion messages."""
    a, b = comparable(got), comparable(want)
    out = []
    for k in sorted(a.keys() | b.keys()):
        if a.get(k) == b.get(k):
            continue
        if isinstance(a.get(k), dict) and isinstance(b.get(k), dict):
            for kk in sorted(a[k].keys() | b[k].keys()):
                if a[k].get(kk) != b[k].get(kk):
                    out.append(f"{k}.{kk}: stream={a[k].get(kk)!r} batch={b[k].get(kk)!r}")
        else:
            out.append(f"{k}: stream={a.get(k)!r} batch={b.get(k)!r}")
    return "\n".join(out)


class Harness:
    """A processor over a dict store, applying writes after each batch as the Faust runtime does."""

    def __init__(self, timeouts: Timeouts | None = None, hooks=()) -> None:
        self.store = DictStore()
        self.proc = TurnProcessor(scorers.Evaluator(), self.store, timeouts, hooks)
        self.outputs: list[Outbound] = []
        self.writes = 0
        self.offset = 0

    def feed(self, events: list[tuple[bytes | None, bytes]], now: float = 1000.0, topic: str = TURNS.name) -> list:
        items = [Inbound(topic, 0, self.offset + i, k, v) for i, (k, v) in enumerate(events)]
        self.offset += len(items)
        res = self.proc.process(items, now)
        self.store.apply(res.writes)
        self.proc.on_batch_applied(res)
        self.outputs += res.outputs
        self.writes += len(res.writes)
        return res.outputs

    def tick(self, now: float) -> None:
        for cid, _p, action in self.proc.due(now):
            self.feed([(cid.encode(), control_record(cid, action))], now, topic=CONTROL.name)

    def records(self) -> dict[str, list]:
        out: dict[str, list] = {}
        for o in self.outputs:
            rec = decode_output(o.value)
            out.setdefault(rid(rec), []).append(rec)
        return out
