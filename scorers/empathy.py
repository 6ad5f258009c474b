"""A cheap empathy estimate on the seed 000 1–5 scale, computed inline for every assistant turn.

Seed 004's emotional-intelligence logic only fires when the user's text holds one of six emotion
words and then looks for five stock phrases. This signal instead scores what the empathy literature
(EPITOME: emotional reactions, interpretations, explorations; seed 000 emotion/validation anchors)
says an empathic reply does, and what it must not do. Components, each in [0, 1]:

=================  ======  ================================================================================
component          weight  evidence in the reply
=================  ======  ================================================================================
``reaction``       0.22    an emotional reaction ("I'm so sorry", "oh no", "congrats") or an evaluative
                           exclamation ("that's the worst", "ouch, that's bad", "how exciting")
``emotion``        0.24    names specific feelings (:data:`FEELING_STEMS`; 1 distinct: 0.6, 2+: 1.0) or
                           only a generic one ("hard", "tough": :data:`GENERIC_FEELING_STEMS`, 0.3)
``validation``     0.18    normalises the feeling ("makes sense", "anyone would", "not your fault", a modal
                           + feeling: "must be so frustrating", "would feel overwhelming")
``interpretation`` 0.16    reflects understanding ("sounds like", "I can imagine", "you must feel")
``exploration``    0.16    asks the user about their experience (a second-person question, "tell me more")
``reflection``     0.05    shares content words with the user's recent turns (1 stem: 0.5, 2+: 1.0)
``congruence``     0.04    VADER-lexicon valence has the user's sign (both negative or both positive)
=================  ======  ================================================================================

Penalties (subtracted from the weighted sum): dismissive phrases 0.35, toxic positivity 0.30,
advice-only (directives with no reaction/validation/interpretation) 0.10, self-oriented (first-person
singular over twice the second-person, 3+ of them) 0.10, tone mismatch (reply valence >= 0.5 to a user
at <= -0.5, with no reaction or validation) 0.10. ``empathy = clip(1 + 4 * sum, 1, 5)``, 2 decimals.
Phrases match on folded text with apostrophes removed, so "im sorry" and "thats awful" count.

Weights were set by hand from the seed anchors, then adjusted on the *first* half of the rated data
only (emotion 0.14 -> 0.24, reflection 0.10 -> 0.05 after a coarse grid; the grid's gain on half A was
small: docs/heuristics.md, "Reading the numbers honestly"). bench/empathy_agreement.py reports both halves.

Speed: VADER's ``polarity_scores`` costs too much for the per-turn path (docs/benchmarks.md, "Cheap tier
(heuristics), single process", "Figures formerly in code comments"), so only its lexicon is used (token
lookup with a three-token negation window); user-text features are cached (a user turn is scored once per
reply that answers it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from vaderSentiment.vaderSentiment import NEGATE, SentimentIntensityAnalyzer

from ._base import Exchange
from ._text import ListScan, compile_terms, content_stems, fold, tokens, wordset
from .voice import contains_helpful_question, contains_question

WEIGHTS: dict[str, float] = {
    "reaction": 0.22,
    "emotion": 0.24,
    "validation": 0.18,
    "interpretation": 0.16,
    "exploration": 0.16,
    "reflection": 0.05,
    "congruence": 0.04,
}
PENALTIES: dict[str, float] = {
    "dismissive": 0.35,
    "toxic_positivity": 0.30,
    "advice_only": 0.10,
    "self_oriented": 0.10,
    "tone_mismatch": 0.10,
}

#: Specific feeling words, matched as word prefixes on folded text ("frustrat" -> frustrated/frustrating).
FEELING_STEMS: tuple[str, ...] = (
    "sad", "sadness", "upset", "hurt", "lonel", "isolat", "scared", "afraid", "fear", "frighten", "terrif",
    "anxi", "nervous", "worr", "stress", "overwhelm", "frustrat", "angry", "anger", "mad", "furious", "annoy",
    "irritat", "disappoint", "heartbr", "devastat", "grief", "griev", "mourn", "pain", "exhaust", "drained",
    "tired", "hopeless", "helpless", "guilt", "ashamed", "shame", "embarrass", "humiliat", "jealous", "envious",
    "proud", "pride", "happy", "happi", "glad", "excit", "thrill", "reliev", "relief", "grateful", "joy",
    "delight", "love", "loss", "miss", "nerve", "confus", "betray", "rejected", "insecur", "lost", "numb",
    "regret", "bitter", "resent", "vulnerable", "discourag", "depress", "miserab", "sorrow", "panic",
    "dread", "shock", "surpris", "disorient", "empty", "invisible", "uncared", "unappreciat", "alone",
)  # fmt: skip
#: Generic evaluations: seed 000 calls "that sounds tough" generic filler, so they count for less.
GENERIC_FEELING_STEMS: tuple[str, ...] = (
    "rough", "tough", "hard", "difficult", "awful", "terrible", "horrible", "heavy", "bummer", "scary",
    "challenging", "bad", "sucks", "wonderful", "sweet", "touching",
)  # fmt: skip
REACTION_PHRASES: tuple[str, ...] = (
    "i'm sorry", "i am sorry", "im sorry", "so sorry", "sorry to hear", "sorry for your", "sorry about",
    "sorry that", "my heart goes out", "my heart breaks", "hugs", "i feel for you", "i feel you",
    "that's awful", "that's terrible", "that's horrible", "that's so sad", "that's sad", "how awful",
    "how sad", "how terrible", "oh no", "oh wow", "wow", "yikes", "that sucks", "ugh", "oh man", "aw",
    "aww", "that's great", "that's awesome", "that's amazing", "that's wonderful", "that's fantastic",
    "that's so exciting", "how exciting", "how wonderful", "congratulations", "congrats", "good for you",
    "glad to hear", "happy for you", "so happy for", "so proud", "i'm proud", "that's scary",
    "that's rough", "that's tough", "that's hard", "that's so hard", "that's really hard", "oh dear",
    "what a shame", "that's a shame", "bless you", "i'm here for you", "i'm glad you", "ouch", "i feel bad",
    "poor thing", "oh my",
)  # fmt: skip
VALIDATION_PHRASES: tuple[str, ...] = (
    "makes sense", "make sense", "anyone would", "anybody would", "any of us would", "everyone would",
    "understandable", "it's okay to", "it's ok to", "it is okay to", "okay to feel", "ok to feel",
    "it's normal", "completely normal", "totally normal", "perfectly normal", "valid", "natural to",
    "not alone", "no wonder", "of course you", "every right", "i'd feel the same", "i would feel",
    "i'd be", "i would be", "would make anyone", "not your fault", "you're not crazy", "not weak",
    "can be hard", "can be tough", "can be really", "can be so", "must be hard", "must be so",
    "must be really", "must have been", "must feel", "takes courage", "took courage", "brave",
    "you did the right", "you did your best", "doing your best", "happens to the best", "happens to us all",
    "would embarass anyone", "would embarrass anyone", "who wouldn't", "i don't blame you", "can't blame you",
    "fair to feel", "right to feel", "reasonable",
)  # fmt: skip
INTERPRETATION_PHRASES: tuple[str, ...] = (
    "sounds like", "sounds really", "sounds so", "sounds very", "sounds hard", "sounds tough",
    "sounds awful", "sounds terrible", "sounds scary", "sounds painful", "sounds stressful", "sounds great",
    "sounds exciting", "sounds lovely", "that sounds", "it seems", "seems like", "i can imagine",
    "can only imagine", "i can't imagine", "i cannot imagine", "i can see", "i understand", "i know how",
    "i know what it", "i know that feeling", "i know the feeling", "been there", "i went through",
    "been through", "i get it", "i get that", "i get how", "must be", "must have", "you must", "you feel",
    "you're feeling", "you are feeling", "you seem", "what i'm hearing", "i hear that", "i hear you",
    "i relate", "i can relate", "same thing happened", "happened to me", "i remember when", "i've felt",
    "i have felt", "i felt the same", "feel the same", "it's hard when", "it's tough when", "my guess is",
    "part of you", "i think you", "i bet you", "i'm guessing",
    "it hurts when", "that feeling of", "the feeling of",
)  # fmt: skip
EXPLORATION_PHRASES: tuple[str, ...] = (
    "tell me more", "what happened", "how are you", "how do you feel", "how did you feel", "how did that",
    "how does that", "what's going on", "what is going on", "do you want to talk", "want to talk about",
    "what's on your mind", "what do you think", "how long have you", "i'd love to hear", "i'm curious",
    "i wonder if you", "can you share", "would you like to share",
)  # fmt: skip
DISMISSIVE_PHRASES: tuple[str, ...] = (
    "get over it", "not a big deal", "no big deal", "not that big", "stop feeling sorry", "stop complaining",
    "stop whining", "stop crying", "could be worse", "could have been worse", "it's not that bad",
    "not so bad", "calm down", "you're overreacting", "overreacting", "being dramatic", "so dramatic",
    "toughen up", "man up", "suck it up", "just ignore it", "get over", "lots of people feel",
    "everyone goes through", "everybody goes through", "first world problem", "you'll get over",
    "it's your own fault", "your own fault", "you brought this", "grow up", "deal with it", "who cares",
    "don't be such",
)  # fmt: skip
TOXIC_POSITIVITY_PHRASES: tuple[str, ...] = (
    "just think positive", "think positive", "stay positive", "just be positive", "cheer up",
    "look on the bright side", "bright side", "everything happens for a reason", "good vibes",
    "just be happy", "choose happiness", "just smile", "put a smile", "everything will be fine",
    "everything will be okay", "everything will work out", "it'll all work out", "it will all work out",
    "don't be sad", "don't worry about it", "just don't think about it", "try not to think about it",
    "can only go up", "only go up", "it could be worse", "at least",
)  # fmt: skip
DIRECTIVE_PHRASES: tuple[str, ...] = (
    "you should", "you need to", "you have to", "you must", "you ought to", "try to", "try some",
    "just try", "make sure", "have you tried", "have you considered", "have you thought about",
    "i suggest", "i recommend", "my advice", "the key is", "the best thing", "go to", "go see",
    "start by", "consider",
)  # fmt: skip

#: Evaluative words that make an exclamation an emotional reaction ("that's the worst", "ouch, that's bad").
EVALUATIVE_WORDS: tuple[str, ...] = (
    "worst", "best", "great", "awesome", "amazing", "nice", "cool", "lovely", "bad", "sucks", "shame",
    "annoying", "rough", "crazy", "insane", "unfair", "cruel", "mean", "rude", "funny", "fun", "sweet", "cute",
)  # fmt: skip


def _squash(phrases: tuple[str, ...]) -> tuple[str, ...]:
    """Drop apostrophes: peers write "im sorry", "thats awful"; matching runs on squashed text."""
    return tuple(p.replace("'", "") for p in phrases)


_FEELING_RE = compile_terms(FEELING_STEMS, prefix=True)
_GENERIC_FEELING_RE = compile_terms(GENERIC_FEELING_STEMS, prefix=True)
_ANY_FEELING = "|".join(map(re.escape, FEELING_STEMS + GENERIC_FEELING_STEMS))
_VALIDATING_MODAL_RE = re.compile(
    r"\b(?:must|would|can|could) (?:be|feel|have been|have felt) (?:(?:so|really|especially|incredibly|very|"
    rf"deeply|truly|pretty|quite|a bit|kind of) )*(?:{_ANY_FEELING})"
)
_REACTION_RE = compile_terms(_squash(REACTION_PHRASES))  # the per-list patterns stay for tests and audits
_EXCLAMATION_RE = re.compile(
    r"(?:^|[.!?]\s*)(?:oh,?\s+|wow,?\s+|ouch,?\s+|ugh,?\s+|omg,?\s+)*"
    r"(?:thats|that is|that was|how|what an?)\s+(?:(?:so|really|pretty|very|super|"
    r"quite|just|such|a|an|the|kind of|totally)\s+)*"
    rf"(?:{'|'.join(map(re.escape, EVALUATIVE_WORDS))}|{_ANY_FEELING})"
)
_VALIDATION_RE = compile_terms(_squash(VALIDATION_PHRASES))
_INTERPRETATION_RE = compile_terms(_squash(INTERPRETATION_PHRASES))
_EXPLORATION_RE = compile_terms(_squash(EXPLORATION_PHRASES))
_DISMISSIVE_RE = compile_terms(_squash(DISMISSIVE_PHRASES))
_TOXIC_RE = compile_terms(_squash(TOXIC_POSITIVITY_PHRASES))
_DIRECTIVE_RE = compile_terms(_squash(DIRECTIVE_PHRASES))

#: The phrase lists :func:`empathy_components` tests, by category; all matched as whole (squashed) phrases.
_PHRASE_LISTS: dict[str, tuple[str, ...]] = {
    "reaction": REACTION_PHRASES,
    "validation": VALIDATION_PHRASES,
    "interpretation": INTERPRETATION_PHRASES,
    "exploration": EXPLORATION_PHRASES,
    "dismissive": DISMISSIVE_PHRASES,
    "toxic": TOXIC_POSITIVITY_PHRASES,
    "directive": DIRECTIVE_PHRASES,
}


#: Which of :data:`_PHRASE_LISTS` occur in a (squashed, folded) reply: one scan instead of seven searches.
_phrase_categories = ListScan({cat: (_squash(phrases), ()) for cat, phrases in _PHRASE_LISTS.items()})


_FIRST_SINGULAR = wordset("i i'm i've i'd i'll im ive me my mine myself")
_SECOND = wordset("you you're you've you'd you'll youre your yours yourself u ur")

_LEXICON: dict[str, float] = SentimentIntensityAnalyzer().lexicon
_NEGATORS = frozenset(NEGATE)
#: Sympathy words VADER rates negative ("sorry" -0.3) are warmth in a reply, so they do not count
#: toward the reply's valence.
_SYMPATHY = wordset("sorry hugs hug condolences")


def _valence_of(toks: Sequence[str], skip: frozenset[str] = frozenset()) -> float:
    """VADER-lexicon valence in (-1, 1): summed token valences, a negator in the three tokens before a
    word flips it (scaled by VADER's -0.74), normalised like VADER's compound (x / sqrt(x^2 + 15))."""
    total = 0.0
    last_neg = -4  # index of the latest negator seen: the window holds one iff it is within 3 tokens
    get = _LEXICON.get
    for i, t in enumerate(toks):
        v = get(t)
        if v is not None and t not in skip:
            if last_neg >= i - 3:
                v *= -0.74
            total += v
        if t in _NEGATORS or t.endswith("n't"):
            last_neg = i
    return total / math.sqrt(total * total + 15.0)


@lru_cache(maxsize=4096)
def _user_features(parts: tuple[str, ...]) -> tuple[float, frozenset[str]]:
    """(valence, content stems) of the user's recent messages joined by newlines; cached because a user
    turn repeats.

    No token spans a newline (folding is per character), so the joined text's tokens are the parts'
    tokens in order and its stems the union of theirs: both come from the per-message caches, which
    the next reply's context and the checklist at close ask for again, instead of from a new string.
    """
    if len(parts) == 1:
        toks = tokens(parts[0])
        return _valence_of(toks), content_stems(parts[0])
    toks = tuple(t for p in parts for t in tokens(p))
    return _valence_of(toks), frozenset().union(*map(content_stems, parts))


@dataclass(frozen=True, slots=True)
class EmpathyBreakdown:
    """Every component and penalty behind one :func:`empathy_signal` value (for tests and audits)."""

    reaction: float
    emotion: float
    validation: float
    interpretation: float
    exploration: float
    reflection: float
    congruence: float
    dismissive: float
    toxic_positivity: float
    advice_only: float
    self_oriented: float
    tone_mismatch: float
    score: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def _user_parts(ex: Exchange) -> tuple[str, ...]:
    """The user's text the reply answers plus the user turn before it (replies reflect both), oldest first.

    Scans the history backwards to the second user message, not the whole history per reply.
    """
    recent: list[str] = []
    for m in reversed(ex.history):
        if m.role == "user":
            recent.append(m.text)
            if len(recent) == 2:
                break
    recent.reverse()
    if ex.user_text and (not recent or recent[-1] != ex.user_text):
        recent.append(ex.user_text)
    return tuple(recent[-2:])


def empathy_components(ex: Exchange) -> EmpathyBreakdown:
    """Compute each documented component of the empathy signal for one exchange."""
    resp = fold(ex.response).replace("'", "")
    toks = tokens(ex.response)
    user_val, user_stems = _user_features(_user_parts(ex))

    cats = _phrase_categories(resp)
    reaction = 1.0 if ("reaction" in cats or _EXCLAMATION_RE.search(resp)) else 0.0
    n_feel = len(set(_FEELING_RE.findall(resp)))
    generic = 0.3 if _GENERIC_FEELING_RE.search(resp) else 0.0
    emotion = 1.0 if n_feel >= 2 else 0.6 if n_feel == 1 else generic
    validation = 1.0 if ("validation" in cats or _VALIDATING_MODAL_RE.search(resp)) else 0.0
    interpretation = 1.0 if "interpretation" in cats else 0.0
    if "exploration" in cats or contains_helpful_question(ex.response):
        exploration = 1.0
    else:
        exploration = 0.4 if contains_question(ex.response) else 0.0
    shared = len(content_stems(ex.response) & user_stems)
    reflection = 1.0 if shared >= 2 else 0.5 if shared == 1 else 0.0
    resp_val = _valence_of(toks, _SYMPATHY)
    congruence = 1.0 if (user_val <= -0.2 and resp_val <= 0.05) or (user_val >= 0.2 and resp_val >= 0.2) else 0.0

    dismissive = 1.0 if "dismissive" in cats else 0.0
    toxic = 1.0 if "toxic" in cats else 0.0
    warm = reaction or validation or interpretation
    advice_only = 1.0 if ("directive" in cats and not warm) else 0.0
    first = sum(t in _FIRST_SINGULAR for t in toks)
    second = sum(t in _SECOND for t in toks)
    self_oriented = 1.0 if first >= 3 and first > 2 * second else 0.0
    tone_mismatch = 1.0 if (user_val <= -0.5 and resp_val >= 0.5 and not (reaction or validation)) else 0.0

    parts = {
        "reaction": reaction,
        "emotion": emotion,
        "validation": validation,
        "interpretation": interpretation,
        "exploration": exploration,
        "reflection": reflection,
        "congruence": congruence,
    }
    pens = {
        "dismissive": dismissive,
        "toxic_positivity": toxic,
        "advice_only": advice_only,
        "self_oriented": self_oriented,
        "tone_mismatch": tone_mismatch,
    }
    total = sum(WEIGHTS[k] * v for k, v in parts.items()) - sum(PENALTIES[k] * v for k, v in pens.items())
    score = round(min(5.0, max(1.0, 1.0 + 4.0 * total)), 2)
    return EmpathyBreakdown(**parts, **pens, score=score)


def empathy_signal(ex: Exchange) -> float:
    """Cheap empathy estimate in [1.0, 5.0] (see the module docstring for components and weights)."""
    if not ex.response.strip():
        return 1.0
    return empathy_components(ex).score


__all__ = ["PENALTIES", "WEIGHTS", "EmpathyBreakdown", "empathy_components", "empathy_signal"]
