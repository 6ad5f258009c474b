"""What each crisis guard costs: crises it drops against negatives it saves, on the development texts only.

    .venv/bin/python bench/guard_audit.py                 # every guard
    .venv/bin/python bench/guard_audit.py _denied _ACTIVITY --examples 10

Each guard (a function of ``scorers.safety._concepts`` that vetoes a finding, or a word class whose match vetoes one)
is switched off in turn, and the rule findings of every development text are recomputed: the training writers
(``tests/data/crisis_train``), the sealed set's dev split, the everyday set's dev half and the danger training
writers' negatives. A guard that drops many crises for few negatives saved reads too much (rules 2.14 narrowed five
such guards, docs/safety-detection.md). Never run on a test split: the audit is a development tool, like the errors of
the dev split. Rules only (findings, not the model): an anchor the model confirms is not counted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from crisis_eval import crisis_split, everyday_split, load_jsonl  # noqa: E402
from train_crisis_model import training_rows  # noqa: E402

import scorers.safety._concepts as concepts  # noqa: E402
from scorers.safety._crisis import both_forms, merge_findings, rule_findings  # noqa: E402

DATA = ROOT / "tests" / "data"
#: Guard functions and what "off" means for each (a veto that never vetoes, a check that always passes).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "_screened": lambda *a, **k: False,
    "_denied": lambda *a, **k: False,
    "_story": lambda *a, **k: False,
    "_negated": lambda *a, **k: False,
    "_mine": lambda *a, **k: True,
    "_not_hyperbole": lambda *a, **k: True,
    "_not_idiom": lambda *a, **k: True,
}
#: Word classes that veto a finding when they match (switched off by a class that never matches).
CLASSES = ("_ACTIVITY", "_GRIEF", "_IDIOM", "_SH_GUARD", "_BENIGN_FAREWELL", "_ACCIDENT", "_MED_SLIP")


def development_texts() -> list[tuple[str, bool, str]]:
    """(text, is a crisis, source) of every development text (of the danger writers, their negatives only)."""
    texts, y, writers, _ = training_rows()
    out = [(t, bool(label), str(w)) for t, label, w in zip(texts, y, writers, strict=True)]
    out += [
        (d["text"], d["label"] != "none", "dev")
        for d in load_jsonl(DATA / "crisis_eval" / "items.jsonl")
        if crisis_split(d["text"]) == "dev"
    ]
    out += [
        (d["text"], d["label"] != "none", "everyday_dev")
        for d in load_jsonl(DATA / "everyday_eval" / "items.jsonl")
        if everyday_split(d["text"]) == "everyday_dev"
    ]
    for path in sorted((DATA / "danger_train").glob("*.jsonl")):
        out += [(d["text"], False, "danger_train") for d in load_jsonl(path) if d["label"] == "none"]
    return out


def _clear_caches() -> None:
    for name in dir(concepts):
        cache_clear = getattr(getattr(concepts, name), "cache_clear", None)
        if cache_clear is not None:
            cache_clear()


def alerting(items: list[tuple[str, bool, str]]) -> list[bool]:
    _clear_caches()
    return [bool(merge_findings(*(rule_findings(form) for form in both_forms(t)))) for t, _, _ in items]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("guards", nargs="*", help=f"default: all of {', '.join([*FUNCTIONS, *CLASSES])}")
    ap.add_argument("--examples", type=int, default=0, help="print up to N dropped crises and saved negatives")
    args = ap.parse_args(argv)
    unknown = [g for g in args.guards if g not in FUNCTIONS and g not in CLASSES]
    if unknown:
        ap.error(f"unknown guard(s): {', '.join(unknown)}")
    items = development_texts()
    base = alerting(items)
    never = concepts._NEVER
    concepts._NAME.setdefault(id(never), "_NEVER")  # a switched-off class is one the gate never wakes
    print(f"{len(items)} development texts ({sum(c for _, c, _ in items)} crises); rules alone")
    for guard in args.guards or [*FUNCTIONS, *CLASSES]:
        original = getattr(concepts, guard, None)
        if original is None:  # an older checkout (the script runs against any version's concepts)
            print(f"{guard:18s} not in this version")
            continue
        setattr(concepts, guard, FUNCTIONS.get(guard, never))
        try:
            off = alerting(items)
        finally:
            setattr(concepts, guard, original)
        gained = [it for it, b, a in zip(items, base, off, strict=True) if a and not b]
        crises = [it for it in gained if it[1]]
        negatives = [it for it in gained if not it[1]]
        print(f"{guard:18s} crises it drops {len(crises):4d}   negatives it saves {len(negatives):4d}")
        for text, _, source in crises[: args.examples]:
            print(f"    crisis   {source:14s} {text[:140]}")
        for text, _, source in negatives[: args.examples]:
            print(f"    negative {source:14s} {text[:140]}")
    _clear_caches()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
