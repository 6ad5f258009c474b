"""The batched send path: records grouped per topic-partition into aiokafka batches, and table changelog
records serialized exactly as Faust's own ``send_changelog`` would (recovery reads them back with Faust)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, NoReturn

import faust
import pytest

from streams._core import Write
from streams._faust import BatchSender, FaustStore
from streams._faust.store import state_table


class FakeBatch:
    """aiokafka's BatchBuilder as the sender uses it: a full batch closes itself and rejects the record."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.records: list[tuple[bytes | None, bytes | None]] = []
        self._closed = False

    def append(self, *, key: bytes | None, value: bytes | None, timestamp: float | None) -> object | None:
        if self._closed:
            return None
        if self.records and len(self.records) >= self.limit:
            self.close()
            return None
        self.records.append((key, value))
        return object()

    def close(self) -> None:
        self._closed = True

    def closed(self) -> bool:
        return self._closed


class FakeAioProducer:
    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        self.sent: list[tuple[str, int, list[tuple[bytes | None, bytes | None]]]] = []
        self.metadata_waits: list[str] = []
        self.client = SimpleNamespace(_wait_on_metadata=self._wait)

    async def _wait(self, topic: str) -> None:
        self.metadata_waits.append(topic)

    def _partition(self, topic: str, partition: Any, key: Any, value: Any, skey: bytes, svalue: Any) -> int:
        return len(skey) % 2  # a stand-in partitioner: keys of even length -> 0, odd -> 1

    def create_batch(self) -> FakeBatch:
        return FakeBatch(self.limit)

    async def send_batch(self, batch: FakeBatch, topic: str, *, partition: int) -> asyncio.Future[None]:
        # aiokafka holds an open batch for linger_ms waiting for more records; a complete one must be closed
        assert batch.closed(), "an open batch would linger in the accumulator"
        self.sent.append((topic, partition, list(batch.records)))
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        fut.set_result(None)
        return fut


def app_with(aio: Any, threaded: bool = False) -> Any:
    return SimpleNamespace(producer=SimpleNamespace(_producer=aio), conf=SimpleNamespace(producer_threaded=threaded))


def test_one_batch_per_topic_partition_in_record_order() -> None:
    aio = FakeAioProducer(limit=10)
    records = [
        ("out", 2, b"a", b"1"),
        ("log", 0, b"b", None),  # a tombstone
        ("out", 2, b"c", b"2"),
        ("out", None, b"dd", b"3"),  # placed by the partitioner (even length -> 0)
        ("out", None, b"e", b"4"),  # (odd -> 1)
        ("out", 0, b"f", b"5"),
    ]

    async def run() -> int:
        futs = await BatchSender(app_with(aio)).send(records)
        await asyncio.gather(*futs)
        return len(futs)

    assert asyncio.run(run()) == 4
    assert aio.sent == [
        ("out", 2, [(b"a", b"1"), (b"c", b"2")]),
        ("log", 0, [(b"b", None)]),
        ("out", 0, [(b"dd", b"3"), (b"f", b"5")]),
        ("out", 1, [(b"e", b"4")]),
    ]
    assert aio.metadata_waits == ["out"]  # once per topic, only for keys without a partition


def test_a_full_batch_is_sent_and_the_rest_goes_into_the_next() -> None:
    aio = FakeAioProducer(limit=3)
    records = [("out", 1, b"k%d" % i, b"v") for i in range(7)]

    async def run() -> None:
        await asyncio.gather(*await BatchSender(app_with(aio)).send(records))

    asyncio.run(run())
    assert [len(recs) for _, _, recs in aio.sent] == [3, 3, 1]
    assert [k for _, _, recs in aio.sent for k, _ in recs] == [b"k%d" % i for i in range(7)]


def test_without_a_started_producer_it_falls_back_to_faust_sends() -> None:
    sent: list[tuple] = []

    async def send(topic: str, key: Any, value: Any, partition: Any, timestamp: Any, headers: Any) -> Any:
        sent.append((topic, partition, key, value))
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(None)
        return fut

    app = SimpleNamespace(
        producer=SimpleNamespace(_producer=None, send=send), conf=SimpleNamespace(producer_threaded=False)
    )
    asyncio.run(BatchSender(app).send([("out", None, b"k", b"v")]))
    assert sent == [("out", None, b"k", b"v")]


def test_changelog_records_are_what_faust_send_changelog_would_write() -> None:
    import streams._faust.store  # noqa: F401  (registers the orjson codec)

    app = faust.App("send-test", broker="kafka://127.0.0.1:1", store="memory://")
    tables = {name: state_table(app, f"t-{name}", name, 4) for name in ("turns", "meta")}  # as create_app does
    store = FaustStore(tables["turns"], tables["meta"])
    value = {"r": "user", "t": "caf\u00e9 \U0001f600", "s": {"m": [1.5, None]}}
    store.apply(
        [Write("turns", 3, "c1:0", value), Write("meta", 1, "c1", {"idx": [[0, 4]]}), Write("turns", 3, "c0:0", None)]
    )
    got = store.take_changelog()
    want = []
    for table, partition, key, val, ser in (
        ("turns", 3, "c1:0", value, "orjson"),
        ("meta", 1, "c1", {"idx": [[0, 4]]}, "orjson"),
        ("turns", 3, "c0:0", None, "raw"),
    ):
        topic = tables[table].changelog_topic
        k, _ = topic.prepare_key(key, "orjson")
        v, _ = topic.prepare_value(val, ser)
        want.append((topic.get_topic_name(), partition, k, v))
    assert got == want
    assert store.take_changelog() == []  # taken once
    assert store.get("turns", "c1:0") == value and store.get("turns", "c0:0") is None
    assert store.get("meta", "c1") == {"idx": [[0, 4]]}
    # The turns table holds its changelog bytes: what table recovery puts there (the raw codec) reads the same.
    assert tables["turns"].data["c1:0"] == got[0][3]
    raw_value = tables["turns"].changelog_topic.value_serializer
    assert raw_value == "raw" and tables["meta"].changelog_topic.value_serializer == "orjson"
    tables["turns"].data["c2:0"] = got[0][3]  # as recovered from the changelog
    assert store.get("turns", "c2:0") == value


# -- a delivery that fails -----------------------------------------------------------------------------------
class Exited(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _failing_future() -> asyncio.Future[None]:
    fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    fut.set_exception(RuntimeError("KafkaTimeoutError: batch expired"))  # what survives aiokafka's own retries
    return fut


def _no_exit(monkeypatch: Any) -> list[int]:
    """Record the codes the worker would exit with, and raise instead of exiting."""
    from streams._faust import fatal

    codes: list[int] = []

    def exit_(code: int) -> NoReturn:
        codes.append(code)
        raise Exited(code)

    monkeypatch.setattr(fatal, "_exit", exit_)
    return codes


def test_a_turns_batch_whose_outputs_cannot_be_delivered_stops_the_worker(monkeypatch: Any, caplog: Any) -> None:
    """Faust's take_events acks a batch even when the agent raised: going on would commit past outputs
    never delivered (a crisis alert among them). The worker exits 75 instead, before any table write."""
    from streams._core import BatchResult, Inbound, Outbound
    from streams._faust.fatal import EXIT_DELIVERY_FAILED
    from streams._faust.runtime import Runtime

    _no_exit(monkeypatch)
    applied: list[BatchResult] = []

    class Sender:
        def __init__(self, fail_send: bool) -> None:
            self.fail_send = fail_send

        async def send(self, records: Any) -> list[asyncio.Future[None]]:
            list(records)
            if self.fail_send:
                raise RuntimeError("producer closed")
            return [_failing_future()]

    items = [Inbound("turns", 2, off, b"c", b"{}") for off in (7, 9, 8)] + [Inbound("turns", 0, 3, b"d", b"{}")]
    res = BatchResult(outputs=[Outbound("safety-alerts", b"c", b"{}", "safety_alert")])
    for fail_send in (False, True):
        rt = SimpleNamespace(sender=Sender(fail_send), processor=SimpleNamespace(reset_cache=lambda: None))
        rt._send = Runtime._send.__get__(rt)
        rt._deliver = Runtime._deliver.__get__(rt)

        async def apply(res: BatchResult) -> None:
            applied.append(res)

        rt._apply = apply
        rt.processor.process = lambda items, now, defer_closes: res
        rt.audit = SimpleNamespace(ack=lambda f: None)
        with pytest.raises(Exited) as exited:
            asyncio.run(Runtime._run(rt, items, []))  # type: ignore[arg-type]
        assert exited.value.code == EXIT_DELIVERY_FAILED == 75
    assert applied == []  # no table write, so nothing says these turns were processed
    crit = [r for r in caplog.records if r.levelname == "CRITICAL"]
    assert len(crit) == 2 and "turns[0]@3, turns[2]@7-9" in crit[0].getMessage()
    assert "without committing" in crit[0].getMessage()


def test_a_judge_job_whose_records_cannot_be_delivered_stops_the_worker_unacked(monkeypatch: Any) -> None:
    """A judge job's task used to die unseen on a failed delivery, its job never acked and its records
    (a safety-gate alert among them) never sent until some later restart. Now the worker exits 75."""
    import streams._faust.judge_agent as judging
    from scorers.judges import JudgeConfig, JudgeTier, turn_job
    from streams._faust.fatal import EXIT_DELIVERY_FAILED

    codes = _no_exit(monkeypatch)
    from _stream_helpers import synthetic

    from scorers import exchanges_of

    jobs = [turn_job(ex) for ex in exchanges_of(synthetic(1, 4, prefix="fail")[0])]
    acked: list[int] = []

    async def run_job(tier: Any, job: Any) -> list:
        return []

    async def deliver(outputs: Any) -> None:
        await _failing_future()

    class Stream:
        def noack(self) -> Stream:
            return self

        async def events(self) -> Any:
            for off, job in enumerate(jobs):
                yield SimpleNamespace(
                    message=SimpleNamespace(topic="jobs", partition=0, offset=off, value=job.model_dump_json().encode())
                )
            while agent._tasks:
                await asyncio.sleep(0.01)

        async def ack(self, event: Any) -> None:
            acked.append(event.message.offset)

    monkeypatch.setattr(judging, "run_job", run_job)
    agent = judging.JudgeAgent(SimpleNamespace(), JudgeTier(JudgeConfig()), max_in_flight=4)
    monkeypatch.setattr(agent, "_deliver", deliver)

    asyncio.run(agent.consume(Stream()))
    assert acked == []
    assert codes == [EXIT_DELIVERY_FAILED] * len(jobs)
