"""Text normalisation shared by every detector.

Patterns are written once against a canonical form instead of spelling out every variant in every
pattern: lower case, ASCII apostrophes and quotes, single spaces, and the common contractions and
chat spellings folded to one form ("im", "I am" -> "i'm"; "dont", "do not" -> "don't"; "wanna" ->
"want to"), second-language and dialect grammar read as standard ("i no want" -> "i don't want", "i kill
me" -> "i kill myself"), single-letter typos of the detector's words repaired ("sucide" -> "suicide",
:mod:`._spelling`), and words written with digits or symbols for letters or letter by letter read as the word they
spell ("su1cide", "s u i c i d e": :func:`._spelling.unmask`).
Matching evidence is therefore reported in this normalised form.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from .._text import trie_pattern
from ._spelling import repair_typos, unmask

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
    # Algospeak: the suicide word as written to get past a platform's filters, in the one form the rules read
    # (2.22). "self delete" has its grammar rewrite below ("self-deleting messages" is a phone feature).
    "sewer slide": "sewerslide",
    "sewer-slide": "sewerslide",
    "sewer side": "sewerslide",
    "sooicide": "sewerslide",
    "suwuicide": "sewerslide",
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
# Each rewrite with the literal substrings without which it cannot match: a substring test costs a fraction of a
# regex scan, and most turns need none of the rewrites (measured: the scans alone doubled the phrase rules' time).
_GRAMMAR: tuple[tuple[tuple[str, ...], re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    ((" no ", " not "), re.compile(r"\b(i|we)(?:'m| am| are)? (?:no|not) (" + _BARE + r")\b"), r"\1 don't \2"),
    ((" wan",), re.compile(r"\b(i|don't) wan\b"), r"\1 want"),
    ((" no can", " not can"), re.compile(r"\b(i|we)(?:'m| am| are)? (?:no|not) can\b"), r"\1 can't"),
    (
        (" me",),
        re.compile(r"\b(i(?:'m|'ll|'d)?(?: (?:" + _AUX + r"))*) (" + _SELF_VERB + r") me\b"),
        r"\1 \2 myself",
    ),
    (("wish",), re.compile(r"\b(wish(?:es|ed|ing)?) i(?:'m| be| is)\b"), r"\1 i was"),
    (("k in", "k on", "t in", "t on"), re.compile(r"\b(think|thinks|thinking|thought) (?:in|on)\b"), r"\1 about"),
    # "suicide" as a verb after the user ("i want to suicide", "i will suicide"), and the algospeak "self delete":
    # killing oneself (rules 2.22)
    (
        ("suicide",),
        re.compile(
            r"\b((?:i|i'm|i'll|i'd)(?: (?:" + _AUX + r"))*? (?:to|will|would|might|could|should|must)|i'll|i'd) "
            r"suicide\b"
        ),
        r"\1 kill myself",
    ),
    (
        ("self delet", "self-delet", "selfdelet"),
        re.compile(r"\bself[- ]?delet(?:e|ing|ed|ion)(?= (?:thoughts?|urges?|ideation|feelings?)\b)"),
        "suicidal",
    ),
    (
        ("self delet", "self-delet", "selfdelet"),
        re.compile(
            r"\bself[- ]?delet(e|ing|ed)\b(?! (?:my|the|your|his|her|their|all|old|messages?|texts?|chats?|"
            r"account|photos?|pics|posts?|apps?|feature|function|mode|timer)\b)"
        ),
        lambda m: {"e": "kill", "ing": "killing", "ed": "killed"}[m.group(1)] + " myself",
    ),
    (
        ("want", "need", "going", " try", " tried", "decide", "plan"),
        re.compile(r"\b(" + _TO_VERB + r") (" + _INFINITIVE + r")\b"),
        r"\1 to \2",
    ),
)


def _grammar(t: str) -> str:
    for needles, rx, repl in _GRAMMAR:
        if any(n in t for n in needles):
            t = rx.sub(repl, t)
    return t


# The user telling the companion that a distanced subject is themself (rules 2.9): "asking for a friend ... the
# friend is me", "she's tired of carrying it. the girl is me", "you ever get to the point where... that's where i'm
# at". With such a reveal in the turn, the distanced subjects are read as the user, so the frames that need the
# user as subject read the disclosure. Without one, "my friend wants to die" stays someone else's (third-party
# risk). "your user" and "someone like me" are the user without any reveal.
_REVEAL = re.compile(
    r"\b(?:(?:the|my|this|that) (?:'friend'|\"friend\"|friend|girl|guy|woman|man|person|character|version|project|"
    r"someone|somebody|narrator|speaker|lad) (?:is|being|=|'s|in question is) (?:actually |obviously |really |"
    r"literally |just |kind of |kinda )?me|(?:she|he|they|it)(?: is|'s) (?:actually |obviously |really |literally "
    r")?me\b(?! (?:too|as well|and)\b)|i'?m the friend|i am the friend|(?:ok|okay|fine|alright|yeah|fine,|lol|jk)"
    r"[,.]? (?:it's|its|it is) (?:actually |obviously |really |just )?me|\(it'?s me\)|\(me\)|(?:friend|'friend') "
    r"\(me\)|asking for (?:me|myself)|which is me|i mean me|i mean mine|mine\W+i mean|(?:that's|thats|that is) "
    r"(?:kind of |kinda |basically |pretty much |literally |exactly )?(?:me|where i'?m at|what i'?m doing|what i'?ve "
    r"been doing|how i feel|what's happening to me|my life)|this is (?:honestly |really |just |literally )?how i feel|"
    r"(?:^|[.!?,;:] )(?:but )?(?:it's|its|it is) (?:really |actually )?(?:for|about) me\b(?! to)|"
    r"is (?:just )?me,? i guess|the \w+ being me|for me,? not for (?:a|the|my) (?:class|story|friend|book|project)|"
    r"(?:i'?m|i am) (?:the )?(?:she|he|they|someone|person|one) (?:in|from) (?:the|this|that) (?:poem|story|song)|"
    r"(?:the )?(?:poem|song|story|letter|lyrics) (?:is|are) about me)"
)
_DISTANCED = (
    (re.compile(r"\b(?:herself|himself|themselves|themself|yourself|oneself)\b"), "myself"),
    (re.compile(r"\b(?:she's|he's|they're|you're)\b"), "i'm"),
    (re.compile(r"\b(?:she'll|he'll|they'll|you'll)\b"), "i'll"),
    (re.compile(r"\b(?:she'd|he'd|they'd|you'd)\b"), "i'd"),
    (re.compile(r"\b(?:his|their|your|ur|her)\b"), "my"),
    (re.compile(r"\b(?:him|them)\b"), "me"),
    (
        re.compile(
            r"\b(?:she|he|they|you|someone|somebody|a person|a friend|my friend|the friend|my 'friend'|"
            r"my \"friend\"|that person|this person|the person|the girl|a girl|the woman|a woman|the guy|a guy|"
            r"the man|a man)\b"
        ),
        "i",
    ),
)
_USER_SELF = (
    (re.compile(r"\b(?:your|ur|the) user (?:is|was)\b"), "i'm"),
    (re.compile(r"\b(?:your|ur|the) user has\b"), "i have"),
    (re.compile(r"\b(?:your|ur|the) user hasn't\b"), "i haven't"),
    (re.compile(r"\b(?:your|ur|the) user doesn't\b"), "i don't"),
    (re.compile(r"\b(?:your|ur|the) user (keep|want|need|do)s\b"), r"i \1"),
    (re.compile(r"\b(?:your|ur) user\b"), "i"),
    (re.compile(r"\bfrom the user\b"), "from me"),
)
#: "someone like me" is the user too, but says nothing of the turn's other subjects: not a reveal.
_SOMEONE_LIKE_ME = re.compile(r"\bsomeone like me\b")


#: A substring every reveal holds (the alternatives of ``_REVEAL``, each covered by one of these).
_REVEAL_NEEDLES = (
    " me",
    "(me)",
    "mine",
    "myself",
    "how i feel",
    "the friend",
    "where i",
    "what i",
    "my life",
    "poem",
    "song",
    "story",
)


def _self_reference(t: str) -> str:
    told = False  # the user speaking of themself as "your user" reveals the rest as theirs too
    if "user" in t:
        for rx, repl in _USER_SELF:
            t, n = rx.subn(repl, t)
            told = told or n > 0
    if "someone like me" in t:
        t = _SOMEONE_LIKE_ME.sub("i", t)
    if not told and not any(n in t for n in _REVEAL_NEEDLES):
        return t
    spans = [m.span() for m in _REVEAL.finditer(t)]
    if not (told or spans):
        return t
    # the reveal itself is kept as written, so that the concept layer can still find it (``revealed``)
    out: list[str] = []
    last = 0
    for a, b in [*spans, (len(t), len(t))]:
        part = t[last:a]
        for rx, repl in _DISTANCED:
            part = rx.sub(repl, part)
        out += [part, t[a:b]]
        last = b
    return "".join(out)


def revealed(normalised: str) -> bool:
    """The user says a distanced subject is themself ("the friend is me", "it's for me"): a story, poem or
    letter they ask for is then theirs, not media."""
    return _REVEAL.search(normalised) is not None


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Lower-case, fold apostrophes/quotes/dashes, collapse whitespace, canonicalise contractions, repair
    single-letter typos of words the detector knows (:mod:`._spelling`), read grammar as standard and a
    distanced disclosure the user says is theirs as theirs (``_self_reference``).

    Cached: a reply is normalised for the resource and harm detectors, and again by the checklist at close.
    """
    return _self_reference(normalise_as_written(text))


@lru_cache(maxsize=8192)
def normalise_as_written(text: str) -> str:
    """``normalise`` without the self-reference rewrite: the subjects as the user wrote them. The crisis rules
    read both forms and keep every finding of either, so that a reveal can add a finding and never take one
    away ("my partner said he will kill me ... that's my life now" stays danger from others)."""
    t = text.lower().translate(_TRANSLATE)
    t = unmask(" ".join(t.split()))
    return _grammar(repair_typos(_CANON_RX.sub(_canon, t)))
