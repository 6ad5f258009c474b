"""Test doubles shipped with attune (used by its tests and benchmarks; never a product default).

Imported lazily so ``python -m attune.testing.fake_judge`` does not import the module twice.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FakeJudgeServer", "Fault", "synthesise"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import fake_judge

        return getattr(fake_judge, name)
    raise AttributeError(name)
