"""Agreement of the cheap empathy signal with human experts, measured through ``attune evaluate``.

Usage: .venv/bin/python bench/ratings_via_evaluate.py [--data ../shared/data/empathy-ratings]

Runs the real batch command on the empathy-ratings folder (each rated item becomes a conversation whose
last assistant turn is the rated response), reads the ``turn_score`` records it wrote, and prints Spearman
of (a) the record's ``empathy`` (attune's cheap signal, 1-5), (b) the record's seed 004
``emotional_intelligence`` metric as attune implements it, and (c) seed 004's raw keyword logic exactly as
written (``scorers.voice.raw``), each against the mean of the three experts. EPITOME's target is the sum of
its three 0-2 levels; EmpatheticDialogues' is the 1-5 empathy rating. Items are split into halves A/B by a
hash of the id (``attune.calibration.half_of``); the empathy signal was tuned on half A only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from statistics import fmean

from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attune.calibration import half_of, load_empathy_ratings  # noqa: E402
from attune.cli import main as attune  # noqa: E402
from schemas import TurnScore, decode_output  # noqa: E402
from scorers.voice import raw  # noqa: E402

EXPERTS = ("expert1", "expert2", "expert3")


def _rho(xs: list[float], ys: list[float]) -> str:
    if len(set(xs)) < 2:
        return "const"
    r = spearmanr(xs, ys).statistic
    return f"{r:+.2f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "empathy-ratings"))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scored.jsonl"
        code = attune(["evaluate", args.data, "--out", str(out), "--no-progress", "--quiet"])
        if code != 0:
            raise SystemExit(f"attune evaluate exited {code}")
        last: dict[str, TurnScore] = {}
        for line in out.read_bytes().splitlines():
            rec = decode_output(line)
            if isinstance(rec, TurnScore):
                prev = last.get(rec.conversation_id)
                if prev is None or rec.turn_index > prev.turn_index:
                    last[rec.conversation_id] = rec

    print(f"command: attune evaluate {args.data} --out scored.jsonl   ({len(last)} rated items scored)\n")
    header = ("dataset", "half", "n", "empathy signal", "seed004 EI (attune)", "seed004 raw")
    print(f"{header[0]:<22}{header[1]:<6}{header[2]:>4}  {header[3]:>15}  {header[4]:>20}  {header[5]:>12}")
    for ds in load_empathy_ratings(args.data):
        dims = ds.dimensions if ds.key == "epitome" else ("empathy",)
        for half in ("A", "B", "all"):
            ids = [i for i in ds.ids if half == "all" or half_of(i) == half]
            target, ours, ei, raw_ei = [], [], [], []
            for i in ids:
                rec = last.get(f"{ds.key}:{i}")
                if rec is None:
                    continue
                target.append(sum(fmean(ds.ratings[e][d][i] for e in EXPERTS) for d in dims))
                ours.append(rec.empathy)
                ei.append(rec.metrics["emotional_intelligence"])
                dialogue = ds.dialogues[i]
                user = next((t for r, t in reversed(dialogue) if r == "user"), "")
                reply = next(t for r, t in reversed(dialogue) if r == "assistant")
                raw_ei.append(raw.emotional_intelligence(reply, user))
            print(
                f"{ds.title:<22}{half:<6}{len(target):>4}  {_rho(ours, target):>15}  {_rho(ei, target):>20}  "
                f"{_rho(raw_ei, target):>12}"
            )


if __name__ == "__main__":
    main()
