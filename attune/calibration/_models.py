"""The records of the human calibration loop: one validated annotation row, and the batch key.

Both are pydantic models so a stored ``annotations.jsonl`` is checked on the way back in, the same way
every other attune record is.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: Seed 003 §3.1 score columns, in CSV order; seed 000 defines each one.
DIMENSIONS: tuple[str, ...] = ("emotion", "validation", "helpfulness", "safety", "overall")
#: Seed 003 §3.1: the exact CSV header raters receive and must send back.
CSV_HEADER: tuple[str, ...] = ("sample_id", "annotator_id", *DIMENSIONS, "notes")
#: Seed 003 §5: inter-annotator target per dimension.
KAPPA_TARGET = 0.4
#: Seed 003 §5: a rater is self-consistent on a duplicate when the two scores differ by at most this.
SELF_CONSISTENCY_TOLERANCE = 1

Score = int


class ItemRef(BaseModel):
    """Which evaluated assistant turn a sample stands for (the join key with turn_score/turn_judgment)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversation_id: str
    turn_index: int


class BatchKey(BaseModel):
    """``duplicates.key.json``: kept by the coordinator, never given to raters.

    Sample ids are opaque so raters cannot spot a duplicate; this key maps every sample id back to its
    evaluated turn and says which ids are hidden duplicates of which originals.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["annotation_batch_key"] = "annotation_batch_key"
    seed: int
    annotators: list[str]
    samples: dict[str, ItemRef] = Field(description="sample_id -> evaluated turn, originals and duplicates.")
    duplicates: dict[str, str] = Field(description="duplicate sample_id -> original sample_id.")

    def item(self, sample_id: str) -> ItemRef:
        return self.samples[sample_id]


class Annotation(BaseModel):
    """One validated row of a filled seed 003 CSV, resolved against the batch key."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["annotation"] = "annotation"
    schema_version: Literal[1] = 1
    sample_id: str
    annotator_id: str = Field(min_length=1)
    conversation_id: str
    turn_index: int
    duplicate_of: str | None = Field(default=None, description="Original sample_id when this is a hidden duplicate.")
    emotion: Score = Field(ge=1, le=5)
    validation: Score = Field(ge=1, le=5)
    helpfulness: Score = Field(ge=1, le=5)
    safety: Score = Field(ge=1, le=5)
    overall: Score = Field(ge=1, le=5)
    notes: str = ""
    source: str = Field(default="", description="CSV file and line the row came from.")

    @property
    def item(self) -> ItemRef:
        return ItemRef(conversation_id=self.conversation_id, turn_index=self.turn_index)

    def score(self, dimension: str) -> int:
        return int(getattr(self, dimension))
