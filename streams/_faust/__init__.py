"""Everything attune knows about Faust's and aiokafka's internals, in one place.

Outside this package no module imports Faust, and none reaches into a private attribute of Faust or of a
client Faust owns (``tests/test_faust_adapter.py`` checks both). Inside it:

* ``runtime`` — the Faust app: the turns agent around :class:`streams._core.TurnProcessor`, the timer,
  the worker (``create_app``, ``run_worker``);
* ``store`` — the two Faust tables as the processor's ``StateStore``;
* ``sender`` — records out through the aiokafka producer Faust owns, one batch per partition;
* ``audit`` — the offset audit that re-reads what Faust's consumer skipped;
* ``judge_agent`` — the judge agent: runs the jobs the turn agent emits, acks them after their records
  (imported by ``create_app`` only with judges on: it needs the ``judges`` extra's SDKs);
* ``acks`` — judge-job acks passed to Faust in offset order;
* ``patches`` — the narrow replacements of Faust 0.15.3 methods (redelivery, fetch wait, high watermarks);
* ``broker_watch`` — a worker's check that the broker did not lose its state;
* ``fatal`` — a delivery that fails after aiokafka's retries stops the worker without a commit;
* ``_versions`` — the exact versions all of this was verified against (checked when an app is created)
  and the list of internals it touches (the canary test reads it).
"""

from __future__ import annotations

from ._versions import INTERNALS, VERIFIED, UnverifiedVersionError, check_versions
from .audit import OffsetAudit
from .broker_watch import EXIT_BROKER_STATE_LOST, BrokerWatch
from .fatal import EXIT_DELIVERY_FAILED
from .patches import REDELIVERED, fetched_highwaters
from .runtime import Runtime, create_app, freeze_long_lived, run_worker
from .sender import BatchSender, Record
from .store import FaustStore

__all__ = [
    "EXIT_BROKER_STATE_LOST",
    "EXIT_DELIVERY_FAILED",
    "INTERNALS",
    "REDELIVERED",
    "VERIFIED",
    "BatchSender",
    "BrokerWatch",
    "FaustStore",
    "OffsetAudit",
    "Record",
    "Runtime",
    "UnverifiedVersionError",
    "check_versions",
    "create_app",
    "fetched_highwaters",
    "freeze_long_lived",
    "run_worker",
]
