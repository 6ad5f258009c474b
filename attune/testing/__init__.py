"""Test doubles shipped with attune (used by its tests and benchmarks; never a product default)."""

from .fake_judge import FakeJudgeServer, Fault, synthesise

__all__ = ["FakeJudgeServer", "Fault", "synthesise"]
