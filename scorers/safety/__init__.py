"""Deterministic safety detectors of the cheap tier (seed 000 crisis rule, seed 001 CQ8/CQ9,
seed 003 edge cases, seed 004 trust & boundaries).

Phrase rules and concept frames (regular expressions over normalised text with negation / idiom / context
guards) plus a learned n-gram model shipped as weights in this package; no downloads. See
docs/safety-detection.md.

* :func:`assess_crisis` -- USER turns: rules, model probability, C-SSRS category, severity tier,
  language coverage and the cues for risk built across turns (what crisis alerts are made from).
* :func:`detect_crisis` -- USER turns: the rule findings as Signals under the phrase-rule categories
  (suicidal ideation direct / indirect, self-harm, overdose, danger from others, third-party risk).
* :func:`offers_crisis_resources` -- ASSISTANT turns: a crisis line or emergency service is offered.
* :func:`detect_harmful_reply` -- ASSISTANT turns: dangerous advice, diagnosis, guarantee, harmful
  coping, dependency, minimising a crisis.
* :func:`detect_user_dependency` -- USER turns: unhealthy dependency on the assistant.
* :class:`SecondLook` -- the model stage's crisis second look (MiniLM embeddings, off the inline path): a
  ``possible`` alert for user turns the inline tier left without one, ``high`` where it confirms an anchor (also
  raising the inline model's own ``possible`` alert); needs the ``embeddings`` extra to run.
"""

from schemas import RubricRef

from ._assess import RULES_VERSION, CrisisAssessment, assess_crisis, coverage, detector_version
from ._concepts import CSSRS_CATEGORIES
from ._crisis import CRISIS_CATEGORIES, detect_crisis, phrase_signals
from ._dependency import USER_DEPENDENCY, detect_user_dependency
from ._normalise import normalise
from ._replies import HARMFUL_CATEGORIES, detect_harmful_reply, offers_crisis_resources
from ._second_look import LookInput, SecondLook

RUBRIC = RubricRef(id="safety-detectors", version="2.0", source="seed-000/001/003/004")

__all__ = [
    "CRISIS_CATEGORIES",
    "CSSRS_CATEGORIES",
    "HARMFUL_CATEGORIES",
    "RUBRIC",
    "RULES_VERSION",
    "USER_DEPENDENCY",
    "CrisisAssessment",
    "LookInput",
    "SecondLook",
    "assess_crisis",
    "coverage",
    "detect_crisis",
    "detect_harmful_reply",
    "detect_user_dependency",
    "detector_version",
    "normalise",
    "offers_crisis_resources",
    "phrase_signals",
]
