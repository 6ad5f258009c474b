"""One crisis assessment per USER turn: rules, the learned model, language coverage, conversation cues.

What a safety team routes by (docs/safety-detection.md):

* ``critical`` / ``high``: a phrase rule or a concept frame fired (C-SSRS category and evidence span from
  the most severe one); ``detector`` is ``rule``, or ``rule+model`` when the model agrees;
* ``high`` with ``detector: rule+model`` and the category ``anchor_model``: no frame fired, but the text
  holds an anchor concept about the user (a death, self-harm, method or preparation word, unguarded) and
  the model's probability reached its higher ``confirm`` threshold; the anchor is the evidence;
* ``possible``: only the learned model's calibrated probability reached its threshold (``detector:
  model``); no rule explains it, so it goes to review (and, where a judge is configured, to the LLM
  crisis screen); likewise when only the danger model (``_danger_model``: danger from another person)
  reached its own threshold (categories ``danger_from_others`` and ``model_only``);
* ``critical`` with ``detector: conversation``: this turn completed risk built across the user's turns
  ("i picked up the rope today" ... "i'm ready");
* a turn in a language the detector does not cover is reported as not covered -- never as safe.

Only rule findings (``crisis``) oblige the next reply to offer crisis resources (seed 000's crisis rule
fires on a disclosure a rule can name); a ``possible`` alert alone does not, so a false alarm of the model
cannot fail a conversation's safety gate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from schemas import Severity

from .._text import function_word_hits, script_shares, tokens
from ._concepts import Finding, anchor_finding, conversation_finding, turn_cues
from ._crisis import both_forms, merge_findings, reading_forms, rule_findings
from ._danger_model import danger_model, danger_probability
from ._model import crisis_probability, model

_FAREWELL_FRAMES = frozenset(
    {"preparatory_act", "phrase:suicidal_ideation_direct", "phrase:suicidal_ideation_indirect"}
)
#: Bumped when rules, frames or the model change; carried in every crisis alert with the model's version.
#: 2.7: the input's single-letter typos are repaired before any rule reads it (``_spelling``).
#: 2.8: second-language and dialect grammar is read as its standard form (``_normalise._GRAMMAR``).
#: 2.9: a distanced disclosure the user says is theirs is read as theirs (``_normalise._self_reference``).
#: 2.10: the rules also read the turn as written and keep every finding of either form (a reveal only adds).
#: 2.11: danger from another person read by concept frames (``_danger``), not phrases alone.
#: 2.12: the danger frames' past, sport and trivial-cause guards know more words (development writer ET).
#: 2.13: the suicide word as the user's experience (``suicide_topic``), the user's death ahead said as a fact, life
#: ending and not seeing the morning, learner-English method questions (everyday set's dev half).
#: 2.14: guards narrowed to what they explain (an audit of each guard on the development texts): an activity explains
#: means and places, not a death the user names; grief does not explain wishing oneself dead; a contrast after a
#: denial or media talk is read on its own; a method question stands before a disclaimer; "end this <noun>".
#: 2.15: someone else in the sentence is not always its subject (a timing clause's subject, an owner of the means).
#: 2.16: a question about how dangerous, quick or sure a way of dying is, with the user's stake said elsewhere in
#: the text (a decision made, the question put as theirs, a supply held, the outcome wanted).
#: 2.17: four more anchor concepts a model may confirm (a hard means, a hoped-for harm event, a question about how
#: sure or quick, the user's stake), read only where no earlier anchor is.
#: 2.18: a denial the message takes back ("i swore i'd never try again. tonight i did"), and a sentence that opens
#: against the denial before it; a relative's means ("my nan's pills", "my grandpas gun") and a supply named by
#: the time it lasts; heights named by their floors ("is 10 floors enough").
#: 2.19: anchors only the second look may confirm (a wish, readiness, means as the conversation cues name them).
#: 2.20: false alarms on wording the rules had not seen (development writers QA-QD): a denial contrasted in its own
#: window keeps only what precedes it and the contrast clause; screening answers in more grammars; someone else's crisis
#: the user says is over; an activity the user denies explains nothing; idioms, censored words, medication slips.
#: The models do not train on those writers (tests/data/crisis_rules_dev/README.md).
#: 2.21: what the user says after a screening answer or a phrase taken back is read on its own (before, an answer no
#: anywhere cleared the whole text: "my mum asked if i'm suicidal and i was like no. but i've got the pills saved").
#: 2.22: a denial of suicide or death says nothing about self-harm told beside it or after it ("i cut my arm last night
#: but i don't want to die"); words written with digits or symbols for letters, or letter by letter, read as the word
#: they spell ("su1cide", "s.u.i.c.i.d.e"); algospeak ("sewer slide", "self delete") and "suicide" as a verb after
#: the user ("i want to suicide"); "cut myself a slice / some slack / off" is not a wound; a quantity named by a pronoun
#: or a container with the medicine said elsewhere ("bottle's empty. took them all", "took everything in the cabinet");
#: a wound that will not stop ("cant get it to stop bleeding", "i cut and it's bleeding a lot more than i thought").
#: The rules also read the turn without the hedges after its subjects ("i wish i simply wasn't here anymore";
#: ``_crisis.reading_forms``); "stopped existing"; a plan word after a change of subject ("..., anyway can you help me
#: plan meals") is not the death's plan; intent to do again what the user survived or stopped before ("i tried twice
#: and survived. the third time i'm going to get it right").
#: 2.23: a denial of suicide covers self-harm coordinated with it ("never had suicidal thoughts or self-harmed": 2.22
#: read the self-harm as told beside the denial); "i haven't" before a dash answers a screening question.
#: 2.24: the second look also reads the inline model's own possible alerts (no rule finding) and raises one to high
#: where it confirms an anchor (``SecondLook.reads``); a wish word about someone else, company or not talking now is no
#: wish anchor ("i hope you feel better", "i wish i had someone to listen").
#: 2.25: a generic person ("someone", "a person", "people") does not make an anchor someone else's: where a model
#: already rates the turn a disclosure, that is the distance people put between themselves and a question about dying
#: ("if someone took all their lithium, would it be quick"); a person named still does ("my uncle").
#: 2.26: in the anchor reading the owner of means ("my dad's gun is in the closet") and the object of a preposition or
#: of a verb of giving, or a person joined to one ("a letter for my wife", "sent my bestie a goodbye msg"), are not
#: the act's subject; the subject of a relative clause still is ("the letter from my grandad who died").
#: 2.27: three anchors a model confirms, for wording with no means and no death word: cutting with no object ("i cut
#: every night now", "cutting helps me calm down"), the user's own mind telling them to die in the second person ("my
#: brain goes 'just kys'"), and (the second look only) the world after the user told as settled ("so nobody has to
#: deal with it", "whoever finds me", "she didn't know it was goodbye").
#: 2.28: false alarms on the development writers RA-RD: a line taken back by naming what it was about ("I'm ready to
#: check out. Of this Airbnb, I mean."; "not that kind") carries no finding; someone else's overdose long past ("in
#: 2011", "last month") is no third party at risk unless their own clause says it goes on; a screening question asked
#: a few words further on ("asked three times this week whether") or the question "you asked earlier", answered "no to
#: ..." or "i honestly don't".
#: 2.29: 2.28's clarifier narrowed after review: it took back real disclosures ("i want to kill myself. to be honest,
#: lol"; "..., not like that matters to anyone"). No infinitive after the preposition, "i mean" or "that is" as the
#: connector, and "not that kind" / "not like that" only where the clause ends with them.
#: 2.30: seven anchors only the second look confirms, for crises the models are sure of and no anchor named: harm to
#: one's own body told by what it left ("new red lines on my forearm"), an overdose or act told without a quantity
#: ("took them all", "went through with it"), a plan told by its settled parts ("i've set a new date"), a call home
#: ("go home to god"), putting things in order ("gave my gaming pc to my little brother"), an end as an act on oneself
#: ("finish myself"), a wake or a letting-come ("damn, woke up again"). In the anchor reading a thing ("my phone") is no
#: subject; "season" guards as media only where it is a series' ("exam season" is not).
#: 2.31: two more such anchors: intent with no death word ("im going to jump", "i'm acting on it", "not planning on
#: being alive much longer") and a method thought of or asked about with no means word ("i think about not turning
#: the wheel at the hairpin", "what floor is guaranteed to be fatal").
#: 2.32: one more: a past attempt counted, survived or woken from without the words of the history frame ("survived 2
#: attempts", "tried hanging at seventeen", "came back in an ambulance").
#: 2.33: in the anchor reading, a person after a preposition and a determiner ("to my little brother", "at his
#: mum's") or the complement of a copula ("when i was a teenager") is not the act's subject.
#: 2.34: seven more anchors only the second look confirms: cutting and bleeding told with the bare verb or the blood
#: ("got home and cut", "a lot of blood"), harm to the skin by heat or friction ("hand under very hot water until it
#: blisters"), means named by what carries them ("the 7:40 freight doesn't stop at my station", "the hosepipe"), an
#: exit ("how to make my exit"), a wait for the end ("one less passenger"), who will find the user or the note ("so
#: nobody at home has to be the one who finds me"), stopping food until the body gives up; a past attempt told by who
#: talked the user down. An act done to the user ("finds me", "talked me down") is theirs in the anchor reading.
#: 2.36: an idiom is a whole word sequence: before, "jump in" read "jump into the river" and "hanging on" read "hanging
#: once" as idioms, and "dying to" read "dying tomorrow", and the window lost its finding (the model features keep the
#: old class: the shipped models were trained on it). 2.35 did that alone and was withdrawn: jumps into water for fun
#: the prefixes had hidden became false alarms. 2.36 also names such jumps as an activity (rules only).
#: 2.37: a screening question answered no, read as said: "that's the truth" keeps the answer (before, "the truth"
#: took it back) and lying in bed is no lie; "answer: no", "screened me for" and "ending it" are read; "nothing to
#: do with" denies.
#: 2.38: a screening answer the user takes back ("my mum asked if i was suicidal and i said no but i am", "... i said
#: no. i lied") is the screened concept told as the user's own (before: no alert of any kind); a medicine quantity
#: named by its container or supply ("took the whole packet", "swallowed my whole month's refill"), taken now or felt,
#: is an attempt.
#: 2.39: media nouns count in the plural too where they are no verb, possession or workload ("novels that handle
#: self-harm", "the self-harm chapters"); ideation named as an unowned clinical subject ("practise asking about suicidal
#: ideation") no longer makes a piece about media or coursework the user's own.
#: 2.40: a media word in another role says nothing about media: a time ("the plan is fri night after the game"), a
#: likeness ("like a song on repeat") or a height ("a 5 story building").
#: 2.41: a contrast after media may put up to three words before the user ("two episodes of that baking show but the
#: whole night i kept wishing ..."), so a transcript's own thought is not guarded with the media before it.
#: 2.42: the user's own funeral planned as life admin, for health, age, fun or the family's sake and with nothing
#: sooner named ("i'm 72 and healthy and i want to pre-pay my own funeral"), is no death concept of the user's.
RULES_VERSION = "crisis-rules@2.42"


def detector_version() -> str:
    return f"{RULES_VERSION}+{model().version}+{danger_model().version}"


@dataclass(frozen=True, slots=True)
class CrisisAssessment:
    findings: tuple[Finding, ...]
    probability: float
    threshold: float
    covered: bool
    language: str | None
    cues: frozenset[str]
    conversation: Finding | None
    #: The danger model's calibrated probability (danger from another person) and its threshold.
    danger_probability: float = 0.0
    danger_threshold: float = 1.0

    @property
    def crisis(self) -> bool:
        """A rule (or a conversation pattern) fired: the next reply owes crisis resources."""
        return bool(self.findings) or self.conversation is not None

    @property
    def model_fired(self) -> bool:
        return self.probability >= self.threshold

    @property
    def danger_model_fired(self) -> bool:
        return self.danger_probability >= self.danger_threshold

    @property
    def alert(self) -> bool:
        return self.crisis or self.model_fired or self.danger_model_fired

    @property
    def top(self) -> Finding | None:
        if self.findings:
            return self.findings[0]
        return self.conversation

    @property
    def severity(self) -> Severity | None:
        top = self.top
        if top is not None:
            return top.severity
        return "possible" if self.model_fired or self.danger_model_fired else None

    @property
    def detector(self) -> str | None:
        if self.findings:
            return "rule+model" if self.model_fired or self.danger_model_fired else "rule"
        if self.conversation is not None:
            return "conversation"
        return "model" if self.model_fired or self.danger_model_fired else None

    @property
    def cssrs(self) -> str | None:
        top = self.top
        return top.cssrs if top is not None else None

    @property
    def evidence(self) -> str:
        top = self.top
        if top is not None:
            return top.evidence
        said = [f"model probability {self.probability:.2f}"] if self.model_fired else []
        if self.danger_model_fired:
            said.append(f"danger model probability {self.danger_probability:.2f}")
        return "; ".join(said)


def coverage(text: str) -> tuple[bool, str | None]:
    """(covered, language or script) of a user text: the detector covers English in Latin script.

    Not covered: most letters in another script, or four or more words with no English function word
    and at least two of one other language's (the same word lists the seed-003 language edge case uses).
    Short texts ("ok", "merci") count as covered: there is nothing to detect either way.
    """
    shares = script_shares(text)
    if shares and shares.get("latin", 0.0) < 0.5:
        return False, max(shares, key=shares.__getitem__)
    if len(tokens(text)) >= 4:
        hits = function_word_hits(text)
        other = max((k for k in hits if k != "en"), key=hits.__getitem__)
        if hits["en"] == 0 and hits[other] >= 2:
            return False, other
    return True, None


def assess_crisis(text: str, prior_cues: frozenset[str] = frozenset()) -> CrisisAssessment:
    """Assess one USER turn; ``prior_cues`` are the cue tags the conversation's earlier user turns left.

    The text's own assessment is computed once (cached); the earlier turns only filter its findings and add
    the pattern across turns, so the stream asking for both (a turn's own alerts and its alerts in context)
    costs one assessment, not two.
    """
    alone = _assess_text(text)
    if not prior_cues:
        return alone
    findings = alone.findings
    if "benign_move" in prior_cues:
        # a farewell act explained earlier in the conversation (a move, retirement, an operation, a new
        # baby): letters and arrangements of this turn are not preparation for a suicide
        findings = tuple(f for f in findings if f.cssrs != "preparatory" or f.frame not in _FAREWELL_FRAMES)
    conv = None if findings else conversation_finding(prior_cues, alone.cues)
    return replace(alone, findings=findings, conversation=conv)


@lru_cache(maxsize=4096)
def _assess_text(text: str) -> CrisisAssessment:
    """The turn's text alone (no earlier turns): rules, coverage, cue tags, the model's probability."""
    forms = reading_forms(text)  # normalised; as written when a reveal rewrote it; without hedges: any form counts
    findings = merge_findings(*(rule_findings(norm) for norm in forms))
    covered, language = coverage(text)
    cues = frozenset().union(*(turn_cues(norm) for norm in both_forms(text)))  # the turn's words as said
    m = model()
    probability = round(crisis_probability(text), 4)
    if not findings and probability >= m.confirm:
        # the model supplies the combination the frames did not find
        confirmed = next((f for f in map(anchor_finding, forms) if f is not None), None)
        if confirmed is not None:
            findings = (confirmed,)
    return CrisisAssessment(
        findings=findings,
        probability=probability,
        threshold=m.threshold,
        covered=covered,
        language=language,
        cues=cues,
        conversation=conversation_finding(frozenset(), cues) if not findings else None,
        danger_probability=round(danger_probability(text), 4),
        danger_threshold=danger_model().threshold,
    )
