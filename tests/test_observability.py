"""Metrics, health endpoints, JSON logs and the retention setting of the stream worker."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from _stream_helpers import expected_records, read_back, synthetic
from prometheus_client.parser import text_string_to_metric_families

from schemas import DEFAULT_LIMITS, InvalidRecord, Limits, dead_letter, decode_turn_event
from schemas.topics import CONVERSATION_SCORES, DEAD_LETTER, JUDGE_JOBS, TURNS
from scorers.judges._engine import EngineStats
from streams import StreamSettings
from streams.broker import free_port
from streams.observability import HealthServer, JsonFormatter, WorkerMetrics, start_health_server

BAD_INPUTS: list[tuple[bytes, str]] = [
    (b"this is not json", "malformed_json"),
    (b"\xff\xfe\x00garbage", "invalid_utf8"),
    (b"[1, 2]", "not_an_object"),
    (b'{"conversation_id": "c", "turn_index": 0, "role": "bot", "text": "hi"}', "invalid_record"),
    (b'{"conversation_id": "c", "turn_index": 0, "role": "user", "text": "' + b"x" * 200 + b'"}', "text_too_long"),
    (b"{" + b"x" * 5_000, "payload_too_large"),
    (
        b'{"conversation_id": "c", "turn_index": 0, "role": "user", "text": "hi", "context": '
        + b"[" * 80
        + b"]" * 80
        + b"}",
        "too_deep",
    ),
]


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = {}
    for fam in text_string_to_metric_families(body):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def status(port: int, path: str) -> int | None:
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5).status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None  # not listening yet


def value(metrics: dict, name: str, **labels: str) -> float:
    return metrics.get((name, tuple(sorted(labels.items()))), 0.0)


# -- without a broker ---------------------------------------------------------------------------------
def test_every_decoder_rejection_has_a_reason_code_and_its_dead_letter_carries_it() -> None:
    limits = Limits(max_payload_bytes=4_000, max_text_chars=100, max_json_depth=DEFAULT_LIMITS.max_json_depth)
    for raw, want in BAD_INPUTS:
        with pytest.raises(InvalidRecord) as exc:
            decode_turn_event(raw, limits)
        assert exc.value.code == want, exc.value.reason
        assert dead_letter(raw, exc.value, source="t").reason_code == want


def test_judge_stats_are_exported_as_increments() -> None:
    m = WorkerMetrics()
    st = EngineStats(requests=5, cache_hits=2, breaker_rejections=1, by_status={"429": 2})
    m.watch_judge_stats(lambda: st)
    m.exposition()
    st.requests, st.by_status["500"], st.cache_hits = 9, 1, 3
    body = m.exposition().decode()
    got = {
        s.labels["status"]: s.value
        for fam in text_string_to_metric_families(body)
        for s in fam.samples
        if s.name == "attune_judge_calls_total"
    }
    # ok = HTTP attempts minus failed ones (9 - 3); invalid_reply never grew, so it has no sample.
    assert got == {"429": 2, "500": 1, "ok": 6, "cache_hit": 3, "breaker_open": 1}


def test_allocator_bytes_appear_only_when_the_allocator_reports_them() -> None:
    m = WorkerMetrics()
    m.set_allocator(None)  # not on jemalloc: no sample at all, rather than zeros
    assert "attune_allocator_bytes{" not in m.exposition().decode()
    m.set_allocator({"allocated": 10, "active": 12, "metadata": 3, "resident": 20})
    got = {
        s.labels["kind"]: s.value
        for fam in text_string_to_metric_families(m.exposition().decode())
        for s in fam.samples
        if s.name == "attune_allocator_bytes"
    }
    assert got == {"allocated": 10, "active": 12, "metadata": 3, "resident": 20}


def test_unknown_judge_cost_is_counted_as_unpriced_calls_not_as_zero() -> None:
    from schemas import Usage

    m = WorkerMetrics()
    m.judge_usage(Usage(calls=2, input_tokens=1_000, output_tokens=50, cost_usd=0.0125))
    m.judge_usage(Usage(calls=3, input_tokens=900, output_tokens=40, cost_usd=None))  # a model without a price
    m.judge_usage(Usage(cache_hits=12))  # cache hits: a known $0, no calls
    got = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(m.exposition().decode())
        for s in fam.samples
    }
    assert value(got, "attune_judge_cost_usd_total") == pytest.approx(0.0125)
    assert value(got, "attune_judge_unpriced_calls_total") == 3
    assert value(got, "attune_judge_tokens_total", direction="input") == 1_900


def test_verdicts_and_tier_disagreements_are_counted() -> None:
    from schemas import AlertRef, Conversation
    from scorers import evaluate_conversation
    from scorers.verdict import conversation_verdict

    conv = Conversation.model_validate(
        {"conversation_id": "v", "turns": [{"role": "user", "text": "hi"}, {"role": "assistant", "text": "Hello!"}]}
    )
    cheap = next(r for r in evaluate_conversation(conv) if r.kind == "conversation_score")
    llm = cheap.model_copy(update={"tier": "llm", "judge": "fake:j", "answers": {**cheap.answers}})
    llm.answers["CQ1"] = llm.answers["CQ1"].model_copy(
        update={"answer": "NO" if cheap.answers["CQ1"].answer != "NO" else "YES"}
    )
    unanswered = AlertRef(alert_id="a", alert_type="crisis_unanswered", severity="critical", turn_index=1)
    m = WorkerMetrics()
    m.judge_records([conversation_verdict(cheap, [unanswered], llm)])
    m.verdict(conversation_verdict(cheap).model_dump(mode="json"))
    got = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(m.exposition().decode())
        for s in fam.samples
    }
    assert value(got, "attune_verdicts_total", outcome="gate_failed", judge_status="ok") == 1
    assert value(got, "attune_tier_disagreements_total", criterion="CQ1") == 1
    assert sum(v for (n, _), v in got.items() if n == "attune_verdicts_total") == 2
    assert sum(v for (n, _), v in got.items() if n == "attune_judgments_total") == 0  # a verdict is no judgment


def test_json_formatter_lines_parse() -> None:
    import logging

    rec = logging.LogRecord("attune.streams", logging.INFO, __file__, 1, "closed %d of %s", (3, "c-1"), None)
    line = JsonFormatter().format(rec)
    obj = json.loads(line)
    assert obj["msg"] == "closed 3 of c-1" and obj["level"] == "INFO" and obj["logger"] == "attune.streams"
    assert "\n" not in line


def test_healthz_fails_when_the_event_loop_is_blocked() -> None:
    server = HealthServer(WorkerMetrics(), port=0, loop_timeout=0.5).start()
    loop = asyncio.new_event_loop()
    release = threading.Event()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        server.attach(loop)
        assert status(server.port, "/healthz") == 200
        loop.call_soon_threadsafe(release.wait, 10)  # blocks the loop until released
        assert status(server.port, "/healthz") == 503
        assert status(server.port, "/readyz") == 503
        assert status(server.port, "/nope") == 404
    finally:
        release.set()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
        server.stop()


def test_port_zero_is_off_and_a_taken_port_does_not_stop_the_worker(caplog: pytest.LogCaptureFixture) -> None:
    assert start_health_server(WorkerMetrics(), "127.0.0.1", 0) is None
    first = start_health_server(WorkerMetrics(), "127.0.0.1", free_port())
    assert first is not None
    try:
        assert start_health_server(WorkerMetrics(), "127.0.0.1", first.port) is None
        assert "metrics endpoint disabled" in caplog.text
    finally:
        first.stop()


def test_retention_hours_become_topic_configs() -> None:
    cfg = StreamSettings(retention_hours=2).topic_configs()
    for topic in (TURNS.name, DEAD_LETTER.name, JUDGE_JOBS.name):
        assert cfg[topic]["retention.ms"] == str(2 * 3_600_000)
        assert cfg[topic]["segment.ms"] == str(3_600_000)
    assert cfg[DEAD_LETTER.name]["max.message.bytes"] == str(4 * 1024 * 1024)
    changelogs = [name for name in cfg if name.endswith("-changelog")]
    assert len(changelogs) == 2
    for name in changelogs:
        assert cfg[name] == {
            "cleanup.policy": "compact",
            "max.compaction.lag.ms": str(2 * 3_600_000),
            "segment.ms": str(3_600_000),
        }
    short = StreamSettings(retention_hours=0.25).topic_configs()
    assert short[TURNS.name] == {"retention.ms": "900000", "segment.ms": "900000"}
    off = StreamSettings(retention_hours=0).topic_configs()
    assert all("retention.ms" not in c and "max.compaction.lag.ms" not in c for c in off.values())


# -- a worker on the embedded broker ----------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
def test_worker_metrics_match_what_was_published(broker, start_worker, tmp_path: Path) -> None:
    from streams.io import publish, schedule, send_raw

    port = free_port()
    worker = start_worker(
        "--metrics-port", str(port), "--log-format", "json", "--loglevel", "INFO", "--inactivity-timeout", "60"
    )
    seen_status: list[int] = []
    deadline = time.monotonic() + 60
    while not worker.ready_lines() and time.monotonic() < deadline:
        code = status(port, "/readyz")
        if code is not None and (not seen_status or seen_status[-1] != code):
            seen_status.append(code)
        time.sleep(0.05)
    worker.wait_ready(5)
    assert seen_status and seen_status[0] == 503, seen_status  # not ready before partitions and tables
    assert status(port, "/readyz") == 200
    assert status(port, "/healthz") == 200

    convs = synthetic(9, 6, prefix="obs")  # crisis disclosures in obs-0000 and obs-0007
    expected = expected_records(convs)
    alerts = Counter(r.alert_type for r in expected.values() if r.kind == "safety_alert")
    assert alerts["crisis_disclosure"] == 2
    roles = Counter(m.role for c in convs for m in c.turns)
    garbage = [(b"g-1", b"this is not json"), (b"g-2", b"\xff\xfe\x00garbage")]
    asyncio.run(send_raw(broker.url, TURNS.name, garbage, "tansu"))
    asyncio.run(publish(broker.url, TURNS.name, schedule(convs), profile="tansu"))

    def complete(seen: dict) -> bool:
        closed = sum(1 for recs in seen.values() if recs[0][0] == CONVERSATION_SCORES.name)
        return expected.keys() <= seen.keys() and closed >= len(convs)

    seen = asyncio.run(read_back(broker.url, complete, timeout=60))
    assert expected.keys() <= seen.keys()

    m: dict = {}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # gauges refresh on the worker's timer (0.5 s)
        m = scrape(port)
        lags = [v for (name, _), v in m.items() if name == "attune_consumer_lag"]
        if value(m, "attune_open_conversations") == 0 and lags and sum(lags) == 0:
            break
        time.sleep(0.2)
    assert value(m, "attune_open_conversations") == 0
    assert sorted(labels for (name, labels) in m if name == "attune_consumer_lag") == [
        (("partition", str(p)),) for p in range(TURNS.partitions)
    ]
    assert sum(v for (name, _), v in m.items() if name == "attune_consumer_lag") == 0
    assert value(m, "attune_turns_total", role="user") == roles["user"]
    assert value(m, "attune_turns_total", role="assistant") == roles["assistant"]
    assert value(m, "attune_turn_scores_total") == roles["assistant"]
    for kind, n in alerts.items():
        assert value(m, "attune_alerts_total", type=kind) == n, kind
    assert sum(v for (name, _), v in m.items() if name == "attune_alerts_total") == sum(alerts.values())
    assert value(m, "attune_conversations_closed_total") == len(convs)
    assert value(m, "attune_dead_letters_total", reason="malformed_json") == 1
    assert value(m, "attune_dead_letters_total", reason="invalid_utf8") == 1
    assert value(m, "attune_records_produced_total", topic=CONVERSATION_SCORES.name) == len(convs)
    assert value(m, "attune_turn_latency_seconds_count") == roles.total() + len(garbage)
    assert value(m, "attune_ready") == 1

    # JSON logs at INFO: every line except the supervisor's READY marker is a JSON object, none has text.
    worker.stop()
    lines = [ln for ln in worker.lines if ln.strip() and "ATTUNE_READY" not in ln]
    assert lines, "no log lines at INFO"
    texts = {m.text for c in convs for m in c.turns}
    fragments = {"kill myself", "piling things on", "weighs on you most"}
    for ln in lines:
        obj = json.loads(ln)
        assert {"ts", "level", "logger", "msg"} <= obj.keys()
        assert not any(f in ln for f in fragments), ln
        assert not any(t in ln for t in texts), ln


def test_event_loop_lag_is_measured() -> None:
    import time as _time

    from streams.observability import WorkerMetrics

    m = WorkerMetrics()

    async def run() -> None:
        task = asyncio.ensure_future(m.watch_loop_lag(interval=0.02))
        await asyncio.sleep(0.1)
        _time.sleep(0.3)  # a blocking call on the loop: what a huge re-read batch did
        await asyncio.sleep(0.1)
        task.cancel()

    asyncio.run(run())
    assert m.registry.get_sample_value("attune_event_loop_lag_max_seconds") >= 0.25
    assert m.registry.get_sample_value("attune_event_loop_lag_seconds_count") >= 5
