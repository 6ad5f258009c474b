"""Train the learned empathy signal and write scorers/empathy_model/weights.json.

    .venv/bin/python bench/train_empathy_model.py             # select by cross-validation, train, write
    .venv/bin/python bench/train_empathy_model.py --dry-run   # print the figures, write nothing

Data (docs/empathy-model.md, "Data card"), licence-clean only:
* ``../shared/data/empathetic-personas/EP_EN_full.csv`` (MIT): 1,099 chatbot utterances, three annotators 0-2;
  target = their mean / 2; no seeker message, no components;
* ``tests/data/empathy_train/writer_*.jsonl`` (MIT, written for attune from ``BRIEF.md``): seeker message +
  reply, overall empathy 1-5 and EPITOME-style components 0-2, each rated by its writer and again, blind to
  the writer's ratings, by an independent rater (``independent/rater_*.jsonl``); the label is the mean of
  the two (empathy target (e - 1) / 4).
Never the evaluation data (``../shared/data/empathy-ratings``): it is read here only to drop, and count, any
training reply that is also an evaluation text.

Model selection without the evaluation data: leave-one-source-out cross-validation (each writer and the
personas set held out in turn, the rest trained on) over the feature kind and the ridge penalty; the choice
is the best mean Spearman over held-out sources, i.e. the setting that carries best to a writer it never saw.
Deterministic: closed-form ridge, fixed order; weights rounded to 6 digits.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.linear_model import Ridge

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scorers.embeddings import MODEL_ID, shared_embedder  # noqa: E402
from scorers.empathy_model import COMPONENTS, features  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
PERSONAS = SHARED / "empathetic-personas" / "EP_EN_full.csv"
RATINGS = SHARED / "empathy-ratings" / "original_data"
WRITERS = ROOT / "tests" / "data" / "empathy_train"
OUT = ROOT / "scorers" / "empathy_model" / "weights.json"
MODEL = "empathy-minilm-ridge"
VERSION = "1.0"
ALPHAS = (1.0, 3.0, 10.0, 30.0, 100.0)
KINDS = ("response", "response+match")
#: EPITOME's component names in the writers' files.
COMPONENT_FIELDS = dict(zip(COMPONENTS, ("er", "ip", "ex"), strict=True))


@dataclass
class Rows:
    source: list[str] = field(default_factory=list)
    response: list[str] = field(default_factory=list)
    seeker: list[str | None] = field(default_factory=list)
    target: list[float] = field(default_factory=list)
    components: list[dict[str, float] | None] = field(default_factory=list)


def _card(source: str, rows: int, path: Path) -> dict[str, object]:
    """One data-card line: every source trained on is MIT (an MIT project ships these weights)."""
    return {"source": source, "licence": "MIT", "rows": rows, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def evaluation_texts() -> set[str]:
    """Every reply and turn of the evaluation data, lower-cased: training must not contain one."""
    out: set[str] = set()
    with (RATINGS / "sample_epitome.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            out |= {row["response_post"].strip().lower(), row["seeker_post"].strip().lower()}
    with (RATINGS / "sample_empatheticdialogues.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            for line in row["full_conversation"].replace("_comma_", ",").splitlines():
                out.add(line.partition(":")[2].strip().lower())
    out.discard("")
    return out


def load(personas: Path, writers: Path) -> tuple[Rows, list[dict[str, object]], int]:
    for p in (personas, RATINGS):
        if not p.exists():
            raise SystemExit(f"data not found at {p} (expected ../shared/data beside the checkout)")
    held_out = evaluation_texts()
    rows, card, dropped = Rows(), [], 0

    def add(source: str, response: str, seeker: str | None, target: float, comps: dict[str, float] | None) -> None:
        nonlocal dropped
        if response.strip().lower() in held_out:
            dropped += 1
            return
        rows.source.append(source)
        rows.response.append(response)
        rows.seeker.append(seeker)
        rows.target.append(target)
        rows.components.append(comps)

    with personas.open(newline="", encoding="utf-8") as f:
        ep = list(csv.DictReader(f))
    for r in ep:
        mean = statistics.fmean(float(r[f"annotator{i}_score"]) for i in (1, 2, 3))
        add("personas", r["response"], None, mean / 2, None)
    card.append(_card("empathetic-personas EP_EN_full.csv", len(ep), personas))
    for path in sorted(writers.glob("writer_*.jsonl")):
        lines = _jsonl(path)
        rater_path = writers / "independent" / path.name.replace("writer_", "rater_")
        second = {d["id"]: d for d in _jsonl(rater_path)}
        if set(second) != {d["id"] for d in lines}:
            raise SystemExit(f"{rater_path} does not rate exactly the items of {path.name}")
        for d in lines:
            r = second[d["id"]]
            seeker = d["seeker"]  # the last seeker message only: what the stream stage reads with a reply
            comps = {c: (float(d[k]) + float(r[k])) / 2 for c, k in COMPONENT_FIELDS.items()}
            empathy = (float(d["empathy"]) + float(r["empathy"])) / 2
            add(path.stem, d["response"], seeker, (empathy - 1) / 4, comps)
        card.append(_card(f"tests/data/empathy_train/{path.name}", len(lines), path))
        card.append(_card(f"tests/data/empathy_train/independent/{rater_path.name}", len(second), rater_path))
    return rows, card, dropped


def _embed(texts: list[str], cache: Path | None) -> np.ndarray:
    """Embeddings, from an ``.npz`` cache keyed by text where given (the embedder is deterministic)."""
    emb = shared_embedder()
    known: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as z:
            known = dict(zip(z["texts"].tolist(), z["vecs"], strict=True))
    todo = sorted({t for t in texts if t not in known})
    for i in range(0, len(todo), 64):
        known.update(zip(todo[i : i + 64], emb.embed(todo[i : i + 64]), strict=True))
    if cache is not None and todo:
        np.savez(cache, texts=np.asarray(list(known)), vecs=np.stack(list(known.values())))
    return np.stack([known[t] for t in texts])


def matrices(rows: Rows, cache: Path | None = None) -> dict[str, np.ndarray]:
    """Feature matrices per kind; rows without a seeker get a zero seeker vector (no shared directions)."""
    r = _embed(rows.response, cache)
    seekers = [s or "" for s in rows.seeker]
    s = _embed(seekers, cache)
    s[[i for i, x in enumerate(rows.seeker) if x is None]] = 0.0
    return {kind: features(r, s, kind) for kind in KINDS}


def balanced(sources: np.ndarray) -> np.ndarray:
    """Sample weights giving every source the same total weight, so no one writer's style (nor the 1,099
    persona utterances) dominates the fit (decided on this script's cross-validation, docs/empathy-model.md)."""
    names, counts = np.unique(sources, return_counts=True)
    per = dict(zip(names, len(sources) / (len(names) * counts), strict=True))
    return np.asarray([per[s] for s in sources])


def fit(x: np.ndarray, y: np.ndarray, sources: np.ndarray, alpha: float) -> Ridge:
    return Ridge(alpha=alpha).fit(x, y, sample_weight=balanced(sources))


def loso(x: np.ndarray, y: np.ndarray, sources: np.ndarray, alpha: float) -> dict[str, float]:
    """Spearman on each source when trained on all the others."""
    out = {}
    for src in sorted(set(sources)):
        test = sources == src
        m = fit(x[~test], y[~test], sources[~test], alpha)
        out[src] = float(spearmanr(m.predict(x[test]), y[test]).statistic)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--personas", type=Path, default=PERSONAS)
    ap.add_argument("--writers", type=Path, default=WRITERS)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--cache", type=Path, default=None, help="an .npz of embeddings to reuse between runs")
    args = ap.parse_args(argv)
    rows, card, dropped = load(args.personas, args.writers)
    print(f"{len(rows.response)} training rows ({dropped} dropped: also evaluation texts)")
    xs = matrices(rows, args.cache)
    y = np.asarray(rows.target)
    src = np.asarray(rows.source)
    results: dict[tuple[str, float], dict[str, float]] = {}
    print("\nleave-one-source-out Spearman (held-out source: trained on the others)")
    for kind in KINDS:
        for alpha in ALPHAS:
            per = loso(xs[kind], y, src, alpha)
            results[(kind, alpha)] = per
            cells = " ".join(f"{k}={v:+.3f}" for k, v in per.items())
            print(f"  {kind:15s} alpha={alpha:<5g} mean={statistics.fmean(per.values()):+.3f}  {cells}")
    kind, alpha = max(results, key=lambda k: statistics.fmean(results[k].values()))
    print(f"\nchosen: features={kind}, alpha={alpha:g}")
    x = xs[kind]
    heads: dict[str, dict[str, object]] = {}
    m = fit(x, y, src, alpha)
    heads["empathy"] = {"coef": [round(float(v), 6) for v in m.coef_], "intercept": round(float(m.intercept_), 6)}
    has = np.asarray([c is not None for c in rows.components])
    comp_cv: dict[str, dict[str, float]] = {}
    for c in COMPONENTS:
        yc = np.asarray([d[c] if d else 0.0 for d in rows.components])
        if len(set(src[has])) >= 2:
            comp_cv[c] = loso(x[has], yc[has], src[has], alpha)
        mc = fit(x[has], yc[has], src[has], alpha)
        heads[c] = {"coef": [round(float(v), 6) for v in mc.coef_], "intercept": round(float(mc.intercept_), 6)}
        cv = comp_cv.get(c, {})
        print(f"  component {c}: leave-one-writer-out Spearman " + " ".join(f"{k}={v:+.3f}" for k, v in cv.items()))
    weights = {
        "id": MODEL,
        "version": VERSION,
        "embedder": MODEL_ID,
        "features": kind,
        "alpha": alpha,
        "heads": heads,
        "training": {
            "rows": len(rows.response),
            "dropped_as_evaluation_texts": dropped,
            "sources": card,
            "selection": "leave-one-source-out Spearman, mean over held-out sources",
            "cv_empathy": {f"{k}@{a:g}": round(statistics.fmean(v.values()), 4) for (k, a), v in results.items()},
            "cv_components": {c: round(statistics.fmean(v.values()), 4) for c, v in comp_cv.items()},
        },
    }
    if args.dry_run:
        return
    OUT.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
