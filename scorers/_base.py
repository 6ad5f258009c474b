"""The value types every scorer speaks. Plain frozen dataclasses: they sit on the per-turn hot path."""

from __future__ import annotations

from dataclasses import dataclass, field

from schemas import Message, Severity, TurnContext

_DEFAULT_CONTEXT = TurnContext()


@dataclass(frozen=True, slots=True)
class Exchange:
    """One assistant reply with what it answers: the unit of per-turn scoring.

    ``user_text`` is the nearest earlier user message ("" if the assistant spoke first);
    ``history`` holds the earlier messages, oldest first, without the reply itself.
    """

    conversation_id: str
    turn_index: int
    user_text: str
    response: str
    history: tuple[Message, ...] = ()
    context: TurnContext = field(default_factory=lambda: _DEFAULT_CONTEXT)

    @property
    def channel(self) -> str:
        return self.context.channel


@dataclass(frozen=True, slots=True)
class Signal:
    """A deterministic detection (crisis cue, harmful pattern...) with the short span that matched."""

    category: str
    evidence: str
    severity: Severity = "high"
