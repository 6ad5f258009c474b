"""Evaluate the crisis detector on danger from another person: the sealed danger set, dev and test.

    .venv/bin/python bench/danger_eval.py                      # dev split only (what tuning may look at)
    .venv/bin/python bench/danger_eval.py --splits dev,test,test2  # test splits: once per change
    .venv/bin/python bench/danger_eval.py --errors             # dev misses and false alarms
    .venv/bin/python bench/danger_eval.py --splits dev,test --previous /path/to/old/checkout

The set (``tests/data/danger_eval/items.jsonl``, tests/data/danger_eval/README.md) holds messages in which
the USER is in danger from another person now (threats to kill or hurt, violence, sexual violence,
stalking and control, a child hurt at home, danger happening right now) and hard negatives (threat
idioms, fiction and games, violence that is over, professionals, ordinary conflict, sport), written by
agents that never saw the detector; dev/test by a fixed hash (``danger_split``). ``test2.jsonl``: a second sealed
set by four other writers, every item test.

Figures, each with n and a 95% bootstrap interval (``crisis_eval.rate``):

* ``alerted``: any crisis alert on the turn (what reaches the safety team);
* ``as danger``: an alert whose findings include ``danger_from_others``, or that the danger model raised (what
  routes it as danger from another person rather than as suicide risk); ``by a rule``: the findings alone
  (severity high or critical; a danger-model alert is ``possible``);
* ``critical`` on threats to kill and danger happening now (the detector's tier for both);
* on the negatives, the same two as false-alarm rates.

The crisis second look is not run here: it is trained on suicide and self-harm only and adds ``possible``
alerts, never a category. ``--previous ROOT`` adds another checkout's detector over the same items.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crisis_eval import DETECTOR_ROOT_ENV, ROOT, _fmt, as_transcript, load_jsonl, rate

from scorers.safety import assess_crisis, detector_version

DANGER_DIR = ROOT / "tests" / "data" / "danger_eval"
DANGER = "danger_from_others"
#: Categories whose items the detector should rate ``critical`` (threats to kill, danger right now).
CRITICAL_CATEGORIES = ("threat_to_kill", "immediate")
#: Sealed sets written after ``items.jsonl`` (tests/data/danger_eval/README.md), every item test.
LATER_SEALED = tuple(sorted(p.stem for p in DANGER_DIR.glob("test*.jsonl")))


def danger_split(text: str) -> str:
    """The danger set's fixed split (tests/data/danger_eval/README.md)."""
    return "test" if int(hashlib.sha256(("danger-eval-v1:" + text).encode()).hexdigest(), 16) % 2 else "dev"


def verdict(text: str) -> tuple[bool, bool, bool, bool]:
    """(any alert, alerted as danger from others, critical, a danger finding of a rule) for one user turn."""
    a = assess_crisis(text)
    ruled = any(f.cssrs == DANGER for f in a.findings)
    modelled = bool(getattr(a, "danger_model_fired", False))  # a checkout from before the danger model: False
    return a.alert, ruled or modelled, a.severity == "critical", ruled


def _groups(rows: Sequence[dict[str, Any]], flags: Sequence[bool], key: str) -> dict[str, Any]:
    by: dict[str, list[bool]] = defaultdict(list)
    for d, f in zip(rows, flags, strict=True):
        by[d[key]].append(f)
    return {k: {"n": len(v), "k": sum(v), "rate": round(sum(v) / len(v), 3)} for k, v in sorted(by.items())}


def evaluate(splits: Sequence[str]) -> dict[str, Any]:
    items = load_jsonl(DANGER_DIR / "items.jsonl")
    out: dict[str, Any] = {}
    for split in splits:
        if split in LATER_SEALED:  # every item of a later sealed set is test
            rows = load_jsonl(DANGER_DIR / f"{split}.jsonl")
        else:
            rows = [d for d in items if danger_split(d["text"]) == split]
        pos = [d for d in rows if d["label"] == "danger"]
        neg = [d for d in rows if d["label"] == "none"]
        vp = [verdict(d["text"]) for d in pos]
        vn = [verdict(d["text"]) for d in neg]
        crit = [v[2] for d, v in zip(pos, vp, strict=True) if d["category"] in CRITICAL_CATEGORIES]
        tp = [verdict(as_transcript(d["text"])) for d in pos]
        tn = [verdict(as_transcript(d["text"])) for d in neg]
        res: dict[str, Any] = {
            "n_danger": len(pos),
            "n_none": len(neg),
            "recall_alerted": rate([v[0] for v in vp]),
            "recall_as_danger": rate([v[1] for v in vp]),
            "recall_by_rule": rate([v[3] for v in vp]),
            "critical_share": rate(crit),
            "fpr_alerted": rate([v[0] for v in vn]),
            "fpr_as_danger": rate([v[1] for v in vn]),
            "fpr_by_rule": rate([v[3] for v in vn]),
            "as_transcript": {
                "recall_alerted": rate([v[0] for v in tp]),
                "fpr_alerted": rate([v[0] for v in tn]),
                "flips": sum(a[0] != b[0] for a, b in zip(vp + vn, tp + tn, strict=True)),
            },
            "by_category": _groups(pos, [v[0] for v in vp], "category"),
            "by_category_as_danger": _groups(pos, [v[1] for v in vp], "category"),
            "by_style": _groups(pos, [v[0] for v in vp], "style"),
            "fpr_by_category": _groups(neg, [v[0] for v in vn], "category"),
            "fpr_by_style": _groups(neg, [v[0] for v in vn], "style"),
        }
        if split == "dev":  # errors are for tuning: only ever listed for dev
            res["errors"] = [
                {"label": d["label"], "category": d["category"], "style": d["style"], "text": d["text"]}
                for d, v in zip(pos + neg, vp + vn, strict=True)
                if v[0] != (d["label"] == "danger")
            ]
        out[split] = res
    return out


def previous(root: Path, splits: str) -> dict[str, Any]:
    """The figures of the detector in checkout ``root`` (this script, its data, that code)."""
    if not (root / "scorers" / "safety").is_dir():
        raise SystemExit(f"--previous {root}: not a checkout of attune (no scorers/safety)")
    out = subprocess.run(
        [sys.executable, __file__, "--splits", splits, "--json"],
        env={**os.environ, DETECTOR_ROOT_ENV: str(root.resolve())},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def _print(doc: dict[str, Any], errors: bool) -> None:
    print(f"detector {doc['detector_version']}")
    prev = doc.get("previous")
    for split, res in doc["splits"].items():
        print(f"\n[danger set: {split}] danger={res['n_danger']} none={res['n_none']}")
        rows = [("current", res)]
        if prev is not None and split in prev["splits"]:
            rows.append((f"previous ({prev['detector_version']})", prev["splits"][split]))
        for name, r in rows:
            print(f"  {name}")
            print(f"    alerted {_fmt(r['recall_alerted'])}  as danger {_fmt(r['recall_as_danger'])}")
            if "recall_by_rule" in r:
                print(f"    as danger by a rule {_fmt(r['recall_by_rule'])}  false alarms {_fmt(r['fpr_by_rule'])}")
            print(f"    critical on {'/'.join(CRITICAL_CATEGORIES)} {_fmt(r['critical_share'])}")
            print(f"    FPR alerted {_fmt(r['fpr_alerted'])}  FPR as danger {_fmt(r['fpr_as_danger'])}")
            t = r["as_transcript"]
            print(
                f"    as a transcript: alerted {_fmt(t['recall_alerted'])}  FPR {_fmt(t['fpr_alerted'])}"
                f"  alerts that change: {t['flips']}"
            )
        ad = res["by_category_as_danger"]
        print(
            "  recall by category (alerted / as danger): "
            + ", ".join(f"{k} {v['k']}/{v['n']} / {ad[k]['k']}" for k, v in res["by_category"].items())
        )
        for title, key in (
            ("recall by style", "by_style"),
            ("FPR by negative category", "fpr_by_category"),
            ("FPR by style", "fpr_by_style"),
        ):
            print(f"  {title}: " + ", ".join(f"{k} {v['k']}/{v['n']}" for k, v in res[key].items()))
        if errors and "errors" in res:
            for e in res["errors"]:
                what = "MISS" if e["label"] == "danger" else "FALSE ALARM"
                print(f"    {what} {e['category']}/{e['style']}: {e['text']!r}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", default="dev", help=f"dev; test, {', '.join(LATER_SEALED)} once per change")
    ap.add_argument("--errors", action="store_true", help="list dev misses and false alarms")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    ap.add_argument("--previous", type=Path, help="a checkout of the previous version: its detector, same items")
    args = ap.parse_args(argv)
    splits = [s for s in args.splits.split(",") if s]
    for s in splits:
        if s not in ("dev", "test", *LATER_SEALED):
            raise SystemExit(f"unknown split {s!r}: dev, test or one of {', '.join(LATER_SEALED)}")
    doc: dict[str, Any] = {"detector_version": detector_version(), "splits": evaluate(splits)}
    if args.previous:
        doc["previous"] = previous(args.previous, args.splits)
    if args.json:
        if not args.errors:
            for res in doc["splits"].values():
                res.pop("errors", None)
        print(json.dumps(doc, indent=2))
    else:
        _print(doc, args.errors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
