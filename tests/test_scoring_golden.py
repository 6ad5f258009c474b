"""The cheap tier's outputs are byte-identical to the committed golden digests (see tests/_scoring_golden.py).

The digests were generated before the scorer speed-ups; a mismatch means an output changed. To see which
records, dump both versions (``tests/_scoring_golden.py --dump DIR``) and diff the files.
"""

from __future__ import annotations

import orjson
import pytest
from _scoring_golden import EDGE_REPLIES, EDGE_USERS, GOLDEN, PARTS, TEMPLATED_REPLIES, available, digest


@pytest.mark.parametrize("part", PARTS)
def test_outputs_match_golden(part: str) -> None:
    if not available(part):
        pytest.skip(f"{part} corpus not present")
    want = orjson.loads(GOLDEN.read_bytes())[part]
    got, n = digest(part)
    assert (got, n) == (want["sha256"], want["lines"])


def test_empathy_phrase_scan_matches_per_list_searches() -> None:
    """The one-scan phrase categories equal a search per phrase list, phrase by phrase and in context."""
    from scorers import empathy as e
    from scorers._text import fold

    per_list = {
        "reaction": e._REACTION_RE,
        "validation": e._VALIDATION_RE,
        "interpretation": e._INTERPRETATION_RE,
        "exploration": e._EXPLORATION_RE,
        "dismissive": e._DISMISSIVE_RE,
        "toxic": e._TOXIC_RE,
        "directive": e._DIRECTIVE_RE,
    }
    phrases = [p for ps in e._PHRASE_LISTS.values() for p in e._squash(ps)]
    texts = [t for p in phrases for t in (p, f"x {p}s", f"a{p} b", f"oh, {p}. {p[:-1]}", f"{p}_x {p[: len(p) // 2]}")]
    texts += [fold(r).replace("'", "") for r in EDGE_REPLIES + TEMPLATED_REPLIES + EDGE_USERS]
    for text in texts:
        want = {c for c, rx in per_list.items() if rx.search(text)}
        assert e._phrase_categories(text) == want, text


def test_checklist_list_scan_matches_per_list_searches() -> None:
    """The checklist's one-scan list test equals each list's own search, literal by literal and in context."""
    from scorers.checklist import _heuristic as h
    from scorers.checklist import _lexicon as lx
    from scorers.checklist._heuristic import _REPLY_LISTS, _REPLY_PATTERNS, _USER_LISTS, _USER_PATTERNS

    for scan, patterns in ((_REPLY_LISTS, _REPLY_PATTERNS), (_USER_LISTS, _USER_PATTERNS)):
        literals = [w for rx in patterns.values() for part in lx.TERM_SOURCES[rx] for w in part]
        contexts = [(w, f"x {w}s", f"a{w} b", f"oh, {w}. {w[:-1]}", f"{w}_x {w[: len(w) // 2]}") for w in literals]
        texts = [t for ts in contexts for t in ts]
        texts += [h.fold(r) for r in EDGE_REPLIES + TEMPLATED_REPLIES + EDGE_USERS]
        for text in texts:
            want = {name for name, rx in patterns.items() if rx.search(text)}
            assert scan(text) == want, text


def test_user_features_of_parts_equal_those_of_the_joined_text() -> None:
    """Valence and stems from the per-message caches equal those of the newline-joined context."""
    from scorers import empathy as e
    from scorers._text import content_stems, tokens

    texts = [*EDGE_USERS, *EDGE_REPLIES, "I can't say ΣΑΣ", "ΣΑΣ no", "don't", "not happy at all"]
    for a in texts:
        for b in texts[::3]:
            joined = f"{a}\n{b}"
            assert e._user_features((a, b)) == (e._valence_of(tokens(joined)), content_stems(joined)), joined
