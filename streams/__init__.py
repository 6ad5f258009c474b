"""attune's streaming pipeline: Faust agents over a Kafka-protocol broker (embedded Tansu by default).

* :mod:`streams.broker` — :class:`EmbeddedBroker`, broker profiles, explicit topic creation;
* :class:`TurnProcessor` — the per-conversation logic (ordering, de-duplication, crisis_pending, close);
* :func:`create_app` / :func:`run_worker` — the Faust app around it (imported lazily: Faust is heavy);
* :class:`WorkerProcess` — supervising ``attune worker`` subprocesses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Every name is imported on first use: ``streams._core`` pulls in the scorers, a slow import (docs/benchmarks.md,
# "Streaming", "Figures formerly in code comments") that a process that only needs ``streams.security`` or
# ``streams.broker`` (an example consumer, a standby taking over) must not pay at start.
_LAZY = {
    **dict.fromkeys(
        (
            "BatchResult",
            "ClosedConversation",
            "CloseHook",
            "DictStore",
            "Inbound",
            "Outbound",
            "StateStore",
            "Timeouts",
            "TurnHook",
            "TurnProcessor",
            "Write",
        ),
        "_core",
    ),
    **dict.fromkeys(("PROFILES", "BrokerProfile", "EmbeddedBroker", "create_topics", "tansu_binary"), "broker"),
    "StreamSettings": "settings",
    "create_app": "_faust",
    "run_worker": "_faust",
    "FaustStore": "_faust",
    "WorkerProcess": "worker",
}

if TYPE_CHECKING:
    from ._core import (
        BatchResult,
        ClosedConversation,
        CloseHook,
        DictStore,
        Inbound,
        Outbound,
        StateStore,
        Timeouts,
        TurnHook,
        TurnProcessor,
        Write,
    )
    from ._faust import FaustStore, create_app, run_worker
    from .broker import PROFILES, BrokerProfile, EmbeddedBroker, create_topics, tansu_binary
    from .settings import StreamSettings
    from .worker import WorkerProcess


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(name)


__all__ = [
    "PROFILES",
    "BatchResult",
    "BrokerProfile",
    "CloseHook",
    "ClosedConversation",
    "DictStore",
    "EmbeddedBroker",
    "FaustStore",
    "Inbound",
    "Outbound",
    "StateStore",
    "StreamSettings",
    "Timeouts",
    "TurnHook",
    "TurnProcessor",
    "WorkerProcess",
    "Write",
    "create_app",
    "create_topics",
    "run_worker",
    "tansu_binary",
]
