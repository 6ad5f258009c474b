"""The learned second signal: a linear model over word and character n-grams, with a calibrated probability.

Why this model: it must run inline on every user turn (an alert never waits), and an n-gram linear model
scores a short turn in plain Python (a dict lookup per feature) far faster than the shipped MiniLM embedder
embeds one (docs/benchmarks.md, "Model stage: the learned empathy signal (issue #16)", "Figures formerly in
code comments"). It generalises past the concept rules because it
weighs thousands of word and sub-word cues learned from examples, not a list a person wrote.

* weights: ``crisis_model.json`` next to this file, written by ``bench/train_crisis_model.py`` from the
  training data in ``tests/data/crisis_train/`` (licence-clean, none of it in any evaluation split);
  the file carries its own version, which every alert it raises reports;
* features (:func:`features`): binary word unigrams and bigrams (words only: punctuation is a writing habit,
  not evidence); for texts holding an anchor concept, the
  concept classes of :mod:`._concepts` present and every pair of them, and whether a rule fired; over
  :func:`normalise` output, L2-normalised over the features the vocabulary knows. The concept pairs gave
  the model what n-grams of ~3,000 examples cannot (a higher dev AUC); character 3-5-grams were dropped
  (dev recall at 3% FPR was higher without them, and they cost time on every turn; the figures:
  docs/benchmarks.md, "Crisis detection v2 (issue #12)", "Figures formerly in code comments");
* probability: Platt scaling (a, b) fitted on cross-validated scores of the training data, so 0.7 means
  roughly 70% of training texts scoring there were crises;
* whole text: scoring each sentence window and taking the maximum was tried and dropped (the dev
  false-positive rate rose far above its 3% target, figures in the same section: short windows of hard
  negatives look like disclosures).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import combinations
from pathlib import Path
from typing import Any

from ._concepts import CONCEPTS, anchored, concept_class_names, gate
from ._crisis import rule_findings
from ._normalise import normalise

_NAME_OF = concept_class_names()
#: Words only: punctuation is not a feature. The writer agents who wrote the training data end 60% of their crises
#: with "." (31% of negatives) and put "?" in 11% (25%): model 1.4, which counted punctuation, learned "." at the
#: end as crisis evidence (+4.6) and "?" as safety (-3.4), so the same words scored differently as typed and as a
#: speech-to-text transcript without punctuation (docs/safety-detection.md, "Punctuation is not evidence").
_TOKEN = re.compile(r"[a-z0-9']+")


@lru_cache(maxsize=4096)
def word_features(text: str) -> frozenset[str]:
    """Word 1-2-grams of an already normalised text (sentence start and end marked): the crisis model's first
    features and all of the danger model's, computed once per text for both (cached)."""
    out: set[str] = set()
    prev = "<s>"
    for w in _TOKEN.findall(text):
        out.add("w:" + w)
        out.add("b:" + prev + " " + w)
        prev = w
    out.add("b:" + prev + " </s>")
    return frozenset(out)


def features(text: str) -> set[str]:
    """Binary features of an already normalised text (the training script calls this same function): word
    1-2-grams; and when the text holds an anchor concept (a death, method, means, preparation, history or
    self-harm word class), the concept classes present, every pair of them, and whether a rule fired."""
    out = set(word_features(text))
    on = gate(text)
    if not anchored(text):
        return out
    present = [name for name, rx in CONCEPTS.items() if _NAME_OF[name] in on and rx.search(text)]
    out.update("k:" + n for n in present)
    out.update("k:" + a + "&" + b for a, b in combinations(present, 2))
    if rule_findings(text, danger=False):
        out.add("k:RULE")
    return out


@dataclass(frozen=True, slots=True)
class CrisisModel:
    version: str
    weights: dict[str, float]
    bias: float
    platt_a: float
    platt_b: float
    threshold: float
    #: The probability at and above which an anchor concept the frames did not combine counts as a finding
    #: (``_concepts.anchor_finding``: severity high); chosen on dev by bench/train_crisis_model.py.
    confirm: float

    def raw(self, text: str) -> float:
        """Decision value of one normalised text (window)."""
        return linear_raw(self.weights, self.bias, features(text))

    def probability(self, text: str) -> float:
        """Calibrated crisis probability of a normalised text."""
        return self.calibrated(self.raw(text))

    def calibrated(self, raw: float) -> float:
        """The probability of a decision value (:meth:`raw`): for callers that need both."""
        return platt(self.platt_a, self.platt_b, raw)


def linear_raw(weights: dict[str, float], bias: float, feats: Iterable[str]) -> float:
    """A linear model's decision value over binary features, L2-normalised over the known ones (as trained)."""
    known = [weights[f] for f in feats if f in weights]
    if not known:
        return bias
    # fsum: exact, so the result does not depend on set iteration order (which differs between
    # processes under hash randomisation): the stream and the batch path give the same probability
    return bias + math.fsum(known) / math.sqrt(len(known))


def platt(a: float, b: float, raw: float) -> float:
    """Platt-calibrated probability of a decision value."""
    z = a * raw + b
    return 1.0 / (1.0 + math.exp(-z)) if z > -40 else 0.0


def read_weights(shipped: str, path: str | None = None) -> dict[str, Any]:
    """A linear model's JSON: the file shipped in this package (``shipped``), or the one at ``path``."""
    if path is None:
        return json.loads(resources.files(__package__).joinpath(shipped).read_text(encoding="utf-8"))
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_model(path: str | None = None) -> CrisisModel:
    raw = read_weights("crisis_model.json", path)
    return CrisisModel(
        version=raw["version"],
        weights=raw["weights"],
        bias=raw["bias"],
        platt_a=raw["platt"][0],
        platt_b=raw["platt"][1],
        threshold=raw["threshold"],
        confirm=raw["confirm"],
    )


_MODEL: CrisisModel | None = None


def model() -> CrisisModel:
    global _MODEL
    if _MODEL is None:
        _MODEL = load_model()
    return _MODEL


@lru_cache(maxsize=4096)
def crisis_probability(text: str) -> float:
    """Calibrated probability that a USER text discloses a crisis (cached per text)."""
    return model().probability(normalise(text))
