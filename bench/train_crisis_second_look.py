"""Train the crisis second look (the model stage's crisis signal) and write scorers/safety/crisis_second_look.json.

    .venv/bin/python bench/train_crisis_second_look.py            # train, calibrate, pick the threshold, write
    .venv/bin/python bench/train_crisis_second_look.py --dry-run  # print the figures, write nothing

What it is: a head over the shipped MiniLM sentence embeddings (``scorers.embeddings``), averaged with the inline
n-gram model's decision value (``crisis_model.json``), each z-scored, then Platt-calibrated. It runs off the inline
path, in ``attune model-stage``, because an embedding costs 10-18 ms per text. Two kinds of head are cross-validated
and the better one (recall at 3% false positives, writer-out) ships: a logistic head, and three one-layer ReLU nets
(128 units, sklearn's ``MLPClassifier`` with early stopping, seeds 1-3) whose probabilities are averaged. Why the
nets: the logistic head alone reaches AUC 0.93 writer-out; the nets 0.95, and the average with the n-gram model
gains about 0.015 recall at 1-5% false positives (docs/safety-detection.md, "Second look"). A third signal, since
1.3: the nearest-example margin (cosine to the nearest training crisis minus that to the nearest training negative,
the training texts' embeddings shipped as int8 in ``crisis_second_look_examples.npy``, their SHA-256 in the weights).
The same cross-validation picks the head kind and the three weights. Since 1.4 a turn of more than 30 words is also
read in 24-word windows (``_second_look.Windows``): its score mixes the whole text's with its highest window's, and
the same cross-validation (windows scored by their text's fold models) picks the share.

Why writer-out cross-validation: every training text is by one of the writer agents (or the v1 team), and the
sealed test sets are by other writers. Random folds let a writer's habits leak between train and test (5-fold AUC 0.97);
folds that hold out whole writers score the way the test sets do (the n-gram model: recall 0.81 at 3% false
positives, the level it shows on the sealed test sets). The averaging weight, the z-scores and the calibration
are all fitted on writer-out decision values; the head shipped is then fitted on every training text.

Threshold: the higher of (a) the lowest probability at which the whole detector (rules OR the inline model OR
the second look) keeps the false-positive rate on the *dev* hard negatives within ``--dev-fpr`` (0.03, the
inline model's own budget) and (b) the everyday floor: the lowest at which at most ``--everyday-fpr`` of the
everyday writers' messages (writer-out) reach it, as for the inline model. The test splits are never read here.

Confirm (since 1.14): the lowest probability, not below the threshold, at which a rule finding OR an anchor concept
the inline model confirms OR one the second look confirms (``SecondLook.confirmed``: severity high) keeps the dev
critical+high false-positive rate within ``--dev-high-fpr`` (0.01, the inline model's own budget for its confirm).

Prescreen: only user turns the inline model rates at or above ``--prescreen`` are embedded (the model stage's
cost); the script reports what the prescreen costs in recall.

Deterministic: fixed folds, solvers and seeds (logistic weights rounded to 6 digits, net weights stored as
float32). Data: as bench/train_crisis_model.py.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import sys
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crisis_eval import crisis_split, load_jsonl  # noqa: E402
from train_crisis_model import (  # noqa: E402
    EVAL_ITEMS,
    EVERYDAY_WRITERS,
    _lowest,
    fit,
    matrix,
    share_floor,
    training_rows,
    write_model,
)

from scorers.safety._model import features  # noqa: E402
from scorers.safety._model import model as ngram_model  # noqa: E402
from scorers.safety._normalise import normalise  # noqa: E402
from scorers.safety._second_look import SIGNALS, NearestExamples, Windows, combine  # noqa: E402

OUT = ROOT / "scorers" / "safety" / "crisis_second_look.json"
VERSION = "crisis-minilm-ensemble@1.20"
#: Weights (n-gram model, embedding head, nearest-example margin) the writer-out CV chooses from: the n-gram model
#: at least 0.3, the others in steps of 0.1 (0 included, so 1.1-1.2's two-signal averages are candidates).
WEIGHTS = tuple((round(1 - h / 10 - k / 10, 1), h / 10, k / 10) for h in range(0, 8) for k in range(0, 8) if h + k <= 7)
SCALE = 127
#: Windows of long texts (since 1.4): the geometry the concept layer uses for long voice turns (24 words, stride
#: 12), on texts of more than 30 words; chosen over 20/10 and 16/8 (texts over 24 words) in a one-off writer-out
#: run (docs/safety-detection.md). The share of the highest window in the turn's score is cross-validated here.
WINDOW_GEOMETRY = {"min_words": 30, "size": 24, "stride": 12}
MIXES = tuple(m / 10 for m in range(0, 8))
EXAMPLES = ROOT / "scorers" / "safety" / "crisis_second_look_examples.npy"
#: Training writers the second look does not learn from (the inline model does). Writers CY and CZ (distanced
#: disclosures and requests, in chat and meme registers, and their look-alikes) raised the second look's everyday
#: floor (threshold 0.67 -> 0.74 at the same 2.4% of the everyday writers' messages) and with it lost 0.010 of recall
#: with the stage over fourteen sealed sets (second look 1.8, docs/safety-detection.md): measured on the sealed sets,
#: so test15, written before this choice, is its clean check.
SECOND_LOOK_EXCLUDED = ("writer_CY", "writer_CZ")


def writer_folds(writers: np.ndarray, y: np.ndarray, k: int = 5) -> np.ndarray:
    """Fold of each text: crisis writers and negative writers dealt round-robin into ``k`` folds (each fold holds
    out whole writers of both labels); the v1 set (both labels, one team) is always trained on (fold -1)."""
    crisis = sorted({w for w, lab in zip(writers, y, strict=True) if lab} - {"v1_labelled"})
    other = sorted({w for w, lab in zip(writers, y, strict=True) if not lab} - {"v1_labelled"})
    fold = {w: i % k for i, w in enumerate(crisis)} | {w: i % k for i, w in enumerate(other)}
    fold["v1_labelled"] = -1
    return np.array([fold[w] for w in writers])


HIDDEN = 128
SEEDS = (1, 2, 3)


def head(x: np.ndarray, y: np.ndarray) -> LogisticRegression:
    return LogisticRegression(C=1.0, class_weight="balanced", max_iter=5000).fit(x, y)


def nets(x: np.ndarray, y: np.ndarray) -> list[MLPClassifier]:
    return [
        MLPClassifier((HIDDEN,), alpha=1e-3, early_stopping=True, random_state=seed, max_iter=300).fit(x, y)
        for seed in SEEDS
    ]


def nets_decision(models: list[MLPClassifier], x: np.ndarray) -> np.ndarray:
    """Logit of the nets' mean probability, clipped at 1e-6 (what ``EmbeddingHead.decision`` computes)."""
    p = np.clip(np.mean([m.predict_proba(x)[:, 1] for m in models], axis=0), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def quantise(emb: np.ndarray) -> np.ndarray:
    """Unit vectors as int8 (x 127), as they ship: the writer-out figures move by about 0.001."""
    return np.clip(np.round(np.asarray(emb, dtype=np.float64) * SCALE), -SCALE, SCALE).astype(np.int8)


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def signals_of(
    ws: tuple[float, float, float], z_of: dict[str, tuple[float, float]]
) -> dict[str, tuple[float, float, float]]:
    """Weights (n-gram, head, nearest) and z-scores as ``combine`` takes them; a zero weight leaves its signal out."""
    return {n: (w, *z_of[n]) for n, w in zip(SIGNALS, ws, strict=True) if w > 0}


def _f32(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def head_params(kind: str, emb: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """The shipped head of ``kind``, fitted on every training text."""
    if kind == "lr":
        final = head(emb, y)
        return {
            "kind": "lr",
            "dim": emb.shape[1],
            "bias": round(float(final.intercept_[0]), 6),
            "weights": [round(float(v), 6) for v in final.coef_[0]],
        }
    return {
        "kind": "mlp",
        "dim": emb.shape[1],
        "hidden": HIDDEN,
        "activation": "relu",
        "nets": [
            {
                "w1": _f32(m.coefs_[0]),
                "b1": _f32(m.intercepts_[0]),
                "w2": _f32(m.coefs_[1][:, 0]),
                "b2": round(float(m.intercepts_[1][0]), 6),
            }
            for m in nets(emb, y)
        ],
    }


def cut_at(scores: np.ndarray, y: np.ndarray, fpr: float) -> float:
    """The score a flag must exceed for at most ``fpr`` of the negatives to be flagged."""
    neg = np.sort(scores[y == 0])
    return float(neg[int(np.ceil(len(neg) * (1 - fpr))) - 1])


def recall_at(scores: np.ndarray, y: np.ndarray, fpr: float) -> float:
    return float(np.mean(scores[y == 1] > cut_at(scores, y, fpr)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev-fpr", type=float, default=0.03)
    ap.add_argument(
        "--everyday-fpr",
        type=float,
        default=0.024,  # model 1.3's writer-out rate at its threshold (0.83): no more everyday alarms than before
        help="share of the everyday writers' messages the second look may flag (writer-out), as for the inline model",
    )
    ap.add_argument(
        "--dev-high-fpr",
        type=float,
        default=0.01,
        help="dev critical+high false-positive budget for the confirm threshold (as the inline model's)",
    )
    ap.add_argument("--prescreen", type=float, default=0.1, help="inline model probability a turn needs to be embedded")
    ap.add_argument(
        "--no-anchored-pass",
        action="store_true",
        help="prescreen turns that name a death or self-harm concept too (before 1.20; by default they pass)",
    )
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)

    from scorers.embeddings import MiniLMEmbedder

    texts, y, writers, _per_file = training_rows()
    keep = ~np.isin(writers, SECOND_LOOK_EXCLUDED)
    texts, y, writers = [t for t, k in zip(texts, keep, strict=True) if k], y[keep], writers[keep]
    folds = writer_folds(writers, y)
    embedder = MiniLMEmbedder()
    emb = embedder.embed(texts)
    feats = [features(t) for t in texts]
    order = np.argsort(1 - y, kind="stable")  # crises first, then negatives, each in training order

    cut = Windows(**WINDOW_GEOMETRY, mix=0.0)
    windows = [(i, w) for i, t in enumerate(texts) for w in cut.of(t)]
    owner = np.array([i for i, _ in windows])
    wemb = embedder.embed([w for _, w in windows])
    wfeats = [features(w) for _, w in windows]

    quantised = quantise(emb)
    ngram_cv = np.zeros(len(y))
    head_cvs = {"lr": np.zeros(len(y)), "mlp": np.zeros(len(y))}
    near_cv = np.zeros(len(y))
    # the same signals on every window, from the same fold's models (a window is held out with its text)
    w_ngram, w_heads, w_near = (
        np.zeros(len(windows)),
        {"lr": np.zeros(len(windows)), "mlp": np.zeros(len(windows))},
        np.zeros(len(windows)),
    )
    for k in range(5):
        train, test = folds != k, folds == k
        wtest = test[owner]
        df: dict[str, int] = {}
        for i in np.flatnonzero(train):
            for f in feats[i]:
                df[f] = df.get(f, 0) + 1
        vocab = {f: j for j, f in enumerate(sorted(f for f, n in df.items() if n >= 2))}
        x, xw = matrix(feats, vocab), matrix(wfeats, vocab)
        lr = fit(x[train], y[train], 4.0)
        ngram_cv[test], w_ngram[wtest] = lr.decision_function(x[test]), lr.decision_function(xw[wtest])
        logistic = head(emb[train], y[train])
        head_cvs["lr"][test], w_heads["lr"][wtest] = (
            logistic.decision_function(emb[test]),
            logistic.decision_function(wemb[wtest]),
        )
        mlps = nets(emb[train], y[train])
        head_cvs["mlp"][test], w_heads["mlp"][wtest] = nets_decision(mlps, emb[test]), nets_decision(mlps, wemb[wtest])
        ex = train[order]  # the examples the runtime would hold, crises first
        nearest = NearestExamples(quantised[order][ex] / SCALE, int((ex & (y[order] == 1)).sum()))
        near_cv[test], w_near[wtest] = nearest.margin(emb[test]), nearest.margin(wemb[wtest])
    held = folds >= 0

    print(f"training texts: {len(y)} ({int(y.sum())} crisis), {len(set(writers))} writers; writer-out 5-fold CV:")
    yh = y[held]

    def report(name: str, s: np.ndarray) -> float:
        r3 = recall_at(s, yh, 0.03)
        print(
            f"  {name:34s} AUC {roc_auc_score(yh, s):.3f}  recall at 1/3/5% FPR "
            f"{recall_at(s, yh, 0.01):.3f} / {r3:.3f} / {recall_at(s, yh, 0.05):.3f}"
        )
        return r3

    def zs(s: np.ndarray) -> tuple[float, float]:
        return float(s[held].mean()), float(s[held].std())

    report("n-gram model", ngram_cv[held])
    report("nearest-example margin", near_cv[held])
    best: tuple[float, str, tuple[float, float, float]] | None = None
    for kind, cv in head_cvs.items():
        report(f"{kind} head", cv[held])
        cvs = {"ngram": ngram_cv, "head": cv, "near": near_cv}
        for ws in WEIGHTS:
            r3 = report(
                f"average, {kind}, {ws}", combine(cvs, signals_of(ws, {n: zs(v) for n, v in cvs.items()}))[held]
            )
            if best is None or r3 > best[0]:
                best = (r3, kind, ws)
    assert best is not None
    _, kind, ws = best
    cvs = {"ngram": ngram_cv, "head": head_cvs[kind], "near": near_cv}
    z_of = {n: zs(v) for n, v in cvs.items()}
    z_whole = combine(cvs, signals_of(ws, z_of))
    z_windows = combine({"ngram": w_ngram, "head": w_heads[kind], "near": w_near}, signals_of(ws, z_of))
    top = np.full(len(y), -np.inf)
    np.maximum.at(top, owner, z_windows)
    long_text = np.isfinite(top)
    top = np.where(long_text, top, z_whole)  # a short text is its own only window
    print(f"  windows: {len(windows)} of {int(long_text.sum())} texts over {WINDOW_GEOMETRY['min_words']} words")
    best_mix: tuple[float, float] | None = None
    for mix in MIXES:
        mixed = Windows(**WINDOW_GEOMETRY, mix=mix).mixed(z_whole, top)
        r3 = report(f"windows, share of the highest {mix}", mixed[held])
        cut3 = cut_at(mixed[held], yh, 0.03)
        lc, ln = held & long_text & (y == 1), held & long_text & (y == 0)
        print(
            f"    texts over {WINDOW_GEOMETRY['min_words']} words at that 3% cut: recall "
            f"{np.mean(mixed[lc] > cut3):.3f} of {int(lc.sum())}, "
            f"false positives {np.mean(mixed[ln] > cut3):.3f} of {int(ln.sum())}"
        )
        if best_mix is None or r3 > best_mix[0]:
            best_mix = (r3, mix)
    assert best_mix is not None
    mix = best_mix[1]
    z = Windows(**WINDOW_GEOMETRY, mix=mix).mixed(z_whole, top)
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(z[held].reshape(-1, 1), yh)
    a, b = float(platt.coef_[0][0]), float(platt.intercept_[0])
    examples = quantised[order]
    second: dict[str, Any] = {
        "version": VERSION,
        "embedder": "all-MiniLM-L6-v2-int8",
        "signals": {
            n: {"weight": w, "z": [round(v, 6) for v in z_of[n]]} for n, w in zip(SIGNALS, ws, strict=True) if w > 0
        },
        "platt": [round(a, 6), round(b, 6)],
        "prescreen": args.prescreen,
        "anchored_pass": not args.no_anchored_pass,
        "threshold": 0.5,
        "training": {"texts": len(y), "crisis": int(y.sum()), "writers": len(set(writers)), "cv": "writer-out 5-fold"},
    }
    if mix > 0:
        second["windows"] = {**WINDOW_GEOMETRY, "mix": mix}
    if ws[1] > 0:
        second["head"] = head_params(kind, emb, y)
    near = None
    if ws[2] > 0:
        n_crisis = int(y.sum())
        second["examples"] = {
            "file": EXAMPLES.name,
            "crisis": n_crisis,
            "none": len(y) - n_crisis,
            "scale": SCALE,
            "sha256": hashlib.sha256(_npy(examples)).hexdigest(),
        }
        near = NearestExamples(examples / SCALE, n_crisis)
    print(
        f"{kind} head, weights (n-gram, head, nearest) {ws}, windows' share {mix} (best writer-out recall at 3% FPR); "
        f"Platt a={a:.3f} b={b:.3f}"
    )
    p_all = 1.0 / (1.0 + np.exp(-(a * z + b)))
    _prescreen_cost(ngram_cv, p_all, y, held, args.prescreen)
    dev = _Dev(second, embedder, near)
    dev_threshold = dev.threshold(args.dev_fpr)
    print(
        f"dev threshold (lowest with dev FPR of rules OR inline model OR second look <= {args.dev_fpr}): "
        f"{dev_threshold}"
    )
    # The everyday floor (train_crisis_model._everyday_floor): writer-out probabilities of the everyday writers.
    everyday = np.isin(writers, EVERYDAY_WRITERS) & held
    p_every = p_all[everyday]
    floor = share_floor(p_every, args.everyday_fpr)
    second["threshold"] = max(dev_threshold, floor)
    print(
        f"threshold: {second['threshold']} (the higher of the dev walk and the everyday floor {floor}, "
        f"{float(np.mean(p_every >= second['threshold'])):.4f} of {int(everyday.sum())} everyday messages)"
    )
    second["confirm"] = dev.confirm(args.dev_high_fpr, second["threshold"])
    print(
        f"confirm (lowest with dev crit+high FPR of rules OR anchor+inline model OR anchor+second look <= "
        f"{args.dev_high_fpr}): {second['confirm']}"
    )
    if not args.dry_run:
        write_model(OUT, second)
        if near is not None:
            EXAMPLES.write_bytes(_npy(examples))
            print(f"wrote {EXAMPLES.relative_to(ROOT)} ({EXAMPLES.stat().st_size // 1024} KiB)")
        else:
            EXAMPLES.unlink(missing_ok=True)
    return 0


def _prescreen_cost(ngram_cv: np.ndarray, p_all: np.ndarray, y: np.ndarray, held: np.ndarray, prescreen: float) -> None:
    """How many writer-out crises the second look would flag at 0.5-0.9 that the prescreen keeps from it."""
    m = ngram_model()
    p_ngram = 1.0 / (1.0 + np.exp(-(m.platt_a * ngram_cv + m.platt_b)))
    crisis = held & (y == 1)
    for th in (0.5, 0.7, 0.9):
        flagged = crisis & (p_all >= th)
        lost = flagged & (p_ngram < prescreen)
        print(
            f"  prescreen {prescreen}: of {int(flagged.sum())} writer-out crises at >= {th}, {int(lost.sum())} "
            "never embedded"
        )


class _Dev:
    """The dev split's crisis and hard-negative texts (normalised), with what the inline tier and the second look
    (as inference builds it from ``second``) say of each; embedded once for both walks."""

    def __init__(self, second: dict[str, Any], embedder: Any, near: NearestExamples | None) -> None:
        from scorers.safety import SecondLook
        from scorers.safety._concepts import anchor_finding
        from scorers.safety._crisis import rule_findings

        m = ngram_model()
        dev = [d for d in load_jsonl(EVAL_ITEMS) if crisis_split(d["text"]) == "dev"]
        self.pos = [normalise(d["text"]) for d in dev if d["label"] == "crisis"]
        self.neg = [normalise(d["text"]) for d in dev if d["label"] == "none"]
        texts = self.pos + self.neg
        self.ruled = {t: bool(rule_findings(t)) for t in texts}
        self.inline = {t: self.ruled[t] or m.probability(t) >= m.threshold for t in texts}
        self.inline_confirmed = {t: anchor_finding(t) is not None and m.probability(t) >= m.confirm for t in texts}
        # the anchors the second look may confirm include those only it may (rules 2.19)
        self.anchored = {t: anchor_finding(t, second_look=True) is not None for t in texts}
        look = SecondLook(second, embedder, near)
        self.prob = dict(zip(texts, look.probabilities(texts), strict=True))  # normalise is idempotent

    def _reaches(self, t: str, th: float) -> bool:
        p = self.prob[t]
        return p is not None and p >= th

    def threshold(self, max_fpr: float) -> float:
        """The lowest threshold (0.01 steps) at which rules OR the inline model OR the second look keep the dev
        false-positive rate <= ``max_fpr`` (the walk of bench/train_crisis_model.py)."""
        return _lowest(
            lambda t, th: self.inline[t] or self._reaches(t, th), self.pos, self.neg, max_fpr, 0.0, "second look"
        )

    def confirm(self, max_fpr: float, floor: float) -> float:
        """The lowest probability (not below ``floor``, the threshold) at which a rule finding OR an anchor the
        inline model confirms OR one the second look confirms keeps the dev critical+high FPR <= ``max_fpr``."""

        def flags(t: str, th: float) -> bool:
            return self.ruled[t] or self.inline_confirmed[t] or (self.anchored[t] and self._reaches(t, th))

        return _lowest(flags, self.pos, self.neg, max_fpr, floor, "confirm (critical+high)")


if __name__ == "__main__":
    raise SystemExit(main())
