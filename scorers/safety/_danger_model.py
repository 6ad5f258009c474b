"""The danger model: a word n-gram logistic model of "the user is in danger from another person", inline.

Why a model beside the danger frames (``_danger``): the frames read what their authors anticipated. Held out by
writer, they alerted on 52 of 200 messages of a writer told to avoid stock words (EL), 110 of 200 of a writer
covering under-represented people (EM); a word model trained on the other writers, at a threshold that flags 1% of
unseen everyday chat, added 104 and 63 of them (docs/safety-detection.md, "Danger from another person"). A model
alert is ``possible`` (detector ``model``, categories ``danger_from_others`` and ``model_only``): no rule explains
it, so it goes to review, and it never obliges a crisis resource in the next reply.

Weights, calibration and threshold: ``danger_model.json``, from bench/train_danger_model.py; its version is part of
every alert's detector version. Features are the crisis model's words and word pairs (``_model.word_features``),
no rule output, so the model's errors are not the rules' errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ._model import linear_raw, platt, read_weights, word_features
from ._normalise import normalise


@dataclass(frozen=True, slots=True)
class DangerModel:
    version: str
    weights: dict[str, float]
    bias: float
    platt_a: float
    platt_b: float
    threshold: float

    def probability(self, text: str) -> float:
        """Calibrated danger probability of a normalised text."""
        return platt(self.platt_a, self.platt_b, linear_raw(self.weights, self.bias, word_features(text)))


def load_danger_model(path: str | None = None) -> DangerModel:
    raw = read_weights("danger_model.json", path)
    return DangerModel(
        version=raw["version"],
        weights=raw["weights"],
        bias=raw["bias"],
        platt_a=raw["platt"][0],
        platt_b=raw["platt"][1],
        threshold=raw["threshold"],
    )


_MODEL: DangerModel | None = None


def danger_model() -> DangerModel:
    """The shipped model, loaded once (a module global, not an lru_cache: benchmarks empty every cache between
    passes, and reloading the weights is not what a live turn costs)."""
    global _MODEL
    if _MODEL is None:
        _MODEL = load_danger_model()
    return _MODEL


@lru_cache(maxsize=4096)
def danger_probability(text: str) -> float:
    """Calibrated probability that a USER text tells of danger from another person (cached per text)."""
    return danger_model().probability(normalise(text))
