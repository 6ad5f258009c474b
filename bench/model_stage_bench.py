"""Throughput and memory of the model stage (``attune model-stage``) on the embedded broker.

Publishes ``--conversations`` conversations of ``--turns`` turns (half of them assistant replies) to a fresh
embedded broker at once, then runs the stage in this process until it has scored every reply, and prints
replies/s end to end (consume, embed, produce, commit), the share of that time spent in the model, and the
process's peak RSS. The inline worker is not running: this is the stage's own capacity on one core (the
ONNX session uses one thread), which is what sizes how many stages a given live rate needs.

    .venv/bin/python bench/model_stage_bench.py [--conversations 300] [--turns 10] [--batch-max 64]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time

from schemas import Conversation, Message
from streams import EmbeddedBroker
from streams.io import publish, schedule
from streams.model_stage import run_stage

USER = [
    "i have been feeling so tired of everything lately, work is piling up and i cant sleep",
    "My sister and I had a huge fight about mum's care and now she won't answer my calls.",
    "I passed my driving test today!! third try haha",
    "honestly I don't know why I even bother, nobody at school talks to me",
]
ASSISTANT = [
    "That sounds exhausting, especially with sleep slipping away too. What's keeping you up most nights?",
    "Have you tried making a schedule? Lists help. Also try to drink less coffee after 2pm.",
    "Congratulations! Third time's the charm - how does it feel to finally have it?",
    "I'm sorry it feels that lonely at school. Is there anyone there you'd like to be closer to?",
]


def conversations(n: int, turns: int) -> list[Conversation]:
    out = []
    for i in range(n):
        msgs = [
            Message(role="user" if j % 2 == 0 else "assistant", text=(USER if j % 2 == 0 else ASSISTANT)[(i + j) % 4])
            for j in range(turns)
        ]
        out.append(Conversation(conversation_id=f"bench-{i:05d}", turns=msgs))
    return out


async def main_async(n: int, turns: int, batch_max: int) -> None:
    convs = conversations(n, turns)
    replies = sum(1 for c in convs for m in c.turns if m.role == "assistant")
    with EmbeddedBroker() as broker:
        t0 = time.monotonic()
        await publish(broker.url, "attune.turns", schedule(convs), profile="tansu")
        print(f"published {n * turns} turns ({replies} replies) in {time.monotonic() - t0:.1f} s")
        t0 = time.monotonic()
        stats = await run_stage(broker.url, profile="tansu", batch_max=batch_max, idle_timeout=3.0, report_every=1e9)
    assert stats.scored == replies, (stats.scored, replies)
    assert stats.first_event is not None and stats.last_batch is not None
    wall = stats.last_batch - stats.first_event  # start-up (group join, ONNX load) is reported apart
    print(stats.line())
    print(f"start-up (consumer group join, model load) {stats.first_event - t0:.1f} s")
    print(
        f"end to end: {stats.scored / wall:,.1f} replies/s ({batch_max} events per batch); model share of the time "
        f"{stats.model_seconds / wall:.0%}; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--batch-max", type=int, default=128)
    args = ap.parse_args()
    asyncio.run(main_async(args.conversations, args.turns, args.batch_max))


if __name__ == "__main__":
    main()
