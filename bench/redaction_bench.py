"""Redaction throughput: what the PII pass costs before a judged turn leaves the process.

Usage: .venv/bin/python bench/redaction_bench.py [--seconds 2]

Prints calls/s of :func:`scorers.redact.redact` over typical 30-60-word turns, and of
:func:`scorers.redact.redact_exchange` over exchanges carrying 20, 200 and 1,000 earlier messages (one judged
turn; names are learned from the whole history, only the last 32 messages are redacted and carried). Each
figure is the median of 5 slices of the run (``crisis_eval.calls_per_second``).
Recall and false positives are measured by ``python tests/test_redaction.py`` (the labelled set lives there).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crisis_eval import calls_per_second  # noqa: E402  (this folder is on sys.path when the script runs)

from schemas import Message, TurnContext  # noqa: E402
from scorers import Exchange  # noqa: E402
from scorers.redact import redact, redact_exchange  # noqa: E402

TYPICAL_TURNS = [
    "I've been feeling really low since my sister Anna moved to 42 Baker Street in London. She used to call me "
    "every evening and now it's just silence. I keep checking my phone hoping she'll text.",
    "Honestly work is crushing me. My boss keeps piling on projects and I haven't slept more than five hours in "
    "weeks. I'm not sure how much longer I can keep going like this without something breaking.",
    "That sounds exhausting, and it makes sense you'd feel worn down. When you picture the next week, what part "
    "of it feels heaviest? We can look at one small thing together.",
    "You can email me at jane.doe@example.com or call 07700 900123 if the app stops working, I really don't "
    "want to lose these notes because they help me remember what we talked about.",
    "It sounds like you're carrying a lot right now. If you ever feel unsafe, you can call 988 any time, day or "
    "night. Would it help to talk about what tonight looks like for you?",
]


def exchange(earlier: int) -> Exchange:
    history = tuple(
        Message(role="user" if i % 2 == 0 else "assistant", text=TYPICAL_TURNS[i % len(TYPICAL_TURNS)])
        for i in range(earlier)
    )
    return Exchange(
        "c", earlier + 1, TYPICAL_TURNS[0], TYPICAL_TURNS[2], history, TurnContext(memory={"name": "Jason"})
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per figure")
    args = ap.parse_args(argv)
    words = [len(t.split()) for t in TYPICAL_TURNS]
    rate = calls_per_second(redact, TYPICAL_TURNS, args.seconds)
    print(f"redact(), turns of {min(words)}-{max(words)} words: {rate:,.0f} calls/s")
    for earlier in (20, 200, 1000):
        r = calls_per_second(redact_exchange, [exchange(earlier)], args.seconds)
        print(f"redact_exchange(), {earlier} earlier messages: {r:,.0f}/s ({1000 / r:.2f} ms each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
