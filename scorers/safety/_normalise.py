"""Text normalisation shared by every detector.

Patterns are written once against a canonical form instead of spelling out every variant in every
pattern: lower case, ASCII apostrophes and quotes, single spaces, and the common contractions and
chat spellings folded to one form ("im", "I am" -> "i'm"; "dont", "do not" -> "don't"; "wanna" ->
"want to"), and single-letter typos of the detector's words repaired ("sucide" -> "suicide", :mod:`._spelling`).
Matching evidence is therefore reported in this normalised form.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .._text import trie_pattern
from ._spelling import repair_typos

_TRANSLATE = str.maketrans(
    {
        "\u2019": "'",  # right single quotation mark (the usual "curly apostrophe")
        "\u2018": "'",
        "\u201b": "'",
        "\u02bc": "'",  # modifier letter apostrophe
        "\u00b4": "'",
        "`": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u00a0": " ",
        "\u200b": "",
    }
)

# Canonical forms. Keys are matched as whole words (after lower-casing and apostrophe folding).
# Deliberately absent: "ill" (a word), "id" (a word), "were" / "its" / "hell" (words).
_CANON: dict[str, str] = {
    "im": "i'm",
    "i am": "i'm",
    "ive": "i've",
    "iam": "i'm",
    "dont": "don't",
    "do not": "don't",
    "doesnt": "doesn't",
    "does not": "doesn't",
    "didnt": "didn't",
    "did not": "didn't",
    "cant": "can't",
    "cannot": "can't",
    "can not": "can't",
    "wont": "won't",
    "will not": "won't",
    "wouldnt": "wouldn't",
    "would not": "wouldn't",
    "couldnt": "couldn't",
    "could not": "couldn't",
    "isnt": "isn't",
    "is not": "isn't",
    "arent": "aren't",
    "wasnt": "wasn't",
    "havent": "haven't",
    "whats": "what's",
    "what is": "what's",
    "thats": "that's",
    "theres": "there's",
    "there is": "there's",
    "youre": "you're",
    "you are": "you're",
    "wanna": "want to",
    "tryna": "trying to",
    "thinkin": "thinking",
    "abt": "about",
    "thru": "through",
    "bout": "about",
    "w/": "with",
    "wana": "want to",
    "gonna": "going to",
    "gunna": "going to",
    "kinda": "kind of",
    "want 2": "want to",
    "need 2": "need to",
    "going 2": "going to",
    "w/o": "without",
    "u": "you",
    "my self": "myself",
    "me self": "myself",
    "noone": "no one",
    "nobody": "no one",
}
_CANON_RX = re.compile(r"(?<![\w'])(?:" + trie_pattern(list(_CANON)) + r")(?![\w'])")


def _canon(m: re.Match[str]) -> str:
    return _CANON[m.group()]


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Lower-case, fold apostrophes/quotes/dashes, collapse whitespace, canonicalise contractions, repair
    single-letter typos of words the detector knows (:mod:`._spelling`).

    Cached: a reply is normalised for the resource and harm detectors, and again by the checklist at close.
    """
    t = text.lower().translate(_TRANSLATE)
    t = " ".join(t.split())
    return repair_typos(_CANON_RX.sub(_canon, t))
