"""Second-language and dialect grammar read as standard English before any rule reads a turn (rules 2.8,
scorers/safety/_normalise.py ``_GRAMMAR``; docs/safety-detection.md, "How crisis detection works", item 0)."""

from __future__ import annotations

import pytest

from scorers.safety import assess_crisis
from scorers.safety._normalise import normalise


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("i no want to live", "i don't want to live"),  # "no" before a bare verb
        ("I am not want to kill me", "i don't want to kill myself"),
        ("abeg i no wan die o", "abeg i don't want to die o"),  # pidgin "wan", and the infinitive's "to"
        ("better I kill me", "better i kill myself"),  # "me" for "myself" after the user's own verb
        ("i am cutting me again", "i'm cutting myself again"),
        ("wishing im dead", "wishing i was dead"),  # the tense after "wish"
        ("och im gonnae kill masel", "och i'm going to kill myself"),  # Scots
        ("i think in the suicide", "i think about the suicide"),  # Spanish "pensar en"
        ("i wish i was ded", "i wish i was dead"),
    ],
)
def test_grammar_is_read_as_standard(typed: str, read: str) -> None:
    assert normalise(typed) == read


@pytest.mark.parametrize(
    "text",
    [
        "he wants to kill me",  # someone else's verb: "me" stays the object (danger from others)
        "i think he will kill me",
        "it hurts me",
        "my boss is going to kill me",
        "i want food",  # no bare verb after "want": nothing inserted
        "i'm not sure",
    ],
)
def test_other_subjects_and_ordinary_grammar_are_left_alone(text: str) -> None:
    assert normalise(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "i no want to live anymore",
        "I am thinking maybe is better I kill me",
        "wishing im dead",
        "im gonnae kill masel",
    ],
)
def test_the_rules_read_through_the_grammar(text: str) -> None:
    assert assess_crisis(text).severity in ("critical", "high")


def test_a_denial_in_pidgin_is_still_a_denial() -> None:
    # Before rules 2.8 "i no wan die" read as wanting to die, and the bridge in the same sentence made it critical.
    a = assess_crisis("abeg i no wan die o i just dey complain because the traffic for the bridge na four hours")
    assert a.severity not in ("critical", "high")


def test_a_hyperbolic_idiom_drops_the_phrase_rule_too() -> None:
    # "killing myself studying" was already an idiom to the frames; the phrase rule now agrees.
    assert assess_crisis("i'm killing myself studying for the anatomy exam").severity is None
    assert assess_crisis("lowkey wish i was dead lol").severity in ("critical", "high")  # an idiom after it


def _all_texts() -> list[str]:
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parent / "data"
    files = [
        *sorted((data / "crisis_eval").glob("*.jsonl")),
        *sorted((data / "crisis_train").glob("*.jsonl")),
        *sorted((data / "crisis_rules_dev").glob("*.jsonl")),
    ]
    rows = [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]
    return [t for d in rows for t in ([d["text"]] if "text" in d else d["turns"])]


def test_the_substring_checks_before_each_rewrite_are_lossless() -> None:
    """A rewrite runs only when one of its literal substrings is in the text (a speed-up): on every sealed and
    training text, wherever a rewrite's pattern matches, one of its substrings is there."""
    from scorers.safety import _normalise as n

    for text in _all_texts():
        t = " ".join(text.lower().translate(n._TRANSLATE).split())
        t = n.repair_typos(n._CANON_RX.sub(n._canon, t))
        for needles, rx, repl in n._GRAMMAR:
            if rx.search(t):
                assert any(x in t for x in needles), (rx.pattern[:40], text)
            t = rx.sub(repl, t)
        if n._REVEAL.search(t):
            assert any(x in t for x in n._REVEAL_NEEDLES), text
