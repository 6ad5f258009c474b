"""docker-compose.yml cannot run here (no Docker); check its syntax and that it creates exactly our topics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streams import StreamSettings

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed; cannot validate docker-compose.yml")

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"


def test_compose_parses_and_has_the_production_shape() -> None:
    doc = yaml.safe_load(COMPOSE.read_text())
    services = doc["services"]
    assert {"kafka", "topics", "worker"} <= services.keys()
    env = services["kafka"]["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft, no ZooKeeper
    assert "zookeeper" not in services
    worker = services["worker"]
    assert worker["deploy"]["replicas"] >= 2
    assert worker["depends_on"]["topics"]["condition"] == "service_completed_successfully"
    assert worker["environment"]["ATTUNE_BROKER_PROFILE"] == "kafka"  # no Tansu workarounds on real Kafka
    assert "attune worker" in " ".join(worker["command"])


def test_compose_creates_every_topic_with_the_declared_partitions() -> None:
    doc = yaml.safe_load(COMPOSE.read_text())
    script = "\n".join(doc["services"]["topics"]["command"])
    lines = [m.groups() for m in re.finditer(r"^\s*create (\S+) (\d+)((?: \S+=\S+)*)$", script, re.M)]
    settings = StreamSettings()
    assert {name: int(n) for name, n, _ in lines} == settings.topics()
    configs = {name: dict(kv.split("=", 1) for kv in rest.split()) for name, _, rest in lines if rest}
    assert configs == settings.topic_configs()
