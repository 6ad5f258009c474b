"""Train the danger model (danger from another person) and write scorers/safety/danger_model.json.

    .venv/bin/python bench/train_danger_model.py            # train, calibrate, pick the threshold, write
    .venv/bin/python bench/train_danger_model.py --dry-run  # print the figures, write nothing
    .venv/bin/python bench/train_danger_model.py --writer-out  # also: each danger writer held out in turn

Data, all written for this project (MIT): positives, every ``danger`` row of tests/data/danger_train/; negatives,
its ``none`` rows and every ``none`` row of tests/data/crisis_train/ (ordinary chat, hard negatives of the crisis
sets: what live turns mostly look like). The crisis sets' crises are left out: they are not danger from another
person, yet many tell of it too ("he hits me and i want to die"), so as negatives they would teach the model
noise. No text of tests/data/danger_eval (dev or test) or of a sealed crisis set is read for training.

Model: logistic regression over ``_model.word_features`` (word 1-2-grams), rows L2-normalised over the known
features, as the crisis model (``train_crisis_model.fit``/``matrix``). Calibration: Platt scaling on 5-fold
cross-validated decision values. Threshold: the higher of (a) the everyday floor: trained without each everyday
writer (L, M) in turn, the model flags at most ``--everyday-fpr`` of that writer's messages; (b) the lowest
probability at which rules OR model keep the danger set's *dev* false-alarm rate within ``--dev-fpr``. The test
split is never read here. Deterministic: fixed folds and solver, weights rounded to 5 digits.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from danger_eval import danger_split  # noqa: E402  (this folder is on sys.path when the script runs)
from train_crisis_model import _auc, cv_platt, fit, matrix, share_floor, write_model  # noqa: E402

from scorers.safety._crisis import both_forms  # noqa: E402
from scorers.safety._danger import danger_findings  # noqa: E402
from scorers.safety._model import word_features  # noqa: E402
from scorers.safety._normalise import normalise  # noqa: E402

DANGER_TRAIN = ROOT / "tests" / "data" / "danger_train"
CRISIS_TRAIN = ROOT / "tests" / "data" / "crisis_train"
DANGER_EVAL = ROOT / "tests" / "data" / "danger_eval" / "items.jsonl"
OUT = ROOT / "scorers" / "safety" / "danger_model.json"
VERSION = "danger-ngram-lr@1.1"
EVERYDAY_WRITERS = ("writer_L", "writer_M")


def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def training_rows() -> tuple[list[str], np.ndarray, np.ndarray, dict[str, int]]:
    """Normalised texts, labels (1 = danger), each row's writer (file stem), rows per file."""
    held = {d["text"] for d in _rows(DANGER_EVAL)}
    texts: list[str] = []
    labels: list[int] = []
    writers: list[str] = []
    per_file: dict[str, int] = {}
    sources = [(p, None) for p in sorted(DANGER_TRAIN.glob("*.jsonl"))]
    sources += [(p, "none") for p in sorted(CRISIS_TRAIN.glob("*.jsonl"))]
    for path, only in sources:
        n = 0
        for d in _rows(path):
            if (only is not None and d["label"] != only) or d["text"] in held:
                continue
            texts.append(normalise(d["text"]))
            labels.append(1 if d["label"] == "danger" else 0)
            writers.append(path.stem)
            n += 1
        per_file[f"{path.parent.name}/{path.name}"] = n
    return texts, np.array(labels), np.array(writers), per_file


def _vocab(feats: list[set[str]], min_df: int) -> dict[str, int]:
    df: dict[str, int] = {}
    for fs in feats:
        for f in fs:
            df[f] = df.get(f, 0) + 1
    return {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= min_df))}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _ruled(text: str) -> bool:
    return any(danger_findings(n) for n in both_forms(text))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--c", type=float, default=2.0, help="inverse regularisation strength")
    ap.add_argument("--min-df", type=int, default=2)
    ap.add_argument("--everyday-fpr", type=float, default=0.01, help="share of an unseen everyday writer flagged")
    ap.add_argument("--dev-fpr", type=float, default=0.06, help="danger dev false alarms allowed (rules OR model)")
    ap.add_argument("--writer-out", action="store_true", help="report each danger writer held out in turn")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)

    texts, y, writers, per_file = training_rows()
    feats = [word_features(t) for t in texts]
    vocab = _vocab(feats, args.min_df)
    x = matrix(feats, vocab)
    cv, (a, b) = cv_platt(x, y, args.c)
    final = fit(x, y, args.c)
    names = sorted(vocab, key=vocab.__getitem__)
    print(f"training texts: {len(y)} ({int(y.sum())} danger); vocabulary {len(vocab)}")
    print(f"5-fold CV: AUC {_auc(cv, y):.3f}; Platt a={a:.3f} b={b:.3f}")

    probs = []
    for w in EVERYDAY_WRITERS:
        held = writers == w
        probs.append(_sigmoid(a * fit(x[~held], y[~held], args.c).decision_function(x[held]) + b))
    everyday = share_floor(np.concatenate(probs), args.everyday_fpr, "everyday writers held out")

    model: dict[str, Any] = {
        "version": VERSION,
        "bias": round(float(final.intercept_[0]), 5),
        "platt": [round(a, 5), round(b, 5)],
        "weights": {f: round(float(v), 5) for f, v in zip(names, final.coef_[0], strict=True)},
        "training": {"files": per_file, "texts": len(y), "danger": int(y.sum()), "c": args.c, "min_df": args.min_df},
    }
    dev = [d for d in _rows(DANGER_EVAL) if danger_split(d["text"]) == "dev"]
    dev_p = {
        d["text"]: float(
            _sigmoid(a * final.decision_function(matrix([word_features(normalise(d["text"]))], vocab))[0] + b)
        )
        for d in dev
    }
    ruled = {d["text"]: _ruled(d["text"]) for d in dev}
    neg = [d["text"] for d in dev if d["label"] == "none"]
    pos = [d["text"] for d in dev if d["label"] == "danger"]
    dev_th = 0.99
    for th in [round(0.01 * k, 2) for k in range(99, 0, -1)]:
        if np.mean([ruled[t] or dev_p[t] >= th for t in neg]) > args.dev_fpr:
            break
        dev_th = th
    model["threshold"] = max(everyday, dev_th)
    th = model["threshold"]
    print(f"threshold {th} (everyday floor {everyday}, dev walk {dev_th})")
    print(
        f"dev: rules {sum(ruled[t] for t in pos)}/{len(pos)} danger, rules OR model "
        f"{sum(ruled[t] or dev_p[t] >= th for t in pos)}/{len(pos)}; false alarms rules "
        f"{sum(ruled[t] for t in neg)}/{len(neg)}, rules OR model "
        f"{sum(ruled[t] or dev_p[t] >= th for t in neg)}/{len(neg)}"
    )
    if args.writer_out:
        for w in sorted(p.stem for p in DANGER_TRAIN.glob("*.jsonl")):
            held = writers == w
            p = _sigmoid(a * fit(x[~held], y[~held], args.c).decision_function(x[held]) + b)
            raw = [json.loads(line)["text"] for line in (DANGER_TRAIN / f"{w}.jsonl").open(encoding="utf-8")]
            r = np.array([_ruled(t) for t in raw])
            print(
                f"  {w} held out ({'danger' if y[held].any() else 'none'}, {held.sum()}): rules {int(r.sum())}, "
                f"model {int((p >= th).sum())}, rules OR model {int((r | (p >= th)).sum())}"
            )
    if not args.dry_run:
        write_model(OUT, model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
