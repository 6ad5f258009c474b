"""Word classes shared by the pattern tables, substituted into patterns as ``%(NAME)s`` macros.

All of them are written against :func:`normalise` output (lower case, canonical contractions).
"""

from __future__ import annotations

from .._text import trie_pattern

# Fillers allowed between a first-person subject and its verb ("i just really want to ...").
# Negators are included on purpose: the pattern still matches and the negation guard then decides,
# so "i don't want to die" is seen, and rejected, rather than silently never matched.
ADV = (
    r"(?:(?:really|just|honestly|actually|sometimes|still|kind of|sort of|literally|seriously|genuinely|"
    r"truly|do|so|often|always|also|lowkey|tbh|fr|even|almost|now|already|again|only|constantly|"
    r"keep|kept|would|could|might|may|will|think i|feel like i|feel like|don't|didn't|never|not|"
    r"won't|wouldn't|can't|no longer|been)\s+){0,4}"
)

# First-person subjects of ideation.
SUBJ = r"(?:\bi|\bpart of me|\bsome part of me|\ba part of me)"

# Volition verbs before "die" / "overdose" ("want to", "wish i could", "thinking about"...).
# "going to" / "about to" are absent on purpose: "i'm going to die in surgery" is fear, not intent.
WANT_TO = (
    r"(?:want(?:s|ed|ing)? to|wish(?:es|ed)? (?:i could|to)|need(?:s|ed)? to|(?:i'm |am )?ready to|"
    r"deserve(?:s|d)? to|plan(?:s|ning|ned)? to|(?:i'm |am )?trying to|tried to|hope to|would like to|"
    r"'d like to|(?:i'm |am )?thinking (?:about|of)|think about|thought about|(?:i'm |am )?considering)"
)
# Intent for acts that have no idiomatic reading ("i'm going to overdose").
INTEND = "(?:" + WANT_TO[3:-1] + r"|(?:i'm |am )?going to|(?:i'm |am )?about to|might|could|will|'ll)"

# Relations whose words make a third-party disclosure personal ("my sister said ...").
REL_WORDS: tuple[str, ...] = (
    "best friend", "friend", "bestie", "bff", "bf", "gf", "boyfriend", "girlfriend", "partner", "husband",
    "wife", "spouse", "fiance", "fiancee", "ex", "sister", "brother", "sibling", "mom", "mum", "mother",
    "dad", "father", "stepdad", "step dad", "stepfather", "stepmom", "step mom", "stepmother", "parent",
    "son", "daughter", "kid", "child", "teen", "teenager", "roommate", "flatmate", "housemate", "cousin",
    "aunt", "uncle", "niece", "nephew", "grandma", "grandpa", "grandmother", "grandfather", "coworker",
    "co-worker", "colleague", "classmate", "student", "client", "neighbor", "neighbour", "boss", "manager",
    "teacher", "coach", "landlord",
)  # fmt: skip
REL = "(?:" + trie_pattern(REL_WORDS) + ")s?"
#: Literal cue stems covering every word REL can match (for the prefilter).
REL_CUES: tuple[str, ...] = tuple(sorted({w.split()[-1] if w.startswith("best") else w for w in REL_WORDS}))

# Medicines and drugs whose quantity matters for overdose ("a bottle of ...", "how many ...").
DRUG = (
    r"(?:pills?|tablets?|capsules?|meds|medications?|medicines?|sleeping pills|sleeping tablets|painkillers|"
    r"pain killers|tylenol|paracetamol|acetaminophen|ibuprofen|advil|aspirin|panadol|xanax|valium|"
    r"benzos?|ambien|zopiclone|oxy(?:codone|contin)?|opioids?|fentanyl|heroin|insulin|antidepressants?|"
    r"sertraline|zoloft|prozac|fluoxetine|lexapro|citalopram|lithium|seroquel|quetiapine|"
    r"anti-?anxiety meds|anxiety meds|sleep meds|pain meds|blood pressure (?:pills|meds))"
)

#: Literal cue stems covering every word DRUG can match.
DRUG_CUES: tuple[str, ...] = (
    "pill", "tablet", "capsule", "meds", "medication", "medicine", "sleeping", "painkiller", "pain", "tylenol",
    "paracetamol", "acetaminophen", "ibuprofen", "advil", "aspirin", "panadol", "xanax", "valium", "benzo",
    "ambien", "zopiclone", "oxy", "opioid", "fentanyl", "heroin", "insulin", "antidepressant", "sertraline",
    "zoloft", "prozac", "fluoxetine", "lexapro", "citalopram", "lithium", "seroquel", "quetiapine", "anti",
    "anxiety", "sleep", "blood",
)  # fmt: skip

# Counting words for "took 20 tylenol".
MANY = r"(?:[1-9]\d+|twenty|thirty|forty|fifty|sixty|a hundred|hundred|dozens of|a dozen)"

# Diagnosable conditions, for the pseudo-diagnosis pattern (seed 001 CQ8, seed 000 safety 2).
DISORDER = (
    r"(?:clinical (?:depression|anxiety)|(?:major )?depressive disorder|depression|mdd|"
    r"(?:generali[sz]ed |social )?anxiety disorder|gad|panic disorder|bipolar(?: disorder)?|bpd|"
    r"borderline(?: personality disorder)?|c-?ptsd|ptsd|ocd|adhd|autism|asperger'?s|schizophrenia|"
    r"psychosis|narcissistic personality disorder|npd|anorexia|bulimia|an eating disorder|"
    r"an? (?:\w+ )?(?:personality |mood |anxiety |attachment |eating )?disorder|dissociative identity disorder|"
    r"did\b|seasonal affective disorder|postpartum depression|dysthymia)"
)
# Bare "anxiety" is everyday language; it only counts as a diagnosis after a certainty marker.
CERTAIN = r"(?:clearly|definitely|obviously|certainly|undoubtedly|probably|most likely|likely|must)"

MACROS: dict[str, str] = {
    "ADV": ADV,
    "SUBJ": SUBJ,
    "WANT_TO": WANT_TO,
    "INTEND": INTEND,
    "REL": REL,
    "DRUG": DRUG,
    "MANY": MANY,
    "DISORDER": DISORDER,
    "CERTAIN": CERTAIN,
}
