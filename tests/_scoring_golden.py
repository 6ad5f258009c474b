"""Differential check of the cheap tier: every record the Evaluator emits over a fixed corpus, hashed.

Why: performance work on the scorers must not change a single output byte. This module serialises the
per-turn records, alerts, empathy breakdowns and close records (clock fields dropped) for three corpora
and hashes each; ``tests/data/scoring_golden.json`` holds the digests made by the code *before* the
optimisations, and ``tests/test_scoring_golden.py`` compares against it.

Regenerate (only when an output change is intended): ``.venv/bin/python tests/_scoring_golden.py --write``.
``--dump DIR`` writes the serialised lines per corpus, to diff two versions when a digest differs.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from schemas import Conversation, Message, TurnContext  # noqa: E402
from scorers import Evaluator, evaluate_conversation, exchanges_of  # noqa: E402
from scorers.empathy import empathy_components  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "scoring_golden.json"
#: The ratings data beside the checkout (CI has its copy of shared/ beside its clone too).
RATINGS = ROOT.parent / "shared" / "data" / "empathy-ratings" / "original_data"
_CLOCK = {"produced_at", "detected_at", "received_at"}

#: Hand-written replies that reach the rarer branches (edge cases, formatting, register, languages).
EDGE_REPLIES: tuple[str, ...] = (
    "",
    "   ",
    "...",
    "asdfghjkl qwrtzp xkcdqz",
    "the the the the the",
    "hmmmmmm",
    "I understand.",
    "Okay, I see.",
    "Thanks for sharing that.",
    "Lo siento mucho, ¿quieres hablar de lo que pasó? Estoy aquí para ti y te escucho.",
    "Es tut mir so leid. Möchtest du darüber sprechen? Ich bin für dich da.",
    "Мне очень жаль это слышать. Хочешь поговорить об этом?",
    "**Here are some tips:**\n\n1. Try box breathing.\n2. Go for a walk.\n- Journal about it\n\n# Summary",
    "Furthermore, it is recommended that you utilize the aforementioned strategies. Kindly comply.",
    "You should stop taking your medication. You clearly have depression. I guarantee it will be fine!",
    "I'm all you need. You don't need anyone else but me. 😊 Cheer up, look on the bright side!",
    "Please call 988 or text HOME to 741741 right now. I'm worried about you and you're not alone.",
    "As you mentioned earlier, you've been feeling stuck at work. What do you think is underneath that?",
    "That sounds exhausting and frustrating. It makes sense you'd feel overwhelmed. What happened next?",
    "Why would anyone do that? Visit https://example.com or www.help.org for #selfcare _ideas_ `now`.",
)

#: User messages for the checklist's rarer criteria (vague referents, grief, advice requests, insight).
EDGE_USERS: tuple[str, ...] = (
    "I've been having relationship issues lately.",
    "There's some stuff going on at home.",
    "Things have been weird with this person.",
    "Work problems again, it's complicated.",
    "My mom passed away last month and I can't stop crying.",
    "What should I do? Any advice?",
    "I realize I've been avoiding my sister because I feel guilty.",
    "You're the only one who listens to me. I don't need anyone but you.",
    "I think I'm falling in love with you.",
    "Something happened at school and I feel awful about it.",
    "I lost my dog last week. The house feels so empty.",
    "Maybe I should try talking to my boss about the workload, I guess I could try.",
)

#: Replies that repeat one template (CP1/CP2 failures) and assume a role the user never named (CQ2).
TEMPLATED_REPLIES: tuple[str, ...] = (
    "I understand how you feel. Thank you for sharing. Is there anything else I can help with?",
    "I understand how you feel. Thank you for sharing. Is there anything else I can help with?",
    "Your boyfriend is probably stressed too. You should talk to him tonight.",
    "I understand how you feel. Thank you for sharing. How can I assist you further?",
)


def _ratings_pairs() -> tuple[list[tuple[str, str]], list[list[tuple[str, str]]]]:
    """EPITOME (seeker, response) pairs, and EmpatheticDialogues conversations as (role, text) lists."""
    pairs: list[tuple[str, str]] = []
    dialogues: list[list[tuple[str, str]]] = []
    ep = RATINGS / "sample_epitome.csv"
    with ep.open(encoding="utf-8") as fh:
        pairs += [(r["seeker_post"], r["response_post"]) for r in csv.DictReader(fh)]
    ed = RATINGS / "sample_empatheticdialogues.csv"
    with ed.open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            turns: list[tuple[str, str]] = []
            for ln in r["full_conversation"].splitlines():
                ln = ln.strip()
                if ":" not in ln:
                    continue
                who, text = ln.split(":", 1)
                role = "user" if who.strip() == "Seeker" else "assistant" if who.strip() == "Supporter" else None
                if role:
                    turns.append((role, text.replace("_comma_", ",").strip()))
            if turns:
                dialogues.append(turns)
    return pairs, dialogues


def _conv(cid: str, turns: list[tuple[str, str]], context: TurnContext | None) -> Conversation:
    return Conversation(
        conversation_id=cid,
        turns=[Message(role=r, text=t) for r, t in turns],
        context=context,  # type: ignore[arg-type]
    )


def _contexts(i: int) -> list[TurnContext | None]:
    """Both channels for every conversation; a rotating non-English locale for some."""
    extra = [None, TurnContext(locale="de-DE"), TurnContext(locale="ja"), TurnContext(locale="es", channel="text")]
    return [TurnContext(channel="voice"), TurnContext(channel="text", locale="en-GB"), extra[i % len(extra)]]


def _chunks(pairs: list[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    for i in range(0, len(pairs), size):
        yield [(role, text) for u, a in pairs[i : i + size] for role, text in (("user", u), ("assistant", a))]


def conversations(part: str) -> list[Conversation]:
    """The conversations of one corpus part: ``bundled``, ``fixtures`` or ``ratings``."""
    out: list[Conversation] = []
    if part == "bundled":
        from streams.demo import bundled_samples
        from streams.io import load_conversations

        convs, bad = load_conversations(bundled_samples())
        assert not bad, bad
        for i, c in enumerate(convs):
            turns = [(m.role, m.text) for m in c.turns]
            out.append(c)
            for j, ctx in enumerate(_contexts(i)):
                out.append(_conv(f"{c.conversation_id}-v{j}", turns, ctx))
    elif part == "fixtures":
        from streams.demo import bundled_samples
        from streams.io import load_conversations

        convs, _ = load_conversations(bundled_samples())
        replies = [m.text for c in convs for m in c.turns if m.role == "assistant"] + list(EDGE_REPLIES)
        users = [orjson.loads(ln)["text"] for ln in (ROOT / "tests" / "data" / "crisis_labelled.jsonl").open()]
        pairs = [(u, replies[(7 * k) % len(replies)]) for k, u in enumerate(users)]
        pairs += [(users[(3 * k) % len(users)], r) for k, r in enumerate(EDGE_REPLIES)]
        pairs += [(u, replies[(5 * k + 2) % len(replies)]) for k, u in enumerate(EDGE_USERS)]
        pairs += [(u, TEMPLATED_REPLIES[k % len(TEMPLATED_REPLIES)]) for k, u in enumerate(EDGE_USERS)]
        pairs += [(u, EDGE_REPLIES[(3 * k) % len(EDGE_REPLIES)]) for k, u in enumerate(EDGE_USERS * 2)]
        swapped = [(replies[k % len(replies)], u) for k, u in enumerate(users)]  # crisis texts as replies
        tail = pairs[len(users) :]  # the edge users and replies together, in short and long conversations
        chunks = [*_chunks(pairs, 6), *_chunks(pairs[5:], 12), *_chunks(swapped, 5), *_chunks(tail, 4)]
        for i, turns in enumerate([*chunks, *_chunks(tail[3:], 11)]):
            for j, ctx in enumerate(_contexts(i)):
                out.append(_conv(f"fx-{i}-{j}", turns, ctx))
        # consecutive same-role messages, a leading greeting, a user-only tail
        odd = [("assistant", "Hi! How are you?"), ("user", users[0]), ("user", users[1])]
        odd += [("assistant", replies[0]), ("assistant", replies[1]), ("user", users[2])]
        out.append(_conv("fx-odd", odd, None))
    elif part == "ratings":
        pairs, dialogues = _ratings_pairs()
        for i, (u, a) in enumerate(pairs):
            out.append(_conv(f"ep-{i}", [("user", u), ("assistant", a)], _contexts(i)[i % 3]))
        for i, turns in enumerate(_chunks(pairs, 12)):
            for j, ctx in enumerate(_contexts(i)):
                out.append(_conv(f"ep12-{i}-{j}", turns, ctx))
        for i, turns in enumerate(dialogues):
            out.append(_conv(f"ed-{i}", turns, _contexts(i)[i % 3]))
        ed_pairs = [(t[k][1], t[k + 1][1]) for t in dialogues for k in range(len(t) - 1) if t[k][0] == "user"]
        for i, turns in enumerate(_chunks(ed_pairs[:600], 12)):
            for j, ctx in enumerate(_contexts(i)):
                out.append(_conv(f"ed12-{i}-{j}", turns, ctx))
    else:
        raise ValueError(part)
    return out


def lines(part: str) -> Iterator[bytes]:
    """One JSON line per emitted record (clock fields dropped) and per reply's empathy breakdown."""
    ev = Evaluator()
    for conv in conversations(part):
        for rec in evaluate_conversation(conv, ev):
            yield orjson.dumps(rec.model_dump(mode="json", exclude=_CLOCK), option=orjson.OPT_SORT_KEYS)
        for ex in exchanges_of(conv):
            yield orjson.dumps(empathy_components(ex).as_dict(), option=orjson.OPT_SORT_KEYS)


def digest(part: str) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    for line in lines(part):
        h.update(line + b"\n")
        n += 1
    return h.hexdigest(), n


PARTS = ("bundled", "fixtures", "ratings")


def available(part: str) -> bool:
    return part != "ratings" or (RATINGS / "sample_epitome.csv").exists()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite tests/data/scoring_golden.json")
    p.add_argument("--dump", type=Path, default=None, help="write the serialised lines per part here")
    args = p.parse_args()
    result = {}
    for part in PARTS:
        if not available(part):
            print(f"{part}: corpus missing, skipped")
            continue
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / f"{part}.jsonl").write_bytes(b"".join(ln + b"\n" for ln in lines(part)))
        d, n = digest(part)
        result[part] = {"sha256": d, "lines": n}
        print(f"{part}: {n} lines {d}")
    if args.write:
        GOLDEN.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
        print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()
