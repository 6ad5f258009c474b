"""Single-typo repair of the safety detectors' input (scorers/safety/_spelling.py, docs/safety-detection.md "Typos")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scorers.safety import assess_crisis
from scorers.safety._normalise import normalise
from scorers.safety._spelling import repair_typos

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("sucide", "suicide"),  # a dropped letter
        ("wishign", "wishing"),  # two letters swapped
        ("harrm", "harm"),  # a doubled letter (English ranks "harry" first: the lexicon decides)
        ("pils", "pills"),  # a four-letter word may regain its letter
        ("lookin", "looking"),  # a dropped g
    ],
)
def test_a_single_typo_of_a_known_word_is_repaired(typed: str, read: str) -> None:
    assert repair_typos(f"i keep {typed} today") == f"i keep {read} today"


@pytest.mark.parametrize(
    "word",
    [
        "dyed",  # English: never changed, even one letter from "died"
        "unaliving",  # the detector's own lexicon
        "pharm",  # would need a new first letter ("harm")
        "oding",  # likewise ("doing"): slang for overdosing must not be lost
        "copd",  # a four-letter acronym one substitution from "copy"
        "hadnt",  # a contraction without its apostrophe
        "todays",
        "xqzvw",  # nothing one edit away
    ],
)
def test_words_that_are_not_typos_are_left_alone(word: str) -> None:
    assert repair_typos(f"i keep {word} today") == f"i keep {word} today"


def test_normalise_repairs_and_the_detector_alerts_through_the_typo() -> None:
    assert normalise("I want to kil myslef") == "i want to kil myself"  # three letters: too short to repair
    typed = assess_crisis("i took all my sleepign pils an hour ago")
    assert typed.severity == "critical", typed.findings
    assert typed.top is not None and "pills" in typed.top.evidence


def test_the_lexicon_is_what_the_trainer_writes() -> None:
    """The shipped lexicon regenerates from the training data (the trainer writes it before normalising)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from train_crisis_model import LEXICON, raw_training_texts

    from scorers.safety._spelling import lexicon_words

    shipped = [w for w in LEXICON.read_text(encoding="utf-8").splitlines() if w and not w.startswith("#")]
    assert shipped == lexicon_words(raw_training_texts())
