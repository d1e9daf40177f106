"""Where the asked-for name sits in a sentence: the sentence says it the way the question asks.

A question leaves a slot for its answer ('for his role in which play?', 'which Canadian
actress …'). A name that fills the same slot in a sentence is the answer more surely than one
that only stands near the question's words:

- the question's words before the slot, ending in a preposition ('role in which'), stand
  right before the name in the sentence ('for his role in "Cymbeline"'), not 'role as Cassio';
- the question asks for a kind ('which … actress', 'what … novel'), and the sentence says the
  name is one ('Ysolde Varga (born 1970) is a Danish violinist …'): the sentence's subject, not
  the role or the show named later in it.

English only (Chinese questions mark the slot differently: 哪/什么 next to the noun, handled
by the reader's nearness). A general rule of English syntax, no word list beyond a closed set
of prepositions, determiners and copulas.
"""

from __future__ import annotations

import re
from functools import lru_cache

from graph import text as tx
from graph.offline.roles import fills_role

_PREPOSITIONS = "in|on|at|for|by|from|of|with|as|to|into|under|about|during|against"
_DETERMINERS = r"(?:the|a|an|his|her|its|their|our|my|your)\s+"
# 'role in which', 'born in what' (word, preposition, wh-word)
_BEFORE_SLOT_RE = re.compile(
    rf"([A-Za-z][\w'’-]*)\s+({_PREPOSITIONS})\s+(?:which|what|whose)\b", re.IGNORECASE
)
# 'which Danish violinist', 'which minor character': up to four words, no punctuation
_KIND_RE = re.compile(r"\b(?:which|what)\s+((?:[\w'’-]+\s+){0,3}[\w'’-]+)", re.IGNORECASE)
_COPULA = r"(?:is|was|are|were)(?:\s+also)?"


@lru_cache(maxsize=4096)
def _slot_cues(part: str) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(word, preposition) pairs before the slot, and the words that may name the asked kind."""
    if tx.has_cjk(part):
        return (), ()
    before = tuple(
        (m.group(1).lower(), m.group(2).lower())
        for m in _BEFORE_SLOT_RE.finditer(part)
        if not tx.is_stopword(m.group(1))
    )
    kinds: list[str] = []
    for m in _KIND_RE.finditer(part):
        for word in m.group(1).split():
            low = word.lower()
            if low in ("and", "or") or word[:1].isupper():
                continue  # 'stage and radio actor', 'which Danish violinist'
            if tx.is_stopword(low) or low in tx.EN_QUESTION_WORDS:
                break  # 'which of …', 'what is …'
            kinds.append(low)
    return before, tuple(dict.fromkeys(kinds))


@lru_cache(maxsize=1024)
def _labelled_re(kind: str) -> re.Pattern[str]:
    """'channel 44', 'Route A-9', 'platform no. 3': the kind's noun, then a value it labels."""
    return re.compile(
        rf"\b{re.escape(kind)}s?\s+(?:no\.?\s*|number\s+|#\s*)?"
        r"(\d[\w./-]*|[A-Z]{1,3}-?\d[\w./-]*)(?![\w-])",
        re.IGNORECASE,
    )


def labelled_values(part: str, sentence: str) -> list[str]:
    """The values the sentence labels with the noun the part asks for: 'channel 44' for
    'on what UHF channel', 'Route 9' for 'which route' (a number is no name, yet answers)."""
    _, kinds = _slot_cues(part)
    found = [m.group(1).rstrip(".-/") for k in kinds for m in _labelled_re(k).finditer(sentence)]
    return list(dict.fromkeys(found))


def fills_slot(part: str, sentence: str, span: str) -> bool:
    """Whether `span` sits in `sentence` where `part` leaves its answer's slot (see above),
    or is what the part asks of a cast ('Who did X play?': 'X as R'; graph/offline/roles.py)."""
    if fills_role(part, sentence, span):
        return True
    before, kinds = _slot_cues(part)
    if not before and not kinds:
        return False
    at = sentence.find(span)
    if at < 0:
        return False
    lead = sentence[:at]
    if span in labelled_values(part, sentence):
        return True  # 'channel 44' for 'what channel'
    for word, prep in before:  # '… role in "Cymbeline"'
        if re.search(
            rf"\b{re.escape(word)}\w{{0,3}}\s+{prep}\s+(?:{_DETERMINERS})?[\"“‘']?$",
            lead,
            re.IGNORECASE,
        ):
            return True
    if kinds and not lead.strip(" \"“‘'"):  # the sentence's subject: 'X (…) is a … actress'
        rest = sentence[at + len(span) :]
        kind = "|".join(re.escape(k) for k in kinds)
        said = re.match(
            rf"\s*(?:\([^()]*\)\s*)?,?\s*{_COPULA}\s+(?:{_DETERMINERS})?(?:[\w'’-]+\s+){{0,4}}"
            rf"(?:{kind})s?\b",
            rest,
            re.IGNORECASE,
        )
        return said is not None or _does_as_asked(part, kinds, rest)
    return False


def _does_as_asked(part: str, kinds: tuple[str, ...], rest: str) -> bool:
    """A subject question ('which minor character made her debut in X'): the
    sentence's subject, when the words right after it say what the part asks it does
    ('Tibbet debuted in …')."""
    kind = "|".join(re.escape(k) for k in kinds)
    asked = re.search(
        rf"\b(?:which|what)\s+(?:[\w'’-]+\s+){{0,3}}?(?:{kind})s?\s+([a-z][\w'’-]*)(?P<rest>.*)",
        part,
        re.IGNORECASE,
    )
    if asked is None or tx.is_stopword(asked.group(1).lower()):
        return False  # 'what county is X in', 'which actor from …': no subject asked
    told = tx.term_set(f"{asked.group(1)} {asked.group('rest')}")
    return bool(told & tx.term_set(" ".join(rest.split()[:3])))
