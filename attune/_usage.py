"""Run totals of the judge tier (calls, cache hits, tokens, cost) summed from the records' ``Usage``.

Shared by ``attune evaluate``'s summary and ``attune report``, so both say the same thing. A record
whose ``cost_usd`` is null (a model without a price) makes the total cost unknown: the total is
reported as None with the number of calls behind it, never as the smaller sum of the priced ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemas import ConversationScore, TurnJudgment


@dataclass
class Tally:
    records: int = 0
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    priced_cost_usd: float = 0.0
    unpriced_records: int = 0
    unpriced_calls: int = 0

    def add(self, usage: Any) -> None:
        self.records += 1
        self.calls += usage.calls
        self.cache_hits += usage.cache_hits
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        if usage.cost_usd is None:
            self.unpriced_records += 1
            self.unpriced_calls += usage.calls
        else:
            self.priced_cost_usd += usage.cost_usd

    @property
    def cost_usd(self) -> float | None:
        """The total in USD, or None when any record's cost is unknown."""
        return None if self.unpriced_records else round(self.priced_cost_usd, 6)

    def cost_text(self) -> str:
        if self.unpriced_records == 0:
            return f"${self.priced_cost_usd:.4f}"
        known = f"; ${self.priced_cost_usd:.4f} for the priced ones" if self.priced_cost_usd else ""
        return f"unknown for {self.unpriced_calls} call(s){known}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "priced_cost_usd": round(self.priced_cost_usd, 6),
            "unpriced_calls": self.unpriced_calls,
        }


@dataclass
class UsageTotals:
    """Totals over the judge records of a run, overall and per judge (``provider:model``)."""

    total: Tally = field(default_factory=Tally)
    by_judge: dict[str, Tally] = field(default_factory=dict)

    def add(self, rec: Any) -> None:
        """Count ``rec`` if it is a judge record (a turn judgment or an LLM checklist score)."""
        if isinstance(rec, TurnJudgment) or (isinstance(rec, ConversationScore) and rec.tier == "llm"):
            self.total.add(rec.usage)
            self.by_judge.setdefault(rec.judge, Tally()).add(rec.usage)

    @property
    def unpriced_judges(self) -> list[str]:
        return sorted(j for j, t in self.by_judge.items() if t.unpriced_records)

    def __bool__(self) -> bool:
        return self.total.records > 0

    def line(self) -> str:
        """One line for a console: calls, cache hits, tokens and cost (or why it is unknown)."""
        t = self.total
        text = (
            f"{t.calls} call(s), {t.cache_hits} cache hit(s), tokens in {t.input_tokens:,} / out "
            f"{t.output_tokens:,}, cost {t.cost_text()}"
        )
        if self.unpriced_judges:
            text += f" (no [prices] entry for {', '.join(self.unpriced_judges)})"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.total.as_dict(),
            "unpriced_judges": self.unpriced_judges,
            "by_judge": {j: t.as_dict() for j, t in sorted(self.by_judge.items())},
        }
