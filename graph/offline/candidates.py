"""Answer spans inside a unit, with their features: a row's cells (by their headers), a
field's value, the values of a kind (dates, amounts, codes, times, names), a clause, the
words the question leaves out where it asks ('则**4分钟**内不得' for '则多少分钟内不得'), and
the unit whole. Which one answers is the fitted model's call (graph/offline/model.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from graph import text as tx
from graph.offline.asked import Asked, content_terms
from graph.offline.evidence import nearness
from graph.offline.units import FIELD_RE, PIECES_RE, Unit
from graph.offline.values import clock_times, spans_of
from ingest.lang import CODE_RE
from ingest.phrases import text_phrases

SPAN_FEATURES = (
    "kind",  # a value of the kind asked
    "other_kind",  # a typed value of another kind than asked
    "cell",  # a table cell
    "header",  # its column header or field label names what is asked
    "first_cell",  # the row's first cell (its key)
    "value",  # a field's value
    "named",  # a name (capitalised, tagged, quoted)
    "clause",  # a clause of the sentence
    "whole",  # the unit whole
    "aligned",  # what the question leaves out where it asks
    "left",  # characters / words of the question matched just before it
    "right",  # ... just after it
    "near",  # nearness to the question's terms
    "given",  # share of its terms the question gives
    "length",  # log of its length
    "unit_word",  # it counts in the unit the question asks in ('days', '天')
    "repeated",  # other top units state it too
    "rule_span",  # the hand rules' first line states or bolds this span
    "rule_overlap",  # how much of the rules' span this one shares (token F1)
)

_ASK_RE = re.compile(
    r"(?:什么样的|什么时候|哪一年|哪一天|什么|哪[个些里儿位种天年家一所座条部本支国]?|多少[个次天人年元万]*|"
    r"多久|多长时间|多长|多大|多高|多远|几[个天次号月点年岁]?|谁|怎样|如何|怎么|为何|为什么|何[时处地人]?)"
)
_CLAUSE_RE = re.compile(r"[，,；;。!！？?]|[：:.](?!\d)|(?<!\d)[：:.]")  # not inside 08:00, 2.5
_PUNCT = "，,；;：:。.!！？?、（）()“”\"'《》 "
_NUMERIC = ("number", "date")


@dataclass
class Span:
    text: str
    features: dict[str, float]
    source: str  # cell | value | typed | name | clause | aligned | whole
    header: str = ""
    prob: float = 0.0


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def aligned_spans(question: str, text: str, reach: int = 8) -> list[tuple[str, int, int]]:
    """What the question leaves out where it asks: the text between where the question's
    words before its asking word end and where those after it start again in the unit.
    (span, characters matched before, after)."""
    m = _ASK_RE.search(question)
    if not m or not tx.has_cjk(question):
        return []
    left = question[: m.start()].rstrip(_PUNCT)[-reach:]
    right = question[m.end() :].lstrip(_PUNCT)[:reach]
    right = right.rstrip("？?。.！!")
    out: dict[str, tuple[int, int]] = {}
    starts = []
    for k in range(min(len(left), reach), 1, -1):
        for hit in re.finditer(re.escape(left[-k:]), text):
            starts.append((hit.end(), k))
        if starts:
            break
    ends = []
    for k in range(min(len(right), reach), 1, -1):
        for hit in re.finditer(re.escape(right[:k]), text):
            ends.append((hit.start(), k))
        if ends:
            break
    for s, kl in starts:
        for e, kr in ends:
            if 0 < e - s <= 60:
                span = text[s:e].strip(_PUNCT)
                if span:
                    out[span] = max(out.get(span, (0, 0)), (kl, kr))
        if not ends:  # to the clause's end
            tail = _CLAUSE_RE.split(text[s:], maxsplit=1)[0].strip(_PUNCT)
            if tail and len(tail) <= 60:
                out.setdefault(tail, (kl, 0))
    if starts and ends:
        return [(s, a, b) for s, (a, b) in out.items()]
    for e, kr in ends if not starts else ():  # from the clause's start
        head = _CLAUSE_RE.split(text[:e])[-1].strip(_PUNCT)
        if head and len(head) <= 60:
            out.setdefault(head, (0, kr))
    return [(s, a, b) for s, (a, b) in out.items()]


def _typed_kinds(text: str) -> set[str]:
    kinds = set()
    if spans_of("date", text) and any(s.strip() == text.strip() for s in spans_of("date", text)):
        kinds.add("date")
    if CODE_RE.fullmatch(text.strip()):
        kinds.add("code")  # 'C-1007' names a thing; it counts nothing
    elif re.search(r"\d", text):
        kinds.add("number")
    return kinds


def _header_match(asked: Asked, label: str) -> float:
    terms = content_terms(label)
    if not terms:
        return 0.0
    wanted = set(asked.terms) | set(asked.part_terms)
    return sum(1 for t in terms if t in wanted or any(t in w for w in wanted)) / len(terms)


def candidates(asked: Asked, unit: Unit) -> list[Span]:
    """Every span of the unit that may answer, with its features."""
    given = tx.fold(asked.question).casefold().replace(" ", "")
    found: dict[str, Span] = {}

    def add(text: str, source: str, header: str = "", **extra: float) -> None:
        text = text.strip().strip(_PUNCT) if source != "whole" else text.strip()
        if not text or len(text) > 400:
            return
        if source != "whole" and tx.fold(text).casefold().replace(" ", "") in given:
            return  # what the question gives is never its answer
        if source != "whole" and _ordinal(text, unit.text):
            return  # a list's item number ('1. Open a request')
        old = found.get(text)
        span = Span(text, _features(asked, unit, text, source, header, extra), source, header)
        if old is None or sum(span.features.values()) > sum(old.features.values()):
            found[text] = span

    shown = unit.shown()
    if unit.cells:
        for i, (header, value) in enumerate(unit.cells):
            if value and value not in ("—", "-", "/", "✗", "✓"):
                add(value, "cell", header, first_cell=float(i == 0))
    for piece in PIECES_RE.split(unit.text) if not unit.cells else ():
        field = FIELD_RE.match(piece.strip())  # 'Group: Marlin · Lead: Teodor Brask': each
        if field:
            add(field.group("value"), "value", field.group("label"))
    text = unit.text if not unit.cells else shown
    clocks = clock_times(text)
    for kind in ("date", "number", "code"):
        for value in spans_of(kind, text):
            if not _cuts_a_time(value, text, clocks):
                add(value, "typed")
    for value in clocks:
        add(value, "typed")
    for value in text_phrases(text):
        add(value, "name")
    if not unit.cells:
        clauses = [c for c in _CLAUSE_RE.split(unit.text) if c.strip()]
        if len(clauses) > 1:
            for clause in clauses:
                add(clause, "clause")
                add(_unasked(clause, given), "clause")  # '法定代表人为李明远' less what is asked
        for span, left, right in aligned_spans(asked.question, unit.text):
            add(span, "aligned", left=left, right=right)
    add(shown, "whole")
    return list(found.values())


def _ordinal(value: str, text: str) -> bool:
    """Whether a number only numbers a list's item ('1. Open a request')."""
    v = re.escape(value)
    return re.search(rf"(?:^|\s){v}[.)、](?:\s|$)", text) is not None and len(value) <= 2


def _unasked(clause: str, given: str) -> str:
    """A clause without the words the question gives at its start ('法定代表人为李明远' for a
    question with '法定代表人': '李明远'), the linking character after them too."""
    text = clause.strip().strip(_PUNCT)
    k = len(text)
    while k > 1 and tx.fold(text[:k]).casefold().replace(" ", "") not in given:
        k -= 1
    if k < 2 or k >= len(text):
        return ""
    rest = text[k:].lstrip(_PUNCT)
    return rest[1:] if rest[:1] in ("为", "是", "由", "：", ":") else rest


def _cuts_a_time(value: str, text: str, clocks: list[str]) -> bool:
    """Whether a number is a piece of a time of day ('00 to 17' of '08:00 to 17:00')."""
    if any(value in c and value != c for c in clocks):
        return True
    v = re.escape(value)
    return re.search(rf"\d:{v}|{v}:\d", text) is not None


def _features(
    asked: Asked, unit: Unit, text: str, source: str, header: str, extra: dict[str, float]
) -> dict[str, float]:
    kinds = _typed_kinds(text)
    wanted = {"number": "number", "date": "date"}.get(asked.kind, "")
    is_name = bool(text_phrases(text)) and not kinds
    kind_fit = (
        (wanted in kinds)
        if wanted
        else (
            is_name if asked.kind in ("person", "place", "nation", "language", "entity") else False
        )
    )
    terms = set(content_terms(text))
    question_terms = set(asked.terms)
    near_terms = {t for t in question_terms if t not in terms}
    return {
        "kind": float(kind_fit),
        "other_kind": float(bool(kinds) and not kind_fit),
        "cell": float(source == "cell"),
        "header": _header_match(asked, header) if header else 0.0,
        "first_cell": extra.get("first_cell", 0.0),
        "value": float(source == "value"),
        "named": float(is_name),
        "clause": float(source == "clause"),
        "whole": float(source == "whole"),
        "aligned": float(source == "aligned"),
        "left": min(extra.get("left", 0.0), 8.0) / 8.0,
        "right": min(extra.get("right", 0.0), 8.0) / 8.0,
        "near": nearness(unit.text, text, near_terms) if source != "whole" else 0.0,
        "given": len(terms & question_terms) / len(terms) if terms else 0.0,
        "length": math.log1p(len(text)) / 6.0,
        "unit_word": float(bool(asked.unit_word) and asked.unit_word in text.lower()),
        "repeated": 0.0,
        "rule_span": float(bool(asked.rule_span) and _same(text, asked.rule_span)),
        "rule_overlap": _overlap(text, asked.rule_span) if asked.rule_span else 0.0,
    }


def _same(a: str, b: str) -> bool:
    return tx.fold(a).casefold().replace(" ", "") == tx.fold(b).casefold().replace(" ", "")


def _overlap(a: str, b: str) -> float:
    """Token F1 of two spans (characters for Chinese)."""
    one = list(a.replace(" ", "")) if tx.has_cjk(a) else tx.words(a)
    two = list(b.replace(" ", "")) if tx.has_cjk(b) else tx.words(b)
    common = sum((Counter(one) & Counter(two)).values())
    if not common:
        return 0.0
    p, r = common / len(one), common / len(two)
    return 2 * p * r / (p + r)
