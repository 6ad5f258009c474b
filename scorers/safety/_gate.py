"""Cue gating for concept classes, derived from the regular expressions themselves.

Why: the concept matcher runs ~40 word-class regexes, and scanning a turn with all of them would dominate
a user turn's cost (docs/benchmarks.md, "Crisis detection v2 (issue #12)", "Figures formerly in code
comments"), while most turns contain none of the classes that can start a finding. Like the phrase
rules' cue prefilter (:mod:`._engine`), one trie-shaped scan finds which classes *can* match, and only
those run. Unlike there, the cues are not written by hand: every match of a
class regex must begin with one of the literal prefixes :func:`literal_prefixes` reads off the parsed
pattern (all branches, optional groups both ways, a digit class expanded), so the gate is lossless by
construction; ``tests/test_crisis_detection.py`` checks it on every text of the sealed and training sets.

``re._parser`` is CPython's private regex parser (named so since 3.11, the project's minimum); a change
in it makes :func:`literal_prefixes` return None (the class then always runs) or fail at import, never
gate wrongly, and the lossless test would catch the rest.
"""

from __future__ import annotations

import re
import re._constants as _c
import re._parser as _parser
from collections.abc import Iterable, Mapping

from .._text import trie_pattern

_MAXLEN = 10
_DIGITS = tuple("0123456789")


def literal_prefixes(rx: re.Pattern[str]) -> frozenset[str] | None:
    """Literal prefixes (up to 10 characters) one of which starts every match of ``rx``; None when some match
    can start without a literal (the class cannot be gated)."""
    out = _seq(list(_parser.parse(rx.pattern, rx.flags)))
    if out is None or "" in out:
        return None
    return frozenset(out)


def _seq(items: list[tuple], budget: int = _MAXLEN) -> set[str] | None:
    """Prefixes of a sequence of parsed items, up to ``budget`` characters; None when unbounded."""
    if not items or budget <= 0:
        return {""}
    op, av = items[0]
    rest = items[1:]
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return _seq(rest, budget)
    if op is _c.LITERAL:
        tail = _seq(rest, budget - 1)
        ch = chr(av)
        return {ch} if tail is None else {ch + t for t in tail}
    if op is _c.SUBPATTERN:
        return _seq(list(av[3]) + rest, budget)
    if op is _c.BRANCH:
        acc: set[str] = set()
        for alt in av[1]:
            sub = _seq(list(alt) + rest, budget)
            if sub is None:
                return None
            acc |= sub
        return acc
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
        lo, hi, body = av
        more = [] if hi == 1 else [(op, (max(lo - 1, 0), hi if hi == _c.MAXREPEAT else hi - 1, body))]
        with_one = _seq(list(body) + more + rest, budget)
        if lo > 0:
            return with_one
        without = _seq(rest, budget)
        if with_one is None or without is None:
            return None
        return with_one | without
    if op is _c.IN and _is_digit_class(av):
        return set(_DIGITS)
    return None  # any other construct first: a class, a wildcard, a back reference


def _is_digit_class(av: list[tuple]) -> bool:
    return all(
        (o is _c.CATEGORY and a is _c.CATEGORY_DIGIT) or (o is _c.RANGE and 48 <= a[0] <= a[1] <= 57) for o, a in av
    )


class Gate:
    """One scan of ``text`` for the prefixes of every gated class; tells which classes may match.

    Prefixes that start with a word character are found with a word-start trie scan (a match of these
    classes begins at a word boundary); the few that start otherwise ("'ll") with a substring test.
    """

    def __init__(self, classes: Mapping[str, re.Pattern[str]]) -> None:
        self.always: frozenset[str] = frozenset(n for n, rx in classes.items() if literal_prefixes(rx) is None)
        self._of: dict[str, set[str]] = {}
        odd: dict[str, set[str]] = {}
        for name, rx in classes.items():
            for p in literal_prefixes(rx) or ():
                (self._of if p[0].isalnum() else odd).setdefault(p, set()).add(name)
        stems = sorted(self._of, key=lambda s: (-len(s), s))
        self._scan = re.compile(r"\b(?=\w)(?=(" + trie_pattern(stems) + "))")
        # a reported stem activates every class with a stem that prefixes it (the longest is reported)
        # (its prefixes looked up, not every stem tried: the pairwise test slowed every import; docs/benchmarks.md,
        # "Crisis detection v2 (issue #12)", "Figures formerly in code comments")
        self._activates = {
            s: frozenset(n for k in range(1, len(s) + 1) for n in self._of.get(s[:k], ())) for s in stems
        }
        self._odd = tuple((p, frozenset(ns)) for p, ns in odd.items())

    def classes(self, text: str) -> frozenset[str]:
        found: set[str] = set(self.always)
        for s in set(self._scan.findall(text)):
            found |= self._activates[s]
        for p, names in self._odd:
            if p in text:
                found |= names
        return frozenset(found)


def check_lossless(gate: Gate, classes: Mapping[str, re.Pattern[str]], texts: Iterable[str]) -> list[tuple[str, str]]:
    """(class, text) pairs where a class matches but the gate did not let it run: should be empty."""
    misses: list[tuple[str, str]] = []
    for t in texts:
        on = gate.classes(t)
        misses.extend((n, t) for n, rx in classes.items() if n not in on and rx.search(t))
    return misses
