"""Phrase lists behind the heuristic checklist, compiled once. Match them against ``_text.fold``-ed text.

Each list is small and hand-written for English supportive dialogue; docs/checklist.md explains what
each one is for and where it is known to miss. Lists are written as ``|``-separated strings so that
one reviewable line holds many phrases.
"""

from __future__ import annotations

import re


def _alts(phrases: str, *, prefix: bool = False) -> list[str]:
    tail = r"\w*" if prefix else r"\b"
    return [re.escape(p.strip()) + tail for p in phrases.split("|") if p.strip()]


#: The phrases behind each :func:`terms` pattern: (exact phrases, word-prefix terms). The checklist reads it
#: to test several lists in one scan of a reply (``scorers._text.ListScan``).
TERM_SOURCES: dict[re.Pattern[str], tuple[frozenset[str], frozenset[str]]] = {}


def terms(exact: str = "", prefixes: str = "") -> re.Pattern[str]:
    """Word-bounded alternation of ``|``-separated exact phrases and word-prefix terms ("frustrat").

    Longest alternatives first, so "feel stuck" wins over "feel"; a term may not start inside a word.
    """
    alts = sorted(_alts(exact) + _alts(prefixes, prefix=True), key=len, reverse=True)
    rx = re.compile(r"(?<![\w'])(?:" + "|".join(alts) + ")")
    TERM_SOURCES[rx] = (_phrases(exact), _phrases(prefixes))
    return rx


def _phrases(spaced: str) -> frozenset[str]:
    return frozenset(p.strip() for p in spaced.split("|") if p.strip())


def words(text: str) -> frozenset[str]:
    return frozenset(text.split("|"))


# --- feelings -----------------------------------------------------------------------------------------
#: Emotion words a *user* uses to express a feeling (prefix terms: "frustrat" -> frustrated/frustrating).
USER_EMOTION = terms(
    "numb|tears|glad|burnt out|burned out|burnout|miss him|miss her|miss them|miss you|missing him|"
    "missing her|feel bad|feel awful|feel terrible|feel horrible|feel low|feel down|feeling down|feel stuck|"
    "feeling stuck|feel lost|feeling lost|feel empty|feel alone|so tired|really tired|fed up|broke down|"
    "want to cry|i cry",
    "overwhelm|stress|anxi|worr|sad|unhappy|depress|lonel|hurt|angry|anger|furious|frustrat|annoy|irritat|"
    "upset|scared|afraid|fear|terrif|panic|nervous|ashamed|shame|guilt|embarrass|hopeless|helpless|"
    "worthless|exhaust|drained|heartbr|grief|griev|crying|cried|devastat|miserable|jealous|resent|betray|"
    "disappoint|confus|insecure|rejected|abandon|dread|happy|excit|thrill|proud|relieved|grateful",
)
#: Words by which a *reply* names or acknowledges a feeling (seed 004's empathy and validation phrase
#: lists, extended with the feeling adjectives replies use: "exhausting", "frustrating", ...).
ACKNOWLEDGE = terms(
    "makes sense|no wonder|i hear|that must|i can see|i can imagine|of course you|natural to|it's okay to|"
    "it's ok to|a lot to carry|so much|a lot|that sucks|oh no|happy for you|that's awesome|that's great|"
    "how exciting|so exciting|i feel you|i get that|ouch|that's rough|bad timing|the worst",
    "sounds|feel|understandable|valid|exhausting|frustrating|painful|hard|tough|difficult|heavy|scary|"
    "draining|upsetting|overwhelming|stressful|relentless|lonely|hurtful|sorry|unfortunate|infuriating|"
    "terrible|awful|scary|nerve",
)
#: Dismissive / toxic-positive phrases (seed 004's toxic phrases plus common minimisers).
DISMISSIVE = terms(
    "don't worry|just relax|calm down|not a big deal|no big deal|bright side|at least you|could be worse|"
    "cheer up|get over it|think positive|stop worrying|overreacting|not that bad|"
    "everything happens for a reason|others have it worse|snap out of it|just move on|you'll be fine"
)
#: Minimisers specific to crisis disclosures (seed 001 CQ9: "doesn't minimize").
CRISIS_MINIMISING = terms(
    "you don't mean that|you don't really mean|everyone feels that way|everyone feels like that|"
    "not that serious|you'll get over it|it'll pass|it will pass|just a phase|don't be dramatic|"
    "so much to live for|everything will be fine|you'll be fine"
)
#: Words by which a later crisis reply shows it still takes the risk seriously (resources given before).
SEVERITY_ACK = terms(
    "worried about you|concerned|serious|glad you told me|thank you for telling|right now|are you okay|"
    "are you ok|not alone|here with you|urgent|emergency",
    "safe|safety",
)

# --- advice and agency --------------------------------------------------------------------------------
#: Advice / technique language (CQ4 pacing, CQ5 value, CQ2 unasked advice, CP1 "technique" move).
ADVICE = re.compile(
    r"(?<![\w'])(?:"
    r"you(?: should| need to| must(?! be| have| feel)| have to| ought to|'ve got to| gotta)"
    r"|(?:you|we) (?:could|might|may) (?:try|start|consider|practi[cs]e|write|make|set|take|use|talk|ask"
    r"|schedule|focus|tell|reach|go|journal|list|plan)|(?:you|we) can try"
    r"|have you (?:tried|considered|thought about (?:trying|talking|writing|setting|taking))"
    r"|why not|how about (?:trying|taking|writing|doing|setting|talking)|what if you (?:tried|wrote|set|told)"
    r"|it (?:might|could|may|would|can) help to|it helps to|i (?:recommend|suggest|encourage|advise)"
    r"|my advice|a (?:good|helpful|useful) (?:idea|way|strategy|tip|exercise|technique)"
    r"|one (?:thing|strategy|technique|approach|option|tip|exercise) (?:you|that|is|to)"
    r"|here are (?:some|a few)|(?:some|a few) (?:tips|strategies|steps|techniques|exercises)"
    r"|let's (?:try|do|practi[cs]e|start|take|work on|write)"
    r"|breathing exercise|box breathing|deep breath|breathe in|journaling|journal about|meditat\w*|mindfulness"
    r"|grounding (?:exercise|technique)|5-4-3-2-1|progressive muscle|thought record|reframe|reframing"
    r"|challenge (?:that|the|those|your|these) thoughts?|gratitude (?:list|journal)|pomodoro|sleep hygiene"
    r"|go for a walk|cbt|cognitive"
    r")\b"
)
#: Imperative verbs that give advice when they open a sentence ("Try writing it down.").
IMPERATIVE_OPENERS = words(
    "try|consider|practice|practise|start|write|make|set|schedule|focus|remember|stop|avoid|limit|breathe|go|"
    "tell|talk|ask|put|list|journal|meditate|begin|keep"
)
#: Prescriptive phrasing (seed 001 CQ6 failure: "You need to...", "You should..."). "you should(n't)
#: have to" is validation, not a prescription, so it is excluded.
PRESCRIPTIVE = re.compile(
    r"(?<![\w'])(?:you(?: need to| should(?! have to)| must(?! be| have| feel)| have to|'ve got to| gotta"
    r"| ought to|'d better| had better)|make sure (?:you|to)|i want you to)\b"
)
#: Phrasing that offers rather than imposes, or checks in / hands the choice back to the user.
AGENCY = terms(
    "would you like|do you want|if you'd like|if you would like|if you want|if it helps|if that feels|"
    "only if|when you're ready|up to you|your call|your choice|you decide|you know yourself|"
    "what do you think|how does that sound|how does that feel|how does that land|does that sound|"
    "does that feel|does that resonate|does that fit|does that make sense|what feels|what would feel|"
    "what would help|what would you like|what do you need|what do you want|which feels|which one|you could|"
    "you might|maybe|perhaps|one option|some people find|it might help|would it help|does any of|"
    "in your own way|at your own pace|whatever feels right"
)
#: A question that offers or checks in rather than explores ("Would you like to try...?").
OFFER_QUESTION = terms(
    "would you like|do you want|want to try|shall we|does that sound|does that help|does that make sense|"
    "how does that sound|is that okay|is that ok|would it help|have you tried|could you try|can you try"
)
#: The user asking for advice: advice that answers the request is not premature (CQ4).
ADVICE_REQUEST = re.compile(
    r"(?<![\w'])(?:what should i|what do i do|what can i do|any (?:advice|tips|ideas|suggestions)"
    r"|give me (?:advice|tips|some|ideas)|how (?:do|can|should) i|what would you (?:do|suggest|recommend)"
    r"|help me (?:figure|decide|deal|with)|i need (?:advice|tips|ideas|help with)|can you (?:suggest|recommend)"
    r"|tell me what to do|what are some ways)\b"
)

# --- value (CQ5) --------------------------------------------------------------------------------------
#: Stock closers that ask without exploring ("Anything else?"): they add no depth, so CQ5 ignores them.
GENERIC_QUESTION = terms(
    "anything else|what else|how can i help|what can i do for you|can i help you with|any other questions|"
    "any questions|is that all|something else"
)
#: Perspective / interpretation markers: the reply offers a way of seeing the situation.
PERSPECTIVE = terms(
    "often|sometimes|many people|a lot of people|it's common|it is common|common to|natural to|"
    "makes sense that|it makes sense|no wonder|it sounds like|it seems like|i wonder|i notice|i'm noticing|"
    "what if|another way|on the other hand|part of you|underneath|pattern|patterns|i'm curious|"
    "it could be that|might be|may be that|could be that|because|what i'm hearing|go way back|goes back"
)

# --- ambiguity (CQ2) ----------------------------------------------------------------------------------
#: Vague referents: the user names a domain without saying who or what (seed 001 CQ2 failure example).
VAGUE = re.compile(
    r"(?<![\w'])(?:(?:relationship|family|work|personal|money|health|friend|school|home) "
    r"(?:issues|problems|stuff|drama|things|troubles)"
    r"|(?:some|certain) (?:stuff|things|issues|problems|people|drama)|stuff (?:going on|happening)"
    r"|things (?:are|have been|got) (?:weird|off|complicated|hard|bad|rough|messy)|it's complicated"
    r"|something happened|issues with (?:people|them)|a situation with|(?:this|some) person)\b"
)
#: Specific people / roles: naming one the user never mentioned, outside a question, is an assumption.
ROLE = terms(
    "ex|date",
    "partner|boyfriend|girlfriend|husband|wife|spouse|marriage|marri|romantic|dating|mom|mum|mother|dad|"
    "father|parent|sibling|brother|sister|son|daughter|kids|children|boss|manager|coworker|colleague|"
    "roommate|teacher|friend",
)

# --- tone and calibration (CQ7) -----------------------------------------------------------------------
#: Grief / loss disclosures by the user.
GRIEF = re.compile(
    r"(?<![\w'])(?:died|passed away|death|funeral|grief|grieving|bereave\w*|miscarriage|lost (?:my|our) "
    r"(?:\w+ )?(?:mom|mum|dad|mother|father|husband|wife|partner|son|daughter|child|baby|friend|dog|cat|pet"
    r"|brother|sister|grandma|grandmother|grandpa|grandfather))\b"
)
#: Upbeat / celebratory markers in a reply (counted only together with "!" or an emoji).
UPBEAT = terms(
    "fun|super|cheer up|bright side|smile|yay|woohoo",
    "great|awesome|amazing|fantastic|wonderful|exciting|congrat",
)
UPBEAT_EMOJI = re.compile("[\U0001f600-\U0001f606\U0001f60a\U0001f642\U0001f389\U0001f973\u263a]")

# --- naturalness (CP2) --------------------------------------------------------------------------------
#: Templated, assistant-register or formal phrases (seed 004: "too formal", "robotic phrasing").
TEMPLATED = terms(
    "as an ai|language model|i am an ai|i'm an ai|i understand your concern|thank you for sharing|"
    "thanks for sharing|i appreciate you sharing|it is important to|it's important to note|please note|"
    "please be advised|furthermore|moreover|additionally|in conclusion|firstly|secondly|in summary|"
    "i apologize for|i hope this helps|feel free to|let me know if you have any|is there anything else|"
    "how can i assist|assist you|great question|i understand how you feel"
)
#: List or markdown formatting at a line start (voice-unfriendly, and templated in chat).
FORMATTING = re.compile(r"(?m)^\s*(?:[-*•]\s|\d+[.)]\s|#{1,6}\s)|\*\*")
CONTRACTION = re.compile(r"(?<![\w'])\w+'(?:m|re|s|ve|ll|d|t)\b")
UNCONTRACTED = re.compile(
    r"(?<![\w'])(?:i am|you are|it is|that is|do not|does not|did not|cannot|can not|will not|would not"
    r"|is not|are not|have not|i will|you will|we are|they are|there is|what is|let us)\b"
)
#: Warmth beyond acknowledgement: presence and encouragement.
WARMTH = terms(
    "i'm here|i am here|with you|glad|together|proud of you|thank you for telling|that's great|love that|"
    "you've got this|take care|i'm sorry|i'm really sorry|oh|aw|aww|wow|haha|hey|ugh|yikes|omg|nice|yeah|"
    "congratulations|congrats"
)

# --- arc (CP3) ----------------------------------------------------------------------------------------
BACK_REFERENCE = terms(
    "you mentioned|you said|you told me|earlier|before, you|last time|going back to|you've been saying|"
    "like you said|as we discussed|we talked about|when we started|at the start|you brought up|"
    "coming back to|remember when you"
)
INSIGHT_USER = terms(
    "i realize|i realise|i never thought|i see|that makes sense|you're right|i think i|maybe i|i guess i|"
    "i hadn't|now i|i've noticed|i understand|i didn't realize|i didn't realise|that helps|i feel better|"
    "i want to try|i'm going to try|i could try"
)
INSIGHT_ASSISTANT = terms(
    "i'm noticing|i notice|pattern|patterns|what i'm hearing|underneath|connect|connects|thread|"
    "come a long way|shift|so far|looking back|putting it together|what stands out"
)
#: Content stems too generic to count as a reference to something the user said earlier.
GENERIC_STEMS = words(
    "feel|feeling|thing|time|want|need|good|bad|think|much|lot|make|way|people|day|right|sure|still|even|"
    "always|never|something|anything|everything|sound|seem|help|hard"
)
