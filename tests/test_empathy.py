"""The cheap empathy signal: scale, components, penalties and the seed 000 anchor orderings it must keep."""

from __future__ import annotations

from schemas import Message
from scorers._base import Exchange
from scorers.empathy import PENALTIES, WEIGHTS, _valence_of, empathy_components, empathy_signal

NOBODY_CARES = "I feel like nobody cares about me."
FINANCES = "I can't sleep at night because I keep worrying about my finances."


def ex(user: str, reply: str, history: tuple[Message, ...] = ()) -> Exchange:
    return Exchange("c", 1, user, reply, history)


def test_scale_and_empty_reply() -> None:
    assert empathy_signal(ex("I feel sad", "")) == 1.0
    for reply in ("ok", "I'm so sorry, that sounds awful. How are you holding up?", "Get over it."):
        assert 1.0 <= empathy_signal(ex("I feel sad", reply)) <= 5.0


def test_seed000_validation_anchors_keep_their_order() -> None:
    # seed 000, Dimension 2 (validation & warmth): the score-5, score-2 and score-1 example replies
    five = (
        "Feeling invisible and uncared for is a deeply painful experience, and I want you to know that what "
        "you're feeling is completely valid. Loneliness can be overwhelming, and it takes real courage to share that."
    )
    two = "I hear you. Have you tried joining some social groups or clubs?"
    one = "Lots of people feel that way. You need to stop feeling sorry for yourself and go make some friends."
    s5, s2, s1 = (empathy_signal(ex(NOBODY_CARES, r)) for r in (five, two, one))
    assert s5 > s2 > s1
    assert s1 == 1.0  # dismissive ("stop feeling sorry", "lots of people feel") clamps to the floor


def test_seed000_emotion_anchor_score1_is_lowest() -> None:
    user = "I've been having panic attacks every time I have to present at work."
    five = (
        "It sounds like you're experiencing significant anxiety around presentations, and it must be especially "
        "frustrating since this is something you used to enjoy. The shift from confidence to fear can feel "
        "really disorienting."
    )
    three = (
        "That sounds really difficult. Dealing with panic attacks is very challenging and I can see why that "
        "would be stressful for you."
    )
    one = "Public speaking is a common skill. You should practice more to get better at it."
    s5, s3, s1 = (empathy_signal(ex(user, r)) for r in (five, three, one))
    # the cheap signal separates both empathic replies from the advice-only one by a wide margin;
    # it does not separate "specific" (5) from "adequate" (3): see docs/heuristics.md, limitations
    assert min(s5, s3) - s1 >= 1.5


def test_toxic_positivity_and_dismissal_are_penalised() -> None:
    warm = empathy_signal(ex(FINANCES, "That sounds exhausting. What feels most pressing right now?"))
    toxic = empathy_signal(ex(FINANCES, "Just think positive! Everything will work out."))
    assert warm >= 2.5 and toxic == 1.0
    c = empathy_components(ex(FINANCES, "Cheer up, it could be worse."))
    assert c.toxic_positivity == 1.0
    assert empathy_components(ex("I failed my exam", "Get over it, it's not a big deal.")).dismissive == 1.0


def test_components_fire_on_their_evidence() -> None:
    c = empathy_components(
        ex(
            "My dog died yesterday and the house feels empty.",
            "Oh no, I'm so sorry. Losing your dog must be heartbreaking, and it makes sense the house feels "
            "empty. How are you holding up?",
        )
    )
    assert c.reaction == 1.0  # "oh no", "i'm so sorry"
    assert c.emotion == 1.0  # heartbreaking, empty... at least two distinct feeling words
    assert c.validation == 1.0  # "makes sense", "must be heartbreaking"
    assert c.interpretation == 1.0  # "must be"
    assert c.exploration == 1.0  # second-person question
    assert c.reflection == 1.0  # "dog", "house" shared with the user
    assert c.score == 5.0


def test_apostrophe_free_peer_writing_counts() -> None:
    assert empathy_components(ex("My plans fell through", "im sorry, thats the worst")).reaction == 1.0


def test_self_oriented_and_advice_only_flags() -> None:
    c = empathy_components(
        ex("My dog died", "I remember when my cat died. I cried for days and my mom bought me a new one.")
    )
    assert c.self_oriented == 1.0
    advice = empathy_components(ex(FINANCES, "You should make a budget and try to cut costs."))
    assert advice.advice_only == 1.0
    not_only = empathy_components(ex(FINANCES, "That must be so stressful. You should make a budget."))
    assert not_only.advice_only == 0.0


def test_reflection_uses_the_previous_user_turn() -> None:
    history = (
        Message(role="user", text="My sister moved to Canada last month.", turn_index=0),
        Message(role="assistant", text="How has that been?", turn_index=1),
        Message(role="user", text="Quiet. Really quiet.", turn_index=2),
    )
    c = empathy_components(ex("Quiet. Really quiet.", "It must be strange without your sister around.", history))
    assert c.reflection >= 0.5


def test_vader_lexicon_valence_with_negation() -> None:
    assert _valence_of(("good",)) > 0
    assert _valence_of(("not", "good")) < 0
    assert _valence_of(("sorry",), frozenset({"sorry"})) == 0.0


def test_weights_documented_shape() -> None:
    assert set(WEIGHTS) == {
        "reaction", "emotion", "validation", "interpretation", "exploration", "reflection", "congruence",
    }  # fmt: skip
    assert set(PENALTIES) == {"dismissive", "toxic_positivity", "advice_only", "self_oriented", "tone_mismatch"}
    assert all(w > 0 for w in (*WEIGHTS.values(), *PENALTIES.values()))


def test_deterministic() -> None:
    e = ex(NOBODY_CARES, "That sounds so lonely. Do you want to tell me more?")
    assert len({empathy_signal(e) for _ in range(5)}) == 1
