"""Shared text helpers for the cheap tier: folding, tokenising, stop words, script/language guessing.

Everything here is pure, deterministic and fast (it runs per turn on the stream), so it uses
precompiled regexes and frozensets only. Other scorers may import from this module.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u0060": "'", "\u00b4": "'"})
_WORD_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*", re.UNICODE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")


def wordset(spaced: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long lexicons readable)."""
    return frozenset(spaced.split())


@lru_cache(maxsize=8192)
def fold(text: str) -> str:
    """Lower-case and turn typographic apostrophes into ``'``, so "I can’t" matches "i can't".

    ASR transcripts and LLM replies mix both apostrophe styles; phrase lists are written with ``'``.
    Cached: every heuristic folds the same reply, and a hit costs a dict lookup.
    """
    return text.translate(_APOSTROPHES).lower()


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[str, ...]:
    """Folded word tokens: runs of letters (any script) with inner apostrophes ("don't", "you're").

    A tuple (immutable) because results are cached and shared between callers."""
    return tuple(_WORD_RE.findall(fold(text)))


def word_count(text: str) -> int:
    """Whitespace word count, the measure seed 004 uses (``len(response.split())``)."""
    return len(text.split())


@lru_cache(maxsize=8192)
def sentences(text: str) -> tuple[str, ...]:
    """Split on sentence-final punctuation followed by space, and on line breaks; empty parts dropped."""
    return tuple(s.strip() for s in _SENTENCE_RE.split(text) if s.strip())


def trie_pattern(words: Iterable[str]) -> str:
    """A regex matching exactly ``words`` (longest first), factored by common prefixes.

    Same language and, at every position, the same preference (the longest word whose continuation
    matches) as a longest-first flat alternation, but the engine tests a few characters per position
    instead of every word: a 100-phrase list costs about a third as much per search.
    """
    trie: dict[str, dict] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        ends = "" in node
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if ends:
            return body + "?" if len(alts) == 1 and len(body) == 1 else "(?:" + body + ")?"
        return body

    return emit(trie)


def _is_word(ch: str) -> bool:
    """What ``\\w`` matches in a str pattern, to decide a ``\\b`` from two known characters."""
    return ch.isalnum() or ch == "_"


class ListScan:
    """Which of several term lists occur in a text, in one scan instead of a search per list.

    ``lists`` maps a name to (exact phrases, word-prefix terms), matched as :func:`compile_terms` would
    (and ``checklist._lexicon.terms``): a literal may not start inside a word, an exact phrase must end at
    a word boundary. The union trie reports at each start position the longest literal present; every
    other literal present there is a prefix of it. For a shorter prefix, the boundary after it lies
    between two characters of the reported literal, so its lists are known per literal in advance
    (``static``); only the reported literal's own exact phrases need the text's boundary (``bounded``).
    A name is returned iff that list's own pattern would find a match. The empathy signal and the
    checklist use it (each has a test that it equals the per-list searches).
    """

    def __init__(self, lists: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> None:
        exact: dict[str, set[str]] = {}
        prefix: dict[str, set[str]] = {}
        for name, (ex, pre) in lists.items():
            for w in ex:
                exact.setdefault(w, set()).add(name)
            for w in pre:
                prefix.setdefault(w, set()).add(name)
        literals = exact.keys() | prefix.keys()
        self.static: dict[str, frozenset[str]] = {}
        self.bounded: dict[str, frozenset[str]] = {}
        for w in literals:
            acc = set(prefix.get(w, ()))
            for cut in range(1, len(w)):
                head = w[:cut]
                acc |= prefix.get(head, set())
                if head in exact and _is_word(w[cut - 1]) != _is_word(w[cut]):
                    acc |= exact[head]
            self.static[w] = frozenset(acc)
            self.bounded[w] = frozenset(exact.get(w, ()))
        self._rx = re.compile(r"(?<![\w'])(?=(" + trie_pattern(literals) + "))")

    def __call__(self, text: str) -> frozenset[str]:
        found: set[str] = set()
        for m in self._rx.finditer(text):
            w = m.group(1)
            found |= self.static[w]
            bounded = self.bounded[w]
            if bounded and not found.issuperset(bounded):
                end = m.start() + len(w)
                after = end < len(text) and _is_word(text[end])
                if _is_word(w[-1]) != after:
                    found |= bounded
        return frozenset(found)


def compile_terms(terms: Iterable[str], *, prefix: bool = False) -> re.Pattern[str]:
    """One word-bounded alternation for a term list (longest first so multi-word phrases win).

    ``prefix=True`` lets a term match the start of a longer word ("frustrat" -> "frustrated").
    Match against :func:`fold`-ed text. Compiled as a prefix trie (see :func:`trie_pattern`).
    """
    tail = r"" if prefix else r"\b"
    return re.compile(rf"(?<![\w'])(?:{trie_pattern(set(terms))}){tail}")


# --- stop words ----------------------------------------------------------------------------------------
STOPWORDS_EN: frozenset[str] = wordset(
    """a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just let's me more most mustn't my myself no nor not now of off on once only or other ought our ours
    ourselves out over own really same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've
    this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what
    what's when when's where where's which while who who's whom why why's will with won't would wouldn't
    yeah you you'd you'll you're you've your yours yourself yourselves also get got go going im ive dont
    thats its u ur oh well know like one"""
)


_SUFFIXES = ("ingly", "ing", "edly", "ed", "ies", "es", "ly", "s")
_SUFFIX_ENDS = tuple(sorted({suf[-1] for suf in _SUFFIXES}))


def _stem(word: str) -> str:
    """Tiny suffix stripper so "worried"/"worrying"/"worries" meet on "worr": cheap, not linguistic."""
    if not word.endswith(_SUFFIX_ENDS):  # no suffix can apply: skip the loop (about half of all words)
        return word
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: -len(suf)]
    return word


@lru_cache(maxsize=4096)
def content_stems(text: str) -> frozenset[str]:
    """Stems of the non-stop-word tokens (3+ letters) of ``text``; cached because user turns repeat."""
    return frozenset(_stem(t) for t in tokens(text) if len(t) >= 3 and t not in STOPWORDS_EN)


# --- script and language guessing (offline) ------------------------------------------------------------
#: Distinctive function words per language. Words shared by two or more lists are removed at import
#: (see ``_distinctive``) so "de", "no", "me", "la" never count as evidence for either side; English
#: competes with all of :data:`STOPWORDS_EN`, and "a", "o", "u" are left out entirely.
_FUNCTION_WORDS: dict[str, str] = {
    "en": "the and you your is are it that this with for have was what how not but be my me so to of in "
    "i'm it's don't can feel really just about would there they we he she been will if or when",
    "es": "el la los las que de y en un una es por con para no se lo su al pero como más muy estoy "
    "está estás eres tu tú yo me mi te sí ya del también porque cuando siento mucho quieres hablar pasó qué cómo "
    "puedes eso esto bien hay algo nada todo tienes tengo hacer así sobre donde aquí ahora siempre nunca "
    "gracias lamento",
    "fr": "le la les de des et est un une je tu vous il elle que qui pas ne ce pour dans avec sur "
    "mais ou très suis êtes c'est j'ai au aux du moi toi désolé désolée veux parler aussi rien tout peux avez fait "
    "comme quand où ici maintenant toujours jamais merci",
    "de": "der die das und ist ich du sie er nicht ein eine zu mit auf für den dem des sich auch "
    "aber wie bin bist wir ihr es mir dir dass sehr leid tut mich dich noch schon wenn kann kannst möchtest sprechen "
    "gerne jetzt immer nie danke bitte",
    "it": "il lo la gli le di e è un una che non per con mi ti sono sei io tu lui lei noi ma come "
    "anche del della molto questo dispiace vuoi parlare ancora quando dove qui adesso sempre mai grazie",
    "pt": "os as de e é um uma que não para com em eu você me te se mas como muito do da dos das "
    "está estou isso isto também sinto muito quer falar você ainda quando onde aqui agora sempre nunca "
    "obrigado obrigada",
    "nl": "de het een en is ik je jij niet dat die van op te met voor zijn maar ook wat hoe bent ben heb wij zij er "
    "spijt wil praten heel nog wanneer waar hier nu altijd nooit dank bedankt",
}


def _distinctive(raw: dict[str, str]) -> dict[str, frozenset[str]]:
    sets = {k: wordset(v) for k, v in raw.items()}
    # English competes with its full stop-word list, so "no", "a", "die", "is" never count for others.
    sets["en"] = sets["en"] | STOPWORDS_EN
    counts: dict[str, int] = {}
    for s in sets.values():
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    return {k: frozenset(w for w in s if counts[w] == 1) for k, s in sets.items()}


FUNCTION_WORDS: dict[str, frozenset[str]] = _distinctive(_FUNCTION_WORDS)

#: Script each language is written in (primary BCP-47 subtag -> script name used by :func:`script_of`).
LANGUAGE_SCRIPT: dict[str, str] = {
    **dict.fromkeys(
        wordset("en es fr de it pt nl sv da no nb nn fi pl cs sk ro hu tr id ms vi ca eu gl hr sl et lv lt sq sw tl"),
        "latin",
    ),
    **dict.fromkeys(wordset("ru uk bg sr mk be kk"), "cyrillic"),
    "el": "greek",
    "he": "hebrew",
    "ar": "arabic",
    "fa": "arabic",
    "ur": "arabic",
    "hi": "devanagari",
    "mr": "devanagari",
    "ne": "devanagari",
    "th": "thai",
    "ko": "hangul",
    "ja": "cjk",
    "zh": "cjk",
}

_SCRIPT_PREFIXES = (
    ("LATIN", "latin"),
    ("CYRILLIC", "cyrillic"),
    ("GREEK", "greek"),
    ("HEBREW", "hebrew"),
    ("ARABIC", "arabic"),
    ("DEVANAGARI", "devanagari"),
    ("THAI", "thai"),
    ("HANGUL", "hangul"),
    ("CJK", "cjk"),
    ("HIRAGANA", "cjk"),
    ("KATAKANA", "cjk"),
)


@lru_cache(maxsize=8192)
def script_of(ch: str) -> str:
    """Unicode script family of one letter ("latin", "cyrillic", "cjk", ...; "other" if unknown)."""
    if ch.isascii():
        return "latin"
    name = unicodedata.name(ch, "")
    for prefix, script in _SCRIPT_PREFIXES:
        if name.startswith(prefix):
            return script
    return "other"


def script_shares(text: str) -> dict[str, float]:
    """Share of the letters of ``text`` in each script (empty dict when there are no letters)."""
    if text.isascii():  # the common case: every letter is Latin, no per-character work
        return {"latin": 1.0} if any(ch.isalpha() for ch in text) else {}
    counts: dict[str, int] = {}
    n = 0
    for ch in text:
        if ch.isalpha():
            s = script_of(ch)
            counts[s] = counts.get(s, 0) + 1
            n += 1
    return {k: v / n for k, v in counts.items()} if n else {}


#: word -> language, over the distinctive (disjoint) lists: one dict lookup per token on the hot path.
_WORD_LANGUAGE: dict[str, str] = {w: lang for lang, words in FUNCTION_WORDS.items() for w in words}


def function_word_hits(text: str) -> dict[str, int]:
    """Count of distinctive function words per language among the tokens of ``text``."""
    hits = dict.fromkeys(FUNCTION_WORDS, 0)
    get = _WORD_LANGUAGE.get
    for t in tokens(text):
        lang = get(t)
        if lang is not None:
            hits[lang] += 1
    return hits
