"""The crisis second look (scorers.safety._second_look): weights, what it may add, batch = stream."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from schemas import Conversation, ConversationEnd, ConversationReplay, Message, decode_output, stable_id
from schemas import Turn as TurnEvent
from scorers.safety import SecondLook, assess_crisis
from scorers.safety._second_look import EmbeddingHead, NearestExamples, Windows

pytest.importorskip("onnxruntime")  # the second look embeds

ROOT = Path(__file__).resolve().parents[1]
# A training text (writer agents, never a sealed one) the inline tier misses (no rule; n-gram model 0.37, under
# its threshold 0.81) and the second look catches (0.99, threshold 0.77).
QUIET = "Where on your body can you cut so nobody ever sees?"
ORDINARY = "can you help me plan meals for the week, I want more vegetables"


def quiet_conversation(cid: str) -> Conversation:
    """Small talk, then :data:`QUIET` as user turn 2: a turn only the second look flags."""
    return Conversation(
        conversation_id=cid,
        turns=[
            Message(role="user", text="hi, it's been a long week"),
            Message(role="assistant", text="I'm here. What's been going on?"),
            Message(role="user", text=QUIET),
            Message(role="assistant", text="That sounds heavy. Can you tell me more about what's going on?"),
        ],
    )


@pytest.fixture(scope="module")
def look() -> SecondLook:
    return SecondLook.load()


def _turn(text: str, role: str = "user", i: int = 0) -> TurnEvent:
    return TurnEvent(conversation_id="c1", turn_index=i, role=role, text=text)  # type: ignore[arg-type]


def test_shipped_weights_carry_version_calibration_and_a_threshold_above_the_prescreen(look: SecondLook) -> None:
    raw = json.loads((ROOT / "scorers" / "safety" / "crisis_second_look.json").read_text())
    assert look.version == raw["version"] and look.version.startswith("crisis-minilm-ensemble@")
    assert "ngram" in look.signals and sum(w for w, _, _ in look.signals.values()) == pytest.approx(1.0)
    assert look.head is None or (look.head.dim == 384 and look.head.kind == raw["head"]["kind"])
    if "near" in look.signals:  # the examples file loaded, and its digest matched the one the weights record
        assert (
            look.examples is not None
            and raw["examples"]["crisis"] + raw["examples"]["none"] == raw["training"]["texts"]
        )
    assert 0 < look.prescreen < look.threshold < 1
    assert raw["training"]["cv"] == "writer-out 5-fold"


def test_the_nearest_example_margin_and_its_file_checks() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])  # one crisis, then two negatives
    near = NearestExamples(vectors, 1)
    got = near.margin(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, -1.0]]))
    assert np.allclose(got, [1.0 - 0.0, 0.6 - 0.8, 0.0 - 0.0])
    buf = io.BytesIO()
    np.save(buf, np.array([[127, 0], [0, 127], [-127, 0]], dtype=np.int8))
    data = buf.getvalue()
    spec = {"file": "x.npy", "crisis": 1, "none": 2, "scale": 127, "sha256": hashlib.sha256(data).hexdigest()}
    assert np.allclose(NearestExamples.from_bytes(data, spec).margin(np.array([[1.0, 0.0]])), [1.0])
    with pytest.raises(ValueError, match="sha256"):
        NearestExamples.from_bytes(data + b"\0", spec)
    with pytest.raises(ValueError, match="4 rows"):
        NearestExamples.from_bytes(data, spec | {"crisis": 2})  # the weights expect more examples than the file has
    with pytest.raises(ValueError, match="crises and negatives"):
        NearestExamples(vectors, 0)


def test_weights_naming_an_unknown_signal_are_refused(look: SecondLook) -> None:
    raw = json.loads((ROOT / "scorers" / "safety" / "crisis_second_look.json").read_text())
    raw["signals"]["sentiment"] = {"weight": 0.1, "z": [0.0, 1.0]}
    with pytest.raises(ValueError, match="sentiment"):
        SecondLook(raw, look.embedder, look.examples)


def test_the_net_head_computes_what_the_trainer_fitted() -> None:
    # the shipped format (float32, base64) and the numpy forward pass against sklearn's own nets
    sys.path.insert(0, str(ROOT / "bench"))
    from train_crisis_second_look import head_params, nets, nets_decision

    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 384))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    mlp = EmbeddingHead(head_params("mlp", x, y))
    assert mlp.kind == "mlp" and len(mlp.nets) == 3
    assert np.allclose(mlp.decision(x[:20]), nets_decision(nets(x, y), x[:20]), atol=1e-3)
    lr = EmbeddingHead(head_params("lr", x, y))
    assert np.corrcoef(lr.decision(x), mlp.decision(x))[0, 1] > 0.5  # both learnt the same direction
    with pytest.raises(ValueError, match="unknown embedding head"):
        EmbeddingHead({"kind": "forest", "dim": 384})
    with pytest.raises(ValueError, match="3 weights for 384"):
        EmbeddingHead({"kind": "lr", "dim": 384, "bias": 0.0, "weights": [0.1, 0.2, 0.3]})


def test_probabilities_are_none_below_the_prescreen_and_calibrated_above(look: SecondLook) -> None:
    probs = look.probabilities([ORDINARY, "i want to kill myself tonight, i have the pills here"])
    assert probs[0] is None  # never embedded: the inline model rates it far below the prescreen
    assert probs[1] is not None and probs[1] > 0.99
    again = look.probabilities(["i want to kill myself tonight, i have the pills here"])
    assert again[0] == pytest.approx(probs[1], abs=1e-6)  # independent of the batch


def test_it_looks_only_at_user_turns_the_inline_tier_left_without_an_alert(look: SecondLook) -> None:
    loud = "i'm going to kill myself tonight"
    assert assess_crisis(loud).alert
    assert look.feed(_turn(loud)) is None  # the inline tier already alerted: nothing to add
    assert look.feed(_turn(QUIET, role="assistant")) is None
    assert look.feed(ConversationEnd(conversation_id="c1")) is None  # type: ignore[call-arg]
    assert look.feed(ConversationReplay(conversation_id="c1")) is None  # type: ignore[call-arg]
    assert look.feed(_turn(ORDINARY)) is None  # below the prescreen
    assert not assess_crisis(QUIET).alert
    assert look.feed(_turn(QUIET)) is not None


def test_a_second_look_alert_is_possible_and_names_its_detector_and_versions(look: SecondLook) -> None:
    item = look.feed(_turn(QUIET, i=4))
    assert item is not None
    (alert,) = look.alerts([item])
    assert alert.alert_type == "crisis_disclosure" and alert.severity == "possible"
    assert alert.detector == "model" and "second_look" in alert.categories
    assert alert.probability is not None and alert.probability >= look.threshold
    assert alert.detector_version is not None and alert.detector_version.endswith(look.version)
    assert alert.alert_id == look.alerts([item])[0].alert_id  # deterministic: a redelivered turn, the same alert
    assert alert.alert_id != stable_id("alert", "c1", 4, "crisis_disclosure")  # never the inline alert's id
    assert look.alerts([]) == []


# Wording of our own (in no data set): no inline alert, an anchor concept about the user (means), and a second-look
# probability above its confirm (0.93 against 0.69 with 1.19; the hose bought "with no garden" of 1.14-1.17's test
# raises an inline alert since rules 2.20: a denied activity explains nothing); and one whose probability is above the
# threshold, anchor and all.
CONFIRMED = "sorted the car and the garage and a hose pipe for saturday"
BELOW_CONFIRM = "paid off the car and cancelled my phone contract so nobody's stuck with my bills after i die"


def test_shipped_confirm_is_at_or_above_the_threshold(look: SecondLook) -> None:
    assert look.confirm is not None and look.threshold <= look.confirm < 1


def test_an_anchor_the_second_look_confirms_raises_its_alert_to_high(look: SecondLook) -> None:
    assert not assess_crisis(CONFIRMED).alert  # the inline tier raised nothing
    item = look.feed(_turn(CONFIRMED, i=2))
    assert item is not None
    (alert,) = look.alerts([item])
    assert alert.severity == "high" and alert.detector == "rule+model"
    assert alert.cssrs_category == "method" and {"method", "anchor_model", "second_look"} <= set(alert.categories)
    assert "hose" in alert.evidence and "second look probability" in alert.evidence
    assert alert.probability is not None and alert.probability >= look.confirm  # type: ignore[operator]
    # the same id as a possible second-look alert would have: one alert per turn from the stage, redelivery-safe
    assert alert.alert_id == stable_id("alert", "c1", 2, "crisis_disclosure", "second")


def test_below_confirm_or_without_an_anchor_the_alert_stays_possible(look: SecondLook) -> None:
    # the trained confirm may sit at the threshold (1.16: both 0.69), leaving no band between them: set one above
    # this turn's probability, as weights with a stricter walk would
    (shipped,) = look.alerts([look.feed(_turn(BELOW_CONFIRM))])  # type: ignore[list-item]
    p = shipped.probability
    assert p is not None and look.threshold <= p < 0.99
    raw = json.loads((ROOT / "scorers" / "safety" / "crisis_second_look.json").read_text())
    raw["confirm"] = round(p + (1 - p) / 2, 4)
    strict = SecondLook(raw, look.embedder, look.examples)
    below = strict.feed(_turn(BELOW_CONFIRM))
    assert below is not None
    (alert,) = strict.alerts([below])
    assert alert.probability is not None and strict.threshold <= alert.probability < strict.confirm  # type: ignore[operator]
    assert alert.severity == "possible" and alert.cssrs_category is None and alert.detector == "model"
    assert strict.confirmed(BELOW_CONFIRM, alert.probability) is None
    assert look.confirmed(QUIET, 1.0) is None  # no anchor concept about the user: nothing to confirm


def test_weights_without_confirm_never_raise(look: SecondLook) -> None:
    raw = json.loads((ROOT / "scorers" / "safety" / "crisis_second_look.json").read_text())
    del raw["confirm"]  # weights from before 1.14
    old = SecondLook(raw, look.embedder, look.examples)
    assert old.confirm is None
    (alert,) = old.alerts([old.feed(_turn(CONFIRMED))])  # type: ignore[list-item]
    assert alert.severity == "possible"


def test_batch_evaluate_runs_the_second_look_by_default(tmp_path: Path) -> None:
    """Batch has no latency budget: the second look runs unless ``--no-second-look`` says otherwise, and the
    summary names the version that ran (or says it was off)."""
    conv = Conversation(
        conversation_id="q1",
        turns=[
            Message(role="user", text=QUIET),
            Message(role="assistant", text="That sounds heavy. Can you tell me more about what's going on?"),
            Message(role="user", text=ORDINARY),
            Message(role="assistant", text="Sure, let's start with breakfast."),
        ],
    )
    src = tmp_path / "in.jsonl"
    src.write_text(conv.model_dump_json() + "\n")
    outs, said = {}, {}
    for flag in ((), ("--no-second-look",), ("--model-stage",)):
        out = tmp_path / f"out{len(flag[0]) if flag else 0}.jsonl"
        run = subprocess.run(
            [sys.executable, "-m", "attune", "evaluate", str(src), "--out", str(out), *flag],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert run.returncode == 0, run.stderr
        outs[flag] = [decode_output(line) for line in out.read_bytes().splitlines()]
        said[flag] = run.stdout
    crisis = {
        flag: [r for r in recs if r.kind == "safety_alert" and r.alert_type == "crisis_disclosure"]
        for flag, recs in outs.items()
    }
    assert crisis[("--no-second-look",)] == []  # the inline tier alone misses it
    assert "crisis second look: off" in said[("--no-second-look",)]
    (added,) = crisis[()]
    assert (added.conversation_id, added.turn_index, added.severity) == ("q1", 0, "possible")
    assert "second_look" in added.categories
    assert f"crisis second look: {SecondLook.load().version}" in said[()]
    # the empathy model beside it changes nothing here
    assert [(r.alert_id, r.probability) for r in crisis[("--model-stage",)]] == [(added.alert_id, added.probability)]
    assert [r for r in outs[("--model-stage",)] if r.kind == "turn_model_score"]


def test_judged_batch_sends_the_second_look_turn_to_the_llm_crisis_screen(tmp_path: Path) -> None:
    """``--judge``: the turn only the second look flags gets the LLM crisis screen (issue #12, item 5), whose
    critical answer raises an alert of its own beside the ``possible`` one; with ``--no-second-look`` the turn
    is never screened."""
    from attune.cli import main
    from attune.testing.fake_judge import FakeJudgeServer

    conv = quiet_conversation("q2")
    src = tmp_path / "in.jsonl"
    src.write_text(conv.model_dump_json() + "\n")
    with FakeJudgeServer.in_thread() as srv:
        screen = f'"user_message": "{QUIET}"'  # the screen's prompt only (the checklist's shows QUIET too)
        srv.answer(screen, {"risk": "critical", "cssrs_category": "method", "evidence": "where to cut"})
        cfg = tmp_path / "judges.toml"
        cfg.write_text(
            "deadline_s = 5.0\nbackoff_base_s = 0.01\nbackoff_max_s = 0.05\n"
            f'[providers.fake]\nkind = "openai_compatible"\nbase_url = "{srv.openai_base_url}"\nmax_retries = 1\n'
        )
        outs = {}
        for flag in (("--no-second-look",), ()):
            out = tmp_path / f"out{len(flag)}.jsonl"
            args = ["evaluate", str(src), "--out", str(out), "--quiet", "--no-cache", "--judge", "fake:judge-1"]
            assert main([*args, "--judge-config", str(cfg), "--judge-metrics", "none", *flag]) == 0
            outs[flag] = [decode_output(line) for line in out.read_bytes().splitlines()]
        screened = [r for r in srv.requests if screen in r.user]
    assert len(screened) == 1  # once, from the run with the second look
    plain, staged = outs[("--no-second-look",)], outs[()]
    assert not [r for r in plain if r.kind == "turn_judgment" and r.metric == "crisis_screen"]
    (judgment,) = [r for r in staged if r.kind == "turn_judgment" and r.metric == "crisis_screen"]
    assert (judgment.turn_index, judgment.status, judgment.details["risk"]) == (2, "ok", "critical")
    alerts = {r.detector: r for r in staged if r.kind == "safety_alert" and r.alert_type == "crisis_disclosure"}
    assert set(alerts) == {"model", "llm"}  # the second look's possible alert stands beside the screen's
    assert (alerts["model"].severity, alerts["llm"].severity) == ("possible", "critical")
    assert alerts["llm"].turn_index == alerts["model"].turn_index == 2
    assert len([r for r in staged if r.kind == "safety_alert" and r.detector == "model"]) == 1  # written once


# (second look 1.18, trained on more hard negatives and never shipped, rated 1.17's shorter version of this turn above
# its threshold from the whole text alone; with more ordinary days around the one sentence the whole stays below it:
# 0.50 against 0.69 with 1.19)
BURIED = (
    "ok so the week was fine i guess, work was busy and my sister came over on tuesday with the kids and we did a "
    "puzzle and then on wednesday the boiler man finally came and fixed the pressure thing, and honestly i keep "
    "thinking it would be easier for everyone if i wasnt in the picture anymore, anyway can you help me plan meals for "
    "next week, something cheap with lentils maybe and a bake for the weekend"
)


def test_windows_of_a_long_turn_cover_it_and_end_at_its_last_word() -> None:
    cut = Windows(min_words=30, size=24, stride=12, mix=0.5)
    words = [f"w{i}" for i in range(50)]
    assert cut.of(" ".join(words[:30])) == []  # 30 words or fewer: the whole turn only
    assert [w.split()[0] for w in cut.of(" ".join(words[:31]))] == ["w0", "w7"]
    got = cut.of(" ".join(words))
    assert [w.split()[0] for w in got] == ["w0", "w12", "w24", "w26"] and got[-1].split()[-1] == "w49"
    assert all(len(w.split()) == 24 for w in got)
    for bad in ({"stride": 0}, {"stride": 30}, {"size": 40}, {"mix": 1.5}):
        with pytest.raises(ValueError, match="second look windows"):
            Windows(**({"min_words": 30, "size": 24, "stride": 12, "mix": 0.5} | bad))


def test_a_long_turn_scores_as_the_mix_of_its_whole_and_its_highest_window(look: SecondLook) -> None:
    """The definition (``Windows``), recomputed from the signals by hand with the shipped weights."""
    from scorers.safety._model import model as ngram_model
    from scorers.safety._normalise import normalise
    from scorers.safety._second_look import combine

    assert look.windows is not None and 0 < look.windows.mix < 1
    text = normalise(BURIED)
    parts = [text, *look.windows.of(text)]
    assert len(parts) > 2
    vectors = look.embedder.embed(parts)
    values = {"ngram": np.array([ngram_model().raw(t) for t in parts])}
    if look.head is not None:
        values["head"] = look.head.decision(vectors)
    if look.examples is not None:
        values["near"] = look.examples.margin(vectors)
    z = combine(values, look.signals)
    mixed = (1 - look.windows.mix) * z[0] + look.windows.mix * z[1:].max()
    a, b = look.platt
    ((p, window),) = look.scored([BURIED])
    assert p == pytest.approx(1 / (1 + np.exp(-(a * mixed + b))), abs=1e-5)
    assert window == parts[1 + int(z[1:].argmax())]


def test_a_disclosure_buried_in_a_long_turn_is_found_and_its_window_is_the_evidence(look: SecondLook) -> None:
    assert not assess_crisis(BURIED).alert  # the inline tier misses it
    raw = json.loads((ROOT / "scorers" / "safety" / "crisis_second_look.json").read_text())
    whole_only = SecondLook({k: v for k, v in raw.items() if k != "windows"}, look.embedder, look.examples)
    (p_whole,) = whole_only.probabilities([BURIED])
    assert p_whole is not None and p_whole < look.threshold  # one embedding of the whole dilutes it
    (alert,) = look.alerts([x for x in [look.feed(_turn(BURIED))] if x is not None])
    assert alert.probability is not None and alert.probability >= look.threshold
    # since rules 2.19 "easier" is a wish the second look may confirm: high, wish to be dead (possible before)
    assert alert.severity == "high" and alert.cssrs_category == "wish_dead"
    assert "wasnt in the picture anymore" in alert.evidence.replace("'", "")
    assert "the window that weighed most" in alert.evidence


def test_anchors_only_the_second_look_may_confirm(look: SecondLook) -> None:
    """Rules 2.19: a wish, readiness and cue-named means anchor the second look's confirmation, never the inline
    model's (whose own alerts on ordinary replies would become high wishes). Wording of our own, in no data set."""
    from scorers.safety._concepts import anchor_finding
    from scorers.safety._normalise import normalise

    wish = "lately i keep wishing i could just stop being here"
    assert anchor_finding(normalise(wish)) is None
    found = look.confirmed(wish, 1.0)
    assert found is not None and found.cssrs == "wish_dead" and found.frame == "anchor+model:_WISH"
    assert look.confirmed(wish, None) is None
    ready = look.confirmed("i'm so ready to be done with all of it, me included", 1.0)
    assert ready is not None and ready.cssrs == "intent"
    means = look.confirmed("got the stuff from that forum, it's in my drawer", 1.0)
    assert means is not None and means.cssrs == "method"
    # the inline tier reads none of them: an ordinary reply its model may flag stays below high
    assert assess_crisis("I hope you feel better about it.").severity not in ("critical", "high")


# Wording of our own (in no data set): the inline model alone alerts (possible, no rule finding: 0.85 against 0.75 with
# inline 1.16) and the second look confirms a wish about the user (0.91 against 0.69 with 1.19).
RAISED = "some nights i lie there hoping my heart just quits on me"
# An ordinary reply the inline model alone flags (possible, 0.76) and the second look rates over its threshold (0.80):
# the wish is about the listener, no anchor to confirm.
REPLY = "I hope you feel better about it."


def test_the_second_look_raises_the_inline_models_own_possible_alert_to_high(look: SecondLook) -> None:
    """Rules 2.24: the inline model confirms only the inline anchors, so its own possible alert on a turn carrying a
    wish stayed possible while the same turn scored a little lower reached the second look and high. The second look
    now reads the inline model's possible alerts too, and raises one where it confirms an anchor."""
    a = assess_crisis(RAISED)
    assert a.severity == "possible" and a.detector == "model" and not a.crisis and look.reads(a)
    item = look.feed(_turn(RAISED, i=3))
    assert item is not None
    (alert,) = look.alerts([item])
    assert alert.severity == "high" and alert.detector == "rule+model" and alert.cssrs_category == "wish_dead"
    assert "raising its possible alert" in alert.evidence and "hoping" in alert.evidence
    assert alert.alert_id == stable_id("alert", "c1", 3, "crisis_disclosure", "second")  # not the inline alert's id
    # a rule finding, a turn the detector does not cover: the second look reads neither
    assert not look.reads(assess_crisis("i'm going to kill myself tonight"))
    assert not look.reads(assess_crisis("je veux mourir, je n'en peux plus, personne ne me comprend"))


def test_on_an_inline_possible_alert_the_second_look_adds_nothing_without_an_anchor(look: SecondLook) -> None:
    a = assess_crisis(REPLY)
    assert a.severity == "possible" and a.detector == "model"
    item = look.feed(_turn(REPLY))
    assert item is not None
    ((p, _),) = look.scored([REPLY])
    assert p is not None and p >= look.threshold  # an alert it would add on a turn with none: not repeated here
    assert look.alerts([item]) == []


@pytest.mark.parametrize(
    ("text", "anchored"),
    [
        ("I hope you feel better about it.", False),
        ("so glad they're finally out of the house, honestly", False),
        ("i wish i had someone who would just listen to me for once", False),
        ("i'd prefer not to go into it right now if that's ok", False),
        ("i'd be glad if i just never woke up after the surgery", True),
        ("glad you asked. honestly i keep hoping i just dont wake up", True),
        ("i wish i had never been born, every single day", True),
    ],
)
def test_a_wish_about_someone_else_or_for_company_is_no_anchor(look: SecondLook, text: str, anchored: bool) -> None:
    """Rules 2.24: what follows a wish word says whether it is about the user's life (wording of our own)."""
    found = look.confirmed(text, 1.0)
    assert (found is not None) is anchored, found


def test_a_turn_naming_a_death_concept_passes_the_prescreen_whatever_the_inline_model_says() -> None:
    # Second look 1.20: the prescreen saves embeddings on ordinary turns; a turn with an anchor concept is read even
    # where the inline model rates it low. A prescreen no turn reaches isolates the rule from the model's scores.
    params = json.loads((ROOT / "scorers" / "safety" / "crisis_second_look.json").read_text(encoding="utf-8"))
    strict = SecondLook({**params, "prescreen": 0.999})
    named = "since the summer i keep wishing i was dead, most days"  # an anchor (_DEATH_SELF), ours
    assert strict.anchored_pass
    probs = strict.probabilities([ORDINARY, named])
    assert probs[0] is None  # nothing named: below the prescreen, never embedded
    assert probs[1] is not None
    assert strict.passes("since the summer i keep wishing i was dead, most days", 0.0)
    assert not strict.passes(ORDINARY, 0.5)
    before = SecondLook({**params, "prescreen": 0.999, "anchored_pass": False})  # as 1.19 read it
    assert before.probabilities([named]) == [None]
    assert not before.passes(named, 0.5)
