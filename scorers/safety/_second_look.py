"""The crisis second look: MiniLM-embedding signals averaged with the inline n-gram model, off the inline path.

Why it exists: the inline detector (rules + n-gram model) generalises to writers it never saw at about 0.82
recall for 3% false alarms. A weighted average of z-scored signals does better in writer-out cross-validation
(docs/safety-detection.md, "Second look"): the n-gram model's decision value; a head over the shipped sentence
embedding (a logistic head, 0.87 with the n-gram model; three one-layer nets, 0.89); and, since 1.3, the
*nearest-example margin* (cosine similarity to the nearest training crisis minus that to the nearest training
negative; 0.92 with the other two). Since 1.4 a long turn is also read in windows (:class:`Windows`). The
trainer picks the head kind, the weights and the windows' share. An embedding costs 10-18 ms
per text, so it cannot run per turn inline; it runs batched in the model stage (``attune model-stage``;
``attune evaluate`` in batch), where a lag costs nothing.

What it may do: *add* a ``possible`` crisis alert (detector ``model``, categories ``model_only`` and
``second_look``) for a user turn on which the inline tier raised none; or, since 1.14, a ``high`` one (detector
``rule+model``, categories the anchor's C-SSRS category, ``anchor_model`` and ``second_look``) when its probability
reaches ``confirm`` and the turn carries an anchor concept about the user (``_concepts.anchor_finding``): the same
confirmation the inline model gives at its own ``confirm``, from the stronger signal. Since rules 2.24 it also
raises an inline ``possible`` alert the inline model alone gave (no rule finding) to ``high`` the same way; there it
adds nothing when it confirms no anchor (the turn is alerted already). It never withdraws or lowers an inline alert,
and it never obliges a crisis resource in the next reply (only rule findings do).

Which turns it looks at (:meth:`SecondLook.reads`): user turns in a covered language that raised no inline alert on
their own text, or only the inline model's ``possible`` one, and that the inline model rates at or above
``prescreen`` (most ordinary turns are below it and are never embedded) or, since 1.20, that name a death or
self-harm concept (``anchored_pass``: the inline model's low score no longer keeps them from the stronger signal).
Weights: ``crisis_second_look.json`` and the training examples' embeddings ``crisis_second_look_examples.npy``
(int8, checked against the digest the JSON records), both from bench/train_crisis_second_look.py; the version is
in every alert.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from schemas import ConversationEnd, ConversationReplay, Metadata, SafetyAlert, stable_id
from schemas import Turn as TurnEvent

from ._assess import CrisisAssessment, assess_crisis, detector_version, reading_forms
from ._concepts import Finding, anchor_finding, anchored
from ._model import model as ngram_model
from ._normalise import normalise


@dataclass(frozen=True, slots=True)
class LookInput:
    conversation_id: str
    turn_index: int
    text: str
    metadata: Metadata | None


def _floats(blob: str, shape: tuple[int, ...]) -> np.ndarray:
    """A weight array stored as base64 of little-endian float32 (exact, and a third the size of decimals)."""
    return np.frombuffer(base64.b64decode(blob), dtype="<f4").astype(np.float64).reshape(shape)


class EmbeddingHead:
    """The head's decision value (a logit) for rows of embeddings: ``lr`` (a logistic head) or ``mlp`` (one-layer
    ReLU nets whose probabilities are averaged, then turned back into a logit clipped at 1e-6, as the trainer
    does)."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.kind: str = params["kind"]
        dim = int(params["dim"])
        if self.kind == "lr":
            self.weights = np.asarray(params["weights"], dtype=np.float64)
            self.bias = float(params["bias"])
            if self.weights.shape != (dim,):
                raise ValueError(f"logistic head: {self.weights.shape[0]} weights for {dim} dimensions")
        elif self.kind == "mlp":
            hidden = int(params["hidden"])
            self.nets = [
                (
                    _floats(n["w1"], (dim, hidden)),
                    _floats(n["b1"], (hidden,)),
                    _floats(n["w2"], (hidden,)),
                    float(n["b2"]),
                )
                for n in params["nets"]
            ]
        else:
            raise ValueError(f"unknown embedding head kind {self.kind!r}")
        self.dim = dim

    def decision(self, vectors: np.ndarray) -> np.ndarray:
        x = np.asarray(vectors, dtype=np.float64)
        if self.kind == "lr":
            return x @ self.weights + self.bias
        p = np.mean([_sigmoid(np.maximum(x @ w1 + b1, 0.0) @ w2 + b2) for w1, b1, w2, b2 in self.nets], axis=0)
        p = np.clip(p, 1e-6, 1 - 1e-6)
        return np.log(p / (1 - p))


def _sigmoid(s: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(s, -40.0, 40.0)))


class NearestExamples:
    """The margin of each embedding: cosine similarity to the nearest training crisis minus that to the nearest
    training negative (all vectors unit length; examples stored as int8, ``scale`` 127)."""

    def __init__(self, vectors: np.ndarray, n_crisis: int) -> None:
        self._crisis = np.ascontiguousarray(vectors[:n_crisis], dtype=np.float32)
        self._none = np.ascontiguousarray(vectors[n_crisis:], dtype=np.float32)
        if not len(self._crisis) or not len(self._none):
            raise ValueError("nearest examples need crises and negatives")

    @classmethod
    def from_bytes(cls, data: bytes, spec: dict[str, Any]) -> NearestExamples:
        digest = hashlib.sha256(data).hexdigest()
        if digest != spec["sha256"]:
            raise ValueError(f"{spec['file']}: sha256 {digest[:12]}..., the weights expect {spec['sha256'][:12]}...")
        q = np.load(io.BytesIO(data), allow_pickle=False)
        if q.dtype != np.int8 or q.shape[0] != spec["crisis"] + spec["none"]:
            raise ValueError(
                f"{spec['file']}: {q.dtype} {q.shape}, expected int8 with {spec['crisis'] + spec['none']} rows"
            )
        return cls(q.astype(np.float32) / float(spec["scale"]), int(spec["crisis"]))

    def margin(self, vectors: np.ndarray) -> np.ndarray:
        x = np.asarray(vectors, dtype=np.float32)
        return ((x @ self._crisis.T).max(axis=1) - (x @ self._none.T).max(axis=1)).astype(np.float64)


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


#: The signals the second look averages, in the order of ``signals`` in its weights.
SIGNALS = ("ngram", "head", "near")


@dataclass(frozen=True, slots=True)
class Windows:
    """How a long turn is also read window by window (since 1.4): a turn of more than ``min_words`` words is cut
    into ``size``-word windows every ``stride`` words (the last one ending at the last word; the concept layer
    cuts long voice turns the same way), each scored like a turn, and the turn's combined score becomes
    ``(1 - mix) * whole + mix * (its highest window)``. Why: a disclosure buried in a long message is diluted
    in one embedding of the whole (writer-out recall at 3% false positives 0.82 on texts over 30 words against
    0.93 on shorter ones)."""

    min_words: int
    size: int
    stride: int
    mix: float

    def __post_init__(self) -> None:
        # stride <= size: no word between windows is skipped; min_words >= size: every cut turn fills a window
        if not (1 <= self.stride <= self.size <= self.min_words and 0.0 <= self.mix <= 1.0):
            raise ValueError(f"second look windows {self}: need 1 <= stride <= size <= min_words, 0 <= mix <= 1")

    def of(self, text: str) -> list[str]:
        words = text.split()
        if len(words) <= self.min_words:
            return []
        starts = list(range(0, len(words) - self.size + 1, self.stride))
        if starts[-1] + self.size < len(words):
            starts.append(len(words) - self.size)
        return [" ".join(words[i : i + self.size]) for i in starts]

    def mixed(self, whole: Any, top: Any) -> Any:
        """A long turn's combined score from its whole text's and its highest window's (floats or arrays)."""
        return (1 - self.mix) * whole + self.mix * top


def combine(values: dict[str, np.ndarray], signals: dict[str, tuple[float, float, float]]) -> np.ndarray:
    """The weighted average of z-scored signals, before calibration; ``signals`` maps a name to (weight, mean,
    standard deviation). The trainer calls it on writer-out values, the stage on a batch."""
    z = np.zeros(len(values["ngram"]))
    for name, (w, mu, sd) in signals.items():
        z += w * (values[name] - mu) / sd
    return z


class SecondLook:
    """Batched crisis probabilities for user turns the inline tier left without an alert or with only its model's."""

    def __init__(self, params: dict[str, Any], embedder: Any = None, examples: NearestExamples | None = None) -> None:
        self.version: str = params["version"]
        signals = params["signals"]
        if set(signals) - set(SIGNALS) or "ngram" not in signals:
            raise ValueError(f"second look signals {sorted(signals)}: expected ngram and any of {SIGNALS[1:]}")
        #: name -> (weight, mean, standard deviation) of each signal averaged, z-scored
        self.signals = {n: (float(v["weight"]), float(v["z"][0]), float(v["z"][1])) for n, v in signals.items()}
        self.head = EmbeddingHead(params["head"]) if "head" in signals else None
        if "near" in signals and examples is None:
            spec = params["examples"]
            examples = NearestExamples.from_bytes(
                resources.files(__package__).joinpath(spec["file"]).read_bytes(), spec
            )
        self.examples = examples if "near" in signals else None
        self.platt = tuple(float(v) for v in params["platt"])
        self.windows = Windows(**params["windows"]) if "windows" in params else None
        self.prescreen = float(params["prescreen"])
        #: since 1.20 a turn that names a death or self-harm concept (an anchor class) is read whatever the inline
        #: model rates it: the prescreen saves embeddings on ordinary turns, and such turns are few
        #: (docs/safety-detection.md)
        self.anchored_pass: bool = bool(params.get("anchored_pass", False))
        self.threshold = float(params["threshold"])
        #: the probability at which an anchor concept is confirmed (severity high); None (before 1.14): never
        self.confirm: float | None = float(params["confirm"]) if params.get("confirm") is not None else None
        self._embedder = embedder

    @classmethod
    def load(cls, path: str | Path | None = None, embedder: Any = None) -> SecondLook:
        text = (
            resources.files(__package__).joinpath("crisis_second_look.json").read_text(encoding="utf-8")
            if path is None
            else Path(path).read_text(encoding="utf-8")
        )
        return cls(json.loads(text), embedder)

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from scorers.embeddings import shared_embedder

            self._embedder = shared_embedder()
        return self._embedder

    def passes(self, normalised: str, probability: float) -> bool:
        """Whether a turn (its normalised text, the inline model's probability) passes the prescreen."""
        return probability >= self.prescreen or (self.anchored_pass and anchored(normalised))

    def probabilities(self, texts: Sequence[str]) -> list[float | None]:
        """Calibrated probability per text; None where the inline model rates it below ``prescreen`` (not
        embedded). Blocking (ONNX): call it in a worker thread."""
        return [p for p, _ in self.scored(texts)]

    def scored(self, texts: Sequence[str]) -> list[tuple[float | None, str | None]]:
        """(probability, the window that weighed most or None) per text; see :meth:`probabilities`."""
        m = ngram_model()
        norm = [normalise(t) for t in texts]
        raw = [m.raw(t) for t in norm]
        keep = [i for i, r in enumerate(raw) if self.passes(norm[i], m.calibrated(r))]
        out: list[tuple[float | None, str | None]] = [(None, None)] * len(texts)
        if not keep:
            return out
        # One embedding batch: the kept texts, then every window of the long ones (owner = index into ``keep``).
        windows = [(j, w) for j, i in enumerate(keep) for w in (self.windows.of(norm[i]) if self.windows else [])]
        batch = [norm[i] for i in keep] + [w for _, w in windows]
        vectors = self.embedder.embed(batch)
        values = {"ngram": np.array([raw[i] for i in keep] + [m.raw(w) for _, w in windows], dtype=np.float64)}
        # One BLAS thread: a second one spins beside the stage's embedder and doubled the stage's CPU per turn
        # for no gain in wall time (1.96 against 1.00 ms per everyday turn; docs/safety-detection.md).
        with _blas().limit(limits=1, user_api="blas"):
            if self.head is not None:
                values["head"] = self.head.decision(vectors)
            if self.examples is not None:
                values["near"] = self.examples.margin(vectors)
        z_all = combine(values, self.signals)
        z = z_all[: len(keep)].copy()
        top: dict[int, tuple[float, str]] = {}
        for (j, w), zw in zip(windows, z_all[len(keep) :].tolist(), strict=True):
            if j not in top or zw > top[j][0]:
                top[j] = (zw, w)
        if self.windows is not None:
            for j, (zw, _) in top.items():
                z[j] = self.windows.mixed(z[j], zw)
        a, b = self.platt
        for j, (i, s) in enumerate(zip(keep, (a * z + b).tolist(), strict=True)):
            p = 1.0 / (1.0 + math.exp(-s)) if s > -40 else 0.0
            out[i] = (p, top[j][1] if j in top else None)
        return out

    def confirmed(self, text: str, probability: float | None) -> Finding | None:
        """The anchor concept about the user that ``text`` carries, when ``probability`` reaches ``confirm``
        (``_concepts.anchor_finding`` on the turn as normalised and as written, as the inline tier reads it, with
        the anchors only the second look may confirm)."""
        if self.confirm is None or probability is None or probability < self.confirm:
            return None
        return next(
            (f for f in (anchor_finding(n, second_look=True) for n in reading_forms(text)) if f is not None), None
        )

    @staticmethod
    def reads(a: CrisisAssessment) -> bool:
        """Whether a user turn the inline tier assessed as ``a`` (on its own text) gets a second look: covered, and
        no inline alert or only the inline model's ``possible`` one. The latter since rules 2.24: the inline model
        confirms only the inline anchors at its own ``confirm``, so before, a turn it alerted on stayed ``possible``
        where one it scored a little lower reached the second look and ``high`` (on the development texts, 96 crises
        alerted ``possible`` inline carry an anchor the second look confirms; docs/safety-detection.md)."""
        return a.covered and (not a.alert or (a.model_fired and not a.crisis))

    def feed(self, event: TurnEvent | ConversationEnd | ConversationReplay) -> LookInput | None:
        """A user turn worth a second look (:meth:`reads`) that the inline model rates above the prescreen."""
        if not isinstance(event, TurnEvent) or event.role != "user":
            return None
        a = assess_crisis(event.text)  # cached and deterministic: the inline tier's own decision
        if not self.reads(a) or not self.passes(normalise(event.text), a.probability):
            return None
        return LookInput(event.conversation_id, event.turn_index, event.text, event.metadata)

    def alerts(self, inputs: Sequence[LookInput]) -> list[SafetyAlert]:
        """One crisis alert per input whose probability reaches the threshold (blocking): ``high`` where it also
        confirms an anchor concept (:meth:`confirmed`), else ``possible``; on a turn the inline model alerted on
        already, only the ``high`` one (an inline ``possible`` alert raised, never repeated)."""
        from . import RUBRIC

        if not inputs:
            return []
        scored = self.scored([i.text for i in inputs])
        version = f"{detector_version()}+{self.version}"
        out: list[SafetyAlert] = []
        for item, (p, window) in zip(inputs, scored, strict=True):
            if p is None or p < self.threshold:
                continue
            inline = assess_crisis(item.text)
            anchor = self.confirmed(item.text, p)
            if inline.alert and anchor is None:
                continue  # the inline possible alert stands as it is
            evidence = f"second look probability {p:.2f} (inline model {inline.probability:.2f}"
            evidence += ", raising its possible alert)" if inline.alert else ")"
            if window is not None:
                evidence += f'; the window that weighed most: "{window}"'
            if anchor is not None:
                evidence = f"{anchor.evidence}; {evidence}"
            out.append(
                SafetyAlert(
                    alert_id=stable_id("alert", item.conversation_id, item.turn_index, "crisis_disclosure", "second"),
                    conversation_id=item.conversation_id,
                    turn_index=item.turn_index,
                    alert_type="crisis_disclosure",
                    severity="possible" if anchor is None else "high",
                    categories=(
                        ["model_only", "second_look"]
                        if anchor is None
                        else sorted({anchor.cssrs, "anchor_model", "second_look"})
                    ),
                    evidence=evidence,
                    source="heuristic",
                    rubric=RUBRIC,
                    metadata=dict(item.metadata or {}),
                    cssrs_category=None if anchor is None else anchor.cssrs,
                    detector="model" if anchor is None else "rule+model",
                    probability=round(p, 4),
                    detector_version=version,
                )
            )
        return out
