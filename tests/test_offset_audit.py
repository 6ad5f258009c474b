"""The offset audit and the Faust redelivery patch, without a broker: what Faust 0.15.3 loses and how it is read
back (see streams/_faust/audit.py and streams/_faust/patches.py; the fault suite shows it against a real broker)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest
from _stream_helpers import synthetic

from schemas.topics import JUDGE_JOBS
from scorers import exchanges_of
from streams._core import Inbound
from streams._faust import OffsetAudit

JOBS = JUDGE_JOBS.name


class FakeConsumer:
    def __init__(self) -> None:
        self.acked: list[tuple[str, int, int]] = []
        self.ends: dict[tuple[str, int], int] = {}
        self._paused_partitions: set[Any] = set()

    def ack(self, message: Any) -> bool:
        self.acked.append((message.topic, message.partition, message.offset))
        return True

    def highwater(self, tp: Any) -> int | None:
        return self.ends.get((tp.topic, tp.partition))


def fake_app() -> Any:
    return SimpleNamespace(
        consumer=FakeConsumer(), rebalancing=False, flow_control=SimpleNamespace(is_active=lambda: True)
    )


def audit_with(log: dict[tuple[str, int], list[bytes]], committed: dict[tuple[str, int], int]) -> OffsetAudit:
    """An audit whose broker is ``log`` (topic, partition -> values by offset) with ``committed`` offsets."""
    audit = OffsetAudit(fake_app(), "unused:9092", "attune", [JOBS])
    audit.fetches = []  # type: ignore[attr-defined]

    async def _committed(tps: list[tuple[str, int]]) -> None:
        for tp in tps:
            audit._next[tp] = committed.get(tp, 0)

    async def fetch(topic: str, partition: int, start: int, end: int) -> list[Inbound]:
        audit.fetches.append((topic, partition, start, end))  # type: ignore[attr-defined]
        values = log[(topic, partition)]
        return [Inbound(topic, partition, o, b"k", values[o]) for o in range(start, min(end, len(values)))]

    audit._committed = _committed  # type: ignore[method-assign]
    audit.fetch = fetch  # type: ignore[method-assign]
    return audit


def tps(*parts: int, topic: str = JOBS) -> list[Any]:
    return [SimpleNamespace(topic=topic, partition=p) for p in parts]


def test_check_reads_back_what_was_skipped_from_the_committed_offset_on() -> None:
    log = {(JOBS, 0): [b"m%d" % i for i in range(10)]}
    audit = audit_with(log, {(JOBS, 0): 3})

    async def run() -> list[list[int]]:
        audit.on_assigned(tps(0) + tps(0, topic="other"))
        got = []
        for offset in (3, 4, 7, 8, 9):  # 5 and 6 never delivered
            got.append([f.offset for f in await audit.check(JOBS, 0, offset)])
        return got

    assert asyncio.run(run()) == [[], [], [5, 6], [], []]
    assert audit.repaired == 2
    assert audit.next_offsets(JOBS) == {0: 10}


def test_first_message_beyond_the_committed_offset_is_a_skip_too() -> None:
    """The race right after a restart: the first message delivered is not the committed one."""
    audit = audit_with({(JOBS, 1): [b"x"] * 6}, {(JOBS, 1): 2})

    async def run() -> list[int]:
        audit.on_assigned(tps(1))
        return [f.offset for f in await audit.check(JOBS, 1, 5)]

    assert asyncio.run(run()) == [2, 3, 4]


def test_duplicates_and_unaudited_topics_read_nothing_back() -> None:
    audit = audit_with({(JOBS, 0): [b"x"] * 5}, {(JOBS, 0): 0})

    async def run() -> list[list[Inbound]]:
        audit.on_assigned(tps(0))
        return [await audit.check(JOBS, 0, o) for o in (0, 1, 1, 0, 2)] + [await audit.check("other", 0, 9)]

    assert all(not r for r in asyncio.run(run()))
    assert audit.fetches == []  # type: ignore[attr-defined]


def test_a_new_assignment_starts_from_its_committed_offsets() -> None:
    committed = {(JOBS, 0): 0}
    audit = audit_with({(JOBS, 0): [b"x"] * 20}, committed)

    async def run() -> list[int]:
        audit.on_assigned(tps(0))
        await audit.check(JOBS, 0, 0)
        committed[(JOBS, 0)] = 12  # another worker owned it meanwhile and committed up to 12
        audit.on_assigned(tps(0))
        return [f.offset for f in await audit.check(JOBS, 0, 14)]

    assert asyncio.run(run()) == [12, 13]


def test_tail_reads_back_what_never_arrived_once_idle() -> None:
    log = {(JOBS, 0): [b"x"] * 6, (JOBS, 1): [b"y"] * 3}
    audit = audit_with(log, {(JOBS, 0): 0, (JOBS, 1): 0})
    consumer = audit.app.consumer

    async def run() -> tuple[list[Any], ...]:
        audit.on_assigned(tps(0, 1))
        for o in range(4):  # offsets 4 and 5 of partition 0 were counted read but never delivered
            await audit.check(JOBS, 0, o)
        for o in range(3):
            await audit.check(JOBS, 1, o)
        consumer.ends = {(JOBS, 0): 6, (JOBS, 1): 3}
        not_idle = await audit.tail(idle_s=60)
        busy = await audit.tail(busy=lambda t, p: True, idle_s=0)
        audit.app.rebalancing = True
        rebalancing = await audit.tail(idle_s=0)
        audit.app.rebalancing = False
        first_look = await audit.tail(idle_s=0)  # behind since now: could be a message in transit
        found = await audit.tail(idle_s=0)
        again = await audit.tail(idle_s=0)
        return not_idle, busy, rebalancing, first_look, found, again

    not_idle, busy, rebalancing, first_look, found, again = asyncio.run(run())
    assert not_idle == busy == rebalancing == first_look == again == []
    assert [(f.partition, f.offset) for f in found] == [(0, 4), (0, 5)]
    assert audit.next_offsets(JOBS) == {0: 6, 1: 3}


def test_a_partition_waiting_behind_busy_ones_is_not_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14 (200,000 turns at once): Faust serves partitions unevenly, so one can sit behind its end
    with its messages buffered while the others deliver. That is not a skip: it is read back only after
    BUSY_QUIET_FACTOR times the idle time, and then in chunks of at most MAX_REREAD."""
    import streams._faust.audit as audit_mod

    clock = [1000.0]
    monkeypatch.setattr(audit_mod.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(audit_mod, "MAX_REREAD", 3)
    log = {(JOBS, 0): [b"x"] * 10, (JOBS, 1): [b"y"] * 100}
    audit = audit_with(log, {(JOBS, 0): 0, (JOBS, 1): 0})
    audit.app.consumer.ends = {(JOBS, 0): 10, (JOBS, 1): 100}

    async def run() -> list[list[int]]:
        audit.on_assigned(tps(0, 1))
        await audit.check(JOBS, 0, 0)
        seen = []
        for o in range(90):  # partition 1 keeps delivering, one message a second; partition 0 waits
            clock[0] += 1.0
            await audit.check(JOBS, 1, o)
            seen.append([f.offset for f in await audit.tail(idle_s=5.0)])
        return seen

    seen = asyncio.run(run())
    first = next(i for i, got in enumerate(seen) if got)
    assert first >= audit_mod.BUSY_QUIET_FACTOR * 5 - 1  # not before 30 s of quiet while others deliver
    assert seen[first] == [1, 2, 3]  # bounded: MAX_REREAD at a time
    assert [o for got in seen[first:] for o in got] == list(range(1, 10))  # then the rest, chunk by chunk
    assert all(len(got) <= 3 for got in seen)


def test_a_large_skip_is_read_back_in_bounded_chunks() -> None:
    import streams._faust.audit as audit_mod

    log = {(JOBS, 0): [b"m%d" % i for i in range(5 * audit_mod.MAX_REREAD + 10)]}
    audit = audit_with(log, {(JOBS, 0): 0})
    consumer = audit.app.consumer
    last = len(log[(JOBS, 0)]) - 1

    async def run() -> list[int]:
        audit.on_assigned(tps(0))
        got = [f.offset for f in await audit.check(JOBS, 0, last)]  # everything before it skipped
        assert len(got) == audit_mod.MAX_REREAD and audit.pending_gaps() == last - audit_mod.MAX_REREAD
        consumer.ends = {(JOBS, 0): last + 1}
        while audit.pending_gaps():
            chunk = [f.offset for f in await audit.tail(idle_s=60)]  # known skips: no idle wait
            assert 0 < len(chunk) <= audit_mod.MAX_REREAD
            got += chunk
        return got

    assert asyncio.run(run()) == list(range(last))
    assert audit.repaired == last


def test_ack_of_a_read_back_message_reaches_faust() -> None:
    audit = audit_with({}, {})
    audit.ack(Inbound(JOBS, 2, 7, b"k", b"v"))
    assert audit.app.consumer.acked == [(JOBS, 2, 7)]


def test_judge_agent_runs_skipped_jobs_and_acks_in_offset_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Faust delivers jobs 0, 1, 4 of a partition and skips 2, 3: the agent reads them back, runs them, and
    no ack (Faust's or the audit's) of a later offset goes out before every earlier job finished."""
    import streams._faust.judge_agent as judging
    from scorers.judges import JudgeConfig, JudgeTier, turn_job

    conv = synthetic(1, 10, prefix="audit")[0]
    jobs = [turn_job(ex) for ex in exchanges_of(conv)]  # 5 jobs, offsets 0..4
    values = [j.model_dump_json().encode() for j in jobs]
    ran: list[int] = []
    acks: list[tuple[str, int, list[int]]] = []

    async def run_job(tier: Any, job: Any) -> list:
        await asyncio.sleep(0.01 * (5 - job.turn_index // 2))  # later offsets finish first
        ran.append(job.turn_index // 2)
        return []

    class Stream:
        def noack(self) -> Stream:
            return self

        async def events(self) -> Any:
            for off in (0, 1, 4):
                yield SimpleNamespace(
                    message=SimpleNamespace(tp=tp, topic=JOBS, partition=0, offset=off, value=values[off])
                )
            while agent._tasks:
                await asyncio.sleep(0.01)

        async def ack(self, event: Any) -> None:
            acks.append(("faust", event.message.offset, list(ran)))

    from faust.types import TP

    tp = TP(JOBS, 0)
    audit = audit_with({(JOBS, 0): values}, {(JOBS, 0): 0})
    audit.app.consumer.ack = lambda m: acks.append(("audit", m.offset, list(ran)))  # type: ignore[method-assign]
    monkeypatch.setattr(judging, "run_job", run_job)
    agent = judging.JudgeAgent(SimpleNamespace(), JudgeTier(JudgeConfig()), max_in_flight=16)
    agent.audit = audit

    async def deliver(outputs: Any) -> None:
        return None

    monkeypatch.setattr(agent, "_deliver", deliver)

    async def main() -> None:
        audit.on_assigned([tp])
        await agent.consume(Stream())

    asyncio.run(main())
    assert sorted(ran) == [0, 1, 2, 3, 4]
    assert [(who, off) for who, off, _ in acks] == [
        ("faust", 0),
        ("faust", 1),
        ("audit", 2),
        ("audit", 3),
        ("faust", 4),
    ]
    assert all(set(range(off + 1)) <= set(done) for _, off, done in acks)


def test_patched_fetch_loop_delivers_what_faust_would_drop_as_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Faust's fetch loop drops a message whose offset is below the read offset; after the patch the read
    offset is rewound to it first, so the loop's own test (``offset >= read offset``) delivers it."""
    from faust.transport.consumer import Consumer
    from faust.types import TP

    from streams._faust import patches as _faust_patches

    tp = TP("t", 0)

    async def getmany(self: Any, timeout: float) -> Any:
        for off in (7, 8, 12):
            yield tp, SimpleNamespace(offset=off, topic="t")

    monkeypatch.setattr(Consumer, "getmany", getmany)
    _faust_patches.redeliver_instead_of_drop()
    assert Consumer.getmany is not getmany

    before = _faust_patches.REDELIVERED.get("t", 0)
    fake = SimpleNamespace(_read_offset=defaultdict(lambda: None, {tp: 11}))
    delivered: list[int] = []

    async def drain() -> None:  # the test Consumer._drain_messages applies to each message
        async for t, message in Consumer.getmany(fake, 1.0):
            r_offset = fake._read_offset[t]
            if r_offset is None or message.offset >= r_offset:
                delivered.append(message.offset)
                fake._read_offset[t] = message.offset

    asyncio.run(drain())
    assert delivered == [7, 8, 12]
    assert _faust_patches.REDELIVERED["t"] - before == 1  # 7 rewound; 8 and 12 are past it then
