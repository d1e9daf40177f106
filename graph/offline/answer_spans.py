"""Short answers and the spans that may be one: Short (an answer with the passage that says
it), and the names, dates and numbers of a sentence that may answer a question of a kind,
the word before a name saying which kind it is ('in X' a place, 'by X' a person).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph import text as tx
from graph.offline.namelists import NAMED_KINDS
from graph.offline.params import PARAMS, OfflineParams
from ingest import lexicon
from ingest.phrases import cjk_name_kinds, text_phrases

_MONTH = "|".join(sorted(tx.MONTHS, key=len, reverse=True))
ANSWER_DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}\s+(?:{_MONTH})\.?,?\s+\d{{3,4}}|(?:{_MONTH})\.?\s+\d{{1,2}},?\s+\d{{3,4}}|"
    rf"(?:{_MONTH})\.?\s+\d{{3,4}}|\d{{3,4}})\b|\d{{4}}年(?:\d{{1,2}}月(?:\d{{1,2}}日)?)?",
    re.IGNORECASE,
)
_NUMBER_RE = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*(?:%|percent\b|[a-zA-Z]{1,12}\b(?:\s+(?:of\s+)?[a-z]{3,12}\b)?"
    rf"|[万亿千百]?[{tx.CJK}]{{0,2}})?"
)


@dataclass
class Short:
    text: str
    n: int | None  # the citation of the passage that says it
    score: float
    shown: tuple[tuple[int, str], ...] = ()  # (citation, sentence) the answer was read from


_NUMBER_WORDS = lexicon.words("numbers")
NUMBER_WORD_RE = re.compile(
    r"\b(?:"
    + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
    + r")\b(?:\s+(?-i:[a-z]{3,12})\b)?",
    re.IGNORECASE,
)
_PLACE_CUES = frozenset({"in", "at", "from", "near"})
_PERSON_CUES = frozenset({"by"})


def name_spans(kind: str, sentence: str) -> list[str]:
    """Names in a sentence that may answer a 'who', 'where' or 'which' question, those whose
    form or cue fits the kind first."""
    names = kind_spans(kind, sentence)
    return sorted(names, key=lambda n: -cue_fit(kind, sentence, n))


def kind_spans(kind: str, sentence: str) -> list[str]:
    if kind in NAMED_KINDS:  # a country or nationality, a language: from their lists
        return [name for _, name in NAMED_KINDS[kind].find(sentence)]
    if kind == "date":
        return [m.group(0) for m in ANSWER_DATE_RE.finditer(sentence)]
    if kind == "number":
        dates = [m.span() for m in ANSWER_DATE_RE.finditer(sentence) if not _is_year(m.group(0))]
        found = [
            _trim_unit(m.group(0))
            for m in _NUMBER_RE.finditer(sentence)
            if not _is_year(m.group(0).split()[0].strip(",."))
            and not any(a <= m.start() < b for a, b in dates)
        ]
        return found + [m.group(0) for m in NUMBER_WORD_RE.finditer(sentence)]
    # a quoted title keeps no comma the quotes closed over ('"Coal Mine Blues," a song')
    names = list(dict.fromkeys(n.rstrip(",;:") for n in text_phrases(sentence)))
    names = [n for n in names if not ANSWER_DATE_RE.fullmatch(n) and not _attributive(sentence, n)]
    return [_with_year(n, sentence) for n in names] if kind == "entity" else names


def _with_year(name: str, sentence: str) -> str:
    """An event named with its year keeps it ('1996 Vask Regatta' of 'raced at the 1996 Vask
    Regatta'): the name alone names every edition."""
    m = re.search(rf"\bthe\s+((?:1[5-9]|20)\d{{2}})\s+{re.escape(name)}(?!\w)", sentence)
    return f"{m.group(1)} {name}" if m else name


def _trim_unit(text: str) -> str:
    """'31,000 students' stays; '1,200, and' loses the function word and the comma."""
    words = text.strip().split()
    while len(words) > 1 and words[-1].lower() in tx.EN_STOPWORDS:
        words.pop()
    return " ".join(words).strip(",. ")


def cue_fit(kind: str, sentence: str, span: str, params: OfflineParams = PARAMS) -> float:
    """The preposition before a name says what it is: 'in X' a place, 'by X' a person; a
    Chinese name's tag says it directly."""
    if tx.has_cjk(span):
        tag = cjk_name_kinds(span).get(span, "")
        wanted = {"person": ("person",), "place": ("place",)}.get(kind)
        if wanted and tag:
            return params.cue_match if tag in wanted else params.cue_mismatch
        if wanted and span in tx.cjk_org_names(span):
            return params.cue_org_person if kind == "person" else params.cue_mismatch
        # a Chinese word tagged neither a person's nor an organisation's name ('青瓜脆', a
        # product in quotes) may still be read for 'who', never stated
        return params.cue_untagged_person if kind == "person" else 1.0
    m = re.search(r"(\w+)\s+(?:the\s+)?" + re.escape(span), sentence)
    before = m.group(1).lower() if m else ""
    if kind == "place":
        if before in _PLACE_CUES:
            return params.cue_match
        return params.cue_mismatch if before in _PERSON_CUES else 1.0
    if kind == "person":
        if before in _PLACE_CUES:
            return params.cue_mismatch
        return params.cue_match if before in _PERSON_CUES else 1.0
    return 1.0


def _attributive(sentence: str, name: str) -> bool:
    """A capitalised word used as an adjective ('an American actor') is not an answer to
    'who' or 'which' (a nationality question asks for it by type, not by name)."""
    if " " in name or tx.has_cjk(name):
        return False
    m = re.search(re.escape(name) + r"\s+([a-z][\w-]*)", sentence)
    return m is not None and m.group(1) not in tx.EN_STOPWORDS


def _is_year(text: str) -> bool:
    return bool(re.fullmatch(r"1\d{3}|20\d{2}", text.strip()))
