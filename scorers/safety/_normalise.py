"""Text normalisation shared by every detector.

Patterns are written once against a canonical form instead of spelling out every variant in every
pattern: lower case, ASCII apostrophes and quotes, single spaces, and the common contractions and
chat spellings folded to one form ("im", "I am" -> "i'm"; "dont", "do not" -> "don't"; "wanna" ->
"want to"), second-language and dialect grammar read as standard ("i no want" -> "i don't want", "i kill
me" -> "i kill myself"), and single-letter typos of the detector's words repaired ("sucide" -> "suicide",
:mod:`._spelling`).
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
    # Chat and dialect spellings of words the rules read (Scots, Northern English, chat; rules 2.8).
    "ded": "dead",
    "masel": "myself",
    "mysel": "myself",
    "mesel": "myself",
    "meself": "myself",
    "maself": "myself",
    "mahself": "myself",
    "gonnae": "going to",
    "cannae": "can't",
    "dinnae": "don't",
    "wisnae": "wasn't",
    "willnae": "won't",
    "wullnae": "won't",
    "nae mair": "no more",
}
_CANON_RX = re.compile(r"(?<![\w'])(?:" + trie_pattern(list(_CANON)) + r")(?![\w'])")


def _canon(m: re.Match[str]) -> str:
    return _CANON[m.group()]


# Second-language and dialect grammar read as its standard form (rules 2.8), so that every rule written
# against standard English reads it: negation before a bare verb ("i no want", "i am not want", pidgin
# "i no wan"), "me" for "myself" after a verb whose subject is the user ("better i kill me", "i want to
# hurt me"), the tense after "wish" ("wishing i'm dead"), the infinitive's "to" ("want die") and the
# preposition after "think" ("thinking in the suicide", Spanish "pensar en"). Each rewrite needs the user as the subject
# directly before the verb (only auxiliaries between), so "he wants to kill me" and "it hurts me" keep "me".
_BARE = r"want|wan|need|like|care|see|know|have|feel|wish|think|sleep|eat|go|do|mean|plan|try"
_AUX = (
    r"will|'ll|want|wanna|going|gonna|must|should|can|could|would|might|try|tried|trying|think|thinking|just|"
    r"to|of|about|really|don't|didn't|won't|can't|wouldn't|am|'m|maybe|better|gotta|have|need|decided|wan|been|keep|still|"
    r"always|also|go"
)
_SELF_VERB = (
    r"kill(?:s|ed|ing)?|hurt(?:s|ing)?|cut(?:s|ting)?|hang(?:s|ed|ing)?|burn(?:s|t|ed|ing)?|harm(?:s|ed|ing)?|"
    r"stab(?:s|bed|bing)?|shoot(?:s|ing)?|shot|drown(?:s|ed|ing)?|poison(?:s|ed|ing)?|starv(?:e|es|ed|ing)|"
    r"punish(?:es|ed|ing)?|end(?:s|ed|ing)?"
)
# "want die", "need know", "decided end it": the infinitive's "to", which the rules expect.
_TO_VERB = r"want|wants|wanted|need|needs|needed|going|try|trying|tried|decide|decided|plan|planned|planning"
_INFINITIVE = (
    r"die|kill|end|jump|hang|cut|hurt|harm|take|sleep|live|be|go|stop|do|disappear|finish|leave|overdose|drown|"
    r"shoot|swallow|drink|burn|see|wake|know"
)
_GRAMMAR: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(i|we)(?:'m| am| are)? (?:no|not) (" + _BARE + r")\b"), r"\1 don't \2"),
    (re.compile(r"\b(i|don't) wan\b"), r"\1 want"),
    (re.compile(r"\b(i|we)(?:'m| am| are)? (?:no|not) can\b"), r"\1 can't"),
    (
        re.compile(r"\b(i(?:'m|'ll|'d)?(?: (?:" + _AUX + r"))*) (" + _SELF_VERB + r") me\b"),
        r"\1 \2 myself",
    ),
    (re.compile(r"\b(wish(?:es|ed|ing)?) i(?:'m| be| is)\b"), r"\1 i was"),
    (re.compile(r"\b(think|thinks|thinking|thought) (?:in|on)\b"), r"\1 about"),
    (re.compile(r"\b(" + _TO_VERB + r") (" + _INFINITIVE + r")\b"), r"\1 to \2"),
)


def _grammar(t: str) -> str:
    for rx, repl in _GRAMMAR:
        t = rx.sub(repl, t)
    return t


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Lower-case, fold apostrophes/quotes/dashes, collapse whitespace, canonicalise contractions, repair
    single-letter typos of words the detector knows (:mod:`._spelling`).

    Cached: a reply is normalised for the resource and harm detectors, and again by the checklist at close.
    """
    t = text.lower().translate(_TRANSLATE)
    t = " ".join(t.split())
    return _grammar(repair_typos(_CANON_RX.sub(_canon, t)))
