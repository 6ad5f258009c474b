"""Train the crisis detector's learned signal and write scorers/safety/crisis_model.json.

    .venv/bin/python bench/train_crisis_model.py            # train, calibrate, pick the threshold, write
    .venv/bin/python bench/train_crisis_model.py --dry-run  # print the figures, write nothing

Data: every ``*.jsonl`` in tests/data/crisis_train/ (fields ``text``, ``label`` crisis/none), all written for
this project (MIT) and none of it in any evaluation split (a training text that is also in
tests/data/crisis_eval/ is dropped and counted). The model is a logistic regression over the binary features of
``scorers.safety._model.features`` (word 1-2-grams, character 3-5-grams, concept classes and their
pairs), each row L2-normalised over the
features the vocabulary knows (vocabulary: features seen in at least ``--min-df`` training texts), exactly
as the inference code computes it. Calibration: Platt scaling fitted on 5-fold cross-validated decision
values. Threshold: the lowest probability at which the combined detector (concept and phrase rules OR the
model) keeps the false-positive rate on the *dev* hard negatives within ``--dev-fpr`` (0.03, leaving room
under the 0.05 target); the test split is never read here.

Deterministic: fixed folds and solver, so the same data gives the same file (weights rounded to 5 digits).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crisis_eval import LATER_SEALED, crisis_split, load_jsonl  # noqa: E402  (this folder is on sys.path when the script runs)

from scorers.safety._model import features  # noqa: E402
from scorers.safety._normalise import normalise  # noqa: E402
from scorers.safety._spelling import lexicon_words, reload_lexicon  # noqa: E402

TRAIN_DIR = ROOT / "tests" / "data" / "crisis_train"
EVAL_ITEMS = ROOT / "tests" / "data" / "crisis_eval" / "items.jsonl"
OUT = ROOT / "scorers" / "safety" / "crisis_model.json"
LEXICON = ROOT / "scorers" / "safety" / "spelling_lexicon.txt"
VERSION = "crisis-ngram-concept-lr@1.16"


def training_data() -> tuple[list[str], np.ndarray, dict[str, int]]:
    texts, labels, _writers, per_file = training_rows()
    return texts, labels, per_file


def _kept_rows() -> tuple[list[tuple[str, dict[str, Any]]], dict[str, int]]:
    """(writer, row) of every training row kept, and the rows per file: a text also in a sealed set is dropped and
    counted, a repeated text kept once. The one filter ``training_rows`` and ``raw_training_texts`` share."""
    eval_texts = {d["text"].strip().lower() for d in load_jsonl(EVAL_ITEMS)}
    for sealed in LATER_SEALED:
        eval_texts |= {d["text"].strip().lower() for d in load_jsonl(EVAL_ITEMS.with_name(f"{sealed}.jsonl"))}
    kept: list[tuple[str, dict[str, Any]]] = []
    per_file: dict[str, int] = {}
    seen: set[str] = set()
    dropped = 0
    for path in sorted(TRAIN_DIR.glob("*.jsonl")):
        rows = load_jsonl(path)
        per_file[path.name] = len(rows)
        for d in rows:
            key = d["text"].strip().lower()
            if key in eval_texts:
                dropped += 1  # written independently, but the same sentence: it stays evaluation data only
                continue
            if key in seen:
                continue
            seen.add(key)
            kept.append((path.stem, d))
    per_file["dropped_as_in_eval_set"] = dropped
    return kept, per_file


def raw_training_texts() -> list[str]:
    """The training texts as written (the rows ``training_rows`` keeps, before normalisation)."""
    return [d["text"] for _, d in _kept_rows()[0]]


def _write_lexicon(dry_run: bool) -> None:
    """The typo repair's lexicon (``scorers/safety/_spelling.py``) from the raw training texts, written before the
    texts are normalised for training (normalisation reads it), so retraining reproduces it and the weights."""
    words = lexicon_words(raw_training_texts())
    body = "# words seen at least twice in tests/data/crisis_train (bench/train_crisis_model.py)\n" + "\n".join(words)
    print(f"spelling lexicon: {len(words)} words")
    if not dry_run:
        LEXICON.write_text(body + "\n", encoding="utf-8")
        reload_lexicon()
        normalise.cache_clear()


def training_rows() -> tuple[list[str], np.ndarray, np.ndarray, dict[str, int]]:
    """Normalised training texts, labels, each text's writer (its file's stem), rows per file (``_kept_rows``)."""
    kept, per_file = _kept_rows()
    texts = [normalise(d["text"]) for _, d in kept]
    labels = np.array([1 if d["label"] == "crisis" else 0 for _, d in kept])
    writers = np.array([w for w, _ in kept])
    return texts, labels, writers, per_file


def matrix(feats: list[set[str]], vocab: dict[str, int]) -> csr_matrix:
    rows, cols, vals = [], [], []
    for i, fs in enumerate(feats):
        known = [vocab[f] for f in fs if f in vocab]
        if not known:
            continue
        v = 1.0 / np.sqrt(len(known))
        rows.extend([i] * len(known))
        cols.extend(known)
        vals.extend([v] * len(known))
    return csr_matrix((vals, (rows, cols)), shape=(len(feats), len(vocab)))


def fit(x: csr_matrix, y: np.ndarray, c: float) -> LogisticRegression:
    return LogisticRegression(C=c, class_weight="balanced", max_iter=5000, solver="liblinear").fit(x, y)


def cv_platt(x: csr_matrix, y: np.ndarray, c: float) -> tuple[np.ndarray, tuple[float, float]]:
    """5-fold cross-validated decision values (fixed folds) and the Platt scaling fitted on them (both trainers)."""
    cv = np.zeros(len(y))
    for tr, te in StratifiedKFold(n_splits=5, shuffle=True, random_state=12).split(x, y):
        cv[te] = fit(x[tr], y[tr], c).decision_function(x[te])
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(cv.reshape(-1, 1), y)
    return cv, (float(platt.coef_[0][0]), float(platt.intercept_[0]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--c", type=float, default=4.0, help="inverse regularisation strength")
    ap.add_argument("--min-df", type=int, default=2)
    ap.add_argument("--dev-fpr", type=float, default=0.03, help="false-positive rate allowed on dev hard negatives")
    ap.add_argument(
        "--dev-high-fpr",
        type=float,
        default=0.01,
        help="critical+high false-positive rate allowed on dev hard negatives (rules alone: 0.005)",
    )
    ap.add_argument(
        "--everyday-fpr",
        type=float,
        default=0.024,  # model 1.3's writer-out rate at its threshold (0.83): no more everyday alarms than before
        help="share of an unseen everyday writer's ordinary messages the model alone may flag (writer-out)",
    )
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)

    _write_lexicon(args.dry_run)
    texts, y, writers, per_file = training_rows()
    feats = [features(t) for t in texts]
    df: dict[str, int] = {}
    for fs in feats:
        for f in fs:
            df[f] = df.get(f, 0) + 1
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= args.min_df))}
    x = matrix(feats, vocab)

    cv, (a, b) = cv_platt(x, y, args.c)
    final = fit(x, y, args.c)
    names = sorted(vocab, key=vocab.__getitem__)
    weights = {f: round(float(w), 5) for f, w in zip(names, final.coef_[0], strict=True)}
    print(f"training texts: {len(y)} ({int(y.sum())} crisis) from {per_file}; vocabulary {len(vocab)}")
    print(f"5-fold CV: AUC {_auc(cv, y):.3f}; Platt a={a:.3f} b={b:.3f}")

    model = {
        "version": VERSION,
        "bias": round(float(final.intercept_[0]), 5),
        "platt": [round(a, 5), round(b, 5)],
        "threshold": 0.5,
        "weights": weights,
        "training": {"files": per_file, "texts": len(y), "crisis": int(y.sum()), "c": args.c, "min_df": args.min_df},
    }
    dev_threshold = _dev_threshold(model, args.dev_fpr)
    print(f"dev threshold (lowest with dev FPR of rules OR model <= {args.dev_fpr}): {dev_threshold}")
    everyday = _everyday_floor(x, y, writers, args.c, (a, b), args.everyday_fpr)
    model["threshold"] = max(dev_threshold, everyday)
    print(f"threshold: {model['threshold']} (the higher of the dev walk and the everyday floor {everyday})")
    model["confirm"] = _dev_confirm(model, args.dev_high_fpr)
    print(f"confirm (lowest with dev crit+high FPR of rules OR anchor+model <= {args.dev_high_fpr}):", model["confirm"])
    if not args.dry_run:
        write_model(OUT, model)
    return 0


def write_model(path: Path, doc: dict[str, Any]) -> None:
    """A model's JSON as every crisis and danger trainer writes it (compact, keys sorted: reproducible bytes)."""
    path.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KiB)")


def _auc(scores: np.ndarray, y: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, scores))


#: Writers of ordinary, everyday companion-chat messages (tests/data/crisis_train/README.md).
EVERYDAY_WRITERS = ("writer_L", "writer_M")


def _everyday_floor(
    x: csr_matrix, y: np.ndarray, writers: np.ndarray, c: float, platt: tuple[float, float], max_fpr: float
) -> float:
    """The lowest threshold (0.01 steps) at which the model, trained without each everyday writer in turn, flags at
    most ``max_fpr`` of that writer's messages.

    Why: the dev walk sees only hard negatives, which share words with crises; ordinary short chat ("those are so
    gross") shares none, and a threshold tuned on the former alone let the model flag 29 of 306 real user turns
    (docs/safety-detection.md). Holding the writer out is the condition real users' wording puts the model in."""
    probs = []
    for w in EVERYDAY_WRITERS:
        held = writers == w
        if not held.any():
            continue
        d = fit(x[~held], y[~held], c).decision_function(x[held])
        probs.append(1.0 / (1.0 + np.exp(-(platt[0] * d + platt[1]))))
    return share_floor(np.concatenate(probs), max_fpr, "everyday writers held out")


def share_floor(probs: np.ndarray, max_share: float, what: str = "") -> float:
    """Walk thresholds down from 0.99 in 0.01 steps; the last one at which at most ``max_share`` of ``probs``
    reach it (the everyday floor of both crisis trainers)."""
    chosen = 0.99
    for th in [round(0.01 * k, 2) for k in range(99, 0, -1)]:
        share = float(np.mean(probs >= th))
        if share > max_share:
            break
        chosen = th
        if what and th * 100 % 5 == 0:
            print(f"  {what} {th:.2f}: flagged {share:.4f} of {len(probs)}")
    return chosen


def _dev_threshold(model: dict, max_fpr: float) -> float:
    """The lowest threshold (0.01 steps) at which rules OR model keep the dev false-positive rate <= ``max_fpr``."""
    from scorers.safety._crisis import rule_findings

    m, pos, neg = _dev(model)
    ruled = {t: bool(rule_findings(t)) for t in pos + neg}
    prob = {t: m.probability(t) for t in pos + neg}
    return _lowest(lambda t, th: ruled[t] or prob[t] >= th, pos, neg, max_fpr, 0.0, "threshold")


def _dev_confirm(model: dict, max_fpr: float) -> float:
    """The lowest probability (0.01 steps, not below the model's threshold) at which a rule finding OR an anchor
    concept the model confirms (``anchor_finding``) keeps the dev critical+high false-positive rate <= ``max_fpr``."""
    from scorers.safety._concepts import anchor_finding
    from scorers.safety._crisis import rule_findings

    m, pos, neg = _dev(model)
    ruled = {t: bool(rule_findings(t)) for t in pos + neg}
    anchored = {t: anchor_finding(t) is not None for t in pos + neg}
    prob = {t: m.probability(t) for t in pos + neg}

    def flags(t: str, th: float) -> bool:
        return ruled[t] or (anchored[t] and prob[t] >= th)

    return _lowest(flags, pos, neg, max_fpr, model["threshold"], "confirm (critical+high)")


def _dev(model: dict) -> tuple[Any, list[str], list[str]]:
    """The model as inference builds it, and the dev split's crisis and hard-negative texts (normalised)."""
    from scorers.safety._model import CrisisModel

    platt_a, platt_b = model["platt"]
    m = CrisisModel(model["version"], model["weights"], model["bias"], platt_a, platt_b, 0.5, 1.0)
    dev = [d for d in load_jsonl(EVAL_ITEMS) if crisis_split(d["text"]) == "dev"]
    pos = [normalise(d["text"]) for d in dev if d["label"] == "crisis"]
    neg = [normalise(d["text"]) for d in dev if d["label"] == "none"]
    return m, pos, neg


def _lowest(
    flags: Callable[[str, float], bool], pos: list[str], neg: list[str], max_fpr: float, floor: float, what: str
) -> float:
    """Walk thresholds down from 0.99 in 0.01 steps; the last one (not below ``floor``) whose dev FPR <= max_fpr."""
    chosen = 0.99
    for th in [round(0.01 * k, 2) for k in range(99, 0, -1)]:
        if th < floor:
            break
        rec = sum(flags(t, th) for t in pos) / len(pos)
        fpr = sum(flags(t, th) for t in neg) / len(neg)
        if fpr > max_fpr:
            break
        chosen = th
        if th * 100 % 5 == 0:
            print(f"  dev {what} {th:.2f}: recall {rec:.3f} fpr {fpr:.3f}")
    return chosen


if __name__ == "__main__":
    raise SystemExit(main())
