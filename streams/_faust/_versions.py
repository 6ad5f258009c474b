"""The exact Faust and aiokafka versions this package was verified against, and what it touches inside them.

Why a check: :mod:`streams._faust` replaces private methods of Faust 0.15.3 and reads private attributes of
Faust and aiokafka (:data:`INTERNALS`). Another version may rename one, or fix the defect a patch works
around and change the behaviour a patch relies on, without any error: messages would again be dropped
silently. So a worker refuses to start on versions nobody has verified. To verify a new version, install it,
run ``tests/test_faust_adapter.py`` (the canary: every internal below still exists) and the crash and
fault suites, then update :data:`VERIFIED`. ``ATTUNE_ALLOW_UNVERIFIED_FAUST=1`` turns the refusal into a
warning for that trial run.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger("attune.streams")

#: Distribution -> the version every patch and private read in this package was verified against.
VERIFIED: dict[str, str] = {"faust-streaming": "0.15.3", "aiokafka": "0.14.0", "mode-streaming": "0.7.1"}
#: Set to 1 to start on other versions anyway (a warning instead of the refusal): for verifying one.
ALLOW_ENV = "ATTUNE_ALLOW_UNVERIFIED_FAUST"


class UnverifiedVersionError(RuntimeError):
    """An installed Faust/aiokafka version this package was not verified against."""


@dataclass(frozen=True, slots=True)
class Internal:
    """One private (or undeclared) name of a library that this package reads, calls or replaces.

    ``kind``: ``class`` — an attribute of the class itself (a method, a class-level default);
    ``instance`` — assigned to ``self`` in the ``__init__`` of the class or a base (or annotated there).
    """

    owner: str  # module:Class
    attr: str
    kind: Literal["class", "instance"]
    used_by: str


INTERNALS: tuple[Internal, ...] = (
    Internal(
        "faust.transport.drivers.aiokafka:AIOKafkaConsumerThread",
        "_create_worker_consumer",
        "class",
        "patches.limit_fetch_wait (replaced)",
    ),
    Internal(
        "aiokafka.consumer.consumer:AIOKafkaConsumer", "_fetch_max_wait_ms", "instance", "patches.limit_fetch_wait"
    ),
    Internal(
        "faust.transport.drivers.aiokafka:AIOKafkaConsumerThread",
        "highwaters",
        "class",
        "patches.highwaters_from_fetch (replaced)",
    ),
    Internal("faust.transport.consumer:Consumer", "getmany", "class", "patches.redeliver_instead_of_drop (wrapped)"),
    Internal("faust.transport.consumer:Consumer", "_read_offset", "instance", "patches.redeliver_instead_of_drop"),
    Internal("faust.transport.consumer:Consumer", "_paused_partitions", "instance", "audit.OffsetAudit.tail"),
    Internal("faust.stores.memory:Store", "_key_partition", "instance", "store.FaustStore.apply"),
    Internal("faust.transport.drivers.aiokafka:Producer", "_producer", "class", "sender.BatchSender"),
    Internal("aiokafka.client:AIOKafkaClient", "_wait_on_metadata", "class", "sender.BatchSender"),
    Internal("aiokafka.producer.producer:AIOKafkaProducer", "_partition", "class", "sender.BatchSender"),
    Internal("faust.streams:Stream", "take_events", "class", "runtime.create_app (not in StreamT)"),
    Internal("faust.tables.base:Collection", "_new_changelog_topic", "class", "store.state_table (serializers)"),
)


def installed() -> dict[str, str | None]:
    """Distribution -> installed version (None when not installed)."""
    out: dict[str, str | None] = {}
    for dist in VERIFIED:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def check_versions() -> None:
    """Refuse (:class:`UnverifiedVersionError`) to run on versions other than :data:`VERIFIED`."""
    found = installed()
    wrong = {d: v for d, v in found.items() if v != VERIFIED[d]}
    if not wrong:
        return
    have = ", ".join(f"{d}=={v or 'not installed'}" for d, v in wrong.items())
    want = " ".join(f"{d}=={v}" for d, v in VERIFIED.items())
    msg = (
        f"streams._faust patches and reads internals of {want}, but found {have}. Install the verified "
        f"versions (`pip install -e .` pins them), or verify the new ones: run tests/test_faust_adapter.py "
        f"and the crash and fault suites with {ALLOW_ENV}=1, then update streams/_faust/_versions.py."
    )
    if os.environ.get(ALLOW_ENV) == "1":
        log.warning("%s (continuing: %s=1)", msg, ALLOW_ENV)
        return
    raise UnverifiedVersionError(msg)
