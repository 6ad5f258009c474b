"""Shared pieces of every record: schema version, rubric references, deterministic ids."""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

#: The major version every record carries: bumped only by an incompatible change (docs/schemas.md).
SCHEMA_VERSION: Literal[1] = 1
#: The minor version of the contract: additive changes only, so no record needs to carry it. It is in the
#: exported JSON Schemas (``x-attune-schema-version``) and in docs/schemas.md's change log.
SCHEMA_MINOR = 4

ConversationId = Annotated[str, StringConstraints(min_length=1, max_length=256, strip_whitespace=False)]
#: Strict: a JSON true, "3" or 3.0 is a producer bug, not an index (lax mode would coerce them).
TurnIndex = Annotated[int, Field(ge=0, le=1_000_000, strict=True)]
Role = Literal["user", "assistant"]
Channel = Literal["voice", "text"]


#: Metadata values are flat JSON scalars, so an analytics consumer can make each key a column.
MAX_METADATA_CHARS = 256
MetadataValue = Annotated[str, StringConstraints(max_length=MAX_METADATA_CHARS)] | int | float | bool | None
MetadataKey = Annotated[str, StringConstraints(min_length=1, max_length=64)]
#: At most this many keys on one record (and merged over one conversation's turns).
MAX_METADATA_KEYS = 32


def _flat_metadata(v: object) -> object:
    """One clear reason per bad value (the union type alone reports four alternatives for each)."""
    if isinstance(v, dict):
        for k, x in v.items():
            if not (x is None or isinstance(x, str | int | float | bool)):
                raise ValueError(
                    f"metadata values must be a string, number, boolean or null (flat, no nesting); "
                    f"key {str(k)[:64]!r} holds a {type(x).__name__}"
                )
            if isinstance(x, str) and len(x) > MAX_METADATA_CHARS:
                raise ValueError(f"metadata key {str(k)[:64]!r}: {len(x)} characters, limit {MAX_METADATA_CHARS}")
    return v


Metadata = Annotated[
    dict[MetadataKey, MetadataValue],
    BeforeValidator(_flat_metadata),
    Field(
        max_length=MAX_METADATA_KEYS,
        description="Producer-defined labels (tenant, app_version, model_version, experiment_arm, channel, "
        "locale, ...): flat JSON scalars, carried unchanged into every record derived from this input.",
    ),
]


class Record(BaseModel):
    """Base of every record on a topic or in a JSONL file.

    Constructing a record in code with an unknown field fails (``extra="forbid"``: a typo in attune is a
    bug). Decoding what another system sent does not: :mod:`schemas._codec` validates with
    ``extra="allow"``, so a producer or a newer attune adding a field is forward compatible
    (docs/schemas.md).
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
