"""Single-typo repair of the safety detectors' input, after normalisation.

Why: the phrase rules, the concept frames and the inline model all match words, and one wrong letter hid a
disclosure. With one typo in about a third of the longer words of the dev split's crises ("sucide", "wishign",
"bruied"), inline alerts fell from 208 to 180 of 222 and critical+high from 201 to 159 (docs/safety-detection.md,
"How crisis detection works", item 0). People in distress type fast, on phones, at night. A change here is a
change of the crisis rules' version (``_assess.RULES_VERSION``; 2.7 introduced the repair).

What it does: a word of four or more letters that is neither English nor in the detector's lexicon is replaced by
the lexicon word one edit away (Damerau: a letter dropped, added, changed, or two neighbours swapped), the most
frequent in English when several are. Conservative by construction:

* an English word is never changed ("dyed" stays "dyed"), nor a word of the lexicon ("unaliving");
* the first letter must match: real typos rarely hit it, and "pharm" must not become "harm", nor "oding" "doing";
* a four-letter word may only regain a dropped letter or swap two ("pils" -> "pills"), so acronyms stay ("copd");
* apostrophe-less contractions and dropped g's are read as such ("hadnt" is hadn't, "lookin" becomes "looking").

Data: English is the SymSpell frequency dictionary that ships inside the ``symspellpy`` wheel (82,765 words with
frequencies, SCOWL word lists intersected with Google Books Ngram counts; MIT package, data CC BY 3.0 / SCOWL
terms); the lookup is SymSpell's (``symspellpy``), over the lexicon only (a few thousand words: small and fast).
The lexicon, ``spelling_lexicon.txt``, is every word of two or more letters that occurs at least twice in the crisis
training data (``tests/data/crisis_train``), written by ``bench/train_crisis_model.py`` from the raw texts (so the
lexicon never depends on its own corrections).
"""

from __future__ import annotations

import re
from importlib import resources

from symspellpy import SymSpell, Verbosity

#: The symspellpy data file the English word list comes from (checked at load: a clear error if a release drops it).
_ENGLISH_FILE = "frequency_dictionary_en_82_765.txt"
_WORD = re.compile(r"(?<![\w'])[a-z]{4,}(?![\w'])")
_CONTRACTION = (("nt", "n't"), ("ve", "'ve"), ("ll", "'ll"), ("re", "'re"), ("d", "'d"), ("s", "'s"), ("m", "'m"))


class _Repair:
    __slots__ = ("english", "lexicon", "sym")

    def __init__(self) -> None:
        try:
            text = resources.files("symspellpy").joinpath(_ENGLISH_FILE).read_text(encoding="utf-8")
        except FileNotFoundError as exc:  # pragma: no cover - a symspellpy release without its dictionary
            raise RuntimeError(f"symspellpy no longer ships {_ENGLISH_FILE}: pin a release that does") from exc
        self.english: dict[str, int] = {}
        for line in text.splitlines():
            word, _, count = line.partition(" ")
            if word:
                self.english[word] = int(count)
        raw = resources.files(__package__).joinpath("spelling_lexicon.txt").read_text(encoding="utf-8")
        self.lexicon = frozenset(w for w in raw.splitlines() if w and not w.startswith("#"))
        self.sym = SymSpell(max_dictionary_edit_distance=1, prefix_length=7)
        for word in self.lexicon:
            if len(word) >= 3:
                self.sym.create_dictionary_entry(word, self.english.get(word, 1))

    def known(self, word: str) -> bool:
        return word in self.english or word in self.lexicon

    def fix(self, word: str) -> str:
        if self.known(word):
            return word
        for typed, proper in _CONTRACTION:  # "hadnt", "theyve", "todays": the word without its apostrophe
            if word.endswith(typed) and (self.known(word[: -len(typed)] + proper) or self.known(word[: -len(typed)])):
                return word
        if word.endswith("in") and self.known(word + "g"):  # "lookin", "tryin"
            return word + "g"
        for s in self.sym.lookup(word, Verbosity.CLOSEST, max_edit_distance=1):
            if s.distance != 1 or s.term[0] != word[0]:
                continue
            if len(word) == 4 and not (len(s.term) == 5 or sorted(s.term) == sorted(word)):
                continue  # a four-letter word may only regain a letter or swap two: acronyms stay
            return s.term
        return word


_REPAIR: _Repair | None = None


def _repair() -> _Repair:
    """The loaded word lists (61 ms and 16 MB, once). A module global, not an lru_cache: benches empty every cache
    of the scorers between passes to time new text, and this is loading, not a per-text result."""
    global _REPAIR
    if _REPAIR is None:
        _REPAIR = _Repair()
    return _REPAIR


def reload_lexicon() -> None:
    """Read ``spelling_lexicon.txt`` again at next use (the trainer rewrites it)."""
    global _REPAIR
    _REPAIR = None


#: A word written with digits or symbols for letters ("su1cide", "k!ll", "$uicide", "d3ad"): what chat writes to get
#: past keyword filters. A symbol counts only between letters, so "die!" and "*hugs*" keep their punctuation.
_OBFUSCATED = re.compile(
    r"(?<![\w'])(?=[a-z0-9@$!*]*[a-z][a-z0-9@$!*]*[a-z])[a-z0-9@$]*(?:[a-z][!*][a-z]|[0-9@$])[a-z0-9@$!*]*"
)
#: Cheap tests first (most turns have neither): a digit or symbol touching a letter; four letters standing alone.
_MASK_CHAR = re.compile(r"[a-z][0-9@$!*]|[0-9@$][a-z]")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
#: A word spelled letter by letter ("s u i c i d e", "k.i.l.l"): four letters or more, each alone.
_SPELLED_HINT = re.compile(r"\b[a-z][ .][a-z][ .][a-z][ .][a-z]\b")
#: Either, in one scan (the common case is neither).
_HINT = re.compile(_MASK_CHAR.pattern + "|" + _SPELLED_HINT.pattern)
_SPELLED = re.compile(r"(?<![\w'])(?:[a-z][ .]){3,}[a-z](?![\w'])")


def unmask(text: str) -> str:
    """Obfuscated and spelled-out words of ``text`` (lower case) read as the lexicon word they spell (only a lexicon
    word: "4am", "b4" and "10mg" spell none, so they stay). A censoring "*" is one letter, read only where exactly one
    letter fits. Before the chat spellings are folded ("s u i c i d e" must not become "s you i ...")."""
    hint = _HINT.search(text)
    if hint is None:
        return text
    lexicon = _repair().lexicon

    def word(m: re.Match[str]) -> str:
        raw = m.group()
        folded = raw.translate(_LEET)
        if "*" not in folded:
            return folded if folded in lexicon else raw
        fits = [w for c in "abcdefghijklmnopqrstuvwxyz" if (w := folded.replace("*", c, 1)) in lexicon]
        return fits[0] if len(fits) == 1 and "*" not in fits[0] else raw

    def spelled(m: re.Match[str]) -> str:
        joined = m.group().replace(" ", "").replace(".", "")
        return joined if joined in lexicon else m.group()

    if _MASK_CHAR.search(text, hint.start()):
        text = _OBFUSCATED.sub(word, text)
    if _SPELLED_HINT.search(text, hint.start()):
        text = _SPELLED.sub(spelled, text)
    return text


def repair_typos(text: str) -> str:
    """``text`` (already normalised) with single-letter typos of words the detector knows repaired."""
    rep = _repair()
    unknown = {w for w in _WORD.findall(text) if not rep.known(w)}
    if not unknown:
        return text
    fixed = {w: f for w in unknown if (f := rep.fix(w)) != w}
    if not fixed:
        return text
    return _WORD.sub(lambda m: fixed.get(m.group(), m.group()), text)


def lexicon_words(texts: list[str], min_count: int = 2) -> list[str]:
    """The lexicon of ``texts`` (raw training texts): lower-cased words of two or more letters seen ``min_count``
    times or more, sorted (what ``bench/train_crisis_model.py`` writes to ``spelling_lexicon.txt``)."""
    counts: dict[str, int] = {}
    for t in texts:
        for w in re.findall(r"(?<![\w'])[a-z]{2,}(?![\w'])", t.lower()):
            counts[w] = counts.get(w, 0) + 1
    return sorted(w for w, n in counts.items() if n >= min_count)
