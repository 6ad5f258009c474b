"""Seed 004's release decision for a run, from its ``voice_judge`` records.

The seed decides per run ("Average score >= 0.7 across all scenarios"), not per conversation, so there
is one decision per set of records. Its other rule, "any individual metric < 0.5", needs the six
dimension averages; the seed's judge prompt returns one overall score, so that rule cannot be checked
from the judge and the decision says so (it is not counted as passed). Judge ERRORs carry no score:
they are left out of the average and reported next to the decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemas import TurnJudgment

FLOOR_NOT_CHECKED = "per-metric floor not checked: seed 004's judge prompt returns one overall score"


@dataclass
class ReleaseTally:
    scores: list[float] = field(default_factory=list)
    errors: int = 0

    def add(self, rec: Any) -> None:
        if not isinstance(rec, TurnJudgment) or rec.metric != "voice_judge":
            return
        score = rec.details.get("score")
        if rec.status == "ok" and isinstance(score, int | float) and not isinstance(score, bool):
            self.scores.append(float(score))
        else:
            self.errors += 1

    def __bool__(self) -> bool:
        return bool(self.scores or self.errors)

    def as_dict(self) -> dict[str, Any] | None:
        """The decision and what it rests on; None without voice_judge records."""
        if not self:
            return None
        from scorers.voice.thresholds import GUIDELINES, decide_release

        base: dict[str, Any] = {"source": "voice_judge", "errors_excluded": self.errors, "rule": GUIDELINES}
        if not self.scores:
            return {**base, "decision": None, "n": 0, "why": "every voice_judge call ended as ERROR"}
        return {**base, **decide_release(self.scores).as_dict(), "note": FLOOR_NOT_CHECKED}

    def line(self) -> str:
        d = self.as_dict()
        if d is None:
            return ""
        errors = f"; {d['errors_excluded']} voice_judge ERROR(s) not included" if d["errors_excluded"] else ""
        if d["decision"] is None:
            return f"no decision: {d['why']}{errors}"
        return (
            f"{str(d['decision']).upper()}: average {d['average']:.3f} over {d['n']} judged turn(s) "
            f"({d['rule']}); {d['note']}{errors}"
        )
