"""Danger from another person: concept frames over a normalised USER turn (rules 2.11-2.12).

Why concepts and not phrases: on the danger set's dev split (tests/data/danger_eval, written by agents who
never saw the detector) the detector before them raised any alert on 0.16, and a danger finding on 0.08, of
the messages in which the user is in danger. People rarely say "he threatened to kill me": they report what
was said ("he goes you're dead you hear me"), what was done ("his hands around my neck", "he took my passport"),
or what is happening now ("he's at the door").

A finding needs an act aimed at the user from one of these concepts, with its own guards:

* ``threat_to_kill`` (critical): someone else's words or acts that promise the user's death ("he'll kill me",
  "you're a dead woman", "they'll carry you out in a box", "make me disappear", "should have strangled me");
* ``threat_to_harm`` (high): a promised injury to the user, their children or pets ("break your fingers");
* ``violence`` (high; hands on the neck, strangling or choking critical, a known lethality marker): an act
  by another person on the user ("he shoved me", "my dad threw me against the fridge");
* ``sexual`` (high): sexual violence or coercion aimed at the user;
* ``control`` (high): passport or keys taken, locked in, followed, tracked, watched, told "you don't leave",
  with fear, a threat, or an ex or stranger behind it;
* ``immediate`` (critical): the person is here, at the door or on their way, and the user is hiding, afraid
  or asking for help;
* ``weapon`` (critical): another person showing or holding a weapon at the user in a conflict;
* ``fear`` (high): the user afraid of a person ("i'm scared of him", "afraid for my life").

Everyday speech uses the same words: "my mum will kill me when she sees the bill". A threat phrased the way
the idiom is phrased (someone "will kill / murder / beat" the user, "you're dead") counts only with support
in the turn: fear, a call for help, the police, violence before, a weapon, a threat in writing or by voice
message; or reported speech or a serious condition ("if i leave", "if i tell") with no trivial cause (a bill, a
grade, being late, laughter).
Guards common to every concept: the act negated ("he has never hit me"), a film, game or sport, a
professional describing a case, and danger the user says is over ("he's in prison now, i'm safe").
"""

from __future__ import annotations

import re
from functools import lru_cache

from ._concepts import Finding
from ._context import clause_left
from ._gate import Gate

DANGER = "danger_from_others"

_AGENT_NOUN = (
    r"husband|hubby|wife|partner|boyfriend|girlfriend|bf|gf|ex|ex-\w+|fiance|fiancee|dad|da|daddy|father|"
    r"stepdad|step-dad|step dad|stepfather|mum|mom|mam|ma|mother|mommy|mummy|stepmum|stepmom|stepmother|brother|"
    r"sister|uncle|aunt|auntie|cousin|grandad|grandpa|grandfather|nan|son|daughter|son-in-law|brother-in-law|"
    r"father-in-law|mother-in-law|sister-in-law|in-laws?|landlord|landlady|flatmate|roommate|housemate|boss|"
    r"manager|supervisor|employer|madam|sir|agent|pimp|trafficker|dealer|neighbour|neighbor|man|men|guy|guys|"
    r"bloke|lad|boy|woman|girl|stranger|driver|teacher|coach|carer|caregiver|family friend|baby (?:father|daddy|"
    r"mother|mama|fada)|fada|babyfather|babydaddy|people|gang|lot|family"
)
#: Relations chat and voice name without a determiner ("dad hit me again", "bf says i'm dead if i leave").
_BARE_AGENT = (
    r"husband|hubby|wife|partner|boyfriend|girlfriend|bf|gf|ex|dad|da|mum|mom|mam|stepdad|stepmum|stepmom|uncle|"
    r"landlord|brother|bruther|fella|trafficker|pimp"
)
#: Another person as the subject: a pronoun, or a noun phrase of someone the user names.
_AGENT = (
    r"(?:\b(?:he|she|they|he's|she's|they're|hes|shes|he'll|she'll|they'll|hell|shell|he'd|she'd|they'd|him|"
    r"someone|somebody)\b|\b(?:my|his|her|our|mi|ma|me|the|this|that|a|some|an|yer|their|same) (?:[\w'-]+ ){0,2}?"
    r"(?:" + _AGENT_NOUN + r")s?\b|\b(?:" + _BARE_AGENT + r")\b)"
)
_AGENT_RX = re.compile(_AGENT)
_ME = r"(?:me|us|mi|myself)"
_BODY = (
    r"(?:face|neck|throat|head|arms?|fingers?|hands?|legs?|ribs?|nose|jaw|teeth|back|stomach|tummy|eyes?|body|"
    r"knees?|kneecaps?|wrists?)"
)
_MINE = r"(?:my|mi|ma|me|your|ur|yer)"
_FAMILY = r"(?:(?:my|the|our|your|ur) (?:kids?|children|son|daughter|baby|babies|boys|girls|dog|cat|pets?|family))"

_MODAL = (
    r"(?:'ll|will|would|'d|wud|is going to|'s going to|s going to|are going to|'re going to|going to|gonna|"
    r"was going to|is gonna|wants to|want to|threaten\w* to|should have|should've|shoulda|could|can|might|"
    r"promised to|swore to|swears to|plans to|tried to|is trying to|try to|say he'll|will just|ll|coming to|"
    r"is coming to|'s coming to|gon|gone|finna|gunna|a go|go)"
)

# -- threats to kill ----------------------------------------------------------------------------------------
_KILL_V = r"(?:kill|murder|shoot|stab|strangle|choke|poison|drown|smother|suffocate|slaughter|butcher|end|off)"
#: The idiom's own shape: "X will kill / murder / end me" (kept only with support in the turn).
_AGENT_MODAL = r"(?:" + _AGENT + r"(?: \w+){0,3}? " + _MODAL + r"|\b(?:he|she|they)(?:'ll|'d|ll|d)|\b(?:hell|shell))"
_KILL_IDIOM_V = r"(?:" + _KILL_V + r"|beat|batter|destroy|strangle|throttle) (?:" + _ME + r"|you|u|ya)\b"
_KILL_IDIOMATIC = re.compile(
    _AGENT_MODAL + r"(?: \w+){0,2}? " + _KILL_IDIOM_V + r"(?! off\b| up\b| at\b| in (?:a|the|chess|cards)\b)"
)
#: Ways of promising death that everyday speech does not use for a bill or a grade.
_KILL_PLAIN = re.compile(
    r"\bthreaten\w* (?:to |that (?:he|she|they)(?:'ll| will|'d| would) )?(?:\w+ )?"
    + _KILL_V
    + r" (?:"
    + _ME
    + r"|"
    + _FAMILY
    + r")\b"
    r"|\b(?:slit|cut|slash|slice)\w* (?:my|your|ur|mi) throat\b|\bthroat[- ]?(?:cut|slash|slit)\w*"
    r"|\b(?:put|see|have|get) (?:me|you|u) (?:in|into) (?:the|a|an early) (?:ground|grave|box|coffin|body bag|ditch)"
    r"|\bcarr(?:y|ied) (?:you|me) out (?:of (?:\w+ ){1,3})?in a box|\byou'?ll (?:\w+ )?be in a box|\bin a box soon"
    r"|\b(?:end|wind) up (?:in|at the bottom of) (?:the|a) (?:river|canal|lake|sea|ground|woods|quarry|ditch)"
    r"|\b(?:find|found|finding|pull|pulling|fish|fishing|drag|dragging) (?:me|you|u|your body|my body|bits of (?:me|"
    r"you)) (?:out of|in|from|at the bottom of) (?:the|a) (?:river|canal|lake|sea|woods|ditch|quarry|harbour|sea)"
    r"|\b(?:won't|will not|wont|ain't going to|isn't going to|not going to) live to see\b"
    r"|\b(?:make|made|making) (?:me|you|u|someone|somebody|people|a person) (?:just )?disappear"
    r"|\bwhere (?:he|she|they)(?:'ll|'d| will| would| is going to|'s going to| are going to)? (?:\w+ )?bury (?:me|you)"
    r"|\bbury (?:me|you) (?:in|under|where|out)|\bdig (?:me|you) a (?:grave|hole)"
    r"|\bfinish (?:me|you|u|it|the job) off\b|\b(?:come|coming) back (?:and|to) finish (?:it|me|you|the job)"
    r"|\bfinish (?:me|you)\b(?! off\b)"
    r"|\bdo (?:me|you) in\b|\b(?:you'?re a|ur a|you are a|you'll be a) dead (?:woman|man|girl|boy|bitch)\b"
    r"|\b(?:be|are|'re|is) dead (?:before|by) (?:the|next|friday|monday|tuesday|wednesday|thursday|saturday|sunday)"
    r"|\bpoison\w* (?:my|mi|your|ur) (?:food|drink|tea|coffee|dinner|meals?)"
    r"|\b(?:should|could|shoulda|should've) (?:have )?(?:killed|strangled|choked|drowned|smothered|finished) "
    r"(?:me|you)\b"
    r"|\b(?:kill|murder|shoot|stab|strangle|smother|suffocate) (?:me|you|us) (?:while|in) (?:i|my|your|you|we|our) "
    r"(?:sleep|asleep|slept|bed)"
    r"|\bsomething (?:he|she|they) can(?:'t|not) take back\b|\bhow (?:easy|easily) it (?:would|'d) be to "
    r"(?:make|get rid|kill)"
    r"|\b(?:kill|murder|shoot|stab|strangle) (?:me|us) and (?:the|my) (?:kids|children|baby|boys|girls)"
    r"|\b(?:says?|said|told me|keeps saying|swore|screamed|yelled|shouted) (?:that )?(?:i'm|i'll be|i am|i will be) "
    r"(?:next|dead)\b"
    r"|\bi'?m next\b(?= after)"
    r"|\brather (?:see|have) (?:me|you|u) dead\b|\b(?:end|ends|ended) up dead\b|\b(?:you|u) (?:both |all )?die\b"
    r"|\b(?:my|your|ur) days are numbered\b|\benjoy(?:ing)? (?:your|ur) last\b"
    r"|\b(?:nobody|no one|no-one|noone) (?:will|would|'ll|is going to|is gonna) (?:ever )?find (?:me|you|u|your|my|the)"
    r"|\b(?:leave|get out|walk out|make it out|come out|go) (?:of (?:here|this house|this flat) )?alive\b"
    r"|\b(?:where|how) (?:he|she|they) (?:would|'d|will|'ll|is going to|'s going to) (?:put|bury|hide|dump|do) "
    r"(?:me|you|my body|your body|it)\b"
    r"|\bgo the same way as\b|\b(?:i'll|you'll|i'd|you'd|i will|you will|i would) (?:just )?\"?disappear"
    r"|\b(?:won't|will not|wont|wouldn't|not) be (?:around|here|alive) (?:to see|for|by|much longer)"
    r"|\b(?:have|had|having) an accident (?:on|down|at)|\baccidents? (?:happen|can happen) to (?:women|wives|people|"
    r"girls)\b"
    r"|\bif i can'?t have you,? (?:nobody|no one|no-one|noone) (?:will|can)\b"
    r"|\b(?:see|watch) (?:you|me) bleed\b|\bburn (?:the (?:place|house|flat)|you|me|us) (?:down|alive)\b"
    r"|\b(?:tonight|today|now) (?:you'?re|ur|you are) (?:done|finished)\b|\bthen (?:you'?re|ur) done\b"
    r"|\b(?:he's|she's|they're|he is|she is|they are) going to end my life\b"
    r"|\ba go kill (?:me|mi)\b|\bkill (?:me|mi) tonight\b"
    r"|\b(?:i|i'm|im|i am) (?:a )?dead (?:man|woman) (?:walking|if)\b"
    r"|\bdescribes? (?:exactly )?how (?:he|she) (?:would|'d|will) do it\b"
)
#: Death promised in reported speech ("he goes you're dead", "ur dead when i find u"): idiom-shaped.
_DEAD_YOU = re.compile(
    r"(?:\b(?:you'?re|you are|ur|u r|you'?ll be|you will be)|\b(?:says?|said|told me|goes|keeps saying|texted|"
    r"screamed|yelled|shouted|swore) (?:that )?(?:i'm|im|i am|i'll be|i will be)) (?:so |fucking |fkn |effing )?"
    r"dead\b(?! (?:tired|serious|wrong|on|set|inside|to me|meat)\b)"
)

# -- threats to harm --------------------------------------------------------------------------------------
_HARM_PLAIN = re.compile(
    r"(?:\b(?:'ll|will|would|'d|going to|gonna|threaten\w* to)|\b(?:shell|hell)) (?:\w+ )?(?:break|smash|mess up|rearr"
    r"ange|ruin|cut|"
    r"slash|burn|bash in|cave in|snap)\w* (?:\w+ ){0,2}?" + _MINE + r" (?:\w+ )?" + _BODY + r"\b"
    r"|\b(?:beat|batter|kick|knock|slap) the (?:crap|shit|hell|life|living daylights|stuffing|snot) (?:out of|outta) "
    r"(?:me|you|u|ya)\b"
    r"|\b(?:give|gie|gives|gave) (?:me|you|u|ya) a (?:slap|sore face|hiding|beating|doing|kicking|black eye|"
    r"few slaps|smack|good hiding)\b"
    r"|\bget a (?:slap|hiding|beating|smack|kicking)\b"
    r"|\bsee if (?:you|u) can (?:still )?walk\b|\bput (?:you|me|u) through (?:the|a) (?:wall|window|door)\b"
    r"|\bwhat (?:happens|will happen|happened) to (?:your|ur|my|his last \w+'s) (?:pretty )?face\b"
    r"|\b(?:shame|pity) if (?:one of them|the kids|the children|you|anything|something) (?:got|gets|were|was) "
    r"hurt\b"
    r"|\b(?:hurt|harm|take|snatch)\w* (?:the|my|our|your|ur) (?:kids|children|baby|son|daughter|dog|cat|pets?)\b"
    r"(?= (?:if|when|unless|so|and|first|too|like|as well)\b| to (?:punish|get)|\s*$|[.!?,])"
    r"|\bcan(?:'t|not) be responsible for what (?:\w+ ){0,2}?(?:hands|fists) do\b"
    r"|\b(?:look|looks|be|'d be) (?:better|prettier) with (?:a few )?bruises\b"
    r"|\bkick(?:ed|s)? the (?:cat|dog)\b"
    r"|\bmention\w* (?:how steep )?the stairs\b"
    r"|\b(?:throw|threw|put|chuck)\w* (?:\w+ )?(?:acid|bleach|boiling water) (?:in|on|at|into) (?:my|your|ur|me|you)"
    r"|\b(?:mess|messed|sort|sorted) (?:me|you|u) (?:up|out)\b|\bteach (?:me|you|u) a lesson\b|\bshank\w* (?:me|you|u)"
    r"\b"
    r"|\bmake (?:me|you|u) (?:limp|suffer|pay|bleed)\b|\bwhich bones\b|\bwhat (?:he|she|they)(?:'d| would) do to me\b"
    r"|\b(?:things|it) (?:would|will|'d|'ll) get (?:painful|ugly|nasty|worse) for me\b"
    r"|\b(?:do|does|done|did) worse\b(?= if| when| next)|\bnext time (?:it'?ll|it will) be worse\b"
    r"|\bburn (?:me|you|u|mi) with\b|\bput my (?:cat|dog|pet|rabbit|bunny|hamster) in\b"
    r"|\bhand (?:me|you) (?:over )?to (?:his|her|their) (?:friends|mates|boys)\b"
    r"|\bsend (?:some )?(?:lads|boys|people|men|guys) round\b|\bhow fragile (?:kids|children|babies) are\b"
    r"|\bmake sure (?:i|you|u) (?:can'?t|cant|cannot|don'?t|dont|never|won'?t) (?:talk|leave|walk|breathe|see)\b"
)
#: "X will hurt / beat / hit / slap me": idiom-shaped, kept only with support in the turn.
_HARM_IDIOM_V = (
    r"(?:hurt|beat|batter|hit|slap|punch|kick|smack|"
    r"thump|deck|hurt|knock out|strangle|throttle|choke|stab|cut|burn|wreck|rape|shank|belt|leather|batter|"
    r"mess (?:me|you|u) up|sort (?:me|you|u) out|teach (?:me|you|u) a lesson|make (?:me|you|u) (?:pay|limp|suffer)|"
    r"sell|hand|do worse to|do worse) (?:" + _ME + r"|you|u|ya|" + _FAMILY + r")\b"
)
_HARM_IDIOMATIC = re.compile(
    _AGENT_MODAL
    + r"(?: \w+){0,2}? "
    + _HARM_IDIOM_V
    + r"(?! at\b| in (?:a|the|chess|cards|mario|fifa)\b| to (?:it|the)\b| up\b| with\b)"
)

# -- violence done ------------------------------------------------------------------------------------------
_HIT_V = (
    r"hit|hits|hitting|punch(?:ed|es|ing)?|kick(?:ed|s|ing)?|slap(?:ped|s|ping)?|shove(?:d|s)?|shoving|"
    r"push(?:ed|es|ing)?|pinn?(?:ed|s|ing)|grab(?:bed|s|bing)?|thr(?:ew|ows?|owing)|slam(?:med|s|ming)?|"
    r"batter(?:ed|s|ing)?|beat(?:s|ing)?|drag(?:ged|s|ging)?|bit|bites|biting|burn(?:ed|t|s)|spat on|spits on|"
    r"headbutt\w*|smack(?:ed|s|ing)?|whip(?:ped|s|ping)?|lick|licks|licked|attack(?:ed|s|ing)?|struck|strikes|"
    r"elbow(?:ed|s)?|kneed|twist(?:ed|s)?|shook|shakes|shaking|choke-?slammed|stamp(?:ed|s) on|stomp(?:ed|s) on|"
    r"throttl\w+|slams|hurts|hurt|hurting|abus(?:es|ed|ing)|assault(?:ed|s|ing)|knock(?:ed|s)|swung at|"
    r"swings at|lash(?:ed|es) out at|laid (?:a )?hands on|lays hands on|raised (?:his|her) (?:hand|fist)s? to|"
    r"grips|gripped|scratch(?:ed|es)|pull(?:ed|s) my hair|dragged"
)
_PASSIVE_HIT_V = (
    r"hit|punched|kicked|slapped|beaten|battered|choked|strangled|shoved|pushed|thrown|dragged|whipped|smacked|"
    r"attacked|assaulted"
)
_CHOKE_V = r"chok(?:ed|es|ing)|strangl(?:ed|es|ing)|throttl(?:ed|es|ing)|suffocat(?:ed|es|ing)|smother(?:ed|s|ing)"
#: Strangulation and hands on the neck: a known lethality marker, critical.
_LETHAL = re.compile(_CHOKE_V + r"|neck|throat")
_VIOLENCE_REST = (
    r"\b(?:thr(?:ew|ows?|owing)|hurl(?:ed|s|ing)) (?:\w+ ){0,3}?at (?:me|us|my head|my face)\b"
    r"|\b(?:hands?|fingers|arm) (?:a?round|on|across|over|against) (?:my|mi|ma|me) (?:neck|throat|mouth)\b"
    r"|\bmarks on my neck\b|\bmy neck (?:still )?(?:has|had|is covered in) (?:marks|bruises)\b"
    r"|\b(?:broke|broken|breaks|fractured|cracked|dislocated|busted|split) (?:my|mi|ma|me) (?:\w+ )?"
    r"(?:finger|fingers|arm|wrist|nose|rib|ribs|jaw|tooth|teeth|lip|eye socket|collarbone|hand|cheekbone)\b"
    r"|\b(?:twisted|bent|yanked|wrenched) my arm\b"
    r"|\b(?:gave|gives|give|gie|gied) (?:me|us|mi) (?:a |an )?(?:black eye|right doing|doing|hiding|few slaps|"
    r"slaps|slap|beating|kicking|thumping|busted lip|fat lip|bloody nose|good hiding)\b"
    r"|\b(?:where|from where|when) (?:he|she|they) (?:grabbed|hit|kicked|punched|slapped|choked|held|pinned) "
    r"(?:me|it|my)\b"
    r"|\b(?:was|is|were|are|been|keeps|kept) (?:swinging|lashing out) (?:again|at me)\b|\bwas swinging again\b"
    r"|\b(?:our|another (?:one of our)?|one of our) (?:\")?discussions?(?:\")? (?:last night|again)\b"
    r"|\b(?:slams|slammed|threw|throws|pins|pinned|shoved|pushed) (?:me|mi) (?:on|onto|into|against|down|to|"
    r"across)\b"
    r"|\b(?:split|busted|burst|cut) my (?:lip|eyebrow|head|nose)\b|\b(?:grip|hands?|fingers) (?:leaves?|left) "
    r"(?:marks|bruises)\b|\bend up (?:on the floor|with (?:marks|bruises|a black eye|a split lip))\b"
    r"|\b(?:sits?|sat|kneel\w*|knelt) on (?:my chest|my back|me)\b"
    r"|\b(?:uses?|used) (?:the|a|his|her|an?) (?:\w+ )?(?:cable|belt|cord|wire|stick|broom|shoe|slipper|chappal|"
    r"koboko|hanger|wooden spoon|rod|cane|whip) on (?:me|us|mi)\b"
    r"|\b(?:hit|hits|beat|beats|whip\w*|belt\w*|beating|hitting) (?:me|us|mi) with (?:a|the|his|her|an) (?:\w+ )?"
    r"(?:belt|broom|stick|cable|cord|bat|hammer|pan|bottle|shoe|slipper|fist|hand|phone|chair|plate|cane|rod|whip|"
    r"hanger|spoon|iron|book|remote|handle|wire|shovel|pipe|chain)s?\b"
    r"|\bright hidin\w*|\bbelts? (?:me|us|mi)\b|\bbruises? (?:all )?(?:on|over|up) my\b"
    r"|\b(?:cover|hide|hiding|covering) (?:the|my) (?:marks|bruises)\b"
    r"|\bblack eye\b|\b(?:holds?|held|grabs?|grabbed) my (?:arms?|wrists?|neck|hair|jaw|face) (?:too |so |really )?"
    r"(?:tight|hard|rlly hard)\b|\bgrabbed my (?:jaw|throat|neck|hair)\b"
    r"|\b(?:punch|punches|punshes|hits|kicks|slaps|beats) (?:me|mi)\b(?= (?:when|wen|every|again|in|if|cos|because|"
    r"and)\b)"
    r"|\b(?:i|i'm|im) get (?:\")?corrected\b|\bhe'?s not a hitter\b|\bhe pushes\b"
)
_VIOLENCE = re.compile(
    _AGENT + r"(?: (?:\w+ly|just|then|also|always|sometimes|often|still|again|even|has|had|have|'s|s|keeps|"
    r"kept|started|starts|used to|was|is|were|been|gets|got|like|kinda|sort of|actually|um|uh|"
    r"literally|basically)){0,4} (?:"
    + _HIT_V
    + r"|"
    + _CHOKE_V
    + r")(?: (?:\w+ly))? (?:"
    + _ME
    + r"|"
    + r"(?:my|mi|ma|me) (?:\w+ )?"
    + _BODY
    + r")\b"
    r"(?! up\b| with (?:a|an|the|some|his|her|this|that) (?:\w+ ){0,3}?(?:idea|question|news|request|bill|offer|"
    r"truth|jokes?|puns?|facts|story|compliment|line|surprise|bombshell|announcement)"
    r"| at (?:chess|cards|pool|tennis|darts|scrabble|monopoly|mario|fifa|\w+ing|the (?:game|race|finish))\b"
    r"| in (?:a|the) (?:race|game|match|final|quiz)\b| to (?:it|the (?:punch|finish|top|post))\b"
    r"| off guard\b| a (?:party|surprise|bone|line|message|text)\b| out of (?:the|a) (?:team|group|chat|band)\b"
    r"| to (?:do|be|try|work|go|apply|study)\b| into (?:doing|applying|trying|going|taking|signing)\b"
    r"| so hard (?:when|that) i (?:laughed|cried)| emotionally\b)" + "|" + _VIOLENCE_REST
)
#: "i got slapped again", "been kicked by him": the user as the one hurt, told in the passive.
_PASSIVE = re.compile(
    r"\b(?:i|i've|i was|i got|i get|got|been|getting|i've been|i'm being|i am being|was) (?:\w+ )?(?:hit|"
    r"punched|kicked|slapped|beaten|battered|choked|strangled|shoved|pushed|thrown|dragged|whipped|smacked|"
    r"strangled|attacked|assaulted) (?:by|again|every|when|for|because|if|last|this|yesterday|tonight|all)\b"
)
_PASSIVE_HIT = r"\b(?:" + _PASSIVE_HIT_V + r") (?:by|again|every|when|for|because|if|last|this|yesterday|tonight|all)\b"
_VIOLENCE_CUE = re.compile(r"\b(?:" + _HIT_V + r"|" + _CHOKE_V + r")\b|" + _VIOLENCE_REST)

# -- sexual violence --------------------------------------------------------------------------------------
_SEXUAL = re.compile(
    r"\b(?:rap(?:e|ed|es|ing)|sexually (?:assault|abus|harass)\w*|molest\w*|grop(?:e|ed|es|ing)|"
    r"forc(?:e|es|ed|ing) (?:himself|herself|themselves|hisself) on (?:me|mi)|"
    r"forc(?:e|es|ed|ing) (?:me|mi) (?:to|into|in(?:to)? (?:the )?bed)|obligat\w* (?:me|mi) to|"
    r"(?:made|make|makes|making) (?:me|mi) (?:do|have|touch|perform|watch|send|take off) (?:\w+ )?(?:stuff|things|it|"
    r"sex|him|her|them|nudes|pictures|photos|videos|sexual)|"
    r"touch(?:es|ed|ing)? (?:me|mi)\b(?! up\b)|(?:his|her|their) hands? (?:wandered|went|go|goes|up|down|under)|"
    r"hands? (?:up|down|under|inside) my (?:skirt|shirt|top|dress|pants|trousers|shorts|bra)|"
    r"(?:comes?|came|coming|gets?|got|climbs?|climbed|creeps?|crept|sneaks?|snuck) (?:in|into) (?:my|mi|ma) "
    r"(?:room|bed|bunk)(?: at night| when| while| and)|"
    r"(?:does|did|doing|do) (?:things|stuff) to (?:me|mi)\b|"
    r"(?:didn't|wouldn't|won't|doesn't|did not|would not|never) stop (?:even )?(?:though|when|if|after) i "
    r"(?:was |said |told |begged|cried|screamed|asked)|"
    r"(?:holds?|held|holding|pins?|pinned|pinning) (?:me|mi) down|"
    r"(?:have|had|has) sex (?:with (?:me|him|her) )?(?:when|even (?:though|when)|after) i (?:say|said|tell|told)|"
    r"(?:it's|its|it is|is) not rape\b|(?:my|mi|your|ur) body belongs to|"
    r"(?:walk|walks|walking|walked|barge|barges|came|comes) in (?:on me )?when i'?m in the (?:shower|bath)|"
    r"(?:expects?|expected|demands?|demanded) sex|(?:his|her) right as (?:my|a) (?:husband|wife)|"
    r"(?:say|says|said|tells) (?:it is|it's|is) (?:his|her) right|"
    r"in the bedroom (?:have|has) (?:gotten|got|become) (?:a bit )?scary|doesn't count,? right|"
    r"hurts? so much every time|even when i (?:tell|told|say|said) (?:him|her) (?:it|that it) hurts|"
    r"(?:this|it) stays between us|(?:it's|its|it is) our (?:little )?secret|"
    r"send (?:him|her|them) (?:nudes|pics|pictures)|(?:leak|share|post)\w* my (?:nudes|pics|pictures|photos)|"
    r"wouldn'?t unlock the doors? (?:til|until|unless)|"
    r"(?:said|say|says) no (?:\w+ ){0,4}?(?:and|but) (?:he|she|they) (?:kept going|did it anyway|didn't stop|carried o"
    r"n)|"
    r"(?:doesn't|does not|don't|won't) (?:\w+ )?take no for an answer|whether i'?m willing or not|"
    r"sleep with (?:his|her|their) (?:mates|friends|boss)|(?:see|sleep with) \w+ men a night|"
    r"(?:come|comes|came) to my bed|forc\w* (?:me|mi) (?:every|when|even|at)|"
    r"(?:things|stuff) (?:happened|he did) (?:\w+ ){0,4}?(?:that )?i didn'?t (?:agree|consent|want)|"
    r"(?:corners|cornered) me\b|makes? me you know|get me alone|"
    r"(?:held|holds|pinned|pins) (?:my|me by the) (?:wrists|arms|hands) down|"
    r"(?:send|show|post|share) (?:them|the pics|my pics|the photos|the pictures) to (?:my|your) (?:whole )?"
    r"(?:family|parents|mum|mom|dad|friends|school|work|boss)|"
    r"(?:he|she) did (?:stuff|things|it) to me|did it to me|after he did it|"
    r"keep secrets with (?:him|her)|our (?:special|little) (?:thing|secret)|"
    r"(?:comes?|walks?) in when i'?m (?:getting changed|changing|in the shower|in the bath))"
)

# -- control, stalking --------------------------------------------------------------------------------------
_CONTROL_HARD = re.compile(
    r"\b(?:tak(?:e|es|en|ing)|took|tuk|has|have|keeps?|kept|hid(?:es|den)?|holds?|holding|confiscat\w*|lock(?:s|ed)? "
    r"up|stole|steals?) (?:\w+ ){0,2}?(?:my|mi|ma) (?:\w+ )?(?:passport|passports|visa|documents|papers|"
    r"id card|residence card|birth certificate)\b"
    r"|\block(?:s|ed|ing)? (?:me|us|mi) (?:in|inside|up)\b|\block(?:s|ed|ing)? (?:me|us|mi) in (?:my|the|a|our) "
    r"\w+|\block(?:s|ed)? (?:the )?door (?:when|and|so|from the outside|behind)"
    r"|\b(?:not|never|n't|no) (?:\w+ )?allowed (?:to )?(?:out|go out|leave|outside|to leave|to go out|to see "
    r"(?:my|anyone)|to talk to|to have (?:a|my) (?:phone|money|friends))\b"
    r"|\b(?:won't|doesn't|don't|will not|does not|wont|dont|doesnt|didn't|didnt) let (?:me|mi) (?:leave|go out|out of|"
    r"eat|sleep|see "
    r"(?:my|anyone)|have (?:my|a) (?:phone|money|key))\b"
    r"|\byou don'?t leave this house\b|\bnobody'?s leaving this house\b|\bnot leaving this house\b"
    r"|\bcan(?:'t|not) (?:go out|leave) (?:from )?(?:the )?(?:house|flat|home|room)\b"
)
_CONTROL_SOFT = re.compile(
    r"\b(?:tak(?:e|es|en|ing)|took|tuk|has|have|keeps?|kept|hid(?:es|den)?|holds?|holding|confiscat\w*|stole|"
    r"steals?|check(?:s|ed)?|goes through|reads?) (?:\w+ ){0,2}?(?:my|mi|ma) (?:\w+ )?(?:phone|keys|car keys|bank "
    r"cards?|cards|wages|salary|money|pay|benefits|messages|texts)\b"
    r"|\b(?:follow(?:s|ed|ing)?|stalk\w*|track(?:s|ed|ing)?|watch(?:es|ed|ing)?|hunt(?:s|ed|ing)? down) "
    r"(?:me|mi|you|u)\b(?! on (?:insta|instagram|twitter|tiktok|x|youtube|twitch|strava|spotify)| back\b)"
    r"|\btracker (?:on|under|in) (?:my|the)\b|\b(?:parked|waiting|sitting|standing|lurking|hanging (?:round|around)|"
    r"outside|turn(?:s|ed|ing)? up|show(?:s|ed|ing)? up|shows up|turning up) (?:\w+ ){0,3}?(?:my|mi|me) (?:\w+ )?"
    r"(?:house|flat|building|work|school|street|door|gaff|place|job|gym|office|window|car|road)\b"
    r"|\b(?:turn(?:s|ed|ing)?|show(?:s|ed|ing)?) up (?:\w+ ){0,2}?(?:wherever|everywhere|whenever) i\b"
    r"|\bknows? (?:\w+ )?(?:where i (?:live|am|work|go|was|sleep)|what i (?:wore|was wearing|did)|my (?:new )?"
    r"address|things (?:he|she|they) shouldn't)"
    r"|\bnew accounts? to\b|\basking around for my (?:new )?address\b|\bhe'?s watching me\b|\bi watched you\b"
    r"|\bif (?:i|you) (?:run|ran|leave|left|try to leave|go)\b[^.!?]{0,30}\b(?:find|finds|found|hunt)\b"
    r"|\bphoto of me at\b|\b(?:same|his|her) car (?:has been )?behind me\b|\bbehind me (?:for|all|the whole)\b"
    r"|\btracker (?:\w+ )?(?:on|under|in) (?:my|the)\b|\bfound (?:out )?where i (?:live|am|work|'m staying)\b"
    r"|\bknows? when i'?m (?:alone|home|on my own)\b|\beverywhere i went\b|\bcomes? to find me\b"
    r"|\b(?:keeps?|kept) (?:\w+ )?showing up\b|\bturns? up and drags? me\b|\bcontrols? (?:all )?(?:the|my) money\b"
    r"|\bcan'?t (?:even )?(?:go|buy|leave|see) (?:\w+ ){0,3}?(?:alone|without (?:asking|him|her|permission))\b"
    r"|\bnever be rid of (?:him|her)\b|\bwhat i was wearing\b|\bcameras? in (?:all|the|every)\b"
    r"|\btake my money\b|\b(?:outside|sitting outside|parked outside) (?:ma|my|me) (?:yard|house|flat|place|building)\b"
    r"|\bwatching (?:my|ma) (?:window|house|flat|door)\b|\b(?:you'?re|you are) not going anywhere\b"
    r"|\bhid (?:my|ma) (?:shoes|keys|phone|passport|coat)\b|\bdon'?t see my (?:family|friends)\b"
    r"|\bgives? me (?:\w+ ){0,2}?(?:pounds|quid|dollars|euros|£\d+|\$\d+) a week\b|\bevery receipt\b"
    r"|\bdeleted (?:all )?my (?:mates|friends)\b|\bi have a key,? i can come in\b"
    r"|\b(?:always )?know where (?:you|u) are\b|\block(?:s|ed|ing)? (?:me|us) out\b"
    r"|\bso (?:teachers|people|nobody|no one|they|my \w+) (?:don't|can't|won't|doesn't) see (?:the|my) (?:marks|bruise"
    r"s)"
)
_CONTROL_SUPPORT = re.compile(
    r"\b(?:scared|afraid|terrified|frightened|feart|petrified|freak\w* me out|creep\w* me out|fear|unsafe|not safe|"
    r"don't feel safe|paranoid|threat\w*|regret|violent|hurt|hit|hits|gets? rough|ex|exes|stranger|older|man|"
    r"never told|didn't give|shouldn't|not allowed|isn't allowed|he's not allowed|she's not allowed|"
    r"restraining|protection order|police|ended up in a&e|hospital|before things got bad|won't stop|lock|"
    r"passport|angry|mad|red flag|dramatic|controls?|can't|cant|cannot|never told|without (?:asking|telling)|"
    r"at night|alone|on my own|months|twenty pounds|nothing|innocent explanation|coincidence)\b|😨|😰|😬|😳"
)

# -- danger right now -------------------------------------------------------------------------------------
_PLACES = (
    r"outside|at the (?:door|window)|at my (?:door|window)|downstairs|in the (?:house|hall|hallway|kitchen|living room"
    r")|"
    r"coming (?:back|home|over|for (?:me|us)|to get (?:me|us)|up the (?:road|stairs|drive|path))|on (?:his|her|their) "
    r"way|trying to (?:get in|break in|open|kick|get it open)|banging|kicking|breaking|pacing|standing (?:in|at|outsid"
    r"e|"
    r"by)|in (?:my|the|ma) (?:flat|house|room|next room|bathroom|kitchen|hallway|yard|garden)|in next room|in\.?$|"
    r"outside (?:my|ma|the|our) \w+|parked outside|on the other side of the door|blocking the door|counting down|"
    r"going (?:room to room|through the house)|smashing|at the (?:back |front )?window|five minutes away|minutes away|"
    r"sitting outside|following (?:me|us)|behind me|looking for (?:me|us)|by the (?:tills|door|window)"
)
_HERE = re.compile(
    r"\b(?:he's|she's|they're|hes|shes|(?:he|she|they|my (?:[\w'-]+ ){0,2}?(?:" + _AGENT_NOUN + r")s?)(?:'s| is| are|"
    r"'re|s)) (?:\w+ ){0,3}?(?:" + _PLACES + r")"
    r"|\b(?:he's|she's|they're|hes|shes|he is|she is|they are) here\b(?! to\b| for\b| with\b| now to\b)"
    r"|\b(?:he|she|they|someone) (?:just )?(?:texted|said|called|rang)? ?(?:\"|')?i'?m outside"
    r"|\b(?:kick|kicking|break|breaking|bang|banging|smash|smashing) (?:the |my )?(?:door|window)s? (?:in|down|open)"
    r"|\b(?:he|she|they|he's|she's|they're|hes|shes)(?:'s| is| are)? (?:\w+ ){0,2}?(?:in (?:my|the|ma) (?:flat|house|r"
    r"oom|"
    r"next room|bathroom|kitchen|car|hallway|yard|garden)|outside (?:my|ma|the|our) \w+|on the other side of the door|"
    r"blocking the door|counting down|hitting the door|at the bottom of the stairs|downstairs|got the (?:hammer|knife|"
    r"bat|axe|gun|blade))"
    r"|\b(?:is|are|'s|been) (?:sitting|waiting|standing|parked) (?:\w+ ){0,3}?outside\b"
    r"|\b(?:we are|we're) downstairs\b|\b(?:outside|deh outside) (?:a )?bang\w* (?:di|the) door\b"
    r"|\b(?:in|into) (?:my|ma|the) (?:flat|house|room) right now\b|\bis (?:break|breaking) the window\b"
)
_HIDING = re.compile(
    r"\b(?:hid|hide|hiding|i'?m hiding|locked (?:myself|us|the door)|barricad\w*|chair under the handle|"
    r"under (?:my|the) bed|(?:in|into) the (?:bathroom|toilet|wardrobe|closet|cupboard|garden|car|loo)|ran (?:in|out|"
    r"into|to)|got away|managed to get away|crouched|call (?:the )?(?:police|cops|999|911|someone)|scared|"
    r"terrified|afraid|oh god|what do i do|what should i do|i go where|drunk|angry|knife|gun|hammer|weapon|"
    r"finish|hurt|kill|choking|hitting|hit me|pushed|pinned|grabbed|baby|alone|on my own|on ma own|lights off|"
    r"locked|bat|axe|can't (?:really )?talk|calm\w* down|moods?|petrol|burn|bleed|done|stairwell|"
    r"can't call|call anyone|no credit|help us)\b|\bhelp me\s*(?:[.!]|$)|\b(?:please|pls|plz) help\b|\bhelp\s*(?:[.!]|"
    r"$)"
)

# -- weapons -----------------------------------------------------------------------------------------------
_WEAPON = re.compile(
    r"\b(?:gun|guns|shotgun|rifle|pistol|handgun|knife|knives|machete|hammer|axe|blade|crowbar|baseball bat|"
    r"bat)\b"
)
_WEAPON_ACT = re.compile(
    r"\b(?:showed|shows|show|laid|lays|put|puts|placed|pointed|points|pointing|held|holding|holds|waving|waved|"
    r"pulled|pulls|took out|takes out|brandish\w*|tapp\w*|sharpen\w*|with (?:a|an|the|his|her))\b"
)
_CONFLICT = re.compile(
    r"\b(?:argu\w*|fight\w*|fought|angry|mad|rage|threat\w*|divorce|leave|leaving|left|scared|afraid|terrified|"
    r"just so you know|warn\w*|sit down|don't move|not move|drunk|mood|yelling|"
    r"screaming|custody|police|made sure i saw|at me)\b"
)

# -- fear of a person ---------------------------------------------------------------------------------------
_FEAR_OF = re.compile(
    r"\b(?:scared|afraid|terrified|frightened|feart|petrified|fear(?:ful)?) (?:of|for my life from) (?:him|her|them|"
    r"my (?:[\w'-]+ ){0,2}?(?:" + _AGENT_NOUN + r")s?)\b(?! (?:finding out|seeing|knowing|being disappointed|"
    r"judging|thinking|leaving|getting|reaction|reacting|being upset))"
    r"|\b(?:scared|afraid|terrified|feart|frightened) tae go (?:back )?hame\b"
    r"|\b(?:scared|afraid|terrified|fear) (?:for|of losing) my life\b"
    r"|\b(?:scared|afraid|terrified) (?:of )?what (?:he|she|they)(?:'ll| will| might| would|'d) do\b"
)

#: A death threat quoted in the second person ("he leaned over and said 'i will kill you, and the kids'").
_QUOTED_KILL = re.compile(
    r"\bi(?:'ll| will|'m going to| am going to|'m gonna| am gonna|'d| would|ll) (?:\w+ )?(?:kill|murder|end|finish|"
    r"bury|strangle|stab|shoot|drown|burn) (?:you|u|ya|y'all|the (?:both|lot) of you)\b"
)
_SPEECH = re.compile(
    r"\b(?:said|says|say|sed|seh|told|tells|texted|texts|txted|messaged|wrote|swore|screamed|yelled|shouted|"
    r"whispered|muttered|goes|went|voicemail|voice ?note|note|message|text|letter|words were|threaten\w*)\b|[\"']"
)
#: The person here now, giving orders or promising what happens when they return.
_ORDER = re.compile(
    r"\bwhen (?:he|she|they) (?:gets? back|wakes? up|comes? back|gets? home|gets? in|is back|'s back)\b[^.!?]{0,40}?"
    r"\b(?:finished|dead|done|round (?:2|two)|better|regret|sorry|see|wait)\b"
    r"|\b(?:i|you|u)(?:'d)? better (?:not )?(?:be|have) (?:here|home|on|off|gone|ready)\b"
    r"|\b(?:told|tells|ordered) me (?:not to move|to sit (?:down )?and wait|not to leave|to stay)\b"
    r"|\b(?:i'll|i will) wait\.? you have to come out\b|\bdon'?t bother locking\b"
    r"|\bopen (?:this|the) door or\b|\bor (?:i'm|i am|we) (?:coming|come) (?:through|up|in)\b"
    r"|\bno one (?:leaves|is leaving|leaving) tonight\b|\bnot leaving until\b"
    r"|\b(?:smash\w*|broke|breaking|punch\w*|put (?:his|her) fist) (?:\w+ ){0,3}?(?:door|window|television|tv|"
    r"glass|wall|stuff|things|plates)\b(?=[^.!?]{0,80}(?:looking for|calling my name|hiding|hide|scared|where do i|"
    r"idk where|round (?:2|two)|when he's back|wardrobe|under))"
    r"|\b(?:went|gone|going) (?:out )?(?:to the (?:shed|garage|car|kitchen)|for the (?:axe|knife|gun|hammer|bat))"
    r"(?=[^.!?]{0,60}(?:axe|knife|gun|hammer|bat|not to move|better|phone))"
    r"|\bcut the power\b|\b(?:is|he's|she's) kicking it\b|\blooking for (?:us|me)\b"
)

# -- supports for idiom-shaped threats, and trivial causes ---------------------------------------------------
_STRONG = re.compile(
    r"\b(?:scared|afraid|terrified|frightened|feart|petrified|shaking|can't sleep|cannot sleep|lie awake|not safe|"
    r"don't feel safe|unsafe|believe (?:him|her|them)|means it|meant it|not (?:joking|kidding|bluffing|laughing)|"
    r"isn't (?:joking|kidding)|wasn't (?:joking|kidding)|no the type|not the type|the type tae|done (?:it|stuff|"
    r"worse|that) before|did it before|hit me|hits me|hurt me|hurts me|knife|gun|shotgun|weapon|police|cops|"
    r"restraining|protection order|refuge|shelter|help me (?:get away|leave|escape|be safe)|threat\w*|voicemails?|"
    r"voice ?notes?|voice ?mails?|custody|court|hearing|passport|locked|a&e|hospital|"
    r"bruise\w*|what should i do|what do i do|overreacting|believe it|serious|for real|dead serious|numb|"
    r"never said it like that|keep replaying|replaying it)\b"
)
_WEAK = re.compile(
    r"\b(?:if|when|before|unless) (?:i|you|u) (?:ever |even |try to |tries to |dare |so much as )?(?:leave|left|"
    r"go (?:to|out|near|back|anywhere)|go|tell|told|call|ring|report|talk|speak|see|run|take|move|divorce|testify|"
    r"don't|do not|dont|text|message|look at|break up)\b"
    r"|\b(?:again|every time|each time|times now|several times|many times|a few times|three times|keeps?|"
    r"texted|texts|messaged|messages|wrote|note|drinks|drunk|one day|next time|whenever|yelling|screaming|"
    r"shouting|angry|rage|temper|sorry afterwards|says sorry|in my sleep|while i sleep|while i'm asleep|said|says|"
    r"told me|tells me|telling me|swore|warned|warns)\b"
    r"|\b(?:please|pls|plz) help(?: me)?\s*(?:[.!]|$)|\bhelp\s*$|\bi need help\b(?! with)"
)
_TRIVIAL = re.compile(
    r"\b(?:late|lateness|bill|bills|grades?|exam|test|homework|spoil\w*|mess|dent|scratch|forgot|forget|eat|ate|"
    r"eating|chocolate|chocolates|cake|biscuits|diet|score|curfew|wedding|dress|haircut|tattoo|shopping|spent|"
    r"spend|credit card|bought|buy|netflix|episode|fries|chips|pizza|snack|snacks|match|game|goal|penalty|remote|"
    r"sofa|couch|carpet|paint|laundry|dishes|report card|parking|ticket|speeding|fine|lol|lmao|haha|jk|joke|"
    r"joking|kidding|banter|laughing|laughed|sees (?:this|the|my|what)|see (?:this|the|my|what)|when (?:he|she|they) "
    r"(?:sees|finds out|hears|notices)|new (?:car|bag|shoes|phone|tv)|broke (?:his|her|the|their) \w+|lost (?:his|"
    r"her|the|their) \w+|borrowed|crashed|(?:his|her) (?:\w+ )?(?:car|vase|mug|charger|hoodie|jumper|console|ps5|xbox)|"
    r"sister's|surprise|party|birthday|recipe|anniversary|present|gift|hilarious|funny|mum and dad|"
    r"holiday|tan|sunburn|hum|humming|jingle|song|sing|singing|snore|snoring|deck|slides|presentation|deadline|"
    r"meeting|free kick|to everyone|softie|nicest possible|xbox|playstation|nephew|niece|"
    r"straighteners|hairbrush|hen do|stag do|curry|leftovers?|takeaway|motorbike|golf|ha(?:ha)+|lo+l|lmf?ao+|hob|"
    r"milk|stapler|jigsaw|monopoly|snored?|carpet|drill|risotto|potato|beer|shoes|song|tattoo)\b"
    r"|🤣|😂|😅"
)

# -- guards ---------------------------------------------------------------------------------------------------
_OVER = re.compile(
    r"\b(?:(?:in|to|from) (?:prison|jail|gaol)|locked up|behind bars|serving (?:life|time|\w+ years)|deported|"
    r"passed away|died|is dead|he's dead|she's dead|years ago|year ago|when i was (?:a kid|little|"
    r"younger|a child|a teen|a teenager|small|\d+|in)|as a (?:kid|child|teen|teenager)|(?:i'm|i am|we're|we are|"
    r"feel|now) safe|safe now|no contact|haven't (?:seen|heard from)|hasn't (?:contacted|been in touch)|moved "
    r"(?:away|on)|left (?:him|her|them) (?:\w+ )?(?:years|months|ago|in)|got out|divorced|"
    r"(?:restraining|protection|non-molestation) order (?:is )?(?:holding|works|worked|has held|in place)|"
    r"therapy|therapist|counsell\w*|healing|survivor|back then|at the time|these days i|in the past|"
    r"long time ago|finally free|free of (?:him|her)|in (?:19|20)\d\d|grew up|growing up|long gone|back in (?:uni|"
    r"school|college|the day)|conviction|(?:i'm|im|i am) fine now|divorce is finish\w*|since \w+ years|"
    r"(?:i am|i'm|im) divorce\w*|nobody controls? me|blocked (?:him )?everywhere|new city|my (?:first|old|former) "
    r"(?:husband|wife|partner|boyfriend|girlfriend)|^before,|\w+ (?:yrs|years|months) ago|convicted|"
    r"(?:doesn't|doesnt|does not|has no idea|no idea) (?:know |no )?where (?:i|we) live|new locks|gone now|"
    r"(?:he's|she's|he is|she is) gone|broke up|thriving|married with kids|(?:i'm|im|i am) ok now|injunction|"
    r"emigrated|long dead|prosecuted|sentenced|(?:went|sent|got sent) to prison|died (?:inside|in prison)|"
    r"(?:moved|lives?|living) (?:abroad|overseas|to another country|in another country|far away)|"
    r"haven't laid eyes|ever since|not allowed near (?:me|us)|doesn't live with us anymore|different (?:country|"
    r"surname)|eleven years|(?:ten|twelve|fifteen|twenty) years|a decade|decades)\b"
)
_NOW = re.compile(
    r"\b(?:(?:did it|doing it|happened|started|at it|hit me|hurt me|hitting me|texting|calling|outside|here|"
    r"following me|turned up|showed up|threatened me|choked me) again|right now|tonight|this morning|last night|yester"
    r"day|this week|these days he|keeps (?:texting|"
    r"calling|turning|showing|messaging|saying|coming)|just (?:now|texted|said|found|got|came)|on his way|"
    r"outside my|at the door|what do i do|what should i do|won't stop|new address|"
    r"when he gets out|gets out (?:on|next|in))\b"
)
_FRAME_OUT = re.compile(
    r"\b(?:movie|film|show|series|episode|book|novel|story|thriller|script|screenplay|scene|character|my character|"
    r"villain|protagonist|plot|chapter|game|gaming|in-game|npc|raid|role-?play|roleplay|rp|d&d|dnd|"
    r"dungeon|campaign|larp|podcast|true crime|documentary|essay on|essay about|coursework|assignment on|"
    r"dissertation|rehearsal|audition|actor|actress|cosplay|fanfic|fanfiction|"
    r"sparring|spar|boxing|boxer|judo|jiu|jitsu|bjj|karate|mma|kickboxing|taekwondo|wrestl\w*|rugby|football|"
    r"soccer|hockey|paintball|airsoft|laser tag|fencing|dojo|sensei|tournament|opponent|referee|tackle\w*|scrum|"
    r"pillow fight|play ?fight\w*|tickl\w*|puppy|kitten|the dog|my dog|the cat|my cat|toddler|"
    r"patient|patients|client|clients|resident|residents|caller|callers|defendant|inmate|prisoner|offender|"
    r"perpetrator|victims?|survivors?|service users?|murder mystery|escape room|haunted|solicitor|lawyer|barrister|"
    r"leg day|sprints|workout|personal trainer|in hysterics|"
    r"paralegal|witness statement|non-molestation|narrator|audiobook|memoir|krav|maga|the mat|on the mat|"
    r"self-defen\w*|grappl\w*|carv\w*|roast|recipe|chopping|butcher\w*|cooking|baking|jammed|stuck|"
    r"crying laughing|wee one|little one|newborn|to sell me|gun safe|gun cabinet|licen[cs]e|hunting|shooting "
    r"range|the range|ammo|deer|rabbits|clay|fell|fall|falling|tripped|slipped|accident\w*|derby|netball|"
    r"bouldering|climbing|skating|skateboard\w*|pruning|gardening|shears|case ?load|my shift|on shift|a&e nurse|the wa"
    r"rd|"
    r"on the ward|paramedic|officer|interpreter|usher|court today|in court|hypothetical\w*|lyrics|song|rap "
    r"battle|meme|prank)\b"
)

_SENT = re.compile(r"(?<=[.!?;])\s+|\n+")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENT.split(text) if s.strip()]


_NEG_LEFT = re.compile(r"\b(?:not|never|no|nor|no longer|\w+n't|dont|doesnt|didnt|wont|wouldnt|hasnt|havent)\b")


def _negated(sent: str, m: re.Match[str]) -> bool:
    """A negator among the three words before the act ("he has never ... hit me" is no match: the agent-led
    patterns allow no negator between the person and the act)."""
    left = " ".join(clause_left(sent, m.start()).split()[-3:])
    return _NEG_LEFT.search(left) is not None


#: Past markers that only speak for their own sentence ("the lads i used to sell for said they'll break my hands").
_OVER_SENT = re.compile(r"\b(?:used to|back then|at the time|once,|one time)\b")


#: The other person is a small child, an animal or someone who does not know what they do: not danger.
_NOT_AGENT = re.compile(
    r"\b(?:stray|toddler|dementia|alzheimer\w*|my puppy|the puppy|kitten|two-year-old|three-year-old)\b"
)
_NEG_IN = re.compile(r"\b(?:never|not|no longer|\w+n't|wont|dont|didnt|doesnt|wouldnt)\b")


#: The alarming presence explained as someone harmless ("a man's been parked outside ... it's my driving instructor").
_EXPLAINED = re.compile(
    r"\b(?:it'?s|it was|turned out (?:to be |it was )?|turns out (?:it'?s )?|realised it'?s|realized it'?s|"
    r"i realised|i realized)(?: just| only| actually)? (?:my|the|a|an|our) (?:new )?(?:cousin|friend|neighbou?r|"
    r"(?:driving )?instructor|(?:crossing )?guard|courier|postman|postie|delivery|fox|cat|dog|engineer|meter|"
    r"council|surveyor|builder|plumber|electrician|gardener)\b"
)


def _kept(text: str, sent: str, prev: str, m: re.Match[str]) -> bool:
    """The act is not negated, not in a film, game, sport or a professional's case (this sentence or the one
    before), and not over (the turn says so and says nothing of now)."""
    if _negated(sent, m) or _NOT_AGENT.search(text):
        return False
    if _FRAME_OUT.search(sent) or _FRAME_OUT.search(prev):
        return False
    over = _OVER.search(text) is not None or _OVER_SENT.search(sent) is not None
    return not (over and not _NOW.search(text))


#: Death threats also said in jest ("she'll bury me under the patio if i ruin her trifle"): a trivial cause voids them.
_JEST = re.compile(r"bury|grave|disappear|dead (?:wo)?man|\bdo (?:me|you) in|finish|ground|\bdone\b|box")


def _supported(text: str) -> bool:
    """An idiom-shaped threat is meant: strong support, or weak support and no trivial cause."""
    if _STRONG.search(text):
        return True
    return _WEAK.search(text) is not None and _TRIVIAL.search(text) is None


def _finding(kind: str, severity: str, sent: str, m: re.Match[str]) -> Finding:
    a, b = max(0, m.start() - 25), min(len(sent), m.end() + 25)
    ev = sent[a:b].strip(" ,.;:!?\"'")
    return Finding(DANGER, severity, ev if len(ev) <= 90 else ev[:89] + "\u2026", f"danger:{kind}")  # type: ignore[arg-type]


def _holds(kind: str, idiomatic: bool, text: str, sent: str, prev: str, m: re.Match[str]) -> bool:
    """One match of a frame survives its guards (``sent`` its sentence, ``prev`` the one before)."""
    if (
        (idiomatic or kind in ("threat_harm", "quoted_kill") or _JEST.search(m.group()))
        and _TRIVIAL.search(prev + " " + sent)
        and not _STRONG.search(text)
    ):
        return False  # "my mother-in-law will bury me under the patio if i mess up her trifle"
    if kind == "quoted_kill" and not _SPEECH.search(text):
        return False
    if kind == "control_soft" and not _CONTROL_SUPPORT.search(text):
        return False
    if kind in ("control_soft", "immediate", "fear") and _EXPLAINED.search(text):
        return False
    if kind == "immediate" and not _HIDING.search(text):
        return False
    if kind == "weapon" and not (_WEAPON_ACT.search(sent) and _CONFLICT.search(text)):
        return False
    if not _kept(text, sent, prev, m):
        return False
    return not (kind in _AGENT_LED and _NEG_IN.search(m.group()))  # "he'd never hit me"


@lru_cache(maxsize=4096)
def danger_findings(text: str) -> tuple[Finding, ...]:
    """The most severe danger-from-others finding of a normalised user turn (empty, or one Finding)."""
    on = _DGATE.classes(text)
    if not on:
        return ()
    found: list[Finding] = []
    agent_in_text = _AGENT_RX.search(text) is not None
    prev = ""
    for sent in _sentences(text):
        for kind, severity, rx, needs_agent, idiomatic in _FRAMES:
            if kind not in on or (needs_agent and not agent_in_text) or (idiomatic and not _supported(text)):
                continue
            # every match of the frame in the sentence, not only the first: a guarded first match ("he'd never hit
            # me") must not hide a later one ("... but last night he hit me and said he'd kill me")
            m = next((x for x in rx.finditer(sent) if _holds(kind, idiomatic, text, sent, prev, x)), None)
            if m is None:
                continue
            sev = severity
            if kind == "violence" and _LETHAL.search(m.group()):
                sev = "critical"
            found.append(_finding(_KIND_NAME.get(kind, kind), sev, sent, m))
            if sev == "critical":
                return (found[-1],)
        prev = sent
    if not found:
        return ()
    return (found[0],)


_HERE_CUE = re.compile(
    r"\b(?:"
    + _PLACES.replace(r"|in\.?$", "")
    + r")|\bhere\b|i'?m outside|\b(?:kick|kicking|break|breaking|bang|banging|smash|smashing) "
    r"(?:the |my )?(?:door|window)|\bin (?:my|the|ma) (?:flat|house|room|next room|bathroom|kitchen|car|hallway|yard|"
    r"garden)|\b(?:he's|she's|they're|hes|shes|he is|she is) in\.?$|\boutside\b|\bon the other side of the door|\bbloc"
    r"king the door|\bcounting down|\bhitting the door|"
    r"\bat the bottom of the stairs|\bdownstairs|\bgot the (?:hammer|knife|bat|axe|gun|blade)|\b(?:sitting|waiting|"
    r"standing|parked)\b|\bbang|\bright now\b|\bbreak(?:ing)? the window"
)
#: Frames whose match runs from the other person to the act: a negator inside it denies the act.
_AGENT_LED = frozenset({"threat_kill_idiomatic", "threat_harm_idiomatic", "violence"})

_KIND_NAME = {
    "threat_kill": "threat_to_kill",
    "threat_kill_idiomatic": "threat_to_kill",
    "dead_you": "threat_to_kill",
    "quoted_kill": "threat_to_kill",
    "threat_harm": "threat_to_harm",
    "threat_harm_idiomatic": "threat_to_harm",
    "immediate_order": "immediate",
    "control_soft": "control",
    "violence_passive": "violence",
}

_FRAMES: tuple[tuple[str, str, re.Pattern[str], bool, bool], ...] = (
    # (kind, severity, pattern, needs another person named in the turn, idiom-shaped)
    ("threat_kill", "critical", _KILL_PLAIN, True, False),
    ("threat_kill_idiomatic", "critical", _KILL_IDIOMATIC, False, True),
    ("dead_you", "critical", _DEAD_YOU, True, True),
    ("quoted_kill", "critical", _QUOTED_KILL, True, True),
    ("immediate_order", "critical", _ORDER, True, False),
    ("immediate", "critical", _HERE, False, False),
    ("weapon", "critical", _WEAPON, True, False),
    ("violence", "high", _VIOLENCE, True, False),
    ("violence_passive", "high", _PASSIVE, False, False),
    ("sexual", "high", _SEXUAL, False, False),
    ("threat_harm", "high", _HARM_PLAIN, True, False),
    ("threat_harm_idiomatic", "high", _HARM_IDIOMATIC, False, True),
    ("control", "high", _CONTROL_HARD, False, False),
    ("control_soft", "high", _CONTROL_SOFT, True, False),
    ("fear", "high", _FEAR_OF, False, False),
)

#: What must be in a turn for each frame to match (the frame itself, or for frames that start with the other
#: person, the act that must follow): one trie scan (``_gate.Gate``) picks the frames worth running, so an everyday
#: turn costs a few microseconds; ``tests/test_danger.py`` checks on every labelled text that it skips no match.
CUES: dict[str, re.Pattern[str]] = {kind: rx for kind, _, rx, _, _ in _FRAMES}
CUES.update(
    threat_kill_idiomatic=re.compile(r"\b" + _KILL_IDIOM_V),
    threat_harm_idiomatic=re.compile(r"\b" + _HARM_IDIOM_V),
    violence=_VIOLENCE_CUE,
    immediate=_HERE_CUE,
)


def _cue(rx: re.Pattern[str], *swaps: tuple[str, str]) -> re.Pattern[str]:
    """``rx`` with leading everyday words of some alternatives swapped for the words they must be followed by: the
    result matches wherever ``rx`` does (a necessary condition), and its literal prefixes are rare words."""
    src = rx.pattern
    for old, new in swaps:
        if old not in src:
            raise ValueError(f"cue swap not in pattern: {old[:40]!r}")
        src = src.replace(old, new)
    return re.compile(src)


_VERBS_OF_TAKING = (
    r"\b(?:tak(?:e|es|en|ing)|took|tuk|has|have|keeps?|kept|hid(?:es|den)?|holds?|holding|confiscat\w*|lock(?:s|ed)? "
    r"up|stole|steals?) (?:\w+ ){0,2}?(?:my|mi|ma) (?:\w+ )?"
)
CUES.update(
    violence_passive=re.compile(_PASSIVE_HIT),
    control=_cue(
        _CONTROL_HARD,
        (_VERBS_OF_TAKING, r"\b"),
        (r"\b(?:not|never|n't|no) (?:\w+ )?allowed", r"\ballowed"),
        (r"\b(?:won't|doesn't|don't|will not|does not|wont|dont|doesnt|didn't|didnt) let", r"\blet"),
    ),
    control_soft=_cue(
        _CONTROL_SOFT,
        (
            r"\b(?:tak(?:e|es|en|ing)|took|tuk|has|have|keeps?|kept|hid(?:es|den)?|holds?|holding|confiscat\w*|stole|"
            r"steals?|check(?:s|ed)?|goes through|reads?) (?:\w+ ){0,2}?(?:my|mi|ma) (?:\w+ )?",
            r"\b",
        ),
        (r"\bknows? (?:\w+ )?(?:where i", r"\b(?:where i"),
    ),
    threat_harm=_cue(
        _HARM_PLAIN, (r"(?:\b(?:'ll|will|would|'d|going to|gonna|threaten\w* to)|\b(?:shell|hell)) (?:\w+ )?", r"\b")
    ),
    sexual=_cue(
        _SEXUAL,
        (r"(?:didn't|wouldn't|won't|doesn't|did not|would not|never) stop", r"stop"),
        (r"(?:doesn't|does not|don't|won't) (?:\w+ )?take no", r"take no"),
    ),
)
_DGATE = Gate(CUES)
