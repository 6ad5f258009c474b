"""Settings of a stream worker, and how they become Faust configuration for one broker profile."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemas import DEFAULT_LIMITS, Limits
from schemas.topics import ALL_TOPICS, DEAD_LETTER, INTERNAL_TOPICS, JUDGE_JOBS, TURNS

from . import security
from ._core import Timeouts
from .broker import PROFILES, BrokerProfile, ProfileName, topic_plan

#: Faust table names; the changelog topics in ``schemas.topics.INTERNAL_TOPICS`` are named after them.
TURN_TABLE = "turn_buffer"
META_TABLE = "conversations"

#: Largest record the worker produces (a dead letter of a maximal rejected payload fits with room).
MAX_RECORD_BYTES = 4 * 1024 * 1024

#: Kafka's own default log retention (7 days), made explicit so it is documented and configurable.
DEFAULT_RETENTION_HOURS = 168.0
#: Longest segment of a retention-bound topic: Kafka deletes or compacts closed segments only.
MAX_SEGMENT_MS = 3_600_000
DEFAULT_METRICS_PORT = 9464


@dataclass(frozen=True, slots=True)
class StreamSettings:
    """Everything a worker needs. ``profile`` selects the broker workarounds (see :mod:`streams.broker`)."""

    broker: str = "kafka://127.0.0.1:9092"
    profile: ProfileName = "kafka"
    app_id: str = "attune"
    partitions: int = TURNS.partitions
    batch_max: int = 500
    #: Longest wait to fill an agent batch. Not 2 ms: live latency was lower, but draining batches shrank to a
    #: third and a worker drained fewer turns/s, since each batch has a fixed cost (docs/benchmarks.md,
    #: "2026-11-23: the worker's fetch wait, and where a slow turn waits").
    batch_within: float = 0.005
    timeouts: Timeouts = field(default_factory=Timeouts)
    timer_interval: float = 0.5
    naive: bool = False
    #: A user turn's own alerts go out through the alert path (streams._alert_path: no group membership, its
    #: own thread), so they never wait for a rebalance or table recovery; False: the scoring agent sends them.
    alert_path: bool = True
    limits: Limits = DEFAULT_LIMITS
    #: Raw text on the broker (turns, dead letters, superseded changelog values), in hours; 0 = broker defaults.
    retention_hours: float = DEFAULT_RETENTION_HOURS
    #: ``/metrics``, ``/healthz``, ``/readyz`` (streams.observability); port 0 turns them off.
    metrics_host: str = "127.0.0.1"
    metrics_port: int = DEFAULT_METRICS_PORT
    datadir: Path | None = None
    #: LLM judges (streams.judging): off unless ``judge`` (provider:model) or ``judge_config`` is set.
    judge: str | None = None
    judge_config: Path | None = None
    judge_max_in_flight: int = 256
    #: Seconds between checks that the broker still has the worker's topics and offsets (0: off); see
    #: streams._faust.broker_watch (a restarted in-memory broker makes the worker exit 75 instead of hanging).
    broker_check_interval: float = 5.0

    @property
    def judging(self) -> bool:
        return bool(self.judge or self.judge_config)

    @property
    def data_dir(self) -> Path:
        """Faust's data directory, also where a worker writes the ids of conversations a broker lost."""
        return self.datadir or Path(tempfile.gettempdir()) / "attune-faust"

    @property
    def broker_profile(self) -> BrokerProfile:
        return PROFILES[self.profile]

    def topics(self) -> dict[str, int]:
        """Every topic the worker needs, with explicit partition counts (the turns override moves them)."""
        plan = topic_plan((*ALL_TOPICS, *INTERNAL_TOPICS), (TURNS, *INTERNAL_TOPICS), self.partitions)
        return {self._rename(name): n for name, n in plan.items()}

    def topic_configs(self) -> dict[str, dict[str, str]]:
        """Per-topic broker configs: compacted changelogs, and room for dead letters of big inputs.

        A rejected payload of ``max_payload_bytes`` becomes a dead letter ~1.4x larger (base64 plus a
        preview), so the dead-letter topic and the producer allow :data:`MAX_RECORD_BYTES`.
        """
        out = {self._rename(s.name): {"cleanup.policy": "compact"} for s in INTERNAL_TOPICS if "-changelog" in s.name}
        out[DEAD_LETTER.name] = {"max.message.bytes": str(MAX_RECORD_BYTES)}
        out.update(self._retention_configs(out))
        return out

    def _retention_configs(self, base: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """``retention_hours`` as topic configs (see docs/operations.md, "Retention").

        The turns, dead-letter and judge-jobs topics (raw text) delete records after ``retention.ms``; the changelogs
        stay compacted, and ``max.compaction.lag.ms`` bounds how long a superseded value (the text of a
        closed conversation, deleted by its tombstone) may wait for compaction. ``segment.ms`` caps the
        active segment, which Kafka never deletes or compacts, at an hour.
        """
        ms = round(self.retention_hours * 3_600_000)
        if ms <= 0:
            return {}
        segment = {"segment.ms": str(min(ms, MAX_SEGMENT_MS))}
        out = {
            name: {**base.get(name, {}), "retention.ms": str(ms), **segment}
            for name in (TURNS.name, DEAD_LETTER.name, JUDGE_JOBS.name)
        }
        for name, cfg in base.items():
            if cfg.get("cleanup.policy") == "compact":
                out[name] = {**cfg, "max.compaction.lag.ms": str(ms), **segment}
        return out

    def _rename(self, name: str) -> str:
        """Faust names changelogs ``{app id}-{table}-changelog``; the specs use the default app id."""
        if name.endswith("-changelog") and name.startswith("attune-"):
            return f"{self.app_id}-{name[len('attune-') :]}"
        return name

    def faust_config(self) -> dict[str, Any]:
        prof = self.broker_profile
        cfg: dict[str, Any] = {
            "broker": self.broker,
            "store": "memory://",
            "processing_guarantee": "at_least_once",
            "topic_partitions": self.partitions,
            "topic_replication_factor": 1,
            "table_standby_replicas": 0,
            "broker_session_timeout": prof.session_timeout,
            "broker_heartbeat_interval": prof.heartbeat_interval,
            "broker_commit_interval": 1.0,
            "producer_linger": prof.linger_ms / 1000.0,
            "consumer_auto_offset_reset": "earliest",
            "web_enabled": False,
            "producer_max_request_size": MAX_RECORD_BYTES,
            "datadir": str(self.data_dir),
        }
        from ._faust.credentials import faust_credentials

        creds = faust_credentials(security.current())  # TLS/SASL from ATTUNE_KAFKA_* (streams.security)
        if creds is not None:
            cfg["broker_credentials"] = creds
        return cfg
