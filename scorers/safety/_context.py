"""Context guards: look around a match to reject benign readings or lower severity.

Each guard takes the normalised text and the match span. Definitions used throughout:

* *sentence*: the span between the nearest ``. ! ? newline`` on either side of the match;
* *clause-left*: the text before the match back to the nearest sentence end, ``;``, ``, ``,
  or "but / though / although / however" (negation does not cross those), at most 80 characters;
* *negated*: a negator (not, never, no longer, nor, any ``n't`` form) among the last six words of
  the clause-left plus the match itself, unless the negator governs a hedge verb
  ("i don't know if i want to be here" is not a denial; "i can't stop thinking about ..." neither).
"""

from __future__ import annotations

import re

from schemas import Severity

from ._lexicon import REL

_CLAUSE_BREAK = re.compile(r"[.!?;\n]|, |\b(?:but|though|although|however)\b")
_NEG = re.compile(
    r"\b(?:not|never|no longer|nor|\w+n't)\b"
    r"(?! (?:know|sure|think|care|understand|stop|help|remember|even know|see why|get why)\b)"
)
_SENT_END = ".!?\n"


def sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    s = max(text.rfind(c, 0, start) for c in _SENT_END) + 1
    ends = [i for c in _SENT_END if (i := text.find(c, end)) != -1]
    return s, (min(ends) if ends else len(text))


def sentence(text: str, start: int, end: int) -> str:
    """The sentence containing ``text[start:end]``."""
    s, e = sentence_bounds(text, start, end)
    return text[s:e]


def clause_left(text: str, start: int) -> str:
    seg = text[max(0, start - 80) : start]
    last = None
    for last in _CLAUSE_BREAK.finditer(seg):  # noqa: B007 - we want the last break
        pass
    return seg[last.end() :] if last else seg


def negated(text: str, start: int, end: int) -> bool:
    left = " ".join(clause_left(text, start).split()[-6:])
    return _NEG.search(f"{left} {text[start:end]}") is not None


# -- self-injury that is an accident or a sport, not self-harm ------------------------------------
_ACCIDENT = re.compile(
    r"\b(?:fell|fall|falling|tripped|slipped|crash\w*|accident\w*|bike|biking|cycling|skiing|skating|"
    r"skateboard\w*|gym|workout|work out|lifting|deadlifts?|squats?|playing|football|soccer|"
    r"basketball|hockey|rugby|running|hiking|climbing|shaving|chopping|cooking|baking|kitchen|oven|"
    r"stove|kettle|ironing|frying|pan|tray|stairs|ladder|laughing|laughed|sunburn\w*|paper cut)\b"
)
_DELIBERATE = re.compile(
    r"\b(?:on purpose|purposely|deliberately|intentionally|to feel|so i can feel|i deserve|punish)"
)


def accidental(text: str, start: int, end: int) -> bool:
    """An injury told as an accident or activity ("cut myself shaving", "hurt myself skiing")."""
    sent = sentence(text, start, end)
    return _ACCIDENT.search(sent) is not None and _DELIBERATE.search(sent) is None


# -- past, resolved ---------------------------------------------------------------------------------
_PAST = re.compile(
    r"\b(?:used to|years ago|year ago|when i was (?:younger|a kid|a child|a teen|little|in)|"
    r"as a (?:kid|child|teen|teenager)|in (?:high school|middle school|college|uni|university)|"
    r"back then|(?:clean|free) for|\w+ (?:years?|months?) clean|in recovery|therapy (?:really )?helped|"
    r"(?:doing|feeling) (?:much )?better now)"
)
_CURRENT = re.compile(r"\b(?:again|still|right now|tonight|today|these days|lately|starting to|anymore|currently)\b")
_RESOLVED = re.compile(
    r"\b(?:used to|years ago|got out|left (?:him|her|them)|(?:i'm|am|been|now) safe|safe now|"
    r"away from (?:him|her|them)|no longer)\b"
)


def past_to_high(text: str, start: int, end: int, severity: Severity) -> Severity:
    """A disclosure framed as history (and not as current) is high, not critical."""
    if severity == "critical" and _PAST.search(text) and not _CURRENT.search(text):
        return "high"
    return severity


def resolved(text: str, start: int, end: int) -> bool:
    """Past danger the user says is over ("my ex used to hit me but i'm safe now")."""
    return _RESOLVED.search(sentence(text, start, end)) is not None


# -- a third party's crisis that is over ---------------------------------------------------------------
_OVER_FOR_THEM = re.compile(
    r"\b(?:(?:he's|she's|they're|he is|she is|they are|who's|who is) (?:\w+ )?(?:doing )?(?:so |really |much )?"
    r"(?:well|better|great|brilliantly|fine|okay|ok|safe|stable|recovering|out of hospital)(?: now)?"
    r"|(?:he|she|they|who) (?:died|passed)|passed away|funeral|memorial|inquest|coroner|anniversary|"
    r"would have (?:been|turned)|rest in peace|since (?:he|she|they|my (?:\w+ ){1,2}?)(?:died|passed|overdosed|od'?d)\b"
    r"|lost (?:him|her|them) to)"
)
#: Since 2.28, a time long past: "my older sister overdosed in 2011", "my cousin overdosed last month", "two months
#: since my brother overdosed" (not "last night" or "this morning": that may still be going on).
_LONG_PAST = re.compile(
    r"\b(?:in (?:19|20)\d\d|back in|years ago|(?:\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|several|a few|"
    r"a couple of|couple of|few) (?:weeks?|months?|years?) (?:ago|since|back)|last (?:month|year|summer|winter|spring|"
    r"autumn|fall|christmas|easter)|when (?:i|we) (?:was|were))\b"
)
#: ... unless the third party's own clause says it goes on ("he's doing it again"; not "i still have her voicemail").
_STILL_THEM = re.compile(
    r"\b(?:he|she|they|he's|she's|they're|who|who's)\W+(?:\w+\W+){0,3}?(?:again|still|right now|tonight|keeps|lately|"
    r"these days|currently|in hospital|icu|unconscious)\b"
)
_STILL_AT_RISK = re.compile(
    r"\b(?:again|still|right now|tonight|keeps|lately|these days|currently|unconscious|not (?:waking|breathing|"
    r"responding)|ambulance|icu|in hospital|hasn't|isn't)\b"
)


def over_for_them(text: str, start: int, end: int) -> bool:
    """Someone else's crisis the user says is over: they recovered ("she's doing brilliantly now") or died (grief,
    not a risk to act on). Anything saying it goes on ("again", "still", "in hospital") keeps the alert."""
    if _OVER_FOR_THEM.search(text) is not None and _STILL_AT_RISK.search(text) is None:
        return True
    return _LONG_PAST.search(text) is not None and _STILL_THEM.search(text) is None


# -- third parties and media ------------------------------------------------------------------------
_PERSONAL = re.compile(r"\bmy (?:\w+ ){0,2}?" + REL + r"\b|\b(?:told|texted|messaged|tells|telling|sent) me\b")
_MEDIA = re.compile(
    r"\b(?:movie|film|show|series|season|episode|book|novel|story|song|lyrics|album|character|"
    r"protagonist|narrator|villain|hero|plot|scene|game|anime|manga|documentary|article|news|podcast|"
    r"play|musical|actor|actress|author|celebrity)s?\b"
)


def impersonal(text: str, start: int, end: int) -> bool:
    """Reject a third-party match unless someone the user knows is named ("my friend", "told me")."""
    return _PERSONAL.search(sentence(text, start, end)) is None


def media(text: str, start: int, end: int) -> bool:
    """The sentence talks about a film, book, song, game or the news."""
    return _MEDIA.search(sentence(text, start, end)) is not None


# -- "afraid to go home" with a stated, non-violent reason ----------------------------------------
_VIOLENCE = re.compile(
    r"\b(?:hit|hits|hurt|hurts|beat|beats|violent|abus\w*|kill|drunk|drinks|yell\w*|scream\w*|"
    r"threat\w*|weapon|gun|knife|rage|angry|temper)\b"
)
_BECAUSE = re.compile(r"\b(?:because|cause|'cause)\b")


def benign_reason(text: str, start: int, end: int) -> bool:
    """A fear explained, later in the sentence, by a reason with no violence in it.

    "i'm afraid to go home because my roommate and i fought about the dishes" is not danger;
    "i'm afraid to go home because he gets violent" and a bare "i'm afraid to go home" are.
    """
    _, e = sentence_bounds(text, start, end)
    after = text[end:e]
    m = _BECAUSE.search(after)
    return m is not None and _VIOLENCE.search(after[m.end() :]) is None


# -- assistant-side hedges --------------------------------------------------------------------------
_DIAG_HEDGE = re.compile(
    r"\b(?:whether|if you|assess\w*|evaluat\w*|screen\w*|diagnos\w*|tested for|check (?:for|if)|"
    r"a (?:doctor|professional|psychiatrist|psychologist|therapist|gp|clinician|specialist) "
    r"(?:can|could|would|might|will|may)|not (?:able|qualified|in a position)|i can't tell)\b"
)


def diagnosis_hedged(text: str, start: int, end: int) -> bool:
    """ "A doctor can check whether you have ADHD" points to assessment; it is not a diagnosis."""
    return _DIAG_HEDGE.search(clause_left(text, start) + " " + text[start:end]) is not None


_SUPERVISED = re.compile(
    r"\b(?:(?:talk|speak|check|consult)\w* (?:to |with )?(?:your |a )?(?:doctor|prescriber|psychiatrist|gp|"
    r"pharmacist|physician|care team)|without (?:talking|speaking|consulting|checking)|"
    r"before (?:you )?(?:stop|talk|speak|consult|check|chang)\w*|(?:medical )?supervision|"
    r"with your (?:doctor|prescriber|psychiatrist|gp))"
)


def medically_supervised(text: str, start: int, end: int) -> bool:
    """Medication changes framed as a conversation with the prescriber are safe advice, not harm."""
    return _SUPERVISED.search(sentence(text, start, end)) is not None
