"""The learned empathy signal: MiniLM sentence embeddings and a small linear head per target.

* embedder: :mod:`scorers.embeddings` (all-MiniLM-L6-v2 int8, ONNX, offline);
* head: ridge regression per target (overall empathy on 0-1, and the three EPITOME-style mechanisms,
  emotional reaction / interpretation / exploration, on 0-2), weights in ``weights.json`` next to this
  file, written by ``bench/train_empathy_model.py`` from licence-clean data only (docs/empathy-model.md);
* input: the features :func:`features` builds from the reply (and, where the trained model asks for it,
  the seeker's message); the weights file says which, so training and scoring cannot disagree.

Costs milliseconds of one core per short text, batched (docs/benchmarks.md, "Model stage: the learned empathy
signal (issue #16)", "Figures formerly in code comments"): never on the per-turn inline path. The stream runs it
in its own stage (``attune model-stage``), batch in ``attune evaluate --empathy-model``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from schemas import RubricRef

#: The mechanisms the components head predicts, in the record's order (EPITOME's three, 0-2 each).
COMPONENTS = ("emotional_reaction", "interpretation", "exploration")


class ModelFileError(ValueError):
    """The weights file is missing, malformed, or made for another embedder."""


@dataclass(frozen=True, slots=True)
class EmpathyEstimate:
    """The model's reading of one reply: overall empathy on the cheap signal's 1-5 scale, components 0-2."""

    empathy: float
    components: dict[str, float]


def features(response: np.ndarray, seeker: np.ndarray | None, kind: str) -> np.ndarray:
    """Rows of model input from unit-length embeddings (the training script calls this same function).

    ``response``: the reply alone. ``response+match``: the reply, its element-wise product with the
    seeker's message (which directions the two share), and their cosine: how far the reply is about
    what was said, not only how warm it sounds.
    """
    if kind == "response":
        return response
    if kind == "response+match":
        if seeker is None:
            raise ValueError("this model needs the seeker's message")
        cos = np.sum(response * seeker, axis=1, keepdims=True)
        return np.hstack([response, response * seeker, cos])
    raise ModelFileError(f"unknown feature kind {kind!r}")


class EmpathyModel:
    """Loads a weights file once; :meth:`score` maps texts to :class:`EmpathyEstimate` in batches."""

    def __init__(self, weights: dict[str, Any], embedder: Any = None) -> None:
        try:
            self.model_id: str = weights["id"]
            self.version: str = weights["version"]
            self.embedder_id: str = weights["embedder"]
            self.feature_kind: str = weights["features"]
            heads = weights["heads"]
            self._coef = {t: np.asarray(h["coef"], dtype=np.float32) for t, h in heads.items()}
            self._intercept = {t: float(h["intercept"]) for t, h in heads.items()}
        except (KeyError, TypeError) as e:
            raise ModelFileError(f"weights file lacks {e}") from e
        missing = {"empathy", *COMPONENTS} - set(self._coef)
        if missing:
            raise ModelFileError(f"weights file has no head for {sorted(missing)}")
        dims = {c.shape for c in self._coef.values()}
        if len(dims) != 1:
            raise ModelFileError(f"heads disagree on the input size: {sorted(dims)}")
        self.rubric = RubricRef(id=self.model_id, version=self.version, source="seed-004")
        self._embedder = embedder
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path | None = None, embedder: Any = None) -> EmpathyModel:
        """The shipped weights (default) or a file of the same format."""
        if path is None:
            text = resources.files(__package__).joinpath("weights.json").read_text(encoding="utf-8")
            where = "the shipped weights.json"
        else:
            text = Path(path).read_text(encoding="utf-8")
            where = str(path)
        try:
            weights = json.loads(text)
        except json.JSONDecodeError as e:
            raise ModelFileError(f"{where}: not JSON ({e})") from e
        return cls(weights, embedder)

    @property
    def needs_seeker(self) -> bool:
        return self.feature_kind != "response"

    @property
    def tag(self) -> str:
        return f"{self.model_id}@{self.version}"

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:  # first use loads the ONNX session (a noticeable pause), once per process
            if self._embedder is None:
                from scorers.embeddings import MODEL_ID, shared_embedder

                if self.embedder_id != MODEL_ID:
                    raise ModelFileError(f"weights made for embedder {self.embedder_id!r}, this is {MODEL_ID!r}")
                self._embedder = shared_embedder()
        return self._embedder.embed(texts)

    def predict(self, x: np.ndarray) -> list[EmpathyEstimate]:
        """Heads applied to feature rows; outputs clipped to their scales (ridge can overshoot)."""
        raw = {t: x @ c + self._intercept[t] for t, c in self._coef.items()}
        overall = np.clip(1.0 + 4.0 * raw["empathy"], 1.0, 5.0)
        comps = {c: np.clip(raw[c], 0.0, 2.0) for c in COMPONENTS}
        return [
            EmpathyEstimate(round(float(overall[i]), 4), {c: round(float(comps[c][i]), 4) for c in COMPONENTS})
            for i in range(x.shape[0])
        ]

    def score(self, responses: Sequence[str], seekers: Sequence[str | None] | None = None) -> list[EmpathyEstimate]:
        """Blocking (ONNX): call it from a worker thread in async code. One embedding pass per batch.

        A seeker of None (no earlier user turn) is a zero vector: no shared directions, cosine 0, as the
        training rows without a seeker message were encoded.
        """
        if not responses:
            return []
        n = len(responses)
        if not self.needs_seeker:
            return self.predict(features(self._embed(list(responses)), None, self.feature_kind))
        if seekers is None or len(seekers) != n:
            raise ValueError("this model needs one seeker message (or None) per reply")
        known = [i for i, s in enumerate(seekers) if s is not None]
        vecs = self._embed(list(responses) + [seekers[i] or "" for i in known])
        seeker_vecs = np.zeros_like(vecs[:n])
        seeker_vecs[known] = vecs[n:]
        return self.predict(features(vecs[:n], seeker_vecs, self.feature_kind))
