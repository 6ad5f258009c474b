"""Shared pieces of every record: schema version, rubric references, deterministic ids."""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

#: Bump when a record's shape changes incompatibly; every record carries it.
SCHEMA_VERSION: Literal[1] = 1

ConversationId = Annotated[str, StringConstraints(min_length=1, max_length=256, strip_whitespace=False)]
#: Strict: a JSON true, "3" or 3.0 is a producer bug, not an index (lax mode would coerce them).
TurnIndex = Annotated[int, Field(ge=0, le=1_000_000, strict=True)]
Role = Literal["user", "assistant"]
Channel = Literal["voice", "text"]


class Record(BaseModel):
    """Base of every record on a topic or in a JSONL file.

    Unknown fields are rejected (``extra="forbid"``) so a producer typo surfaces as a
    dead-letter reason instead of being silently dropped.
    """

    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)

    schema_version: Literal[1] = SCHEMA_VERSION


class RubricRef(BaseModel):
    """Which versioned rubric (and which seed document) produced a score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Stable rubric id, e.g. 'voice-companion' or 'conversation-checklist'.")
    version: str = Field(description="Rubric version, e.g. '2.0'. Changing prompts or formulas bumps it.")
    source: str = Field(description="Seed document the rubric implements, e.g. 'seed-004'.")

    @property
    def tag(self) -> str:
        return f"{self.id}@{self.version}"


def stable_id(*parts: object) -> str:
    """Deterministic 20-hex-digit id: the same inputs give the same id on every worker and redelivery."""
    h = hashlib.blake2b(digest_size=10)
    for p in parts:
        h.update(str(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()
