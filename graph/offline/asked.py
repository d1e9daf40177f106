"""What a question asks, read once: its kind, its terms, the names and codes that pick one
thing among its like (anchors), the amounts and dates it gives, and the step that asks it.

The reader's features (graph/offline/features.py) compare units with this view.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from graph import text as tx
from graph.offline.kinds import answer_type
from graph.offline.values import DATE_RE, asked_unit, class_anchors, codes_in, date_keys
from graph.protocols import HopView
from ingest.lang import language_of
from ingest.phrases import text_phrases

# words a question asks with, never a term a passage should hold ('多少', 'which')
_ASKING_RE = re.compile(
    r"什么|哪[个些里儿位种天年家一]?|多少|多久|多长|几[个天次号月点]?|谁|怎么|如何|怎样|是否|吗|呢|请问"
)
_AMOUNT_RE = re.compile(r"(?<![A-Za-z0-9_.])(\d[\d,]*(?:\.\d+)?)\s*(百万|万|千|亿|k\b|K\b|w\b)?")
_SCALE = {"万": 1e4, "千": 1e3, "k": 1e3, "K": 1e3, "百万": 1e6, "亿": 1e8, "w": 1e4}


@dataclass
class Asked:
    """A question (and the step of it being read) as the reader sees it."""

    question: str
    part: str  # the step read for (its #k written as the entity found), or the question
    kind: str  # answer_type of the question: number, date, person, place, entity, …
    lang: str
    terms: list[str]  # content terms of the question, in order
    part_terms: list[str]  # ... of the step, when it differs
    bigrams: frozenset[str]  # Chinese character pairs of its content words
    codes: list[str]  # codes and numbered classes that pick one thing among its like
    names: list[str]  # names it gives (quoted, capitalised, tagged)
    amounts: list[float]  # numbers the question gives ('4万' -> 40000)
    dates: frozenset[tuple[int, int, int]]
    unit_word: str  # the unit a 'how many X' counts in
    own: frozenset[str] = field(default_factory=frozenset)  # chunk ids the step's search found
    # the hand rules' first line (graph/offline/rules.py): short | quote | not_found | none,
    # the passage it cites, what it states or quotes, and its span
    rule_kind: str = "none"
    rule_n: int | None = None
    rule_text: str = ""
    rule_span: str = ""
    rule_full: str = ""  # the rules' whole answer
    incomplete: bool = False  # the judge found the evidence short of a part (its `missing`)


def content_terms(text: str) -> list[str]:
    """The terms a passage should hold to speak of the text: no asking words, no #k."""
    return list(_content_terms(text))


@lru_cache(maxsize=65536)
def _content_terms(text: str) -> tuple[str, ...]:
    text = _ASKING_RE.sub(" ", tx.PLACEHOLDER_RE.sub(" ", text))
    return tuple(dict.fromkeys(t for t in tx.coverage_terms(text) if t))


def cjk_bigrams(terms: Sequence[str]) -> frozenset[str]:
    return frozenset(
        t[i : i + 2] for t in terms if tx.has_cjk(t) and len(t) >= 2 for i in range(len(t) - 1)
    )


def codes_and_classes(text: str) -> list[str]:
    """Codes ('KX-200') and numbered classes ('一类', 'P1') the text gives."""
    text = tx.PLACEHOLDER_RE.sub(" ", text)
    return list(dict.fromkeys([*codes_in(text), *class_anchors(text)]))


def names_of(text: str) -> list[str]:
    """Names the text gives that are no code, month or lone capitalised word opening a
    sentence: quoted titles, capitalised runs, Chinese names of three characters or more."""
    text = tx.PLACEHOLDER_RE.sub(" ", text)
    codes = set(codes_and_classes(text))
    out = []
    for found in text_phrases(text):
        # a Latin name runs up to the first Chinese character ('Mara Quill的分机号' -> 'Mara Quill')
        name = found if not tx.has_cjk(found[:1]) else found
        if not tx.has_cjk(found[:1]) and tx.has_cjk(found):
            name = re.split(f"[{tx.CJK}]", found, maxsplit=1)[0].strip()
        if not name or name in codes or DATE_RE.fullmatch(name) or name.casefold() in tx.MONTHS:
            continue
        if tx.has_cjk(name) and len(name) < 3:
            continue
        at = text.find(name)
        opening = at >= 0 and not text[:at].strip(" \"'“‘(")  # 'Apart from …'
        if opening and " " not in name and not tx.has_cjk(name):
            continue
        out.append(name)
    return list(dict.fromkeys(out))


def anchors_of(text: str) -> list[str]:
    """Codes, numbered classes and names: what picks one thing among its like."""
    return list(dict.fromkeys([*codes_and_classes(text), *names_of(text)]))


def amounts_of(text: str) -> list[float]:
    """The amounts a text gives, dates, codes and times aside ('4万块' -> 40000.0)."""
    masked = DATE_RE.sub(" ", text)
    for code in codes_in(masked):
        masked = masked.replace(code, " ")
    out = []
    for m in _AMOUNT_RE.finditer(masked):
        try:
            value = float(m.group(1).replace(",", ""))
        except ValueError:
            continue
        out.append(value * _SCALE.get(m.group(2) or "", 1.0))
    return out


def step_in_words(hop: HopView) -> str:
    """A step as a reader would say it: its #k written as the entity found."""
    if not tx.PLACEHOLDER_RE.search(hop.sub_question):
        return hop.sub_question
    return tx.PLACEHOLDER_RE.sub(hop.entity, hop.sub_question) if hop.entity else hop.query


def read_question(question: str, hops: Sequence[HopView] = (), part: str = "") -> Asked:
    """The view of a question; `part` is the step read for (default: a chain's last step)."""
    asked = [h for h in hops if not h.follow_up]
    finals = [h for h in asked if h.final] or asked[-1:]
    own: frozenset[str] = frozenset()
    if (
        not part
        and finals
        and (len(asked) > 1 or tx.PLACEHOLDER_RE.search(finals[-1].sub_question))
    ):
        part = step_in_words(finals[-1])
        own = frozenset(finals[-1].hit_ids)
    part = part or question
    terms = content_terms(question)
    part_terms = content_terms(part) if part != question else terms
    return Asked(
        question=question,
        part=part,
        kind=answer_type(question),
        lang=language_of(question),
        terms=terms,
        part_terms=part_terms,
        bigrams=cjk_bigrams(terms),
        codes=codes_and_classes(question),
        names=names_of(question),
        amounts=amounts_of(question),
        dates=date_keys(question),
        unit_word=asked_unit(question),
        own=own,
    )
