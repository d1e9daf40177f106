"""Countries and nationalities a text names (ingest/lexicon/countries.txt): the answer a
'what nationality' or 'which country' question expects, and what two things must share for
'are both in the same country?'."""

from __future__ import annotations

import re

from graph.offline.namelists import COUNTRIES

_SAME_NATION_RE = re.compile(
    r"\bsame\s+(?:country|nationality|citizenship)\b|\bshare\s+(?:a\s+|the\s+)?nationality\b"
    r"|同一(?:个)?国家|同一国籍|国籍相同|国籍一样",
    re.IGNORECASE,
)
_ASKS_COUNTRY_RE = re.compile(r"\bcountry\b|国家|哪国", re.IGNORECASE)
_ASKS_NATIONALITY_RE = re.compile(r"\bnationality\b|\bcitizen|国籍|哪国人", re.IGNORECASE)
_COUNTRY_OF_RE = re.compile(r"\bcountry\s+of\s+citizenship\b", re.IGNORECASE)
_WHICH_COUNTRY_RE = re.compile(r"\b(?:which|what)\s+country\b|哪个国家|哪国", re.IGNORECASE)


def nations_in(text: str) -> tuple[tuple[str, str], ...]:
    """(country key, the words as written) for each country or nationality the text names,
    in order."""
    return COUNTRIES.find(text)


def nation_keys(text: str) -> frozenset[str]:
    """The countries a text names, by key ('American' and 'the U.S.' are one)."""
    return frozenset(key for key, _ in nations_in(text))


def as_asked(question: str, span: str) -> str:
    """The country a nationality names when the question asks for a country ('Which country
    is she from?': 'India' for 'an Indian director'); the span as written otherwise."""
    groups = COUNTRIES.groups.get(COUNTRIES.keys.get(span, ""), ())
    names, demonyms = (groups + ((), ()))[:2]
    if span not in demonyms or not names:
        return span
    if not _ASKS_COUNTRY_RE.search(question):
        return span
    if _ASKS_NATIONALITY_RE.search(question) and not _COUNTRY_OF_RE.search(question):
        return span  # 'what nationality': as written; 'the country of citizenship': a country
    return names[0]


def asks_same_nation(question: str) -> bool:
    """Whether a question asks if things share a country or a nationality ('in the same
    country', 'share the same nationality', '国籍相同'); not 'both country singers'."""
    return bool(_SAME_NATION_RE.search(question))


def asks_which_country(question: str) -> bool:
    """Whether a question asks which country ('In which country is X?', '哪个国家'): its
    answer is a country, never a continent or a region."""
    return bool(_WHICH_COUNTRY_RE.search(question))
