"""PII redaction: a labelled set (recall per kind, false positives on hard negatives), consistency and
irreversibility of placeholders, crisis cues untouched, the provider policy, and the judge tier
end to end (what the fake judge received, the cache key, logs, API keys).

``python tests/test_redaction.py`` prints the measured recall and false positives (throughput:
``bench/redaction_bench.py``).
"""

from __future__ import annotations

import ast
import json
import logging
import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from attune.testing import FakeJudgeServer
from schemas import Message, TurnContext
from scorers import Exchange
from scorers.judges import JudgeConfig, JudgeTier, ProviderConfig, load_config
from scorers.judges._config import DEFAULT_PROVIDERS
from scorers.redact import (
    KINDS,
    Redactor,
    is_loopback_url,
    is_placeholder,
    redact,
    redact_exchange,
    redact_messages,
)
from scorers.safety import detect_crisis

ROOT = Path(__file__).resolve().parents[1]

# -- the labelled set ---------------------------------------------------------------------------------
#: (text, [(PII substring that must not survive, kind whose placeholder must appear)]).
POSITIVES: list[tuple[str, list[tuple[str, str]]]] = [
    # emails
    ("You can reach me at jane.doe@example.com if that helps.", [("jane.doe@example.com", "EMAIL")]),
    ("my work email is J.Smith+therapy@nhs.net", [("J.Smith+therapy@nhs.net", "EMAIL")]),
    ("Email me: tom_h-88@outlook.co.uk, I check it daily.", [("tom_h-88@outlook.co.uk", "EMAIL")]),
    ("it's sam dot jones at gmail dot com", [("sam dot jones at gmail dot com", "EMAIL")]),
    ("Contact: m.garcia@uni-leeds.ac.uk", [("m.garcia@uni-leeds.ac.uk", "EMAIL")]),
    ("ANNA.K@YAHOO.COM is my old address", [("ANNA.K@YAHOO.COM", "EMAIL")]),
    ("my inbox is lee1990@hotmail.com, not the work one", [("lee1990@hotmail.com", "EMAIL")]),
    # phones
    ("My number is +44 7700 900123.", [("7700 900123", "PHONE")]),
    ("call me on 07700 900 456 tonight", [("07700 900 456", "PHONE")]),
    ("mum's landline is 020 7946 0958", [("020 7946 0958", "PHONE")]),
    ("text me at (415) 555-0132", [("555-0132", "PHONE")]),
    ("my cell: 415-555-0199", [("415-555-0199", "PHONE")]),
    ("+1 312 555 0147 is my number", [("312 555 0147", "PHONE")]),
    ("reach me at 415.555.0173 after six", [("415.555.0173", "PHONE")]),
    ("+49 30 12345678 is my Berlin number", [("12345678", "PHONE")]),
    ("call 0161 496 0000 and ask for me", [("0161 496 0000", "PHONE")]),
    ("my phone is 555-0123", [("555-0123", "PHONE")]),
    ("+33 6 12 34 56 78 c'est moi", [("12 34 56 78", "PHONE")]),
    ("my number is 07911123456", [("07911123456", "PHONE")]),
    ("+61 412 345 678 if you're in Sydney", [("412 345 678", "PHONE")]),
    # addresses and postcodes
    ("I live at 42 Baker Street, London NW1 6XE.", [("42 Baker Street", "ADDRESS"), ("NW1 6XE", "ADDRESS")]),
    (
        "We moved to 1600 Pennsylvania Ave NW, Washington, DC 20500 last year.",
        [("1600 Pennsylvania Ave", "ADDRESS"), ("20500", "ADDRESS")],
    ),
    ("my flat is at 7B Elm Grove", [("7B Elm Grove", "ADDRESS")]),
    ("it's 221 Oak Lane, Springfield, IL 62704", [("221 Oak Lane", "ADDRESS"), ("62704", "ADDRESS")]),
    ("i live at 12 oak road now", [("12 oak road", "ADDRESS")]),
    ("She lives on 9 Victoria Road.", [("9 Victoria Road", "ADDRESS")]),
    ("The address is 350 Fifth Avenue, Apt 4B, New York, NY 10118.", [("350 Fifth Avenue", "ADDRESS")]),
    ("staying at 15 church street with a friend", [("15 church street", "ADDRESS")]),
    ("my postcode is M1 1AE", [("M1 1AE", "POSTCODE")]),
    ("zip code 90210, if you need it", [("90210", "POSTCODE")]),
    ("Leeds LS6 2AB is where I am", [("LS6 2AB", "POSTCODE")]),
    ("I'm in Austin, TX 78701 now", [("78701", "POSTCODE")]),
    # payment cards
    ("my card is 4111 1111 1111 1111", [("4111 1111 1111 1111", "CARD")]),
    ("card number 5500-0000-0000-0004", [("5500-0000-0000-0004", "CARD")]),
    ("3782 822463 10005 is the amex", [("3782 822463 10005", "CARD")]),
    ("4012888888881881 was charged twice", [("4012888888881881", "CARD")]),
    ("the discover card 6011 1111 1111 1117", [("6011 1111 1111 1117", "CARD")]),
    ("visa 4242-4242-4242-4242", [("4242-4242-4242-4242", "CARD")]),
    # bank accounts
    ("IBAN GB82 WEST 1234 5698 7654 32 please", [("GB82 WEST 1234 5698 7654 32", "IBAN")]),
    ("pay to DE89370400440532013000", [("DE89370400440532013000", "IBAN")]),
    ("my account number is 31926819", [("31926819", "ACCOUNT")]),
    ("sort code 20-00-00", [("20-00-00", "ACCOUNT")]),
    ("FR1420041010050500013M02606 is my French account", [("FR1420041010050500013M02606", "IBAN")]),
    # IP addresses
    ("my IP is 192.168.1.20", [("192.168.1.20", "IP")]),
    ("logged in from 81.2.69.142 at night", [("81.2.69.142", "IP")]),
    ("address 2001:db8:85a3::8a2e:370:7334", [("2001:db8:85a3::8a2e:370:7334", "IP")]),
    ("server at 10.0.0.5 keeps dropping", [("10.0.0.5", "IP")]),
    # URLs with personal paths
    ("my blog is https://janedoe.blog/posts/my-diary", [("/posts/my-diary", "URL")]),
    ("see www.facebook.com/jane.doe.1987", [("jane.doe.1987", "URL")]),
    ("https://www.instagram.com/sam_h88/ is me", [("sam_h88", "URL")]),
    ("http://linkedin.com/in/tom-hughes-123", [("tom-hughes-123", "URL")]),
    # dates of birth
    ("I was born on 12/03/1985", [("12/03/1985", "DOB")]),
    ("date of birth: 3 March 1990", [("3 March 1990", "DOB")]),
    ("DOB 1978-11-02", [("1978-11-02", "DOB")]),
    ("my birthday is March 3rd", [("March 3rd", "DOB")]),
    ("I was born in 1992 and it shows", [("1992", "DOB")]),
    ("born 4th of July 1989, so yes", [("4th of July 1989", "DOB")]),
    # names
    ("My name is Priya and I can't sleep.", [("Priya", "NAME")]),
    ("my name's jason", [("jason", "NAME")]),
    ("I'm Tomasz. I moved here last year.", [("Tomasz", "NAME")]),
    ("Hi, I'm Olusegun.", [("Olusegun", "NAME")]),
    ("My sister Anna doesn't talk to me anymore.", [("Anna", "NAME")]),
    ("my best friend Mariam moved away", [("Mariam", "NAME")]),
    ("Dr Okafor said I should rest.", [("Okafor", "NAME")]),
    ("Mrs. Patel from next door checks on me", [("Patel", "NAME")]),
    ("my boyfriend Kai and my friend Leo are fighting", [("Kai", "NAME"), ("Leo", "NAME")]),
    ("Call me Suki.", [("Suki", "NAME")]),
    ("my therapist, Helen, is on leave", [("Helen", "NAME")]),
    ("my parents Ravi and Meera are divorcing", [("Ravi", "NAME"), ("Meera", "NAME")]),
    ("There's this guy named Dev at work", [("Dev", "NAME")]),
    ("My brother Luca called. Luca says I'm overreacting.", [("Luca", "NAME")]),
    ("this is Grainne O'Neill speaking", [("Grainne", "NAME"), ("O'Neill", "NAME")]),
    # written after the rules were frozen (first run: 24/25 found, 0/15 false positives; see docs)
    ("drop me a line at k.osei@protonmail.ch", [("k.osei@protonmail.ch", "EMAIL")]),
    ("My mobile's 07123 456789, text anytime", [("07123 456789", "PHONE")]),
    ("ring me on +353 87 123 4567", [("123 4567", "PHONE")]),
    ("home phone (212) 555-0198", [("555-0198", "PHONE")]),
    ("we're at 18 Maple Drive, Portland, OR 97201", [("18 Maple Drive", "ADDRESS")]),
    ("She's staying at 3 Kingfisher Close", [("3 Kingfisher Close", "ADDRESS")]),
    ("my Mastercard 5105 1051 0510 5100 got stolen", [("5105 1051 0510 5100", "CARD")]),
    ("NL91ABNA0417164300 is my Dutch account", [("NL91ABNA0417164300", "IBAN")]),
    ("my birthday's 14 Feb", [("14 Feb", "DOB")]),
    ("I was born on June 5, 1994", [("June 5, 1994", "DOB")]),
    ("my daughter Chloe won't eat", [("Chloe", "NAME")]),
    ("I'm Mateo, by the way", [("Mateo", "NAME")]),
    ("my ex-husband Gary keeps calling", [("Gary", "NAME")]),
    ("My counsellor Ms Adebayo retired", [("Adebayo", "NAME")]),
    ("my name is siobhan", [("siobhan", "NAME")]),
    ("my granddad Walter passed last spring", [("Walter", "NAME")]),
    ("router says 172.16.254.1", [("172.16.254.1", "IP")]),
    ("https://twitter.com/kwame_writes", [("kwame_writes", "URL")]),
    ("postcode EH1 2NG", [("EH1 2NG", "POSTCODE")]),
    ("I'm Zara and I'm 19", [("Zara", "NAME")]),
    ("my coworker Bartholomew keeps mocking me", [("Bartholomew", "NAME")]),
    ("call me back on 0207 123 4567", [("0207 123 4567", "PHONE")]),
    ("my email is lily.chen at outlook dot com", [("lily.chen at outlook dot com", "EMAIL")]),
    ("date of birth 07.09.2001", [("07.09.2001", "DOB")]),
    ("my neighbour, Mr. Fitzgerald, shouts at night", [("Fitzgerald", "NAME")]),
]

#: Text with no PII that looks like some: each must come back unchanged.
HARD_NEGATIVES: list[str] = [
    "I'm Sad and I don't know why.",
    "May I ask you something?",
    "Will you remember this tomorrow?",
    "I'm Done with everything.",
    "I want to kill myself.",
    "I slept 5 hours last night and had 3 coffees.",
    "Call 988 if you are in the US, or text 741741.",
    "You can call Samaritans free on 116 123.",
    "The National Suicide Prevention Lifeline is 1-800-273-8255.",
    "Childline is 0800 1111, any time.",
    "My appointment is on 12/03/2024 at 10:30.",
    "It happened on March 3rd and I still think about it.",
    "I've been sober since 2019.",
    "I walked 3 blocks down the road.",
    "i live on 5 acres near the park",
    "My order number 4829-1173-5521 never arrived.",
    "ISBN 978-3-16-148410-0 is the workbook my therapist uses.",
    "I owe $12,500 on my credit card.",
    "It costs £1,299.99 a month.",
    "Version 2.4.1 of the app crashed.",
    "My score went from 120 to 1300 points.",
    "I'm 5'10\" and 70 kg.",
    "Between 1990 and 2000 we lived abroad.",
    "I work 9-5, Monday to Friday.",
    "I'm Going to try harder tomorrow.",
    "This is Hard for me.",
    "My Mom Said I was lazy.",
    "My friend Said nothing.",
    "I Feel Like Nobody Cares About Me.",
    "Hope you're well.",
    "I'm Not Okay.",
    "Dr. appointments make me anxious.",
    "I read that 1 in 4 people struggle with mental health.",
    "Take 2 tablets every 4 hours.",
    "The meeting is at 3:45 PM.",
    "We met in room 204 of building 3.",
    "Pi is 3.14159265358979.",
    "https://988lifeline.org is what you shared.",
    "Visit www.samaritans.org for help.",
    "I was born in a small town.",
    "My birthday was hard this year.",
    "I live on the 5th floor.",
    "My dad and my sister argue.",
    "I'm Christian and my faith helps.",
    "It was 2 am when I called.",
    "My sister's 16 and my brother is 12.",
    "the number 4111 1111 1111 1112 is not a valid card",
    "Room 101, flight BA 2490.",
    "I Called Samaritans Last Night.",
    "In the UK, call NHS 111 or 999 in an emergency.",
    # written after the rules were frozen
    "I'm Exhausted and Nobody Notices.",
    "I counted 1234 5678 sheep",
    "My therapist said 2 weeks off.",
    "I'm Worried about the 15th.",
    "Grace is what I need, not advice.",
    "The bus 73 to Oxford Circus was late.",
    "I got 1,000,000 views lol.",
    "We're in flat 4 now.",
    "My Birthday Party Was Awful.",
    "I'm Really Struggling Today.",
    "Please call 111 if it's not urgent.",
    "My boss Always finds something.",
    "It was 11/11 when it happened.",
    "Jordan Peterson's book didn't help.",
    "Text SHOUT to 85258.",
]

_PH = re.compile(r"\[([A-Z]+)_\d+\]")


def measure() -> dict[str, object]:
    """Recall over the PII spans of POSITIVES (a span counts when it is gone and a placeholder of its
    kind appeared), false positives over HARD_NEGATIVES (any change). Throughput: ``bench/redaction_bench.py``."""
    found = total = 0
    by_kind: dict[str, list[int]] = {}
    misses: list[str] = []
    for text, spans in POSITIVES:
        out = redact(text)
        kinds = set(_PH.findall(out))
        for pii, kind in spans:
            total += 1
            ok = pii not in out and kind in kinds
            found += ok
            by_kind.setdefault(kind, [0, 0])
            by_kind[kind][0] += ok
            by_kind[kind][1] += 1
            if not ok:
                misses.append(f"{kind}: {text!r} -> {out!r}")
    fps = [(t, redact(t)) for t in HARD_NEGATIVES if redact(t) != t]
    return {
        "positives": len(POSITIVES),
        "spans": total,
        "recall": found / total,
        "by_kind": {k: f"{a}/{b}" for k, (a, b) in sorted(by_kind.items())},
        "misses": misses,
        "negatives": len(HARD_NEGATIVES),
        "false_positives": fps,
    }


# -- the labelled set, as tests -------------------------------------------------------------------------
def test_labelled_set_is_large_enough_and_covers_every_kind() -> None:
    assert len(POSITIVES) >= 60 and len(HARD_NEGATIVES) >= 40
    assert {k for _, spans in POSITIVES for _, k in spans} == set(KINDS)


@pytest.mark.parametrize(("text", "spans"), POSITIVES, ids=[f"pos{i}" for i in range(len(POSITIVES))])
def test_pii_is_replaced_by_a_typed_placeholder(text: str, spans: list[tuple[str, str]]) -> None:
    out = redact(text)
    kinds = set(_PH.findall(out))
    for pii, kind in spans:
        assert pii not in out, out
        assert kind in kinds, out


@pytest.mark.parametrize("text", HARD_NEGATIVES, ids=[f"neg{i}" for i in range(len(HARD_NEGATIVES))])
def test_hard_negatives_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_recall_and_false_positives_thresholds() -> None:
    m = measure()
    assert m["recall"] >= 0.95, m["misses"]
    assert m["false_positives"] == []


# -- placeholders: consistent, typed, irreversible ----------------------------------------------------
def test_placeholders_are_consistent_within_a_conversation() -> None:
    msgs = [
        Message(role="user", text="My sister Anna and my friend Tom had a fight."),
        Message(role="assistant", text="That sounds hard. How did Anna take it?"),
        Message(role="user", text="Anna cried. Tom emailed me at tom.k@mail.com and anna@mail.com, ugh."),
        Message(role="user", text="Tom also wrote from tom.k@mail.com again."),
    ]
    out = [m.text for m in redact_messages(msgs)]
    assert out[0] == "My sister [NAME_1] and my friend [NAME_2] had a fight."
    assert out[1] == "That sounds hard. How did [NAME_1] take it?"
    assert out[2] == "[NAME_1] cried. [NAME_2] emailed me at [EMAIL_1] and [EMAIL_2], ugh."
    assert out[3] == "[NAME_2] also wrote from [EMAIL_1] again."
    assert [m.role for m in redact_messages(msgs)] == [m.role for m in msgs]


def test_numbering_is_stable_as_the_conversation_grows() -> None:
    """A turn judge sees the conversation so far: earlier people keep their numbers in later prompts."""
    base = [Message(role="user", text="My brother Sam called."), Message(role="assistant", text="How was Sam?")]
    grown = [*base, Message(role="user", text="Then my friend Priya came and Sam left.")]
    a = [m.text for m in redact_messages(base)]
    b = [m.text for m in redact_messages(grown)]
    assert b[: len(a)] == a and b[2] == "Then my friend [NAME_2] came and [NAME_1] left."


def test_placeholders_reveal_nothing_about_the_value() -> None:
    """Irreversible: two different people/emails/cards give byte-identical redacted text, so no table
    or hash could map a placeholder back (and the redactor keeps no state between calls)."""
    a = redact("My name is Priya, priya@x.org, card 4111 1111 1111 1111, born on 12/03/1985.")
    b = redact("My name is Joanna, jo@y.net, card 5500-0000-0000-0004, born on 01/01/1970.")
    assert a == b == "My name is [NAME_1], [EMAIL_1], card [CARD_1], born on [DOB_1]."
    r = Redactor()
    before = dict(vars(r)) if hasattr(r, "__dict__") else {}
    r.text("My sister Anna, anna@x.org")
    assert (dict(vars(r)) if hasattr(r, "__dict__") else {}) == before


def test_scope_exposes_counts_but_no_values() -> None:
    s = Redactor().scope()
    s.text("Email jane.doe@example.com or call 07700 900123, my brother Sam knows.")
    assert s.counts == {"EMAIL": 1, "PHONE": 1, "NAME": 1}
    assert not [
        a for a in dir(s) if not a.startswith("_") and a not in ("counts", "text", "value", "learn", "add_name")
    ]


def test_memory_name_is_redacted_everywhere_and_memory_keys_kept() -> None:
    ctx = TurnContext(memory={"name": "Jason", "partner_name": "Leila", "sleep_hours_avg": "5.5"})
    ex = Exchange(
        "c",
        3,
        "jason here, leila left",
        "Jason, I'm sorry Leila left.",
        (Message(role="user", text="Hi"),),
        ctx,
    )
    out = redact_exchange(ex)
    assert out.response == "[NAME_1], I'm sorry [NAME_2] left."
    assert out.user_text == "[NAME_1] here, [NAME_2] left"
    assert out.context.memory == {"name": "[NAME_1]", "partner_name": "[NAME_2]", "sleep_hours_avg": "5.5"}
    assert ex.context.memory is not None and ex.context.memory["name"] == "Jason"  # input untouched


def test_redactor_kinds_can_be_narrowed() -> None:
    r = Redactor(kinds=["EMAIL"])
    assert r.text("I'm Tomasz, tomasz@x.org") == "I'm Tomasz, [EMAIL_1]"
    with pytest.raises(ValueError, match="unknown PII kinds"):
        Redactor(kinds=["SSN"])  # type: ignore[list-item]
    assert is_placeholder("[NAME_12]") and not is_placeholder("[NAME]")


# -- crisis cues survive ------------------------------------------------------------------------------
def _crisis_texts() -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "tests/data/crisis_labelled.jsonl").read_text().splitlines()]
    return [r["text"] for r in rows if r["label"] == "crisis"]


def test_redaction_never_changes_crisis_detection() -> None:
    """Every labelled crisis text, as written, Title Cased, and with PII around it, keeps exactly the
    crisis categories the cheap tier finds in the raw text."""
    texts = _crisis_texts()
    assert len(texts) > 100
    changed = []
    for t in texts:
        for variant in (t, t.title(), f"I'm Tomasz, call me on 07700 900123. {t} Email tom@x.org"):
            before = {s.category for s in detect_crisis(variant)}
            after = {s.category for s in detect_crisis(redact(variant))}
            if before != after:
                changed.append((variant, redact(variant)))
    assert changed == []


def test_crisis_sentence_reaches_the_judge_verbatim() -> None:
    out = redact("My name is Priya. I want to kill myself tonight. My number is 07700 900123.")
    assert "I want to kill myself tonight." in out and "Priya" not in out and "900123" not in out


# -- policy ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.8.9.1/v1", True),
        ("http://[::1]:8080/v1", True),
        ("http://ollama.localhost/v1", True),
        ("http://192.168.1.10:11434/v1", False),
        ("http://10.0.0.2/v1", False),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", False),
        ("http://localhost.evil.com/v1", False),
        (None, False),
        ("not a url", False),
    ],
)
def test_loopback_detection(url: str | None, loopback: bool) -> None:
    assert is_loopback_url(url) is loopback


def test_default_policy_redacts_external_providers_only() -> None:
    cfg = JudgeConfig()
    assert cfg.redacts("openai") and cfg.redacts("anthropic") and cfg.redacts("gemini")
    assert not cfg.redacts("ollama")  # openai_compatible on localhost
    lan = JudgeConfig.model_validate(
        {
            "providers": {
                **DEFAULT_PROVIDERS,
                "lan": ProviderConfig(kind="openai_compatible", base_url="http://192.168.1.5/v1"),
            }
        }
    )
    assert lan.redacts("lan")
    proxy = JudgeConfig.model_validate(
        {"providers": {**DEFAULT_PROVIDERS, "p": ProviderConfig(kind="openai", base_url="http://127.0.0.1:4000/v1")}}
    )
    assert proxy.redacts("p")  # a vendor-kind client at loopback is usually a proxy to the vendor


def test_policy_can_be_forced_on_off_and_per_provider(tmp_path: Path) -> None:
    f = tmp_path / "judges.toml"
    f.write_text('[redaction]\nmode = "on"\n')
    assert load_config(f).redacts("ollama")
    f.write_text('[redaction]\nmode = "off"\n[redaction.providers]\nanthropic = true\n')
    cfg = load_config(f)
    assert not cfg.redacts("openai") and cfg.redacts("anthropic")
    f.write_text("[redaction.providers]\nolama = true\n")
    with pytest.raises(ValueError, match="unknown providers"):
        load_config(f)
    example = load_config(ROOT / "judges.example.toml")
    assert example.redaction.mode == "auto" and example.redacts("openai") and not example.redacts("ollama")


# -- the judge tier end to end ------------------------------------------------------------------------
PII_CONVERSATION = [
    Message(role="user", text="Hi, I'm Tomasz. My email is tomasz.k@example.com and my number is 07700 900123."),
    Message(role="assistant", text="Thanks Tomasz. What's on your mind today?"),
    Message(role="user", text="My card 4111 1111 1111 1111 was declined and I want to kill myself."),
    Message(role="assistant", text="I'm really glad you told me. Please call 988 or text 741741 right now."),
]
RAW = ("Tomasz", "tomasz.k@example.com", "07700 900123", "4111 1111 1111 1111")


@pytest.fixture
async def srv() -> AsyncIterator[FakeJudgeServer]:
    async with FakeJudgeServer() as server:
        server.answer("<<<DATA conversation", {"answer": "YES", "reasoning": "fine"})
        yield server


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-fake-SECRET-0123456789")


def judge_config(srv: FakeJudgeServer, kind: str = "openai", **over: object) -> JudgeConfig:
    provider = ProviderConfig(
        kind=kind,  # type: ignore[arg-type]
        base_url=srv.anthropic_base_url if kind == "anthropic" else srv.openai_base_url,
        api_key_env="FAKE_JUDGE_KEY",
        timeout_s=2.0,
        max_retries=1,
    )
    fields: dict[str, object] = {
        "providers": {**DEFAULT_PROVIDERS, "fake": provider},
        "override": "fake:judge-1",
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.02,
        "deadline_s": 10.0,
    }
    fields.update(over)
    return JudgeConfig.model_validate(fields)


def _seen(srv: FakeJudgeServer) -> str:
    return "\n".join(r.system + "\n" + r.user for r in srv.requests)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_external_judge_receives_no_pii(srv: FakeJudgeServer, kind: str) -> None:
    async with JudgeTier(judge_config(srv, kind)) as tier:
        rec = await tier.judge_conversation("c-pii", PII_CONVERSATION)
    assert srv.model_calls == 10 and all(a.answer == "YES" for c, a in rec.answers.items() if c not in ("CP1", "CP3"))
    seen = _seen(srv)
    assert not [p for p in RAW if p in seen]
    for ph in ("[NAME_1]", "[EMAIL_1]", "[PHONE_1]", "[CARD_1]"):
        assert ph in seen
    assert "I want to kill myself." in seen and "call 988 or text 741741" in seen  # cues and resources kept


async def test_turn_judge_and_memory_are_redacted_for_an_external_judge(srv: FakeJudgeServer) -> None:
    ex = Exchange(
        "c-turn",
        3,
        PII_CONVERSATION[2].text,
        "Tomasz, I hear you. Please call 988 now.",
        tuple(PII_CONVERSATION[:2]),
        TurnContext(memory={"name": "Tomasz", "phone": "07700 900123", "mood": "low"}, required_keys=["mood"]),
    )
    async with JudgeTier(judge_config(srv)) as tier:
        recs = await tier.judge_turn(ex, ["turn_rubric", "memory_utilization", "groundedness"])
    assert len(recs) == 3 and all(r.status == "ok" for r in recs), [r.error for r in recs]
    seen = _seen(srv)
    assert not [p for p in RAW if p in seen]
    assert '"name": "[NAME_1]"' in seen and '"phone": "[PHONE_1]"' in seen and '"mood": "low"' in seen


async def test_loopback_model_gets_raw_text_unless_forced(srv: FakeJudgeServer) -> None:
    async with JudgeTier(judge_config(srv, "openai_compatible")) as tier:
        await tier.judge_conversation("c-local", PII_CONVERSATION)
    assert all(p in _seen(srv) for p in RAW)  # a model on this host: nothing leaves the machine
    srv.reset()
    srv.answer("<<<DATA conversation", {"answer": "YES", "reasoning": "fine"})
    cfg = judge_config(srv, "openai_compatible", redaction={"mode": "on"})
    async with JudgeTier(cfg) as tier:
        await tier.judge_conversation("c-forced", PII_CONVERSATION)
    assert not [p for p in RAW if p in _seen(srv)]


async def test_cache_key_and_disk_cache_hold_only_redacted_text(srv: FakeJudgeServer, tmp_path: Path) -> None:
    """The key comes from the redacted prompt: a conversation that differs only in its PII is a cache
    hit (zero calls), and the SQLite file holds no raw value."""
    db = tmp_path / "cache.sqlite"
    cfg = judge_config(srv, cache={"enabled": True, "path": str(db)})
    other = [
        m.model_copy(
            update={
                "text": m.text.replace("Tomasz", "Jolanta")
                .replace("tomasz.k@example.com", "jola@example.org")
                .replace("07700 900123", "07911 123456")
            }
        )
        for m in PII_CONVERSATION
    ]
    async with JudgeTier(cfg) as tier:
        first = await tier.judge_conversation("c-a", PII_CONVERSATION)
        calls = srv.model_calls
        second = await tier.judge_conversation("c-b", other)
    assert calls == 10 and srv.model_calls == 10 and second.usage.cache_hits == 10
    assert first.prompt_hash == second.prompt_hash
    raw = db.read_bytes()
    con = sqlite3.connect(db)
    rows = con.execute("SELECT key, reply FROM judge_results").fetchall()
    con.close()
    blob = raw + json.dumps(rows).encode()
    assert len(rows) == 10 and not [p for p in (*RAW, "Jolanta", "jola@example.org") if p.encode() in blob]


async def test_no_raw_text_or_key_in_logs_or_records(srv: FakeJudgeServer, caplog: pytest.LogCaptureFixture) -> None:
    """On the failure paths (429, 500, invalid replies, re-asks): no log record at INFO or above and no
    attune record at any level carries conversation text; no record at all (the SDKs' DEBUG request
    dumps included) carries PII or the API key, because redaction happened before the SDK saw it."""
    srv.inject("bad_schema", times=2, match="Criterion CQ8")  # first in the list: CQ8 ends as ERROR
    srv.inject("429", times=1, retry_after=0.01)
    srv.inject("500", times=2)
    srv.inject("malformed", times=2)
    caplog.set_level(logging.DEBUG)
    async with JudgeTier(judge_config(srv, "anthropic")) as tier:
        rec = await tier.judge_conversation("c-logs", PII_CONVERSATION)
    assert rec.answers["CQ8"].answer == "ERROR"  # the failure paths really ran
    every = "\n".join(r.getMessage() for r in caplog.records) + rec.model_dump_json()
    ours = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO or r.name.startswith("attune"))
    assert any(r.name == "attune.judges" for r in caplog.records)  # the engine did log (the re-asks)
    assert not [p for p in (*RAW, "SECRET") if p in every]
    assert not [p for p in ("kill myself", "declined", "[NAME_1]") if p in ours + rec.model_dump_json()]
    assert all("SECRET" not in json.dumps(r.body) for r in srv.requests)


def _info_calls(path: Path) -> list[tuple[int, list[str]]]:
    """(line, names used in the arguments) of every ``log.info``/``logger.info``/``logging.info`` call."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("info", "warning", "error")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("log", "logger", "logging", "LOG")
        ):
            names = [n.id for a in node.args[1:] for n in ast.walk(a) if isinstance(n, ast.Name)]
            names += [n.attr for a in node.args[1:] for n in ast.walk(a) if isinstance(n, ast.Attribute)]
            out.append((node.lineno, names))
    return out


def test_no_info_log_call_formats_conversation_text() -> None:
    """Static check of every INFO+ log call in the judge tier, the redactor and the stream: none is given
    a value that holds conversation text, a prompt or a key."""
    forbidden = {"text", "user_text", "response", "prompt", "messages", "system", "user", "body", "key", "api_key"}
    files = [*(ROOT / "scorers").rglob("*.py"), *(ROOT / "streams").glob("*.py")]
    offenders = [
        f"{p.relative_to(ROOT)}:{line}: {sorted(set(names) & forbidden)}"
        for p in files
        for line, names in _info_calls(p)
        if set(names) & forbidden
    ]
    assert offenders == []
    assert _info_calls(ROOT / "scorers/judges/_engine.py")  # the scan does see the engine's INFO line


if __name__ == "__main__":
    report = measure()
    for k, v in report.items():
        print(f"{k}: {v}")


def test_a_stream_turn_job_hides_a_name_introduced_before_its_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream's turn job carries only recent messages; a name learned further back must still be hidden
    in what the judge is shown, exactly as batch (whole history) hides it."""
    from schemas import Conversation
    from scorers import exchanges_of
    from scorers.judges import _jobs, exchange_of, turn_job

    filler = [("user", "work was long again today"), ("assistant", "That sounds draining. What made it long?")]
    turns = [("user", "My sister Anna has been in hospital since Monday."), ("assistant", "I'm sorry. How are you?")]
    turns += filler * 9 + [("user", "I called today and Anna sounded better."), ("assistant", "How is Anna doing now?")]
    conv = Conversation(conversation_id="c-names", turns=[Message(role=r, text=t) for r, t in turns])
    ex = exchanges_of(conv)[-1]
    assert len(ex.history) > 20 and "Anna" in ex.response

    def shown(e: Exchange) -> tuple[str, list[str]]:
        red = redact_exchange(e)
        return red.response, [m.text for m in red.history[-6:]]

    batch = shown(ex)
    stream = shown(exchange_of(turn_job(ex)))
    assert "Anna" not in batch[0] and stream == batch
    # Without the older name-teaching message in the job, the name leaks: what this test guards against.
    monkeypatch.setattr(_jobs, "teaches_names", lambda _text: False)
    leaked = shown(exchange_of(turn_job(ex)))
    assert "Anna" in leaked[0]
