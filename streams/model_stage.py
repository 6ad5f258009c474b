"""``attune model-stage``: the learned empathy signal and the crisis second look, off the inline path.

Both embed with MiniLM, too slow for the per-turn inline path. The crisis second look
(``scorers.safety._second_look``) may add a ``possible`` crisis alert to ``attune.alerts.safety`` for a user turn the
inline detector left without one (``high`` where it confirms an anchor concept about the user), and raise the inline
model's own ``possible`` alert to ``high`` the same way; it never withdraws or lowers an inline alert.

Why a separate consumer (plain aiokafka, group ``<app-id>-model``) and not another Faust agent on the turns
topic: an agent in the worker's app would share its consumer, so a model slower than live traffic (as one core
is: docs/benchmarks.md, "Model stage: the learned empathy signal (issue #16)") would pause the turns partitions
and hold back the inline scores and alerts.
Here the model lags on its own: its committed offsets say how far it got, nothing is dropped, and more
stages (up to the turns topic's partition count) share the load.

At least once: a batch's records are sent and acknowledged before its offsets are committed, so a crash
replays at most one batch; record ids are deterministic, so consumers de-duplicate by ``record_id``.
Invalid turn events are skipped and counted: the worker's own consumer dead-letters them.

``--crisis-screen`` (issue #12, item 5): each ``possible`` second-look alert (the model's alone) also becomes an LLM
crisis-screen job on the worker's judge-jobs topic, built by ``scorers.judges.screen_job`` from the turn and the
messages before it (the stage remembers the last few of each open conversation), so the worker's judge agent gives it
the same second opinion as an inline ``possible`` alert; the answer can raise or confirm an alert, never withdraw one.
A ``high`` one (an anchor confirmed) needs no opinion, as in batch (``attune.batch._screen_jobs``).
Only useful with a worker that runs judges (``--judge``/``--judge-config``): otherwise nobody reads the jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer

from schemas import ConversationEnd, ConversationReplay, InvalidRecord, Message, decode_turn_event, encode
from schemas import Turn as TurnEvent
from schemas.topics import JUDGE_JOBS, SAFETY_ALERTS, TURN_MODEL_SCORES, TURNS
from scorers.empathy_model import DEFAULT_MAX_CONVERSATIONS, EmpathyModel, ModelInput, ModelStage
from scorers.safety import LookInput, SecondLook

from . import security
from ._quiet import quiet_repeats
from .broker import PROFILES, ProfileName, bootstrap_of, create_topics
from .io import broker_topics, producer_for

log = logging.getLogger("attune.model_stage")


@dataclass
class StageStats:
    events: int = 0
    invalid: int = 0
    scored: int = 0
    looked: int = 0  # user turns given a crisis second look (no inline alert or the model's, above the prescreen)
    crisis_alerts: int = 0  # crisis alerts the second look added (possible, or high on an anchor it confirms)
    screen_jobs: int = 0  # of those, sent to the LLM crisis screen (--crisis-screen)
    batches: int = 0
    model_seconds: float = 0.0
    first_event: float | None = None  # monotonic time of the first record (start-up and group join before it)
    last_batch: float | None = None

    def line(self) -> str:
        rate = self.scored / self.model_seconds if self.model_seconds else 0.0
        return (
            f"model stage: {self.events} turn events, {self.scored} replies scored in {self.batches} batches "
            f"({rate:,.0f} replies/s of model time), {self.looked} user turns given a crisis second look "
            f"({self.crisis_alerts} alerts, {self.screen_jobs} sent to the LLM crisis screen), "
            f"{self.invalid} invalid events skipped"
        )


class RecentMessages:
    """The last ``keep`` messages of each open conversation: what a crisis-screen job shows the judge before
    the flagged turn, as the worker's own screen jobs do. Bounded like the empathy stage: the least recently
    active conversation is forgotten first (counted in ``forgotten``); an end forgets the conversation."""

    def __init__(self, keep: int, max_conversations: int = DEFAULT_MAX_CONVERSATIONS) -> None:
        if max_conversations < 1:
            raise ValueError("max_conversations must be at least 1")
        self.keep = keep
        self.max_conversations = max_conversations
        self._recent: OrderedDict[str, deque[Message]] = OrderedDict()
        self.forgotten = 0

    def __len__(self) -> int:
        return len(self._recent)

    def before(self, event: TurnEvent) -> list[Message]:
        """The remembered messages earlier than ``event`` in turn order."""
        return [m for m in self._recent.get(event.conversation_id, ()) if (m.turn_index or 0) < event.turn_index]

    def feed(self, event: TurnEvent | ConversationEnd | ConversationReplay) -> None:
        cid = event.conversation_id
        if not isinstance(event, TurnEvent) or event.end_of_conversation:
            self._recent.pop(cid, None)
            return
        recent = self._recent.get(cid)
        if recent is None:
            recent = self._recent[cid] = deque(maxlen=self.keep)
        recent.append(Message(role=event.role, text=event.text, turn_index=event.turn_index))
        self._recent.move_to_end(cid)
        while len(self._recent) > self.max_conversations:
            self._recent.popitem(last=False)
            self.forgotten += 1


async def _wait_for_topic(broker: str, name: str, stop: asyncio.Event, *, every: float = 1.0) -> bool:
    """Wait until ``name`` exists (False if stopped first). The stage never creates the judge-jobs topic: the
    worker does, with the retention its raw text needs (streams.settings, ``retention_hours``)."""
    warned = 0.0
    while not stop.is_set():
        if name in await broker_topics(broker):
            return True
        if time.monotonic() - warned > 30:
            log.warning("--crisis-screen: waiting for %s (a worker creates it at start)", name)
            warned = time.monotonic()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
    return False


async def run_stage(
    broker: str,
    *,
    profile: ProfileName = "kafka",
    app_id: str = "attune",
    batch_max: int = 128,
    model: EmpathyModel | None = None,
    second_look: SecondLook | None = None,
    crisis_screen: bool = False,
    max_conversations: int = DEFAULT_MAX_CONVERSATIONS,
    stop: asyncio.Event | None = None,
    idle_timeout: float | None = None,
    report_every: float = 30.0,
) -> StageStats:
    """Consume turns, score assistant replies in batches, produce to ``attune.scores.model``, commit.

    ``crisis_screen``: also send each second-look alert's turn to the LLM crisis screen (module docstring).
    """
    loaded = model if model is not None else await asyncio.to_thread(EmpathyModel.load)
    stage = ModelStage(loaded, max_conversations)
    look = second_look if second_look is not None else await asyncio.to_thread(SecondLook.load)
    stop = stop or asyncio.Event()
    stats = StageStats()
    recent: RecentMessages | None = None
    if crisis_screen:  # the judges extra (provider SDKs) only when screening
        from scorers.judges import SCREEN_HISTORY, screen_job

        recent = RecentMessages(SCREEN_HISTORY, max_conversations)
    bootstrap = bootstrap_of(broker)
    if recent is not None and not await _wait_for_topic(broker, JUDGE_JOBS.name, stop):
        return stats
    await create_topics(
        bootstrap,
        {TURN_MODEL_SCORES.name: TURN_MODEL_SCORES.partitions, SAFETY_ALERTS.name: SAFETY_ALERTS.partitions},
    )
    prof = PROFILES[profile]
    consumer = AIOKafkaConsumer(
        TURNS.name,
        bootstrap_servers=bootstrap,
        group_id=f"{app_id}-model",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        **({"fetch_max_wait_ms": prof.fetch_max_wait_ms} if prof.fetch_max_wait_ms is not None else {}),
        **security.client_kwargs(),
    )
    producer = producer_for(broker, profile)
    try:
        await consumer.start()
        await producer.start()
        await asyncio.to_thread(loaded.score, ["warm up"], ["warm up"])  # load ONNX before the first batch
        last_data = last_report = time.monotonic()
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=200, max_records=batch_max)
            now = time.monotonic()
            if not batches:
                if idle_timeout is not None and now - last_data > idle_timeout:
                    break
                continue
            last_data = now
            if stats.first_event is None:
                stats.first_event = now
            inputs: list[ModelInput] = []
            looks: list[LookInput] = []
            earlier: dict[tuple[str, int], list[Message]] = {}  # a looked-at turn's messages before it
            for msgs in batches.values():
                for m in msgs:
                    stats.events += 1
                    try:
                        event = decode_turn_event(m.value)
                    except InvalidRecord:
                        stats.invalid += 1
                        continue
                    if (item := stage.feed(event)) is not None:
                        inputs.append(item)
                    if (candidate := look.feed(event)) is not None:
                        looks.append(candidate)
                        if recent is not None and isinstance(event, TurnEvent):
                            earlier[candidate.conversation_id, candidate.turn_index] = recent.before(event)
                    if recent is not None:
                        recent.feed(event)
            if inputs:
                t0 = time.monotonic()
                records = await asyncio.to_thread(stage.score, inputs)
                stats.model_seconds += time.monotonic() - t0
                futs = [
                    await producer.send(TURN_MODEL_SCORES.name, encode(r), key=r.conversation_id.encode())
                    for r in records
                ]
                await asyncio.gather(*futs)
                stats.scored += len(records)
            if looks:
                t0 = time.monotonic()
                alerts = await asyncio.to_thread(look.alerts, looks)
                stats.model_seconds += time.monotonic() - t0
                futs = [
                    await producer.send(SAFETY_ALERTS.name, encode(a), key=a.conversation_id.encode()) for a in alerts
                ]
                if recent is not None:
                    looked = {(i.conversation_id, i.turn_index): i for i in looks}
                    for a in alerts:
                        assert a.turn_index is not None  # a second look is always about one user turn
                        key = (a.conversation_id, a.turn_index)
                        seen = looked[key]
                        if a.detector != "model":
                            # as batch and the worker (``needs_screen``): a possible alert, the model's alone; an
                            # anchor confirmed needs no opinion, and an inline possible alert the second look raised
                            # was screened by the worker
                            continue
                        job = screen_job(seen.conversation_id, seen.turn_index, seen.text, earlier[key], seen.metadata)
                        futs.append(await producer.send(JUDGE_JOBS.name, encode(job), key=job.conversation_id.encode()))
                        stats.screen_jobs += 1
                await asyncio.gather(*futs)
                stats.looked += len(looks)
                stats.crisis_alerts += len(alerts)
            stats.batches += 1
            await consumer.commit()  # after the records are acknowledged: at least once
            stats.last_batch = time.monotonic()
            if now - last_report > report_every:
                log.warning(stats.line())
                last_report = now
    finally:
        await consumer.stop()
        await producer.stop()
    return stats


def main(
    broker: str,
    *,
    profile: ProfileName,
    app_id: str,
    batch_max: int,
    max_conversations: int,
    nice: int = 10,
    crisis_screen: bool = False,
) -> int:
    """Run until SIGINT/SIGTERM; exit 0 after a clean stop (the last batch committed).

    ``nice``: the stage lowers its own CPU priority, so on a machine it shares with a worker the inline
    scores and alerts win the cores and the model lags instead (docs/empathy-model.md, "Throughput").
    """
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet_repeats()  # aiokafka's reconnect errors while a broker is down: one per 30 s, with a count
    if nice:
        os.nice(nice)

    async def go() -> StageStats:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        return await run_stage(
            broker,
            profile=profile,
            app_id=app_id,
            batch_max=batch_max,
            max_conversations=max_conversations,
            crisis_screen=crisis_screen,
            stop=stop,
        )

    stats = asyncio.run(go())
    print(stats.line())
    return 0
