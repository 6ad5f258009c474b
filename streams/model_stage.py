"""``attune model-stage``: the learned empathy signal and the crisis second look, off the inline path.

Both embed with MiniLM, too slow for the per-turn inline path. The crisis second look
(``scorers.safety._second_look``) may add a ``possible`` crisis alert to ``attune.alerts.safety`` for a user turn the
inline detector left without one; it never withdraws or changes an inline alert.

Why a separate consumer (plain aiokafka, group ``<app-id>-model``) and not another Faust agent on the turns
topic: an agent in the worker's app would share its consumer, so a model slower than live traffic (as one core
is: docs/benchmarks.md, "Model stage: the learned empathy signal (issue #16)") would pause the turns partitions
and hold back the inline scores and alerts.
Here the model lags on its own: its committed offsets say how far it got, nothing is dropped, and more
stages (up to the turns topic's partition count) share the load.

At least once: a batch's records are sent and acknowledged before its offsets are committed, so a crash
replays at most one batch; record ids are deterministic, so consumers de-duplicate by ``record_id``.
Invalid turn events are skipped and counted: the worker's own consumer dead-letters them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer

from schemas import InvalidRecord, decode_turn_event, encode
from schemas.topics import SAFETY_ALERTS, TURN_MODEL_SCORES, TURNS
from scorers.empathy_model import DEFAULT_MAX_CONVERSATIONS, EmpathyModel, ModelInput, ModelStage
from scorers.safety import LookInput, SecondLook

from . import security
from ._quiet import quiet_repeats
from .broker import PROFILES, ProfileName, bootstrap_of, create_topics
from .io import producer_for

log = logging.getLogger("attune.model_stage")


@dataclass
class StageStats:
    events: int = 0
    invalid: int = 0
    scored: int = 0
    looked: int = 0  # user turns given a crisis second look (no inline alert, at or above the prescreen)
    crisis_alerts: int = 0  # possible crisis alerts the second look added
    batches: int = 0
    model_seconds: float = 0.0
    first_event: float | None = None  # monotonic time of the first record (start-up and group join before it)
    last_batch: float | None = None

    def line(self) -> str:
        rate = self.scored / self.model_seconds if self.model_seconds else 0.0
        return (
            f"model stage: {self.events} turn events, {self.scored} replies scored in {self.batches} batches "
            f"({rate:,.0f} replies/s of model time), {self.looked} user turns given a crisis second look "
            f"({self.crisis_alerts} alerts), {self.invalid} invalid events skipped"
        )


async def run_stage(
    broker: str,
    *,
    profile: ProfileName = "kafka",
    app_id: str = "attune",
    batch_max: int = 128,
    model: EmpathyModel | None = None,
    second_look: SecondLook | None = None,
    max_conversations: int = DEFAULT_MAX_CONVERSATIONS,
    stop: asyncio.Event | None = None,
    idle_timeout: float | None = None,
    report_every: float = 30.0,
) -> StageStats:
    """Consume turns, score assistant replies in batches, produce to ``attune.scores.model``, commit."""
    loaded = model if model is not None else await asyncio.to_thread(EmpathyModel.load)
    stage = ModelStage(loaded, max_conversations)
    look = second_look if second_look is not None else await asyncio.to_thread(SecondLook.load)
    stop = stop or asyncio.Event()
    stats = StageStats()
    bootstrap = bootstrap_of(broker)
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
    broker: str, *, profile: ProfileName, app_id: str, batch_max: int, max_conversations: int, nice: int = 10
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
            stop=stop,
        )

    stats = asyncio.run(go())
    print(stats.line())
    return 0
