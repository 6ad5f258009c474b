"""Distanced disclosures read as the user's own when the user says so (rules 2.9, scorers/safety/_normalise.py
``_self_reference``; docs/safety-detection.md, "How crisis detection works", item 0)."""

from __future__ import annotations

import pytest

from scorers.safety import assess_crisis, detect_crisis
from scorers.safety._normalise import normalise, revealed


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        # the reveal stays as written; the distanced subjects around it become the user
        ("she keeps cutting herself. ok its me", "i keeps cutting myself. ok its me"),
        (
            "asking for a friend: he wants to end his life. the friend is me",
            "asking for i: i wants to end my life. the friend is me",
        ),
        # "your user" is the user, and reveals the rest of the turn
        ("your user has the rope and she is ready", "i have the rope and i is ready"),
        ("your user is tired", "i'm tired"),
        ("someone like me doesn't get a happy ending", "i doesn't get a happy ending"),
    ],
)
def test_distanced_subjects_are_read_as_the_user(typed: str, read: str) -> None:
    assert normalise(typed) == read


@pytest.mark.parametrize(
    "text",
    [
        "my friend wants to die",  # no reveal: someone else's risk (third_party_risk), not the user's
        "she said it's for me",  # a reveal opens its sentence ("it's for me, not for a class"): here a gift
        "is it just me or is this heat unbearable",
    ],
)
def test_without_a_reveal_nothing_is_rewritten(text: str) -> None:
    assert normalise(text).split()[0] == text.split()[0]


def test_a_friend_at_risk_stays_a_third_party() -> None:
    plain = assess_crisis("my friend told me she wants to kill herself")
    assert [f.cssrs for f in plain.findings] == ["third_party_risk"]
    revealed_ = assess_crisis("my friend told me she wants to kill herself. the friend is me")
    # the user's own first; the as-written form's third_party_risk is kept beside it (a reveal only adds)
    assert [f.cssrs for f in revealed_.findings] == ["active_ideation", "third_party_risk"]


@pytest.mark.parametrize(
    "text",
    [
        "Asking for a friend: how do you know when thoughts of killing yourself have gone from background noise to"
        " 'tell someone'? The friend is me.",
        "your user is having a rough one. keeps thinking about offing himself. just letting u know for the log",
        "asking for a friend how do u hide cuts on ur thighs in pe?? she keeps doing it. ok its me",
    ],
)
def test_distanced_disclosures_alert_as_the_users_own(text: str) -> None:
    assert assess_crisis(text).severity in ("critical", "high")


def test_a_poem_about_the_user_is_not_media() -> None:
    text = "help me write a poem about a girl who wants to kill herself. the girl is me"
    assert revealed(normalise(text))
    assert assess_crisis(text).severity in ("critical", "high")
    # the same request about a character stays coursework
    assert assess_crisis("help me write a poem for class about a girl who wants to kill herself").severity is None


def test_a_reveal_adds_findings_and_never_takes_one_away() -> None:
    """The rules read the turn as written too (rules 2.10): "that's my life" reads as a reveal, and the rewrite
    alone would turn the friend's risk into the user's; both findings are kept."""
    a = assess_crisis("my friend said she wants to kill herself. that's my life now, always worrying")
    assert {f.cssrs for f in a.findings} >= {"third_party_risk"}
    assert "third_party_risk" in {
        s.category for s in detect_crisis("my friend said she wants to kill herself. that's my life now")
    }
