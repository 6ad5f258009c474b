"""Memory per open conversation in the processor: what a worker holds for a conversation between its turns.

``--conversations`` 20-turn conversations (alternating user and assistant, the burst bench's lines) are fed to
:class:`streams.TurnProcessor` on a :class:`streams.DictStore` turn by turn across all of them (all open at
once, none ended), in batches of ``--batch`` events with the writes applied after each batch, as the worker
does. tracemalloc measures what is allocated and still live afterwards: the store's two tables plus the
processor's history cache, over a baseline taken after a warm-up run (module caches, compiled patterns).

``--store faust``: the worker's own store, a :class:`streams._faust.FaustStore` over two Faust memory tables
(buffered turns kept as bytes), instead of the plain dict store. The figure after ``--history-idle`` seconds
without a turn is printed too (the processor then drops its decoded copy of each conversation's history).

``--recovered``: before the last turn of each conversation, every table value goes through an orjson round trip
and the history cache is dropped, as in a worker that has just recovered its tables from the changelog.

The same feed is then timed without tracemalloc (turns/s, process + apply, best of ``--repeat`` runs: the
machine is shared), once with the evaluator and once with its results memoized by text, so the second figure is
the processor's own cost (decode, state, encode).

    .venv/bin/python bench/processor_memory.py [--conversations 2000] [--turns 20] [--batch 500] [--recovered]
        [--store dict|faust] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from typing import Any

import orjson

from schemas import Turn, encode
from schemas.topics import TURNS
from scorers import Evaluator
from streams import DictStore, Inbound, TurnProcessor
from streams._core import is_open

LINES = (
    "I've been feeling really low since the move and I can't sleep.",
    "That sounds exhausting. What has the move changed most for you?",
    "Mostly that I don't know anyone here and evenings are lonely.",
    "Lonely evenings are hard. Is there one small thing that helped before?",
)


class Memoized:
    """The evaluator with its results reused per text: record ids go stale, the processor's work does not."""

    def __init__(self, ev: Evaluator) -> None:
        self.ev = ev
        self.user: dict[tuple[str, frozenset[str]], Any] = {}
        self.assistant: dict[str, Any] = {}

    def on_user_turn(self, cid: str, idx: int, text: str, prior: frozenset[str]) -> Any:
        key = (text, prior)
        if key not in self.user:
            self.user[key] = self.ev.on_user_turn(cid, idx, text, prior)
        return self.user[key]

    def on_assistant_turn(self, ex: Any, **kw: Any) -> Any:
        if ex.response not in self.assistant:
            self.assistant[ex.response] = self.ev.on_assistant_turn(ex, **kw)
        return self.assistant[ex.response]


def events(prefix: str, conversations: int, turns: int) -> list[Inbound]:
    """Turn j of every conversation, then turn j + 1: all open together, none ended."""
    out: list[Inbound] = []
    for j in range(turns):
        for i in range(conversations):
            cid = f"{prefix}-{i:06d}"
            t = Turn(conversation_id=cid, turn_index=j, role="user" if j % 2 == 0 else "assistant", text=LINES[j % 4])
            out.append(Inbound(TURNS.name, 0, len(out), cid.encode(), encode(t)))
    return out


def run(proc: TurnProcessor, store: Any, items: list[Inbound], batch: int) -> float:
    """Feed ``items`` in batches, applying writes after each; returns the seconds spent."""
    t0 = time.perf_counter()
    for i in range(0, len(items), batch):
        res = proc.process(items[i : i + batch], 1000.0)
        store.apply(res.writes)
        if hasattr(store, "take_changelog"):
            store.take_changelog()  # what the worker sends; dropped here
        proc.on_batch_applied(res)
    return time.perf_counter() - t0


def make_store(kind: str) -> Any:
    """A fresh store: the dict store, or the worker's Faust store over two memory tables (never started)."""
    if kind == "dict":
        return DictStore()
    import faust

    from streams._faust import FaustStore
    from streams._faust.store import state_table

    app = faust.App(f"memory-bench-{time.monotonic_ns()}", broker="kafka://127.0.0.1:1", store="memory://")
    tables = {name: state_table(app, f"t-{name}", name, 4) for name in ("turns", "meta")}  # as create_app does
    return FaustStore(tables["turns"], tables["meta"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conversations", type=int, default=2000)
    p.add_argument("--turns", type=int, default=20)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--recovered", action="store_true", help="table values as decoded from the changelog")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per evaluator (the best counts)")
    p.add_argument("--store", choices=("dict", "faust"), default="dict", help="the processor's store")
    args = p.parse_args(argv)
    ev = Evaluator()
    warm_store = make_store(args.store)
    run(TurnProcessor(ev, warm_store), warm_store, events("warm", 50, args.turns), args.batch)
    items = events("open", args.conversations, args.turns)
    del warm_store
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    store = make_store(args.store)
    proc = TurnProcessor(ev, store)
    if args.recovered:
        last = len(items) - args.conversations
        seconds = run(proc, store, items[:last], args.batch)
        if args.store != "dict":
            raise SystemExit("--recovered needs --store dict")
        for table in store.tables.values():
            for key, value in table.items():
                table[key] = orjson.loads(orjson.dumps(value))
        proc.reset_cache()
        seconds += run(proc, store, items[last:], args.batch)
    else:
        seconds = run(proc, store, items, args.batch)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    proc.due(1000.0 + proc.timeouts.history_idle + 1.0)  # every conversation idle: decoded histories dropped
    gc.collect()
    idle = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert sum(1 for _, m in store.metas() if is_open(m)) == args.conversations, "all should be open"
    kb = used / args.conversations / 1024
    print(
        f"{args.conversations} open {args.turns}-turn conversations ({args.store} store): {kb:.1f} KB per open "
        f"conversation; {idle / args.conversations / 1024:.1f} KB after {proc.timeouts.history_idle:g} s idle"
    )
    print(f"(fed in {seconds:.1f} s under tracemalloc; store + history cache, warm-up excluded)")
    del store, proc
    gc.collect()
    for label, evaluator in (("evaluator", ev), ("memoized scores", Memoized(ev))):
        best = float("inf")
        for _ in range(args.repeat):
            store = make_store(args.store)
            proc = TurnProcessor(evaluator, store)
            run(proc, store, events("warm", 50, args.turns), args.batch)
            best = min(best, run(proc, store, items, args.batch))
        print(f"speed, {label}: {len(items) / best:,.0f} turns/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
