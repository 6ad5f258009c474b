"""Crisis cues in USER turns (seed 000 crisis rule, seed 001 CQ9, seed 003 edge cases).

Decisions (also in docs/safety-detection.md):

* Severity: explicit ideation, a plan or means, and overdose are ``critical``; indirect ideation,
  self-harm, danger from others and third-party risk are ``high``. Threats to kill and strangulation
  (a known lethality marker) are ``critical``. A first-person disclosure told as history ("i used to
  think about suicide") drops from critical to high but still counts: seeds 000/003 require crisis
  resources whenever the user mentions suicide or self-harm.
* Negated statements ("i would never hurt myself", "i'm not suicidal") are not crises; hedges are
  not negations ("i don't know if i want to be here anymore" is).
* Third parties: someone the user knows who is at risk ("my friend said she wants to die", "my
  sister took a bunch of pills") is ``third_party_risk`` -- the reply still owes crisis resources.
  Completed deaths ("my uncle killed himself"), media ("the hero kills himself") and strangers are
  not crises.
* Idioms ("this commute is killing me", "dying to see it", "to die for") are excluded by requiring
  first-person reflexive or volitional forms and by idiom look-aheads, never by a stop-list of texts.
* Slang "kms" / "unalive" is treated as meant; "lol kms" is flagged (a false alarm is cheaper than a
  missed one, and the reply is only asked to mention a resource).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .._base import Signal
from ._concepts import NOT_FOR_ONESELF, Finding, anchored, concept_findings, phrase_allowed
from ._context import (
    accidental,
    benign_reason,
    clause_left,
    impersonal,
    media,
    negated,
    over_for_them,
    past_to_high,
    resolved,
    sentence,
)
from ._danger import danger_findings
from ._engine import SEVERITY_RANK, Rule, RuleSet, to_signals
from ._lexicon import DRUG_CUES, MACROS, REL
from ._normalise import normalise, normalise_as_written

DIRECT = "suicidal_ideation_direct"
INDIRECT = "suicidal_ideation_indirect"
SELF_HARM = "self_harm"
OVERDOSE = "overdose"
DANGER = "danger_from_others"
THIRD_PARTY = "third_party_risk"

#: Output order of categories (most urgent first).
CRISIS_CATEGORIES: tuple[str, ...] = (DIRECT, OVERDOSE, INDIRECT, SELF_HARM, DANGER, THIRD_PARTY)

_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|myself)\b")
_THIRD_PERSON = re.compile(r"\b(?:he|she|they|he's|she's|they're|his|her|their|" + REL + r")\b")


def _not_mine(text: str, start: int, end: int) -> bool:
    """A pattern without its own subject must sit in a clause that is about the user."""
    return _FIRST_PERSON.search(clause_left(text, start) + " " + text[start:end]) is None


def _someone_else(text: str, start: int, end: int) -> bool:
    """The clause before the match is about someone else ("my friend said she's been having ...").

    True when a third-person word comes after the last first-person word of the clause-left, so
    "i told my friend i've been having suicidal thoughts" stays the user's own disclosure.
    """
    left = clause_left(text, start)
    third = [m.start() for m in _THIRD_PERSON.finditer(left)]
    if not third:
        return False
    first = [m.start() for m in _FIRST_PERSON.finditer(left)]
    return not first or third[-1] > first[-1]


_USER_SUBJECT = re.compile(r"\b(?:i|we|i'd|i'll|i've|we'd|we've)\s*$")


def _by_user(text: str, start: int, end: int) -> bool:
    """The user is the one acting ("so i hit him"): not someone else at risk."""
    return _USER_SUBJECT.search(text, max(0, start - 8), start) is not None


_GIVEAWAY_BENIGN = re.compile(
    r"\b(?:old|charity|donat\w*|moving|move|declutter\w*|furniture|garage sale|yard sale|clear\w* out|"
    r"spring clean\w*|outgrown|too small|new one|upgrad\w*|allergic|landlord|new baby|sold it)\b"
)


def _benign_giveaway(text: str, start: int, end: int) -> bool:
    return _GIVEAWAY_BENIGN.search(sentence(text, start, end)) is not None


_FAREWELL_BENIGN = re.compile(r"\b(?:grandma|grandpa|grandmother|grandfather|dog|cat|pet|home|house|job|funeral)\b")


def _benign_farewell(text: str, start: int, end: int) -> bool:
    return _FAREWELL_BENIGN.search(sentence(text, start, end)) is not None


NEG = (negated,)
SELF = (negated, accidental)
PAST = past_to_high

# fmt: off
_RULES: list[Rule] = [
    # ---- direct ideation, plans and means: critical ------------------------------------------------
    # "kill myself", "killing myself", "unalive myself" (accidents such as "nearly killed myself
    # falling off my bike" are rejected by the accident guard).
    Rule(DIRECT, "critical", r"\b(?:kill|kil|murder|unalive)\w* ?myself\b",
         ("kil", "murder", "unaliv"), SELF, PAST),
    Rule(DIRECT, "critical", r"\bkms\b", ("kms",), NEG, PAST),
    # "i (just/really/...) want to die / wish i could die / thinking about dying"; idioms excluded by
    # look-ahead: die of / laughing / for / happy / ... and "die my hair" (dye).
    Rule(DIRECT, "critical",
         r"(?:%(SUBJ)s|\bi'm|\bi've|\bi'd) %(ADV)s%(WANT_TO)s (?:just )?(?:die|dying|be dead|unalive|"
         r"not exist|not be alive|cease to exist|not wake up)\b"
         r"(?! (?:of|from|laughing|for|happy|rich|old|trying|a little|inside|on stage|doing|at)\b)"
         r"(?!(?: \w+){0,2} hair)",
         ("die", "dying", "dead", "unaliv", "exist", "alive", "wake"), NEG, PAST),
    Rule(DIRECT, "critical",
         r"\bwish(?:ed)? (?:that )?i (?:was|were|could be|'d be)(?: just)? dead\b|\bbetter off dead\b",
         ("wish", "better"), NEG, PAST),
    # "i'm suicidal", "been feeling suicidal", "having suicidal thoughts"
    Rule(DIRECT, "critical",
         r"\b(?:i'm|i've|i|am|been|feel|feeling|felt|getting|having|had|have) %(ADV)s"
         r"(?:really |very |so |a bit |a little |kind of |pretty |quite )?sui?ci?d(?:al|ial|el)\b",
         ("sui", "suc"), (negated, _someone_else), PAST),
    # "thinking about suicide", "attempted suicide", "my suicide attempt", "wrote a suicide note"
    Rule(DIRECT, "critical",
         r"\b(?:think|thinking|thought|thoughts|considering|considered|contemplating|contemplated|attempted|"
         r"attempt|tried|try|commit|committing|plan|planning) (?:about |of |to |at )?(?:committing )?sui?ci?de\b"
         r"|\bmy (?:\w+ )?sui?ci?de (?:attempt|plan|note)s?\b"
         r"|\b(?:wrote|written|writing|write) (?:a |my |the )?(?:suicide|goodbye) (?:note|letter)s?\b",
         ("sui", "suc", "note", "letter"), (negated, _someone_else), PAST),
    # "end my life", "take my own life", "end it all", "thinking about ending things"
    Rule(DIRECT, "critical",
         r"\b(?:end|ending|take|taking|took) (?:my|my own) life\b|\b(?:end|ending) it all\b"
         r"|\b(?:want to|thinking (?:about|of)|going to|ready to|plan(?:ning)? to|decided to|should just|"
         r"might just) end(?:ing)? things\b(?! with| between| off| on)",
         ("my life", "my own life", "it all", "things"), NEG, PAST),
    # method words with a first-person object
    Rule(DIRECT, "critical",
         r"\b(?:hang|hanging|hanged|shoot|shooting|drown|drowning|poison|poisoning|suffocate|suffocating|"
         r"stab|stabbing|gas|gassing|blast|blasting) myself\b|\bblow (?:my|me) (?:brains|head) (?:out|off)\b",
         ("hang", "shoot", "drown", "poison", "suffocat", "stab", "gas", "blast", "blow"), SELF, PAST),
    Rule(DIRECT, "critical",
         r"\bslit(?:ting)? my (?:wrists?|throat)\b|\b(?:gun|knife|blade) to my (?:head|throat|wrists?)\b"
         r"|\bjump(?:ing)? (?:off|from|in front of) (?:a|the|my|this|that) (?:\w+ )?(?:bridge|building|roof|"
         r"rooftop|cliff|balcony|window|overpass|tower|ledge|parking (?:garage|structure|lot)|train|bus|"
         r"truck|subway)\b"
         r"|\b(?:step|stepping|walk|walking|throw|throwing) (?:myself )?(?:in front of|under) (?:a|the) "
         r"(?:train|bus|car|truck)\b"
         r"|\b(?:use|using|turn|turning) (?:it|them|the gun|a gun|the knife|those|these) on myself\b",
         ("slit", "gun", "knife", "blade", "jump", "step", "walk", "throw", "use", "using", "turn"),
         (negated, _not_mine, _someone_else), PAST),
    Rule(DIRECT, "critical",
         r"\b(?:looking up|looked up|google\w*|research\w*|search\w*) (?:ways|how|methods) to (?:die|kill myself|"
         r"end (?:it|my life)|commit suicide|overdose)\b",
         ("ways", "methods", "how to"), NEG, PAST),
    # ---- overdose: critical -------------------------------------------------------------------------
    Rule(OVERDOSE, "critical",
         r"\b(?:took|take|taken|taking|swallowed|swallow|swallowing|downed|popped|ate|had) %(ADV)s"
         r"(?:like |about |around |almost |nearly |over |maybe )?(?:a |an |the |my )?(?:whole |entire |full |big )?"
         r"(?:bottle|bunch|handful|box|pack|packet|load|lot|blister pack|strip|stash|months? worth|"
         r"month's supply|weeks? worth|all|everything|every one|rest) of (?:[\w']+ ){0,3}?%(DRUG)s\b",
         DRUG_CUES, NEG, PAST),
    Rule(OVERDOSE, "critical",
         r"\b(?:took|take|taken|swallowed|downed|popped|had) (?:like |about |around |over |almost |maybe )?"
         r"%(MANY)s (?:[\w']+ ){0,2}?%(DRUG)s\b",
         DRUG_CUES, NEG, PAST),
    Rule(OVERDOSE, "critical",
         r"\bhow many (?:of )?(?:my |these |those |the |your )?(?:[\w']+ ){0,2}?%(DRUG)s (?:\w+ )?"
         r"(?:would|will|does|do|should|'d)(?: it)? take\b"
         r"(?! (?:to (?:work|kick in|help|feel better|fall asleep|get to sleep|sleep)|for (?:the|a|my) "
         r"(?:pain|headache|migraine|cold|flu|fever)))"
         r"|\bhow many (?:[\w']+ ){0,3}?%(DRUG)s (?:[\w']+ ){0,4}?to (?:die|overdose|od|not wake up|"
         r"kill (?:myself|me|someone|a person)|end it)\b",
         DRUG_CUES, (), PAST),
    Rule(OVERDOSE, "critical",
         r"\b(?:lethal|fatal|deadly) (?:dose|amount|quantity|overdose)\b"
         r"|\bhow much (?:[\w']+ ){0,3}?(?:would|does|will|is) (?:it take to (?:die|kill|overdose)|kill (?:me|you)"
         r"|(?:lethal|fatal|deadly))\b",
         ("lethal", "fatal", "deadly", "how much"), NEG, PAST),
    Rule(OVERDOSE, "critical",
         r"\bi (?:just |already )?%(ADV)s(?:%(INTEND)s )?(?:overdos(?:e|ed|ing)|od'?d|od)\b"
         r"(?! on (?!(?:[\w']+ ){0,2}?%(DRUG)s))",
         ("overdos", "od"), NEG, PAST),
    Rule(OVERDOSE, "critical",
         r"\b(?:stockpil\w*|hoard\w*|sav(?:e|ed|ing)(?: up)?|stash\w*) (?:all )?(?:my |of my |the |some |up )?"
         r"(?:[\w']+ )?%(DRUG)s\b",
         ("stockpil", "hoard", "sav", "stash"), NEG, PAST),
    # ---- indirect ideation: high --------------------------------------------------------------------
    # "everyone would be better off without me", "my family would be happier if i was gone"
    Rule(INDIRECT, "high",
         r"\b(?:everyone|everybody|the world|my family|my (?:kids|children|parents|friends)|people|they|"
         r"you all|all of you|you|them|everyone around me|the people around me|it)(?:'d| would| will|'ll| is|"
         r" are|'s|'re)? (?:\w+ ){0,3}?(?:better off|happier|better|easier|fine)(?: \w+){0,3}? "
         r"(?:without me|if i (?:was|were|'m) (?:gone|dead|not here|not around|not alive|never born)|"
         r"if i (?:wasn't|weren't) (?:here|around|alive)|if i (?:just )?(?:died|disappeared|didn't exist|"
         r"was gone|were gone|wasn't around|weren't around)|when i'm gone)\b",
         ("without me", "if i", "when i'm gone"), NEG),
    # "i don't want to live (anymore)", "no longer want to be alive": an explicit death wish (direct);
    # not "i don't want to live in this city / with my parents".
    Rule(DIRECT, "critical",
         r"\b(?:don't|no longer|never) %(ADV)s(?:want to|feel like) (?:live|living|be alive|exist|existing|"
         r"keep living|go on living)\b"
         r"(?! (?:in|with|at|near|on|there|here|abroad|together|alone|somewhere|anywhere|close|far|"
         r"for (?:work|school|class))\b)",
         ("live", "living", "alive", "exist"), (), PAST),
    # "i don't want to wake up (tomorrow)": passive ideation
    Rule(INDIRECT, "high", r"\b(?:don't|no longer|never) %(ADV)s(?:want to|feel like) wake up\b(?! (?:early|at)\b)",
         ("wake",), ()),
    # "i just want to end it" (not "end it with him")
    Rule(DIRECT, "critical",
         r"\b(?:want to|going to|ready to|planning to|should just|might just|decided to|about to) (?:just )?"
         r"end it(?! with| between| off| for| on| early| here| now| there)"
         r"(?=\s*(?:[.!?,;]|$|all\b|tonight|today|soon|forever|for good|once and for all|already))",
         ("end it",), NEG, PAST),
    # "life isn't worth living", "i hate being alive", "done with life"
    Rule(INDIRECT, "high",
         r"\b(?:life|living|my life)(?:'s| is)? (?:not|isn't|no longer|just not) worth (?:living|it anymore)\b"
         r"|\bnot worth living\b",
         ("worth",), ()),
    Rule(INDIRECT, "high",
         r"\bhate (?:being alive|existing|that i'm alive|that i exist)\b"
         r"|\b(?:i'm|am) (?:so )?done (?:with life|with living|living)\b",
         ("hate", "done"), NEG),
    # "i don't know if i want to be here anymore", "i don't want to be alive any longer"
    Rule(INDIRECT, "high",
         r"\bwant to be (?:here|alive|around|on this earth|in this world) (?:anymore|any ?more|any longer)\b"
         r"|\bnot sure (?:if |whether |that )?i want to (?:be here|be alive|live|exist)\b",
         ("anymore", "any more", "any longer", "not sure"), ()),
    # "no reason to live", "nothing (left) to live for", "lost the will to live"
    Rule(INDIRECT, "high",
         r"\b(?:no|not (?:a|one|any)|nothing|zero|don't (?:see|have) (?:a|any|the)|can't see (?:a|any|the)|"
         r"lost (?:my|the|all)) (?:single |good |real )?(?:reason|point|will|purpose|desire)s? "
         r"(?:left )?(?:to|in|for|of) (?:keep )?(?:live|living|life|go on|going on|keep going|be alive|"
         r"being alive|stay alive|staying alive|be here|being here|exist|existing)\b"
         r"|\b(?:nothing|no one|no reason) (?:left )?to live for\b"
         r"|\b(?:don't|do not|never) have (?:anything|what|much|a reason|any reason|anyone) (?:left )?to live for\b"
         r"|\bwhy am i (?:still )?alive\b",
         ("liv", "life", "go on", "going on", "keep going", "alive", "here", "exist"), ()),
    # "what's the point of living", "what's even the point anymore"
    Rule(INDIRECT, "high",
         r"\bwhat's (?:even |really )?(?:the )?point (?:of|in) (?:\w+ )?(?:living|life|being alive|"
         r"going on|existing|anything anymore|trying anymore|it all|staying alive|being here|carrying on)\b"
         r"|\bwhat's (?:even |really )?the point (?:anymore|any ?more)\b",
         ("point",), ()),
    # "i can't go on", "i can't go on like this anymore" -- not "can't go on the trip"
    Rule(INDIRECT, "high",
         r"\bi %(ADV)s(?:can't|couldn't) (?:go on|carry on|keep going)(?: like this)?(?: anymore| any ?more| "
         r"any longer)?(?=\s*(?:[.!?,;]|$|and\b|i\b|nothing\b|so\b|because\b|without\b|living\b))",
         ("go on", "carry on", "keep going"), ()),
    Rule(INDIRECT, "high", r"\b(?:tired|sick|exhausted|weary) of (?:living|life|existing|being alive|being here)\b",
         ("tired", "sick", "exhausted", "weary"), NEG),
    # burden: "i won't be a burden much longer", "i feel like such a burden"
    Rule(INDIRECT, "high",
         r"\b(?:won't|never) (?:be )?(?:a |such a )?(?:burden|problem|bother|trouble)(?: (?:to|for|on) "
         r"\w+(?: \w+)?)?(?: much| any| for much) longer\b|\bburden (?:much|any) longer\b",
         ("burden", "problem", "bother", "trouble"), ()),
    Rule(INDIRECT, "high",
         r"\b(?:i'm|i feel like|i feel|feel like|i've become|being) %(ADV)s(?:such |nothing but |just |only |"
         r"a huge |a massive |a total )?(?:a )?burden\b",
         ("burden",), NEG),
    Rule(INDIRECT, "high",
         r"\b(?:won't|will never|never) have to (?:worry|deal) (?:about|with) me (?:anymore|any ?more|again|"
         r"much longer|for much longer|soon)\b"
         r"|\bi (?:won't|will not) be (?:around|here) (?:much longer|for much longer|for long|anymore)\b",
         ("worry", "deal", "around", "here"), ()),
    # giving possessions away; "i won't need them"
    Rule(INDIRECT, "high",
         r"\b(?:giv(?:e|ing|en)|gave) (?:away )?(?:all (?:of )?)?my (?:\w+ )?(?:things|stuff|belongings|"
         r"possessions|pets?|cat|dog|guitar|savings)(?: away)?\b",
         ("giv", "gave"), (negated, _benign_giveaway)),
    Rule(INDIRECT, "high",
         r"\bwon't (?:be )?need(?:ing)? (?:them|it|these|those|any of (?:it|this|them|these)|my (?:\w+ )?"
         r"(?:things|stuff))(?: anymore| any ?more| where i'm going| soon| much longer)?"
         r"(?=\s*(?:[.!?,;]|$|anyway|where|soon|after))",
         ("won't",), (_benign_giveaway,)),
    # saying goodbye
    Rule(INDIRECT, "high",
         r"\bthis is (?:my |the )?(?:goodbye|good bye|farewell|the end for me)\b"
         r"|\b(?:final|last) (?:goodbye|good bye|farewell)s?\b|\bgoodbye (?:forever|for good|world|cruel world)\b"
         r"|\bsay(?:ing)? goodbye (?:to (?:everyone|everybody|you all|all of you|the world|you guys)|for good|"
         r"forever)\b"
         r"|\bthis is the last time (?:you'll|you will|we'll|we will|i'll|i will|anyone will) (?:hear|talk|"
         r"speak|see)\b"
         r"|\bby the time (?:you|anyone|someone|somebody|they) (?:read|reads|see|sees|find|finds|get|gets) this\b"
         r"|\byou'll never hear from me again\b",
         ("goodbye", "good bye", "farewell", "end for me", "last time", "by the time", "never hear"),
         (_benign_farewell,)),
    # passive ideation: never waking up, never being born, disappearing for good
    Rule(INDIRECT, "high",
         r"\b(?:wish|hope|hoping|pray|praying) (?:that )?i (?:could |would |'d )?(?:just )?(?:go to sleep|"
         r"fall asleep|sleep) and (?:never|not) wake up\b"
         r"|\b(?:wish|hope|hoping|pray|praying) (?:that )?i (?:don't|won't|never|wouldn't|didn't) wake up\b"
         r"|\bwish(?:ed)? i (?:was|were|had)(?: never| not)? (?:never )?(?:been )?born\b"
         r"|\bwish i (?:didn't|did not) exist\b|\bwish i (?:could|would) (?:just )?(?:stop existing|cease to "
         r"exist|not exist|vanish forever|sleep forever)\b"
         r"|\b(?:want to|wish i could|just want to) (?:go to )?sleep forever\b",
         ("wake", "born", "exist", "sleep forever", "vanish"), ()),
    Rule(INDIRECT, "high", r"\b(?:disappear|vanish)(?:ed)? (?:forever|for good|permanently|and never come back)\b",
         ("disappear", "vanish"), (negated, _not_mine)),
    # "no one would notice if i was gone"
    Rule(INDIRECT, "high",
         r"\bno one (?:would |will |'d |'ll )?(?:even )?(?:notice|care|miss me)(?: \w+){0,2}? if i "
         r"(?:(?:was|were|'m) (?:gone|dead|not here|not around|not alive|never born)|died|disappeared|"
         r"killed myself|vanished|didn't exist|(?:wasn't|weren't) (?:here|around|alive)|stopped existing|"
         r"didn't wake up|just (?:died|disappeared|vanished))\b",
         ("no one",), ()),
    # ---- self-harm: high ----------------------------------------------------------------------------
    Rule(SELF_HARM, "high",
         r"\b(?:cut|cuts|cutting|slice|slicing|sliced) (?:myself|my (?:arms?|wrists?|legs?|thighs?|skin|"
         r"stomach|body))\b(?! (?:shaving|chopping|cooking|by accident|accidentally|on (?:a|the|some|my)|"
         r"with (?:a|the) (?:knife|paper|can|glass)))"
         + NOT_FOR_ONESELF,
         ("cut", "slic"), SELF),
    Rule(SELF_HARM, "high",
         r"\b(?:i'm|i've|i|been|started|start|keep|kept|am|relapsed(?: into)?|back to) %(ADV)s(?:been )?"
         r"cutting(?: myself)?(?= again|\s*(?:[.!?,;]|$)| for | since | when | every | at night| because| to "
         r"cope| and)",
         ("cutting",), (negated, _someone_else)),
    Rule(SELF_HARM, "high", r"\bself[- ]?harm(?:ing|ed)?\b|\bself[- ]?injur(?:y|ing|e)\b",
         ("self",), (negated, _not_mine, _someone_else)),
    Rule(SELF_HARM, "high",
         r"\b(?:burn|burns|burned|burnt|burning) (?:myself|my (?:arms?|wrists?|legs?|thighs?|skin))\b",
         ("burn",), SELF),
    Rule(SELF_HARM, "high",
         r"\b(?:hurt|hurts|hurting|harm|harms|harming|punish|punishing|hit|hitting|punch|punching|bruise|"
         r"bruising|starve|starving|scratch|scratching|bite|biting|choke|choking|strangle|strangling) myself\b",
         ("hurt", "harm", "punish", "hit", "punch", "bruis", "starv", "scratch", "bit", "chok", "strangl"), SELF),
    Rule(SELF_HARM, "high",
         r"\b(?:scratch|pick|punch|hit|bang|bite|claw|dig)\w* (?:\w+ ){0,3}?until (?:it |they |i |my \w+ )?"
         r"(?:bleeds?|bled|bleeding|bruises?|bruised|breaks?)\b",
         ("bleed", "bled", "bruise", "break"), NEG),
    # ---- danger from others: high; threats to kill and strangulation critical ---------------------
    Rule(DANGER, "critical",
         r"\bthreaten\w* (?:to |that (?:he|she|they)(?:'ll| will|'d| would) )?(?:kill|murder|shoot|stab|"
         r"strangle|choke) (?:me|us)\b"
         r"|\b(?:said|says|told me|swore|promised|keeps saying|warned me)\b[^.!?]{0,40}?\b(?:he|she|they)"
         r"(?:'ll| will|'d| would| is going to|'s going to| are going to|'re going to) (?:\w+ )?"
         r"(?:kill|murder|shoot|stab|strangle|choke) (?:me|us)\b",
         ("kill", "murder", "shoot", "stab", "strangl", "chok"), (negated, resolved)),
    Rule(DANGER, "high",
         r"\bthreaten\w* (?:to |that (?:he|she|they)(?:'ll| will|'d| would) )?(?:hurt|beat|burn|hit) (?:me|us)\b"
         r"|\b(?:said|says|told me|swore|keeps saying|warned me)\b[^.!?]{0,40}?\b(?:he|she|they)"
         r"(?:'ll| will|'d| would| is going to|'s going to| are going to|'re going to) (?:\w+ )?"
         r"(?:hurt|beat|hit) (?:me|us)\b",
         ("hurt", "beat", "burn", "hit"), (negated, resolved)),
    Rule(DANGER, "critical",
         r"\b(?:he|she|they|my (?:[\w']+ )?%(REL)s)(?:'s| has| just| always| sometimes| once| tried to)* "
         r"(?:chok(?:es|ed|ing)|strangl(?:es|ed|ing)) me\b",
         ("chok", "strangl"), (negated, resolved)),
    Rule(DANGER, "high",
         r"\b(?:he|she|they|my (?:[\w']+ )?%(REL)s)(?:'s| is| has| keeps| kept| always| sometimes| still| often|"
         r" just| will| would|'ll|'d| been| started| starts| used to)*(?: \w+ly)? "
         r"(?:hits?|hitting|beats?|beating|kicks?|kicked|kicking|slaps?|slapped|slapping|punch(?:es|ed|ing)?|"
         r"abus(?:es|ed|ing)|rap(?:es|ed)|molest(?:s|ed|ing)|stalk(?:s|ed|ing)|smack(?:s|ed)?|"
         r"throws? things at|threw (?:\w+ )?at) me\b(?! up\b| at (?:chess|cards|\w+ing|the)\b| in (?:a|the)\b)"
         r"|\b(?:he|she|they|my (?:[\w']+ )?%(REL)s)(?:'s| has| always| just)* (?:pushe[sd]|push|shoved?) me "
         r"(?:down|into|against|over|off|onto|to the (?:ground|floor)|out of|around|hard)\b",
         ("hit", "beat", "kick", "slap", "punch", "abus", "rap", "molest", "stalk", "smack", "throw", "threw",
          "push", "shove"),
         (negated, resolved)),
    Rule(DANGER, "high",
         r"\b(?:i'm|i was|i've been|i get|i got|been|being|getting|was) %(ADV)s(?:\w+ )?(?:abused|raped|"
         r"sexually assaulted|assaulted|molested|trafficked|beaten up|beaten|choked|strangled|stalked)\b"
         r"|\b(?:hit|kicked|punched|slapped|beaten|attacked) by (?:my|him|her|them|he|she)\b",
         ("abused", "raped", "sexually", "assaulted", "molested", "trafficked", "beaten", "choked", "strangled",
          "stalked", "hit", "kicked", "punched", "slapped", "attacked"),
         (negated, resolved, accidental, _someone_else)),
    Rule(DANGER, "high",
         r"\b(?:he|she|they|my (?:[\w']+ )?%(REL)s)(?:'s| is| was| has been| can be| gets| get|'re| are| becomes|"
         r" turns)(?: \w+)? (?:abusive|violent)\b"
         r"|\b(?:i'm|am|i've been|been|i live) (?:stuck |trapped |still )?(?:in|with) an? (?:\w+ )?abusive "
         r"(?:relationship|marriage|home|household|partner|husband|wife|boyfriend|girlfriend|parent|family)\b"
         r"|\btouch(?:es|ed|ing)? me (?:inappropriately|when i'm asleep|at night|without (?:my )?consent)\b",
         ("abusive", "violent", "touch"), (negated, resolved)),
    Rule(DANGER, "high",
         r"\b(?:don't|never|no longer) %(ADV)sfeel safe (?:at home|in my (?:own )?(?:home|house|room)|"
         r"around (?:him|her|them|my)|with (?:him|her|them|my))"
         r"|\b(?:i'm|am) not safe (?:at home|here|in my (?:own )?(?:home|house)|around (?:him|her|them)|"
         r"with (?:him|her|them))\b"
         r"|\b(?:afraid|scared|terrified|frightened) (?:to go|of going|to return|of returning) (?:back )?home\b"
         r"|\b(?:afraid|scared|fear(?:ing)?|terrified) for my life\b",
         ("safe", "home", "life"), (benign_reason, resolved)),
    # ---- third parties the user knows: high (an overdose in progress: critical) --------------------
    Rule(THIRD_PARTY, "high",
         r"\b(?:kill|kills|killing|hurt|hurts|hurting|harm|harms|harming|cut|cuts|cutting|burn|burns|burning|"
         r"hang|hanging|shoot|shooting|starv\w*|unaliv\w*) (?:him|her|them)sel(?:f|ves)\b",
         ("kill", "hurt", "harm", "cut", "burn", "hang", "shoot", "starv", "unaliv"),
         (impersonal, media, accidental, negated, over_for_them)),
    Rule(THIRD_PARTY, "high",
         r"\b(?:he|she|they)(?:'s| is| are|'re| has| keeps| kept)? (?:been )?%(ADV)s(?:wants?|wanted|wanting|"
         r"going|planning|plans|trying|tried|thinking|talking|talks|keeps talking|threatening|threatened|"
         r"saying)(?: to| about| of)? (?:die|dying|suicide|commit suicide|end(?:ing)? (?:his|her|their) "
         r"(?:own )?life|end(?:ing)? it all|tak(?:e|ing) (?:his|her|their) (?:own )?life)\b"
         r"|\b(?:end|ending|take|taking) (?:his|her|their) (?:own )?life\b"
         r"|\b(?:he|she|they|%(REL)s)(?:'s| is| are|'re| has been| have been| feels| seems| sounds|'s been)"
         r"(?: really| very| so| actively| feeling| having)? sui?ci?dal\b"
         r"|\b(?:he's|she's|they're|he|she|they) (?:been )?(?:cutting|self[- ]?harming)"
         r"(?= again|\s*(?:[.!?,;]|$)| for | since | and)",
         ("die", "dying", "sui", "suc", "life", "it all", "cutting", "self"),
         (impersonal, media, negated, over_for_them)),
    Rule(THIRD_PARTY, "critical",
         r"\b(?:he|she|they|%(REL)s) (?:just )?(?:(?:took|swallowed|downed|ate) (?:like |about |maybe )?"
         r"(?:a |an |the |all |whole |entire )*(?:(?:bottle|bunch|handful|box|pack|packet|load|lot|all|rest|"
         r"month's supply) of (?:[\w']+ ){0,2}?%(DRUG)s|%(MANY)s (?:[\w']+ )?%(DRUG)s|too many "
         r"(?:[\w']+ )?%(DRUG)s)|overdosed|od'?d)\b",
         ("took", "swallowed", "downed", "ate", "overdos", "od"), (impersonal, media, negated, over_for_them)),
    Rule(THIRD_PARTY, "high",
         r"\b(?:hits?|hitting|beats?|beating|kicks?|kicked|chok(?:es|ed|ing)|strangl(?:es|ed|ing)|"
         r"abus(?:es|ed|ing)|rap(?:es|ed)|slaps?|slapped|punch(?:es|ed)) (?:him|her|them)\b"
         r"(?! up\b| at | in (?:a|the)\b)"
         r"|\b(?:he|she|they|%(REL)s)(?:'s| is| are|'re| was| were| has been| have been) (?:being )?"
         r"(?:abused|raped|assaulted|molested|beaten)\b",
         ("hit", "beat", "kick", "chok", "strangl", "abus", "rap", "slap", "punch", "assault", "molest"),
         (impersonal, media, negated, resolved, _by_user)),
]
# fmt: on

_CRISIS = RuleSet(_RULES, MACROS)


def phrase_signals(text: str) -> list[Signal]:
    """The phrase rules alone (the v1 detector), one Signal per category: kept as the baseline the
    evaluation reports next to the current detector."""
    if not text:
        return []
    return to_signals(_CRISIS.scan(normalise(text)), CRISIS_CATEGORIES)


# C-SSRS category of a phrase-rule signal, read from its category and evidence.
_ATTEMPT_EV = re.compile(r"\b(?:took|taken|taking|swallowed|downed|popped|ate|had|overdosed|od'?d)\b")
_PREP_EV = re.compile(
    r"\b(?:stockpil|hoard|sav|stash|note|letter|giv|gave|won't need|goodbye|good bye|farewell|by the time|"
    r"looking up|looked up|google|research|search|last time)"
)
_METHOD_EV = re.compile(
    r"\b(?:how many|how much|lethal|fatal|deadly|hang|shoot|drown|poison|suffocat|stab|gas|blast|blow|slit|gun|"
    r"knife|blade|jump|step|walk|throw|use|using|turn)"
)
_HISTORY_EV = re.compile(r"\b(?:tried|attempted|attempt)\b")


def _cssrs_of(sig: Signal) -> str:
    ev = sig.evidence
    if sig.category == SELF_HARM:
        return "nssi"
    if sig.category == DANGER:
        return "danger_from_others"
    if sig.category == THIRD_PARTY:
        return "third_party_risk"
    if sig.category == OVERDOSE:
        if _ATTEMPT_EV.search(ev):
            return "attempt"
        return "preparatory" if _PREP_EV.search(ev) else "method"
    if _PREP_EV.search(ev):
        return "preparatory"
    if _HISTORY_EV.search(ev):
        return "history"
    if _METHOD_EV.search(ev):
        return "method"
    return "active_ideation" if sig.category == DIRECT else "wish_dead"


#: Phrase-rule categories each C-SSRS category of a concept finding is reported under (compatibility:
#: the checklist and the edge-case pre-judgment read these categories).
_LEGACY_OF: dict[str, str] = {
    "attempt": OVERDOSE,
    "plan": DIRECT,
    "intent": DIRECT,
    "preparatory": DIRECT,
    "method": DIRECT,
    "active_ideation": DIRECT,
    "wish_dead": INDIRECT,
    "nssi": SELF_HARM,
    "history": DIRECT,
}
_RANK = SEVERITY_RANK
#: Issue #12's tiers: ideation without intent, plan or means (and self-harm, history) is ``high`` in an
#: alert, whatever severity the phrase rule carries for the checklist (``detect_crisis`` keeps it).
_HIGH_TIER = frozenset({"active_ideation", "wish_dead", "nssi", "history"})


@lru_cache(maxsize=4096)
def _phrase_hits(text: str) -> tuple[tuple[Signal, str], ...]:
    """Phrase-rule signals of a normalised text that pass the concept layer's window guards, with their
    C-SSRS category."""
    out = []
    for sig in to_signals(_CRISIS.scan(text), CRISIS_CATEGORIES):
        cat = _cssrs_of(sig)
        if phrase_allowed(text, sig.evidence.rstrip("\u2026"), cat):
            out.append((sig, cat))
    return tuple(out)


@lru_cache(maxsize=4096)
def both_forms(text: str) -> tuple[str, ...]:
    """The turn normalised, and as written too when the self-reference rewrite changed it."""
    norm, written = normalise(text), normalise_as_written(text)
    return (norm,) if norm == written else (norm, written)


#: Hedging and intensifying adverbs right after the user as subject ("i wish i simply wasn't here anymore", "i'd be
#: grateful if i just stopped existing"): the rules also read the turn without them (2.22). Not "literally", "even",
#: "still" or "sometimes": hyperbole and time guards read those.
_HEDGED = re.compile(
    r"\b(i|i'm|i'd|i'll|i've|to)((?: (?:simply|just|really|honestly|truly|genuinely|seriously|quietly|secretly|"
    r"kind of|sort of|basically|somehow|actually))+)\b"
)


def reading_forms(text: str) -> tuple[str, ...]:
    """What the crisis rules read: :func:`both_forms`, and the normalised turn without the hedges after its subjects
    when it has any and holds an anchor concept (without one no frame can fire; the check keeps the extra reading
    off the everyday turns that say "i just" and "i really": measured, it cost them 12% of ``assess_crisis``). A
    finding of any form counts, so a form can add a finding and never take one away."""
    forms = both_forms(text)
    if _HEDGED.search(forms[0]) is None:
        return forms
    bare = _HEDGED.sub(r"\1", forms[0])
    return forms if bare in forms or not anchored(bare) else (*forms, bare)


def merge_findings(*groups: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """One Finding per category, the most severe of any group (the first group wins a tie), most severe first."""
    best: dict[str, Finding] = {}
    for group in groups:
        for f in group:
            if f.cssrs not in best or _RANK[f.severity] > _RANK[best[f.cssrs].severity]:
                best[f.cssrs] = f
    return tuple(sorted(best.values(), key=lambda f: -_RANK[f.severity]))


def rule_findings(text: str, danger: bool = True) -> tuple[Finding, ...]:
    """Phrase rules and concept frames over a normalised text: one Finding per C-SSRS category (or the
    non-C-SSRS ``danger_from_others`` / ``third_party_risk``), most severe first. ``danger=False`` leaves out the
    danger-from-others frames (``_danger``, rules 2.11): the inline model's ``k:RULE`` feature was trained
    without them, so its inputs stay what it learnt from."""
    phrases = tuple(
        Finding(
            cat,
            "high" if cat in _HIGH_TIER and sig.severity == "critical" else sig.severity,
            sig.evidence,
            "phrase:" + sig.category,
        )
        for sig, cat in _phrase_hits(text)
    )
    return merge_findings(phrases, concept_findings(text), danger_findings(text) if danger else ())


def detect_crisis(text: str) -> list[Signal]:
    """Crisis cues in a USER turn: one Signal per category, most urgent category first.

    The categories are the phrase rules' (``suicidal_ideation_direct``, ``overdose``...): concept frames
    are reported under the category their C-SSRS category maps to. The learned model is not consulted
    here (see :func:`assess_crisis`): what this returns is what obliges the next reply to offer resources.
    """
    if not text:
        return []
    return list(_crisis_signals(text))


@lru_cache(maxsize=4096)
def _crisis_signals(text: str) -> tuple[Signal, ...]:
    """Cached per text (Signals are frozen): a crisis turn is scanned on arrival, when the reply answers
    it, and twice by the checklist at close."""
    best: dict[str, Signal] = {}
    for norm in reading_forms(text):  # a finding of any form counts (``normalise_as_written``, hedges)
        for sig, _ in _phrase_hits(norm):
            cur = best.get(sig.category)
            if cur is None or _RANK[sig.severity] > _RANK[cur.severity]:
                best[sig.category] = sig
        for f in (*concept_findings(norm), *danger_findings(norm)):
            cat = DANGER if f.cssrs == DANGER else _LEGACY_OF[f.cssrs]
            cur = best.get(cat)
            if cur is None or _RANK[f.severity] > _RANK[cur.severity]:
                best[cat] = Signal(category=cat, evidence=f.evidence, severity=f.severity)
    rank = {c: i for i, c in enumerate(CRISIS_CATEGORIES)}
    return tuple(sorted(best.values(), key=lambda s: rank[s.category]))
