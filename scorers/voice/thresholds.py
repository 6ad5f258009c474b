"""Seed 004 §Scoring Thresholds over 0-1 scores: quality levels and the release decision.

Here rather than next to the voice judge so the report can apply them without importing the judge
tier (and its provider SDKs). :mod:`scorers.judges.metrics.voice_judge` re-exports them.

* :func:`quality_level`: >= 0.9 excellent, >= 0.7 good, >= 0.5 adequate, >= 0.3 poor, else
  unacceptable. The seed lists the bands as 0.9-1.0, 0.7-0.8, 0.5-0.6, 0.3-0.4, 0.0-0.2 and leaves
  the gaps (e.g. 0.85) open; here each band runs up to the next band's lower bound.
* :func:`decide_release` (§Decision Guidelines): "revise" if the average < 0.6 or any individual
  metric < 0.5; else "deploy" if the average >= 0.7 ("across all scenarios": one decision per run);
  else "ab_test" (average >= 0.6). The "any metric < 0.5" rule is checked first because the seed lists
  it as sufficient for revision. It needs per-metric averages; without them it is reported as not
  checked, never as passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

DEPLOY_AT = 0.7
AB_TEST_AT = 0.6
METRIC_FLOOR = 0.5
Decision = Literal["deploy", "ab_test", "revise"]
#: The seed's wording of the thresholds, shown next to every decision.
GUIDELINES = (
    f"seed 004 §Decision Guidelines: deploy if average >= {DEPLOY_AT}; A/B test if average >= {AB_TEST_AT}; "
    f"revise if average < {AB_TEST_AT} or any individual metric < {METRIC_FLOOR}"
)


def quality_level(score: float) -> str:
    if score >= 0.9:
        return "excellent"
    if score >= 0.7:
        return "good"
    if score >= 0.5:
        return "adequate"
    if score >= 0.3:
        return "poor"
    return "unacceptable"


@dataclass(frozen=True, slots=True)
class ReleaseDecision:
    """A decision with what it rests on, so a reader can check it against the thresholds."""

    decision: Decision
    average: float
    n: int
    metric_means: dict[str, float] = field(default_factory=dict)
    below_floor: list[str] = field(default_factory=list)

    @property
    def floor_checked(self) -> bool:
        return bool(self.metric_means)

    def as_dict(self) -> dict[str, object]:
        return {
            "decision": self.decision,
            "average": round(self.average, 4),
            "n": self.n,
            "metric_means": {k: round(v, 4) for k, v in self.metric_means.items()},
            "below_floor": self.below_floor,
            "metric_floor_checked": self.floor_checked,
            "thresholds": {"deploy": DEPLOY_AT, "ab_test": AB_TEST_AT, "metric_floor": METRIC_FLOOR},
        }


def decide_release(scores: Sequence[float], metric_means: Mapping[str, float] | None = None) -> ReleaseDecision:
    """Seed 004 §Decision Guidelines over the run's scores (and optional per-metric averages)."""
    if not scores:
        raise ValueError("no scores to decide on")
    avg = sum(scores) / len(scores)
    means = dict(metric_means or {})
    below = sorted(k for k, v in means.items() if v < METRIC_FLOOR)
    if avg < AB_TEST_AT or below:
        decision: Decision = "revise"
    else:
        decision = "deploy" if avg >= DEPLOY_AT else "ab_test"
    return ReleaseDecision(decision, avg, len(scores), means, below)


def release_decision(scores: Sequence[float], metric_means: Mapping[str, float] | None = None) -> Decision:
    """Just the decision of :func:`decide_release`."""
    return decide_release(scores, metric_means).decision
