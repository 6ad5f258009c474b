"""The streaming commands as a user runs them: publish, tail, and the demo (which must leave nothing behind)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import orjson
import pytest

from streams.demo import bundled_samples
from streams.io import load_conversations

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _attune(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attune", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_publish_then_tail(broker) -> None:
    convs, _ = load_conversations(bundled_samples())
    n_turns = sum(len(c.turns) for c in convs)
    pub = _attune("publish", str(bundled_samples()), "--broker", broker.url, "--profile", "tansu")
    assert pub.returncode == 0, pub.stderr
    assert f"published {n_turns} turn events of {len(convs)} conversations" in pub.stdout
    tail = _attune(
        "tail",
        "turns",
        "--broker",
        broker.url,
        "--json",
        "--from-beginning",
        "--max",
        str(n_turns),
        "--idle-timeout",
        "10",
    )
    assert tail.returncode == 0, tail.stderr
    lines = [orjson.loads(x) for x in tail.stdout.splitlines()]
    assert len(lines) == n_turns
    by_conv: dict[str, list[int]] = {}
    for rec in lines:
        by_conv.setdefault(rec["conversation_id"], []).append(rec["turn_index"])
    # Keyed by conversation_id: one partition per conversation, so its turns stay in order.
    assert all(idx == sorted(idx) for idx in by_conv.values())
    assert {c.conversation_id for c in convs} == by_conv.keys()
    pretty = _attune("tail", "turns", "--broker", broker.url, "--from-beginning", "--max", "3", "--idle-timeout", "10")
    assert pretty.returncode == 0 and len(pretty.stdout.strip().splitlines()) >= 3


def test_publish_rejects_invalid_lines(broker, tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation_id": "x", "turns": []}\nnot json\n')
    res = _attune("publish", str(bad), "--broker", broker.url, "--profile", "tansu")
    assert res.returncode == 1
    assert "turns" in res.stderr and "malformed JSON" in res.stderr


def _tail_json(broker, topic: str, n: int) -> list[dict]:
    res = _attune(
        "tail", topic, "--broker", broker.url, "--json", "--from-beginning", "--max", str(n), "--idle-timeout", "5"
    )
    assert res.returncode == 0, res.stderr
    return [orjson.loads(x) for x in res.stdout.splitlines()]


@pytest.mark.parametrize("strict", [False, True])
def test_every_invalid_line_of_publish_is_a_dead_letter(broker, tmp_path, strict: bool) -> None:
    """Issue 14 part 5: as in ``evaluate``, a bad line is a dead letter with its bytes, line and reason, and the
    exit code says so; the good lines are published (``--strict``: none are)."""
    import base64

    good = bundled_samples().read_bytes().splitlines()[:2]
    bad = [b"not json", b'{"conversation_id": "x", "turns": []}', b'{"conversation_id": "y", "turns": [{"role": 1}]}']
    lines = [good[0], bad[0], bad[1], good[1], b"", bad[2]]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    res = _attune("publish", str(path), "--broker", broker.url, "--profile", "tansu", *(["--strict"] if strict else []))
    assert res.returncode == 1, res.stderr
    assert "3 invalid line(s) sent to attune.deadletter" in res.stderr
    dead = _tail_json(broker, "deadletter", 3)
    assert sorted(d["offset"] for d in dead) == [2, 3, 6] and {d["source"] for d in dead} == {str(path)}
    assert sorted(base64.b64decode(d["payload_b64"]) for d in dead) == sorted(bad)
    assert all(d["reason"] for d in dead)
    turns = sum(len(orjson.loads(g)["turns"]) for g in good)
    if strict:
        assert "no turn published" in res.stderr
        assert (
            _attune("tail", "turns", "--broker", broker.url, "--json", "--from-beginning", "--idle-timeout", "3").stdout
            == ""
        )
    else:
        assert f"published {turns} turn events of 2 conversations" in res.stdout
        assert len(_tail_json(broker, "turns", turns)) == turns


def test_publish_says_when_the_broker_for_its_dead_letters_is_unreachable(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n" * 25)
    res = _attune("publish", str(bad), "--broker", "kafka://127.0.0.1:9", "--profile", "tansu")
    assert res.returncode == 69, res.stderr  # the rejections must reach the dead-letter topic: never just stderr
    assert sum("malformed JSON" in ln for ln in res.stderr.splitlines()) == 20
    assert "5 more invalid line(s), not printed (25 in all)" in res.stderr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_demo_runs_live_and_cleans_up() -> None:
    res = _attune("demo", "--pace", "0.3", "--timeout", "90", timeout=150)
    out = res.stdout
    assert res.returncode == 0, out[-3000:] + res.stderr[-2000:]
    assert "attune demo: summary" in out
    assert "crisis_unanswered" in out and "crisis_disclosure" in out
    assert out.count("conversation_score") >= len(load_conversations(bundled_samples())[0])
    pids = [int(p) for p in re.findall(r"\(pid (\d+)\)|worker pid (\d+)", out) for p in p if p]
    assert len(pids) == 2  # the broker and the worker it started
    assert not [p for p in pids if _alive(p)], "demo left a process running"
    logdir = re.search(r"logs removed \((\S+)\)", out)
    assert logdir and not os.path.exists(logdir.group(1)), "demo left its log folder behind"


def test_tail_of_an_unknown_topic_names_the_known_ones(broker) -> None:
    import asyncio

    from streams.io import broker_topics

    res = _attune("tail", "alerts.safty", "--broker", broker.url, "--idle-timeout", "2")
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "no topic alerts.safty" in res.stderr and "alerts.safety" in res.stderr and "deadletter" in res.stderr
    assert "alerts.safty" not in asyncio.run(broker_topics(broker.url))  # the check created nothing


@pytest.mark.parametrize("command", [["publish", str(bundled_samples())], ["tail", "turns"], ["worker"]])
def test_an_unreachable_broker_is_one_line_and_exit_69(command: list[str]) -> None:
    res = _attune(*command, "--broker", "kafka://127.0.0.1:9")
    assert res.returncode == 69, res.stderr
    assert "cannot reach the Kafka broker at kafka://127.0.0.1:9" in res.stderr
    assert "Traceback" not in res.stderr and "Unclosed" not in res.stderr, res.stderr
