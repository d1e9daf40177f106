"""Closed lists of names a text may name, read from a lexicon (countries, languages): each
line a key, then groups of names split by "/" (English names, then other groups).

A name counts only as a whole word standing on its own: one inside a longer capitalised name
('New Mexico', 'Michael Jordan', 'Indian Ocean', 'English Channel') names something else, and
so does one after 'state of' (the U.S. state of Georgia).
"""

from __future__ import annotations

import functools
import re

from graph import text as tx
from ingest import lexicon

_CAPITALISED_BEFORE_RE = re.compile(r"([A-Z][\w'’.-]*)\s+$")
_CAPITALISED_AFTER_RE = re.compile(r"^\s+([A-Z][\w'’-]*)")
_STATE_OF_RE = re.compile(r"\bstate\s+of\s+$", re.IGNORECASE)


class NameList:
    """The names of one lexicon, by key."""

    def __init__(self, lexicon_name: str) -> None:
        self.groups: dict[str, tuple[tuple[str, ...], ...]] = {}
        for key, fields in lexicon.table(lexicon_name):
            groups: list[list[str]] = [[]]
            for field in fields:
                if field == "/":
                    groups.append([])
                else:
                    groups[-1].append(field)
            self.groups[key] = tuple(tuple(g) for g in groups)
        self.keys: dict[str, str] = {
            name: key for key, groups in self.groups.items() for g in groups for name in g
        }
        latin = sorted((n for n in self.keys if not tx.has_cjk(n)), key=len, reverse=True)
        cjk = sorted((n for n in self.keys if tx.has_cjk(n)), key=len, reverse=True)
        self._re = re.compile(
            r"(?<![\w.])(?:" + "|".join(re.escape(n) for n in latin) + r")(?!\w)"
            + ("|" + "|".join(re.escape(n) for n in cjk) if cjk else "")
        )  # fmt: skip
        self.find = functools.lru_cache(maxsize=4096)(self._find)

    def _find(self, text: str) -> tuple[tuple[str, str], ...]:
        """(key, the words as written) for each name the text holds, in order."""
        found: list[tuple[str, str]] = []
        for m in self._re.finditer(text):
            name = m.group(0)
            if not tx.has_cjk(name) and self._inside_longer_name(text, m.start(), m.end()):
                continue
            found.append((self.keys[name], name))
        return tuple(found)

    def _inside_longer_name(self, text: str, start: int, end: int) -> bool:
        before = _CAPITALISED_BEFORE_RE.search(text[:start])
        word = before.group(1) if before else ""
        if word and word.lower() not in tx.EN_STOPWORDS and word.split("-")[0] not in self.keys:
            return True  # ('New Mexico'; not 'American-born British')
        after = _CAPITALISED_AFTER_RE.match(text[end:])
        nxt = after.group(1) if after else ""
        if nxt and nxt.lower() not in tx.EN_STOPWORDS and nxt not in self.keys:
            return True
        return bool(_STATE_OF_RE.search(text[:start]))


COUNTRIES = NameList("countries")  # groups: English names / demonyms / Chinese names
LANGUAGES = NameList("languages")  # groups: English names / Chinese names
NAMED_KINDS = {"nation": COUNTRIES, "language": LANGUAGES}  # answer kinds read from a list
