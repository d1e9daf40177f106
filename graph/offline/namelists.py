"""Closed lists of names a text may name, read from a lexicon (countries, languages): each
line a key, then groups of names split by "/" (English names, then other groups).

A name counts only as a whole word standing on its own: one inside a longer capitalised name
('New Mexico', 'Michael Jordan', 'Indian Ocean', 'English Channel') names something else, and
so does one after 'the state of' (the U.S. state of Georgia), and one that labels a name in
its language ('Kacha (Ukrainian: Кача)'). A Chinese name must be one of
jieba's words, or start one with a grammatical suffix ('美国人'): '海地' of '上海地区' is none.
"""

from __future__ import annotations

import functools
import re

from graph import text as tx
from ingest import lexicon

_CAPITALISED_BEFORE_RE = re.compile(r"([A-Z][\w'’-]*)[ \t]+$")  # on the line, no full stop
_CAPITALISED_AFTER_RE = re.compile(r"^[ \t]+([A-Z][\w'’-]*)")
_LABEL_RE = re.compile(r"[ \t]*:")  # 'Ukrainian: Кача': a label, not a statement
_STATE_OF_RE = re.compile(r"\b(?:the|U\.S\.)\s+state\s+of\s+$")  # 'the U.S. state of Georgia'
# what may follow a Chinese name inside one word: '美国人', '中国籍', '英文书就', '南非共和国';
# not '洋' of '印度洋' or '半岛' of '朝鲜半岛' (another place)
_CJK_SUFFIXES = ("人", "籍", "裔", "语", "文", "书", "版", "共和国", "政府")


def _word_starts(text: str) -> dict[int, str]:
    """jieba's words of a text by their start offset."""
    starts: dict[int, str] = {}
    at = 0
    for token in tx.raw_tokens(text):
        starts[at] = token
        at += len(token)
    return starts


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
        starts: dict[int, str] | None = None  # Chinese words by where they start in the text
        for m in self._re.finditer(text):
            name = m.group(0)
            if tx.has_cjk(name):
                starts = _word_starts(text) if starts is None else starts
                word = starts.get(m.start(), "")  # a word of its own: not '海地' of '上海地区'
                if not word.startswith(name) or word[len(name) :] not in ("", *_CJK_SUFFIXES):
                    continue
            elif self._inside_longer_name(text, m.start(), m.end()) or _LABEL_RE.match(
                text, m.end()
            ):
                continue  # 'Kacha (Ukrainian: Кача)' labels a name in a language, no more
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


# The type words of organisations' names ('Holdings', 'Party'): lexicon en_org_words.
ORG_WORDS = frozenset(lexicon.words("en_org_words"))
