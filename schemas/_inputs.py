"""Input records: what producers (voice systems, batch files) send to attune."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._common import Channel, ConversationId, Metadata, Record, Role, TurnIndex

BIG_FIVE = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")


class Persona(BaseModel):
    """Big-Five trait scores in [0, 1] each (seed 002: scores, not a distribution)."""

    model_config = ConfigDict(extra="forbid")

    openness: float = Field(ge=0.0, le=1.0)
    conscientiousness: float = Field(ge=0.0, le=1.0)
    extraversion: float = Field(ge=0.0, le=1.0)
    agreeableness: float = Field(ge=0.0, le=1.0)
    neuroticism: float = Field(ge=0.0, le=1.0)


class TurnContext(BaseModel):
    """Optional side information a producer may attach (seed 002 memory keys, emotion, persona)."""

    model_config = ConfigDict(extra="forbid")

    memory: dict[str, Any] | None = None
    required_keys: list[str] = Field(default_factory=list)
    forbidden_keys: list[str] = Field(default_factory=list)
    neutral_keys: list[str] = Field(default_factory=list)
    emotions: dict[str, float] | None = Field(
        default=None, description="Detected emotion distribution (speech/text/fused); sums to 1 within 0.01."
    )
    persona: Persona | None = None
    channel: Channel = "voice"
    locale: str = Field(default="en", min_length=2, max_length=35, description="BCP-47 tag, e.g. 'en-GB'.")

    @field_validator("emotions")
    @classmethod
    def _distribution(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is None:
            return v
        if any(not math.isfinite(p) or p < 0.0 or p > 1.0 for p in v.values()):
            raise ValueError("emotion probabilities must be finite and lie in [0, 1]")
        total = sum(v.values())
        if v and abs(total - 1.0) > 0.01:
            raise ValueError(f"emotion distribution must sum to 1 (got {total:.3f})")
        return v

    @model_validator(mode="after")
    def _keys_disjoint(self) -> TurnContext:
        overlap = set(self.required_keys) & set(self.forbidden_keys)
        if overlap:
            raise ValueError(f"keys both required and forbidden: {sorted(overlap)}")
        return self


class Turn(Record):
    """One message of a live conversation, as published on the turns topic (keyed by conversation_id)."""

    kind: Literal["turn"] = "turn"
    conversation_id: ConversationId
    turn_index: TurnIndex = Field(
        description="Unique per message within a conversation, counting from 0; orders the turns. Indices "
        "below the last one that never arrive mark the conversation's records history_complete=false."
    )
    role: Role
    text: str
    ts: datetime | None = None
    end_of_conversation: bool = Field(default=False, strict=True)
    context: TurnContext | None = None
    metadata: Metadata | None = None


class ConversationEnd(Record):
    """Explicit end of a conversation; the buffer closes and the checklist runs."""

    kind: Literal["conversation_end"] = "conversation_end"
    conversation_id: ConversationId
    ts: datetime | None = None
    last_turn_index: TurnIndex | None = Field(
        default=None, description="If given, the buffer waits (up to the inactivity timeout) for this turn."
    )
    metadata: Metadata | None = None


class ConversationReplay(Record):
    """The turns that follow on this conversation's partition are the conversation again, whole, from its
    first turn: the worker discards what it holds of it (buffered turns, or the tombstone a close left)
    and scores it afresh.

    Why: after a broker lost its state, the conversations a worker names as lost are re-published from the
    producer's source; a worker on the new broker may already have closed them on partial history (their
    live tail), and without this event the re-published turns are ignored as late turns of a closed
    conversation. ``attune publish --only-conversations`` / ``--replay`` sends one before each conversation.
    """

    kind: Literal["conversation_replay"] = "conversation_replay"
    conversation_id: ConversationId
    ts: datetime | None = None


class Message(BaseModel):
    """One message inside a whole conversation (batch input)."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    text: str
    turn_index: TurnIndex | None = None
    ts: datetime | None = None


class Conversation(Record):
    """A whole conversation, the unit of ``attune evaluate`` and of the checklist."""

    kind: Literal["conversation"] = "conversation"
    conversation_id: ConversationId
    turns: list[Message] = Field(min_length=1)
    context: TurnContext | None = None
    metadata: Metadata | None = None

    @model_validator(mode="after")
    def _unique_indices(self) -> Conversation:
        seen = [m.turn_index for m in self.turns if m.turn_index is not None]
        if len(seen) != len(set(seen)):
            raise ValueError("turn_index values must be unique within a conversation")
        return self

    def as_turns(self) -> list[Turn]:
        """Explode into turn events, numbering messages that carry no turn_index by position.

        The metadata goes on every turn (it is small), so any one turn's records can be sliced by it.
        """
        out: list[Turn] = []
        for pos, m in enumerate(self.turns):
            out.append(
                Turn(
                    conversation_id=self.conversation_id,
                    turn_index=m.turn_index if m.turn_index is not None else pos,
                    role=m.role,
                    text=m.text,
                    ts=m.ts,
                    context=self.context if pos == 0 else None,
                    end_of_conversation=pos == len(self.turns) - 1,
                    metadata=self.metadata,
                )
            )
        return out
