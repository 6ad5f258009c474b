"""The Faust application: one agent over the turns (and control) topic, two changelog-backed tables, a timer.

All conversation logic is in :class:`streams._core.TurnProcessor`; this module only moves bytes between
Kafka and it. Per batch (``stream.take_events``) the agent decodes and scores everything, sends every
output record, waits until the broker acknowledged them, and only then writes the tables (whose
changelog Faust flushes before it commits offsets). See the processor's docstring for why.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import faust

from schemas.topics import CONTROL, TURNS
from scorers.safety import detector_version

from .._allocator import running
from .._core import BatchResult, CloseHook, Inbound, Outbound, TurnProcessor, control_record, is_open
from .._quiet import quiet_repeats
from .._trim import Trimmer, allocator_stats
from ..broker import bootstrap_of, create_topics
from ..observability import METRICS, event_timestamps, json_logging_config, start_health_server, turns_lag
from ..settings import META_TABLE, TURN_TABLE, StreamSettings
from ..worker import READY_MARKER
from ._versions import check_versions
from .audit import OffsetAudit
from .fatal import delivery_failed, inputs_of
from .patches import highwaters_from_fetch, limit_fetch_wait, redeliver_instead_of_drop
from .sender import BatchSender
from .store import FaustStore, raw_topic, state_table

log = logging.getLogger("attune.streams")


class Runtime:
    """Glue between Faust and the processor: batching, delivery, table writes, the timer."""

    def __init__(self, app: faust.App, processor: TurnProcessor, store: FaustStore, settings: StreamSettings):
        self.app = app
        self.processor = processor
        self.store = store
        self.settings = settings
        self._requested: dict[str, float] = {}
        self._last_report = time.monotonic()
        self.audit = OffsetAudit(app, bootstrap_of(settings.broker), settings.app_id, [TURNS.name])
        self.sender = BatchSender(app)
        self._lock = asyncio.Lock()  # the agent's batches and the timer's tail repair, one at a time
        self.trimmer = Trimmer()  # freed buffers back to the OS once the open conversations shrink

    @property
    def repaired(self) -> int:
        return self.audit.repaired

    def on_assigned(self, assigned: Any) -> None:
        self.audit.on_assigned(assigned)

    async def _audited(self, events: Sequence[faust.EventT]) -> tuple[list[Inbound], list[Inbound]]:
        """The batch's messages, each preceded by any the consumer skipped before it (see streams._faust.audit)."""
        items: list[Inbound] = []
        reread: list[Inbound] = []
        check_now = self.audit.check_now
        for e in events:
            m = e.message
            if not check_now(m.topic, m.partition, m.offset):
                missed = await self.audit.check(m.topic, m.partition, m.offset)
                reread += missed
                items += missed
            items.append(Inbound(m.topic, m.partition, m.offset, m.key, m.value))
        return items, reread

    async def handle(self, events: Sequence[faust.EventT]) -> BatchResult:
        async with self._lock:
            started = time.time()
            items, reread = await self._audited(events)
            res = await self._run(items, reread)
            METRICS.observe_batch(res, event_timestamps(events, TURNS.name), time.time(), started)
            return res

    async def _run(self, items: list[Inbound], reread: Sequence[Inbound]) -> BatchResult:
        res = self.processor.process(items, time.time(), defer_closes=True)
        try:
            await self._deliver(res, items)
        except BaseException:
            self.processor.reset_cache()
            raise
        await self._apply(res)
        for f in reread:  # after the table writes, as Faust acks its own events
            self.audit.ack(f)
        return res

    async def _apply(self, res: BatchResult) -> None:
        """Table writes after the outputs were delivered; their changelog is flushed by Faust's commit."""
        self.store.apply(res.writes)
        await self.sender.send(self.store.take_changelog())
        self.processor.on_batch_applied(res)

    async def repair_tail(self) -> None:
        """Process turns the consumer never delivered at a partition's tail (none as a rule)."""
        found = await self.audit.tail(busy=lambda _t, _p: self._lock.locked())
        if found:
            async with self._lock:
                started = time.time()
                res = await self._run(found, found)
                # Counted like any batch: the metrics must equal the records produced (a re-read turn
                # delivered by Faust later is a duplicate, counted as such, and scores nothing twice).
                METRICS.observe_batch(res, [], time.time(), started)

    async def _deliver(self, res: BatchResult, items: Sequence[Inbound]) -> None:
        """Send the batch's outputs and wait for their acknowledgement; closes are scored in between.

        Turn scores and alerts leave first: the producer's sender task needs three turns of the event
        loop to put them on the wire, and only then do the deferred checklists run (milliseconds each), so
        a batch that closes conversations does not hold back the scores and alerts of its other turns.
        A delivery that fails stops the worker without a commit (:mod:`.fatal`).
        """
        futs = await self._send(res.outputs, items)
        if res.closes:
            for _ in range(3):
                await asyncio.sleep(0)
            futs += await self._send(self.processor.finish_closes(res), items)
        if futs:
            try:
                await asyncio.gather(*futs)
            except Exception as exc:
                delivery_failed(inputs_of(items), exc)

    async def _send(self, outputs: Sequence[Outbound], items: Sequence[Inbound]) -> list[asyncio.Future[Any]]:
        try:
            return await self.sender.send((o.topic, o.partition, o.key, o.value) for o in outputs)
        except Exception as exc:
            delivery_failed(inputs_of(items), exc)

    async def handle_naive(self, event: faust.EventT) -> None:
        """One event at a time, each output awaited on its own: the baseline the benchmark compares to."""
        async with self._lock:
            started = time.time()
            items, reread = await self._audited([event])
            res = self.processor.process(items, time.time())
            for o in res.outputs:
                await (await self.app.producer.send(o.topic, o.key, o.value, o.partition, None, None))
            self.store.apply(res.writes)
            for t, p, k, v in self.store.take_changelog():  # one record at a time, as Faust's tables do
                await self.app.producer.send(t, k, v, p, None, None)
            self.processor.on_batch_applied(res)
            for f in reread:
                self.audit.ack(f)
            METRICS.observe_batch(res, event_timestamps([event], TURNS.name), time.time(), started)

    def refresh_gauges(self) -> None:
        """Open conversations and per-partition lag, on the event loop (the scrape thread only reads)."""
        METRICS.set_open_conversations(self.store.metas())
        owned = [tp for tp in self.app.consumer.assignment() if tp.topic == TURNS.name]
        METRICS.set_lag(
            turns_lag(
                {tp.partition: self.app.consumer.highwater(tp) for tp in owned}, self.audit.next_offsets(TURNS.name)
            )
        )
        METRICS.set_allocator(allocator_stats())  # a few microseconds; nothing where jemalloc is absent

    async def sweep(self) -> None:
        """Ask the owning agent (via the control topic) to close, flush or expire due conversations."""
        now = time.time()
        repeat_after = max(2.0, 4 * self.settings.timer_interval)
        for cid, partition, action in self.processor.due(now):
            if now - self._requested.get(cid, 0.0) < repeat_after:
                continue
            self._requested[cid] = now
            await self.app.producer.send(CONTROL.name, cid.encode(), control_record(cid, action), partition, None, None)
        for cid in [c for c, t in self._requested.items() if now - t > repeat_after]:
            del self._requested[cid]
        await self.repair_tail()
        self.refresh_gauges()
        await self.trimmer.maybe_trim(self.store.keys_held())
        if time.monotonic() - self._last_report > 10.0:
            self._last_report = time.monotonic()
            s = self.processor.stats
            log.info(
                "events=%d turns=%d scored=%d alerts=%d closed=%d dead_letters=%d duplicates=%d after_close=%d "
                "replays=%d re-read=%d",
                s.events,
                s.turns,
                s.scored,
                s.alerts,
                s.closed,
                s.dead_letters,
                s.duplicates,
                s.after_close,
                s.replays,
                self.repaired,
            )


def create_app(
    settings: StreamSettings, evaluator: Any = None, close_hooks: Sequence[CloseHook] = ()
) -> tuple[faust.App, Runtime]:
    """Build the Faust app (not started). ``evaluator`` defaults to :class:`scorers.Evaluator`."""
    if evaluator is None:
        from scorers import Evaluator

        evaluator = Evaluator()
    check_versions()  # fail fast on Faust/aiokafka versions this package was not verified against
    redeliver_instead_of_drop()  # a Faust race drops unprocessed messages after a rebalance, on any broker
    app = faust.App(settings.app_id, **settings.faust_config())
    source = raw_topic(app, TURNS.name, CONTROL.name, partitions=settings.partitions)
    tables: dict[str, faust.Table] = {}
    tables[TURN_TABLE] = state_table(
        app, TURN_TABLE, "turns", settings.partitions, "buffered turns in chunks of 16, keyed conversation_id:chunk"
    )
    tables[META_TABLE] = state_table(
        app,
        META_TABLE,
        "meta",
        settings.partitions,
        "per-conversation state: index ranges, crisis_pending, end marker, tombstone",
    )
    store = FaustStore(tables[TURN_TABLE], tables[META_TABLE])
    turn_hooks: list[Any] = []
    user_hooks: list[Any] = []
    if settings.judging:  # LLM judges: jobs out of this agent, run by the judge agent (streams.judging)
        from .judge_agent import install

        emitter, _ = install(app, settings)
        turn_hooks.append(emitter.on_turn)
        user_hooks.append(emitter.on_user)
        METRICS.watch_judge_stats(lambda: emitter.tier.stats)
        close_hooks = [*close_hooks, emitter.on_close]
    processor = TurnProcessor(
        evaluator,
        store,
        settings.timeouts,
        close_hooks,
        settings.limits,
        turn_hooks,
        user_hooks,
        emit_verdicts=not settings.judging,  # with a judge, the verdict follows the LLM checklist (streams.judging)
        emit_turn_alerts=not settings.alert_path,  # run_worker starts the alert path that sends them
    )
    rt = Runtime(app, processor, store, settings)

    if settings.naive:

        async def process_turns(stream: faust.StreamT) -> None:
            async for event in stream.events():
                await rt.handle_naive(event)

    else:

        async def process_turns(stream: faust.StreamT) -> None:
            # take_events: faust-streaming's Stream has it, its StreamT interface does not declare it
            async for events in stream.take_events(settings.batch_max, within=settings.batch_within):  # type: ignore[attr-defined]
                await rt.handle(events)

    app.agent(source, name="process_turns")(process_turns)
    app.timer(settings.timer_interval, name="sweep")(rt.sweep)

    @app.task
    async def _loop_lag() -> None:  # attune_event_loop_lag_seconds: a stalled loop delays alerts too
        await METRICS.watch_loop_lag()

    @app.on_partitions_assigned.connect  # type: ignore[arg-type]  # Faust's signal types want a sync receiver
    async def _assigned(sender: Any, assigned: Any, **kwargs: Any) -> None:
        rt.on_assigned(assigned)

    return app, rt


def freeze_long_lived() -> None:
    """Move every object alive now out of the cyclic collector's reach (``gc.freeze``).

    Why: a full (generation 2) collection walks every tracked object (tens of thousands after imports
    alone: Faust, aiokafka, pydantic, the scorers' compiled data), stalling every turn in flight, a p99
    turn->score cost (measured: docs/benchmarks.md, "2026-11-23: the worker's fetch wait, and where a slow turn waits").
    Frozen objects are still freed by reference counting; only garbage cycles among them would outlive the worker.
    """
    gc.collect()
    gc.freeze()


def run_worker(settings: StreamSettings, loglevel: str = "WARNING", log_format: str = "text") -> int:
    """Create the topics, then run one Faust worker in this process until SIGTERM/SIGINT."""
    health = start_health_server(METRICS, settings.metrics_host, settings.metrics_port)  # /healthz before Kafka
    asyncio.run(create_topics(bootstrap_of(settings.broker), settings.topics(), configs=settings.topic_configs()))
    asyncio.set_event_loop(asyncio.new_event_loop())
    if health is not None:
        health.attach(asyncio.get_event_loop())
    prof = settings.broker_profile
    if prof.fetch_max_wait_ms is not None:
        limit_fetch_wait(prof.fetch_max_wait_ms)
    if prof.highwaters_from_fetch:
        highwaters_from_fetch(bootstrap_of(settings.broker))
    app, rt = create_app(settings)
    quiet_repeats()  # aiokafka is imported by now: one reconnect error per 30 s while a broker is down
    alert_path = None
    if settings.alert_path:  # before Faust starts: alerts flow while the scoring agent joins and recovers
        from .._alert_path import AlertPathProcess

        alert_path = AlertPathProcess(
            settings.broker,
            app_id=settings.app_id,
            partitions=settings.partitions,
            profile=settings.profile,
            limits=settings.limits,
            on_counts=METRICS.count_path_alerts,
        ).start()
    watch = None
    if settings.broker_check_interval > 0:  # a broker that lost its state: exit saying what, never hang
        from .broker_watch import BrokerWatch

        watch = BrokerWatch(
            settings.broker,
            settings.app_id,
            settings.topics(),
            consumed=lambda: rt.audit.next_offsets(TURNS.name),
            table_keys=rt.store.changelog_sizes,
            open_conversations=lambda: [cid for cid, m in rt.store.metas() if is_open(m)],
            lost_dir=settings.data_dir,
        )
        app.timer(settings.broker_check_interval, name="broker_watch")(watch.tick)

    @app.on_rebalance_complete.connect  # type: ignore[arg-type]
    async def _announce(sender: Any, **kwargs: Any) -> None:
        # A machine-readable line for supervisors (demo, tests): this worker owns these turns partitions.
        owned = sorted(tp.partition for tp in app.consumer.assignment() if tp.topic == TURNS.name)
        freeze_long_lived()  # the recovered tables and the clients' state are long-lived as well
        print(
            f"{READY_MARKER} pid={os.getpid()} allocator={running()} partitions={','.join(map(str, owned))}",
            flush=True,
        )
        METRICS.set_ready(True)

    @app.on_partitions_revoked.connect  # type: ignore[arg-type]
    async def _unready(sender: Any, revoked: Any, **kwargs: Any) -> None:
        METRICS.set_ready(False)  # until the rebalance completes and the tables are recovered again

    worker = faust.Worker(
        app,
        loglevel=loglevel,
        quiet=True,
        redirect_stdouts=False,
        stdout=sys.stdout,
        logging_config=json_logging_config(loglevel) if log_format == "json" else None,
    )
    worker.spinner = None  # its cursor escapes would garble the ready lines supervisors parse
    # The crisis model now, not on the first user turn: that turn's alert does not wait for it, and its
    # tens of thousands of small objects are allocated (and frozen) before a burst, not scattered through one.
    detector_version()
    freeze_long_lived()
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        if alert_path is not None:
            alert_path.stop()
        if watch is not None and watch.lost is not None:
            from .broker_watch import EXIT_BROKER_STATE_LOST

            return EXIT_BROKER_STATE_LOST
        return int(exc.code or 0)
    if alert_path is not None:
        alert_path.stop()
    return 0
