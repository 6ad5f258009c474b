"""Concept-level crisis matching: death / self-harm concepts x self-reference x volition, plan, time, means.

Why: whole-phrase lists match the phrasings their authors thought of and little else (an independent
set found low recall for the phrase rules: docs/benchmarks.md, "Crisis detection v2 (issue #12)", "Figures
formerly in code comments"). Here each *concept* is a small word class (a death
word, a method act, a means, a volition or thought verb, a time, an act already done...) and a finding
is a *combination* of concepts inside one window of text about the user, checked by guards (negation,
denial, media, grief, someone else, idiom, activity). A new sentence built from known concepts is found
without anyone having written it down.

Each frame gives a C-SSRS category (Columbia Suicide Severity Rating Scale, as issue #12 organises it)
and a severity: ``critical`` for intent, plan, means at hand, preparatory acts, an attempt in progress or
just made, and questions about lethality; ``high`` for wish to be dead / passive ideation, active
ideation, thoughts of a method, non-suicidal self-harm and history.

Windows: sentences (split on ``. ! ? ;`` and new lines); a sentence of more than 24 words (voice
transcripts have no punctuation) is cut into overlapping windows of 24 words, stride 12.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, reduce

from schemas import Severity

from ._context import _ACCIDENT, _DELIBERATE
from ._engine import SEVERITY_RANK
from ._gate import Gate
from ._normalise import revealed

#: C-SSRS categories, most urgent first (the order alerts list them in).
CSSRS_CATEGORIES: tuple[str, ...] = (
    "attempt",
    "plan",
    "intent",
    "preparatory",
    "method",
    "active_ideation",
    "wish_dead",
    "nssi",
    "history",
)


@dataclass(frozen=True, slots=True)
class Finding:
    cssrs: str
    severity: Severity
    evidence: str
    frame: str


def _rx(body: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + body + r")\b")


# -- who the window is about ----------------------------------------------------------------------------
_FIRST = _rx(r"i|i'm|i've|i'd|i'll|me|myself|ive|id|imma|i'mma|ima")
_THIRD = _rx(
    r"he|she|they|he's|she's|they're|he'd|she'd|they'd|him|them|himself|herself|themselves|someone|somebody|"
    r"people|soldiers|patients?|clients?|characters?|victims?|kids|children|son|daughter|friends?|mates?|"
    r"brother|sister|mum|mom|dad|husband|wife|partner|boyfriend|girlfriend|students?|everyone|everybody|"
    r"guys|grandad|grandpa|grandma|nan|uncle|aunt|cousin|trespasser|passenger|stranger|coworkers?|colleagues?|"
    r"classmates?|flatmates?|roommates?|"
    r"(?:a|the) (?:man|woman|guy|girl|boy|kid|person|customer|teen|teenager)|"
    r"the (?:doctor|nurse|surgeon|dentist|vet|gp|specialist|pharmacist|dermatologist|paramedic|midwife|physio)|"
    # "my" + a person (not "my house", "my drawer", "my shift": those are still the user's own sentence)
    r"my (?:ex|ex-\w+|boss|teacher|therapist|counsel+or|doctor|gp|nurse|bestie|bff|bf|gf|neighbou?rs?|landlord|"
    r"manager|coach|pastor|priest|vicar|imam|rabbi|niece|nephew|step\w+|grand\w+|kids?|child|children|babies|baby|"
    r"twins?|parents?|family|fam|mother|father|in-laws?|\w+-in-law|fianc\w*|spouse|team|crew|class|pupils?|"
    r"patients?|clients?|colleagues?|coworkers?|co-workers?|flatmates?|roommates?|housemates?|classmates?|mates?|"
    r"friends?|mums?|moms?|mummy|mommy|mam|ma|papa|pa|dads?|daddy|nan|nana|gran|granny|auntie|aunty|aunt|uncle|"
    r"cousins?|brothers?|sisters?|sis|bro|husband|wife|partner|boyfriend|girlfriend|son|daughter|hubby|missus|"
    r"lad|bestfriend|best friend|old man|old lady|sibling\w*|relatives?|godson|goddaughter|ward|tenant|students?|"
    r"supervisor|teenager|tutor|lecturer|professor|host \w+|"
    # things that "die" or get "killed" in everyday talk: a death word after them is theirs
    r"cat|dog|pets?|puppy|kitten|hamster|rabbit|bunny|fish|bird|parrot|horse|pony|plants?|garden|flowers|phone|"
    r"battery|laptop|computer|pc|car|bike|van|campervan|social life|leaflet|career|business|marriage|relationship|"
    r"hopes|dreams|account|bank account|social battery|vibe|streak)\b"
)
#: A possessive before means ("my boyfriend's anxiety meds", "mum's heart pills") names an owner, not a subject.
_OWNER_OF_MEANS = re.compile(
    r"(?:'s|s)? (?:\w+ )?(?:pills?|tablets?|meds|medications?|medicine|prescriptions?|insulin|ambien|xanax|gun|rifle|"
    r"pistol|shotgun|revolver|knife|knives|razors?|belt|rope|sleeping)\b"
)


_USED_MEANS = re.compile(
    r"\b(?:took|taken|take|taking|swallowed|stole|grabbed|used|using|got|have|had|keep|od|overdose|overdosing|"
    # thoughts and acts that turn to someone's means: "thinking about my grandpas gun", "picking up my mum's old
    # prescriptions"
    r"thinking about|think about|thought about|looking at|staring at|eyeing|picking up|picked up|collecting|"
    r"collected|saving|saved|hoarding|stockpiling|counting|counted)\b"
)


def _subjects(text: str, anchor: bool = False) -> list[re.Match[str]]:
    """Third-person words of ``text`` that may be a subject: not the owner of means the user took or holds
    ("took all my pills plus my boyfriend's anxiety meds"). ``anchor``, the anchor reading (a model already
    rates the turn a disclosure): nor a generic person ("if someone took all their pills", "can a person die
    from"), nor any owner of means ("my dad's gun is in the closet"), nor the object of a preposition or a verb of
    giving, or a person joined to one ("wrote a letter for my wife", "letters to my nan and my cousins", "sent my
    bestie a goodbye msg")."""
    out: list[re.Match[str]] = []
    obj_end = -1  # where the last object of a preposition ended: a person joined to it is an object too
    for x in _THIRD.finditer(text):
        if _OWNER_OF_MEANS.match(text, x.end()) and (anchor or _USED_MEANS.search(text, 0, x.start())):
            continue
        if not anchor:
            out.append(x)
            continue
        if x.group() in _GENERIC_PERSON or _THING.fullmatch(x.group()):
            continue
        joined = obj_end >= 0 and _JOINED.fullmatch(text, obj_end, x.start()) is not None
        if (joined or _PREPOSITION.search(text, 0, x.start())) and not _RELATIVE.match(text, x.end()):
            obj_end = x.end()
            continue
        out.append(x)
    return out


#: A person after one of these is the object of the act, not its subject (the anchor reading of :func:`_subjects`).
_PREPOSITION = re.compile(
    r"\b(?:for|to|with|from|at|by|of|about|behind|towards?|on|onto|near|beside|"
    # and after a verb of giving or telling, the person is its indirect object ("sent my bestie a goodbye msg")
    r"sent|send|gave|give|left|leave|wrote|write|texted|messaged|handed|showed|owe|paid|told|tell|"
    # or of a call or a visit ("i rang my mum tonight just to hear her voice one last time")
    r"rang|ring|called|call|phoned|phone|hugged|hug|visited|visit|kissed|thanked|emailed)\W+"
    # since 2.33, with a determiner and one word between ("to my little brother", "for the other men")
    r"(?:(?:my|his|her|their|our|your|ur|the|a|an) (?:[a-z]+ )?)?$"
    # since 2.33, the complement of a copula or of "as" names the subject, it is not another one ("when i was a
    # teenager", "as a nurse", "i'm a survivor")
    r"|\b(?:was|were|am|'m|im|is|'s|be|been|being|as|became|become|like)\W+(?:(?:a|an|the|just a|only a) )?$"
)
#: ... unless a relative clause makes it the subject of what follows ("a letter from my grandad who died").
_RELATIVE = re.compile(r"\W+(?:who|that|which|whose|whom)\b")
_JOINED = re.compile(r"(?:'s|s)?\W+(?:and|or|n|&|plus)\W+|\W*,\W*")


#: Things that "die" in everyday talk (see :data:`_THIRD`): in the anchor reading no subject of an act ("the pills are
#: counted, the door will be locked, my phone will be off"; since 2.30).
_THING = re.compile(
    r"my (?:plants?|garden|flowers|phone|battery|laptop|computer|pc|car|bike|van|campervan|social life|leaflet|career|"
    r"business|marriage|relationship|hopes|dreams|account|bank account|social battery|vibe|streak)"
)
#: A person no one in particular: in a turn the model already rates as a disclosure, the distance people put between
#: themselves and a question about dying ("if someone took all their lithium, would it be quick").
_GENERIC_PERSON = frozenset({"someone", "somebody", "people", "a person", "a guy"})


_CLAUSE_BREAK = re.compile(r"[.!?;,\n]|\b(?:but|though|although|however|because|cause|so|and then)\b")


def _left(win: str, pos: int, span: int = 90) -> str:
    seg = win[max(0, pos - span) : pos]
    last = None
    for last in _CLAUSE_BREAK.finditer(seg):  # noqa: B007 - we want the last break
        pass
    return seg[last.end() :] if last else seg


_BUILT_IN = re.compile(r"\b(?:myself|my|i|i'm|i'd|i've|i'll|im|ive)\b")
#: The user as the object of what names their risk ("... without me"; since 2.34 "the ones who find me", "a stranger
#: talked me down"): the person before it is not the subject at risk.
_ME_AS_OBJECT = re.compile(r"without me$|\b(?:find|finds|found|finding) me$|\btalked me (?:down|back)\b")


def _mine(win: str, m: re.Match[str], built_in: bool = False, anchor: bool = False) -> bool:
    """The clause holding ``m`` is about the user.

    A first-person word must come after any third-person subject in the clause-left ("my plan just
    died" and "my friend wants to die" are not the user's). With no subject at all (voice transcripts
    drop it: "thinking about ending it tonight"), the window must have a first-person word and no
    third-person one. ``built_in``: the match itself names the user ("kill myself"). ``anchor``: the anchor reading
    of :func:`_subjects` (generic persons, owners and objects are no subjects).
    """
    left = _left(win, m.start())
    firsts = [x.end() for x in _FIRST.finditer(left)]
    if not anchor:
        thirds = [x.end() for x in _subjects(left)]
    else:  # read up to the anchor's end: the means after an owner is the anchor itself ("my dad's gun")
        off = m.start() - len(left)
        thirds = [x.end() - off for x in _subjects(win[: m.end()], anchor) if off <= x.start() < m.start()]
    if built_in and (_BUILT_IN.search(m.group()) or _ME_AS_OBJECT.search(m.group())):
        return True
    if firsts:
        return not thirds or firsts[-1] > thirds[-1]
    if thirds:
        return False
    # no subject in the clause: the window must not be about someone else ("took all of them": "them" is the
    # object, after the act, and does not count; nor does the subject of a clause that only times the act:
    # "wait till mum's at work, take all my pills")
    return not any(
        (x.start() < m.start() or x.group() not in _OBJECT_PRONOUNS) and not _TIMING.search(win, 0, x.start())
        for x in _subjects(win, anchor)
    )


#: The subject of a clause that times the act is not its subject ("when she's at work"). Only where the act's own
#: clause has no subject: in "when someone is actively dying" the death is that clause's.
_TIMING = re.compile(
    r"\b(?:when|while|whilst|till|til|until|after|before|once|as soon as|whenever)\W+"
    r"(?:(?:the|my|our|his|her|their) )?$"
)


_OBJECT_PRONOUNS = frozenset({"them", "him", "her", "it"})


_NEG_LEFT = re.compile(
    r"\b(?:not|never|no longer|nor|no|none|nowhere near|far from|without|\w+n't|dont|cant|wont|wouldnt|didnt|"
    r"isnt|aint)\b(?! (?:idea|clue|know|sure|think|care|understand|stop|help|remember|even know|see why|get why|"
    r"want anyone|tell|say|mind|matter|bother|worry)\b)"
)


#: A first-person subject not itself negated: it starts a new clause ("i'm not i'm going to...").
_UNNEGATED = r"(?! (?:don't|do not|dont|won't|wont|can't|never|not|am not|'m not)\b)"


def _negated(win: str, m: re.Match[str]) -> bool:
    """A negator among the last five words of the clause before ``m`` (hedges excepted), unless a new first-person
    clause starts right after it (a transcript's restart: "i'm not i'm going to end my life") or after the verb it
    negates ("on nights i can't sleep i hold a lighter to my arm"), or it names an urge held back ("trying not to
    cut tonight")."""
    left = " ".join(_left(win, m.start()).split()[-5:])
    return any(
        _RESTART.match(left, x.end()) is None
        and not _STRUGGLE.search(left, 0, x.start())
        and not _clause_after(left, x.end())
        for x in _NEG_LEFT.finditer(left)
    )


#: "trying not to cut tonight": the negation names an urge held back, not an absence.
_STRUGGLE = re.compile(r"\b(?:trying|try|tried|struggling|fighting|so hard|hardest|doing my best)\W*$")
#: A first-person subject after the negated verb starts a clause of its own ("on nights i can't sleep i hold a lighter
#: to my forearm"), unless the verb reports speech or thought ("i never said i wanted to die").
_NEXT_SUBJECT = re.compile(r" (?:so |and |then )?(?:i|i'm|i've|i'll|i'd|im|ive)\b" + _UNNEGATED)
_REPORTED = re.compile(
    r"\b(?:said|say|saying|says|mean|meant|feel|felt|claim\w*|told|tell|think|thought|believe|guess|"
    r"suppose|pretend\w*|act|acting|sure|know|knew|realise|realize)\b"
)


def _clause_after(left: str, end: int) -> bool:
    rest = left[end:]
    nxt = _NEXT_SUBJECT.search(rest)
    return nxt is not None and nxt.start() > 0 and not _REPORTED.search(rest, 0, nxt.start())


_RESTART = re.compile(r" (?:um |uh |like )?(?:i'm|im|i am|i'll|i will|i've|i)\b" + _UNNEGATED)


# -- concepts -------------------------------------------------------------------------------------------
# Death with the user built in: no subject check needed.
_DEATH_SELF = _rx(
    r"kill(?:ing|ed)? (?:in )?my ?self|kms|kys|ctb|unaliv\w* (?:my ?self|me)|unaliv\w*|sewerslide|"
    r"end(?:ing)? (?:my ?self|me)|finish(?:ing)? (?:my ?self|me) off|off(?:ing)? my ?self|top(?:ping)? my ?self|"
    r"end(?:ing)? my (?:own )?life|tak(?:e|ing) my (?:own )?life|my (?:own )?(?:suicide|death|funeral)|"
    r"finish(?:ing)? my (?:own )?life|do(?:ing)? myself in|end(?:ing)? myself|"
    # second-language wording of the same act ("finish with my life", "take off my own life", "stop my life")
    r"finish(?:ing)? with my (?:own )?life|tak(?:e|ing) (?:off|away) my (?:own )?life|"
    r"stop(?:ping)? my (?:own )?life(?! from| going| being| falling| getting| turning)|"
    r"(?:i'm|im|i am|been|feel|feeling|felt|get|getting) (?:so |really |very |pretty |kinda |a bit |"
    r"a little )?sui?ci?d(?:al|ial)|sui thoughts|suicidal thoughts|thoughts of suicide|"
    r"suicidal (?:ideation|urges|feelings|thinking)|suicide (?:thoughts|urges)|s\*(?:icid|uicid)\w*|su\*cid\w*|"
    r"(?:lowkey|low key|highkey|lowk|lwk|lowkey kind of|kind of|hella|mad|so|super|very|really|still|pretty) "
    r"suicidal|suicidal (?:af|asf|rn|today|tonight|again|lately|atm|these days|all (?:day|week)|ngl|lol|fr)|"
    r"(?<!if i )(?<!whether i )(?<!if you )(?:was|were|went|got) (?:so |really |very |badly |severely |pretty |"
    r"quite |kind of )?suicidal|"
    r"think(?:ing)? (?:about|of|abt) suicide|"
    r"(?:better off|happier|easier|fine|move on|carry on|go on|manage|cope) without me|"
    r"(?:when|after|once|for when) (?:i'?m|im|i am) gone(?! someday| one day| eventually| in the future| for (?:the|a|"
    r"two|three|\d+|some|my|work|school))|"
    # the user's death ahead, said as a fact: "after i'm dead", "by morning i'm dead", "not gonna be alive by sunday"
    r"(?:when|after|once|for when) (?:i'?m|im|i am) dead|(?:by|before) (?:the )?(?:morning|tonight|tomorrow|"
    r"sunrise|dawn|midnight|the weekend|next week|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"christmas|then) (?:i'?m|im|i am|i'll be|i will be|ill be) (?:dead|gone)|(?:i'll|i will|ill) be dead (?:by|"
    r"before|soon|tonight|tomorrow)|(?:not|won't|wont|will not|never) (?:going to |gonna )?be alive(?! to see)|"
    # second-language wording: "i do suicide", "i will make suicide"
    r"(?:i|i'll|i will|ill|i'm going to|i am going to|i go|i want to|i wanna|i must) (?:to )?(?:do|make|commit) "
    r"(?:a |the |my )?suicide|"
    r"once it'?s too late|"
    r"go(?:ing)? through with (?:it|the suicide|suicide|killing myself|ending it)|get it right this time|"
    r"talk me out of (?:suicide|killing myself|ending it|ending my life|doing it)|one less of me|"
    r"(?:won't|wont|will not) be an? (?:me\b|(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|christmas|xmas|easter|eid|diwali|birthday|summer|winter|spring|autumn|next year|"
    r"new year|tomorrow|future) for me)|"
    r"(?:take|taking|took) myself (?:out|off)(?! to| for| on| of (?:the )?(?:group|team|chat|list|running|race))|"
    r"by my own hand|no more me|my life to (?:end|take)|"
    r"make sure (?:i don't|i do not|i never) (?:see|wake|make it)|(?:won't|will not|wont|not going to|not gonna|"
    r"never going to) (?:see|make it to|reach) "
    r"(?:eid|christmas|xmas|easter|next|another|my|the end)|not planning on (?:coming|driving|going|walking) back|"
    r"rest for good|(?:i'?m|i am|im) (?:going to|gonna) (?:do it|try) again|(?:this time|tonight) i'?m "
    r"(?:doing|going to do) it|"
    r"me gone|me not (?:here|around|existing)|(?:i|i'd|i'm) (?:wasn't|weren't|was not|were not|wasnt|werent|"
    r"not) (?:here|around|alive|born)(?: anymore| any more| any longer)?|(?:i'd|i had|i'd have) never (?:been )?born|"
    r"i (?:was|were|had) never (?:been )?born|get(?:ting)? rid of my ?self|(?:put|putting|bring|bringing) an end to "
    r"(?:my ?self|my (?:own )?life)|suicidal (?:stuff|thing|shit|crap)|suicide (?:is |as |seems |sounds |feels |"
    r"looks )(?:(?:like|starting|to|be|sound|more|and more|an?|the|my|real|actual|viable|only|reasonable) ){0,5}"
    r"(?:option|answer|solution|way out)"
)
#: "end this" read as a determiner before a noun ("want to end this semester", "end this week on a high") is not
#: about dying; before a time, a conjunction, the end of the clause or the life and pain it means, it is.
_THIS_NOUN = (
    r"(?! (?!(?:now|tonight|today|tomorrow|soon|already|once|for|forever|permanently|and|but|or|so|because|before|"
    r"after|please|right|life|existence|misery|suffering|pain|hell|nightmare|torment|shit|whole|all)\b)[a-z]{3,})"
)
# Death and not-being that need the user as subject (checked by _mine and a frame verb).
_DEATH = _rx(
    r"die|dying|died|dead|death|commit(?:ting)? suicide|end (?:it|it all|everything|things)|end this" + _THIS_NOUN + "|"
    r"ending (?:it|it all|"
    r"everything|things)|not (?:be |being )?(?:here|around|alive)|no longer (?:be )?(?:here|around|alive)|"
    r"(?:not|never|don't|didn't|won't|wouldn't) (?:wake|waking) up|stop(?:ped)? (?:existing|breathing|living)|"
    r"cease to exist|not exist\w*|sleep forever|long sleep|eternal (?:sleep|rest)|at rest|rest forever|"
    r"sleep (?:to )?be permanent|sleep (?:that )?(?:lasts|is) (?:forever|permanent)|"
    r"(?:be|go|gone|disappear\w*|vanish\w*) (?:forever|for good|permanently)|be gone|"
    r"leave (?:this|the) (?:world|earth|life)|leaving (?:this|the) world|(?:exit|departure|leaving|leave|depart\w*) "
    r"(?:from|out of) (?:this|the) (?:world|earth|life)|"
    r"(?:tried|try|want|wanted|wanting|going|plan|planning) to leave early(?! from| to| for)|check(?:ing)? out|"
    r"(?:it'll|it will|it's going to|this will|everything will|all) (?:all )?be over|be over (?:soon|by)|"
    r"over for good|permanent (?:solution|exit|sleep)|way out|the exit|"
    r"(?:everything|it all|it) (?:to )?(?:just )?stop(?: for good| forever| permanently)|"
    r"heart (?:just )?(?:stops?|stopped|gave out|give out|gives out)|bleed(?:ing)? out|"
    r"(?:freeze|freezing|froze|starve|starving|bleed|bleeding|drink|drinking) (?:myself )?to death|"
    r"my life (?:would|will|could|to|can|might) (?:just |finally |simply |all )?(?:end|be over|stop)|"
    r"(?:i was|i were|i'm|im|i am|i'd be|i'll be|me) (?:\w+ )?(?:in|under) the ground|six feet under|"
    r"in (?:a|my) (?:grave|coffin)|"
    r"(?:don't|do not|dont|won't|wont|will not|never|not) (?:see|make it to|live to see|wake to) (?:the |another )?"
    r"(?:morning|sunrise|tomorrow|daylight|dawn|next day)(?! (?:traffic|shift|rush|news|meeting|light|run|class))|"
    r"(?:hit|run over|killed) by (?:a|the) (?:truck|bus|car|train|lorry)|brakes (?:just )?(?:fail|failed)|"
    r"(?:take|takes|took|call|calls|called) me (?:home|away)|take me (?:now|tonight|soon|in my sleep)|"
    r"switch(?:ed)? (?:me )?off|me finished|follow (?:him|her|them)|be with (?:him|her|them|my \w+) again|"
    r"(?:won't|will not|wont|not)(?: going to| gonna)? (?:be )?(?:here|around) (?:much longer|after|tomorrow|"
    r"in the morning|by|next)|"
    r"(?:won't|wont|not) (?:be )?(?:coming|going|driving|walking) (?:home|back)|"
    r"(?:don't|do not|dont) think i'?m (?:going|coming) (?:back|home)|never (?:come|coming) (?:home|back)|"
    r"last (?:night|day|week|christmas|birthday) (?:alive|on (?:this )?earth|here)|(?:a|the) burden (?:again|anymore|"
    r"much longer)|(?:have to )?put up with me|worry about me (?:anymore|again)|"
    r"(?:don't|can't|do not|cannot|dont|cant) (?:see|picture|imagine) (?:a|any|my) (?:future|way forward|tomorrow)|"
    r"no future (?:for me|left|ahead)|(?:there's|there is) no (?:future|way forward|point (?:in|to) (?:living|me))|"
    r"tired of (?:still )?(?:being here|being alive|living|existing|life)|sick of (?:being alive|living|existing)"
)
# Passive death wished for or welcomed, the user as its object ("if a bus hit me tmrw i'd be relieved").
_PASSIVE_DEATH = _rx(
    r"(?:car|bus|truck|lorry|train|wave|tide|something|the sea|cancer) (?:\w+ )?(?:hit|hits|took|takes|"
    r"carrying|carries|carried) me|(?:god|allah|jesus|the lord|the good lord|the universe|he|death) (?:\w+ )?"
    r"(?:took|takes|would take|wants to take|to take|is calling|calls|to call) me|"
    r"lights? (?:to )?go(?:es)? out (?:for good|forever)|"
    r"(?:not|never|don't|dont|didn't) (?:come|get) (?:back|up)(?: from it| again)?|"
    r"close my eyes for the (?:last|final) time|(?:tonight|today) (?:was|is|were|would be) my last|"
    r"(?:disappointed|sad|annoyed|upset|angry) (?:that )?i (?:woke|wake|still wake) up|"
    r"(?:disappointed|sad) (?:that )?i'?m still (?:here|alive)|"
    r"(?:why|y) (?:i'm|am i|i am) (?:even |still )+(?:here|alive)|(?:what'?s|whats|what is) (?:even )?the point of me|"
    r"(?:don'?t|do not|didn'?t|did not|never|stopped) (?:even |really )?(?:care|caring|mind) (?:\w+ ){0,3}?"
    r"(?:if|whether) i(?:'m| am)? (?:live|die|wake|survive|make it|still alive|alive)(?! trying)|"
    r"idc (?:if|whether) i (?:live|die)|"
    # the condition first, the welcome after: "if i died tonight idc", "dying wouldn't even be a bad thing"
    r"if i (?:died|die|didn't wake up|didnt wake up|never woke up|was gone|wasn't here|wasnt here)(?: \w+){0,3}? "
    r"(?:idc|i don't care|i dont care|i wouldn't care|i wouldnt care|who cares|so what|i'd be (?:fine|glad|relieved|"
    r"happy|ok|okay|grateful))|(?:dying|death|being dead) (?:\w+ ){0,2}?(?:wouldn't|would not|wouldnt|isn't|is not|"
    r"isnt|doesn't|does not) (?:even |really )?(?:be |seem |sound )?(?:a |that |so |too )?(?:bad|scary|terrible)|"
    r"(?:don'?t|do not) (?:even )?want (?:any )?(?:more|another) (?:days?|mornings?|years?|birthdays?)|"
    r"(?:don'?t|do not) (?:even )?want to see (?:next|another) (?:year|week|birthday|christmas|summer|day)|"
    r"(?:swap|trade|switch) places (?:with|w) (?:\w+ ){0,2}?in (?:a|the) (?:coffin|grave|ground|hospice|morgue)|"
    r"my turn in the ground|overstayed my welcome (?:on|in) (?:this )?(?:earth|world|life)|"
    r"(?:don'?t|do not) want (?:my|this) life(?! to| like| back)|done being (?:a person|alive|human)|"
    r"despawn\w*|fade (?:out|away)(?: quietly| forever| for good)?|want (?:it|this|everything|it all) over with|"
    r"rather (?:it|they|that) (?:had )?killed me|envy (?:the dead|everyone in)|clock to stop|"
    r"(?:didn't|did not|don't|do not|dont) exist (?:anymore|any more|any longer)|"
    r"stopped (?:looking|checking) (?:when|before) i cross|remov(?:e|ing) myself from (?:the equation|the picture|"
    r"everything|this world|everyone'?s life)|(?:my|making my) own exit|last page of my (?:own )?story|"
    r"log(?:ging)? off for good|(?:didn't|did not|don't|never|not) (?:waken|have to wake up)|went in my sleep|"
    r"(?:don'?t|not|never) make it (?:home|back|through the night)|not bring me back|hoping it goes down|(?:not|"
    r"stop) fighting it"
)
#: A height named by its floors ("is 10 floors enough", "the window of 14 floor", "floor 22").
_FLOORS = (
    r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty) "
    r"(?:floors|storeys|stories (?:high|up|down|tall))|(?:floor|storey) \d+"
)
#: Means that leave little doubt when someone's thoughts keep returning to them (not "the lake", "letters").
_HARD_MEANS = _rx(
    r"guns?|pistol|rifle|shotgun|revolver|firearm|handgun|service weapon|\.45|\.38|ruger|glock|rope|noose|"
    r"bridge|overpass|viaduct|ledge|roof|rooftop|cliffs?|balcony|tracks|railway|quarry|gorge|car park|"
    r"multi-?storey|(?:\d+(?:st|nd|rd|th)?|top|eighth|ninth|tenth) (?:floor|storey)|the drop|how far the drop|"
    + _FLOORS
    + r"|"
    r"pills?|tablets?|overdose|blades?|razors?|knife|bleach|poison|charcoal|exhaust|helium|insulin|morphine|"
    r"explosives?|drug room|vials?|anaesthetic|traffic|oncoming|lorr(?:y|ies)|the train|the wheel"
)
# An attempt under way or just made, told without a quantity ("cut too deep, it won't stop").
_ATTEMPT_NOW = _rx(
    r"(?:cut|cuts|cutting) (?:way |much |far |a bit |a little )?(?:too deep|deeper than)|"
    r"(?:won't|wont|will not|isn't|not) stop(?:ping)? bleeding|"
    # 2.22: "cant get it to stop bleeding"; a cut with no object ("i cut and it's bleeding a lot more than i thought")
    r"(?:can't|cannot|couldn't) (?:get (?:it|them|this) to |make (?:it|them) )?stop(?:ping)? (?:the )?bleeding|"
    r"(?:(?<=\bi )|(?<=\bi just )|(?<=\bi uh )|(?<=\bi um )|(?<=\bi've )|(?<=\bi already ))"
    r"cut(?: again| tonight| last night| earlier)?(?= and\b|,|\.| it'?s\b)(?:\W+\w+){0,6}?\W+bleeding "
    r"(?:a lot|loads|so much|heavily|badly|everywhere|through|more than)|"
    r"it'?s not stopping|(?:took|taken|had|done) an overdose|injected myself|swallowed (?:what|everything|all|"
    r"them|the lot)|(?:tablets|pills|meds) are (?:gone|down|in me)|drank (?:the|some|half the|half a) (?:[\w-]+ ){0,2}"
    r"(?:fuel|poison|bleach|liquid|weedkiller|weed killer|antifreeze|pesticide)|letting it happen|"
    r"drift off for the last time|noose (?:is )?(?:round|around) my neck|engine'?s running|"
    r"(?:garage|car) door (?:is )?(?:shut|closed)|washed (?:them|it|the (?:pills|tablets|lot)) down|"
    r"washed (?:them |it )?down with|(?:i'?ve|i have|i) (?:just |already )?"
    r"(?:overdosed|od'?d)(?! on\b)|feet (?:are )?(?:on the outside|over the edge)|i'?m on the ledge|"
    r"on the ledge (?:now|rn)"
)
# Acts of a method, with or without a death word.
_METHOD_ACT = _rx(
    r"fall(?:ing)? from|over the (?:side|edge|railing|rail|barrier)|(?:steer|steering|drift|drifting|swerv\w*) "
    r"into|climb(?:ing)? (?:the|over the) (?:railing|rail|barrier|fence)|lean\w* (?:my whole weight )?over|"
    r"jump(?:ing|ed)? (?:off|from|out|in front|into|over|down)|jump(?:ing)?(?= ?$)|go(?:ing)? over (?:the |that )?"
    r"(?:edge|railing|rail|side|balcony|barrier|top)|going over|went over|climb(?:ing)? over|let(?:ting)? go|"
    r"step(?:ping)? (?:off|out|in front|into)|walk(?:ing)? (?:into|out into|in front of) (?:the )?(?:sea|river|"
    r"water|lake|ocean|traffic|train|bus|waves)|swim(?:ming)? out|drown(?:ing)? myself|drown\w*|"
    r"(?:drive|driving|drove|steer|steering|yank\w*|swerv\w*) (?:the (?:car|wheel) )?(?:into|off)|"
    r"into (?:oncoming|a tree|a wall|the (?:barrier|river|quarry|sea|lorries|traffic))|"
    r"under (?:my|the) chin|to my (?:head|temple|throat|wrists?)|in my mouth|pull(?:ing)? the trigger|"
    r"bleed(?:ing)? out|slit\w*|hang(?:ing|ed)? (?:my ?self|from)|the noose|a noose|tie (?:it|the rope|a knot)|"
    r"take (?:them all|all of them|the lot|everything|every)|tak(?:e|ing) (?:all|every|the whole|my whole)|"
    r"swallow\w* (?:them|it|all|everything|the lot|the whole)|overdos\w*|\bod\b|"
    r"sit(?:ting)? in the (?:car|garage) with (?:it|the engine) running|engine running|car running|"
    r"(?:carbon monoxide|charcoal|helium|exhaust)|stones in my pockets|lie on the tracks|on the tracks|"
    r"in front of (?:a|the) (?:train|bus|lorry|truck|car)|put (?:a |the )?(?:bag|plastic bag) over"
)
_MEANS = _rx(
    r"gun|guns|pistol|rifle|shotgun|revolver|firearm|handgun|service weapon|bullets?|ammo|rope|noose|ligature|"
    r"cord|belt|bridge|ledge|roof|rooftop|cliffs?|balcony|overpass|tracks|railway|quarry|gorge|car park|"
    r"multi-?storey|parking (?:garage|structure)|"
    + _FLOORS
    + r"|(?:\d+(?:st|nd|rd|th)?|top|eighth|ninth|tenth|eleventh|twelfth|"
    r"thirteenth|fourteenth|fifteenth|"
    r"sixteenth|seventeenth|eighteenth|nineteenth|twentieth) "
    r"(?:floor|storey)|floors up|storeys|blades?|razor\w*|knife|knives|box cutter|craft knife|bleach|antifreeze|"
    r"weed ?killer|poison\w*|charcoal|exhaust|hose|carbon monoxide|helium|plastic bag|pills?|tablets?|"
    r"capsules?|meds|medications?|painkillers?|paracetamol|tylenol|acetaminophen|ibuprofen|aspirin|"
    r"sleeping pills|insulin|antidepressants?|prescription|my stash|the stash|the lot|the water|the sea|"
    r"co-?codamol|codeine|amitriptyline|propranolol|potassium chloride|digoxin|tramadol|diazepam|morphine|"
    r"the river|the lake|the train|the beam|loft hatch|reservoir|lookout|level crossing|headland|hose|"
    r"the garage|in the garage"
)
_DRUG_QTY = re.compile(
    r"\b(?:bottle|bunch|handful|fistful|box|boxes|pack|packet|packets|load|lot|all|everything|every|whole|entire|"
    r"rest|both|considerable (?:quantity|amount)|large (?:quantity|amount)|lots|month(?:'s|s)?(?: worth|"
    r" supply)?|weeks?(?:'s)?(?: worth| supply)|a ton|too many|[1-9]\d+|twenty|"
    r"thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|dozens?|double|triple|half)\b"
    r"(?: \w+){0,3}? (?:of )?(?:(?:my|the|those|these|them|his|her|our|their) )?(?:[a-z]+(?:'s|s') )?(?:\w+ ){0,2}"
    r"(?:pills?|tablets?|capsules?|meds|medications?|medicine|painkillers?|paracetamol|tylenol|acetaminophen|"
    r"ibuprofen|aspirin|insulin|antidepressants?|sleeping pills|prescription|sertraline|propranolol|"
    r"amitriptyline|co-?codamol|codeine|tramadol|diazepam|morphine|packs?|"
    r"benzos?|xanax|valium|oxy\w*|opioids?|lithium|them)\b"
    # a supply named by the time it lasts is a quantity of medicine already: "took my whole month's supply"
    r"|\b(?:month|week|fortnight)(?:'s|s)?(?: worth)? (?:of )?supply\b(?! (?:of|for|to|from|back|with me)\b)"
)
#: A quantity named by a pronoun or a container, its medicine said elsewhere in the text ("bottle's empty. took them
#: all", "took everything in the cabinet"): 2.22. Read only with
#: :data:`_MED_CONTEXT` in the text and no drink (:data:`_DRINK`): "drank it all" after "a bottle of wine" is not.
#: After a quantity: "took them all back to the pharmacy", "to the gp" are carried, not swallowed ("in one go" is).
_CARRIED_NOT = (
    r"(?! (?:back|to|into|out|with|home|down|up|over|round|around|along|outside|inside|away|off|on|for|apart|"
    r"in(?! one| a go| (?:a|one) sitting))\b)"
)
_PRONOUN_QTY = _rx(
    r"(?:(?:them|it|those|these) all|all of (?:them|it|those|these)|every (?:last |single )?one(?: of (?:them|those))?|"
    r"the (?:whole |entire )?lot)" + _CARRIED_NOT + r"|"
    r"everything (?:in|from|that was in) (?:the|my|her|his|our|[a-z]+'s) (?:\w+ )?"
    r"(?:cabinet|drawer|cupboard|bottle|tin|pen|organi[sz]er|blister|strip|tub|packet)(?! out\b)"
)
#: A quantity named by its container or by the supply it is (2.38): "took the whole packet", "swallowed my whole month's
#: refill". Read only in the attempt frame, with the act told as now or its effect felt, and medicine named or felt
#: (:func:`_frames`); "a whole packet of biscuits" names what it holds and is not read.
_CONTAINER_QTY = _rx(
    r"(?:whole|entire|full|all (?:of )?(?:the|my|that|this)) (?:[a-z]+(?:'s|s') )?(?:worth of )?"
    r"(?:packets?|packs?|strips?|blisters?(?: packs?)?|box(?:es)?|tubs?|sheets?|refills?|scripts?|prescriptions?|"
    r"supply|stash)(?! of (?!(?:my|the|those|these|them|it)\b))" + _CARRIED_NOT  # "took the full box to work"
)
#: Containers that hold medicine by what they are: no other word needs to name it.
_MEDICINE_CONTAINER = re.compile(r"\b(?:blisters?|refills?|scripts?|prescriptions?)\b")
#: The body feeling what was taken, in the user's words.
_FELT = _rx(
    r"(?:feel\w*|getting|gone|going|so|really|kinda|kind of|bit|very) (?:\w+ )?(?:dizzy|drowsy|sleepy|woozy|numb|"
    r"floaty|spinny|faint)|"
    r"(?:heart|chest) (?:is )?(?:racing|pounding)|can'?t keep my eyes open|throwing up|being sick|"
    r"room(?:'s| is) spinning"
)
_MED_CONTEXT = _rx(
    r"pills?|tablets?|capsules?|meds|medications?|medicine|painkillers?|insulin|prescription|pharmacy|blister|"
    r"bottle|cabinet|paracetamol|tylenol|ibuprofen|sleeping|antidepressants?|benzos?|opioids?|dose|overdose"
)
_DRINK = _rx(
    r"wine|beer|vodka|whisk(?:e)?y|gin|rum|cider|prosecco|champagne|tequila|juice|water|milk|coffee|tea|soda|coke|"
    r"cola|pop|smoothie|shake|lager|booze|alcohol|drink|drinks"
)
_TAKEN = _rx(
    r"took|taken|swallowed|downed|popped|chugged|drank|injected|shot up|had|ate|necked|"
    r"emptied(?= (?:\w+ ){0,7}?into (?:myself|me|my (?:mouth|arm|leg|stomach|belly|thigh))\b)|"
    r"(?:are|is) (?:all )?(?:down|in me)|kicking in|starting to (?:work|kick in)"
)
_DONE_NOW = _rx(
    r"just|already|ago|right now|now|minutes|an hour|half an hour|tonight|earlier|it's done|did it|kicking in|"
    r"starting to feel|feel (?:dizzy|sleepy|drowsy|weird|sick|numb|heavy)|getting (?:dizzy|sleepy|drowsy|"
    r"blurry|numb|cold)|won't stop bleeding|so much blood|soon"
)
_ON_EDGE = _rx(
    r"(?:one )?legs? (?:is )?(?:already )?over|climbed over the (?:barrier|railing|rail|fence)|holding onto the "
    r"(?:ledge|railing|rail)|on the rail of|sitting on the (?:train )?tracks|"
    r"(?:sitting|standing|stood|sat|perched|leaning) (?:on|at|over) (?:the )?(?:edge|ledge|railing|rail|parapet)|"
    r"(?:on|at) the (?:edge|ledge) of (?:the )?(?:roof|bridge|cliff|building|balcony|car park)|"
    r"(?:wrong|other|outside) side of the (?:rail|railing|railings|barrier|fence|safety)|legs (?:over|dangling over) "
    r"the (?:side|edge)|on the (?:tracks|railway line)"
)
_WISH = _rx(
    r"wish\w*|hope|hoping|hoped|pray\w*|prefer|preferred|preferable|long(?:ing)? (?:to|for)|welcome|wouldn't mind|"
    r"would not mind|'d not mind|"
    r"not mind|wouldn't care|don't care|not care|glad|grateful|relief|relieved|happy|happily|fine with|ok with|"
    r"okay with|wouldn't argue|won't argue|nice|easier|better off|better|rather|envy|jealous"
)
# Events that would end the user's life without their act: hoped for, they are a passive death wish
# ("part of me is hoping the plane goes down", "i've started hoping the lump is malignant").
_HARM_EVENT = _rx(
    r"(?:plane|flight|ferry|bus|train|car|lift|elevator) (?:\w+ )?(?:goes|go|went|going) down|(?:plane|flight) "
    r"(?:crash\w*|falls?|fell)|(?:it|plane|we|car|bus) crash(?:es|ed)?|turbulence is (?:the )?real|"
    r"(?:tumou?r|cancer|lump|scan|biopsy|it) (?:is|was|'s|comes?|came|would be|will be) (?:back|malignant|"
    r"terminal|cancer)|(?:is|be|was) malignant|an? (?:aneurysm|heart attack|stroke|clot)|(?:takes|take|took|"
    r"carries|carry|gather|gathers|finish\w*|get|gets) me (?:off|up|out of here|before|away|already|now|soon|"
    r"in my sleep)|finishes me|(?:clipped|rolled over|ran over|runs over|hit|hits) me|(?:a |the )?(?:real|"
    r"actual) fire|(?:don't|didn't|dont|didnt|never|not) (?:make it|wake up|come home)|to (?:not|never) wake|"
    r"(?:the weather|the sea|the storm|it) (?:turns and )?takes me|get me out of here|"
    r"(?:illness|disease|infection|virus|dengue|covid|drink|drinking|flu|pneumonia|winter) (?:\w+ ){0,3}?(?:takes|take|"
    r"finish\w*|kills?) me|(?:something|someone|somebody|anything|anyone) (?:\w+ )?(?:kills?|killed|would kill|"
    r"will kill) me"
)
_WANT = _rx(
    r"want\w*|wanna|need to|going to|gonna|imma|i'mma|ima|about to|ready to|ready|decided|decide|deciding|will|'ll|"
    r"intend\w*|mean to|have to|should just|might just|could just|urges?|tempt\w*|craving|can't wait to|"
    r"make sure|make it so|choose|chose|chosen|made my choice|made up my mind|mind's made up|i'm done"
)
_INTENT = re.compile(
    r"\b(?:going to|gonna|imma|i'mma|about to|ready|decided|will|'ll|make sure|make it so|"
    r"choose|chose|chosen|made my choice|made up my mind|mind's made up|tonight|today)\b"
)
_THINK = _rx(
    r"think\w*|thought\w*|consider\w*|contemplat\w*|fantasi[sz]\w*|dream\w*|obsess\w*|picture\w*|imagin\w*|"
    r"keep seeing|ideation|research\w*|looking up|looked up|googl\w*|search\w*|reading about|wonder\w*|"
    r"plan\w*|urges?|tempt\w*|drawn to|pull(?:ed)? towards|can't stop|keep (?:looking|staring|going back)|"
    r"brain (?:goes|says|tells)|voice in my head|mind (?:goes|keeps|drifts|wanders)|drift\w* to"
)
_PLAN = _rx(
    r"plan\w*|figured out|worked out|sorted out|all arranged|arranged|decided (?:how|when|where)|"
    r"know (?:exactly )?(?:how|when|where)|(?:chosen|picked|chose|set|circled) (?:a |the )?(?:day|date|place|spot|"
    r"time|night|weekend)|the date|found the spot|the spot|timing|rehears\w*|practi[cs]\w*|timetable"
)
_TIME = _rx(
    r"tonight|tmrw|tomorrow|today|this (?:weekend|week|evening|morning|afternoon|friday|saturday|sunday|monday|"
    r"tuesday|wednesday|thursday)|(?:on )?(?:fri|sat|sun|mon|tues?|wed|thurs?)(?:day)?(?: nite| night| morning|"
    r" afternoon| evening)?|on my birthday|next (?:week|month|friday|saturday|sunday|monday|tuesday|"
    r"wednesday|thursday)|at \d+|\d+ ?(?:am|pm)|\d+:\d+|when (?:everyone|everybody|they|my \w+|he|she|the house)"
    r"(?:'s|'re)? (?:is |are |goes |go |leaves |leave |gets |get )?(?:out|away|asleep|gone|to sleep|to bed|to work|"
    r"empty)|once (?:she|he|they|everyone|my \w+) (?:leaves|goes|is|are)|after (?:the funeral|everyone|the kids)|"
    r"by (?:monday|friday|the weekend|christmas|xmas|sunday|tomorrow)|midnight|this time tomorrow|"
    r"in (?:a few|two|three|\d+) (?:days|hours)"
)
_ACQUIRED = _rx(
    r"bought|buy|buying|purchased|ordered|got (?:a|some|the|myself|hold of|enough)|picked up|collect\w*|"
    r"sav(?:e|ed|ing)(?: up)?|been saving|stockpil\w*|hoard\w*|stash\w*|gather\w*|stor(?:ed|ing)|hid|hidden|"
    r"hiding|lined up|laid out|set up|tied|tested|sharpened|counted|filled|loaded|found (?:where|the|a)|"
    r"have (?:a|the|my|enough)|i've got|i have|got (?:it|them)|arrived|came today|under my bed|for later"
)
_AT_HAND = _rx(
    r"in my (?:closet|drawer|room|bag|car|pocket|hand|hands|nightstand|bedside|cupboard|cabinet|wardrobe|desk|"
    r"glovebox|backpack|purse|lap)|under my (?:bed|pillow|mattress)|next to me|beside me|in front of me|"
    r"on (?:my|the) (?:lap|desk|bed|nightstand|table|locker)|within reach|holding (?:it|the|a|my)|"
    r"keep looking at|keep staring at|staring at|looking at it|sitting (?:here )?with|right here|it's loaded|"
    r"is loaded|loaded|alone with it|alone with them"
)
_PREP_ACT = _rx(
    r"goodbye (?:msgs?|messages?|emails?|texts?|letters?|notes?|videos?)|(?:said|saying) my (?:\w+ )?goodbyes|"
    r"(?:my|the) (?:last|final) (?:letter|note|message|email)(?! (?:sounded|was|came across|seemed|looked|read))|"
    r"final thing i'?ll ever|"
    r"(?:scheduled|timed|set) (?:an |the |my )?(?:email|message|post|text)s? (?:\w+ ){0,6}?(?:after|once|when)|"
    r"(?:send|sent|go|goes) (?:out )?(?:automatically )?(?:after|once|when) (?:i'?m|you'?re|i am) gone|"
    r"(?:letters?|notes?) (?:are |is )?(?:written|done|ready|on (?:the|my)|for (?:my|the|each|everyone)|to (?:my|"
    r"each|everyone))|(?:wrote|written|writing|write|left|leaving) (?:\w+ ){0,4}?(?:a |my |the |another |"
    r"goodbye |suicide )?(?:letters?|notes?)(?! (?:for|to) (?:work|school|class|the landlord|my landlord|"
    r"the teacher|my boss|my future self|(?:my|his|her) \w+'s (?:school|teacher))| of (?:resignation|complaint|"
    r"recommendation|reference|apology|support))|suicide note|goodbye (?:letter|note|video|message)s?|"
    r"(?:put|putting|got|getting|have) (?:everything|things|my affairs|affairs) in order|loose ends|"
    r"passwords (?:and|are|written)|updated my will|made (?:a|my) will|who gets my|"
    r"(?:gave|giving|give|given) (?:away )?(?:all )?(?:my|away my) (?:\w+ )?(?:things|stuff|belongings|"
    r"possessions|cat|dog|pets?|guitar|savings|money|ps\d|xbox|clothes)|sold my \w+ (?:\w+ )?(?:and|n) gave|"
    r"(?:check|checked|checking) where the cameras|(?:said|saying) (?:my )?goodbyes?|last look at|"
    r"take care of my (?:cat|dog|kids|pets?) (?:for me|when|after)|look after my (?:cat|dog|kids|pets?|"
    r"children) (?:for me|when i|after)|"
    r"(?:won't|wont|will not) (?:need|be needing) (?:it|them|these|this|my|any)|"
    r"(?:research|researched|researching|looked up|googled|looking up|reading up)(?: on)? (?:\w+ ){0,3}?(?:how "
    r"many|which|how much|how long|how high|what to take|the best way|ways to|suicide methods|methods|lethal "
    r"doses?|overdos\w*)|"
    # pills gathered covertly, or from several chemists
    r"(?:every|each) (?:chemist|pharmacy)|(?:different|several|three|two|four|a few|other|multiple) (?:chemists|"
    r"pharmacies)|"
    r"chemists? (?:don't|that don't|won't) (?:limit|ask)|without (?:the pharmacist|the chemist) (?:asking|noticing)|"
    r"(?:saving|saved|collecting|collected|stockpil\w+|hoarding|hoarded|hiding|hid|squirrel\w*) (?:up )?(?:\w+ )?"
    r"(?:pills|tablets|meds|them) (?:\w+ ){0,3}?(?:for|in|under|inside|behind|now|away)"
)
_LETHAL_Q = _rx(
    r"how many|how much|how high|how far|how deep|how long (?:does|would|will|did|do|until)|which (?:bridge|"
    r"building|floor|pills?|tablets|one|method|way|is more|would be (?:quicker|faster))|what(?:'s|"
    r" is)? (?:the )?(?:dose|amount|height|"
    r"floor)|certain|guaranteed|for good|put (?:a guy|someone|somebody|me|a person) down|would (?:\w+ )?be enough|"
    r"what happens if (?:you|i|someone|a person) (?:take|took|swallow|jump|drink)|lethal|fatal|deadly|"
    r"painless\w*|quickest|fastest|easiest|surest|most reliable|least painful|does it hurt|would it hurt|"
    r"is it painful|enough to|surviv\w*|actually work|still work|work or|be sure|to be sure|odds|"
    r"more likely|guarantee\w*|arteries|artery|(?:what|which) (?:part|spot|vein|side|place|area)s?"
)
# Dying as a generic act a question asks about ("the most painless way to kill yourself", "jumping or hanging").
_GENERIC_DEATH = _rx(
    r"kill (?:your|one|them)sel(?:f|ves)|end (?:your|one's|a person's|someone's) (?:own )?life|off yourself|"
    r"hang yourself|commit suicide|painless (?:way|method|death|exit|option)s?|(?:way|ways|method|methods) to die|"
    r"(?:jumping|hanging|pills|an overdose|drowning|a gun) or (?:jumping|hanging|pills|an overdose|drowning|a gun)"
)
# How a question about a generic way of dying asks: how to, which works, what hurts least.
_HOW_Q = _rx(
    r"how (?:to|do you|do i|does one|would (?:you|i|someone|one)|can (?:you|i|someone))|(?:best|easiest|quickest|"
    r"fastest|surest|simplest|cleanest|least painful|most painless|most reliable|most effective|painless) "
    r"(?:way|method|option)s?|which (?:is|one is|method is|way is) (?:more|most|less|least|better|quicker|faster)|"
    r"(?:most|more) reliable|least painful|painless|does it hurt|would it hurt|is it painful|googl\w*|"
    r"look(?:ing|ed)? up|search(?:ing|ed)? (?:for|up)|research(?:ing|ed)?|(?:more|most) (?:fast|quick|easy|sure|"
    r"certain|reliable|effective|painless)|faster|quicker|easier|surer|less pain\w*|(?:least|most) \w+ (?:way|method|"
    r"option)s?|(?:what|which) (?:would|will|is|'s) (?:be )?the (?:best |right )?(?:way|method)"
)
#: The user saying a question is about themselves ("asking for myself", "it's been on my mind").
_ASKING_FOR_ME = re.compile(
    r"\b(?:asking (?:for|about) (?:myself|me)|not hypothetically|(?:been|it's been|its been|keeps? (?:being|coming))"
    r" (?:on|in|into) my (?:mind|head)|i keep (?:thinking|coming back|reading|wondering|staring|looking at)|"
    r"keep thinking about (?:it|this|that)|been thinking about (?:it|this|that)|i think about (?:it|that|this) "
    r"(?:a lot|every|all)|asking bc i|asking because i|for me not (?:for )?(?:anyone|someone) else)\b"
)
#: A question about how dangerous, quick or sure a way of dying is, in words ``_LETHAL_Q`` leaves to
#: ordinary questions ("which of the pills would be most dangerous all at once", "is 12 floors high enough",
#: "will it work"): read only with the user's stake said elsewhere in the text (``_STAKE``).
_RISK_Q = _rx(
    r"(?:most|too|more|how) (?:dangerous|toxic|strong|reliable|quick|quickly|fast|cold|tall|soon)|"
    r"which of (?:the|my|these|those|them)|(?:all|everything) at once|too (?:much|many)|"
    r"(?:high|deep|cold|fast|strong|tall|long) enough|enough (?:high|for)|(?:is|be) (?:it |that |this )?enough|"
    r"stop (?:my|the|someone's|a person's) (?:heart|breathing)|"
    r"(?:will|would|does|did|is) (?:it|this|that|they|\w+ing) (?:work|be quick|hurt|kill|painful)|"
    r"(?:or|to) (?:just )?hurt|painful|quicker|faster|"
    r"how long (?:before|after|till|until|does it take|would it take|will it take)|"
    r"what dose|what amount|need to take|would i need|do i need|"
    r"enough(?: \w+)?(?=\?)|enough or|hold (?:my|someone's|a person's|an adult's) weight"
)
#: Ways of dying a question names without a word of ``_MEANS`` or ``_METHOD_ACT`` ("is drowning painful",
#: "how high does a fall have to be").
_LETHAL_THING = _rx(
    r"a fall|the fall|falling|drowning|drown|hypothermia|freez(?:e|ing) to death|cold water|fumes|gas|a train|"
    r"trains|jumping|a jump|hanging|the current|not wake up|sleep forever|(?:least painful|most painless|painless|"
    r"quickest|fastest|surest|easiest|most reliable|most certain) (?:way|option|method)s?"
)
#: The user's stake in such a question, said anywhere in the text: a decision made ("i'm doing it friday",
#: "i've made up my mind"), the question put as theirs ("it's for me, not for hunting", "not for a patient"),
#: a supply held or built ("i've got about 60 left"), or the outcome wanted ("i don't want to be able to",
#: "enough to not wake up"). Each is first person and unnegated by construction ("i'm not doing it" has no
#: match).
_STAKE = _rx(
    # a decision made
    r"(?:i've|i have|ive|i) (?:already )?(?:decided|made up my mind|made my mind up|made my decision|"
    r"picked (?:one|it|the \w+|a \w+))|(?:my )?mind'?s made up|mind is made up|"
    r"(?:that part'?s|that part is|it'?s all) decided|no backing out|no going back|"
    r"(?:i'?m|im|i am) (?:doing|going to do|gonna do) it"
    r"(?! as| for (?:a|an|my|our|the|school|class|college|uni|work)\b)|i(?:'ll| will) do it|"
    # the question put as theirs
    r"(?:it'?s|its|it is) (?:only |just )?for me|for me,? not|"
    r"not for (?:a patient|hunting|sightseeing|self[- ]harm|a story|story|research|a friend|anyone else)|"
    r"asking (?:seriously|for real|for the version of me)|seriously asking|where the line is for me|"
    # a supply held or built
    r"i(?:'ve| have|ve)?(?: got)? (?:about |around |maybe |nearly |over |almost )?"
    r"\d+ (?:\w+ |\w+'s ){0,4}?(?:left|so far|saved|put aside|stashed|hidden)|"
    r"building up a (?:supply|stash)|(?:been|keep) (?:buying|saving|collecting|stockpiling)|"
    # the outcome wanted
    r"(?:don't|do not|dont) want to (?:be able to|wake up|survive|come back)|"
    r"enough to (?:not|never)|(?:want|need) to be sure|make sure it works|"
    r"(?:i'?m|im|i am) (?:set on|definitely) (?:doing|going to do) it|"
    r"(?:i'?m|im|i am) (?:planning|going to do|doing) it (?:on|for|this|next|tomorrow|tonight)|"
    r"(?:that'?s|that is) my plan|my plan is|i want it to (?:work|be quick|be over)|"
    r"(?:don't|do not|dont) want to (?:suffer|be found|be saved)|(?:mine|me),? i mean|i mean (?:me|mine)"
)
#: After "cut myself": a thing cut for oneself, or an idiom, not a wound ("cut myself a slice", "cut myself some
#: slack", "cut myself off from everyone"); "a lot", "a few times", "a second time", "a week ago", "some more" stay
#: the act (2.22). A string, shared with the phrase rules (``_crisis``).
NOT_FOR_ONESELF = (
    r"(?! (?:an?|another) (?!(?:lot|few|little|bit|couple|dozen|number|tiny|second|third|fourth|fifth|\w+th|week|month|"
    r"year|day|night|while|minute|hour|moment|couple)\b)\w|"
    r" some (?!more\b|again\b)\w| (?:off|free|loose|short)\b)"
)
_SH_ACT = _rx(
    r"(?:cut|cuts|cutting|cutted|slice|sliced|slicing|slash\w*|carv\w*|scratch\w*|burn\w*|hit|hitting|punch\w*|"
    r"bang\w*|bit|bite|biting|hurt|hurting|harm|harming|punish\w*|starv\w*|scald\w*|brand\w*) "
    r"(?:\w+ ){0,2}?(?:my ?self"
    + NOT_FOR_ONESELF
    + r"|my (?:arms?|wrists?|legs?|thighs?|skin|stomach|tummy|belly|body|hips?|ankles?|"
    r"chest|forearms?|shoulders?|knuckles|head)|arms|wrists|thighs|forearm)|"
    r"self[- ]?harm\w*|self[- ]?injur\w*|\bsh\b(?![*!#@$%])|cutting (?:again|tonight|myself|to cope|to feel)|"
    r"the (?:cutting|burning|arm|lighter|blade) thing|hid(?:e|ing) (?:\w+ ){0,2}?(?:cuts|scars|burns|self[- ]?harm)|"
    r"(?:started|start|keep|kept|been|back to|relapsed (?:into|on)?|urge to|urges to|want to|wanna|need to|"
    r"craving) (?:\w+ )?(?:cutting|cut|burning|burn|scratching|hurting myself|hitting myself)|"
    r"(?:free|clean) (?:of|from) (?:cutting|self[- ]?harm|sh)|used to (?:cut|burn|hurt|harm|self[- ]?harm)|"
    r"(?:days?|weeks?|months?|years?) (?:clean|free) (?:of|from) (?:cutting|self[- ]?harm\w*|sh|harming|blades?)|"
    r"(?:days?|weeks?|months?|years?) clean(?=[^.!?]*\b(?:gone|relapse\w*|blade|sharp|razor|cut\w*|habit)\b)|"
    r"hurt\w* my (?:own )?(?:hands?|fingers?|arms?|legs?|body|skin)|"
    r"(?!(?:held|hold\w*) my hands?\b(?! (?:over|on|onto|under|in|into|against|to|near|above)\b))"
    r"(?:press\w*|held|hold\w*|drag\w*|pinch\w*|claw\w*|beat|beating|slap\w*|drive|drove|dig\w*|carv\w*|"
    r"scratch\w*|scrap\w*|burn\w*|snap\w*|cut\w*|punch\w*|bang\w*|jab\w*|stab\w*|rub\w*)"
    r"(?: [\w'-]+){0,8}? (?:(?:into|onto|on|to|against|across|over|in|under|with) )?(?:the (?:inside|back|backs) "
    r"of )?my (?:own )?(?:inner |upper )?(?:arms?|forearms?|wrists?|thighs?|legs?|hips?|stomach|skin|hands?|"
    r"palms?|shins?|face|fingers?|ankles?|chest|belly|tummy)|open myself up|self[- ]inflicted|"
    r"cut (?:again|tonight|deeper|deep)|(?:without|free of|from|history with) cutting|"
    r"(?:to|can i|should i|when|where to) cut(?:ting)?\b[^.?!]{0,30}\b(?:body|arms?|wrists?|legs?|thighs?|veins|"
    r"marks|notices|sees|deep)|"
    r"(?:do|did|doing) (?:it|them|this|that) to myself|self[- ]arm|bad[- ]day kit|add more (?:lines|marks|scars|cuts)|"
    r"wanting to add more|until (?:it'?s |they'?re |they were |it was )?(?:raw|purple|bled|bleeding|blood came)|"
    r"(?:til|till) (?:it|they) (?:bled|bleeds?|was raw)|(?:burn|cut|cuts|burns) on purpose|"
    r"(?:marks|cuts|scars|burns|bruises) on my (?:legs?|arms?|thighs?|hips?|stomach|wrists?)|"
    r"(?:thighs?|arms?|wrists?|legs?|forearms?) (?:all )?(?:cut up|cut|covered in cuts)|"
    r"relapse\w*|fresh (?:cuts|marks|scars|wounds)|(?:the )?marks (?:i make|on my)|what i did to my|"
    r"(?:cuts|scars|burns|marks) on my|punched (?:the )?(?:walls?|tiles|door|mirror)|until (?:it|they|my \w+) "
    r"(?:bled|bleeds?|split|bruised?)|(?:pressed|held) (?:it |a \w+ )?(?:onto|against|to) my|barcode|"
    r"long sleeves|hide (?:the|my) (?:cuts|scars|marks|arms)|blades? (?:and|n) (?:plasters|bandages)|"
    r"(?:plasters|bandages|antiseptic)(?: \w+){0,4} (?:blades?|razor|knife)"
)
_SH_GUARD = _rx(
    r"sober|sponsor|drinks|drinking|alcohol|gambl\w*|smok\w*|vap\w*|"
    r"shav\w*|chopp\w*|cooking|kitchen|mandoline|grater|peel\w*|oven|stove|kettle|pan|iron|grease|fire|"
    r"candle|curling|straightener|accident\w*|slipped|fell|falling|tripped|roller derby|rugby|football|"
    r"hockey|gym|workout|climbing|bouldering|garden\w*|hair|haircut|buzz cut|fringe|bangs|nails|glass|"
    r"paper cut|cat|dog|puppy|kitten|sunburn\w*|class|corners|ties|carbs|sugar|costs|budget|lecture|"
    r"diet|ballet|dance|tattoo|itch\w*|mosquito|bites|eczema|rash|allerg\w*"
)
#: Words that make an injury deliberate whatever else the text says (they override the guard above).
_DELIBERATE_SH = re.compile(
    r"\b(?:on purpose|deliberately|to feel|punish|urge|relaps|deserve|cope|"
    r"until (?:it|they) (?:bled|bleeds?|went purple|cracks?|crack)|(?:til|till) (?:it|they) bled|when i'?m "
    r"(?:angry|stressed|upset|sad|useless)|when i feel|as penance|habit|to myself|nobody sees|no one sees|"
    r"self[- ]inflicted|so (?:nobody|no one) (?:sees|notices)|"
    # a habit or a cover story is not an accident: "i burn myself with the straightener sometimes", "i told her it
    # was the cat", "press it on my thigh until i can't stand it"
    r"sometimes|every (?:night|day|evening|morning|week)|whenever|each time|most (?:nights|days)|i keep|"
    r"i've been|(?:until|till|til) (?:i|it|they|the skin|blood)|"
    r"when i'?m (?:very |so |really )?(?:overwhelmed|anxious|panicking|low|down|numb)|"
    r"(?:when|after|whenever) (?:\w+ ){1,3}(?:shouts?|yells?|screams?)|"
    r"(?:told|tell) (?:her|him|them|people|everyone|my \w+) (?:it was|it's|i)|excuse|wasn't the (?:cat|dog)|"
    r"(?:long sleeves|hide|hiding|cover) (?:the|them|it|my)|welts|(?:break|broke|breaks) the skin)"
)
_HISTORY = _rx(
    r"(?:my|an|a|the|first|second|third|last|previous|suicide|failed) attempts?(?! at (?!suicide|killing|"
    r"ending|taking|hanging|overdos|od\b)[a-z])|attempts? at (?:\d+|"
    r"sixteen|fifteen|fourteen|seventeen|eighteen|nineteen|twenty)|"
    r"(?:(?:for|after|from) trying|tried) to (?:um |uh |like )?(?:kill(?! (?:the|a|an|this|that|some|time|off)\b)|"
    r"end|take|overdose|od|hang|jump|drown|"
    r"leave early|leave for good|go to sleep|not wake|die|do it)|"
    r"(?:i'?ve|i have|i) tried (?:once|twice|before)(?! to| with (?!pills|tablets))"
    r"(?=\W+(?:when|at|in|twice|and|\w+ (?:years|months)|$))|"
    r"tried (?:with|once|twice|before) (?:pills|"
    r"tablets|a rope|at \d+)|attempted(?: suicide)?|survived (?:an? )?(?:overdose|attempt|jump|od)|"
    r"(?:sectioned|hospitali[sz]ed|psych ward|inpatient|stomach pumped|woke up in (?:the )?hospital)"
)
_AGAIN = _rx(
    r"again|back|coming back|returning|creeping|these days|lately|recently|this week|tonight|now|still|"
    r"starting to|same (?:feeling|place|thoughts|way)|heading that way|like (?:back )?then"
)

# Soft anchors: wording that names a crisis only when the model is confident the turn is one. No frame uses
# them and they are not model features; ``anchor_finding`` reports them (high) when the model confirms.
_SOFT_INTENT = _rx(
    r"(?:do|doing|did|done) it(?= (?:tonight|today|tomorrow|this|now|right now|soon|anyway|for real|after|before|"
    r"when|once|on|at|again|properly|finally|either way|no matter|i|like|you know)\b|\W*$|\W*[.!,;])|"
    r"going through w(?:ith|/)?(?= it\b)|going to commit(?=\W*$|\W*[.!,;])|"
    r"(?:my )?mind(?:'s| is) made up|made up my mind|(?:no one|nobody) (?:can|will|could) stop me|"
    r"(?:i'm|im|i am) (?:set|decided) on"
)
_SOFT_DEATH = _rx(
    r"end of the road|my time (?:to be|is) up|ready to go|made my peace|want out|not sticking around|"
    r"(?:clock|check|tap|bow)(?:ing)? out(?: for good| permanently)?|(?:the|my) (?:last|final) (?:one|time|goodbye|"
    r"weekend|day|night|week|month|birthday|christmas|chapter|page)|for good|bye forever|the permanent kind|"
    r"(?:delete|erase|switch) (?:me|myself)(?: off)?|lie down for the last"
)
_SOFT_SH = _rx(r"on purpose|deliberately|punish(?:ing|ed)? (?:my ?self|my body)")
# The word itself, as something in the user's life ("the suicidal thoughts are back", "suicide has been on my mind",
# "suicidal since age 12"): read by the ``suicide_topic`` frame, with what follows or precedes it (_SUICIDE_HERE).
_SUICIDE_WORD = _rx(
    r"(?:suicid(?:e|al)|(?<!doing )(?<!do )(?<!did )(?<!run )(?<!ran )(?<!running )(?<!more )(?<!extra )suicides)"
    r"(?! (?:squad|doors?|sprints?|runs?|drills?|wings?|bomb\w*|vests?|missions?|"
    r"prevention|awareness|hotlines?|helplines?|lines?|rates?|statistics|stats|forest|king|note|notes|letter|of|by|"
    r"intervention|courses?|workshops?|first aid|safetalk|charity|walk|fundraiser|memorial|support group|"
    r"among|in (?:the|men|women|young|teens|america|the uk)|risk assessments?|training|research|cases)\b)"
)
#: When the suicide word was the user's (history): "suicidal since age 12", "on suicide watch in uni".
_PAST_MARKERS = (
    r"since (?:age|i was|\d+|middle|high|primary|year|childhood)|(?:years|months) ago|as a (?:teen|teenager|kid|"
    r"child)|in (?:high school|middle school|college|uni|university|\d{4})|when i was|watch"
)
_SUICIDE_HERE = re.compile(
    r"\b(?:(?:on|in|into|cross\w*) (?:my |the )?(?:mind|head|thoughts)|back|again|return\w*|creep\w*|"
    r"keeps? (?:coming|popping|showing)|came back|coming back|come back|follow\w* me|haunt\w* me|won'?t leave|"
    r"stuck|louder|stronger|worse|every (?:day|night|morning|single day)|all (?:day|night|the time)|constantly|"
    r"non-?stop|(?:an? |my )?(?:real |only |actual |viable |good )?(?:option|answer|way out|solution)|tempt\w*|"
    r"appeal\w*|calling (?:me|to me)|since my|" + _PAST_MARKERS + r")\b"
)
#: Past-only markers after a suicide-topic word, and a past tense just before it ("was on suicide watch", "i was
#: suicidal"): told as history unless it is back (``_AGAIN``).
_SUICIDE_PAST = re.compile(r"\b(?:" + _PAST_MARKERS + r")\b")
_WAS_BEFORE = re.compile(r"\b(?:was|were|used to be|had been)\b(?:\W+\w+){0,2}\W+$")
_MIND_BEFORE = re.compile(r"\b(?:mind|head|only|always|constantly)\W+(?:\w+\W+)?$")
_THE_SUICIDE_ONES = re.compile(r"\W*(?:ones|kind|type|sort)\b")
_OWNED_BY_OTHER = re.compile(r"(?:\b(?:his|her|their|your)|\w+'s?) $")
#: A third person near the word is its subject or owner ("my son has been suicidal", "she said the suicidal
#: thoughts are back") unless it is the one being told ("i want to tell my therapist the suicidal thoughts are back").
_TOLD_TO = re.compile(r"\s+(?:the|that|about|how|what|my)\b")
#: Someone's death by suicide ("died by suicide", "lost a colleague to suicide"): grief, never the user's ideation.
_DIED_BY = re.compile(
    r"\b(?:died|dying|death|dead|killed|lost|losing|loss|attempted|committed|completed|suicide of)\b(?:\W+\w+){0,3}\W+"
    r"(?:by|to|from|through|of)?\W*$|\b(?:by|to) $"
)

# -- guards ---------------------------------------------------------------------------------------------
_MEDIA_WORDS = (
    r"movie|film|show|series|episode|book|novel|(?<!my )(?<!my life )story|stories|song|lyrics|album|"
    r"character|protagonist|"
    r"narrator|villain|hero|plot|scene|game|gaming|anime|manga|documentary|article|news|podcast|musical|"
    r"actor|actress|author|celebrity|essay|paper|assignment|coursework|thesis|homework|lecture|research "
    r"(?:paper|project)|statistics|study|studies|report|reporter|journalist|headline|poem|poetry|fiction|"
    r"screenplay|chapter|boss fight|respawn|npc|dnd|d&d|campaign|dungeon|history class|exam question|"
    r"true crime|sims|minecraft|fortnite|elden ring|dark souls|level \d+|module|training module|policy|"
    r"placement|presentation|storyline|manuscript|peer review\w*|rates|data|hospitali[sz]ations|agency|records|"
    r"archive|inquest|coroner|family history|history project|painting|painted|artwork|shakespeare|hamlet|"
    r"ophelia|nursing student|student nurse|clinical|screening tool|prevention work|helpline card|"
    r"literature review|systematic review|meta-analys\w*|the evidence (?:that|on|for)|"
    r"slideshow|grant application|osce|role-?play\w*|content warning|trigger warning|book club|librarian|"
    r"policy brief|youth leaders|recogni[sz]ing|warning signs of|spot the signs|safeguarding|"
    r"the research (?:say|says|show|shows|on)|research on|"
    # the concept as a professional's caseload or training ("three overdose calls", "self harm presentations")
    r"(?:overdose|od|self[- ]?harm|suicide|suicidal) (?:calls?|presentations?|assessments?|patients|cases|"
    r"admissions|risk assessments?|awareness|statistics|training)"
)
#: Plurals of the media nouns that are no verb, nothing the user owns or picks and no workload ("novels that handle
#: self-harm", "the self-harm chapters"; since 2.39). Not "shows", "books", "games", "songs", "essays": "the scan
#: shows", "off the books", "my ps5 and all my games", "picked the songs" for a funeral are the user's own, and "three
#: essays due and i want to die" is the user's day, not a piece of media.
_MEDIA_PLURALS = (
    r"episodes|novels|protagonists|narrators|villains|documentaries|articles|podcasts|musicals|headlines|poems|"
    r"screenplays|chapters|storylines|manuscripts"
)
#: A season of a series, not of exams, sport or hunting ("during exam season i've been biting my forearm"; since 2.30).
#: The model features keep the bare word (see :data:`CONCEPTS`): the shipped models were trained on it.
_MEDIA = _rx(
    r"seasons? (?:\d+|one|two|three|four|five|six|finale|premiere)|(?:new|final|last|latest|first|next|whole) "
    r"seasons? of|(?:new|final|latest) season|" + _MEDIA_PLURALS + "|" + _MEDIA_WORDS
)
#: The class before 2.30, as inline 1.16 and second look 1.19 learned it: a model feature only.
_MEDIA_FEATURE = _rx("season|" + _MEDIA_WORDS)
_GRIEF = _rx(
    r"(?<!my )(?<!own )funeral|passed away|passed on|rip|memorial|(?<!my )grave|cemetery|anniversary of (?:his|her|"
    r"their|my \w+'s)|"
    r"coffin|casket|eulogy|obituary|wake for|lost my (?:mum|mom|dad|brother|sister|friend|son|daughter|"
    r"husband|wife|partner|grandma|grandad|grandpa|grandmother|grandfather|uncle|aunt|cousin)|"
    r"(?:he|she|they) (?:died|passed|killed (?:himself|herself|themselves)|took (?:his|her|their) (?:own )?life)|"
    r"grief|grieving|mourning|widow\w*|condolence\w*|vigil"
)
#: Since 2.36 (2.35 did it first and was withdrawn) every alternative ends at a word boundary: before, "jump in" read
#: "jump into the river" and "hanging on" read "hanging once" as idioms, and "dying to" read "dying tonight".
_IDIOM = re.compile(
    r"\b(?:dying (?:to|for|of)|die (?:of|from) (?:laughing|embarrassment|boredom|shame|cringe)|"
    r"(?:dead|deathly|death) (?:tired|serious|set|wrong|on|ringer|end|last)|to die for|kill(?:ing|ed)? it|"
    r"kill(?:ing)? time|(?:is|was|are|'s|'re|be|gonna|going to|will|'ll) (?:literally |actually |so )?kill(?:ing)? me|"
    r"the death of me|dead (?:to me|inside|battery|phone|ass|lo+l+|lmao+)|"
    r"(?<!after )(?<!when )(?<!once )(?<!morning )(?<!tonight )(?<!tomorrow )(?<!then )i'm dead(?! by| before| soon)|"
    r"i died(?! (?:\w+ ){0,3}?(?:idc|i don't care|i dont care|who cares|i wouldn't care))|i'm dying(?= lo+l| lmao|!|"
    r"$)|"
    r"end (?:things|it) (?:with|between)|(?:end|ending) things with|bored to death|scared to death|"
    r"sick to death|worried to death|"
    r"(?<!freeze )(?<!freezing )(?<!froze )(?<!bleed )(?<!bleeding )(?<!starve )(?<!starving )(?<!myself )to death\b|"
    r"over my dead body|deadlines?|dead ends?|dying (?:right now|rn)"
    r"|(?:scared|afraid|terrified|worried|frightened|fear|feared|nervous|panick\w*|anxious|thought|felt like|"
    r"feel like|feels like|feeling like|"
    r"convinced)(?: that)?(?: [\w']+){0,3} (?:going to|gonna|will|'ll|would|might|was going to) die"
    r"|(?:rather|sooner) die than|laugh\w* so (?:hard|much)|(?:run|ran|running|move|moving) away"
    r"|die of old age|dead heat|out of (?:my|his|her|their) skin|cut (?:our|my|your|their) losses"
    r"|overdos\w* on (?:chocolate|coffee|caffeine|sugar|candy|sweets|cake|pizza|netflix|tv|memes|cuteness|carbs|"
    r"cheese|tea|energy drinks|anime|k-?dramas|love|pasta|crisps|chips)"
    r"|kill\w* (?:my|him|her|them)sel(?:f|ves) (?:studying|working|revising|training|running|trying)"
    r"|cut (?:ties|back|down|out|off|class|corners|my hair|the|some|him|her|them|carbs|sugar|costs|loose)"
    r"|burn(?:ed|t)? (?:out|the|my (?:dinner|toast|food|tongue))"
    r"|jump(?:ed|ing)? (?:at|on|in(?! front)|into (?:the (?:pool|lake|conversation|deep end))|ship|rope|the gun|"
    r"to (?:conclusions|it))"
    r"|shoot(?:ing)? (?:hoops|pool|a (?:message|text|photo|video|email)|my shot|the breeze)"
    r"|hang(?:ing)? (?:out|on|in there|up|with)|drop dead|pulling my hair out"
    r"|die (?:my|her|his|their|your) hair|die it (?:pink|blue|red|purple|black)"
    r"|burn\w* (?:the candle|the midnight oil|(?:my|our|your|their|all) bridges)|die on (?:this|that|the|every) hill"
    r"|drown\w* in (?!(?:the |a |my |some |cold |deep )?(?:water|sea|ocean|river|lake|bath|bathtub|tub|pool|canal|"
    r"quarry|reservoir|loch|sound|surf)\b)"
    r"|jump\w* off (?:this|the|that|my) (?:group ?chat|chat|call|zoom|discord|thread|bandwagon)"
    r"|crawl (?:in|into) a hole (?:and|n|&) die|hanging (?:plants?|baskets?|pots?|shel(?:f|ves)|lamps?|lights?|"
    r"pictures?|frames?|mirrors?|art|decorations?|the washing|laundry|wallpaper)"
    r"|dead to the world|cheat(?:ed|ing|s)? death|jump(?:ing|ed)? off the deep end|kms (?:lo+l+|lmao+|(?:ha){2,}h?)|"
    r"(?:calves|legs|feet|phone|battery|plant|plants|car|laptop|wifi|vibe|vibes|career|"
    r"plan|dream|dreams|hopes|group chat|chat|conversation|joke|meme|show|series|party|band) "
    r"(?:\w+ )?(?:is |are |was |were |just |literally )*(?:dying|dead|died))\b"
)
#: The idiom class as the shipped models were trained on it (a model feature, ``CONCEPTS``): 2.34's prefixes, before
#: 2.35's word boundaries, rebuilt from ``_IDIOM`` (tests/test_crisis_detection.py pins the pattern).
_IDIOM_2_34 = (
    ("kms (?:lo+l+|lmao+|(?:ha){2,}h?)", "kms (?:lol|lmao|haha)"),
    ("lo+l+|lmao+", "lol|lmao"),
    ("(?= lo+l|", "(?= lol|"),
    ("deadlines?|dead ends?", "deadline|dead end"),
)
_IDIOM_FEATURE = re.compile(reduce(lambda p, kv: p.replace(*kv), _IDIOM_2_34, _IDIOM.pattern.removesuffix(r"\b")))
_DENY = re.compile(
    r"\b(?:i'm not|i am not|not|never|nowhere near|nothing like|nothing to do with|far from|i don't|i'd never|"
    r"i would never|i won't|"
    r"i wouldn't|"
    r"no (?:thoughts?|intention|intent|plans?|desire|wish|urges?|wanting|risk|danger|way i'd|way i would)|"
    r"(?:nobody|no one) (?:needs|has|have) to worry about me|"
    r"zero (?:thoughts?|intention|plans?|desire|urges?))\b"
    r"(?!\W+(?:just |only )?(?:saying|joking|kidding|exaggerating|being dramatic|messing|scared|afraid)\b)"
    # a transcript's restart is not a denial: "i'm not i'm going to end my life"
    r"(?!" + _RESTART.pattern + ")"
    # ...nor does it reach past a clause of the user's own: "i'm not planning on coming back, i want to die"
    r"(?:(?![,;] (?:i (?:want|wish|need|plan|keep|will)|i'm (?:going|gonna|planning)|i'll)\b)\W+\w+){0,5}?\W+"
    r"(?:suicid\w*|self[- ]?harm\w*|"
    r"going to (?:do|hurt|kill)|hurt\w* myself|kill\w* myself|harm\w* myself|want\w* to die|to die|in danger|"
    r"at risk|unsafe|a danger|in any danger|end\w* (?:it|my life)|death|dying)"
    r"|\b(?:suicidal|suicide|self[- ]?harm\w*)[,.]? (?:no|nope|never|not really|not at all)\b"
    r"|\b(?:it's|its|it is) not (?:that|like) i (?:don't|do not|dont) want to (?:be alive|live|be here)\b"
    r"|\b(?:it's|its|it is) not (?:like|that) i(?:'m| am)? (?:wanna|want to|going to|gonna|would|'d|will|'ll|"
    r"planning to) "
    r"(?:\w+ ){0,2}?(?:kill myself|die|end (?:it|my life)|hurt myself|do anything)\b"
    # the concept first, the denial after: "the thought of killing myself has never crossed my mind",
    # "self-harm isn't something i've ever done", "suicidal thoughts? i don't have any"
    r"|\b(?:suicid\w*|self[- ]?harm\w*|kill\w* myself|end\w* my life|hurt\w* myself)(?:\W+\w+){0,4}?\W+"
    r"(?:(?:has|have) (?:\w+ )?never (?:crossed|entered|been)|(?:isn't|is not|wasn't|was not) something i'?ve ever|"
    r"i (?:don't|do not) have any|i (?:haven't|have not) had any|none at all)"
)
_DENY_BUT = re.compile(r"\b(?:but|except|yet|although|though)\b")
#: "i can't promise i won't hurt myself" is not a denial.
_DENY_HEDGE = re.compile(r"\b(?:promise|sure|know if|know whether|guarantee|trust myself)\W+$")
#: Activities that explain means and places (see :func:`_explained`); the inline model's ``activity`` feature keeps
#: the words it was trained on (``_ACTIVITY_FEATURE``).
_ACTIVITY_WORDS = (
    r"climb\w*|bouldering|harness\w*|safety (?:line|rope)|belay|abseil\w*|rappel\w*|sail\w*|boat|camping|hik\w*|"
    r"trail|scenic|the (?:\w+ )?view|views|"
    r"photos?|pictures|tourist|sightseeing|bungee|skydiv\w*|parachute|diving|dive|swim(?:ming)? (?:lessons|"
    r"practice|club|laps)|pool|beach|surf\w*|kayak\w*|fishing|hunt\w*|deer|range|target|clay|cook\w*|chopp\w*|"
    r"kitchen|recipe|dinner|onions?|chef|bak\w*|steak|garden\w*|weeds?|lawn|hedge|rope ladder|"
    r"rope swing|ropes? course|rope bridge|tire swing|"
    r"tyre swing|construction|scaffold\w*|roofer|roofing|electrician|commute|train (?:to|from|station|was|is)|"
    r"late for|delayed|crossfit|gym|jump rope|skipping rope|parkour|trampoline|long jump|high jump|ski\w*|"
    r"snowboard\w*|pest|rats?|mice|vet|put (?:down|to sleep)|euthanas\w*|headache|migraine|cramps|period|"
    r"toothache|fever|flu|cold|prescribed|as directed|my dose|(?:take|takes|took|taking|have|had) (?:\w+ ){0,4}?"
    r"(?:daily|every (?:morning|night|day))|refill\w*|"
    r"pharmac\w*|side effects?|gp said|doctor said|my doctor|dosage|interact\w*|kid|toddler|child|the dog|"
    r"the cat|movers|moving|move|relocat\w*|abroad|emigrat\w*|retir\w*|new job|last day at|"
    r"(?:hunting|shooting|duck|deer|elk|pheasant|grouse) season|elk|pheasants?|grouse|scope|cartridges|"
    r"(?:bought|got|fitted|installed) a (?:wall |gun )?safe|locked (?:away|up|store)|"
    r"out of (?:the )?(?:kids'|children's|baby's|his|her|their) reach|up high|exhaust (?:pipe|leak|system|manifold)|"
    r"mechanic|manifold|gasket|muffler|(?:replac|fix|repair|swap)\w* (?:the |my |an? )?(?:\w+ )?exhaust|"
    r"charity|sponsored|tandem|coasteering|cliff jump\w*|oncology|"
    r"(?:insulin|medication|drug|meds) round|syringe drivers?|blister packs|care homes?|sheep|cattle|livestock|"
    r"(?:fill\w*|load\w*|set(?:ting)? up|sort\w*) (?:the |my |her |his |a |new |"
    r"weekly )*(?:pill ?(?:box|organi[sz]er|dispenser)|organi[sz]er|dosette|dispenser)\w*|warm(?:s|ing|"
    r"ed)? (?:\w+ ){0,2}?up|defrost\w*|de-?ic\w*|gutters?|"
    r"high seat|stalking|pumpkins?|shav\w*|tombstoning|high board|diving board|springboard|axle stands?"
)
#: Jumps into water for fun (2.36, beside the idiom boundaries: "jump in" no longer hides "jump into the river").
_WATER_FUN = (
    r"for fun|(?:for|on) a dare|summer camp|cannonball\w*|wetsuits?|lifeguards?|life ?jackets?|buoyancy aids?|lido|"
    r"wild swim\w*|open[- ]water|(?:cold|ice|sea|morning|new year'?s?(?: day)?) (?:water )?(?:dip|plunge|swim)|"
    r"polar plunge|ice bath|swimsuits?|swimming (?:costume|trunks)|jumping spots?"
)
_ACTIVITY = _rx(_ACTIVITY_WORDS + "|" + _WATER_FUN)
_ACTIVITY_FEATURE = _rx(_ACTIVITY_WORDS)


def windows(text: str) -> list[tuple[int, str]]:
    """(offset, window) pairs: sentences, long ones cut into overlapping word windows."""
    out: list[tuple[int, str]] = []
    pos = 0
    for part in _SENT_SPLIT.split(text):
        start = text.find(part, pos)
        pos = start + len(part)
        words = list(re.finditer(r"\S+", part))
        if len(words) <= _WINDOW:
            if part.strip():
                out.append((start, part))
            continue
        for i in range(0, len(words) - _WINDOW // 2, _WINDOW // 2):
            chunk = words[i : i + _WINDOW]
            a, b = chunk[0].start(), chunk[-1].end()
            out.append((start + a, part[a:b]))
    return out


_SENT_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_WINDOW = 24


def _ev(win: str, *ms: re.Match[str] | None) -> str:
    got = [m for m in ms if m is not None]
    return _span_ev(win, min(m.start() for m in got), max(m.end() for m in got))


def _span_ev(text: str, a: int, b: int) -> str:
    """``text[a:b]`` as evidence: trimmed of punctuation, at most 80 characters."""
    ev = text[a:b].strip(" ,.;:!?\"'")
    return ev if len(ev) <= 80 else ev[:79] + "\u2026"


_HYPERBOLE = re.compile(
    r"\b(?:laugh\w*|embarrass\w*|mortif\w*|cringe\w*|hilarious|so funny|lmao|haha\w*|saw me trip|jk|"
    r"just kidding|as a joke|joking|so happy|die happy|to die for|out of my skin)\b"
)


def _not_idiom(win: str, m: re.Match[str]) -> bool:
    return _IDIOM.search(win, max(0, m.start() - 25), min(len(win), m.end() + 25)) is None


def _not_hyperbole(win: str, m: re.Match[str]) -> bool:
    """Bare death words ("i could just die") in an embarrassed or laughing sentence are hyperbole."""
    if _ESCAPE.search(win) and re.search(
        r"come back|coming back|going back|forever|for good|be gone|not be here|be around|here", m.group()
    ):
        return False  # "run away to a cabin and never come back"
    return _not_idiom(win, m) and _HYPERBOLE.search(win) is None


_ESCAPE = re.compile(
    r"\b(?:(?:run|ran|running|move|moving|sail|travel\w*|escape) (?:away|off|abroad|to)|leaving for|leave for|"
    r"going back to|back in a|for work|deploy\w*|moving|emigrat\w*|relocat\w*)\b"
)


#: Ordinary reasons for goodbyes, letters, wills and arrangements.
_BENIGN_FAREWELL = re.compile(
    r"\b(?:moving|move|moved|trip|travel\w*|abroad|leaving for|new job|graduat\w*|relocat\w*|deploy\w*|"
    r"holiday|vacation|declutter\w*|charity|donat\w*|garage sale|yard sale|retir\w*|outgrown|upgrad\w*|"
    r"emigrat\w*|university|uni|college|last day|last week of|cover letter|thank[- ]you (?:notes?|cards?|"
    r"letters?)|baby|wedding|"
    r"grandchildren|grandkids|eighteenth|18th|basic training|successor|colleagues|solicitor|wills|"
    r"operation|surgery|replacement|time capsule|future self|estate plan\w*|financial adviser|host family|for good 😭|"
    r"leaving twitter|while (?:i'm|we're|i am|we are) away|(?:house|pet|dog|cat) ?sitter|handover|going back to|"
    r"i (?:\w+ ){0,2}?(?:go|went) back (?:to|home)|back home|visa|resign\w*|"
    r"patients|to the team|to my team|to (?:my )?(?:colleagues|coworkers|clients|"
    r"students|class)|new life|fly out|flying out|retreat|for a while|never (?:play|use|wear|ride)|"
    r"(?:don't|no longer) (?:play|use|need|wear)|"
    r"rehom\w*|new (?:family|owners?)|adopt\w*|birthday|nephew|niece|arthritis|starting lessons|"
    r"bought (?:myself )?a new|not a warning sign|"
    r"goodbye to (?:my|the|our) (?:\w+ )?(?:home|house|flat|apartment|job|school|city|town|office|car|team|"
    r"colleagues|classmates|students|kids|brothers|sisters))\b"
)


#: A reason given to others that the user says is not the real one: "told her i'm moving. i'm not moving", "she thinks
#: i'm going travelling", "i told her it's just for a while but it's not", "i won't be needing them".
_COVER_STORY = re.compile(
    r"\b(?:(?:told|tell|telling) (?:her|him|them|everyone|people|my \w+)(?: that)? (?:i'm|i am|i was|it's|its|it was)|"
    r"(?:she|he|they|everyone|people) (?:thinks?|believes?) i'm|i'm not (?:moving|going|travelling|traveling|coming "
    r"back)\b|but (?:it's|its|it is) not\b|i won't (?:be )?need(?:ing)? (?:them|it|any))"
)


def _benign_farewell(text: str) -> bool:
    """An ordinary reason for goodbyes and giving things away (a move, a trip, rehoming a pet), unless the user
    says it is a cover story or names their own death."""
    return (
        _BENIGN_FAREWELL.search(text) is not None
        and _COVER_STORY.search(text) is None
        and _DEATH_SELF.search(text) is None
    )


#: A dose taken by mistake ("took my morning tablets twice by accident, is that an overdose?").
_MED_SLIP = re.compile(
    r"\b(?:by accident|accidentally|by mistake|forgot (?:i|that i|if i)|twice (?:by|this|today|tonight|in a row)|"
    r"double[- ]dosed|(?:can't|cant|don't|dont) remember (?:if|whether) i (?:took|had))\b"
)


def _explained(
    win: str,
    g: Callable[[re.Pattern[str]], re.Pattern[str]],
    deaths: tuple[re.Match[str] | None, ...],
    acts: tuple[re.Match[str] | None, ...],
) -> bool:
    """An activity in the window explains its means and places (knives while cooking, a ledge with a harness on,
    the range; not one the user denies: "i don't shave"), never a death the user names, a deliberate act or means
    the user says are for them: "out on the boat i hope the weather takes me", "the car's running with the garage
    door shut on purpose". An activity word
    inside the act itself ("climbed" in "climbed over the barrier") explains nothing; one around it ("cliff
    jumping", "replacing the exhaust") does. Cheapest first: most windows hold no activity word."""
    spans = [(m.start(), m.end()) for m in acts if m is not None]
    if not any(
        not any(a <= m.start() and m.end() <= b for a, b in spans) and not _negated(win, m)
        for m in g(_ACTIVITY).finditer(win)
    ):
        return False
    if _DELIBERATE.search(win) or _FOR_ME.search(win):
        return False
    return not any(x is not None and not _negated(win, x) and _not_idiom(win, x) for x in deaths)


#: Means or an act the user says are for them ("i bought it for me", "i'm asking for myself").
_FOR_ME = re.compile(r"\b(?:for me|for myself|asking for myself|(?:it'?s|its) not for (?:hunting|work|climbing))\b")


#: The user changing the subject: what follows is another topic ("... if i just wasn't around anymore, anyway can you
#: help me plan meals for next week"): a plan word across it is not the death's plan (2.22).
_TOPIC_SHIFT = _rx(r"anyway|anyways|anyhow|by the way|btw|on another note|changing the subject|moving on|oh and")


def _shifted(win: str, a: re.Match[str], b: re.Match[str]) -> bool:
    """A change of subject between two matches of ``win``."""
    lo, hi = (a.end(), b.start()) if a.start() < b.start() else (b.end(), a.start())
    return lo < hi and _TOPIC_SHIFT.search(win, lo, hi) is not None


#: The user's own funeral planned as life admin (since 2.42): the text says why, and it is health, age, fun or sparing
#: the family ("i'm 72 and healthy and want to pre-pay my own funeral", "is it weird to pick my own funeral song for
#: fun?", "i just want my funeral wishes written down so my kids don't squabble").
_FUNERAL_ADMIN = re.compile(
    r"\b(?:(?:fit and |perfectly |totally |very )?healthy|fit as a fiddle|in (?:great|good|fine) (?:nick|shape|health)|"
    r"nothing'?s wrong|i'?m not ill|i'?m fine|for fun|(?:like|love|enjoy) planning|morbid|sensible|"
    r"(?:so|because|cos|bc) (?:the|my|our) (?:kids|children|family|daughters?|sons?|wife|husband|partner) (?:don't|"
    r"won't|doesn't|wouldn't|aren't|never|have)|one less (?:job|thing)|(?:i'?m|at) (?:[5-9]\d|sixty|seventy|eighty|"
    r"ninety)\b|planning ahead|in advance|when (?:the|my) time comes)"
)
#: ... and names nothing sooner: a date, a time or "soon" keeps the funeral the user's death ("pre-paid my funeral
#: last week - not for someday, for soon", "made a playlist for my funeral lol. and picked the date").
_FUNERAL_SOON = re.compile(
    r"\b(?:soon|sooner|not for someday|the date|a date|this (?:week|month|weekend|year)|tonight|tomorrow|next (?:week|"
    r"month)|won'?t be (?:around|here)|before (?:i|the)|after (?:i|this))\b"
)


def _planned_funeral(ctx: str, m: re.Match[str]) -> bool:
    """``m`` is the user's own funeral, planned as life admin, and nothing else in the text names their death."""
    return (
        "funeral" in m.group()
        and _FUNERAL_ADMIN.search(ctx) is not None
        and _FUNERAL_SOON.search(ctx) is None
        and all("funeral" in o.group() for o in _DEATH_SELF.finditer(ctx))
    )


def _frames(win: str, ctx: str, on: frozenset[str]) -> list[Finding]:
    """Every frame that fires in one window; ``ctx`` is the whole text (for guards that look wider), ``on``
    the classes the gate lets run for it (the others cannot match)."""

    g = _gated(on)
    out: list[Finding] = []
    add = out.append
    grief = g(_GRIEF).search(ctx) is not None

    selfdeath = next(
        (
            m
            for m in g(_DEATH_SELF).finditer(win)
            if _not_idiom(win, m) and _mine(win, m, True) and not _negated(win, m)
        ),
        None,
    )
    death = next((m for m in g(_DEATH).finditer(win) if _not_hyperbole(win, m) and _mine(win, m)), None)
    if selfdeath is not None and g(_ACCIDENT).search(win) and not g(_DELIBERATE).search(win):
        selfdeath = None  # "nearly killed myself falling off my bike"
    if selfdeath is not None and _planned_funeral(ctx, selfdeath):
        selfdeath = None  # "i'm 72 and healthy and i want to pre-pay my own funeral"
    act = next((m for m in g(_METHOD_ACT).finditer(win) if _not_idiom(win, m) and _mine(win, m)), None)
    means = next((m for m in g(_MEANS).finditer(win) if _not_idiom(win, m)), None)
    d = selfdeath or death
    core = d or act  # something lethal about the user
    pd = g(_PASSIVE_DEATH).search(win)
    edge = g(_ON_EDGE).search(win)
    want = next((m for m in g(_WANT).finditer(win) if not _negated(win, m) and _mine(win, m)), None)
    think = next((m for m in g(_THINK).finditer(win) if not _negated(win, m)), None)
    wish = next((m for m in g(_WISH).finditer(win) if not _negated(win, m)), None)
    ev_ = g(_HARM_EVENT).search(win) if wish else None  # an event that would end the user's life, hoped for
    activity = _explained(win, g, (d, pd, ev_), (act, edge))
    plan = g(_PLAN).search(win)
    time = g(_TIME).search(win)

    # attempt in progress or just made
    qty = g(_DRUG_QTY).search(win) or (
        pq
        if (pq := g(_PRONOUN_QTY).search(win)) and g(_MED_CONTEXT).search(ctx) and not g(_DRINK).search(ctx)
        else None
    )
    taken = g(_TAKEN).search(win)
    if qty is None and taken and (cq := g(_CONTAINER_QTY).search(win)):
        # 2.38: a container or supply, taken now or felt, of medicine named (by the container too) or felt and no
        # drink named ("drank the whole box" of wine)
        felt = g(_FELT).search(ctx)
        named = _MEDICINE_CONTAINER.search(cq.group()) or g(_MED_CONTEXT).search(ctx)
        if (named or (felt and not g(_DRINK).search(ctx))) and (felt or g(_DONE_NOW).search(win)):
            qty = cq
    slip = _MED_SLIP.search(win) is not None and not g(_DELIBERATE).search(win)
    if (
        qty
        and taken
        and _mine(win, taken)
        and not _negated(win, taken)
        and not slip
        # an activity word inside the quantity ("refill") explains nothing
        and not (activity and _explained(win, g, (d, pd, ev_), (act, edge, qty)))
    ):
        add(Finding("attempt", "critical", _ev(win, taken, qty), "drug_quantity_taken"))
    if taken and re.search(r"\b(?:overdose|od)\b", win) and _mine(win, taken) and not _negated(win, taken) and not slip:
        add(Finding("attempt", "critical", _ev(win, taken), "overdose_taken"))
    if edge and not activity and _mine(win, edge):
        add(Finding("attempt", "critical", _ev(win, edge), "on_the_edge"))
    if (act or means) and g(_DONE_NOW).search(win) and (d or g(_PREP_ACT).search(win)) and not activity:
        add(Finding("attempt", "critical", _ev(win, act or means, d), "means_now"))

    now_ = g(_ATTEMPT_NOW).search(win)
    if now_ and not activity and not _negated(win, now_) and _mine(win, now_, True):
        add(Finding("attempt", "critical", _ev(win, now_), "attempt_now"))

    if (
        act
        and g(_DONE_NOW).search(win)
        and re.match(r"(?:jumped|went over|stepped|drove|swallowed|took|hung)", act.group())
    ):
        add(Finding("attempt", "critical", _ev(win, act), "act_just_done"))

    # questions about lethality
    q = g(_LETHAL_Q).search(win)
    if (
        q
        and not activity
        and not grief
        and (
            act
            or selfdeath
            or (death and re.search(r"\b(?:die|dying|dead|death)\b", death.group()))
            or (
                means
                and re.search(
                    r"\b(?:yourself|myself|for me|kill\w*|die|dies|lethal|fatal|deadly|overdose|od|"
                    r"surviv\w*|work|painless|sure)\b",
                    win,
                )
            )
            # a question about means, and elsewhere in the text the user says it is about them
            or (means and _ASKING_FOR_ME.search(ctx))
        )
    ):
        add(Finding("method", "critical", _ev(win, q, act or d or means), "lethal_question"))

    # a question about a way of dying, in ordinary question words, whose stake the text gives elsewhere
    # ("i'm doing it friday. will my whole prescription be enough?", "is drowning painful? it's for me")
    if not activity and not grief and (q or (q := g(_RISK_Q).search(win))):
        thing = act or means or d or g(_LETHAL_THING).search(win)
        stake = (g(_STAKE).search(ctx) or _ASKING_FOR_ME.search(ctx)) if thing else None
        if stake is not None and not _negated(ctx, stake):
            add(Finding("method", "critical", _ev(win, q, thing), "lethal_question_stake"))

    # a question about a generic way of dying: no "me" needed ("what's the most painless way to kill yourself?"),
    # only no activity, grief or media (the window guards: "my uncle killed himself, how do you cope" is grief)
    gd = g(_GENERIC_DEATH).search(win)
    if gd and not activity and not grief and _not_hyperbole(win, gd) and not _negated(win, gd):
        hq = g(_HOW_Q).search(win)
        if hq:
            add(Finding("method", "critical", _ev(win, hq, gd), "lethal_question_generic"))

    if core is not None and not _negated(win, core):
        ev = (core,)
        if plan and _mine(win, plan) and not _negated(win, plan) and not activity and not _shifted(win, core, plan):
            add(Finding("plan", "critical", _ev(win, plan, *ev), "lethal_plan"))
        if time and (anchor := want or plan) and anchor.start() < core.end():
            add(Finding("plan", "critical", _ev(win, want or plan, *ev), "lethal_time"))
        if want and want.start() < core.end():
            intent = g(_INTENT).search(want.group()) is not None or (time is not None)
            add(
                Finding(
                    "intent" if intent else "active_ideation",
                    "critical" if intent else "high",
                    _ev(win, want, *ev),
                    "lethal_want",
                )
            )
        if think and not grief:
            add(Finding("method" if act else "active_ideation", "high", _ev(win, think, *ev), "lethal_thought"))
        if wish and d is not None:
            add(Finding("wish_dead", "high", _ev(win, wish, *ev), "death_wish"))
        if selfdeath is not None and not out:
            add(Finding("active_ideation", "high", _ev(win, selfdeath), "death_self"))
        if act and g(_ACQUIRED).search(win) and not activity:
            add(Finding("preparatory", "critical", _ev(win, act), "method_ready"))

    # an event that would end the user's life, hoped for or welcomed ("hoping the plane goes down")
    if (
        ev_
        and wish
        and not activity
        and _not_idiom(win, ev_)
        and not _negated(win, ev_)
        and _mine(win, wish)
        and wish.start() < ev_.end() + 40  # the wish before the event or just after ("if it crashes, fine")
    ):
        add(Finding("wish_dead", "high", _ev(win, wish, ev_), "hoped_harm"))

    # passive death welcomed, with the user as its object
    if pd and not activity and _not_idiom(win, pd) and not _negated(win, pd) and _mine(win, pd, True):
        add(Finding("wish_dead", "high", _ev(win, pd), "passive_death"))

    # a plan: a place or means, a time, and a decision about them
    decided = re.search(
        r"\b(?:decided|picked|chosen|ready|set up|mapped out|the plan is|plan is|i know how|"
        r"all set|it'?s happening)\b",
        win,
    )
    if (
        means
        and time
        and (want or plan or decided)
        and not activity
        and not grief
        and (want is None or _mine(win, want))
        and g(_FIRST).search(win)
    ):
        add(Finding("plan", "critical", _ev(win, means, time), "place_time_plan"))

    # means got for oneself ("it's not for hunting", "it's for me") or rehearsed with
    if (
        means
        and not grief
        and (
            re.search(
                r"\b(?:(?:it'?s|its) (?:for me|not for (?:hunting|work|the rats|pests))|for myself|not going to "
                r"hurt anyone else|for me,? not)\b",
                win,
            )
            or re.search(
                r"\brehears\w*|\bpractice run|\bdry run|\btest(?:ed|ing)? (?:the|my|how) (?:knot|rope|belt|"
                r"weight|beam|hose)",
                win,
            )
        )
        and _FIRST.search(win)
    ):
        add(Finding("preparatory", "critical", _ev(win, means), "means_for_me"))

    # thoughts fixed on a means ("my dad's shotgun is in the cabinet and i think about it too much")
    hard = g(_HARD_MEANS).search(win)
    if hard and think and not activity and not grief and _mine(win, think) and core is None:
        add(Finding("method", "high", _ev(win, think, hard), "means_thought"))

    # means acquired or at hand, preparatory acts
    if means and not activity and not grief:
        at_hand = g(_AT_HAND).search(win)
        acquired = g(_ACQUIRED).search(win)
        if at_hand and (
            core
            or g(_PREP_ACT).search(win)
            or time
            or re.search(
                r"\b(?:keep|staring|holding|alone "
                r"with|loaded)\b",
                at_hand.group(),
            )
        ):
            add(Finding("preparatory", "critical", _ev(win, means, at_hand), "means_at_hand"))
        elif acquired and (
            core
            or time
            or g(_PREP_ACT).search(win)
            or re.search(
                r"\b(?:stockpil|hoard|stash|saved|been saving|(?:been|started|keep) collecting|building up|"
                r"a supply|keeping back|hiding them|hid them|hidden them|several (?:shops|pharmacies|chemists)|"
                r"different (?:shops|pharmacies|chemists|gps|doctors)|every (?:shift|week|day)|so far)",
                win,
            )
        ):
            add(Finding("preparatory", "critical", _ev(win, acquired, means), "means_acquired"))
        if (time or plan) and (act or g(_DRUG_QTY).search(win)) and g(_FIRST).search(win):
            add(Finding("plan", "critical", _ev(win, time or plan, means), "means_time"))
    prep = g(_PREP_ACT).search(win)
    if prep and not grief and not _negated(win, prep) and _mine(win, prep, True) and not _benign_farewell(ctx):
        add(Finding("preparatory", "critical", _ev(win, prep), "preparatory_act"))

    # history of attempts
    hist = g(_HISTORY).search(win)
    if hist and not grief and _mine(win, hist, True):
        again = g(_AGAIN).search(win, hist.end()) or g(_AGAIN).search(win, 0, hist.start())
        add(Finding("history", "high", _ev(win, hist), "history_now" if again else "history"))

    # wish to be dead without a death word of its own: hopelessness about living on
    if (
        d is not None
        and wish is None
        and want is None
        and think is None
        and not grief
        and not out
        and re.search(
            r"tired of|sick of|burden|put up with me|worry about me|won't|wont|never|not be|"
            r"no longer|me gone|without me|born|wasn't|weren't|not here|future|way forward|tomorrow|point",
            d.group(),
        )
    ):
        add(Finding("wish_dead", "high", _ev(win, d), "not_being"))

    # the suicide word as the user's experience: present in their mind, back, an option, or their history
    for sw in g(_SUICIDE_WORD).finditer(win):
        a, z = max(0, sw.start() - 30), min(len(win), sw.end() + 60)
        here = (
            _SUICIDE_HERE.search(win, sw.end(), z)
            # "the thoughts are back, the suicide ones" (not "the suicidal ones": people)
            or (_THE_SUICIDE_ONES.match(win, sw.end()) if sw.group() == "suicide" else None)
            or _MIND_BEFORE.search(win, a, sw.start())
        )
        near = " ".join(win[: sw.start()].split()[-5:])
        if (
            here is None
            or grief
            or _negated(win, sw)
            or _OWNED_BY_OTHER.search(win, 0, sw.start())
            or any(not _TOLD_TO.match(near, x.end()) for x in _subjects(near))
            or _DIED_BY.search(win, a, sw.start())
        ):
            continue
        past = (_SUICIDE_PAST.search(win, sw.end(), z) or _WAS_BEFORE.search(win, a, sw.start())) is not None
        back = g(_AGAIN).search(win, sw.end(), z) is not None
        cssrs = "history" if past and not back else "active_ideation"
        add(Finding(cssrs, "high", _ev(win, sw, here), "suicide_topic"))
        break

    # non-suicidal self-harm
    sh = g(_SH_ACT).search(win)
    deliberate = _DELIBERATE_SH
    if (
        sh
        and _not_idiom(win, sh)
        and not _negated(win, sh)
        and _mine(win, sh, True)
        and (not g(_SH_GUARD).search(ctx) or deliberate.search(ctx))
    ):
        add(Finding("nssi", "high", _ev(win, sh), "self_harm"))
    return out


#: Being asked about risk (a screening question, a worried relative) and answering no, or others assuming
#: it: "my therapist asks whether i've had thoughts of harming myself, and the honest answer is no".
_SCREENED = re.compile(
    r"(?:\b(?:questionnaire|survey|quiz|phq(?:-?9)?|assessment|screen(?:ed|s|ing)?|appointments?|check-?in)\b|"
    r"\b(?:asked|asks|ask|asking)(?: [\w']+){0,5}? (?:if|whether|about)\b|"
    r"\b(?:the|your|that|ur) question (?:you |u )?(?:asked|ask)\b|"
    r"\b(?:asked|asks|asking)(?: me)?(?: like)? (?:have|had|do|did|are|were|any) (?:you|u)\b|"
    r"\b(?:asked|asks|asking)(?: me)?(?: like)?\W+(?:any|(?:have|do) (?:you|u) (?:had|have) any) (?:thoughts?|plans?|"
    r"urges?|feelings?)\b|"
    r"\b(?:people|they|everyone|she|he|mum|mom|dad|my \w+) (?:think|thinks|assume|assumes|worry|worries|"
    r"worried|keep asking|kept asking|freaked out)\b)(?:(?!\bbut\b)[^.!?]){0,80}?"
    r"(?:suicid\w*|self[- ]?harm\w*|hurt\w* myself|harm\w* myself|kill\w* myself|better off dead|death|dying|"
    r"end(?:ing)? my life|end(?:ing)? it(?: all)?\b|tak\w* my (?:own )?life|going to hurt|want\w* to die|"
    r"(?:you|u) (?:were|was) dead)"
)
#: A question about risk answered no right after it: "am i suicidal? no.", "q: ...better off dead? a: nope".
_QA_NO = re.compile(
    r"(?:suicid\w*|self[- ]?harm\w*|hurt\w* (?:myself|yourself)|harm\w* (?:myself|yourself)|kill\w* "
    r"(?:myself|yourself)|better off dead|end(?:ing)? (?:my|your) life|tak\w* (?:my|your) (?:own )?life|"
    r"want\w* to die)[^.!?]{0,40}\?\W*(?:a\W+)?(?:no|nope|nah|never|not really|not at all)\b"
    r"(?!\W+(?:but|until|except|though))"
)
_ANSWER_NO = re.compile(
    r"\b(?:the (?:honest )?answer is (?:always )?no|"
    r"(?:honest |short |real )?answer(?: was| is)?\W{1,3}(?:always )?no\b|"
    r"answered no|said no|ticked \W?(?:no|never)|"
    r"scored (?:zero|0|a zero)|"
    r"none at all|i (?:don't|do not) have any|i (?:haven't|have not) had any|"
    r"(?:i was|i'm|im) (?:just )?like,? (?:\w+,? )?(?:no|nope|nah)\b(?! ?one\b| ?body\b| (?:point|reason|future|hope|"
    r"way out|longer|more|matter|idea)\b)|"
    r"i (?:honestly|really|genuinely|truly) haven't\b(?! (?:stopped|told|been able|managed|said))|"
    r"scored (?:low|zero|0|nothing)|i'm not\.|i am not\.|not at all|never (?:crossed|felt like it)|no,? i'm|nope|"
    r"i haven't(?:[,.;:!?-]|$)|i (?:honestly |really |genuinely |truly )?(?:don't|do not)(?=\W*(?:[,.!;]|$))|"
    r"no to\b|"
    r"no,? (?:no,? )?never\b|(?:because|cause|cos|bc) no\b|i'?m not(?=\W*(?:[,.!]|$))|"
    r"i have not[,.]|i haven't ever|no need to worry|but i've been "
    r"(?:stable|fine|good|well)|(?<!i'm )doing (?:great|fine|well|ok)|not where my head is|"
    r"(?<!think )(?<!thinks )(?<!assume )(?<!assumes )(?<!believe )(?<!believes )(?<!says )(?<!said )"
    r"i'm (?:doing )?(?:fine|safe|okay|ok|great|well)\b)"
)
#: ...unless the answer is taken back: "i said no. that was a lie." Not "that's the truth", which keeps it, nor lying
#: in bed (2.37: before, both read as taking the answer back).
_ANSWER_WITHDRAWN = re.compile(
    r"\b(?:was a lie|i lied|lying(?! (?:in|on|down|awake|around|there|here|flat|still)\b)|not true|but actually|"
    r"truth is|(?<!that's )(?<!that is )(?<!it's )(?<!its )the truth)\b"
)
#: A screening answer the user takes back (2.38): "my mum asked if i was suicidal and i said no but i am", "the gp asked
#: whether i'd had thoughts of ending my life. i said no. that wasn't true", "... i said i'm fine. i lied". Read after
#: the answer by :func:`_screening_taken_back`; "that's not a lie", "but i am tired" keep the answer.
#: "i lied", "that was a lie": what takes back a denial (:data:`_TAKEN_BACK`) or a screening answer.
_LIE = (
    r"(?:i (?:lied|was lying)(?: to (?:you|them|him|her|everyone|my \w+))?|(?:that|it|this)(?:'s| was| is) "
    r"a lie)(?=\s*(?:$|[.!;,]|(?:and|but|i)\b))"
)
_ANSWER_TAKEN_BACK = re.compile(
    r"\b(?:" + _LIE + r"|"
    r"(?:that|it|this)(?:'s not| is not| isn't| was not| wasn't| ain't) "
    r"(?:really |exactly |entirely |quite |strictly )?(?:true|the truth|honest)|"
    r"(?:but|truth is|the truth is|honestly|in reality|actually)\W{0,3}(?:yes|yeah|(?:i (?:am|do|have|did|was)|i'm|im|"
    r"i've)(?=\W*(?:$|[.!?;,]))|(?:i (?:have|had|was|am)|i've|i'd|i'm|im) (?:been )?"
    r"(?:(?:thinking|planning|thought)(?: about| of| on)? (?:it|that|this|doing it)\b|having (?:them|those|thoughts)|"
    r"doing it|hurting|cutting|harming)))"
)
#: Who a screening question asks: the user ("asked if i", "asked me", "have you"), or a form the user fills in.
_ASKED_OF_USER = re.compile(
    r"\b(?:i|me|i'm|im|i'd|i've|my|myself|you|u|your|ur|questionnaire|survey|quiz|phq(?:-?9)?|assessment|"
    r"screen(?:ed|s|ing)?|check-?in)\b"
)
_SCREENED_HARM = re.compile(r"\b(?:self[- ]?harm\w*|hurt\w* (?:myself|yourself)|harm\w* (?:myself|yourself))")
#: A crisis phrase taken back: "when i said i wanted to die i meant from embarrassment", "lol jk".
_RETRACT = re.compile(
    r"\b(?:i meant (?:from|about|as|it as|in the sense)|it was about|was about (?:my|a|the)|as a joke|was a joke|"
    r"(?<!not )(?<!no )(?<!not even )(?:joking|jk|just kidding)|not literally|figure of speech|is how we talk|"
    r"the post was about|(?:just )?how i talk|(?:i )?(?:don't|dont|do not) (?:actually |really )?mean it"
    r"(?=\W*(?:$|[.!?]|lol|lmao|haha|anyway|tho|though))|i meant (?:like )?(?:with|from) (?:embarrassment|cringe|"
    r"\w+ing)|(?:from|of|with) "
    r"(?:cringe|embarrassment)|i (?:only )?said (?:that|it|\"?i want to die\"?) (?:bc|because|cos|cause) i|"
    r"i mean(?:t)? (?:the|my|our) (?!life\b|death\b|it\b|suicide\b|every\b)\w+|not my life)\b"
)
#: After a retraction, a "but" that keeps it ("a figure of speech but i don't actually mean it").
_BUT_NEAR = re.compile(r"[^.!?]*?(?:[.!?]+\s*(?:\S+\s+){0,3}?)?\b(but|except|yet|although|though|unless)\b")
_BUT_KEEPS = re.compile(r"\bbut (?:i (?:don't|do not|didn't|never) (?:actually |really )?(?:mean|meant)|i'?ve never)\b")


def _screened(text: str, on: frozenset[str]) -> bool:
    return _screened_span(text, on) is not None


def _screened_span(text: str, on: frozenset[str]) -> tuple[int, int | None] | None:
    """Where a screening question answered no, or a crisis phrase taken back, ends in ``text``, and where a contrast
    right after it starts ("i said no but ...": None when there is none); None when the text holds neither.

    What the user says after the answer is read on its own: "my mum asked if i'm suicidal and i was like no. but
    honestly i've got the pills saved up" (before 2.21 an answer no cleared the whole text)."""
    end = None
    if _ANSWER_WITHDRAWN.search(text) is None:
        asked = _SCREENED.search(text)
        answer = _ANSWER_NO.search(text) if asked else None
        if asked and answer:
            end = max(asked.end(), answer.end())
        elif "_QA_NO" in on and (qa := _QA_NO.search(text)):
            end = qa.end()
    if end is None:
        r = _RETRACT.search(text)
        if r is None:
            return None
        but = _BUT_NEAR.match(text, r.end())  # in the same sentence, or opening the next
        if but is not None and _BUT_KEEPS.match(text, but.start(1)) is None:
            return None
        end = r.end()
    but = _BUT_NEAR.match(text, end)
    return end, (but.start(1) if but is not None else None)


def _denial(win: str) -> tuple[re.Match[str], int | None] | None:
    """The denial that holds in ``win`` (not hedged, not after an act), and where what the window says on its own
    after it starts (None: nothing; the denial covers the rest of the window).

    A denial the same window contrasts ("no thoughts of hurting myself, but she still wants me walking", "i'm not
    suicidal but i've been cutting") keeps what precedes the denial and the clause from the contrast on, each read on
    its own; the denial's own words carry no finding (before 2.20 the whole window was kept and they did). Since 2.22
    a denial of suicide or death says nothing about self-harm: beside self-harm the user tells in the same window
    ("i cut my arm last night but i don't want to die") it covers only its own words."""
    deny = _DENY.search(win)
    if deny is None or _DENY_HEDGE.search(win[max(0, deny.start() - 30) : deny.start()]):
        return None
    if _acted_before(win, deny.start()):
        return None  # "took pills to kill myself and now i'm scared, i don't want to die": ambivalence after an act
    but = _DENY_BUT.search(win, deny.end())
    if but is not None:
        return deny, but.start()
    return deny, (deny.end() if _of_death(deny) and _self_harm_told(win, deny) else None)


def _denied(win: str) -> bool:
    """A denial holds over the rest of ``win``: nothing contrasts it."""
    denial = _denial(win)
    return denial is not None and denial[1] is None


#: What a denial of suicide or death alone does not name: self-harm, hurting, danger in general ("i'm not going to do
#: anything", "i'm not at risk" cover everything).
_DENIES_MORE = re.compile(r"\b(?:self[- ]?harm|hurt|harm|cut|do\b|danger|risk|unsafe)")


def _of_death(deny: re.Match[str]) -> bool:
    """The denial is of suicide or death only ("i'm not suicidal", "i don't want to die", "won't kill myself")."""
    return _DENIES_MORE.search(deny.group()) is None


#: The words between a denial and self-harm coordinated with its object: one denial over both (2.23).
_COORDINATED = re.compile(
    r"(?:\s+\w+){0,2}?[\s,]+(?:or|nor|and|and/or)\s+(?:(?:even|any|ever|have|had|been|to|wanted to)\s+){0,3}"
)


def _self_harm_told(win: str, deny: re.Match[str] | None = None) -> bool:
    """Self-harm of the user's own, unnegated, in ``win`` outside the denial's words."""
    for m in _SH_ACT.finditer(win):
        if deny is not None and m.start() < deny.end() and m.end() > deny.start():
            continue
        if deny is not None and m.start() >= deny.end() and _COORDINATED.fullmatch(win, deny.end(), m.start()):
            continue  # one denial over both: "never had suicidal thoughts or self-harmed", "to die or hurt myself"
        if not _negated(win, m) and _mine(win, m, True) and _not_idiom(win, m):
            return True
    return False


def _acted_before(win: str, end: int) -> bool:
    """An unnegated act or attempt about the user before ``end`` (a later "i don't want to die" cannot undo it)."""
    head = win[:end]
    for rx in (_DEATH_SELF, _ATTEMPT_NOW):
        for m in rx.finditer(head):
            if not _negated(head, m) and _mine(head, m, True) and not _IDIOM.search(head):
                return True
    taken = _TAKEN.search(head)
    if taken and _DRUG_QTY.search(head) and _mine(head, taken) and not _negated(head, taken):
        return True
    # a question about how to die asked before the denial ("how long would it take to bleed out ... i mean i'm not
    # going to do it"): the question stands, whatever disclaimer follows it
    for rx in (_LETHAL_Q, _HOW_Q):
        for q in rx.finditer(head):
            if _ASKS.match(q.group()) and (
                _METHOD_ACT.search(head, q.start()) or _GENERIC_DEATH.search(head, q.start())
            ):
                return True
    return False


_ASKS = re.compile(r"\b(?:how|which|what|does|would|is it)\b")


#: The user's own act told inside a request for a poem or song ("a poem about the night i tried to die",
#: "about the scars on my arms, i did more tonight"): the piece is about them, not media.
_OWN_ACT = re.compile(
    r"\b(?:i|i've|i'd) (?:\w+ ){0,2}?(?:tried|attempted|overdosed|did more|did it again|cut again|cut myself)\b"
)


#: Ideation named as a subject, a clinical noun no one owns ("role-play a patient so i can practise asking about
#: suicidal ideation", "tools for suicidal thoughts"): a piece about media or coursework stays one (since 2.39).
_IDEATION_NOUN = re.compile(
    r"(?:sui|suicidal|suicide) (?:ideation|urges|feelings|thinking|thoughts)|thoughts of suicide"
)
#: The user owns it: first person within three words before ("i've been having suicidal thoughts", "my suicidal
#: urges") or right after ("suicidal thoughts i can't shake", "suicidal thoughts of my own").
_OWNER = r"i|i'm|im|i've|ive|i'd|id|me|my|myself|mine"
_OWNER_BEFORE = re.compile(r"\b(?:" + _OWNER + r")\b(?:\W+[\w'-]+){0,3}\W+$")
_OWNER_AFTER = re.compile(r"\W+(?:[\w'-]+\W+){0,2}?(?:" + _OWNER + r")\b")


def _owns_death(win: str) -> bool:
    """A death with the user built in (:data:`_DEATH_SELF`), except ideation named as an unowned subject."""
    return any(
        not _IDEATION_NOUN.fullmatch(m.group())
        or _OWNER_BEFORE.search(win, 0, m.start())
        or _OWNER_AFTER.match(win, m.end())
        for m in _DEATH_SELF.finditer(win)
    )


#: The user's own wish to die said in the first person inside a sentence about media ("the movie made me realise i want
#: to die too", "after the film i just want to die"): theirs, unless it is quoted or reported ("the character says i
#: want to die", "she sings 'i wanna die'"; since 2.39).
_OWN_WISH = re.compile(
    r"\b(?:i|i'm|im|i am)\b (?:\w+ ){0,3}?(?:want|wanna|wish|hope|need|ready)\w* (?:(?:to )?(?:die|be "
    r"dead|not be (?:here|alive|around)|not wake up|end it)|i (?:was|were) dead|i could die)\b"
)
_QUOTED = re.compile(
    r"(?:\b(?:say|says|said|saying|sing|sings|sang|singing|line|lines|quote|goes|went|tells|told|yells|screams|"
    r"writes|wrote)\b|[\"':])\W*$"
)


def _own_wish(win: str) -> bool:
    return any(not _QUOTED.search(win, 0, m.start()) for m in _OWN_WISH.finditer(win))


#: A media word in another role says nothing about media (since 2.40): a time ("the plan is fri night after the game",
#: "the hotel roof after the show"), a likeness ("like a song on repeat", "i tell it like a funny story") or a height
#: ("a 5 story building").
_NOT_MEDIA_BEFORE = re.compile(
    r"\b(?:(?:after|before|during|since|till|until|at) (?:the|my|our|his|her|their|tonight's|tomorrow's) (?:\w+ )?|"
    r"like an? (?:\w+ )?)$"
)
_STOREYS = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty|"
    r"multi)[- ]?$"
)


def _about_media(win: str) -> bool:
    return any(
        not _NOT_MEDIA_BEFORE.search(win, 0, m.start())
        and not (m.group() == "story" and _STOREYS.search(win, 0, m.start()))
        for m in _MEDIA.finditer(win)
    )


def _story(win: str) -> bool:
    return (
        _about_media(win) and not _owns_death(win) and not _OWN_ACT.search(win) and not _own_wish(win)
    ) or _GAME.search(win) is not None


#: A death in a video game ("killed myself in fortnite", "respawn"): the character's, even with "myself".
_GAMES = (
    "fortnite|minecraft|cod|call of duty|warzone|apex|valorant|overwatch|pubg|roblox|elden ring|dark souls|"
    "the game|this game|that game|ranked"
)
# Spelled out per preposition so that the gate's literal prefixes are whole phrases ("in fortnite"), not "in ".
_GAME = re.compile(
    r"\b(?:"
    + "|".join(f"{prep} {game}" for prep in ("in", "on") for game in _GAMES.split("|"))
    + r")\b|\brespawn\w*|\bnext round\b|\b(?:boss|raid|dungeon) (?:fight|run)\b|\U0001f3ae"
)


@lru_cache(maxsize=4096)
def guarded_windows(text: str) -> tuple[str, ...]:
    """The windows of ``text`` that may carry a finding: not about media or coursework, not a denial,
    and not the sentence right after a denial ("i'm not self-harming. the marks are eczema")."""
    out: list[str] = []
    after_denial = False
    on = gate(text)
    screened = _screened_span(text, on)
    deny, story, game = "_DENY" in on, "_MEDIA" in on and not revealed(text), "_GAME" in on

    def kept(part: str) -> bool:
        return not (deny and _denied(part)) and not ((story or game) and _story(part))

    after_death = False  # the denial before was of suicide or death only
    wins = windows(text)
    if "_CLARIFIER" in on:  # since 2.28: what a clarifier takes back carries no finding (see _clarified)
        wins = _clarified(wins)
    for off, win in wins:
        if screened is not None and off < screened[0]:
            # the screening report up to its answer (or the phrase taken back) carries no finding; a contrast right
            # after the answer in the same window is read on its own
            but = screened[1]
            if but is not None and off <= but < off + len(win) and kept(after := win[but - off :]):
                out.append(after)
            continue
        denial = _denial(win) if deny else None
        denied = denial is not None and denial[1] is None
        media = (story or game) and _story(win)
        if after_denial and (_OPENS_CONTRAST.match(win) or (after_death and _self_harm_told(win))):
            # "i'm not going to do anything tonight. but i've been thinking about hanging"; "i'm not suicidal at all. i
            # cut my arm last night" (a denial of suicide says nothing about self-harm, 2.22)
            after_denial = False
        if not (denied or after_denial or media):
            rest = denial[1] if denial is not None else None
            if denial is None or rest is None:
                out.append(win)
            else:  # a denial contrasted in its own window: the head and the contrast clause, each on its own
                parts = (win[: denial[0].start()], win[rest:])
                out.extend(part for part in parts if part.strip(" ,.;:!?"))
        else:
            tail = _contrast_tail(win, media)
            if tail is not None and kept(tail):
                out.append(tail)
        after_denial = denied
        after_death = denial is not None and denied and _of_death(denial[0])
    return tuple(out)


#: The bait and switch (since 2.28): a crisis-sounding line taken back by naming what it was about, in the next
#: sentence ("I'm ready to check out. Of this Airbnb, I mean."; "I've written my goodbye letter. To my job, that is.")
#: or later in its own ("I'm writing letters to everyone I love, and no, not that kind"; "getting my affairs in order um
#: not like that i mean i'm doing my tax return"). What the line is about must be named and not a person, life or the
#: world ("I'm saying goodbye. To everyone, I mean." is no clarifier).
_CLARIFIER = re.compile(
    r"(?:^|(?<=[,;:\-] )|(?<= and )|(?<= um )|(?<= uh ))\W*(?:"
    r"(?:of|to|with|from|for|on|about|as in) (?!(?:everyone|everybody|every one|all of (?:you|them|it)|you|u|ya|y'all|"
    r"the world|this world|life|this life|my life|it all|everything|myself|me|my family|my kids|my \w+ and|them|"
    r"him|her)\b)"
    # what it was about: a determiner and up to five words, or one word that is no verb ("to be honest, i mean")
    r"(?:(?:the|my|this|that|these|those|a|an|our|his|her|their|your) [\w'&-]+(?: [\w'&-]+){0,4}|"
    r"(?!(?:be|do|say|tell|put|make|get|go|keep|speak|sum|clarify|explain|answer|repeat|honest|fair|me)\b)[\w'&-]+)"
    r",? (?:i mean|that is)\b|"
    # "not that kind" / "not like that" only where the clause ends with it ("not like that matters" is no clarifier)
    r"(?:and )?(?:no,? )?not (?:like )?that (?:kind|sort|type)(?: of \w+)?(?=\W*(?:$|[.,!?;]|i mean\b))|"
    r"(?:um |uh )?not like that(?=\W*(?:$|[.!?;]|i mean\b)))"
)


def _clarified(wins: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``wins`` without what a clarifier takes back: a window the next one opens by clarifying, and the part of a
    window before a clarifier inside it (the clarifier and what follows are read on their own)."""
    out: list[tuple[int, str]] = []
    for i, (off, win) in enumerate(wins):
        nxt = wins[i + 1][1] if i + 1 < len(wins) else ""
        if (head := _CLARIFIER.match(nxt)) is not None and _names_mundane(head.group()):
            continue
        m = next((c for c in _CLARIFIER.finditer(win) if c.start() > 0 and _names_mundane(c.group())), None)
        out.append((off + m.start(), win[m.start() :]) if m is not None else (off, win))
    return out


def _names_mundane(clarifier: str) -> bool:
    """A clarifier that names means, a method or a death takes nothing back ("I'm going to end it. With the rope in
    the garage, I mean.")."""
    return not any(rx.search(clarifier) for rx in (_MEANS, _HARD_MEANS, _CUE_MEANS, _METHOD_ACT, _DRUG_QTY, _DEATH))


#: A sentence that opens by contrasting itself with the denial before it is the user's own again.
_OPENS_CONTRAST = re.compile(r"\W*(?:but|yet|however|though|still|except)\b")


#: What a guard covers ends where the user contrasts it with their own state: "i don't want to kill myself. i just
#: want to stop existing", "not going to do anything, just wish i wasn't here", "my thesis went fine, but i still
#: feel i'd be better off dead". The clause from the contrast on is read on its own (its own guards still apply).
#: Since 2.41 a media contrast may put up to three words before the user ("we watched two episodes of that baking show
#: but the whole night i kept wishing..."): a transcript with no full stops holds the media and the user's own thought
#: in one window, and before, the guard took both.
_CONTRAST_DENIAL = re.compile(r"\b(?:just|more like|rather|instead)\b")
_CONTRAST_MEDIA = re.compile(r"\b(?:but|yet)\b(?= (?:[\w']+ ){0,3}?(?:i|i'm|i've|i'd|i'll|me|my)\b)")


def _contrast_tail(win: str, media: bool) -> str | None:
    """The part of a guarded window from a contrast on (a substring, so evidence stays the user's words)."""
    m = (_CONTRAST_MEDIA if media else _CONTRAST_DENIAL).search(win)
    return win[m.start() :] if m is not None else None


def _idiom_over(win: str, evidence: str) -> bool:
    """An idiom's match starts the evidence ("killing myself studying"); one after it ("wish i was dead lol")
    does not count: there the idiom only closes the disclosure."""
    a = win.index(evidence)
    return any(m.start() <= a < m.end() for m in _IDIOM.finditer(win))


def phrase_allowed(text: str, evidence: str, cssrs: str) -> bool:
    """Apply the concept layer's window guards to a phrase-rule hit (its evidence must sit in a kept window)."""
    wins = [w for w in guarded_windows(text) if evidence in w]
    if not wins:
        return False
    if evidence != "kms" and all(_idiom_over(w, evidence) for w in wins):
        return False  # "i'm killing myself studying": the idiom the frames already drop
    if cssrs == "preparatory" and (_GRIEF.search(text) or _benign_farewell(text)):
        return False
    if cssrs == "danger_from_others" and _IDIOM.search(text):
        return False  # "my wife says it's that or she'll kill me"
    if cssrs in ("method", "attempt") and re.search(
        r"\b\d+ ?(?:mg|mcg|ml|milligrams?)\b|\b(?:dogs?|cats?|pets?|puppy|"
        r"kitten|labrador|toddler|child|kid)\b",
        text,
    ):
        return False  # dosing in milligrams, a pet or a child that got into the cupboard
    return not (cssrs == "nssi" and _SH_GUARD.search(text) and not _DELIBERATE_SH.search(text))


@lru_cache(maxsize=4096)
def concept_findings(text: str) -> tuple[Finding, ...]:
    """Findings over the normalised ``text``: at most one per C-SSRS category, the most severe, earliest first."""
    best: dict[str, Finding] = {}
    rank = SEVERITY_RANK
    on = gate(text)
    # a quantity named by a pronoun, and a past try with intent again, are frames' anchors, not the model's (its
    # concept features would then read every "all of them" and "the whole lot"): 2.22
    if (
        not anchored(text)
        and not ("_PRONOUN_QTY" in on and _PRONOUN_QTY.search(text))
        and not ("_PAST_TRY" in on and "_AGAIN_INTENT" in on)
        and not ("_CONTAINER_QTY" in on and "_TAKEN" in on and _CONTAINER_QTY.search(text))
    ):
        return ()
    found = [f for win in guarded_windows(text) for f in _frames(win, text, on)]
    if ("_DENY" in on or "_VOW" in on) and "_TAKEN_BACK" in on and not _screened(text, on):
        found += _taken_back(text)
    found += _screening_taken_back(text, on)
    found += _again(text, on)
    for f in found:
        cur = best.get(f.cssrs)
        if cur is None or rank[f.severity] > rank[cur.severity]:
            best[f.cssrs] = f
    order = {c: i for i, c in enumerate(CSSRS_CATEGORIES)}
    return tuple(sorted(best.values(), key=lambda f: order[f.cssrs]))


_PROMISE = r"(?:promise|vow|word|streak)"
#: A denial or promise of the user's own act that the message itself takes back: "i swore i'd never try to kill
#: myself again. tonight i did", "i promised my mum i'd never cut again. i'm going to break that promise", "i told
#: them i'm not suicidal. i lied". Read in the rest of the denial's sentence and the next one.
_TAKEN_BACK = re.compile(
    r"\b(?:"
    r"(?P<done>(?:i (?:just |already |finally )?did(?: it)?(?: again| anyway)?|i (?:relapsed|slipped))(?=\s*(?:$|[.!;]|"
    r"(?:tonight|today|last night|this morning|again)\b))|(?:tonight|today|last night|this morning),? i "
    r"(?:just )?did(?: it)?|i'?ve (?:gone and )?done it(?: again)?|i broke (?:that|my|the|this) " + _PROMISE + r")"
    r"|(?P<will>i'?m (?:going to|gonna|about to) break (?:that|my|the|this|it)(?: " + _PROMISE + r")?(?!\w)|i "
    r"(?:can'?t|cannot) keep (?:that|this|my|the) " + _PROMISE + r")"
    r"|(?P<lie>" + _LIE + r"|who am i kidding)"
    r")\b"
)
#: A promise of the user's own act ("i'd never cut again"), which the denial guard does not read as a denial.
_VOW = re.compile(
    r"\bi(?:'d| would|'ll| will)? never (?:\w+ ){0,2}?(?:cut|cutting|burn|burning|self[- ]?harm\w*|overdos\w*|od)\b"
)
_VOWED_SUICIDE = re.compile(
    r"\b(?:suicid\w*|kill\w* myself|end\w* (?:it|my life)|to die|die|death|dying|overdos\w*|od)\b"
)
_VOWED_HARM = re.compile(r"\b(?:self[- ]?harm\w*|hurt\w* myself|harm\w* myself|cut\w*|burn\w*)\b")
_TAKEN_BACK_AS: dict[str, tuple[str, Severity]] = {
    "done": ("attempt", "critical"),
    "will": ("intent", "critical"),
    "lie": ("active_ideation", "high"),
}


def _taken_back(text: str) -> list[Finding]:
    """Findings for denials of the user's own act that the message takes back (the denial guard drops the denial's
    sentence and the one after it, so they are read here, over the whole text)."""
    out: list[Finding] = []
    wins = windows(text)
    for i, (off, win) in enumerate(wins):
        for deny in (*_DENY.finditer(win), *_VOW.finditer(win)):
            said = deny.group()
            suicide = _VOWED_SUICIDE.search(said) is not None
            if not suicide and _VOWED_HARM.search(said) is None:
                continue
            start = off + deny.end()
            stop = wins[i + 1][0] + len(wins[i + 1][1]) if i + 1 < len(wins) else len(text)
            back = _TAKEN_BACK.search(text, start, stop)
            if back is None:
                continue
            # every alternative of _TAKEN_BACK is a named group; a self-harm taken back is self-harm, whatever the kind
            cssrs, severity = _TAKEN_BACK_AS[back.lastgroup or "lie"] if suicide else ("nssi", "high")
            out.append(Finding(cssrs, severity, _span_ev(text, off + deny.start(), back.end()), "denial_taken_back"))
    return out


def _screening_taken_back(text: str, on: frozenset[str]) -> list[Finding]:
    """A screening question about the user answered no, and the answer taken back within the next sentences: what
    was asked is the user's own (self-harm where it asked only about harming oneself, else active ideation). The
    screening guard drops the report up to the answer, so it is read here, over the whole text."""
    if "_SCREENED" not in on or "_ANSWER_NO" not in on or "_ANSWER_TAKEN_BACK" not in on:
        return []
    for asked in _SCREENED.finditer(text):
        if _ASKED_OF_USER.search(asked.group()) is None:
            continue
        answer = _ANSWER_NO.search(text, asked.start())
        if answer is None:
            continue
        back = _ANSWER_TAKEN_BACK.search(text, answer.end(), answer.end() + 160)
        if back is None:
            continue
        harm = _SCREENED_HARM.search(asked.group()) is not None and _VOWED_SUICIDE.search(asked.group()) is None
        cssrs = "nssi" if harm else "active_ideation"
        ev = _span_ev(text, asked.start(), back.end())
        return [Finding(cssrs, "high", ev, "screening_answer_taken_back")]
    return []


#: Intent to do again what the user survived or stopped before, said after it (2.22): "i tried twice before and both
#: times i survived. the third time i'm going to get it right", "last time i backed out. i won't back out again".
_PAST_TRY = _rx(
    r"survived(?= (?:it|that|both|each|every|twice|once|again)\b|\W*$|[.,;])|backed out(?! of)|bottled it|"
    r"chickened out(?! of)|botched it|woke up in (?:the )?(?:hospital|icu|a&e)|"
    r"(?:my|the|last|first|previous|failed) attempt(?! at (?!suicide|killing|ending|taking|hanging|overdos|od\b)[a-z])|"
    r"tried to (?:kill|end|take|hang|overdose|od|drown|die)|(?:tried|did it|attempted) (?:once|twice|before|"
    r"three times|in \d{4})"
)
_AGAIN_INTENT = _rx(
    r"(?:this|next|the third|the second|third|second|one more) time,? (?:i'm going to|i'll|i will|it'll|it will) "
    r"(?:\w+ ){0,2}?(?:get it right|do it properly|make (?:it|sure)|succeed|finish|work|not (?:fail|survive|wake|"
    r"come back))|(?:this|next) time,? (?:nothing|no one|nobody) (?:will|is going to|can|gets to) (?:stop|save|find)|"
    r"(?:get|do) it right|finish (?:what i started|the job)|"
    r"(?:won't|will not|not going to|never) (?:back out|bottle it|chicken out|fail|mess (?:it )?up|survive|be saved|"
    r"be found)(?: again| this time)?|break (?:that|the|my) promise|different ending this time"
)


def _again(text: str, on: frozenset[str]) -> list[Finding]:
    """Intent to do again what the user survived or stopped before: the past and the intent are often in different
    sentences, so this reads the guarded windows of the whole text (the intent after the past, about the user)."""
    g = _gated(on)
    if "_PAST_TRY" not in on or "_AGAIN_INTENT" not in on or g(_GRIEF).search(text) or g(_ACTIVITY).search(text):
        return []  # "i backed out of the bungee last time": an activity explains it
    wins = guarded_windows(text)
    for i, win in enumerate(wins):
        past = _PAST_TRY.search(win)
        if past is None or _negated(win, past) or not _mine(win, past, True):
            continue
        for later in (win[past.end() :], *wins[i + 1 :]):
            intent = _AGAIN_INTENT.search(later)
            if intent is not None and not _negated(later, intent) and _mine(later, intent, True):
                ev = f"{_ev(win, past)} ... {_ev(later, intent)}"
                return [Finding("intent", "critical", ev if len(ev) <= 90 else ev[:89] + "\u2026", "attempt_again")]
    return []


# -- risk built across turns ----------------------------------------------------------------------------
# Each user turn leaves coarse cue tags in the conversation's state; a turn completes a conversation
# finding when, together with the earlier turns' tags, the conversation holds means or a place or a
# farewell act, and a second, different cue (readiness, being alone, another of the first three).
# A turn that explains itself as an activity or a move (hiking, a new job abroad) leaves a "benign" tag
# that stops the cue types it explains from counting for the rest of the conversation.
_CUE_PLACE = re.compile(
    r"\b(?:at|on|by|near|up on|on top of|onto|over|top of|out on|out to|up to|drive up to|driving up to|"
    r"walk(?:ing)? (?:out|over|to)) (?:the|my|this|that|a) (?:[\w'-]+ ){0,3}?(?:bridge|footbridge|roof|rooftop|"
    r"cliffs?|ledge|edge|tracks|railway|level crossing|viaduct|river|quarry|gorge|top floor|top level|car park|"
    r"multi-?storey|overpass|motorway|lake|reservoir|sea|sands|harbour|harbor|pier|balcony|tower|viewpoint|"
    r"pass|drop)s?\b"
)
_CUE_READY = re.compile(
    r"\b(?:i'm|im|i am|i feel|feel|finally|feeling) (?:\w+ )?(?:ready|calm|at peace|settled|good now|okay now|"
    r"ok now)\b|\btill i'm ready\b|\bnot scared (?:this time|anymore)\b|\btonight'?s (?:the night|different)\b|"
    r"\b(?:it'll|it will|everything will|all|it) (?:all )?be (?:quiet|over|done|peaceful) soon\b|"
    r"\bmade (?:my )?peace\b|\bmade my (?:choice|decision)\b|\bmind'?s made up\b|"
    r"\b(?:won't|wont|will not) be (?:here|around|a problem|on|needing)\b|"
    r"\bwant (?:it all|everything|it) to (?:stop|end)\b|\b(?:don't|dont) (?:wanna|want to) do tomorrow\b|"
    r"\bnothing left to (?:sort|do|say|fix)\b|\blast time i'll\b|\bthis is the last\b|"
    r"\b(?:tell|let) (?:my|her|him|them) (?:\w+ )?(?:i'm sorry|sorry|i love)\b|\bno one will have to\b|"
    r"\bnobody will have to\b|\bdon't (?:want|need) (?:anyone|anybody) to (?:worry|find|come)\b|"
    r"\b(?:thank you|thanks|thx|ty|cheers) for (?:all|everything|being (?:there|kind|nice|the only)|listening|"
    r"talking (?:to|with) me|the chats|all the chats)\b|\bgrateful (?:i had|to have had|for) (?:you|u)\b|"
    r"\b(?:sorry|apologi[sz]e) (?:for|about) (?:everything|all of it|being (?:a|such|annoying|a pain)|the drama|"
    r"bein|taking up)\b|\blove (?:u|you) all\b|\b(?:dw|don't worry) (?:abt|about) me\b|\bgg everyone\b|"
    r"\bthat'?s me\b|\bshall not need\b|\bwon'?t need any (?:further|more)\b|"
    r"\b(?:you|u) were (?:nice|kind|kinder)\b"
)
_CUE_ALONE = re.compile(
    r"\b(?:nobody's|no one's|nobody is|no one is|everyone's|everyone is|nobody|no one) (?:\w+ )?(?:home|here|"
    r"around|out|away|walks|comes|up|awake)\b|"
    r"\b(?:away|out|gone|at|on|took the kids to)\b(?: [\w']+){0,4}? (?:till|until|til|for the|all) "
    r"(?:the )?(?:weekend|wknd|monday|tuesday|wednesday|thursday|friday|saturday|sunday|night|tomorrow|week|wk|"
    r"end of the week|\d+)\b|"
    r"\b(?:house|flat|home|place)(?:'s| is)? (?:to myself|empty|quiet)\b|\b(?:its|it's|it is) just me\b|"
    r"\bon nights\b|\bnobody around\b|\bno one around\b|\bhouse to myself\b"
)
_CUE_BENIGN_ACT = _ACTIVITY
_CUE_BENIGN_MOVE = _rx(
    r"moving|move|moved|relocat\w*|abroad|emigrat\w*|new job|new flat|new house|new city|new country|retir\w*|"
    r"retreat|holiday|vacation|trip|travel\w*|last day at|last shift|leaving do|graduat\w*|off to uni|"
    r"photography|astrophotography|meetup|wedding|party|festival|concert|vet|put (?:down|to sleep)|basic training|"
    r"successor|solicitor|grandchildren|twins|new baby|eighteenth|diorama|model railway|stargaz\w*"
)


#: Means as a conversation cue: broader than _MEANS (one turn may name "the stuff" another explains).
_CUE_MEANS = _rx(
    r"codeine|co-codamol|morphine|lithium|tramadol|diazepam|amitriptyline|propranolol|sertraline|seroquel|"
    r"quetiapine|oxycodone|insulin|paracetamol|tylenol|sleeping (?:pills|tablets)|tablets|pills|meds|the stuff|"
    r"hose|exhaust|charcoal|coals|barbecue|bbq|rope|knot|noose|beam|loft|blade|blades|razor|knife|pistol|"
    r"shotgun|rifle|gun|revolver|cabinet|stones|weedkiller|bleach"
)
_CUE_KEPT = re.compile(
    r"\b(?:keeping|kept|saving|saved|taped|tape|sealed|got|out of the (?:shed|cabinet|safe)|picked up|bags?|"
    r"found|checked|counted|collected|collecting|sharpened|sorted out|fits|lined up|loaded|bought|ordered|"
    r"back out|by the bath|tied|set up|\d+ of)\b"
)
_CUE_HOARD = re.compile(
    r"\b(?:been|i'm|started) (?:keeping|saving|hoarding|stockpiling|collecting) (?:them|it|those|these)\b"
)
_CUE_HERE = re.compile(r"\b(?:now|rn|right now|up here|here|tonight|at the|on the|by the|to the)\b")
_CUE_FAREWELL = re.compile(
    r"\b(?:paid off|settled (?:the|my)|cleared|cancell?ed (?:my|the|all)|closed my accounts|"
    r"sorted (?:everything|it all|out everything)|found (?:a|her|him|them) (?:a )?(?:good |new )?home|"
    r"look in on|spare key|keys (?:under|on|with|to)|left (?:the|my) (?:keys|ledger|wallet|phone|car)|"
    r"(?:gave|sent|handed|written down|wrote down|left)(?: \w+){0,3} (?:the )?(?:passwords?|pins?|logins?|"
    r"diary|accounts?|keys)|(?:took|gave|rehomed|dropped)(?: \w+){0,2} (?:the|my) (?:dog|cat|"
    r"rabbits?|pets?|hamster)|deleted (?:all )?(?:my|off) (?:\w+ )?(?:socials|photos|accounts|insta|posts)|"
    r"(?:letters?|notes?) (?:for|to)|read it after|taped up|thanks for (?:all|everything)|"
    r"everything'?s (?:tidy|sorted|in order)|"
    r"clean up after me|deal with my (?:mess|stuff)|affairs)\b"
)
#: Cutting with no object: the verb alone, said of oneself, is self-harm ("i cut again last night", "i cut to feel
#: something", "cutting helps me calm down"); an object ("cut my hair", "cut class") or a phrasal use ("cut back", "cut
#: in") never matches (since 2.27, an anchor a model confirms).
_SH_BARE = re.compile(
    r"\b(?:i|i've|ive|i'm|im|i'd|id|i'll|been)\W+(?:(?:still|just|only|sometimes|always|usually|also|even|then|really|"
    r"kinda|kind of|secretly|started to|start to|starting to|went and|go and|going to|gonna|wanna|want to|need to|"
    r"have to|had to|did|do|been|have been|had been|was|am|keep|kept|used to|like|um|uh)\W+){0,3}(?:cut|cutting)"
    r"(?=\W*$|\W*[.,!?;:)\-]|\s+(?:again|every|each|when|whenever|to (?:feel|cope|calm|get|make|stop|numb|forget|"
    r"punish|deal|release|relieve)|because|cause|cuz|bc|at night|before|after|until|till|til|if|so|but|or|more|less|"
    r"a lot|lots|most|all the time|daily|nightly|sometimes|still|too|now|tonight|last night|this (?:week|month|year)|"
    r"these days|lately|recently|in secret|secretly|in the (?:bath|bathroom|shower|toilets?|dark)|deeper|deep|"
    r"for (?:the first time|years|months|weeks|a while)|since|instead|on (?:my|the) (?:arm|leg|thigh|wrist|hip)))|"
    r"\bcutting\s+(?:helps|helped|is the only|was the only|makes me|made me|calms|calmed|has been|became|is how|"
    r"was how|numbs|stops)\b|\bjust cutting\b"
)
#: The user's own mind telling them to die, in the second person ("my brain's on a loop of you should kill yourself",
#: "my brain goes 'just kys'"; since 2.27, an anchor a model confirms).
_INNER_VOICE = re.compile(
    r"\b(?:brain|head|mind|thoughts?|voices?|loop|intrusive \w+|inner voice|little voice)\b(?:\W+\w+){0,8}?\W+['\"]?"
    r"(?:just |should |go |you should |u should |should just |you should just )?(?:kill (?:yourself|urself|ur self|"
    r"your self)|kys|die already|go die|end it all|off yourself|unalive yourself)\b"
)
#: The world after the user, told as settled (since 2.27, an anchor only the second look confirms): "so nobody has to
#: deal with it", "whoever finds me", "when i'm gone", "she didn't know it was goodbye", "i'm not going to be around".
#: Wording that names no means and no death, in the preparatory crises the second look is sure of; wills and letters
#: for later written by the well and the old say it too, so it is never a frame of its own.
_AFTER_ME = re.compile(
    r"\b(?:(?:when|after|once|if|by the time) i'?m (?:gone|not here|not around|dead|no longer (?:here|around))|"
    r"whoever (?:finds|find|comes|ends up|walks|opens|gets here|is first)|"
    r"(?:won'?t|wont|will not|not going to|not gonna) be (?:around|here|there)\b(?! (?:for|to|at|on|in|tomorrow|next|"
    r"until|till|til|this|that|when|because|cause|cuz|bc|much\b(?! longer)))|"
    r"(?:no ?one|no-one|nobody) (?:has|have|will have|won'?t have|doesn'?t have|don'?t have) to "
    r"(?:deal with|clean|sort|go through)|for afterwards|"
    r"(?:understand|find out|know|get (?:it|the \w+)|read it|open it) (?:why )?after(?:wards)?\b(?! (?:the|a|my|"
    r"school|work|this|that|i|we|he|she|they|lunch|dinner))|"
    r"(?:doesn'?t|don'?t|didn'?t) know (?:it'?s|it was|it is|this is|that was) (?:goodbye|the last)|"
    r"(?:the )?last time (?:they|she|he|you|anyone|my \w+) (?:will )?(?:see|hear|saw|heard)|one (?:last|final) time)\b"
)

# -- since 2.30: anchors only the second look confirms, for concepts told without a means or death word ----------
_BODY_PART = (
    r"(?:own )?(?:arms?|upper arms?|forearms?|wrists?|hands?|palms?|fingers?|knuckles|thighs?|legs?|shins?|hips?|"
    r"stomach|tummy|belly|ribs|chest|skin|body|head|forehead|face|neck|ankles?|shoulders?)"
)
#: Harm done to the user's own body told by what it did or left, with no self-harm word ("biting my forearm hard
#: enough to leave marks", "new red lines on my forearm", "snap it till the skin splits", "opening old wounds again").
_BODY_HARM = re.compile(
    r"\b(?:(?:bit|bite|biting|bites|punch\w*|hit|hitting|bang\w*|headbang\w*|slam\w*|scratch\w*|pour\w*|press\w*|"
    r"dug|dig\w*|snap\w*|ran|run|drag\w*|held|hold\w*|stub\w*|carv\w*|scrap\w*|pick\w*|gave|giving|give|"
    r"hurt\w*|burn\w*|pinch\w*|stab\w*|poke\w*|jab\w*|take it out|took it out|taking it out)"
    r"(?: \w+){0,6}? (?:on|onto|into|over|across|along|up|down|in|at)? ?my " + _BODY_PART + r"|"
    r"(?:marks?|lines|stripes|reminders?|scratches|cuts|burns|bruises|wounds|blisters?|entries|scars) "
    r"(?:\w+ ){0,3}?(?:on|up|across|along|into|down|all over|under) my " + _BODY_PART + r"|"
    r"my " + _BODY_PART + r" (?:\w+ ){0,3}?(?:new (?:stripes|lines|marks|entries|cuts|ones)|(?:are |is )?covered|"
    r"(?:all )?cut up|(?:are |is )?(?:all )?split (?:open)?|diary|pays|paid|paying)|"
    r"(?:split|splits|break|broke|breaks|breaking|opened|opens|opening) (?:\w+ ){0,2}?(?:the|my) skin|"
    r"(?:skin|knuckles) (?:\w+ )?(?:splits?|split open|opens? up|breaks? open)|"
    r"(?:till|until|til) (?:it|i|they|my \w+|the skin) (?:bleeds?|bled|splits?|opens?|rings?|blisters?|bruises?|"
    r"saw stars)|"
    r"(?:opening|reopen\w*|open(?:ing)? up|opened up|picking at|pick at) (?:\w+ ){0,2}?(?:old )?(?:wounds|scars|cuts|"
    r"lines)|"
    r"(?:on|to|into) myself again|(?:the )?(?:bruises|marks|cuts|burns|scratches) i (?:give|gave|make|made|do|did) "
    r"(?:to )?myself|(?:marking|mark|marked) myself|(?:drawing|draw|drew) on my (?:skin|arms?|legs?|thighs?)"
    r"(?! with)|the (?:sharp|lighter|blade|compass|razor|pin|scissors) (?:one|thing|stuff)|"
    r"(?:coping|old) (?:habit|method|ways?)(?: \w+){0,3}? (?:the sharp|with the (?:lighter|blade|razor|compass|"
    r"sharp))"
    r")\b"
)
#: An overdose or poisoning taken, or an act under way, told without a quantity or a death word ("took them all",
#: "already taken them", "went through with it", "drank the floor cleaner", "both my wrists are open", "turned the
#: gas on and sealed the door").
_ACT_DONE = re.compile(
    r"\b(?:(?:took|taken|swallowed|downed|necked|had) (?:them all|it all|the lot|everything|all of (?:them|it|my|the)|"
    r"all (?:my|the|mine|his|her|of my|my \w+'s|\w+'s)|(?:the|my) (?:whole|entire) (?:\w+ ){0,2}?(?:bottle|packet|"
    r"pack|box|strip|jar|tub|lot|supply|stash|prescription|month'?s?))|"
    r"(?:already|just) (?:took|taken|swallowed|downed|had) (?:them|it|the lot|all)|"
    r"(?:drank|drunk|drink|drinking|swallowed|downed|necked) (?:\w+ ){0,6}?(?:cleaner|bleach|dip|pesticide|"
    r"herbicide|weedkiller|weed killer|weed spray|spray|chemicals?|antifreeze|poison|essence|acid|detergent|paraquat|"
    r"fertili[sz]er|disinfectant|lye|drain \w+)|"
    r"(?:it'?s|they'?re|its|theyre|they are|it is) (?:all )?(?:in my system|kicking in|starting to (?:work|kick in))|"
    r"(?:went|gone|go|going) (?:ahead|through) with it|went ahead and|"
    r"(?:opened|open|slit|slashed|sliced|cut open) (?:up )?(?:both )?my wrists?|"
    r"(?:both )?my wrists (?:are|r) (?:open|cut|slit|bleeding)|"
    r"turned (?:on )?the gas(?: on)?|(?:sealed|taped|blocked) (?:up )?(?:the )?(?:\w+ )?(?:door|room|windows?|vents?|"
    r"gaps?)|"
    r"tied (?:it|the \w+|my \w+(?: \w+)?) (?:to|round|around|onto|on) (?:the|my)"
    r")\b"
)
#: A plan told by its settled parts rather than by a death word ("i've set a new date", "i know where, when and
#: how", "it's set for the weekend my wife visits her sister", "nye is the date").
_PLAN_SET = re.compile(
    r"\b(?:(?:set|picked|chosen|chose|fixed|got|have|booked|planned|scheduled|circled|worked out|decided on) "
    r"(?:a |the |my |another |a new |\w+ )?(?:date|day|night|time|place|spot|location)s?|"
    r"(?:date|day|night)(?: is|'s| has been| was) (?:set|fixed|picked|chosen|booked|decided)|"
    r"(?:the )?date(?:,| and) (?:the |a )?(?:place|time|spot|method|way|how)|"
    r"(?:when|where),? (?:when|where)?,? ?and how|know (?:where|when|how), (?:where|when|how)|"
    r"(?:it'?s|its|it is|everything'?s|everything is|all|it'?s all) (?:set|planned|booked|arranged|sorted|in place|"
    r"lined up) for|planned it for|(?:is|'s) the date|that'?s (?:when|the (?:day|night|date))\b(?! (?:i|we) (?:met|got "
    r"married|moved))"
    r")\b"
)
#: Preparation told as putting things in order, with no note and no means: possessions given away, methods
#: researched, a policy's suicide clause checked, things made for later, traces cleared ("gave my gaming pc to my
#: little brother", "been googling how long it takes", "a usb stick labelled 'for later'").
_PREP_SOFT = re.compile(
    r"\b(?:(?:gave|giving|given|give|gives|handed|handing|rehom\w*) away|(?:gave|given|handed|left) (?:all )?(?:my|his|"
    r"her) (?:\w+ ){0,4}?to (?:my|his|her|the|a)|who gets what|last of my (?:things|stuff)|"
    r"(?:sorting|sorted|putting|put|getting|got) (?:my )?(?:things|affairs|life|stuff|everything) (?:in order|sorted)|"
    r"(?:googl\w*|looking up|looked up|look up|lookin up|lookin|reading (?:about|up on)|read about|researching|"
    r"research\w*|searched|searching) (?:\w+ ){0,4}?(?:how (?:long|much|many|to)|which (?:\w+ )?(?:ones?|are|is|"
    r"medications?|pills|painkillers|hotels|bridges|buildings)|what (?:hurts|dose|amount)|ways to|methods?|the "
    r"quickest|painless|lethal|overdose|timetable|most likely)|"
    r"(?:insurance|policy|polic(?:y|ies)) (?:\w+ ){0,6}?(?:pays? out|paid out|covers?|cover) (?:\w+ ){0,3}?"
    r"(?:suicide|if it'?s)|waiting period|suicide clause|"
    r"for later|(?:listen to|watch|open|read|have) (?:it |them )?(?:when (?:he'?s|she'?s|they'?re) older|on (?:his|"
    r"her|their) \w+ birthday)|(?:won'?t|wont|will not|not gonna|not going to) need (?:\w+ ){0,3}?(?:anymore|any "
    r"more|after)|"
    r"(?:cleared|cleaned|emptied) out my (?:desk|locker|room|flat|office)|deleted (?:all )?my (?:socials|insta|"
    r"instagram|tiktok|snap|photos|accounts|search history)|wiped my (?:search history|browser|phone|laptop)|"
    r"(?:saving|hiding|hide|hid|stashing|hoarding|collecting|keeping) (?:them|my (?:tablets|pills|meds|"
    r"antidepressants)) (?:instead|in|under|up)"
    r")\b"
)
#: Active thoughts of ending one's life told with no death word: an act on oneself that is final, a life told as a
#: story the user would end ("do something permanent to myself", "finish myself", "the thoughts about doing it are
#: back", "log off permanently", "the last page of my own story").
_SELF_END = re.compile(
    r"\b(?:(?:do|doing|did) (?:something|anything|it) (?:\w+ ){0,2}?(?:to|on) myself|"
    r"(?:make|made|making) myself (?:disappear|go away|vanish|not exist)|"
    r"(?:finish|finishing|erase|erasing|delete|deleting|unplug\w*|switch\w* off|turn\w* off|off switch on|"
    r"(?:pull|pulling) the plug on) myself|"
    r"(?:thoughts?|ideas?|urges?) (?:\w+ ){0,3}?(?:about|of) (?:doing it|ending it|ending things|going through with it|"
    r"ending my (?:life|story))|"
    r"(?:last|final) (?:page|chapter) of my (?:own )?(?:story|life|book)|"
    r"(?:end|ending|close|closing) (?:my|the) (?:own )?(?:story|book) (?:\w+ )?(?:myself|early)|"
    r"(?:log|logging|check|checking|sign|signing|clock|clocking|tap|tapping|bow|bowing|blink|blinking|leave|leaving|"
    r"disappear\w*|unsubscrib\w*|switch\w* off|turn\w* off|unplug\w*)(?: \w+){0,3}?,? (?:permanently|for good)|"
    r"leave-leave"
    r")\b"
)
#: A passive wish told by waking, by letting what comes take the user, or by not having existed ("damn, woke up
#: again", "whatever the clot does, i'll let it", "if a car comes, it comes", "i want to be erased").
_LET_IT = re.compile(
    r"\b(?:(?:woke|wake|waking|woken) up again|(?:tired|sick) of waking up|another day i (?:didn'?t|did not) want|"
    r"(?:disappointed|angry|annoyed|gutted|mad) (?:\w+ ){0,3}?(?:i|that i|my eyes) (?:woke|wake|did|opened|am still|"
    r"'m still|survived)|"
    r"(?:pray|hope|wish)\w* (?:\w+ ){0,3}?(?:don'?t|dont|won'?t|wont|not|never) (?:wake|waking)|"
    r"let it (?:take me|run its course|be my|come)|i'?ll let it(?= happen|\W*$|\W*[.,;!])|"
    r"(?:it|they|a car|something|a truck) (?:comes?|happens?),? it (?:comes|happens)|so be it|"
    r"never (?:existed|been born)|un-?born|(?:erased|deleted|wiped) from existence|(?:be|being|get) erased|"
    r"(?:stop|stopped|quit) (?:being|existing)|blink out|fade to black|"
    r"(?:jealous|envious|envy) (?:of )?(?:\w+ ){0,4}?(?:dead|dying|obituar\w*|in them|who (?:died|didn'?t come home))|"
    r"(?:joining|join|be with) (?:her|him|them) (?:already|now|soon|again|up there)|about joining (?:her|him|them)"
    r")\b"
)
#: Intent told with no death word: volition toward an act named only by a verb or a promise ("im going to jump",
#: "i'm going to break that promise", "the next time i'm alone i'm acting on it", "not planning on being alive much
#: longer", "that's my time to go", "i'm finished with this life").
_INTENT_SOFT = re.compile(
    r"\b(?:(?:i'?m|im|i am|i|i'?ll|ill) (?:\w+ )?(?:going to|gonna|will|intend to|mean to) (?:jump\b(?! (?:in|on|into|"
    r"at|ship|the|off (?:the|a) (?:diving|high) board))|act on (?:it|them)|go through with|finish what|make sure "
    r"(?:nothing|no one|nobody|they stay)|break (?:that|my|the) promise|try again)|"
    r"(?:acting|act) on (?:it|them|the thoughts?|those thoughts)|"
    r"not (?:planning on|planning to|going to|gonna|gonna b|intending to) (?:be |being |stay |staying )?(?:alive|"
    r"here|around)|(?:my|the) time to go|finished with (?:this|my) life|(?:chosen|decided|choose|decide) to (?:leave|"
    r"go)\b(?! (?:to|home|back|out|abroad|travel|with|for|in|on|at))|finish what (?:\w+ ){0,2}started|"
    r"(?:really|truly|actually) done this time|(?:stay|stays|staying) closed"
    r")"
)
#: A method thought of or asked about with no means word: an act on the road, at a height, on the track, in the
#: cold, or a question for what is fatal ("i think about not turning the wheel at the hairpin", "what floor is
#: guaranteed to be fatal", "is jumping from a 5 story building survivable").
_METHOD_SOFT = re.compile(
    r"\b(?:(?:think|thinking|thought|imagine|imagining|picture|picturing|keep seeing|brain goes|mind goes)"
    r"(?: about| of| abt| bout)? (?:\w+ ){0,3}?(?:crashing|crash|driving (?:into|off)|turn(?:ing)? (?:the )?wheel|"
    r"not turning|jumping|jump|walking in|walkin in|hanging|hung|roping|lying down (?:outside|in the snow)|"
    r"stepping (?:out|in front|off)|finding a tree|going under|the cold)|"
    r"(?:fatal|guaranteed|survivable|deadly|lethal|instant)\b(?=[^.!]*\?)|(?:is|be|it) (?:fatal|guaranteed|"
    r"survivable|deadly|lethal)|(?:too much|too many) for (?:someone|a person|me)|which (?:tree|bridge|floor|"
    r"building|bottle|stretch|train)"
    r")\b"
)
#: A past attempt told without the words of :data:`_HISTORY`: counted, survived, woken from, or a brink come back from
#: ("survived 2 attempts", "a survivor of 4 attempts", "tried hanging at seventeen", "previous overdose", "came back in
#: an ambulance", "woke up in the er").
_HISTORY_SOFT = re.compile(
    r"\b(?:(?:\d+|one|two|three|four|five|several|multiple|both|my own|own|past|prior) (?:suicide |sui |sue aside )?"
    r"attempts?\b(?! at (?!suicide|killing|ending|taking|hanging|overdos|od\b)[a-z])|survivor of (?:\w+ )?attempts?|"
    r"tried (?:hanging|overdosing|jumping|drowning|gassing|pills)|(?:previous|past|prior|an|my|the) (?:overdose|od)\b"
    r"(?! (?:training|course|kit|response|calls?))|resuscitated|"
    r"(?:gone|went|been|go) (?:right )?to the edge (?:\w+ ){0,2}?(?:and (?:came|come) back|before|once)|"
    r"came back in an ambulance|(?:woke|wake|waking|woken) up in (?:the )?(?:er|icu|a&e|hospital|a hospital bed|a "
    r"hospital)|(?:stood|standing) on (?:a|the) (?:chair|stool|ledge|bell tower|roof)(?: \w+){0,4}? (?:meaning|cable|"
    r"rope|belt|noose)|close call with myself|my own doing|(?:scars|wrists) (?:are from|tell)|"
    r"(?:hanging|overdose|jump|it) didn'?t work|"
    # since 2.34
    r"survived (?:a |an |my )?(?:hanging|jump|fall|sui\w* attempt)|talked me (?:down|back) (?:off|from) (?:the|a) "
    r"(?:ledge|edge|bridge|roof|harbour wall|wall|railing|platform)|made sure i (?:wouldn'?t|would not) (?:see|wake)|"
    r"tried to set myself (?:alight|on fire)|(?:night|week|days) (?:\w+ ){0,4}?after (?:swallowing|taking|drinking) "
    r"(?:a bottle|a box|the bottle|everything|all)"
    r")"
)
#: A passive wish told as a call home or a reunion with the dead ("i just ask every night to be called home early",
#: "i just want to go home to god now").
_GO_HOME = re.compile(
    r"\b(?:(?:called|call me|take me|go|going|went) home (?:to (?:god|jesus|the lord|heaven|allah)|early|now|"
    r"already)|(?:god|jesus|the lord|allah|heaven) (?:to |can |could |would |will |should |)(?:take|takes|call|"
    r"calls|get|gets|bring|brings) me|"
    r"(?:be|join|joining|see) (?:him|her|them|my \w+) (?:again )?(?:in heaven|on the other side|up there))\b"
)

# -- since 2.34: more anchors only the second look confirms, for concepts the 2.30-2.32 anchors do not name ------
#: Cutting and bleeding told with the bare verb or by the blood ("i've cut really deep", "when my wife goes to sleep i
#: go into the bathroom and cut", "which spots are safest to cut", "there's a lot of blood"). The everyday objects of
#: the verb are left out; what is left is the user's own act, which the model has to confirm.
_CUT_SOFT = re.compile(
    r"\b(?:(?:i|i'?ve|ive|i have|i had|i just|just|i been|i'?ve been|i keep|i still|i'?m gonna|i'?m going to|"
    r"gonna|want to|wanna|urge to|need to|and|then|go|went|i'?d) (?:\w+ )?(?:cut|cuts|cutting)\b"
    r"(?! (?:my hair|my fringe|my bangs|my nails|my finger on|my thumb on|myself (?:shaving|on)|(?:the|a|an|some|this|"
    r"that|these|those|his|her|their|our|your|it|them|him|back|down|off|out|in|up|ties|corners|carbs|sugar|class|"
    r"school|costs|loose|through|across|open|short|to|from|with|contact|my losses|my hours|my \w+ (?:on|while|when|"
    r"chopping|slicing|opening|cooking|shaving)|into (?:the|a))\b))|"
    r"(?:cut|cuts|cutting|cutted) (?:\w+ )?(?:deep|deeper|too deep|really deep|so deep)|"
    r"(?:safe|safest|okay|ok|best|easiest|where|place|places|spot|spots|part|parts)(?: \w+){0,6}? to cut\b|"
    r"(?:how deep|where) (?:can|should|do|would|could) (?:you|i|u|someone|a person) cut\b|"
    r"(?:a )?lot of blood|so much blood|blood everywhere|(?:make|made|making) (?:it|myself|me|my \w+) bleed|"
    r"(?:make|made|making) (?:the )?blood (?:come|run|flow)|(?:stop|stops|stopping) (?:the |my )?bleeding(?! gums)|"
    r"(?:(?:my|the) (?:own |new |fresh )|(?:found|saw|seen|sees|see|notice\w*) (?:the|my) )cuts\b(?! (?:to|in|at|of|"
    r"from|for)\b)"
    r")"
)
#: Harm to the skin by heat, friction or a point, told without a self-harm word ("hand under very hot water until it
#: blisters", "palm over the stove burner again", "grind the back of my hand against the concrete", "did my wrist
#: again", "i write 'worthless' on my skin with a pin").
_SKIN_SOFT = re.compile(
    r"\b(?:(?:hand|hands|arm|arms|palm|palms|finger|fingers|wrist|wrists|skin|leg|legs|thigh|thighs) "
    r"(?:\w+ ){0,2}?(?:under|over|on|onto|against|in|into) (?:the |a )?(?:very |boiling |scalding |really )?"
    r"(?:hot water|boiling water|kettle|stove|hob|burner|flame|lighter|iron|oven door|radiator|concrete|brick)|"
    r"(?:grind|grinding|ground|scrape|scraping|scraped|rub|rubbing|rubbed|drag|dragging|dragged) (?:\w+ ){0,5}?"
    r"(?:against|on|along|across) (?:the |a )?(?:concrete|wall|brick|bricks|pavement|floor|carpet|gravel)|"
    r"(?:did|do|doing|done) my (?:wrists?|arms?|legs?|thighs?|stomach|hips?|skin)\b|"
    r"(?:the thing|it|that) (?:to|on) my (?:arms?|legs?|wrists?|thighs?|skin|stomach|hips?|body)\b|"
    r"(?:on|into) my (?:own )?skin (?:with|using)|with a (?:pin|needle|compass|safety pin|paperclip)\b|"
    r"redecorat\w* my|(?:scratches|marks|burns|cuts) (?:\w+ )?(?:aren'?t|are not|weren'?t|were not|isn'?t) "
    r"(?:from|really from|actually from) (?:the|my|a)|"
    r"(?:burn|burns|burned|burnt|burning) (?:\w+ ){0,2}?(?:cigarette|cigarro|lighter|quemadura)|quemadura"
    r")"
)
#: Means told without a means word: the railway by its trains and crossings, gas by its car and hose, poison by its
#: bottle ("the 7:40 freight doesn't stop at my station", "car engine, shut garage, saturday night", "the hosepipe and
#: the tape are in the land cruiser", "the liquid for the plants, the one with the skull").
_MEANS_SOFT = re.compile(
    r"\b(?:(?:train|trains|express|freight|\d+[:.]\d+|one) (?:\w+ ){0,3}?(?:doesn'?t|does not|don'?t|won'?t|wont|"
    r"never|not) (?:stop|slow)|in front of (?:the |a |an )?(?:\w+ )?(?:train|express|freight|lorry|truck|bus|tube)|"
    r"(?:on|onto|at|near|down to|across) the (?:tracks?|rails?|train line|railway line)|yellow line|platform edge|"
    r"(?:the |a )?(?:level )?crossing (?:by|past|near|at|behind|off|on)|"
    r"hose ?pipe|hose (?:that fits|for|on|to) the|(?:closed|shut|locked|sealed) (?:the )?garage|garage(?: door)? "
    r"(?:shut|closed)|(?:car|engine) (?:running|on) in|(?:run|running) (?:a|the|my) car in|fumes|"
    r"(?:chemicals?|stuff|things) (?:\w+ ){0,4}?(?:mix|mixed|mixing|closed room|sealed room)|"
    r"(?:with|has|had|the one with) the skull|(?:brake|lighter|antifreeze) fluid|euthanasia|put (?:animals|dogs|"
    r"them|horses) down"
    r")"
)
#: An end told as a departure or a last act of one's own, with no death word ("i keep wondering how to make my exit",
#: "this is my curtain call", "close the door on all of it", "my ticket out of here", "i might go the same way he
#: did", "my head keeps telling me to put myself down").
_EXIT_SOFT = re.compile(
    r"\b(?:(?:make|making|made|take|taking|took|plan|planning) my (?:\w+ )?(?:exit|final bow|last bow|leave of)|"
    r"curtain call|(?:bring|bringing|ring|ringing) (?:the|my) (?:own )?curtain (?:down|on)|(?:quietly|just) see "
    r"myself out|(?:close|closing|shut|shutting) the (?:door|book|lid) on (?:all of it|it all|everything|myself|my "
    r"life)|(?:ticket|way) out of (?:here|this world|this life|all this)|(?:out|get \w+ out) of this world|"
    r"(?:done|finished|through) with being (?:here|alive|a person\b(?! who| that))|(?:tired|sick) of being a person"
    r"\b(?! who| that)|"
    r"(?:go|going|went|gone|end up) (?:out )?the same way (?:as )?(?:he|she|they|my \w+|dad|mum|mom)(?: did)?|"
    r"(?:that|it)(?:'s| is) (?:me|mine) next|(?:i'?m|im|i am) next\b|put (?:myself|me) down\b|"
    r"not (?:the city|the job|work|town)\W+(?:from )?everything"
    r")"
)
#: A passive wish told by waiting for the end or wanting to be gone from here ("nobody will notice one less passenger",
#: "why couldn't it have been me", "i want the lights to go out and stay out", "every evening is a waiting room",
#: "i don't want more to be here", "if someone comes in, honestly, good").
_WAIT_SOFT = re.compile(
    r"\b(?:one less (?:passenger|person|mouth|body)|(?:why|wish) (?:couldn'?t|could not|wasn'?t|didn'?t|"
    r"did not) (?:it|that|they) (?:have )?(?:been|be|take|hit|pick) me|(?:lights?|candle|flame) (?:\w+ ){0,3}?"
    r"(?:go|goes|going|to go) out|(?:blow|blows|blowing) (?:it|me) out|(?:life|evening|day|night|everything)(?: is|'s) "
    r"(?:a|one big|one long) waiting room|impatient for it|(?:asking|ask|begging|beg) (?:it|them|god|him) to hurry|"
    r"(?:don'?t|dont|do not|didn'?t) want (?:more |any more |anymore )?to be here|"
    r"(?:comes in|breaks in),? (?:\w+ ){0,2}?good|"
    r"(?:hoping|hope|hoped|rooting for|wish|wishing) (?:\w+ ){0,4}?(?:we|it|the plane|the car|the truck|the brakes?) "
    r"(?:wouldn'?t|won'?t|doesn'?t|don'?t|didn'?t) (?:land|brake|stop|make it)"
    r")"
)
#: Preparation told by who will find the user or a note, or by a last message ("so nobody at home has to be the one who
#: finds me", "the note under my pillow where my mum will find it", "letters for mum and dad are in my desk drawer",
#: "my 'if you're reading this' letter", "i've quietly been saying my farewells").
_FOUND_SOFT = re.compile(
    r"\b(?:(?:one|ones|who|that|to|kids|children|family|mum|mom|dad|he|she|they|nobody|no one|someone|anyone|"
    r"wife|husband|partner|flatmates?|roommates?) (?:\w+ ){0,2}?(?:finds?|found|finding|find) (?:me\b(?! (?:a|an|some|"
    r"the|it|one|something|anything|things?|jobs?|work|interesting|attractive|funny|annoying|boring|cute|weird)\b)|"
    r"(?:my body|(?:the|my) (?:note|letter|body))\b)|"
    r"(?:where|so) (?:\w+ ){1,3}(?:will|would|'ll|can|could) find (?:it|them|the note|the letter|the letters)\b|"
    r"(?:letters?|notes?|messages?|emails?|videos?) (?:\w+ ){0,2}?(?:for|to) (?:mum|mom|mam|dad|my (?:mum|mom|dad|"
    r"parents|kids|children|sister|brother|wife|husband|partner|family|friends|son|daughter)|each of (?:them|my)|"
    r"everyone|after)\b(?! (?:work|school|class|about the|re)\b)|"
    r"if (?:you'?re|youre|you are) reading this|(?:last|final) (?:message|msg|letter|note|email|post) (?:for|to)|"
    r"(?:put|left|leave|leaving|hid|hidden|tucked|placed) (?:the|a|my) (?:note|letter|letters|notes) (?:under|on|in|"
    r"where|for)|(?:saying|said|say) (?:all )?my farewells|(?:a|my) goodbye but|kinda (?:a|my) goodbye|"
    r"(?:passwords|pins|logins) (?:\w+ ){0,4}?(?:afterwards|after i'?m|when i'?m|for after|so (?:she|he|they) can "
    r"close)"
    r")"
)
#: A method named by stopping food, water or care ("from tomorrow no more food, no more water, and i'll let my body give
#: up", "how long would my body take to give up").
_STARVE_SOFT = re.compile(
    r"\b(?:(?:my |the |your )?body (?:\w+ ){0,3}?(?:give up|gives up|to give up|shuts? down|to shut down)|"
    r"(?:no more|stop|stopped|stopping|without) (?:eating|food|water|drinking)(?: \w+){0,8}? (?:(?:until|till|before) "
    r"(?:i die|i'?m gone|my body|the end|it'?s over|it ends)|(?:give|gives) up|(?:to )?die)"
    r")"
)


@lru_cache(maxsize=4096)
def turn_cues(text: str) -> frozenset[str]:
    """Cue tags of one normalised user turn, for conversation-level risk (see :func:`conversation_finding`)."""
    on = gate(text)

    g = _gated(on)
    cues: set[str] = set()
    # benign tags whatever else the turn holds: "i retire on friday" qualifies a later "i wrote farewell letters"
    if g(_CUE_BENIGN_ACT).search(text):
        cues.add("benign_activity")
    if g(_CUE_BENIGN_MOVE).search(text):
        cues.add("benign_move")
    if not any(name in on and _CLASSES[name].search(text) for name in _CUE_ANCHORS):
        return frozenset(cues)
    for win in guarded_windows(text):
        means = g(_MEANS).search(win) or g(_CUE_MEANS).search(win)
        if means and (g(_ACQUIRED).search(win) or g(_AT_HAND).search(win) or g(_CUE_KEPT).search(win)):
            cues.add("means")
        if g(_CUE_HOARD).search(win):
            cues.add("means")
        if g(_CUE_PLACE).search(win) and g(_CUE_HERE).search(win):
            cues.add("place")
        if g(_PREP_ACT).search(win) or g(_CUE_FAREWELL).search(win):
            cues.add("farewell")
        if g(_CUE_READY).search(win):
            cues.add("ready")
        if g(_CUE_ALONE).search(win):
            cues.add("alone")
        if g(_DEATH).search(win) or g(_DEATH_SELF).search(win) or g(_HOPELESS_CUE).search(win):
            cues.add("hopeless")
    return frozenset(cues)


_HOPELESS_CUE = re.compile(
    r"\b(?:no (?:future|point|way out)|can't (?:go on|do this anymore|take (?:it|this) anymore)|"
    r"(?:such a|a) burden|better off without me|nothing left)\b"
)
_ANCHORS = {"means", "place", "farewell"}
_SECOND = {"means", "place", "farewell", "ready", "alone", "hopeless"}


def conversation_finding(prior: frozenset[str], current: frozenset[str]) -> Finding | None:
    """A finding when this turn completes risk built across the conversation's user turns, else None."""
    cues = prior | current
    live = set(cues)
    if "benign_activity" in cues:
        live -= {"means", "place"}
    if "benign_move" in cues:
        live -= {"farewell", "ready", "alone"}
    live &= _SECOND
    new = (current & live) - ({"hopeless"} if "hopeless" in prior else set())
    if not new or not (live & _ANCHORS) or len(live) < 2:
        return None
    if not live & prior:  # every cue comes from this turn: the single-turn detector's business
        return None
    return Finding("preparatory", "critical", "across turns: " + ", ".join(sorted(live)), "conversation")


#: Concept classes whose presence (and pairwise co-presence) the learned model takes as features: what
#: the frames combine by hand, the model weighs from examples.
CONCEPTS: dict[str, re.Pattern[str]] = {
    "death_self": _DEATH_SELF,
    "death": _DEATH,
    "passive_death": _PASSIVE_DEATH,
    "attempt_now": _ATTEMPT_NOW,
    "method_act": _METHOD_ACT,
    "means": _MEANS,
    "wish": _WISH,
    "want": _WANT,
    "think": _THINK,
    "plan": _PLAN,
    "time": _TIME,
    "acquired": _ACQUIRED,
    "at_hand": _AT_HAND,
    "prep_act": _PREP_ACT,
    "lethal_q": _LETHAL_Q,
    "self_harm": _SH_ACT,
    "history": _HISTORY,
    "again": _AGAIN,
    "media": _MEDIA_FEATURE,
    "grief": _GRIEF,
    "idiom": _IDIOM_FEATURE,
    "deny": _DENY,
    "activity": _ACTIVITY_FEATURE,
    "first_person": _FIRST,
    "third_person": _THIRD,
    "on_edge": _ON_EDGE,
    "drug_qty": _DRUG_QTY,
    "taken": _TAKEN,
    "done_now": _DONE_NOW,
    "ready": _CUE_READY,
    "place": _CUE_PLACE,
    "hopeless": _HOPELESS_CUE,
    "sh_guard": _SH_GUARD,
}


# -- the gate (see ._gate): which classes can match a text, from one trie scan --------------------------
_CLASSES: dict[str, re.Pattern[str]] = {
    name: rx for name, rx in list(globals().items()) if name.startswith("_") and isinstance(rx, re.Pattern)
}
_NAME: dict[int, str] = {id(rx): name for name, rx in _CLASSES.items()}
_GATE = Gate(_CLASSES)
_NEVER = re.compile(r"(?!)")
#: Classes at least one of which every frame needs; a text with none of them has no finding.
_ANCHOR_CLASSES: tuple[str, ...] = (
    "_ATTEMPT_NOW", "_PASSIVE_DEATH", "_DEATH_SELF", "_DEATH", "_METHOD_ACT", "_MEANS", "_DRUG_QTY", "_ON_EDGE",
    "_PREP_ACT", "_HISTORY", "_SH_ACT", "_GENERIC_DEATH", "_HARM_EVENT", "_SUICIDE_WORD", "_LETHAL_THING",
)  # fmt: skip


#: Classes one of which any cue needs.
_CUE_ANCHORS: tuple[str, ...] = (
    "_MEANS", "_CUE_MEANS", "_CUE_HOARD", "_CUE_PLACE", "_PREP_ACT", "_CUE_FAREWELL", "_CUE_READY",
    "_CUE_ALONE", "_DEATH", "_DEATH_SELF", "_HOPELESS_CUE",
)  # fmt: skip


@lru_cache(maxsize=4096)
def gate(text: str) -> frozenset[str]:
    """The classes that may match ``text`` (a normalised text); cached: the frames, the windows' guards, the
    turn's cues and the model's features all ask for the same text."""
    return _GATE.classes(text)


@lru_cache(maxsize=4096)
def anchored(text: str) -> bool:
    """Whether ``text`` holds a match of an anchor class (gated, stops at the first; cached per text)."""
    on = gate(text)
    return any(name in on and _CLASSES[name].search(text) for name in _ANCHOR_CLASSES)


#: Anchor classes in the order an anchor confirmed by the model is reported, with the C-SSRS category each
#: names (the most specific first: an act or preparation before a bare death word).
_ANCHOR_CSSRS: tuple[tuple[str, str], ...] = (
    ("_ATTEMPT_NOW", "attempt"), ("_SH_ACT", "nssi"), ("_PREP_ACT", "preparatory"), ("_ON_EDGE", "attempt"),
    ("_METHOD_ACT", "method"), ("_DRUG_QTY", "method"), ("_DEATH_SELF", "active_ideation"),
    ("_PASSIVE_DEATH", "wish_dead"), ("_DEATH", "active_ideation"), ("_MEANS", "method"), ("_HISTORY", "history"),
    ("_SOFT_INTENT", "intent"), ("_SOFT_SH", "nssi"), ("_SOFT_DEATH", "wish_dead"),
    # since 2.17, read only where none of the above is (chosen on the training writers' writer-out second-look
    # probabilities: of the texts no rule makes critical or high and no anchor above covers, at 0.9 or more, these
    # cover 8 / 9 / 10 / 10 crises and no negative)
    ("_HARD_MEANS", "method"), ("_HARM_EVENT", "wish_dead"), ("_RISK_Q", "method"), ("_STAKE", "intent"),
    # since 2.27
    ("_SH_BARE", "nssi"), ("_INNER_VOICE", "active_ideation"),
)  # fmt: skip
#: Since 2.19, anchors only the second look may confirm, read after all of the above: a wish, readiness, means as the
#: conversation cues name them ("the stuff", "the cabinet"). Chosen as 2.17's were, on second look 1.16's writer-out
#: probabilities: of the texts no rule makes critical or high and no anchor above covers, at 0.69 or more, they
#: cover 86 crises for 2 negatives. Not for the inline model: on the real and everyday development turns its own
#: `possible` alerts on ordinary replies ("I hope you feel better about it.") would become `high` wishes.
#: Since 2.30, seven more, read on the development crises both models were sure of with no anchor (critical or high
#: 4,019 -> 4,142 of 4,576; 2 negatives already alerting became high). Most of those texts are the models' own
#: training data: on writers HF and HH, written after the anchors, the gain was 3 of 300; on sealed test37, 7 of 259.
#: Since 2.31, two more (intent and method with no death or means word): 4,142 -> 4,171, 1 negative alerting became
#: high; nothing moved on sealed test38. Since 2.32, a past attempt told without the history frame's words: 4,171 ->
#: 4,189, no negative. Since 2.34, seven more, read on the development crises still possible only (development texts
#: 4,734 -> 4,815 of 5,176 critical or high, 25 of them on writers QA-QD, RA-RD, HE-HH, which the models never saw;
#: no negative moved).
_ANCHOR_CSSRS_SECOND_LOOK: tuple[tuple[str, str], ...] = (
    ("_WISH", "wish_dead"), ("_CUE_READY", "intent"), ("_CUE_MEANS", "method"),
    ("_AFTER_ME", "preparatory"),  # since 2.27
    ("_ACT_DONE", "attempt"), ("_PLAN_SET", "plan"), ("_BODY_HARM", "nssi"), ("_GO_HOME", "wish_dead"),  # 2.30
    ("_PREP_SOFT", "preparatory"), ("_SELF_END", "active_ideation"), ("_LET_IT", "wish_dead"),  # 2.30
    ("_INTENT_SOFT", "intent"), ("_METHOD_SOFT", "method"),  # 2.31
    ("_HISTORY_SOFT", "history"),  # 2.32
    ("_CUT_SOFT", "nssi"), ("_SKIN_SOFT", "nssi"), ("_MEANS_SOFT", "method"), ("_EXIT_SOFT", "active_ideation"),  # 2.34
    ("_WAIT_SOFT", "wish_dead"), ("_FOUND_SOFT", "preparatory"), ("_STARVE_SOFT", "method"),  # 2.34
)  # fmt: skip
_ANCHOR_CSSRS_ALL = _ANCHOR_CSSRS + _ANCHOR_CSSRS_SECOND_LOOK


#: What a wish word is about when it is not the user's life (since 2.24, read right after a ``_WISH`` anchor): someone
#: else ("i hope you feel better", "glad they're out of the house"), company or an ear ("i wish i had someone who
#: listened"), not talking now ("i'd prefer not to go into it"). The second look reads the inline model's own possible
#: alerts since 2.24, and on the real and development turns these ordinary replies were the wishes it confirmed.
_WISH_ELSEWHERE = _rx(
    r"(?:that |if )?(?:you|u|ya|your|you're|youre|y'all|everyone|everybody|they're|theyre|he's|she's)|"
    r"(?:i (?:had|could find|could talk to|got)|to have|for) (?:someone|somebody|anyone|people|friends|a friend|"
    r"more friends)|not to (?:go into|get into|talk|discuss|say|share)"
)


def _wish_elsewhere(text: str, win: str, m: re.Match[str]) -> bool:
    """Whether the wish ``m`` (in ``win``, a window of ``text``) is about someone else, company or not talking now:
    the words after it say so, or those after an earlier wish word of its clause do ("i hope you feel better").
    Read on ``text``: a window may end right after the wish."""
    at = text.find(win)
    src, base = (text, at) if at >= 0 else (win, 0)
    pos = base + m.start()
    clause = max(src.rfind(c, 0, pos) for c in ",.;!?") + 1
    return any(_WISH_ELSEWHERE.match(src, w.end() + 1) for w in _WISH.finditer(src, clause, base + m.end()))


#: Means words of everyday medication talk: not an anchor the model may confirm alone (real user turns
#: about side effects and stopping a prescription reach the confirm threshold).
_ORDINARY_MEDS = re.compile(r"meds|medications?|prescription|antidepressants?|insulin")


def _gated(on: frozenset[str]) -> Callable[[re.Pattern[str]], re.Pattern[str]]:
    """The frames' ``g``: a class the gate ruled out for this text cannot match."""
    return lambda rx: rx if _NAME[id(rx)] in on else _NEVER


@lru_cache(maxsize=4096)
def anchor_finding(text: str, second_look: bool = False) -> Finding | None:
    """The anchor concept of a text the model rates as very likely a disclosure, when no frame fired.

    Frames need a combination inside one window (volition x death, plan x time...); wording nobody
    anticipated often carries the concept but not the combination. Here the model supplies the combination
    and the anchor the evidence: an anchor about the user (not negated, not an idiom or hyperbole) in a
    window the guards keep (no denial, media, screening answer). Severity ``high``, never ``critical``:
    intent, plan and means still need a frame. ``frame`` is ``anchor+model:<class>``. ``second_look``: the model
    is the second look, which may also confirm :data:`_ANCHOR_CSSRS_SECOND_LOOK`.
    """
    on = gate(text)
    classes = _ANCHOR_CSSRS_ALL if second_look else _ANCHOR_CSSRS
    if not any(name in on for name, _ in classes):
        return None
    wins = guarded_windows(text)
    for name, cssrs in classes:
        if name not in on:
            continue
        rx = _CLASSES[name]
        for win in wins:
            for m in rx.finditer(win):
                if _negated(win, m) or not _not_hyperbole(win, m) or not _mine(win, m, True, anchor=True):
                    continue
                if name == "_WISH" and _wish_elsewhere(text, win, m):
                    continue
                if name == "_DEATH_SELF" and _planned_funeral(text, m):
                    continue
                if name in ("_MEANS", "_DRUG_QTY", "_HARD_MEANS") and _ORDINARY_MEDS.fullmatch(
                    m.group().rsplit(" ", 1)[-1]
                ):
                    continue  # "stop taking my medication", "pros and cons of the medication": everyday talk
                a, b = max(0, m.start() - 30), min(len(win), m.end() + 30)
                ev = win[a:b].strip(" ,.;:!?\"'")
                return Finding(cssrs, "high", ev if len(ev) <= 90 else ev[:89] + "\u2026", f"anchor+model:{name}")
    return None


def concept_class_names() -> dict[str, str]:
    """Model feature name -> gate class name of each entry of :data:`CONCEPTS`."""
    return {feat: _NAME[id(rx)] for feat, rx in CONCEPTS.items()}
