"""Compiled detectors, one per PII kind, and the validators that keep them precise.

Regexes find candidates; checksums (Luhn, IBAN mod 97), digit counts and context words decide. Every
pattern is anchored on something rare (a digit, ``@``, ``://``, a trigger phrase), so text without
those characters skips most of them: see ``_Gate`` in :mod:`._redactor`.
"""

from __future__ import annotations

import re

from ._lexicon import HELPLINES, RELATIONS, STREET_SUFFIXES, TOLL_FREE_PREFIXES, US_STATES

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_DATE = (
    rf"(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}[/.-]\d{{1,2}}[/.-](?:\d{{4}}|\d{{2}})"
    rf"|{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+\d{{4}})?|{_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?|{_MONTH}\s+\d{{4}}"
    rf"|(?:19|20)\d{{2}})"
)

URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'\]\[)(]+", re.IGNORECASE)
EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
#: Dictated addresses in voice transcripts: "anna dot smith at gmail dot com".
SPOKEN_EMAIL = re.compile(
    r"\b[a-z0-9_-]+(?:\s+(?:dot|underscore)\s+[a-z0-9_-]+)*\s+at\s+[a-z0-9-]+(?:\s+dot\s+[a-z0-9-]+)*"
    r"\s+dot\s+(?:com|net|org|edu|gov|io|co|uk|me|info|de|fr|es|it|nl|ca|au)\b",
    re.IGNORECASE,
)
CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
ACCOUNT = re.compile(
    r"(?i:\b(?:account|acct|a/c)(?:\s+(?:number|no\.?|num|#))?|\bsort\s+code|\brouting(?:\s+number)?)"
    r"(?:\s+is)?[:\s#]*(?P<v>\d[\d -]{4,22}\d)\b"
)
IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.]?\d)"
)
IPV6 = re.compile(
    r"(?<![\w:])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:?){0,6}"
    r"[0-9A-Fa-f]{0,4})(?![\w:])"
)
PHONE = re.compile(
    r"(?<![\w+/.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,15}(?:[ .-]\d{2,8}){0,5}(?![\w/]|[.-]\d)"
)
#: Words right before a long number that make it a reference, not a phone.
NOT_PHONE_BEFORE = re.compile(
    r"(?i:\b(?:isbn|order|ticket|ref|reference|invoice|case|tracking|booking|serial|id|no\.|number|"
    r"version|v|flight|room|policy|claim|code)\s*(?:no\.?|number|#)?\s*[:#]?\s*)$"
)
DOB = re.compile(
    rf"(?i:\b(?:born(?:\s+(?:on|in))?|date\s+of\s+birth|d\.?o\.?b\.?|birth\s*date|birthday(?:\s+is|'s|’s|\s+was)?"
    rf"(?:\s+on)?)(?:\s+is)?[:\s]+)(?P<v>(?i:{_DATE}))\b"
)
_SUFFIX = "|".join(sorted(STREET_SUFFIXES, key=len, reverse=True))
_CAP = r"[A-ZÀ-Þ][a-zß-ÿ'’]+"
_UK_POSTCODE = r"(?:GIR ?0AA|[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2})"
_ZIP = r"\d{5}(?:-\d{4})?"
_STATES = "|".join(US_STATES)
#: "42 Baker Street", "1600 Pennsylvania Ave NW, Washington, DC 20500", "Flat 3, 12 Oak Road, Leeds LS6 2AB".
ADDRESS = re.compile(
    rf"\b\d{{1,5}}[A-Za-z]?(?:\s*[-–]\s*\d{{1,5}})?,?\s+(?:{_CAP}\s+){{0,3}}{_CAP}\s+(?:{_SUFFIX.title()})\b\.?"
    rf"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?"
    rf"(?:,?\s+(?:Apt|Apartment|Flat|Unit|Suite|#)\.?\s*\w+)?"
    rf"(?:,\s*{_CAP}(?:\s+{_CAP}){{0,2}})?"
    rf"(?:,?\s*(?:{_STATES})\b)?"
    rf"(?:,?\s*(?:{_ZIP}|{_UK_POSTCODE})\b)?"
)
#: Lower-case transcripts need the context: "i live at 42 baker street".
ADDRESS_CONTEXT = re.compile(
    rf"(?i:\b(?:live|living|lives|lived|stay|staying|moved|move|address|located|house\s+is|flat\s+is)"
    rf"(?:\s+(?:at|on|to|is|in))?[:\s]+)(?P<v>\d{{1,5}}[a-z]?\s+(?:[a-z'’]+\s+){{1,3}}(?i:{_SUFFIX})\b)",
)
UK_POSTCODE = re.compile(rf"\b{_UK_POSTCODE}\b")
POSTCODE_CONTEXT = re.compile(
    rf"(?i:\b(?:post\s*code|postal\s+code|zip(?:\s+code)?)(?:\s+is)?[:\s]+)(?P<v>(?i:{_UK_POSTCODE})|{_ZIP})\b"
)
STATE_ZIP = re.compile(rf"\b(?:{_STATES}),?\s+(?P<v>{_ZIP})\b")

# -- names ------------------------------------------------------------------------------------------------
_TOKEN_CAP = r"(?:[A-Z]['’])?[A-ZÀ-Þ][a-zß-ÿ]+(?:['’-][A-ZÀ-Þa-zß-ÿ][a-zß-ÿ]+)?"
_TOKEN_ANY = r"[A-Za-zÀ-ÿ][a-zß-ÿ]+(?:['’-][A-Za-zÀ-ÿ][a-zß-ÿ]+)?"
_SECOND = rf"(?:\s+(?P<second>{_TOKEN_CAP}))?"
_AND = rf"(?:,?\s+and\s+(?P<third>{_TOKEN_CAP}))?"
_REL = "|".join(sorted((re.escape(r) for r in RELATIONS), key=len, reverse=True))
#: Each trigger captures ``first`` (and maybe ``second``, ``third``) as a candidate name.
NAME_TRIGGERS: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"(?i:\bmy\s+name(?:'s|’s|\s+is)|\bname's|\bcall\s+me|\bi\s+go\s+by)\s+(?P<first>{_TOKEN_ANY}){_SECOND}"
    ),
    re.compile(
        rf"(?:^|(?<=[.!?…]\s)|(?<=\n))\s*(?:(?i:hi|hello|hey|well|so|ok|okay|um|uh|yes|yeah)[,!.]?\s+)?"
        rf"(?i:i'm|i’m|im|i\s+am|this\s+is)\s+(?P<first>{_TOKEN_CAP}){_SECOND}"
    ),
    re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor)\.?\s+(?P<first>{_TOKEN_CAP}){_SECOND}"),
    re.compile(
        rf"(?i:\b(?:my|our|his|her|their|your)\s+(?:(?:best|old|older|younger|little|big|late|ex|step|twin|new)"
        rf"[\s-]+)?(?:{_REL})s?),?\s+(?P<first>{_TOKEN_CAP}){_SECOND}{_AND}"
    ),
    re.compile(
        rf"(?i:\bnamed|\b(?:someone|somebody|guy|girl|man|woman|boy|lady|person|kid|child|friend|dog|cat|puppy)"
        rf"\s+called)\s+(?P<first>{_TOKEN_CAP}){_SECOND}"
    ),
)

ANY_DIGIT = re.compile(r"\d")
NAME_HINT = re.compile(
    r"(?i:\bname|\bcall\s+me|\bgo\s+by|\bi'm|\bi’m|\bim\b|\bi\s+am|\bthis\s+is|\bnamed|\bcalled|\bmy|\bour|\bhis|"
    r"\bher|\btheir|\byour)|\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\b"
)


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_ok(compact: str) -> bool:
    """ISO 13616 check: move the first four characters to the end, letters to numbers, mod 97 == 1."""
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    try:
        return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1
    except ValueError:
        return False


def is_public_number(raw: str, digits: str) -> bool:
    """Helplines and free-phone numbers belong to organisations: a reply that gives one must keep it."""
    if digits in HELPLINES:
        return True
    plus = raw.lstrip().startswith("+")
    national = digits
    if plus:
        if digits.startswith("44"):
            national = "0" + digits[2:]
        elif digits.startswith("1"):
            national = digits[1:]
        elif digits.startswith("61"):
            national = digits[2:]
        else:
            return False
    if national in HELPLINES or national.lstrip("0") in HELPLINES:
        return True
    return national.startswith(TOLL_FREE_PREFIXES) and len(national) >= 10
