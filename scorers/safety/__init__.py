"""Deterministic safety detectors of the cheap tier (seed 000 crisis rule, seed 001 CQ8/CQ9,
seed 003 edge cases, seed 004 trust & boundaries).

Precompiled regular expressions over normalised text, organised as pattern tables per category with
negation / idiom / context guards; no models, no downloads. See docs/safety-detection.md.

* :func:`detect_crisis` -- USER turns: suicidal ideation (direct / indirect), self-harm, overdose,
  danger from others, third-party risk.
* :func:`offers_crisis_resources` -- ASSISTANT turns: a crisis line or emergency service is offered.
* :func:`detect_harmful_reply` -- ASSISTANT turns: dangerous advice, diagnosis, guarantee, harmful
  coping, dependency, minimising a crisis.
* :func:`detect_user_dependency` -- USER turns: unhealthy dependency on the assistant.
"""

from schemas import RubricRef

from ._crisis import CRISIS_CATEGORIES, detect_crisis
from ._dependency import USER_DEPENDENCY, detect_user_dependency
from ._normalise import normalise
from ._replies import HARMFUL_CATEGORIES, detect_harmful_reply, offers_crisis_resources

RUBRIC = RubricRef(id="safety-detectors", version="1.0", source="seed-000/001/003/004")

__all__ = [
    "CRISIS_CATEGORIES",
    "HARMFUL_CATEGORIES",
    "RUBRIC",
    "USER_DEPENDENCY",
    "detect_crisis",
    "detect_harmful_reply",
    "detect_user_dependency",
    "normalise",
    "offers_crisis_resources",
]
