"""Typed, per-conversation-consistent, irreversible PII redaction.

A :class:`Scope` numbers what it replaces by kind and first appearance (``[NAME_1]``, ``[NAME_2]``,
``[PHONE_1]``), so a judge can still tell people apart. The value -> placeholder table exists only
inside the scope object, for as long as one prompt is being built; nothing returns it, logs it or
stores it, so a redacted text cannot be mapped back ("reversible nowhere").

Numbering follows first appearance in the text given to the scope, in order. :func:`redact_exchange`
and :func:`redact_messages` feed a conversation from its first message, so a person keeps the same
number in every later judge prompt of that conversation as long as the earlier messages are unchanged.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal
from urllib.parse import urlsplit

from schemas import Message, TurnContext
from scorers._base import Exchange

from . import _patterns as P
from ._lexicon import COMMON_WORDS

Kind = Literal[
    "EMAIL", "URL", "IP", "CARD", "IBAN", "ACCOUNT", "PHONE", "DOB", "ADDRESS", "POSTCODE", "NAME"
]  # fmt: skip
KINDS: tuple[Kind, ...] = (
    "EMAIL", "URL", "IP", "CARD", "IBAN", "ACCOUNT", "PHONE", "DOB", "ADDRESS", "POSTCODE", "NAME"
)  # fmt: skip

#: A placeholder is never taken for PII (digit rules skip it: ``_`` is a word character before the digit).
_PLACEHOLDER = re.compile(rf"\[(?:{'|'.join(KINDS)})_\d+\]")
_STOP = (
    "the a an my our your his her their this that near by and of to in on at from with for or around down up over "
    "hours minutes days weeks months years times miles acres blocks kids people dogs steps floors"
)
_STREET_STOP = frozenset(_STOP.split())
_MEMORY_NAME_KEY = re.compile(r"(?:^|_)(?:first_|last_|full_|given_|family_|user_|nick)?name$|^name", re.IGNORECASE)


class Scope:
    """Redaction state for one conversation view (one prompt): placeholder numbering and the names
    learned so far. Create one per prompt through :meth:`Redactor.scope`; do not keep it."""

    __slots__ = ("_counts", "_forms", "_name_re", "_names", "_r", "_seen", "counts")

    def __init__(self, redactor: Redactor) -> None:
        self._r = redactor
        self._seen: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._forms: dict[str, int] = {}  # lower-cased name form -> entity number (learn order)
        self._names: set[str] = set()  # surface forms to match
        self._name_re: re.Pattern[str] | None = None
        #: How many spans of each kind were replaced (no values): for tests and metrics.
        self.counts: dict[str, int] = {}

    # -- names ---------------------------------------------------------------------------------------
    def learn(self, *texts: str) -> None:
        """Collect names from trigger phrases ("my name is", "I'm", "Dr", "my sister") in ``texts`` so
        that later bare mentions are replaced too. Call it with the whole conversation first."""
        if "NAME" not in self._r.kinds:
            return
        for text in texts:
            if not text or not P.NAME_HINT.search(text):
                continue
            title_cased = _title_cased(text)
            for i, pat in enumerate(P.NAME_TRIGGERS):
                if title_cased and i not in (0, 2):
                    continue  # capitals carry no signal in Title Cased Text: only "my name is" and "Dr X"
                for m in pat.finditer(text):
                    first = m.group("first")
                    if not _namelike(first):
                        continue
                    group = m.groupdict()
                    second = group.get("second")
                    parts = [first] + ([second] if second and _namelike(second) else [])
                    self.add_name(" ".join(parts), any_case=i == 0)  # trigger 0: "my name is"
                    third = group.get("third")
                    if third and _namelike(third):
                        self.add_name(third)

    def add_name(self, name: str, *, any_case: bool = False) -> None:
        """Register a known name: the full form and each of its tokens, as written and Capitalised, and
        also lower-cased when ``any_case`` (a sure name: ``memory.name``, "my name is"), because voice
        transcripts often come without capitals."""
        name = " ".join(name.split())
        if not name or "NAME" not in self._r.kinds:
            return
        tokens = [t for t in name.split() if len(t) >= 2 and t.lower() not in COMMON_WORDS]
        if not tokens:
            return
        forms = [name, *tokens] if len(tokens) > 1 or tokens[0] != name else [name]
        entity = next((self._forms[f.lower()] for f in forms if f.lower() in self._forms), len(self._forms) + 1)
        for f in forms:
            if f.lower() in self._forms:
                continue
            self._forms[f.lower()] = entity
            self._names.update({f, " ".join(t[:1].upper() + t[1:] for t in f.split())})
            if any_case:
                self._names.add(f.lower())
            self._name_re = None

    def _names_pattern(self) -> re.Pattern[str] | None:
        if self._name_re is None and self._names:
            alts = "|".join(re.escape(n) for n in sorted(self._names, key=len, reverse=True))
            self._name_re = re.compile(rf"(?<![\w\[])(?:{alts})(?![\w\]])")
        return self._name_re

    # -- placeholders --------------------------------------------------------------------------------
    def _ph(self, kind: str, key: str) -> str:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        hit = self._seen.get((kind, key))
        if hit is None:
            n = self._counts[kind] = self._counts.get(kind, 0) + 1
            hit = self._seen[(kind, key)] = f"[{kind}_{n}]"
        return hit

    # -- the pass ------------------------------------------------------------------------------------
    def text(self, text: str, *, learn: bool = True) -> str:
        """``text`` with every detected span replaced; names are learned from ``text`` itself too unless
        ``learn`` is False (the caller already passed it to :meth:`learn`)."""
        if not text:
            return text
        kinds = self._r.kinds
        if learn:
            self.learn(text)
        digits = P.ANY_DIGIT.search(text) is not None
        if "URL" in kinds and ("://" in text or "www." in text.lower()):
            text = P.URL.sub(self._url, text)
        if "EMAIL" in kinds:
            if "@" in text:
                text = P.EMAIL.sub(lambda m: self._ph("EMAIL", m.group().lower()), text)
            if " at " in text.lower() and " dot " in text.lower():
                text = P.SPOKEN_EMAIL.sub(lambda m: self._ph("EMAIL", " ".join(m.group().lower().split())), text)
        if digits:
            if "IP" in kinds:
                text = P.IPV4.sub(lambda m: self._ph("IP", m.group()), text)
            if "IP" in kinds and ("::" in text or text.count(":") >= 7):
                text = P.IPV6.sub(self._ipv6, text)
            if "IBAN" in kinds:
                text = P.IBAN.sub(self._iban, text)
            if "CARD" in kinds:
                text = P.CARD.sub(self._card, text)
            if "ACCOUNT" in kinds:
                text = P.ACCOUNT.sub(lambda m: self._group(m, "ACCOUNT", _digits(m.group("v"))), text)
            if "DOB" in kinds:
                text = P.DOB.sub(lambda m: self._group(m, "DOB", m.group("v").lower()), text)
            if "ADDRESS" in kinds:
                text = P.ADDRESS.sub(lambda m: self._ph("ADDRESS", _norm(m.group())), text)
                text = P.ADDRESS_CONTEXT.sub(self._address_ctx, text)
            if "POSTCODE" in kinds:
                text = P.POSTCODE_CONTEXT.sub(lambda m: self._group(m, "POSTCODE", _norm(m.group("v"))), text)
                text = P.STATE_ZIP.sub(lambda m: self._group(m, "POSTCODE", m.group("v")), text)
                text = P.UK_POSTCODE.sub(lambda m: self._ph("POSTCODE", _norm(m.group())), text)
            if "PHONE" in kinds:
                text = P.PHONE.sub(self._phone, text)
        names = self._names_pattern()
        if names is not None:
            text = names.sub(self._name, text)
        return text

    def value(self, obj: Any) -> Any:
        """Redact every string inside a JSON-like value (memory dicts); keys are kept."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, Mapping):
            return {k: self.value(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self.value(v) for v in obj]
        return obj

    # -- callbacks -----------------------------------------------------------------------------------
    def _name(self, m: re.Match[str]) -> str:
        """Names are numbered by the order they were learned (trigger order over the whole conversation),
        so a person keeps one number across every window of the conversation a judge is shown."""
        self.counts["NAME"] = self.counts.get("NAME", 0) + 1
        return f"[NAME_{self._forms[m.group().lower()]}]"

    def _group(self, m: re.Match[str], kind: str, key: str) -> str:
        """Replace only the ``v`` group, keeping the context words ("born on [DOB_1]")."""
        start, end = m.span("v")
        whole = m.group()
        base = m.start()
        return whole[: start - base] + self._ph(kind, key) + whole[end - base :]

    def _url(self, m: re.Match[str]) -> str:
        raw = m.group()
        trail = ""
        while raw and raw[-1] in ".,;:!?":
            raw, trail = raw[:-1], raw[-1] + trail
        try:
            parts = urlsplit(raw if "://" in raw else "http://" + raw)
            host = parts.hostname or ""
        except ValueError:
            return self._ph("URL", raw.lower()) + trail
        if parts.username or P.IPV4.fullmatch(host) or ":" in host:
            return self._ph("URL", raw.lower()) + trail
        rest = raw.split(host, 1)[1] if host in raw else ""
        rest = re.sub(r"^:\d+", "", rest)
        if rest.strip("/") == "":
            return raw + trail  # a bare site ("https://988lifeline.org") identifies nobody
        return raw[: len(raw) - len(rest)] + "/" + self._ph("URL", rest.lower()) + trail

    def _ipv6(self, m: re.Match[str]) -> str:
        s = m.group()
        if s.count(":") < 2 or not re.search(r"[0-9A-Fa-f]", s):
            return s
        return self._ph("IP", s.lower())

    def _iban(self, m: re.Match[str]) -> str:
        raw = m.group()
        compact = raw.replace(" ", "")
        if P.iban_ok(compact):
            return self._ph("IBAN", compact)
        head, sep, tail = raw.rpartition(" ")
        if sep and P.iban_ok(head.replace(" ", "")):  # a short word after the number was swallowed
            return self._ph("IBAN", head.replace(" ", "")) + sep + tail
        before = m.string[max(0, m.start() - 12) : m.start()].lower()
        if "iban" in before and len(compact) >= 15:
            return self._ph("IBAN", compact)  # IBAN-like with a typo: still an account
        return raw

    def _card(self, m: re.Match[str]) -> str:
        digits = _digits(m.group())
        if 13 <= len(digits) <= 19 and P.luhn_ok(digits):
            return self._ph("CARD", digits)
        return m.group()

    def _phone(self, m: re.Match[str]) -> str:
        raw = m.group()
        digits = _digits(raw)
        n = len(digits)
        intl = raw.startswith(("+", "("))
        short_us = re.fullmatch(r"\d{3}[-.]\d{4}", raw) is not None
        if not (10 <= n <= 15 or (intl and 8 <= n <= 15) or short_us) or len(set(digits)) == 1:
            return raw  # wrong length, or "000000000000" (a placeholder, never a number in use)
        if P.NOT_PHONE_BEFORE.search(m.string[max(0, m.start() - 24) : m.start()]):
            return raw
        if P.is_public_number(raw, digits):
            return raw
        return self._ph("PHONE", digits)

    def _address_ctx(self, m: re.Match[str]) -> str:
        words = m.group("v").lower().split()[1:-1]
        if any(w in _STREET_STOP for w in words):
            return m.group()
        return self._group(m, "ADDRESS", _norm(m.group("v")))


class Redactor:
    """The redaction policy (which kinds) with compiled patterns; immutable and thread-safe."""

    def __init__(self, kinds: Iterable[Kind] = KINDS) -> None:
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown PII kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
        self.kinds = frozenset(kinds)

    def scope(self) -> Scope:
        return Scope(self)

    def text(self, text: str, *, names: Iterable[str] = ()) -> str:
        """One text on its own (its own numbering). Use a scope for several texts of a conversation."""
        s = self.scope()
        for n in names:
            s.add_name(n, any_case=True)
        return s.text(text)


DEFAULT = Redactor()


def redact(text: str, *, names: Iterable[str] = ()) -> str:
    """``text`` with PII replaced by typed placeholders (default policy, own numbering)."""
    return DEFAULT.text(text, names=names)


@functools.lru_cache(maxsize=8192)
def teaches_names(text: str) -> bool:
    """Whether ``text`` introduces a name redaction learns ("my sister Anna", "I'm Sam"): such a message must
    travel with any later one it may have to hide the name in (``scorers.judges.turn_job``). Cached: the turn
    agent asks it of every older message for each sampled reply, so without it a long conversation's jobs
    would rescan the same texts again and again."""
    scope = DEFAULT.scope()
    scope.learn(text)
    return bool(scope._forms)


def memory_names(context: TurnContext | None) -> list[str]:
    """String values of name-like memory keys (``name``, ``first_name``, ``partner_name``)."""
    memory = context.memory if context is not None else None
    if not memory:
        return []
    return [v for k, v in memory.items() if isinstance(v, str) and _MEMORY_NAME_KEY.search(k)]


def _redacted_context(scope: Scope, context: TurnContext) -> TurnContext:
    if not context.memory:
        return context
    return context.model_copy(update={"memory": scope.value(context.memory)})


#: Earlier messages an exchange keeps once redacted (judge prompts show at most the last 6).
HISTORY_WINDOW = 32


def redact_exchange(ex: Exchange, redactor: Redactor = DEFAULT, *, window: int | None = HISTORY_WINDOW) -> Exchange:
    """The exchange a judge may see: the last ``window`` history messages (None: all), user message,
    reply and memory values, redacted in one scope. Names are learned from the whole history first, so
    "my sister Anna" forty turns ago still hides a bare "Anna" now; older messages are then dropped
    rather than carried raw, which bounds the cost per judged turn."""
    scope = redactor.scope()
    for n in memory_names(ex.context):
        scope.add_name(n, any_case=True)
    scope.learn(*(m.text for m in ex.history), ex.user_text, ex.response)
    shown = ex.history[-window:] if window is not None and window > 0 else ex.history
    history = tuple(m.model_copy(update={"text": scope.text(m.text, learn=False)}) for m in shown)
    user_text = scope.text(ex.user_text, learn=False)
    response = scope.text(ex.response, learn=False)
    context = _redacted_context(scope, ex.context)
    return replace(ex, user_text=user_text, response=response, history=history, context=context)


def redact_messages(
    messages: Sequence[Message], context: TurnContext | None = None, redactor: Redactor = DEFAULT
) -> list[Message]:
    """A whole conversation redacted in one scope (``context`` supplies ``memory.name``)."""
    scope = redactor.scope()
    for n in memory_names(context):
        scope.add_name(n, any_case=True)
    scope.learn(*(m.text for m in messages))
    return [m.model_copy(update={"text": scope.text(m.text, learn=False)}) for m in messages]


def redact_texts(texts: Sequence[str], redactor: Redactor = DEFAULT) -> list[str]:
    """Several texts of one conversation (e.g. an embeddings request) in one scope."""
    scope = redactor.scope()
    scope.learn(*texts)
    return [scope.text(t, learn=False) for t in texts]


def is_placeholder(text: str) -> bool:
    return _PLACEHOLDER.fullmatch(text) is not None


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _namelike(token: str) -> bool:
    low = token.lower()
    if len(token) < 2 or low in COMMON_WORDS or token.isupper():
        return False
    return not (len(low) > 4 and low.endswith(("ed", "ing")))  # "my boyfriend Choked", "I'm Struggling"


_WORD = re.compile(r"[^\W\d_][\w'’]*")


def _title_cased(text: str) -> bool:
    """Most words capitalised (a headline, some transcripts): capitals then say nothing about names."""
    words = [w for w in _WORD.findall(text) if len(w) > 1 and w[:2] not in ("I'", "I’")]  # "I'm" is always upper
    return len(words) >= 4 and sum(w[0].isupper() for w in words) > 0.6 * len(words)
