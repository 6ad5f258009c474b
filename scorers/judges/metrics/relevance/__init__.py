"""Seed 002 metric 3, Response Relevance: cosine similarity of the query and response embeddings.

Default embedder: the local ONNX MiniLM (:mod:`scorers.embeddings`), so relevance costs nothing and needs no
key; route it to ``openai:text-embedding-3-small`` (seed 002's choice) in the config to use OpenAI.
The score is the raw cosine (seed 002 §3: "Relevance Score = cosine_similarity(query_emb,
response_emb)"); it is not clipped, so an (unusual) negative similarity stays visible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schemas import RubricRef
from scorers.embeddings import MODEL_ID, MiniLMEmbedder, shared_embedder

RUBRIC = RubricRef(id="relevance-embedding", version="1.0", source="seed-002")


def cosine(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
    if denom == 0.0:
        raise ValueError("cosine of a zero vector is undefined")
    return float(va @ vb / denom)


__all__ = ["MODEL_ID", "RUBRIC", "MiniLMEmbedder", "cosine", "shared_embedder"]
