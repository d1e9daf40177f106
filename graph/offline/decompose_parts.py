"""What the decomposition rules share: a Part (a sub-question and the earlier one it depends
on), the renumbering of parts that follow others, and the English word classes the rules
match (participles; is_noun, a head noun, which the bridge uses too).
"""

from __future__ import annotations

import re

from graph import text as tx
from ingest import lexicon

Part = tuple[str, int | None]  # (sub-question, the earlier sub-question it depends on)

PARTICIPLES = "|".join(sorted(lexicon.words("en_irregular_participles"), key=len, reverse=True))
PARTICIPLE = rf"(?:[a-z]+ed|{PARTICIPLES})"


def shift(parts: list[Part], offset: int) -> list[Part]:
    """Renumber a sub-decomposition that follows `offset` earlier parts."""
    return [
        (tx.PLACEHOLDER_RE.sub(lambda m: f"#{int(m.group(1)) + offset}", t),
         None if d is None else d + offset)
        for t, d in parts
    ]  # fmt: skip


def is_noun(word: str) -> bool:
    """Not a function word, auxiliary, participle or preposition: a head noun."""
    w = word.lower()
    return not (
        w in tx.EN_STOPWORDS
        or w in tx.EN_QUESTION_WORDS
        or re.fullmatch(PARTICIPLE, w)
        or w.endswith("ing")
    )
