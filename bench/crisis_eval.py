"""Evaluate the crisis detector: the sealed set, the multi-turn set, public data, the v1 set, and speed.

    .venv/bin/python bench/crisis_eval.py                       # dev split only (what tuning may look at)
    .venv/bin/python bench/crisis_eval.py --splits dev,test,test2,...,test10  # sealed: once per change
    .venv/bin/python bench/crisis_eval.py --splits dev --errors # dev misses and false alarms
    .venv/bin/python bench/crisis_eval.py --sdcnl PATH/testing-set.csv --reddit500 PATH/500_Reddit_users.csv
    .venv/bin/python bench/crisis_eval.py --json                # one JSON document
    .venv/bin/python bench/crisis_eval.py --splits test,test2,test3 --previous /path/to/old/checkout
        # the same sets, with the detector of another checkout (e.g. `git worktree add /tmp/old REV`) beside it

Sets:
* ``tests/data/crisis_eval/items.jsonl``: 460 crisis disclosures by C-SSRS category and phrasing style and 440
  hard negatives, written by agents that never saw the detector; dev/test by a fixed hash (``crisis_split``);
* ``tests/data/crisis_eval/test2.jsonl``, ``test3.jsonl``, ...: further sealed test sets (about 260 crises and
  260 hard negatives each) by four other writers each, found by ``LATER_SEALED``;
* ``tests/data/crisis_eval/conversations.jsonl``: user-turn sequences where the risk shows only across turns;
* ``tests/data/everyday_eval/items.jsonl`` (splits ``everyday_dev``, ``everyday_test``): everyday turns (replies,
  small talk, coaching, ordinary moods), whose alert rate is what a live stream mostly raises, and short crisis
  disclosures that look like replies; by length as well;
* public sets, read from the paths given (never committed: no licence file in either repository):
  SDCNL (ayaanzhaque/SDCNL ``data/testing-set.csv``, r/SuicideWatch = 1 vs r/depression = 0; noisy labels)
  and the C-SSRS-labelled "500 Reddit users" (Gaur et al. 2019; ``500_Reddit_users_posts_labels.csv`` in
  yw041202/DSAA2012_Project): a user counts as alerted when any of their posts alerts;
* ``--legacy``: the v1 team's own set (tests/data/crisis_labelled.jsonl; now training data for the model).

Throughput sets: everyday user turns (the training negatives of writers L and M: what most live turns look
like), the risk-heavy real seeker posts of the ratings data (20-60 words), and the sealed set (every item
wakes the concept matcher).

Every figure comes with n and a 95% bootstrap interval (2,000 resamples, seed 12) and is shown for the
current detector (rules + model), its rules alone, its model alone, and the v1 phrase rules (the
first version), all in this one run; with the ``embeddings`` extra also ``with_stage`` (what a deployment
running the model stage alerts on: the inline tier OR the crisis second look) and ``second_look`` alone.
``--previous ROOT`` adds the previous version's detector, imported from another checkout in a second process
over the same sets and bootstrap. Every sealed item is also scored as a transcript without punctuation
(``as_transcript``) and with single-letter typos (``with_typos``), and the 306 real user turns of the ratings data
give an everyday alert rate. Throughput: median of 5 timed passes, caches emptied each pass.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
#: Where the detector is imported from: this checkout, or the one ``--previous`` names (data always from here).
DETECTOR_ROOT_ENV = "CRISIS_EVAL_DETECTOR_ROOT"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, os.environ.get(DETECTOR_ROOT_ENV, str(ROOT)))

from scorers.safety import (  # noqa: E402
    assess_crisis,
    detect_crisis,
    detect_harmful_reply,
    detect_user_dependency,
    detector_version,
    offers_crisis_resources,
    phrase_signals,
)

_T = TypeVar("_T")

EVAL_DIR = ROOT / "tests" / "data" / "crisis_eval"
LEGACY = ROOT / "tests" / "data" / "crisis_labelled.jsonl"
TRAIN_DIR = ROOT / "tests" / "data" / "crisis_train"
#: The ratings data beside the checkout (../shared/data), where the project's machines keep it.
RATINGS = ROOT.parent / "shared" / "data" / "empathy-ratings" / "original_data"
csv.field_size_limit(10**8)


#: Sealed sets written after ``items.jsonl``, every item test (tests/data/crisis_eval/README.md).
LATER_SEALED = tuple(sorted((p.stem for p in EVAL_DIR.glob("test*.jsonl")), key=lambda stem: int(stem[4:])))


#: The everyday-traffic set (tests/data/everyday_eval/README.md): ordinary turns and short disclosures.
EVERYDAY_ITEMS = ROOT / "tests" / "data" / "everyday_eval" / "items.jsonl"
EVERYDAY_SPLITS = ("everyday_dev", "everyday_test")


def everyday_split(text: str) -> str:
    """The everyday set's fixed split (tests/data/everyday_eval/README.md)."""
    odd = int(hashlib.sha256(("everyday-eval-v1:" + text).encode()).hexdigest(), 16) % 2
    return "everyday_test" if odd else "everyday_dev"


def crisis_split(text: str) -> str:
    """The sealed set's fixed split (tests/data/crisis_eval/README.md)."""
    return "test" if int(hashlib.sha256(("crisis-eval-v1:" + text).encode()).hexdigest(), 16) % 2 else "dev"


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# -- the detectors compared ------------------------------------------------------------------------------
Verdict = tuple[bool, bool]  # (any alert, critical-or-high alert)


def current(text: str) -> Verdict:
    a = assess_crisis(text)
    return a.alert, a.severity in ("critical", "high")


def rules_only(text: str) -> Verdict:
    a = assess_crisis(text)
    return a.crisis, a.crisis


def model_only(text: str) -> Verdict:
    return assess_crisis(text).model_fired, False


def v1_phrases(text: str) -> Verdict:
    hit = bool(phrase_signals(text))
    return hit, hit


DETECTORS: dict[str, Callable[[str], Verdict]] = {
    "current": current,
    "rules": rules_only,
    "model": model_only,
    "v1_phrases": v1_phrases,
}

# The crisis second look (the model stage's MiniLM ensemble), where the checkout has one and the embeddings
# extra is installed: ``with_stage`` is what a deployment running ``attune model-stage`` alerts on (the inline
# tier OR the second look; the second look adds ``possible``, or ``high`` where it confirms an anchor), ``second_look``
# the ensemble alone. Probabilities are computed in batches first (``prefetch``), as the stage does.
_SECOND: dict[str, float | None] = {}
try:
    from scorers.embeddings import missing as _embeddings_missing
    from scorers.safety import SecondLook

    _LOOK: Any = SecondLook.load() if _embeddings_missing() is None else None
except ImportError:  # a checkout from before the second look
    _LOOK = None


def prefetch(texts: Iterable[str]) -> None:
    """Second-look probabilities of ``texts`` in batches of 64 (the model stage's batch size)."""
    if _LOOK is None:
        return
    todo = list(dict.fromkeys(t for t in texts if t not in _SECOND))
    for i in range(0, len(todo), 64):
        chunk = todo[i : i + 64]
        _SECOND.update(zip(chunk, _LOOK.probabilities(chunk), strict=True))


def _second_fires(text: str) -> bool:
    if text not in _SECOND:
        prefetch([text])
    p = _SECOND[text]
    return p is not None and p >= _LOOK.threshold


def with_stage(text: str) -> Verdict:
    a = assess_crisis(text)
    # which turns the stage reads: since rules 2.24 ``SecondLook.reads`` (also the inline model's possible alerts);
    # before, the turns with no inline alert
    reads = getattr(_LOOK, "reads", lambda a: not a.alert and a.covered)
    looked = reads(a) and _second_fires(text)
    # since second look 1.14 the stage raises a turn with an anchor concept it confirms to high (older checkouts'
    # SecondLook has no ``confirmed``: possible only, as they shipped)
    confirmed = looked and getattr(_LOOK, "confirmed", lambda *_: None)(text, _SECOND[text]) is not None
    return a.alert or looked, a.severity in ("critical", "high") or confirmed


def second_look(text: str) -> Verdict:
    return _second_fires(text), False


if _LOOK is not None:
    DETECTORS = {"with_stage": with_stage, **DETECTORS, "second_look": second_look}


# -- statistics ------------------------------------------------------------------------------------------
def rate(flags: Sequence[bool], resamples: int = 2000, seed: int = 12) -> dict[str, Any]:
    """Proportion with n and a 95% percentile-bootstrap interval."""
    n = len(flags)
    if n == 0:
        return {"n": 0, "k": 0, "rate": None, "ci95": None}
    k = sum(flags)
    rng = random.Random(seed)
    vals = list(flags)
    boots = sorted(sum(rng.choices(vals, k=n)) / n for _ in range(resamples))
    return {"n": n, "k": k, "rate": round(k / n, 3), "ci95": [round(boots[49], 3), round(boots[1949], 3)]}


def precision(pos: Sequence[bool], neg: Sequence[bool]) -> dict[str, Any]:
    """Precision with a bootstrap interval over the pooled items (alerted positives / all alerts)."""
    flags = [True] * sum(pos) + [False] * sum(neg)
    return rate(flags)


# -- the sealed set --------------------------------------------------------------------------------------
#: The detector whose figures are broken down by category and style: what a deployment running the model stage gets.
HEADLINE = "with_stage" if _LOOK is not None else "current"


_KEYS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEIGHBOURS = {
    c: "".join(row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)) for row in _KEYS for i, c in enumerate(row)
}


def with_typos(text: str, rate: float = 0.3) -> str:
    """``text`` with single-letter typos, as a fast typist on a phone makes them: each word of five or more letters
    gets one with probability ``rate`` (a letter dropped, doubled, swapped with the next, or replaced by a keyboard
    neighbour), never the first letter. Seeded by the text: the same item always gets the same typos. These are the
    edits the typo repair can undo (one edit, first letter kept): read the figures as its best case, not as real
    misspelling ("sewer slide", "kil my self"), which it does not address."""
    rng = random.Random(hashlib.sha256(text.encode()).hexdigest())

    def one(m: re.Match[str]) -> str:
        w = m.group()
        if rng.random() >= rate:
            return w
        i, kind = rng.randrange(1, len(w) - 1), rng.randrange(4)
        if kind == 0:
            return w[:i] + w[i + 1 :]
        if kind == 1:
            return w[:i] + w[i] + w[i:]
        if kind == 2:
            return w[:i] + w[i + 1] + w[i] + w[i + 2 :]
        near = _NEIGHBOURS.get(w[i].lower(), "")
        return w[:i] + (rng.choice(near) if near else w[i]) + w[i + 1 :]

    return re.sub(r"[A-Za-z]{5,}", one, text)


def as_transcript(text: str) -> str:
    """The words of ``text`` as a speech-to-text engine that does not punctuate renders them: lower case, no
    punctuation but apostrophes. Voice deployments send turns like this (some engines punctuate, some do not); the
    same words should raise the same alert either way, so every sealed item is also scored in this form."""
    return " ".join(re.sub(r"[^\w\s']", " ", text.lower()).split())


def sealed(splits: Iterable[str]) -> dict[str, Any]:
    items = load_jsonl(EVAL_DIR / "items.jsonl")
    out: dict[str, Any] = {}
    for split in splits:
        if split in LATER_SEALED:  # the later sealed sets: every item is test
            rows = load_jsonl(EVAL_DIR / f"{split}.jsonl")
        elif split in EVERYDAY_SPLITS:
            rows = [d for d in load_jsonl(EVERYDAY_ITEMS) if everyday_split(d["text"]) == split]
        else:
            rows = [d for d in items if crisis_split(d["text"]) == split]
        prefetch(t for d in rows for t in (d["text"], as_transcript(d["text"]), with_typos(d["text"])))
        pos = [d for d in rows if d["label"] == "crisis"]
        neg = [d for d in rows if d["label"] == "none"]
        res: dict[str, Any] = {"n_crisis": len(pos), "n_none": len(neg)}
        for name, fn in DETECTORS.items():
            vp = [fn(d["text"]) for d in pos]
            vn = [fn(d["text"]) for d in neg]
            r: dict[str, Any] = {
                "recall_any": rate([v[0] for v in vp]),
                "recall_critical_high": rate([v[1] for v in vp]),
                "fpr_any": rate([v[0] for v in vn]),
                # false alarms a safety team routing by severity sees at critical/high
                "fpr_critical_high": rate([v[1] for v in vn]),
            }
            if name in (HEADLINE, "current"):
                for key, render in (("as_transcript", as_transcript), ("with_typos", with_typos)):
                    rp = [fn(render(d["text"])) for d in pos]
                    rn = [fn(render(d["text"])) for d in neg]
                    r[key] = {
                        "recall_any": rate([v[0] for v in rp]),
                        "recall_critical_high": rate([v[1] for v in rp]),
                        "fpr_any": rate([v[0] for v in rn]),
                        "flips": sum(a[0] != b[0] for a, b in zip(vp + vn, rp + rn, strict=True)),
                    }
            if name == HEADLINE:
                r["by_category"] = _groups(pos, [v[0] for v in vp], "category")
                r["by_category_critical_high"] = _groups(pos, [v[1] for v in vp], "category")
                r["by_style"] = _groups(pos, [v[0] for v in vp], "style")
                r["fpr_by_category"] = _groups(neg, [v[0] for v in vn], "category")
                r["fpr_by_style"] = _groups(neg, [v[0] for v in vn], "style")
                if rows and "length" in rows[0]:
                    r["by_length"] = _groups(pos, [v[0] for v in vp], "length")
                    r["fpr_by_length"] = _groups(neg, [v[0] for v in vn], "length")
            res[name] = r
        if split in ("dev", "everyday_dev"):  # errors are for tuning: only ever listed for dev
            res["errors"] = [
                {"label": d["label"], "category": d["category"], "style": d["style"], "text": d["text"]}
                for d in rows
                if current(d["text"])[0] != (d["label"] == "crisis")
            ]
        out[split] = res
    return out


def _groups(rows: Sequence[dict[str, Any]], flags: Sequence[bool], key: str) -> dict[str, Any]:
    by: dict[str, list[bool]] = defaultdict(list)
    for d, f in zip(rows, flags, strict=True):
        by[d[key]].append(f)
    return {k: {"n": len(v), "k": sum(v), "rate": round(sum(v) / len(v), 3)} for k, v in sorted(by.items())}


def conversations(splits: Iterable[str]) -> dict[str, Any]:
    """A sequence counts as alerted when any of its user turns alerts, with the cues of the earlier turns."""
    convs = load_jsonl(EVAL_DIR / "conversations.jsonl")
    out: dict[str, Any] = {}
    for split in splits:
        rows = [c for c in convs if crisis_split(" \n".join(c["turns"])) == split]
        flags_cur, flags_rules, flags_v1 = [], [], []
        for c in rows:
            cues: frozenset[str] = frozenset()
            hit = hit_rules = False
            for t in c["turns"]:
                a = assess_crisis(t, cues)
                cues |= a.cues
                hit |= a.alert
                hit_rules |= a.crisis
            flags_cur.append(hit)
            flags_rules.append(hit_rules)
            flags_v1.append(any(phrase_signals(t) for t in c["turns"]))
        res: dict[str, Any] = {}
        for name, flags in (("current", flags_cur), ("rules", flags_rules), ("v1_phrases", flags_v1)):
            res[name] = {
                "recall_any": rate([f for c, f in zip(rows, flags, strict=True) if c["label"] == "crisis"]),
                "fpr_any": rate([f for c, f in zip(rows, flags, strict=True) if c["label"] == "none"]),
            }
        out[split] = res
    return out


# -- everyday real text ----------------------------------------------------------------------------------
def everyday_real() -> dict[str, Any] | None:
    """Alerts on every user-side turn of the MIT ratings data (``real_turns``, all lengths): ordinary conversation,
    plus seeker posts of which a few are real disclosures. Unlabelled, so a rate of alerts, not a false-positive
    rate; it is the one set of real people's everyday wording here. None without the ratings data."""
    try:
        texts = real_turns(0, 10**6)
    except SystemExit:
        return None
    prefetch(t for x in texts for t in (x, as_transcript(x)))
    out: dict[str, Any] = {"n": len(texts)}
    for name, fn in DETECTORS.items():
        v = [fn(t) for t in texts]
        out[name] = {"alerted": rate([a for a, _ in v]), "critical_high": rate([c for _, c in v])}
        if name in (HEADLINE, "current"):
            out[name]["as_transcript_flips"] = sum(
                fn(as_transcript(t))[0] != a for t, (a, _) in zip(texts, v, strict=True)
            )
    return out


# -- public sets -----------------------------------------------------------------------------------------
def sdcnl(path: Path) -> dict[str, Any]:
    """SDCNL test split: title + body of each post; label is_suicide (r/SuicideWatch)."""
    with path.open(encoding="utf-8") as f:
        rows = [(f"{r['title']}. {r['selftext']}", r["is_suicide"] == "1") for r in csv.DictReader(f)]
    return _public(rows)


def reddit500(path: Path) -> dict[str, Any]:
    """500 Reddit users, C-SSRS labels per user: Ideation/Behavior/Attempt = at risk, Supportive = not;
    Indicator (risk factors without ideation) is reported apart, as the share alerted."""
    with path.open(encoding="utf-8") as f:
        users = [(_posts(r["Post"]), r["Label"]) for r in csv.DictReader(f)]
    rows = [(posts, label in ("Ideation", "Behavior", "Attempt")) for posts, label in users if label != "Indicator"]
    out = _public(rows)
    indicator = [posts for posts, label in users if label == "Indicator"]
    out["indicator_alerted"] = {
        name: rate([any(fn(p)[0] for p in posts) for posts in indicator]) for name, fn in DETECTORS.items()
    }
    by_label: dict[str, dict[str, Any]] = {}
    for label in ("Supportive", "Indicator", "Ideation", "Behavior", "Attempt"):
        group = [posts for posts, lab in users if lab == label]
        by_label[label] = rate([any(current(p)[0] for p in posts) for posts in group])
    out["current_alerted_by_label"] = by_label
    return out


def _posts(cell: str) -> list[str]:
    """The ``Post`` cell is a Python list literal; a few are cut short in the file, so fall back to
    splitting on the separator between items."""
    try:
        return [str(p) for p in ast.literal_eval(cell)]
    except (SyntaxError, ValueError):
        body = cell.strip().lstrip("[").rstrip("]")
        return [p.strip("'\" ") for p in re.split(r"['\"], ['\"]", body) if p.strip("'\" ")]


def _public(rows: Sequence[tuple[Any, bool]]) -> dict[str, Any]:
    def alerted(fn: Callable[[str], Verdict], x: Any) -> bool:
        return any(fn(p)[0] for p in x) if isinstance(x, list) else fn(x)[0]

    out: dict[str, Any] = {"n": len(rows), "n_positive": sum(y for _, y in rows)}
    prefetch(p for x, _ in rows for p in (x if isinstance(x, list) else [x]))
    for name, fn in DETECTORS.items():
        flags = [(alerted(fn, x), y) for x, y in rows]
        pos = [f for f, y in flags if y]
        neg = [f for f, y in flags if not y]
        out[name] = {"recall": rate(pos), "precision": precision(pos, neg), "alert_rate_negatives": rate(neg)}
    return out


def legacy() -> dict[str, Any]:
    items = load_jsonl(LEGACY)
    out: dict[str, Any] = {}
    for name, fn in DETECTORS.items():
        out[name] = {
            "recall_any": rate([fn(d["text"])[0] for d in items if d["label"] == "crisis"]),
            "fpr_any": rate([fn(d["text"])[0] for d in items if d["label"] == "none"]),
        }
    return out


# -- speed -----------------------------------------------------------------------------------------------
def real_turns(min_words: int = 20, max_words: int = 60) -> list[str]:
    """User-side turns of the MIT empathy-ratings sample (seeker posts and dialogue prompts)."""
    texts: list[str] = []
    ep = RATINGS / "sample_epitome.csv"
    ed = RATINGS / "sample_empatheticdialogues.csv"
    if not (ep.exists() and ed.exists()):
        raise SystemExit(f"ratings data not found at {RATINGS} (expected ../shared/data beside the checkout)")
    with ep.open(encoding="utf-8") as f:
        texts += [r["seeker_post"] for r in csv.DictReader(f)]
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
    # imported here: it imports the scorers of this checkout, and --previous needs another one's first
    from cheap_tier_bench import clear_caches  # (this folder is on sys.path when the script runs)

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


def throughput() -> dict[str, Any]:
    real = real_turns()
    sealed_texts = [d["text"] for d in load_jsonl(EVAL_DIR / "items.jsonl")]
    out: dict[str, Any] = {}
    # everyday user turns: what most of a live stream looks like (training negatives of writers L and M)
    everyday = [d["text"] for w in ("L", "M") for d in load_jsonl(TRAIN_DIR / f"writer_{w}.jsonl")]
    for name, texts in (
        ("everyday_user_turns", everyday),
        ("real_turns_20_60_words", real),
        ("sealed_set", sealed_texts),
    ):
        row: dict[str, Any] = {
            "n_texts": len(texts),
            "mean_words": round(statistics.mean(len(t.split()) for t in texts), 1),
        }
        for fn in (assess_crisis, detect_crisis, phrase_signals):
            cps = calls_per_second(fn, texts)
            row[f"{fn.__name__}_calls_per_s"] = round(cps)
            row[f"{fn.__name__}_us_per_call"] = round(1e6 / cps, 1)
        out[name] = row
    if _LOOK is not None:
        out["second_look_everyday"] = second_look_cost(everyday)
    out["real_turns_20_60_words"]["detect_user_dependency_calls_per_s"] = round(
        calls_per_second(detect_user_dependency, real)
    )
    out["real_turns_20_60_words"]["detect_harmful_reply_calls_per_s"] = round(
        calls_per_second(detect_harmful_reply, real)
    )
    out["real_turns_20_60_words"]["offers_crisis_resources_calls_per_s"] = round(
        calls_per_second(offers_crisis_resources, real)
    )
    return out


def second_look_cost(texts: Sequence[str], batch: int = 64) -> dict[str, Any]:
    """What the second look costs the model stage per user turn (prescreen, embedding, signals), in batches of
    ``batch`` as the stage sends them: CPU and wall time, best of 3 passes (the embedder warmed first)."""
    _LOOK.probabilities(texts[:batch])
    best: tuple[float, float] | None = None
    for _ in range(3):
        cpu, wall = time.process_time(), time.perf_counter()
        probs = [p for i in range(0, len(texts), batch) for p in _LOOK.probabilities(texts[i : i + batch])]
        took = (time.process_time() - cpu, time.perf_counter() - wall)
        best = took if best is None or took[0] < best[0] else best
    assert best is not None
    return {
        "n_texts": len(texts),
        "embedded": sum(p is not None for p in probs),
        "alerts": sum(p is not None and p >= _LOOK.threshold for p in probs),
        "cpu_ms_per_turn": round(best[0] / len(texts) * 1e3, 3),
        "wall_ms_per_turn": round(best[1] / len(texts) * 1e3, 3),
    }


# -- output ----------------------------------------------------------------------------------------------
def _fmt(r: dict[str, Any]) -> str:
    if r["rate"] is None:
        return "n/a"
    return f"{r['rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] ({r['k']}/{r['n']})"


def previous(root: Path, splits: str) -> dict[str, Any]:
    """The sealed-set figures of the detector in checkout ``root`` (this script, its data, that code)."""
    if not (root / "scorers" / "safety").is_dir():
        raise SystemExit(f"--previous {root}: not a checkout of attune (no scorers/safety)")
    out = subprocess.run(
        [sys.executable, __file__, "--splits", splits, "--json", "--no-speed"],
        env={**os.environ, DETECTOR_ROOT_ENV: str(root.resolve())},
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(out.stdout)
    look = doc.get("second_look")
    label = doc["detector_version"] + (f", second look {look['version']}" if look else "")
    return {
        "detector_version": doc["detector_version"],
        "label": label,
        "sealed": doc["sealed"],
        "everyday": doc.get("everyday"),
    }


def _print(doc: dict[str, Any], errors: bool) -> None:
    print(f"detector {doc['detector_version']}")
    if "second_look" in doc:
        look = doc["second_look"]
        anchored = ", or a death or self-harm concept named" if look.get("anchored_pass") else ""
        print(f"second look {look['version']} (threshold {look['threshold']}, prescreen {look['prescreen']}{anchored})")
    prev = doc.get("previous")
    for split, res in doc.get("sealed", {}).items():
        print(f"\n[sealed set: {split}] crisis={res['n_crisis']} none={res['n_none']}")
        for name in DETECTORS:
            r = res[name]
            print(
                f"  {name:<11} recall(any) {_fmt(r['recall_any'])}  recall(crit+high) {_fmt(r['recall_critical_high'])}"
                f"  FPR {_fmt(r['fpr_any'])}  FPR(crit+high) {_fmt(r['fpr_critical_high'])}"
            )
        for name in (HEADLINE, "current"):
            for key, what in (("as_transcript", "as a transcript without punctuation"), ("with_typos", "with typos")):
                t = res[name].get(key)
                if t is not None:
                    print(
                        f"  {name:<11} {what}: recall(any) {_fmt(t['recall_any'])}  "
                        f"recall(crit+high) {_fmt(t['recall_critical_high'])}  FPR {_fmt(t['fpr_any'])}  "
                        f"alerts that change: {t['flips']}"
                    )
        if prev is not None and split in prev["sealed"]:
            for name in ("current", "with_stage"):
                r = prev["sealed"][split].get(name)
                if r is None:
                    continue
                print(
                    f"  previous {name:<10} recall(any) {_fmt(r['recall_any'])}  recall(crit+high) "
                    f"{_fmt(r['recall_critical_high'])}  FPR {_fmt(r['fpr_any'])}"
                    + (f"  FPR(crit+high) {_fmt(r['fpr_critical_high'])}" if "fpr_critical_high" in r else "")
                    + f"  ({prev['label']})"
                )
                for key, what in (("as_transcript", "as a transcript"), ("with_typos", "with typos")):
                    t = r.get(key)
                    if t:
                        print(
                            f"    {what}: recall(any) {_fmt(t['recall_any'])}  recall(crit+high) "
                            f"{_fmt(t['recall_critical_high'])}  FPR {_fmt(t['fpr_any'])}  "
                            f"alerts that change: {t['flips']}"
                        )
        cur = res[HEADLINE]
        for title, key in (
            ("recall by category (any / crit+high)", "by_category"),
            ("recall by style", "by_style"),
            ("FPR by negative category", "fpr_by_category"),
            ("FPR by style", "fpr_by_style"),
            ("recall by length", "by_length"),
            ("FPR by length", "fpr_by_length"),
        ):
            if key not in cur:
                continue
            if key == "by_category":
                ch = cur["by_category_critical_high"]
                cells = [f"{k} {v['k']}/{v['n']} / {ch[k]['k']}" for k, v in cur[key].items()]
            else:
                cells = [f"{k} {v['k']}/{v['n']}" for k, v in cur[key].items()]
            print(f"  {title}: " + ", ".join(cells))
        if errors and "errors" in res:
            for e in res["errors"]:
                what = "MISS" if e["label"] == "crisis" else "FALSE ALARM"
                print(f"    {what} {e['category']}/{e['style']}: {e['text']!r}")
    for split, res in doc.get("conversations", {}).items():
        print(f"\n[multi-turn: {split}]")
        for name, r in res.items():
            print(f"  {name:<11} recall {_fmt(r['recall_any'])}  FPR {_fmt(r['fpr_any'])}")
    if doc.get("everyday"):
        ev = doc["everyday"]
        print(f"\n[everyday: {ev['n']} real user turns of the MIT ratings data, unlabelled (a few are disclosures)]")
        rows = [(name, ev[name]) for name in DETECTORS]
        if prev is not None and prev.get("everyday"):
            rows += [(f"previous {n}", prev["everyday"][n]) for n in ("current", "with_stage") if n in prev["everyday"]]
        for name, r in rows:
            flips = r.get("as_transcript_flips")
            flips = "" if flips is None else f"  alerts that change as a transcript: {flips}"
            print(f"  {name:<19} alerted {_fmt(r['alerted'])}  critical+high {_fmt(r['critical_high'])}{flips}")
    for key in ("sdcnl", "reddit500"):
        if key in doc:
            r = doc[key]
            print(f"\n[{key}] n={r['n']} positive={r['n_positive']}")
            for name in DETECTORS:
                x = r[name]
                print(
                    f"  {name:<11} recall {_fmt(x['recall'])}  precision {_fmt(x['precision'])}  "
                    f"alerted negatives {_fmt(x['alert_rate_negatives'])}"
                )
            if "indicator_alerted" in r:
                print(
                    "  Indicator users alerted: "
                    + ", ".join(f"{k} {_fmt(v)}" for k, v in r["indicator_alerted"].items())
                )
                print(
                    "  current, alerted by label: "
                    + ", ".join(f"{k} {_fmt(v)}" for k, v in r["current_alerted_by_label"].items())
                )
    if "legacy" in doc:
        print("\n[v1 team set (now model training data)]")
        for name, r in doc["legacy"].items():
            print(f"  {name:<11} recall {_fmt(r['recall_any'])}  FPR {_fmt(r['fpr_any'])}")
    for name, t in (doc.get("throughput") or {}).items():
        print(f"\n[throughput: {name}] " + "  ".join(f"{k}={v}" for k, v in t.items()))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--splits",
        default="dev",
        help=f"sealed-set splits: dev, everyday_dev; test, {', '.join(LATER_SEALED)}, everyday_test once per change",
    )
    ap.add_argument("--errors", action="store_true", help="list dev misses and false alarms")
    ap.add_argument("--sdcnl", type=Path, help="SDCNL data/testing-set.csv")
    ap.add_argument("--reddit500", type=Path, help="500_Reddit_users_posts_labels.csv")
    ap.add_argument("--legacy", action="store_true", help="also the v1 team's labelled set")
    ap.add_argument("--no-speed", action="store_true", help="skip the throughput measurement")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    ap.add_argument("--previous", type=Path, help="a checkout of the previous version: its detector, same sets")
    args = ap.parse_args(argv)
    splits = [s for s in args.splits.split(",") if s]
    for s in splits:
        if s not in ("dev", "test", *LATER_SEALED, *EVERYDAY_SPLITS):
            known = ", ".join(("dev", "test", *LATER_SEALED, *EVERYDAY_SPLITS))
            raise SystemExit(f"unknown split {s!r}: one of {known}")
    doc: dict[str, Any] = {"detector_version": detector_version()}
    if _LOOK is not None:
        doc["second_look"] = {
            "version": _LOOK.version,
            "threshold": _LOOK.threshold,
            "prescreen": _LOOK.prescreen,
            "anchored_pass": getattr(_LOOK, "anchored_pass", False),  # since second look 1.20
        }
    doc["sealed"] = sealed(splits)
    doc["conversations"] = conversations([s for s in splits if s in ("dev", "test")])
    doc["everyday"] = everyday_real()
    if args.sdcnl:
        doc["sdcnl"] = sdcnl(args.sdcnl)
    if args.reddit500:
        doc["reddit500"] = reddit500(args.reddit500)
    if args.legacy:
        doc["legacy"] = legacy()
    doc["throughput"] = None if args.no_speed else throughput()
    if args.previous:
        doc["previous"] = previous(args.previous, args.splits)
    if args.json:
        if not args.errors:
            for res in doc["sealed"].values():
                res.pop("errors", None)
        print(json.dumps(doc, indent=2))
    else:
        _print(doc, args.errors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
