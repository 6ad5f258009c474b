"""PII redaction for text that leaves the machine (external LLM judges).

Offline, deterministic, regex + checksum + context-word detectors: emails (also dictated), phone
numbers (international, US, UK; helplines and free-phone numbers kept), street addresses, postcodes
and ZIPs in context, payment cards (Luhn), IBANs (mod 97) and account numbers in context, IP
addresses, URL paths, dates of birth in context, and names where a phrase gives them away ("my name
is", "I'm", "Dr", "my sister Anna", ``memory.name``). Spans become typed placeholders numbered per
conversation (``[NAME_1]``, ``[PHONE_2]``); no mapping back is kept anywhere.

Entry points: :func:`redact` (one text), :func:`redact_exchange` / :func:`redact_messages` (what a
judge prompt is built from), :class:`Redactor` + :meth:`Redactor.scope` for custom use, and
:func:`is_loopback_url` (the default policy: redact unless the judge runs on this machine).
See docs/data-protection.md.
"""

from ._policy import is_loopback_url
from ._redactor import (
    DEFAULT,
    HISTORY_WINDOW,
    KINDS,
    Kind,
    Redactor,
    Scope,
    is_placeholder,
    memory_names,
    redact,
    redact_exchange,
    redact_messages,
    redact_texts,
    teaches_names,
)

__all__ = [
    "DEFAULT",
    "HISTORY_WINDOW",
    "KINDS",
    "Kind",
    "Redactor",
    "Scope",
    "is_loopback_url",
    "is_placeholder",
    "memory_names",
    "redact",
    "redact_exchange",
    "redact_messages",
    "redact_texts",
    "teaches_names",
]
