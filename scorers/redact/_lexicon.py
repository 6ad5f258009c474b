"""Word lists behind the name heuristics and the phone allow-list.

Kept as data next to the patterns so a false positive is fixed by adding a word, not by editing a regex.
"""

from __future__ import annotations

#: Family, social and care relations: "my sister Anna", "her therapist Dr Lee".
RELATIONS: tuple[str, ...] = (
    "mother", "mom", "mum", "mommy", "mummy", "mama", "father", "dad", "daddy", "papa", "parent",
    "sister", "brother", "sibling", "son", "daughter", "child", "kid", "baby", "wife", "husband",
    "spouse", "partner", "boyfriend", "girlfriend", "fiance", "fiancé", "fiancee", "fiancée", "ex",
    "friend", "bestie", "buddy", "mate", "pal", "roommate", "flatmate", "housemate", "neighbour",
    "neighbor", "boss", "manager", "supervisor", "colleague", "coworker", "co-worker", "teacher",
    "tutor", "coach", "professor", "therapist", "counsellor", "counselor", "psychiatrist",
    "psychologist", "doctor", "gp", "nurse", "social worker", "caseworker", "carer", "caregiver",
    "cousin", "aunt", "auntie", "aunty", "uncle", "niece", "nephew", "grandma", "grandmother", "gran",
    "granny", "nan", "nana", "grandpa", "grandfather", "grandad", "granddad", "grandson",
    "granddaughter", "stepmom", "stepmum", "stepdad", "stepfather", "stepmother", "stepson",
    "stepdaughter", "stepbrother", "stepsister", "in-law", "mother-in-law", "father-in-law",
    "sister-in-law", "brother-in-law", "landlord", "landlady", "pastor", "priest", "sponsor", "dog",
    "cat", "puppy", "kitten", "pet",
)  # fmt: skip

#: Capitalised tokens that are not names: what follows "I'm", "my friend", "Dr" when it is not a name.
#: Lower case. Function words, feelings and states, common verbs and adverbs (title-cased or
#: sentence-initial text), time words, and the help services a reply may name (never redacted).
_COMMON = """
    a about above absolutely actually after again against ago ahead all almost alone along already alright also
    although always am an and angry another anxious any anybody anymore anyone anything anyway anyways
    apparently are around as ashamed asleep at autistic available awake aware away awful back bad basically be
    because been before behind being better between bi big bisexual black blessed bored both broke broken
    busy but by calm came can cannot cant can't certainly clean close closer coming completely confused
    constantly could couldn't crazy crying currently dead definitely depressed desperate did didn't
    different disabled divorced do does doesn't doing done down drained drunk dumb dying each early else
    embarrassed empty enough even ever every everybody everyone everything exactly exhausted fat fed feeling
    fine finally first for forever free frightened from frustrated full fully furious gay getting glad
    going gone good got gotta great grateful guilty had half happy hard has hate hating have haven't having
    he healthy hello help helpless her here hers hey hi high him his home honest honestly hopeless hoping
    how hungry hurt hurting i if ill im in insane instead into is isn't it its just keen kind kinda
    late lately leaving like literally little living lonely lost lucky mad making married maybe me mean
    meant messed might mine miserable more most mostly much must my myself naturally nearly needing
    nervous never new next nice no nobody none nope normal not nothing now numb obviously of off ok okay
    old on once one only open or other our out over overwhelmed paranoid partly past perfectly physically
    please pointless poor pregnant pretty probably proud quite ready real really relieved right sad safe
    same scared seeing seriously she should sick since single sleeping sleepy slowly so some somebody
    someone something sometimes somewhat sorry sort starting stressed still straight struggling stuck
    stupid such super supposed sure surely taking talking terrible terrified thankful thanks that the
    their them then there these they thinking this those though through tired to today together tomorrow
    tonight too totally trans trapped truly trying ugly um uh under unemployed unhappy unsure until up
    upset us useless usually very waiting was wasn't we weak weird well were what whatever when where
    which while white who whole why will willing with without wondering working worn worried worse
    worthless would wouldn't wrong yeah yes yesterday yet you your yours
    said says say told tells tell thinks think thought wants wanted want keeps kept gets got went goes
    came comes left makes made called calls asked asks yelled yells died dies passed loves loved hates
    hated knows knew needs needed tried tries does did will would could should shall may might must
    and or nor but also always never just only even still already again often
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december christmas easter weekend morning afternoon evening night
    god lord jesus allah heaven hell mom mum dad mommy mummy daddy mama papa grandma grandpa nan nana
    sir madam mister miss doctor doc nurse therapist counsellor counselor teacher boss officer
    samaritans shout childline papyrus mind lifeline crisis helpline hotline nhs police ambulance
    emergency hospital gp er 988 911 999 112 111 beyond blue text line services support
    english american british french spanish german indian chinese muslim christian jewish catholic
    covid adhd ocd ptsd bpd
    afraid suicidal gonna wanna gotta goodbye bye hits hit beats beat took takes pushed pushes kicks kicked
    slapped punched choked chokes threatened threatens abused abuses raped hurts scares scared touches touched
    doesn don won isn didn wasn aren weren shouldn wouldn couldn hasn haven
    """
COMMON_WORDS: frozenset[str] = frozenset(_COMMON.split())

#: Crisis lines and other services a reply may give: never redacted (normalised digits, national form).
HELPLINES: frozenset[str] = frozenset(
    {
        "988", "911", "999", "112", "111", "000", "116123", "116111", "116117", "741741", "85258",
        "18002738255", "8002738255", "18006624357", "8006624357", "18007997233", "8007997233",
        "18334564566", "8334564566", "18662974", "131114", "1300224636", "0800111", "08001111",
        "08000684141", "08088024", "08457909090", "03001233393", "0300123339",
    }
)  # fmt: skip

#: Free-phone prefixes (national form): organisations, never a person's own number.
TOLL_FREE_PREFIXES: tuple[str, ...] = (
    "1800", "1888", "1877", "1866", "1855", "1844", "1833",
    "800", "888", "877", "866", "855", "844", "833",
    "0800", "0808", "0500", "1300",
)  # fmt: skip

#: Two-letter US state codes: "Springfield, IL 62704" makes 62704 a ZIP.
_STATES = (
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND "
    "OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY"
)
US_STATES: tuple[str, ...] = tuple(_STATES.split())

STREET_SUFFIXES: tuple[str, ...] = (
    "street", "st", "road", "rd", "avenue", "ave", "lane", "ln", "drive", "dr", "boulevard", "blvd",
    "court", "ct", "close", "way", "place", "pl", "terrace", "crescent", "gardens", "square", "sq",
    "grove", "parkway", "pkwy", "highway", "hwy", "circle", "cir", "mews", "row", "walk", "hill",
    "park", "rise", "view", "trail", "loop",
)  # fmt: skip
