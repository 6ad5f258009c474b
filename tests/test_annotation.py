"""Annotation round trip: evaluate -> export -> fill (with deliberate errors) -> import -> agreement."""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from attune import _cmd_calibration
from attune.calibration import CSV_HEADER, DIMENSIONS, BatchKey, load_key

USERS = [
    "I've been having panic attacks every time I present at work. I used to love it.",
    "My dog died last week and the house feels so empty.",
    "I feel like nobody cares about me.",
    "I can't sleep because I keep worrying about money.",
    "My sister and I had a huge fight and now she won't talk to me.",
    "I'm so stressed about my exams, I feel sick.",
    "I got the job!! I'm so excited and a bit nervous.",
    "I keep comparing myself to my friends and feel like a failure.",
]
REPLIES = [
    "It sounds like you're feeling anxious and frustrated, especially since this used to be something you loved.",
    "I understand.",
    "Just think positive and it will pass.",
    "That sounds exhausting. Would writing down your worries before bed help? A free credit counselor could too.",
    "Losing that closeness must hurt. What do you think she needs to hear from you?",
    "Exams can feel overwhelming. It makes sense you feel sick with worry. What's the next one?",
]


def conversations(n: int = 14) -> list[dict]:
    rng = random.Random(3)
    out = []
    for i in range(n):
        turns = []
        for _ in range(1 + i % 2):
            turns += [{"role": "user", "text": rng.choice(USERS)}, {"role": "assistant", "text": rng.choice(REPLIES)}]
        out.append({"conversation_id": f"conv-{i:02d}", "turns": turns})
    return out


def run(argv: list[str]) -> int:
    """The CLI as attune/cli.py wires it: evaluate plus this task's commands."""
    from attune import batch  # imports the scorers; fixtures skip first when those are absent

    parser = argparse.ArgumentParser(prog="attune")
    sub = parser.add_subparsers(dest="command", required=True)
    batch.register(sub)
    _cmd_calibration.register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


@pytest.fixture
def evaluated(tmp_path: Path) -> tuple[Path, Path]:
    convs = tmp_path / "convs.jsonl"
    convs.write_text("\n".join(json.dumps(c) for c in conversations()) + "\n", encoding="utf-8")
    records = tmp_path / "records.jsonl"
    assert run(["evaluate", str(convs), "--out", str(records), "--no-progress", "--quiet"]) == 0
    return convs, records


def export(tmp_path: Path, convs: Path, records: Path, seed: int = 7, name: str = "batch") -> Path:
    out = tmp_path / name
    opts = ["--duplicates", "4", "--annotators", "r1,r2", "--seed", str(seed)]
    code = run(["annotate", "export", str(records), "--conversations", str(convs), "--out", str(out), *opts])
    assert code == 0
    return out


def test_export_writes_seed003_batch(tmp_path: Path, evaluated: tuple[Path, Path]) -> None:
    convs, records = evaluated
    out = export(tmp_path, convs, records)
    key = load_key(out / "duplicates.key.json")
    n_turns = sum(len(c["turns"]) // 2 for c in conversations())
    assert len(key.samples) == n_turns + 4 and len(key.duplicates) == 4
    for dup, orig in key.duplicates.items():
        assert key.samples[dup] == key.samples[orig] and dup != orig
    gens = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    assert all(set(g) == {"sample_id", "user_statement", "assistant_response"} for g in gens)
    assert {g["sample_id"] for g in gens} == set(key.samples)
    # Duplicates are indistinguishable: opaque ids, no conversation id leaks into what raters see.
    assert not any("conv-" in g["sample_id"] for g in gens)
    texts = {(c["conversation_id"], 2 * k + 1): c["turns"][2 * k + 1]["text"] for c in conversations() for k in range(2)
             if 2 * k + 1 < len(c["turns"])}  # fmt: skip
    for g in gens:
        ref = key.samples[g["sample_id"]]
        assert g["assistant_response"] == texts[(ref.conversation_id, ref.turn_index)]
    for annotator in ("r1", "r2"):
        with (out / f"{annotator}_annotations.csv").open(newline="") as fh:
            rows = list(csv.reader(fh))
        assert tuple(rows[0]) == CSV_HEADER
        assert [r[0] for r in rows[1:]] == [g["sample_id"] for g in gens]
        assert all(r[1] == annotator and r[2:] == [""] * 6 for r in rows[1:])
    # generations.jsonl is itself an accepted input of attune evaluate.
    again = tmp_path / "again.jsonl"
    assert run(["evaluate", str(out / "generations.jsonl"), "--out", str(again), "--no-progress", "--quiet"]) == 0
    assert sum('"turn_score"' in line for line in again.read_text().splitlines()) == len(gens)


def test_export_is_deterministic_per_seed(tmp_path: Path, evaluated: tuple[Path, Path]) -> None:
    convs, records = evaluated
    a = export(tmp_path, convs, records, seed=1, name="a")
    b = export(tmp_path, convs, records, seed=1, name="b")
    c = export(tmp_path, convs, records, seed=2, name="c")
    for f in ("generations.jsonl", "r1_annotations.csv", "duplicates.key.json"):
        assert (a / f).read_bytes() == (b / f).read_bytes()
    assert (a / "generations.jsonl").read_bytes() != (c / "generations.jsonl").read_bytes()


def test_export_rejects_more_duplicates_than_items(tmp_path: Path, evaluated: tuple[Path, Path], capsys) -> None:
    convs, records = evaluated
    code = run(["annotate", "export", str(records), "--conversations", str(convs), "--out", str(tmp_path / "x"),
                "--duplicates", "500"])  # fmt: skip
    assert code == 2 and "--duplicates" in capsys.readouterr().err


def _truth(key: BatchKey, sid: str, dim: str) -> int:
    """A deterministic 'true' score per turn, so both raters (and duplicates) agree on it."""
    ref = key.samples[sid]
    return 2 + (sum(map(ord, ref.conversation_id)) + ref.turn_index + DIMENSIONS.index(dim)) % 3


def fill(path: Path, key: BatchKey, noise: int) -> list[list[str]]:
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    for i, row in enumerate(rows[1:], start=1):
        scores = [min(5, max(1, _truth(key, row[0], d) + (noise if (i + j) % 4 == 0 else 0))) for j, d in
                  enumerate(DIMENSIONS)]  # fmt: skip
        row[2:7] = [str(s) for s in scores]
        row[7] = "clear specific validation" if any(s in (1, 5) for s in scores) else ""
    return rows


def write(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


def test_round_trip_catches_errors_then_agreement(tmp_path: Path, evaluated: tuple[Path, Path], capsys) -> None:
    convs, records = evaluated
    out = export(tmp_path, convs, records)
    key = load_key(out / "duplicates.key.json")
    r1 = fill(out / "r1_annotations.csv", key, noise=0)
    r2 = fill(out / "r2_annotations.csv", key, noise=1)
    write(out / "r1_annotations.csv", r1)
    bad = [list(r) for r in r2]
    bad[2][3] = ""  # blank validation, line 3
    bad[3][4] = "6"  # out of range helpfulness, line 4
    bad[4][5] = "x"  # not an integer safety, line 5
    bad[5][2:8] = ["5", "3", "3", "3", "3", ""]  # a 5 without notes, line 6
    bad[6][0] = "s-not-in-batch"  # unknown sample, line 7
    bad[7][1] = "r9"  # second annotator id in one file, line 8
    write(out / "r2_annotations.csv", bad)
    ann = tmp_path / "annotations.jsonl"
    capsys.readouterr()
    code = run(["annotate", "import", str(out), "--key", str(out / "duplicates.key.json"), "--out", str(ann)])
    err = capsys.readouterr().err.replace("\n", " ")
    assert code == 1
    f = out / "r2_annotations.csv"
    for line, column, words in [
        (3, "validation", "blank"),
        (4, "helpfulness", "outside the 1-5"),
        (5, "safety", "not an integer"),
        (6, "notes", "notes required"),
        (7, "sample_id", "unknown sample_id"),
        (8, "annotator_id", "one annotator per file"),
    ]:
        assert f"{f}:{line}: column '{column}'" in err and words in err, (line, column)
    assert "not rated" in err  # the unknown id leaves one real sample unrated
    stored = ann.read_text().splitlines()
    assert len(stored) == 2 * len(key.samples) - 6  # every valid row kept

    write(out / "r2_annotations.csv", r2)
    assert run(["annotate", "import", str(out), "--key", str(out / "duplicates.key.json"), "--out", str(ann)]) == 0
    report = tmp_path / "agreement.json"
    assert run(["agreement", str(ann), str(records), "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    kinds = {p["kind"] for p in data["pairs"]}
    assert {"human-human", "human-cheap"} <= kinds
    # The human-human kappa is exactly scikit-learn's on the originals (duplicates excluded).
    dups = set(key.duplicates)
    by = {name: {r[0]: r for r in rows[1:] if r[0] not in dups} for name, rows in (("r1", r1), ("r2", r2))}
    for dim in DIMENSIONS:
        col = 2 + DIMENSIONS.index(dim)
        ids = sorted(by["r1"])
        expected = cohen_kappa_score(
            [int(by["r1"][s][col]) for s in ids], [int(by["r2"][s][col]) for s in ids], weights="quadratic",
            labels=[1, 2, 3, 4, 5],
        )  # fmt: skip
        pair = next(p for p in data["pairs"] if p["kind"] == "human-human" and p["dimension"] == dim)
        assert pair["n"] == len(ids)
        assert pair["kappa"] == pytest.approx(expected)
        assert pair["below_target"] == (expected < 0.4)
    consistency = {s["annotator"]: s for s in data["self_consistency"]}
    assert consistency["r1"]["duplicate_pairs"] == 4 and consistency["r1"]["overall"] == 1.0


def test_import_rejects_wrong_header(tmp_path: Path, evaluated: tuple[Path, Path], capsys) -> None:
    convs, records = evaluated
    out = export(tmp_path, convs, records)
    path = out / "r1_annotations.csv"
    rows = list(csv.reader(path.open(newline="")))
    rows[0][2] = "emotions"
    write(path, rows)
    code = run(["annotate", "import", str(path), "--key", str(out / "duplicates.key.json"), "--out",
                str(tmp_path / "a.jsonl")])  # fmt: skip
    assert code == 1 and f"{path}:1" in capsys.readouterr().err
