"""Evaluate the crisis detector on the labelled set and measure throughput.

    .venv/bin/python bench/crisis_eval.py                 # both splits, per kind, calls/s
    .venv/bin/python bench/crisis_eval.py --splits dev --errors   # what tuning looks at
    .venv/bin/python bench/crisis_eval.py --json          # machine-readable summary

The labelled set (tests/data/crisis_labelled.jsonl) has a ``split`` field: ``holdout`` items were
written before any pattern existed and are never used for tuning; report both splits.
Throughput uses real user turns from /work/shared/data/empathy-ratings (20-60 words) when present,
plus the labelled set itself (the worst case: nearly every text wakes some rules).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cheap_tier_bench import clear_caches  # noqa: E402  (this folder is on sys.path when the script runs)

from scorers.safety import (  # noqa: E402
    detect_crisis,
    detect_harmful_reply,
    detect_user_dependency,
    offers_crisis_resources,
)

_T = TypeVar("_T")

LABELLED = ROOT / "tests" / "data" / "crisis_labelled.jsonl"
RATINGS = Path("/work/shared/data/empathy-ratings/original_data")


def load_labelled(path: Path = LABELLED) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def evaluate(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Recall on crisis items, false-positive rate on none items, per split and per (split, kind)."""
    out: dict[str, Any] = {}
    for split in sorted({it["split"] for it in items}):
        rows = [it for it in items if it["split"] == split]
        preds = [detect_crisis(it["text"]) for it in rows]
        pos = [(it, p) for it, p in zip(rows, preds, strict=True) if it["label"] == "crisis"]
        neg = [(it, p) for it, p in zip(rows, preds, strict=True) if it["label"] == "none"]
        tp = sum(bool(p) for _, p in pos)
        fp = sum(bool(p) for _, p in neg)
        cat_ok = sum(any(s.category == it["category"] for s in p) for it, p in pos if p)
        kinds: dict[str, dict[str, Any]] = {}
        by_kind: dict[tuple[str, str], list[bool]] = defaultdict(list)
        for it, p in zip(rows, preds, strict=True):
            by_kind[(it["label"], it["kind"])].append(bool(p))
        for (label, kind), flags in sorted(by_kind.items()):
            key = f"{label}/{kind}"
            kinds[key] = {"n": len(flags), "flagged": sum(flags), "rate": round(sum(flags) / len(flags), 3)}
        out[split] = {
            "n": len(rows),
            "n_crisis": len(pos),
            "n_none": len(neg),
            "recall": round(tp / len(pos), 3) if pos else None,
            "fpr": round(fp / len(neg), 3) if neg else None,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "category_match_on_tp": round(cat_ok / tp, 3) if tp else None,
            "by_kind": kinds,
            "errors": [
                {"text": it["text"], "label": it["label"], "kind": it["kind"], "pred": [s.category for s in p]}
                for it, p in zip(rows, preds, strict=True)
                if bool(p) != (it["label"] == "crisis")
            ],
        }
    return out


def real_turns(min_words: int = 20, max_words: int = 60) -> list[str]:
    """User-side turns of the MIT empathy-ratings sample (seeker posts and dialogue prompts)."""
    texts: list[str] = []
    ep = RATINGS / "sample_epitome.csv"
    ed = RATINGS / "sample_empatheticdialogues.csv"
    if ep.exists():
        with ep.open(encoding="utf-8") as f:
            texts += [r["seeker_post"] for r in csv.DictReader(f)]
    if ed.exists():
        with ed.open(encoding="utf-8") as f:
            for r in csv.DictReader(f):
                texts += [r["prompt"].replace("_comma_", ","), r["utterance"].replace("_comma_", ",")]
    texts = list(dict.fromkeys(t for t in texts if t))
    return [t for t in texts if min_words <= len(t.split()) <= max_words]


def calls_per_second(fn: Callable[[_T], object], texts: Sequence[_T], min_seconds: float = 0.6) -> float:
    """Median of 5 timed passes over ``texts`` (each pass at least ``min_seconds``/5): one slow moment of
    a shared machine does not set the figure. The scorers' caches are emptied before every pass over
    ``texts``, so no call profits from an earlier call on the same text: the figure is what new live text
    costs. ``bench/redaction_bench.py`` uses it too."""
    rates = []
    for _ in range(5):
        n = 0
        t0 = time.perf_counter()
        while (elapsed := time.perf_counter() - t0) < min_seconds / 5:
            clear_caches()
            for t in texts:
                fn(t)
            n += len(texts)
        rates.append(n / elapsed)
    return statistics.median(rates)


def throughput(labelled: Iterable[str]) -> dict[str, Any]:
    real = real_turns()
    lab = list(labelled)
    out: dict[str, Any] = {}
    if real:
        out["real_turns_20_60_words"] = {
            "n_texts": len(real),
            "mean_words": round(statistics.mean(len(t.split()) for t in real), 1),
            "detect_crisis_calls_per_s": round(calls_per_second(detect_crisis, real)),
            "detect_user_dependency_calls_per_s": round(calls_per_second(detect_user_dependency, real)),
            "detect_harmful_reply_calls_per_s": round(calls_per_second(detect_harmful_reply, real)),
            "offers_crisis_resources_calls_per_s": round(calls_per_second(offers_crisis_resources, real)),
        }
    out["labelled_set"] = {
        "n_texts": len(lab),
        "mean_words": round(statistics.mean(len(t.split()) for t in lab), 1),
        "detect_crisis_calls_per_s": round(calls_per_second(detect_crisis, lab)),
    }
    return out


def _print_report(ev: dict[str, Any], tp: dict[str, Any] | None, errors: bool) -> None:
    for split, r in ev.items():
        print(
            f"[{split}] n={r['n']} crisis={r['n_crisis']} none={r['n_none']}  recall={r['recall']}  "
            f"FPR={r['fpr']}  precision={r['precision']}  category-match(TP)={r['category_match_on_tp']}"
        )
        for key, k in r["by_kind"].items():
            what = "recall" if key.startswith("crisis/") else "FPR"
            print(f"    {key:<22} n={k['n']:<3} flagged={k['flagged']:<3} {what}={k['rate']}")
        if errors:
            for e in r["errors"]:
                print(f"    MISS {e['label']}/{e['kind']}: {e['text']!r} -> {e['pred']}")
    if tp:
        for name, t in tp.items():
            print(f"[throughput: {name}] " + "  ".join(f"{k}={v}" for k, v in t.items()))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", default="dev,holdout", help="comma-separated splits to report")
    ap.add_argument("--errors", action="store_true", help="list misclassified items of the reported splits")
    ap.add_argument("--no-speed", action="store_true", help="skip the throughput measurement")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    args = ap.parse_args(argv)
    wanted = set(args.splits.split(","))
    items = [it for it in load_labelled() if it["split"] in wanted]
    ev = evaluate(items)
    tp = None if args.no_speed else throughput(it["text"] for it in items)
    if args.json:
        doc = {"splits": ev, "throughput": tp}
        if not args.errors:
            for r in doc["splits"].values():
                r.pop("errors")
        print(json.dumps(doc, indent=2))
    else:
        _print_report(ev, tp, args.errors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
