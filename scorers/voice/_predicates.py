"""The helper predicates seed 004 calls but never defines, each defined here once and documented.

Seed 004 ("Automated Scoring Logic" blocks) names ``contains_formatting_characters`` (also spelled
``contains_formatting_chars``), ``too_formal_for_context``, ``inappropriate_content_detected``,
``contains_question``, ``contains_personal_pronouns``, ``excessive_line_breaks`` and
``contains_helpful_question``. The definitions follow the seed's own indicator lists for each metric.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .._text import compile_terms, fold, sentences, tokens, wordset

# -- formatting -----------------------------------------------------------------------------------------
_FORMATTING_RE = re.compile(
    r"\*\*|__"  # markdown bold
    r"|(?<![\w*])\*(?=\S)[^*\n]+(?<=\S)\*(?!\*)"  # *italics*
    r"|(?<!\w)_(?=\S)[^_\n]+(?<=\S)_(?!\w)"  # _italics_
    r"|`"  # inline code / code fences
    r"|^[ \t]*#{1,6}[ \t]"  # markdown heading
    r"|(?<![\w&#])#[A-Za-z]\w*"  # #hashtag
    r"|^[ \t]*(?:[-*+•·▪◦]|\d{1,3}[.)])[ \t]+\S"  # bullet or numbered list item
    r"|^[ \t]*\|.*\|"  # table row
    r"|\[[^\]\n]+\]\([^)\s]+\)"  # markdown link
    r"|\bhttps?://|\bwww\.\w",  # bare URL: a TTS engine spells it out character by character
    re.MULTILINE,
)


@lru_cache(maxsize=4096)  # called by two metrics for the same reply
def contains_formatting_characters(response: str) -> bool:
    """True if the reply holds text formatting a speech synthesiser would read out or mangle.

    Seed 004 (Conversational Quality, negative indicators) lists *italics*, **bold**, #hashtags,
    `code`, and "multiple line breaks or list formatting". Detected: ``**``/``__`` bold,
    ``*x*``/``_x_`` emphasis, any backtick, markdown headings (``# `` at a line start), ``#word``
    hashtags, bullet (``-``, ``*``, ``+``, ``•``) or numbered (``1.``/``1)``) list items at a line start,
    ``|...|`` table rows, ``[text](url)`` links and bare URLs (``http://``, ``https://``, ``www.``).
    Not detected: a lone ``*`` or ``#`` inside prose ("5 * 3", "issue #4"), emoji, line breaks alone
    (those are :func:`excessive_line_breaks`).
    """
    return _FORMATTING_RE.search(response) is not None


#: The seed spells the helper both ways (appropriateness vs conversational quality).
contains_formatting_chars = contains_formatting_characters


# -- register -------------------------------------------------------------------------------------------
_FORMAL_MARKERS = compile_terms(
    (
        "furthermore", "moreover", "hereby", "herein", "hereafter", "henceforth", "thereby", "therefore",
        "consequently", "nevertheless", "nonetheless", "notwithstanding", "whereas", "thus", "hence",
        "aforementioned", "pursuant", "in accordance with", "with regard to", "with respect to",
        "please be advised", "be advised", "kindly", "dear user", "dear sir", "dear madam",
        "i would like to inform you", "it is recommended", "it is advisable", "it is imperative",
        "one should", "one must", "utilize", "utilise", "facilitate", "endeavor", "endeavour",
        "commence", "subsequently", "shall", "regards", "sincerely", "esteemed",
    )
)  # fmt: skip
_CONTRACTION_RE = re.compile(r"[a-z]'(?:s|re|ve|ll|d|m|t)\b")


def _formal_markers(text: str) -> int:
    return len(_FORMAL_MARKERS.findall(fold(text)))


def too_formal_for_context(response: str, user_input: str = "") -> bool:
    """True if the reply's register is stiffer than a spoken companion conversation calls for.

    Seed 004 (Appropriateness) penalises "tone mismatch (too formal)" and rewards "contractions".
    Formal when either:

    * it uses a written/bureaucratic register marker ("furthermore", "therefore", "kindly",
      "please be advised", "it is recommended", "utilize", "shall", ...) and the user did not
      (a user who writes "furthermore" sets a formal context, so matching it is not a mismatch); or
    * it is a long, stiff reply: at least 15 words, no contraction at all, and a mean word length of
      at least 5.5 letters (everyday speech averages about 4, legalese about 6).
    """
    folded = fold(response)
    if _formal_markers(response) and not _formal_markers(user_input):
        return True
    words = tokens(response)
    if len(words) < 15 or _CONTRACTION_RE.search(folded):
        return False
    return sum(map(len, words)) / len(words) >= 5.5


# -- inappropriate content -------------------------------------------------------------------------------
#: Small curated list, matched as whole words on folded text. Categories: profanity, slurs, sexual
#: content, violence or abuse aimed at the user. Mild words ("damn", "hell", "crap") are deliberately
#: absent: they are ordinary casual speech, not inappropriate for an adult companion.
INAPPROPRIATE_TERMS: dict[str, tuple[str, ...]] = {
    "profanity": (
        "fuck", "fucking", "fucked", "fucker", "motherfucker", "shit", "shitty", "bullshit", "bitch",
        "bastard", "asshole", "cunt", "dickhead", "piss off", "wanker", "twat",
    ),
    "slur": ("retard", "retarded", "faggot", "fag", "nigger", "nigga", "kike", "spic", "chink", "tranny"),
    "sexual": (
        "porn", "porno", "blowjob", "handjob", "orgasm", "horny", "nude", "nudes", "naked pics",
        "have sex with", "sex with you", "sexy body", "masturbate", "masturbating",
    ),
    "violence_to_user": (
        "kill yourself", "kys", "go die", "you should die", "you deserve to die", "i will kill you",
        "i'll kill you", "i will hurt you", "i'll hurt you", "you deserve to suffer", "nobody would miss you",
    ),
    "insult_to_user": (
        "you're stupid", "you are stupid", "you're pathetic", "you are pathetic", "you idiot", "you moron",
        "you're worthless", "you are worthless", "shut up", "you're a loser", "you are a loser",
    ),
}  # fmt: skip
_INAPPROPRIATE_RE = compile_terms(t for terms in INAPPROPRIATE_TERMS.values() for t in terms)


def inappropriate_content_detected(response: str) -> bool:
    """True if the reply contains a term from :data:`INAPPROPRIATE_TERMS` (whole-word, case-folded).

    Seed 004 (Appropriateness): "potentially harmful or offensive content". Whole-word matching avoids
    the Scunthorpe problem ("class", "assess", "Dickens" do not match).
    """
    return _INAPPROPRIATE_RE.search(fold(response)) is not None


# -- engagement -----------------------------------------------------------------------------------------
_INTERROGATIVE_START = re.compile(
    r"^(?:so |and |but |well |oh |hey )?(?:what|how|why|when|where|who|which|whose"
    r"|(?:do|does|did|are|is|was|were|have|has|had|can|could|would|will|should|shall|may|might)"
    r" (?:you|i|we|it|that|this|there|they|he|she|anyone|someone))\b"
)


def _is_question(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith("?") or _INTERROGATIVE_START.match(fold(s)) is not None


@lru_cache(maxsize=4096)  # called by conversational quality and by the empathy signal for the same reply
def contains_question(response: str) -> bool:
    """True if any sentence is a question: it ends in ``?`` or, since ASR transcripts often drop the
    question mark, it opens with a wh-word or an inverted auxiliary ("do you", "have you", "is it")."""
    return "?" in response or any(_is_question(s) for s in sentences(response))


_PERSONAL_PRONOUNS = wordset(
    "i i'm i've i'd i'll me my mine myself we we're we've we'll we'd us our ours ourselves "
    "you you're you've you'll you'd your yours yourself yourselves"
)


def contains_personal_pronouns(response: str) -> bool:
    """True if the reply uses a first- or second-person pronoun (I, me, my, we, us, you, your, ...).

    Seed 004 lists pronouns as an *engagement* indicator of conversational quality: speaking to the
    user and as oneself. Third-person pronouns (he/she/they/it) do not signal that and are excluded.
    """
    return not _PERSONAL_PRONOUNS.isdisjoint(tokens(response))


def excessive_line_breaks(response: str) -> bool:
    """True if the reply (stripped) has two or more line breaks, i.e. three or more lines or a blank
    line between paragraphs. Seed 004: "multiple line breaks"; one break is ordinary in a transcript."""
    return response.strip().count("\n") >= 2


_SECOND_PERSON = wordset("you you're you've you'll you'd your yours yourself")
_OFFER_RE = compile_terms(
    (
        "tell me more", "i'd love to hear", "i would love to hear", "i'm here to listen", "if you want to talk",
        "if you'd like to talk", "want to talk", "would it help", "would that help", "can i help",
        "how can i help", "shall we", "should we", "let me know if",
    )
)  # fmt: skip


@lru_cache(maxsize=4096)  # called by helpfulness and by the empathy signal for the same reply
def contains_helpful_question(response: str) -> bool:
    """True if the reply asks the user something or invites follow-up, rather than asking rhetorically.

    Seed 004 (Helpfulness): "offers appropriate follow-up or clarification". Counts: a question
    (per :func:`contains_question`) that addresses the user (a second-person pronoun), or an explicit
    invitation or offer ("tell me more", "would it help", "want to talk about", "let me know if").
    "Why would anyone do that?" is a question but not a helpful one.
    """
    if _OFFER_RE.search(fold(response)):
        return True
    return any(_is_question(s) and not _SECOND_PERSON.isdisjoint(tokens(s)) for s in sentences(response))
