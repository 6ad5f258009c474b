"""Streaming benchmark: the batched Faust agent next to a naive per-event agent, on a real broker.

For each agent (``batched`` = ``attune worker``, ``naive`` = ``attune worker --naive``: one event at a
time, each output awaited on its own, same scoring and tables) on a fresh embedded Tansu broker:

1. **throughput**: a backlog of conversations is published first, then one worker drains it; turns/s is
   the number of turns over the time from the first to the last output record (join and recovery
   excluded), and every record the batch path produces must arrive (checked by id). The CPU time the
   worker, the broker and this process (the output reader) used while draining is reported as a share of
   one core, with the machine's total, so the split on a shared machine is visible;
2. **latency**: live traffic at a fixed rate (default 500 turns/s) into a second fresh broker and worker
   (``--same-broker``: the backlog's; see :func:`run_mode` for why not by default); turn→score is the
   time from sending an assistant turn to receiving its ``turn_score``, crisis-turn→alert from sending a
   crisis user turn to receiving its ``crisis_disclosure`` alert (both measured by the same process, one
   clock).

Mode ``processor`` runs the same backlog through :class:`streams.TurnProcessor` in this process, with an
in-memory store and no broker (decode, score, encode outputs, table writes): the worker's own ceiling.

Conversations are the bundled demo samples (realistic text, crisis turns included) under fresh ids.

    .venv/bin/python bench/stream_bench.py [--backlog 600] [--rate 500] [--seconds 10] [--json out.json]
        [--modes processor,batched,naive]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from schemas import Conversation, Turn, encode
from schemas.topics import CONVERSATION_SCORES, CONVERSATION_VERDICTS, SAFETY_ALERTS, TURN_SCORES, TURNS
from scorers import Evaluator, evaluate_conversation
from streams import DictStore, EmbeddedBroker, Inbound, StreamSettings, TurnProcessor, WorkerProcess, create_topics
from streams.demo import bundled_samples
from streams.io import consume, load_conversations, producer_for

OUTPUTS = [TURN_SCORES.name, SAFETY_ALERTS.name, CONVERSATION_SCORES.name, CONVERSATION_VERDICTS.name]


def conversations(n: int, prefix: str) -> list[Conversation]:
    base, _ = load_conversations(bundled_samples())
    return [base[i % len(base)].model_copy(update={"conversation_id": f"{prefix}-{i:05d}"}) for i in range(n)]


def interleaved(convs: list[Conversation], open_at_once: int = 0) -> list[Turn]:
    """Round-robin over open conversations; each keeps its order.

    ``open_at_once`` 0: all conversations open together (they start together and, being of similar
    length, close together). N > 0: N are open at a time and a conversation that ends is replaced by the
    next one, so conversations start and close at a steady rate (``--live-open``).
    """
    pending = [iter(c.as_turns()) for c in convs]
    width = open_at_once or len(pending)
    slots, pending = pending[:width], pending[width:]
    out: list[Turn] = []
    while slots:
        still: list = []
        for it in slots:
            turn = next(it, None)
            if turn is not None:
                out.append(turn)
                still.append(it)
            elif pending:
                nxt = pending.pop(0)
                out.append(next(nxt))
                still.append(nxt)
        slots = still
    return out


def expected_ids(convs: list[Conversation]) -> set[str]:
    ids = set()
    for c in convs:
        for r in evaluate_conversation(c):
            ids.add(r.alert_id if r.kind == "safety_alert" else r.record_id)  # type: ignore[union-attr]
    return ids


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds a process has used so far (0 if it is gone or unknown)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def machine_seconds() -> dict[str, float]:
    """CPU seconds so far over every core, from one read of /proc/stat.

    ``machine``: used by all processes (steal excluded). ``steal``: time the hypervisor gave to other
    guests while this VM wanted to run. On a shared host it is the one direct sign that a slow run was
    the machine's, not the code's.
    """
    vals = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    steal = vals[7] if len(vals) > 7 else 0
    return {"machine": (sum(vals[:7]) - idle) / _TICK, "steal": steal / _TICK}


def profile_worker(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    """Sample the worker with py-spy (``pip install py-spy``) while it drains; raw stacks go to ``out``.

    ``--gil``: only the thread holding the GIL is sampled, so waits for the GIL do not show as work.
    """
    spy = Path(sys.executable).with_name("py-spy")
    cmd = [str(spy), "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "250", "--gil"]
    print(f"py-spy -> {out}", file=sys.stderr)
    return subprocess.Popen([*cmd, "--format", "raw", "--nonblocking", "--output", str(out)], stdout=subprocess.DEVNULL)


class CpuMeter:
    """CPU used by named processes (and the whole machine) between :meth:`start` and :meth:`stop`."""

    def __init__(self, pids: dict[str, int | None]) -> None:
        self.pids = pids
        self.t0 = time.monotonic()
        self.before = {n: cpu_seconds(p) for n, p in pids.items()} | machine_seconds()

    def stop(self) -> dict[str, float]:
        """Percent of one core per process over the interval (machine and steal are out of 100 x cores)."""
        wall = time.monotonic() - self.t0
        after = {n: cpu_seconds(p) for n, p in self.pids.items()} | machine_seconds()
        self.used = {n: after[n] - self.before[n] for n in after}
        return {n: round(100 * self.used[n] / wall) for n in after}


class Collector:
    """Reads the output topics in the background; records the first arrival time of every id.

    Records are parsed with orjson only (id and position), not validated: the reader shares the cores
    with the worker, and the worker's outputs are validated against the batch path in the tests.
    """

    def __init__(self, broker: str) -> None:
        self.broker = broker
        self.first: dict[str, float] = {}
        self.records: dict[str, tuple[str, str | None, int | None, str | None]] = {}
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for _topic, _k, value, at in consume(self.broker, OUTPUTS, stop=self.stop):
            obj = orjson.loads(value)
            kind = obj["kind"]
            rid = obj["alert_id"] if kind == "safety_alert" else obj["record_id"]
            if rid not in self.first:
                rec = (kind, obj.get("conversation_id"), obj.get("turn_index"), obj.get("alert_type"))
                self.first[rid] = at
                self.records[rid] = rec

    async def wait_for(self, ids: set[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ids <= self.first.keys():
                return True
            await asyncio.sleep(0.05)
        return False

    async def close(self) -> None:
        self.stop.set()
        if self.task is not None:
            await self.task


async def send_all(broker: str, turns: list[Turn], rate: float | None) -> dict[tuple[str, int], float]:
    """Publish turns (at ``rate`` per second, or as fast as possible); returns send times by (cid, idx)."""
    producer = producer_for(broker, "tansu")
    await producer.start()
    sent: dict[tuple[str, int], float] = {}
    try:
        start = time.monotonic()
        futs = []
        for i, t in enumerate(turns):
            if rate:
                delay = start + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            futs.append(await producer.send(TURNS.name, encode(t), key=t.conversation_id.encode()))
            sent[(t.conversation_id, t.turn_index)] = time.time()
        await asyncio.gather(*futs)
    finally:
        await producer.stop()
    return sent


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def agent_batches(port: int) -> tuple[float, float]:
    """(turns processed, agent batches) so far, from the worker's Prometheus endpoint."""
    from urllib.request import urlopen

    text = urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    turns = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("attune_turns_total{"))
    batches = sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("attune_batch_seconds_count")
    )
    return turns, batches


async def run_mode(mode: str, args: argparse.Namespace, logdir: Path) -> dict[str, object]:
    """Throughput on one fresh broker, then latency on another (unless ``--same-broker``).

    Why two brokers: Tansu's memory engine costs more per request the more records a topic holds
    (``bench/tansu_growth.py``: at 1,000 records/s into one topic, p50 produce->consume latency 3.4 ms at
    4k records, 17 ms at 16k, 68 ms at 32k; broker CPU 38 % -> 98 % of a core). After the backlog phase
    the turns topic and the changelogs hold ~9k-18k records each, so on the same broker the live phase
    measures Tansu's growth as much as the worker (a real Kafka's per-request cost does not grow so).
    """
    result: dict[str, object] = {"mode": mode}
    with EmbeddedBroker(log_path=logdir / f"tansu-{mode}.log") as broker:
        await drain_phase(mode, args, logdir, broker, result)  # with --same-broker, the live phase too
    if not args.same_broker:
        with EmbeddedBroker(log_path=logdir / f"tansu-{mode}-live.log") as broker:
            await live_phase(mode, args, logdir, broker, result)
    return result


async def start_worker(
    mode: str, args: argparse.Namespace, logdir: Path, broker: EmbeddedBroker, tag: str
) -> tuple[WorkerProcess, int]:
    extra = ["--naive"] if mode == "naive" else []
    metrics_port = free_port()
    wargs = [*extra, "--inactivity-timeout", "120", "--metrics-port", str(metrics_port), *args.worker_arg]
    worker = WorkerProcess(broker.url, "tansu", wargs, logdir / f"w-{mode}-{tag}.log")
    await asyncio.to_thread(worker.wait_ready, 90)
    return worker, metrics_port


async def prepared(broker: EmbeddedBroker) -> Collector:
    """The worker's topics on ``broker``, and a reader of the output topics already running."""
    settings = StreamSettings(broker=broker.url, profile="tansu")
    await create_topics(broker.bootstrap, settings.topics(), configs=settings.topic_configs())
    collector = Collector(broker.url)
    collector.start()
    return collector


async def drain_phase(
    mode: str, args: argparse.Namespace, logdir: Path, broker: EmbeddedBroker, result: dict[str, object]
) -> None:
    """A published backlog drained by a worker started after it (see the module docstring)."""
    collector = await prepared(broker)
    backlog = conversations(args.backlog, f"{mode}-backlog")
    backlog_turns = interleaved(backlog)
    want = expected_ids(backlog)
    t0 = time.monotonic()
    await send_all(broker.url, backlog_turns, None)
    result["publish_turns_per_s"] = round(len(backlog_turns) / (time.monotonic() - t0))
    worker, metrics_port = await start_worker(mode, args, logdir, broker, "drain")
    try:
        meter = CpuMeter({"worker": worker.pid, "broker": broker.pid, "bench": os.getpid()})
        drain_spy = args.py_spy and args.py_spy_phase == "drain"
        spy = profile_worker(worker.pid, args.py_spy, logdir / f"py-spy-{mode}.txt") if drain_spy else None
        complete = await collector.wait_for(want, args.drain_timeout)
        if spy is not None:
            await asyncio.to_thread(spy.wait)
        result["drain_cpu_pct"] = meter.stop()
        # CPU per turn is steadier than turns/s on a shared machine (others' load stretches wall time).
        result["worker_cpu_ms_per_turn"] = round(1000 * meter.used["worker"] / len(backlog_turns), 3)
        arrivals = [collector.first[i] for i in want if i in collector.first]
        # From the scoring agent's first record: the alert path sends the backlog's alerts while the agent
        # still joins the group and recovers its tables, which must not count as draining time.
        scored = [
            collector.first[i] for i in want if i in collector.first and collector.records[i][0] != "safety_alert"
        ]
        span = max(arrivals) - min(scored) if scored else float("nan")
        events, batches = agent_batches(metrics_port)
        result.update(
            drain_mean_batch=round(events / batches, 1) if batches else None,
            backlog_turns=len(backlog_turns),
            backlog_complete=complete,
            backlog_records=len(want),
            backlog_received=len(arrivals),
            turns_per_s=round(len(backlog_turns) / span) if complete and span > 0 else None,
        )
        if args.same_broker:
            await live_phase(mode, args, logdir, broker, result, worker, collector)
    finally:
        worker.stop()
        await collector.close()


async def live_phase(
    mode: str,
    args: argparse.Namespace,
    logdir: Path,
    broker: EmbeddedBroker,
    result: dict[str, object],
    worker: WorkerProcess | None = None,
    collector: Collector | None = None,
) -> None:
    """Live traffic at ``--rate`` for ``--seconds``: turn->score and crisis->alert latency."""
    own = worker is None
    if collector is None:
        collector = await prepared(broker)
    if worker is None:
        worker, _ = await start_worker(mode, args, logdir, broker, "live")
    stage = None
    if args.model_stage:  # the learned-model stage on the same machine, busy the whole live phase
        with open(logdir / f"model-stage-{mode}.log", "w") as log:  # the child keeps its own copy of the fd
            stage = subprocess.Popen(
                [sys.executable, "-m", "attune", "model-stage", "--broker", broker.url, "--profile", "tansu"],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        await asyncio.sleep(8)  # group join and model load, before the warm-up
    try:
        # Warm-up, not measured: every bundled sample once at the live rate (the producer's and the
        # reader's first requests, the worker's first sends to each topic).
        warm = conversations(8, f"{mode}-warm")
        await send_all(broker.url, interleaved(warm), args.rate)
        await collector.wait_for(expected_ids(warm), args.drain_timeout)
        live = conversations(max(1, int(args.rate * args.seconds / 6.5)), f"{mode}-live")
        live_turns = interleaved(live, args.live_open)
        live_want = expected_ids(live)
        meter = CpuMeter({"worker": worker.pid, "broker": broker.pid, "bench": os.getpid()})
        live_spy = args.py_spy and args.py_spy_phase == "live"
        spy = profile_worker(worker.pid, args.py_spy, logdir / f"py-spy-live-{mode}.txt") if live_spy else None
        # This process is the clock: a full collection of its growing id maps paused it 40-64 ms in the
        # middle of the live phase (seen in a gc.callbacks trace), which read as turn latency. As timeit
        # does, the measured interval runs without the cyclic collector.
        gc.collect()
        gc.disable()
        try:
            sent = await send_all(broker.url, live_turns, args.rate)
            live_complete = await collector.wait_for(live_want, args.drain_timeout)
        finally:
            gc.enable()
        if spy is not None:
            await asyncio.to_thread(spy.wait)
        result["live_cpu_pct"] = meter.stop()
        score_lat, alert_lat = [], []
        trace: list[tuple[float, str, float]] = []
        for rid in live_want:
            rec = collector.records.get(rid)
            if rec is None:
                continue
            kind, cid, turn_index, alert_type = rec
            key = (cid, turn_index)
            if kind == "turn_score" and key in sent:
                score_lat.append(1000 * (collector.first[rid] - sent[key]))
                trace.append((sent[key], "score", score_lat[-1]))
            elif kind == "safety_alert" and alert_type == "crisis_disclosure" and key in sent:
                alert_lat.append(1000 * (collector.first[rid] - sent[key]))
                trace.append((sent[key], "alert", alert_lat[-1]))
        # The broker slows as the run fills its topics (bench/tansu_growth.py): the two halves show how much.
        start = min(sent.values()) if sent else 0.0
        halves: tuple[list[float], list[float]] = ([], [])
        for t, kind, ms in trace:
            if kind == "score":
                halves[int(t - start >= args.seconds / 2)].append(ms)
        if args.trace and trace:
            t0 = min(t for t, _, _ in trace)
            rows = sorted((round(t - t0, 3), kind, round(ms, 1)) for t, kind, ms in trace)
            Path(f"{args.trace}.{mode}.json").write_bytes(orjson.dumps(rows))
        result.update(
            live_broker="the backlog's" if args.same_broker else "fresh",
            live_rate=args.rate,
            live_turns=len(live_turns),
            live_complete=live_complete,
            score_ms_p50=round(pct(score_lat, 0.5), 1),
            score_ms_p99=round(pct(score_lat, 0.99), 1),
            score_ms_p99_halves=[round(pct(h, 0.99), 1) for h in halves],
            alert_ms_p50=round(pct(alert_lat, 0.5), 1),
            alert_ms_p99=round(pct(alert_lat, 0.99), 1),
            n_scores=len(score_lat),
            n_alerts=len(alert_lat),
        )
    finally:
        if stage is not None:
            stage.terminate()
            result["model_stage_exit"] = stage.wait(timeout=30)
        if own:
            worker.stop()
            await collector.close()


def run_processor(args: argparse.Namespace) -> dict[str, object]:
    """The backlog through TurnProcessor in this process (no broker, no Faust): the worker's own ceiling.

    Batches of ``--batch`` events, as the agent takes them; every record of the batch path must come out.
    """
    convs = conversations(args.backlog, "processor-backlog")
    turns = interleaved(convs)
    items = [Inbound(TURNS.name, 0, i, t.conversation_id.encode(), encode(t)) for i, t in enumerate(turns)]
    store = DictStore()
    proc = TurnProcessor(Evaluator(), store)
    got: set[str] = set()
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(items), args.batch):
        res = proc.process(items[i : i + args.batch], time.time())
        store.apply(res.writes)
        proc.on_batch_applied(res)
        for o in res.outputs:
            obj = orjson.loads(o.value)
            got.add(obj["alert_id"] if o.kind == "safety_alert" else obj["record_id"])
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    want = expected_ids(convs)  # after timing: the batch path must not warm the text caches first
    return {
        "mode": "processor",
        "backlog_turns": len(items),
        "backlog_complete": got == want,
        "live_complete": True,
        "turns_per_s": round(len(items) / elapsed),
        "worker_cpu_ms_per_turn": round(1000 * cpu / len(items), 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backlog", type=int, default=600, help="conversations in the throughput backlog")
    p.add_argument("--rate", type=float, default=500.0, help="live traffic, turns per second")
    p.add_argument("--seconds", type=float, default=10.0, help="duration of the live phase")
    p.add_argument("--drain-timeout", type=float, default=120.0)
    p.add_argument("--modes", default="processor,batched,naive", help="any of processor, batched, naive")
    p.add_argument("--worker-arg", action="append", default=[], help="extra `attune worker` argument (repeat)")
    p.add_argument("--py-spy", type=float, default=0, help="profile the worker's drain for this many seconds")
    p.add_argument("--live-open", type=int, default=0, help="conversations open at once in the live phase (0: all)")
    p.add_argument("--same-broker", action="store_true", help="live phase on the backlog's broker (Tansu slows)")
    p.add_argument("--py-spy-phase", choices=["drain", "live"], default="drain", help="which phase --py-spy samples")
    p.add_argument("--batch", type=int, default=500, help="events per batch in the processor mode")
    p.add_argument("--json", default=None, help="also write the results here")
    p.add_argument(
        "--model-stage", action="store_true", help="run `attune model-stage` on the live broker during the live phase"
    )
    p.add_argument("--trace", default=None, help="write (sent_at, score|alert, latency_ms) rows to TRACE.<mode>.json")
    args = p.parse_args(argv)
    logdir = Path(tempfile.mkdtemp(prefix="attune-bench-"))
    modes = args.modes.split(",")
    results = [run_processor(args) if m == "processor" else asyncio.run(run_mode(m, args, logdir)) for m in modes]
    by = {r["mode"]: r for r in results}
    summary: dict[str, object] = {"results": results, "logs": str(logdir)}
    if "batched" in by and "naive" in by and by["batched"].get("turns_per_s") and by["naive"].get("turns_per_s"):
        summary["throughput_ratio"] = round(by["batched"]["turns_per_s"] / by["naive"]["turns_per_s"], 2)  # type: ignore[operator]
    cols = ["mode", "turns_per_s", "backlog_complete", "score_ms_p50", "score_ms_p99", "score_ms_p99_halves"]
    cols += ["alert_ms_p50", "alert_ms_p99"]
    cols += ["worker_cpu_ms_per_turn", "drain_cpu_pct", "live_cpu_pct"]
    print(" | ".join(cols))
    for r in results:
        print(" | ".join(str(r.get(c)) for c in cols))
    if "throughput_ratio" in summary:
        print(f"batched / naive throughput: {summary['throughput_ratio']}x")
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    ok = all(r.get("backlog_complete") and r.get("live_complete") for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
