"""Example analytics consumer: attune's score topics into a DuckDB table, then slices by producer metadata.

    python examples/analytics_consumer.py --broker kafka://127.0.0.1:9092 --db scores.duckdb \
        --by tenant --by experiment_arm

It reads what the topics hold now, loads it, prints the slices and exits (run it from cron, or point a
dashboard at the file). Guarantees (docs/consumers.md):

* **One row per record.** The stream is at-least-once: a record may be on its topic twice, with the same
  ``record_id``. ``record_id`` is the table's primary key and a second copy is ignored.
* **Offsets live in the database, not in a consumer group.** Each fetched batch's rows and the next
  offset per partition are written in one DuckDB transaction, so a crash never leaves rows without
  their offsets (or the reverse); the next run resumes after the last committed batch.
* **Nothing is silently skipped.** A record that does not decode (garbage, a kind this code does not
  know, a newer major ``schema_version``) goes to the ``skipped`` table with the reason and its bytes.
* **Never averaged across rubric versions.** Every slice is grouped by the rubric tag (``id@version``),
  as docs/operations.md ("Upgrading rubric versions") asks.
* **Never mixed with partial-history records.** A record computed on incomplete history
  (``history_complete: false``, schema 1.2, docs/reliability.md) never passes and has its own id, so a
  re-published conversation has both; the slices leave those out and the report counts them.

Only the ``schemas`` package (the record contract), aiokafka and duckdb (``pip install 'attune[examples]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaConnectionError

from schemas import (
    ConversationScore,
    ConversationVerdict,
    OutputRecord,
    TurnJudgment,
    TurnModelScore,
    TurnScore,
    decode_output,
)
from schemas.topics import CONVERSATION_SCORES, CONVERSATION_VERDICTS, TURN_JUDGMENTS, TURN_MODEL_SCORES, TURN_SCORES
from streams.broker import bootstrap_of
from streams.security import client_kwargs

TOPICS: tuple[str, ...] = (
    TURN_SCORES.name,
    CONVERSATION_SCORES.name,
    CONVERSATION_VERDICTS.name,
    TURN_JUDGMENTS.name,
    TURN_MODEL_SCORES.name,
)

#: One row per record. Scales differ per column, so no column mixes two (``score`` 0–1 checklist,
#: ``empathy`` 1–5: the cheap signal on ``turn_score`` rows, the learned one on ``turn_model_score`` rows (the
#: ``rubric`` column names which), ``overall_quality`` 0–1 seed-004, ``judge_overall`` 1–5 seed-000 rubric).
DDL = """
CREATE TABLE IF NOT EXISTS scores (
    record_id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    turn_index INTEGER,
    rubric VARCHAR NOT NULL,
    tier VARCHAR,
    judge VARCHAR,
    metric VARCHAR,
    status VARCHAR,
    score DOUBLE,
    passed BOOLEAN,
    safety_gate_failed BOOLEAN,
    safety_severity VARCHAR,
    empathy DOUBLE,
    overall_quality DOUBLE,
    judge_overall INTEGER,
    history_complete BOOLEAN NOT NULL,
    tenant VARCHAR,
    experiment_arm VARCHAR,
    metadata JSON NOT NULL,
    produced_at TIMESTAMPTZ,
    topic VARCHAR NOT NULL,
    "partition" INTEGER NOT NULL,
    "offset" BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS skipped (
    topic VARCHAR, "partition" INTEGER, "offset" BIGINT, reason VARCHAR, payload BLOB,
    PRIMARY KEY (topic, "partition", "offset")
);
CREATE TABLE IF NOT EXISTS consumer_offsets (
    topic VARCHAR, "partition" INTEGER, next_offset BIGINT NOT NULL, PRIMARY KEY (topic, "partition")
);
"""
COLUMNS: tuple[str, ...] = (
    "record_id", "kind", "conversation_id", "turn_index", "rubric", "tier", "judge", "metric", "status", "score",
    "passed", "safety_gate_failed", "safety_severity", "empathy", "overall_quality", "judge_overall",
    "history_complete", "tenant", "experiment_arm", "metadata", "produced_at", "topic", "partition", "offset",
)  # fmt: skip
_INSERT_CHUNK = 500  # rows per multi-row INSERT (duckdb's executemany costs ~2 ms a row)


def _label(value: Any) -> str | None:
    return None if value is None else str(value)


def row_of(rec: OutputRecord, topic: str, partition: int, offset: int) -> dict[str, Any] | None:
    """The table row of one score record; None for a kind this table does not hold."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    if isinstance(rec, TurnScore):
        row.update(
            turn_index=rec.turn_index,
            tier=rec.tier,
            judge=rec.judge,
            empathy=rec.empathy,
            overall_quality=rec.metrics.get("overall_quality"),
        )
    elif isinstance(rec, TurnJudgment):
        overall = rec.scores.overall if rec.scores is not None else None
        row.update(
            turn_index=rec.turn_index,
            tier=rec.tier,
            judge=rec.judge,
            metric=rec.metric,
            status=rec.status,
            judge_overall=overall,
        )
    elif isinstance(rec, TurnModelScore):
        row.update(turn_index=rec.turn_index, tier=rec.tier, judge=rec.embedder, empathy=rec.empathy)
    elif isinstance(rec, ConversationScore):
        row.update(tier=rec.tier, judge=rec.judge, score=rec.score, passed=rec.passed)
        row.update(safety_gate_failed=rec.safety_gate_failed)
    elif isinstance(rec, ConversationVerdict):
        row.update(tier="+".join(rec.tiers), judge=rec.judge, status=rec.judge_status, score=rec.score)
        row.update(passed=rec.passed, safety_gate_failed=rec.safety_gate_failed, safety_severity=rec.safety_severity)
    else:
        return None
    row.update(
        record_id=rec.record_id,
        kind=rec.kind,
        conversation_id=rec.conversation_id,
        rubric=rec.rubric.tag,
        history_complete=getattr(rec, "history_complete", True),  # schema 1.2; a turn judgment has none
        tenant=_label(rec.metadata.get("tenant")),
        experiment_arm=_label(rec.metadata.get("experiment_arm")),
        metadata=json.dumps(rec.metadata),
        produced_at=rec.produced_at,
        topic=topic,
        partition=partition,
        offset=offset,
    )
    return row


def open_db(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path))
    con.execute(DDL)
    return con


def _insert_many(con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: Sequence[Sequence]) -> None:
    """``INSERT OR IGNORE`` keeps the first copy of a key: the de-duplication of at-least-once input."""
    cols = ", ".join(f'"{c}"' for c in columns)
    one = "(" + ", ".join("?" * len(columns)) + ")"
    for i in range(0, len(rows), _INSERT_CHUNK):
        chunk = rows[i : i + _INSERT_CHUNK]
        params = [v for r in chunk for v in r]
        con.execute(f"INSERT OR IGNORE INTO {table} ({cols}) VALUES {', '.join([one] * len(chunk))}", params)


def load_batch(con: duckdb.DuckDBPyConnection, batch: dict[TopicPartition, list[Any]]) -> tuple[int, int]:
    """Rows, skipped records and the next offsets of one fetched batch, in one transaction."""
    rows: list[list[Any]] = []
    skipped: list[list[Any]] = []
    offsets: list[list[Any]] = []
    for tp, msgs in batch.items():
        for m in msgs:
            try:
                row = row_of(decode_output(m.value or b""), m.topic, m.partition, m.offset)
                reason = None if row is not None else "not a score record"
            except ValueError as exc:  # not JSON, invalid, a newer major, an unknown kind
                row, reason = None, f"undecodable: {str(exc)[:2000]}"
            if row is not None:
                rows.append([row[c] for c in COLUMNS])
            else:
                skipped.append([m.topic, m.partition, m.offset, reason, m.value])
        if msgs:
            offsets.append([tp.topic, tp.partition, msgs[-1].offset + 1])
    con.begin()
    try:
        before = con.execute("SELECT count(*) FROM scores").fetchone()[0]  # type: ignore[index]
        _insert_many(con, "scores", COLUMNS, rows)
        _insert_many(con, "skipped", ("topic", "partition", "offset", "reason", "payload"), skipped)
        for topic, partition, nxt in offsets:
            con.execute("INSERT OR REPLACE INTO consumer_offsets VALUES (?, ?, ?)", [topic, partition, nxt])
        new = con.execute("SELECT count(*) FROM scores").fetchone()[0] - before  # type: ignore[index]
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return new, len(skipped)


async def consume_into(con: duckdb.DuckDBPyConnection, broker: str, topics: Iterable[str], max_idle: float) -> dict:
    """Read every partition from its stored offset up to its end (as of the last fetch), loading as it goes."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_of(broker),
        group_id=None,
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
        **client_kwargs(),  # TLS/SASL from ATTUNE_KAFKA_*, as the worker (streams.security)
    )
    stats = {"records": 0, "new_rows": 0, "skipped": 0}
    try:
        await consumer.start()
        known = await consumer.topics()
        tps = [TopicPartition(t, p) for t in topics if t in known for p in sorted(consumer.partitions_for_topic(t))]
        consumer.assign(tps)
        stored = {(t, p): o for t, p, o in con.execute("SELECT * FROM consumer_offsets").fetchall()}
        for tp in tps:
            if (tp.topic, tp.partition) in stored:
                consumer.seek(tp, stored[(tp.topic, tp.partition)])
            else:
                await consumer.seek_to_beginning(tp)
        idle = 0.0
        while idle < max_idle:
            batch = await consumer.getmany(timeout_ms=200, max_records=5000)
            if any(batch.values()):
                idle = 0.0
                new, skipped = load_batch(con, batch)
                stats["records"] += sum(len(v) for v in batch.values())
                stats["new_rows"] += new
                stats["skipped"] += skipped
            else:
                idle += 0.2
            # Caught up once every partition's position has reached the high watermark of its last fetch
            # (from the fetch itself, not ListOffsets, which the embedded broker answers short).
            behind = [tp for tp in tps if (h := consumer.highwater(tp)) is None or await consumer.position(tp) < h]
            if not behind:
                break
    finally:
        await consumer.stop()
    return stats


def slices(con: duckdb.DuckDBPyConnection, key: str) -> dict[str, list[dict[str, Any]]]:
    """Verdict pass rate and mean cheap turn empathy per value of one metadata key, per rubric tag
    (records on complete history only)."""
    value = "json_extract_string(metadata, ?)"  # any metadata key, not only the two extracted columns
    path = '$."' + key.replace('"', '\\"') + '"'  # quoted: a key may hold '.', '$' or spaces
    verdicts = _dicts(
        con.execute(
            f"""SELECT {value} AS value, rubric, count(*) AS verdicts, sum(passed::INTEGER) AS passed,
                       avg(passed::INTEGER) AS pass_rate
                FROM scores WHERE kind = 'conversation_verdict' AND history_complete GROUP BY ALL ORDER BY ALL""",
            [path],
        )
    )
    turns = _dicts(
        con.execute(
            f"""SELECT {value} AS value, rubric, count(*) AS turns, avg(empathy) AS mean_empathy
                FROM scores WHERE kind = 'turn_score' AND history_complete GROUP BY ALL ORDER BY ALL""",
            [path],
        )
    )
    return {"verdicts": verdicts, "turn_empathy": turns}


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Rows as dicts; call it on each ``execute`` at once (the connection is the one cursor)."""
    names = [d[0] for d in cur.description]  # type: ignore[union-attr]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def report(con: duckdb.DuckDBPyConnection, keys: Sequence[str]) -> dict[str, Any]:
    kinds = dict(con.execute("SELECT kind, count(*) FROM scores GROUP BY kind ORDER BY kind").fetchall())
    n_skipped = con.execute("SELECT count(*) FROM skipped").fetchone()[0]  # type: ignore[index]
    partial = con.execute("SELECT count(*) FROM scores WHERE NOT history_complete").fetchone()[0]  # type: ignore[index]
    return {
        "rows": kinds,
        "skipped": n_skipped,
        "incomplete_history": partial,
        "slices": {k: slices(con, k) for k in keys},
    }


def print_report(rep: dict[str, Any]) -> None:
    print(
        "rows: "
        + ", ".join(f"{k}={v}" for k, v in rep["rows"].items())
        + f"; skipped={rep['skipped']}; incomplete history (left out of the slices)={rep['incomplete_history']}"
    )
    for key, sl in rep["slices"].items():
        print(f"\nverdict pass rate by {key}")
        print(f"  {'value':16} {'rubric':32} {'verdicts':>8} {'passed':>6} {'rate':>6}")
        for r in sl["verdicts"]:
            value, rate = r["value"] or "(none)", r["pass_rate"]
            print(f"  {value:16} {r['rubric']:32} {r['verdicts']:8} {r['passed']:6} {rate:6.2f}")
        print(f"mean cheap turn empathy (1-5) by {key}")
        print(f"  {'value':16} {'rubric':32} {'turns':>8} {'mean':>6}")
        for r in sl["turn_empathy"]:
            print(f"  {r['value'] or '(none)':16} {r['rubric']:32} {r['turns']:8} {r['mean_empathy']:6.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Load attune's score topics into DuckDB and slice them by metadata.")
    p.add_argument("--broker", default="kafka://127.0.0.1:9092", help="kafka://host:port (default: %(default)s)")
    p.add_argument("--db", type=Path, default=Path("scores.duckdb"), help="DuckDB file (default: %(default)s)")
    p.add_argument(
        "--by",
        action="append",
        help="metadata key to slice by; repeatable (default: tenant and experiment_arm)",
    )
    p.add_argument("--json", type=Path, help="also write the report as JSON to this file")
    p.add_argument("--max-idle", type=float, default=5.0, help="stop after N s without records (default: %(default)s)")
    args = p.parse_args(argv)
    keys = args.by or ["tenant", "experiment_arm"]
    con = open_db(args.db)
    try:
        stats = asyncio.run(consume_into(con, args.broker, TOPICS, args.max_idle))
        print(f"read {stats['records']} records: {stats['new_rows']} new rows, {stats['skipped']} skipped")
        rep = report(con, keys)
    except KafkaConnectionError as exc:
        print(f"cannot reach the broker at {args.broker}: {exc}", file=sys.stderr)
        return 69  # EX_UNAVAILABLE, as attune's own commands
    finally:
        con.close()
    print_report(rep)
    if args.json:
        args.json.write_text(json.dumps(rep, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
