"""The knowledge base's own phrases: titles, headings, table headers, names, quoted spans.

Built at ingest from every chunk (`chunk_phrases`) and stored with it, so reasoning can keep a
name whole ("Al gran sole carico d'amore", "Levy and Company") and recognise an entity by
what the documents call things, with no domain word list. The same extractors read retrieved
passages at query time (bridge candidates). Keys are folded (`phrase_key`): NFKC, accents
and case removed, so "Tekezé" and "TEKEZE" are one phrase.
"""

from __future__ import annotations

import logging
import re
import unicodedata
import warnings
from functools import lru_cache
from typing import Any

from ingest import lexicon
from ingest.lang import CJK
from ingest.normalize import normalize_text

PHRASER = "phrases-5"  # part of the index lineage: change it and `hopwise reindex` rebuilds
MAX_PHRASES = 48  # per chunk, best kinds first
MAX_KEY_CHARS = 120
EN_STOPWORDS = lexicon.words("en_stopwords")
EN_QUESTION_WORDS = lexicon.words("en_question_words")
ZH_STOPWORDS = lexicon.words("zh_stopwords")


_DIACRITICS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff]")
_LETTERS = str.maketrans(
    {
        "ß": "ss",
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ı": "i",
        "þ": "th",
    }
)


def fold(text: str) -> str:
    """Accents removed after NFKC ("Tekezé" -> "Tekeze", "Zürich" -> "Zurich", "Łódź" ->
    "Lodz"); Han, kana and every other script untouched. What BM25 indexes and what a query is
    matched with, so the two always agree."""
    text = normalize_text(text)
    if text.isascii():
        return text
    stripped = _DIACRITICS.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", stripped).translate(_LETTERS)


def phrase_key(text: str) -> str:
    """The lookup form of a phrase: folded, lower-cased, quotes and outer punctuation dropped,
    spaces collapsed. '' when nothing is left."""
    key = fold(text).casefold().replace("’", "'")
    key = re.sub(r"[\"“”《》「」『』]", " ", key)
    key = re.sub(r"\s+", " ", key).strip(" .,;:!?-–—'")
    return key[:MAX_KEY_CHARS]


@lru_cache(maxsize=1)
def jieba_tokenizer() -> Any:  # jieba has no type hints
    """Import jieba once, quietly (it logs and warns on first use)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


# Capitalised spans: "Battle of Mine Creek", "Joan, Lady of Wales" is two spans (comma).
# Lower-case words allowed inside a name ('Battle of Mine Creek', 'Vincent van Gogh'); 'for',
# 'in' or 'and' would glue two names together ('Martin Company for the United States Navy').
_CONNECTORS = lexicon.words("connectors")
_CAP_TOKEN_RE = re.compile(r"[A-Za-z0-9\u00C0-\u024F][\w\u00C0-\u024F'’.\-]*|&")
_QUOTED_RE = re.compile(r"[\"“《「『]([^\"”》」』]{2,80})[\"”》」』]")
_SENTENCE_START_SKIP = EN_STOPWORDS | EN_QUESTION_WORDS


_ELIDED_CAP_RE = re.compile(r"^[a-z]{1,2}['’][A-Z]")
MAX_SPAN_WORDS = 10  # capitalised words; longer runs are headings or infobox text


def capitalized_spans(text: str) -> list[str]:
    """Runs of Capitalised words (allowing 'of', 'the', 'de' inside), e.g. 'Battle of Mine Creek'."""
    spans: list[str] = []
    for clause in re.split(r"[,;:()?!|\"“”]|\s[-–—]\s", text):
        tokens = _CAP_TOKEN_RE.findall(clause)
        current: list[str] = []
        for i, tok in enumerate(tokens):
            bare = tok if re.fullmatch(r"(?:[A-Z]\.)+|[A-Z][a-z]{0,3}\.", tok) else tok.rstrip(".")
            after_name = bool(current) and current[-1].lower() not in _CONNECTORS
            is_cap = (
                bare[:1].isupper()
                or (bare[:1].isdigit() and after_name)
                or bool(current and _ELIDED_CAP_RE.match(bare))  # 'Palme d'Or'
            )
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            if (
                bare.lower() == "the"
                and nxt[:1].isupper()
                or is_cap
                and not (i == 0 and bare.lower() in _SENTENCE_START_SKIP)
                or current
                and bare.lower() in _CONNECTORS
                or current
                and bare == "and"
                and nxt == "the"  # 'Charlie and the Chocolate Factory', not 'Rex and Ann'
            ):
                current.append(bare)
            else:
                _flush(current, spans)
                current = []
        _flush(current, spans)
    return spans


def with_parenthetical(span: str, text: str) -> str:
    """'Midnight Court' -> 'Midnight Court (Film)' when the text adds a short parenthetical."""
    m = re.search(re.escape(span) + r"\s*(\([^()]{1,30}\))", text)
    return f"{span} {m.group(1)}" if m else span


def _flush(current: list[str], spans: list[str]) -> None:
    while current and (current[-1].lower() in _CONNECTORS or current[-1] == "and"):
        current.pop()  # 'King Rolf of Tarsk and the wife of …': no name ends in 'and'
    while current and current[0].lower() in _CONNECTORS - {"the"}:
        current.pop(0)
    if current and current[0] == "the":
        current = current[1:]
    if not current:
        return
    if current:
        if sum(1 for w in current if w.lower() not in _CONNECTORS) > MAX_SPAN_WORDS:
            return
        if current[-1].endswith(".") and not re.fullmatch(r"(?:[A-Z]\.)+", current[-1]):
            current[-1] = current[-1].rstrip(".")
        span = " ".join(current).removesuffix("'s").removesuffix("’s")
        if span.lower() not in _SENTENCE_START_SKIP:
            spans.append(span)


def quoted_titles(text: str) -> list[str]:
    """Titles in quotes or book-title marks: "Swan Lake", 《天鹅湖》."""
    found = [m.group(1).strip() for m in _QUOTED_RE.finditer(text)]
    return [t for t in found if t and len(t.split()) <= 10]


_NAME_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})


def cjk_names(text: str, *, hmm: bool = True) -> list[str]:
    """Chinese proper names (people, places, organisations, works) by jieba's POS tags."""
    return list(cjk_name_kinds(text, hmm=hmm))


@lru_cache(maxsize=1)
def _tag_table() -> dict[str, str]:
    """jieba's dictionary tags, word -> POS tag (jieba.posseg's own table)."""
    jieba_tokenizer()  # quiet initialisation
    import jieba.posseg as posseg

    table: dict[str, str] = posseg.dt.word_tag_tab
    return table  # the table itself (a copy would double ~350k entries)


@lru_cache(maxsize=1)
def _name_words() -> frozenset[str]:
    """The dictionary's words tagged as names (single-character surnames included)."""
    return frozenset(w for w, flag in _tag_table().items() if flag in _NAME_FLAGS)


def _flag(word: str) -> str:
    """A dictionary word's tag, as jieba.posseg gives it without the HMM: a run of letters and
    digits is 'eng', a word the dictionary lacks 'x'."""
    return "eng" if word.isascii() and word.isalnum() else _tag_table().get(word, "x")


@lru_cache(maxsize=4096)
def _words(segment: str) -> tuple[str, ...]:
    """jieba's words of a run of Chinese without the HMM, from rjieba: jieba's algorithm and
    dictionary in Rust, about 20 times faster than jieba.posseg, the same words
    (tests/ingest/test_phrases.py). Ingest tags every chunk, so this is its speed."""
    import rjieba

    return tuple(rjieba.cut(segment, False))


@lru_cache(maxsize=4096)
def _tagged(segment: str, hmm: bool) -> tuple[tuple[str, str], ...]:
    """jieba's (word, tag) pairs of a run of Chinese, cached: names and organisations read the
    same pass. Without the HMM (ingest), words the dictionary lacks stay split and tags come
    from the dictionary; with it (questions and retrieved passages), jieba.posseg's POS model
    finds unknown names too."""
    if not hmm:
        return tuple((word, _flag(word)) for word in _words(segment))
    jieba_tokenizer()  # quiet initialisation
    import jieba.posseg as posseg

    return tuple((p.word, p.flag) for p in posseg.cut(segment, HMM=True))


def cjk_tags(text: str) -> list[tuple[str, str]]:
    """jieba's (word, tag) pairs of the Chinese in a text, with its HMM, in order."""
    return [pair for segment in re.findall(f"[{CJK}]+", text) for pair in _tagged(segment, True)]


def _name_candidates(segment: str, hmm: bool) -> list[tuple[str, str, str, str]]:
    """(word, tag, next word, next tag) for each word of a run of Chinese tagged as a name.
    Without the HMM only the dictionary's name words are tagged (most words are not names)."""
    out: list[tuple[str, str, str, str]] = []
    if hmm:
        pairs = _tagged(segment, True)
        for i, (word, flag) in enumerate(pairs):
            if flag in _NAME_FLAGS:
                out.append((word, flag, *(pairs[i + 1] if i + 1 < len(pairs) else ("", "x"))))
        return out
    words, names = _words(segment), _name_words()
    if names.isdisjoint(words):
        return out
    for i in [i for i, word in enumerate(words) if word in names]:
        nxt = words[i + 1] if i + 1 < len(words) else ""
        out.append((words[i], _flag(words[i]), nxt, _flag(nxt) if nxt else "x"))
    return out


_KINDS = {"nr": "person", "nrt": "person", "nrfg": "person", "ns": "place", "nt": "org"}


def cjk_name_kinds(text: str, *, hmm: bool = True) -> dict[str, str]:
    """Chinese names and what jieba tags them as: person, place, org or name."""
    seen: dict[str, str] = {}
    for segment in re.findall(f"[{CJK}]+", text):
        for word, flag, nxt, nxt_flag in _name_candidates(segment, hmm):
            if flag == "nr" and len(word) == 1 and 1 <= len(nxt) <= 2 and nxt_flag[:1] in "nav":
                seen.setdefault(word + nxt, "person")  # a surname and a given name jieba split
            elif flag in _NAME_FLAGS and len(word) >= 2:
                seen.setdefault(word, _KINDS.get(flag, "name"))
    return seen


# Organisation names end in a type word; the words before it (places, brand names, trades)
# are nouns, so the name starts after the last verb, preposition or punctuation.
_ORG_SUFFIX_RE = re.compile(
    "(?:" + "|".join(sorted(lexicon.words("zh_org_suffixes"), key=len, reverse=True)) + ")"
)
_ORG_PART_FLAGS = ("n", "j", "eng", "vn", "an", "nz", "nt", "ns", "nr")
MAX_ORG_WORDS = 6


def cjk_org_names(text: str, *, hmm: bool = True) -> list[str]:
    """Chinese organisation names: '深圳星河电子有限公司', '深圳国际仲裁院', in order.

    jieba splits such names into a place and common nouns, so its name tags alone miss them;
    a type word ('有限公司', '仲裁院') plus the nouns right before it is the whole name.
    """
    jieba_tokenizer()

    seen: dict[str, None] = {}
    for segment in re.findall(f"[{CJK}A-Za-z0-9]+", text):
        if not _ORG_SUFFIX_RE.search(segment):
            continue
        pairs = list(_tagged(segment, hmm))
        starts, pos = [], 0
        for word, _ in pairs:
            starts.append(pos)
            pos += len(word)
        for m in _ORG_SUFFIX_RE.finditer(segment):
            first = idx = max(i for i, s in enumerate(starts) if s <= m.start())
            while (
                first > 0
                and idx - first < MAX_ORG_WORDS
                and pairs[first - 1][1].startswith(_ORG_PART_FLAGS)
                and pairs[first - 1][0] not in ZH_STOPWORDS
                and not pairs[first - 1][0].endswith("方")
            ):
                first -= 1
            name = segment[starts[first] : m.end()]
            if len(name) >= 4 and starts[first] < m.start():
                seen.setdefault(name, None)
    return [n for n in seen if not any(n != o and n in o for o in seen)]


# sentences and lines; an initial's full stop ends none ('John B. Keane', 'William C. Ames')
# (unless a sentence's first word follows: 'World War I. He …'); a line always ends one
_OPENERS = "|".join(
    sorted((w.capitalize() for w in EN_STOPWORDS if w.isalpha()), key=len, reverse=True)
)
_PIECE_RE = re.compile(
    r"(?<=[.!?。！？；])(?:(?<![\s(\"“][A-Z]\.)(?<!^[A-Z]\.)|(?=\s+(?:" + _OPENERS + r")\b))\s+"
    r"|\n+"
)
_TITLE_PAREN_RE = re.compile(r"\s*\([^()]{1,40}\)\s*$")
_TABLE_ROW_RE = re.compile(r"^[^\n|]+(?:\s\|\s[^\n|]+)+$", re.MULTILINE)


def text_phrases(text: str, *, hmm: bool = True) -> list[str]:
    """Names in running text: quoted spans, multi-word capitalised spans, Chinese names and
    organisations (jieba's tags plus organisation type words), in order, deduplicated."""
    found: list[str] = []
    for piece in _PIECE_RE.split(text):
        if not piece.strip():
            continue
        found += quoted_titles(piece)
        found += [
            s for s in capitalized_spans(piece) if " " in s or len(s) >= 4 and not s.isupper()
        ]
        if re.search(f"[{CJK}]", piece):
            found += cjk_org_names(piece, hmm=hmm) + cjk_names(piece, hmm=hmm)
    return list(dict.fromkeys(f.strip() for f in found if f.strip()))


def table_headers(text: str) -> list[str]:
    """The cells of the first row of each table ('Name | Role | Office')."""
    out: list[str] = []
    previous_end = -2
    for m in _TABLE_ROW_RE.finditer(text):
        if m.start() > previous_end + 1:  # a new table starts
            out += [c.strip() for c in m.group(0).split(" | ") if c.strip()]
        previous_end = m.end()
    return out


def chunk_phrases(title: str, section_path: str, text: str) -> list[str]:
    """The phrase keys of one chunk, best kinds first (title, headings, table headers, then
    names in the text), at most MAX_PHRASES, each at most MAX_KEY_CHARS."""
    candidates = [title, _TITLE_PAREN_RE.sub("", title)]
    candidates += [p for p in re.split(r"\s*[>/›]\s*", section_path) if p]
    candidates += table_headers(text) + text_phrases(text, hmm=False)
    keys: dict[str, None] = {}
    for candidate in candidates:
        key = phrase_key(candidate)
        if key and len(key) >= 2 and key not in EN_STOPWORDS and key not in ZH_STOPWORDS:
            keys.setdefault(key, None)
        if len(keys) >= MAX_PHRASES:
            break
    return list(keys)
