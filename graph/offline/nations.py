"""Countries and nationalities a text names (ingest/lexicon/countries.txt): the answer a
'what nationality' or 'which country' question expects, and what two things must share for
'are both in the same country?'.

A name counts only as a whole word standing on its own: one inside a longer capitalised name
('New Mexico', 'Michael Jordan', 'Indian Ocean', 'American Film Institute') names something
else, and so does one after 'state of' (the U.S. state of Georgia).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from graph import text as tx
from ingest import lexicon


@dataclass(frozen=True)
class Country:
    key: str
    names: tuple[str, ...]  # English names, the usual one first
    demonyms: tuple[str, ...]
    chinese: tuple[str, ...]


def _countries() -> dict[str, Country]:
    found: dict[str, Country] = {}
    for key, fields in lexicon.table("countries"):
        groups: list[list[str]] = [[]]
        for field in fields:
            if field == "/":
                groups.append([])
            else:
                groups[-1].append(field)
        names, demonyms, chinese = (groups + [[], []])[:3]
        found[key] = Country(key, tuple(names), tuple(demonyms), tuple(chinese))
    return found


COUNTRIES = _countries()
_KEYS: dict[str, str] = {
    name: c.key for c in COUNTRIES.values() for name in (*c.names, *c.demonyms, *c.chinese)
}  # every name, demonym and Chinese name -> its country's key
_LATIN = sorted((n for n in _KEYS if not tx.has_cjk(n)), key=len, reverse=True)
_CJK = sorted((n for n in _KEYS if tx.has_cjk(n)), key=len, reverse=True)
_NAME_RE = re.compile(
    r"(?<![\w.])(?:"
    + "|".join(re.escape(n) for n in _LATIN)
    + r")(?!\w)"
    + "|"
    + "|".join(re.escape(n) for n in _CJK)
)
_CAPITALISED_BEFORE_RE = re.compile(r"([A-Z][\w'’.-]*)\s+$")
_CAPITALISED_AFTER_RE = re.compile(r"^\s+([A-Z][\w'’-]*)")
_STATE_OF_RE = re.compile(r"\bstate\s+of\s+$", re.IGNORECASE)
_ASKS_NATION_RE = re.compile(
    r"\b(?:country|countries|nationality|nationalities|citizenship)\b|国家|国籍", re.IGNORECASE
)
_ASKS_COUNTRY_RE = re.compile(r"\bcountry\b|国家|哪国", re.IGNORECASE)
_ASKS_NATIONALITY_RE = re.compile(r"\bnationality\b|\bcitizen|国籍|哪国人", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def nations_in(text: str) -> tuple[tuple[str, str], ...]:
    """(country key, the words as written) for each country or nationality the text names,
    in order."""
    found: list[tuple[str, str]] = []
    for m in _NAME_RE.finditer(text):
        name = m.group(0)
        if not tx.has_cjk(name) and _inside_longer_name(text, m.start(), m.end()):
            continue
        found.append((_KEYS[name], name))
    return tuple(found)


def _inside_longer_name(text: str, start: int, end: int) -> bool:
    before = _CAPITALISED_BEFORE_RE.search(text[:start])
    word = before.group(1) if before else ""
    if word and word.lower() not in tx.EN_STOPWORDS and word.split("-")[0] not in _KEYS:
        return True  # ('New Mexico'; not 'American-born British')
    after = _CAPITALISED_AFTER_RE.match(text[end:])
    if after and after.group(1).lower() not in tx.EN_STOPWORDS and after.group(1) not in _KEYS:
        return True
    return bool(_STATE_OF_RE.search(text[:start]))


def nation_keys(text: str) -> frozenset[str]:
    """The countries a text names, by key ('American' and 'the U.S.' are one)."""
    return frozenset(key for key, _ in nations_in(text))


def as_asked(question: str, span: str) -> str:
    """The country a nationality names when the question asks for a country ('Which country
    is she from?': 'India' for 'an Indian director'); the span as written otherwise."""
    country = COUNTRIES.get(_KEYS.get(span, ""))
    if country is None or span not in country.demonyms or not country.names:
        return span
    if not _ASKS_COUNTRY_RE.search(question) or _ASKS_NATIONALITY_RE.search(question):
        return span
    return country.names[0].replace("_", " ")


def asks_nation(question: str) -> bool:
    """Whether a question asks of a country or a nationality ('the same country')."""
    return bool(_ASKS_NATION_RE.search(question))
