"""The kind of answer a question expects, from its question word or its shape.

The type comes from the question word (ingest/lexicon/answer_types.txt: a person, a date, a
place, a number with its unit), a noun after 'what' / 'which' (answer_nouns.txt), or the
question's shape (yes/no; a choice between named items).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.spans import mask, question_spans
from ingest import lexicon

ANSWER_TYPES = lexicon.table("answer_types")
# 'what new ship date', 'which amount': the noun the wh-word asks for, up to four words on
# A country, a language or a place is what is asked only when its noun heads the phrase:
# 'which country is …', 'the place of birth'; not 'which country singer', 'what event took
# place'. 'nationality' and the nouns of dates and amounts head whatever follows them.
_HEAD_NOUNS = frozenset({"country", "nation", "language", "place", "city", "town", "village"})
_HEAD_NOUN = (
    r"(?<!\btook place)(?<!\btake place)(?<!\btakes place)"
    r"(?=\s*(?:[?,.;:]|$)|\s+(?:"
    + "|".join(sorted(tx.EN_STOPWORDS, key=len, reverse=True))
    + r")\b)"
)


def _noun_pattern(nouns: Sequence[str]) -> re.Pattern[str]:
    free = [n for n in nouns if n not in _HEAD_NOUNS]
    head = [n for n in nouns if n in _HEAD_NOUNS]
    asked = ([f"(?:{'|'.join(free)})s?\\b"] if free else []) + (
        [f"(?:{'|'.join(head)})s?\\b{_HEAD_NOUN}"] if head else []
    )
    return re.compile(rf"\b(?:what|which)\s+(?:[\w-]+\s+){{0,4}}?(?:{'|'.join(asked)})")


_ANSWER_NOUNS = [(kind, _noun_pattern(nouns)) for kind, nouns in lexicon.table("answer_nouns")]
_YES_NO_RE = re.compile(
    r"^(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.I
)
_ZH_YES_NO_RE = re.compile(r"(?:吗|是否|是不是|有没有)[？?。]?\s*$|^是否|是否")


def answer_type(question: str) -> str:
    """yes_no | choice | number | date | nation | language | place | person | explain | entity."""
    q = question.strip().lower()
    question = question.replace("⟨", "〈").replace("⟩", "〉")  # ours mark spans
    spans = question_spans(question)
    masked = mask(question, spans)
    if re.search(r"⟨\d+⟩,?\s+or\s+(?:the\s+)?(?:\w+\s+)?⟨\d+⟩", masked) or re.search(
        r"⟨\d+⟩(?:还是|或)⟨\d+⟩", masked
    ):
        return "choice"
    if _YES_NO_RE.match(q) or (tx.has_cjk(q) and _ZH_YES_NO_RE.search(q)):
        return "yes_no"
    for kind, words in ANSWER_TYPES:
        for word in words:
            if (tx.has_cjk(word) and word in q) or re.search(rf"\b{re.escape(word)}\b", q):
                return kind
    for kind, pattern in _ANSWER_NOUNS:
        if pattern.search(q):
            return kind
    return "entity"
