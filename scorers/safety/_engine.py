"""The matching engine: pattern tables as data, compiled once, gated by cheap cue words.

Why cue-gated: the detectors run inline on every turn. One regex alternation over ~100 rules costs
tens of microseconds per message, while a single scan for the cue stems ("kill", "suicid", "pill"...)
costs a few, and almost every turn of a normal conversation contains none of them. A hit on a cue
activates only the rules listing that cue; each runs on its own, and guards (negation, accident,
media context...) inspect the text around a match before it is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from schemas import Severity

from .._base import Signal
from .._text import trie_pattern

#: A guard sees the normalised text and the match span and returns True to reject the match.
Guard = Callable[[str, int, int], bool]
#: An adjuster may lower (never raise) a match's severity from its context, e.g. a past attempt.
Adjuster = Callable[[str, int, int, Severity], Severity]

SEVERITY_RANK: dict[str, int] = {"medium": 0, "high": 1, "critical": 2}
_MAX_EVIDENCE = 80


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern of a category.

    ``pattern`` is a regex over normalised text, with ``%(NAME)s`` macros; ``cues`` are word-start
    stems at least one of which occurs in any text the pattern can match (the prefilter relies on it,
    and ``tests/test_safety.py`` checks the gating is lossless on the labelled set).
    """

    category: str
    severity: Severity
    pattern: str
    cues: tuple[str, ...]
    reject: tuple[Guard, ...] = ()
    adjust: Adjuster | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    rule: Rule
    start: int
    end: int
    severity: Severity
    evidence: str


class RuleSet:
    """A compiled table of rules with a cue prefilter."""

    __slots__ = ("_activates", "_compiled", "_cues", "rules")

    def __init__(self, rules: Sequence[Rule], macros: Mapping[str, str]) -> None:
        if not rules:
            raise ValueError("a RuleSet needs at least one rule")
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._compiled: tuple[re.Pattern[str], ...] = tuple(re.compile(r.pattern % macros) for r in rules)
        for r in rules:
            if not r.cues:
                raise ValueError(f"rule without cues: {r.pattern[:60]!r}")
        stems = {c for r in rules for c in r.cues}
        self._cues: Callable[[str], Iterable[str]] = _prefilter(stems).findall
        self._activates: dict[str, tuple[int, ...]] = {s: self._rules_for(s) for s in stems}

    def _rules_for(self, stem: str) -> tuple[int, ...]:
        return tuple(i for i, r in enumerate(self.rules) if any(stem.startswith(c) for c in r.cues))

    def share_cues(self, stems: Iterable[str], cues: Callable[[str], Iterable[str]]) -> None:
        """Take the reported stems from ``cues`` (a scan over ``stems``, a superset of this set's cues).

        At each position that scan reports the longest of all ``stems`` present; this set's cues present
        there are exactly its cues that prefix it, as with this set's own scan, so the same rules activate.
        """
        self._activates = {s: self._rules_for(s) for s in stems}
        self._cues = cues

    def active_rules(self, text: str) -> list[int]:
        """Indices (in table order) of the rules whose cues occur in ``text``."""
        found = self._cues(text)
        if not found:
            return []
        idx: set[int] = set()
        for s in found:
            idx.update(self._activates[s])
        return sorted(idx)

    def scan(self, text: str, *, first_only: bool = False, exhaustive: bool = False) -> list[Hit]:
        """Accepted hits, at most one per rule, in table order.

        ``exhaustive`` bypasses the cue prefilter (used by tests to prove the gating loses nothing).
        """
        order = range(len(self.rules)) if exhaustive else self.active_rules(text)
        hits: list[Hit] = []
        for i in order:
            rule, rx = self.rules[i], self._compiled[i]
            pos = 0
            while (m := rx.search(text, pos)) is not None:
                s, e = m.span()
                if any(g(text, s, e) for g in rule.reject):
                    pos = s + 1
                    continue
                sev = rule.adjust(text, s, e, rule.severity) if rule.adjust else rule.severity
                hits.append(Hit(rule, s, e, sev, _evidence(text, s, e)))
                break
            if first_only and hits:
                break
        return hits


def _prefilter(stems: Iterable[str]) -> re.Pattern[str]:
    """The cue scan: at every word start, the longest stem present there.

    Zero-width (a capture inside a look-ahead) so that a long cue ("the only") cannot hide a cue starting
    inside it ("only"). At each position the longest stem is reported; every cue that is a prefix of it is
    present there too, so a reported stem activates all its prefixes' rules. The stems are compiled as a
    trie ("kil(?:l)?|...") so each position costs a few character tests instead of one test per stem.
    """
    ordered = sorted(set(stems), key=lambda s: (-len(s), s))
    return re.compile(r"\b(?=\w)(?=(" + trie_pattern(ordered) + "))")


CueScan = Callable[[str], frozenset[str]]


def shared_cues(rulesets: Sequence[RuleSet], cache: Callable[[CueScan], CueScan]) -> CueScan:
    """One cue scan serving several rule sets that read the same normalised text, behind ``cache``.

    The crisis and dependency detectors both read every user turn, the resource and harm detectors every
    reply: each pair scanned the text for its own cues; one scan over the union, cached per text for the
    second reader, reports what both need. Bind the result at module level so cache resets reach it.
    """
    stems = {c for rs in rulesets for r in rs.rules for c in r.cues}
    rx = _prefilter(stems)

    def scan(text: str) -> frozenset[str]:
        return frozenset(rx.findall(text))

    cues = cache(scan)
    for rs in rulesets:
        rs.share_cues(stems, cues)
    return cues


def _evidence(text: str, start: int, end: int) -> str:
    span = text[start:end].strip(" ,.;:!?\"'")
    return span if len(span) <= _MAX_EVIDENCE else span[: _MAX_EVIDENCE - 1] + "\u2026"


def to_signals(hits: Sequence[Hit], category_order: Sequence[str]) -> list[Signal]:
    """One Signal per category: the most severe hit's evidence (earliest in the text on ties)."""
    best: dict[str, Hit] = {}
    for h in hits:
        cur = best.get(h.rule.category)
        if (
            cur is None
            or SEVERITY_RANK[h.severity] > SEVERITY_RANK[cur.severity]
            or (h.severity == cur.severity and h.start < cur.start)
        ):
            best[h.rule.category] = h
    rank = {c: i for i, c in enumerate(category_order)}
    return [
        Signal(category=c, evidence=h.evidence, severity=h.severity)
        for c, h in sorted(best.items(), key=lambda kv: rank.get(kv[0], len(rank)))
    ]
