"""The reader: for one part of a question, the sentence (or table row, or field line) of the
evidence that best answers it, and inside it the span of the expected type.

A passage is cut into units a reader would point at: a sentence, a field line of a log or a
form ('Label: value'), a table row read with its column headers. A unit is scored by how much
of the part it covers, itself and with its context (the block's first line, the section, the
title), so a field line under '[TAG-7]' answers a question about TAG-7. Inside the unit, the
span is the value of the expected type attached to what is asked: the cell under the asked
column, the number next to the asked noun, the date next to the asked event. Headings,
navigation and table-of-contents lines are never units.

Here the reading itself (read); its steps: reader_units.py (the units), reader_checks.py
(relation, anchors, changes), reader_rank.py (the ranking), reader_classes.py (numbered
classes) and reader_spans.py (the span inside a unit).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.answer_compare import comparison_direction
from graph.offline.evidence import relevance
from graph.offline.namelists import NAMED_KINDS
from graph.offline.nations import as_asked
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.reader_checks import changed_value, echoes, relation_of
from graph.offline.reader_classes import class_kind, classes_matter, implied_class
from graph.offline.reader_rank import rank_units
from graph.offline.reader_spans import compare_rows, of_asked_kind, read_row, read_sentence
from graph.offline.reader_units import Reading, Unit
from graph.offline.values import class_anchors, codes_in, date_keys, spans_of
from graph.protocols import EvidenceItem, Similarity
from ingest.lang import CODE_RE
from ingest.phrases import text_phrases


def _rows_named(question: str, unit: Unit, ranked: Sequence[Unit]) -> list[Unit]:
    """The rows of the unit's table that hold one of the codes the question names, in
    order, one row per code."""
    if not unit.cells:
        return []
    rows: list[Unit] = []
    for code in dict.fromkeys(m.group(0) for m in CODE_RE.finditer(question)):
        row = next((u for u in ranked if u.cells and u.context == unit.context
                    and any(v == code for _, v in u.cells)), None)  # fmt: skip
        if row is not None and row not in rows:
            rows.append(row)
    asked = date_keys(question)  # a reverse lookup names its row by a value ('until 2031-01-02')
    for u in ranked if asked else ():
        if u not in rows and same_table(u, unit) and any(date_keys(v) & asked for _, v in u.cells):
            rows.append(u)
    return rows


def same_table(one: Unit, other: Unit) -> bool:
    """Two rows of one table: the same context, or the same column headers (a table that goes
    on in the next chunk carries its header row there)."""
    if not one.cells or not other.cells:
        return False
    return one.context == other.context or [h for h, _ in one.cells] == [h for h, _ in other.cells]


def read(
    part: str,
    question: str,
    kind: str,
    items: Sequence[EvidenceItem],
    params: OfflineParams = PARAMS,
    own: frozenset[str] = frozenset(),
    similarity: Similarity | None = None,
    scene: str = "",
) -> Reading | None:
    """The best unit for the part and the answer inside it; `scene` is the question around a
    part that is its only one (its codes and classes name what the part asks of). A question
    that names no class but a subject the evidence puts in one ('Hollow Creek' of 'Tier 2
    sites: Hollow Creek') is read as asking about that class, when the evidence tells classes
    of that kind apart."""
    ranked = rank_units(part, items, params, kind, own, similarity, scene)
    implied = implied_class(question, items, params)
    via = implied[1].text if implied is not None else None  # the membership itself aside,
    top = [(sc, u) for sc, u in ranked if sc >= params.reader_min_score and u.text != via]
    if implied is not None and classes_matter(implied[0], top[: params.reader_class_top]):
        part, question = f"{part} ({implied[0]})", f"{question} ({implied[0]})"
        ranked = rank_units(part, items, params, kind, own, similarity, scene)
    else:
        implied = None
    if not ranked:
        return None
    ranked = [(s, u) for s, u in ranked if not echoes(u, part)] or ranked  # says nothing new
    if kind in NAMED_KINDS:  # a unit naming no country / language answers no question of one
        ranked = [(s, u) for s, u in ranked if NAMED_KINDS[kind].find(u.text)] or ranked
    if kind == "number":  # a unit with no amount cannot answer (a time may be said in words)
        ranked = [(s, u) for s, u in ranked if u.cells or spans_of(kind, u.text)] or ranked[:0]
        if not ranked:
            return None
    if kind in ("place", "person"):  # a close second that names one, over a first that
        ranked = _naming_first(part, question, kind, ranked, params)  # names no place
    score, unit = ranked[0]
    tied = [u for s, u in ranked if s >= score - 1e-6 and u.cells and u.context == unit.context]
    codes = set(codes_in(question))
    table = next((u for _, u in ranked if u.cells and any(v in codes for _, v in u.cells)), unit)
    named = _rows_named(question, table, [u for _, u in ranked])
    if len(named) > 1:  # the question names several rows ('A and B, which …'): all of them
        compared = compare_rows(question, named, comparison_direction(question), params)
        if compared is not None:
            return compared
        if table is unit:
            tied = named
    elif named and same_table(named[0], unit):  # the one row the question names
        unit, tied = named[0], [named[0]]  # ('保修到 2031 年 3 月 9 日的设备', 'QT-7's cost')
    if len(tied) > 1:  # rows the part cannot tell apart: the reader sees them all
        rows = tied[: params.reader_tied_rows]
        unit = Unit(" / ".join(u.text for u in rows), unit.context, unit.n, unit.rank,
                    listed=tuple(u.shown() + ";" for u in rows))  # fmt: skip
        return Reading(unit, score)
    reading = Reading(unit, score, via=implied[1] if implied is not None else None)
    if unit.cells:
        reading.span, confident, header = read_row(part, question, unit, kind, params)
    elif changed := changed_value(unit.text, kind, params, about=relation_of(part)):
        reading.span, confident = changed, True  # the value it changes to, none beside it
    else:
        reading.span, confident = read_sentence(part, question, unit, kind, params)
    stated = relevance(relation_of(part), "", unit.shown()) >= params.reader_state_relation
    if kind in NAMED_KINDS and reading.span:  # 'X … was an American director' says X's
        stated = stated or _names_subject(part, unit, reading.span)  # nationality in no word
    if kind == "nation" and reading.span:  # of it; 'which country': 'United States'
        country = as_asked(question, reading.span)
        reading.stated = country if country != reading.span else ""
    if kind == "date" and reading.span and _YEAR_ASKED_RE.search(part):  # 'in what year':
        reading.span = year_of(reading.span) or reading.span  # the year of the date read
    # a value said of one member of a class ('二类网点…修改为6小时') is not stated for a
    # question that does not say which member it asks of: quoted, its member in view
    said = {class_kind(c) for c in class_anchors(question)}  # ('类' of '一类站点', 'p' of 'P1')
    said |= {class_kind(implied[0])} if implied is not None else set()
    unsaid = any(class_kind(c) not in said for c in class_anchors(unit.text))
    reading.confident = (
        confident
        and bool(reading.span)
        and stated
        and score >= params.reader_state_score
        and not unsaid
        and of_asked_kind(kind, part, reading.span)
    )
    return reading


def _naming_first(
    part: str, question: str, kind: str, ranked: list[tuple[float, Unit]], params: OfflineParams
) -> list[tuple[float, Unit]]:
    """The ranking with the best unit that holds a name of the asked kind first, when the top
    one holds none ('X (born March 3, 1951) is a filmmaker' for 'X's place of birth'): as a
    unit without an amount answers no 'how many', among the next few that score enough to
    answer at all (`reader_min_score`); as it was otherwise."""
    if not ranked or ranked[0][1].cells or read_sentence(part, question, ranked[0][1], kind)[0]:
        return ranked
    for i, (sc, u) in enumerate(ranked[1 : 1 + params.reader_next_units], start=1):
        if sc < params.reader_min_score:
            break
        if not u.cells and read_sentence(part, question, u, kind)[0]:
            return [ranked[i], *ranked[:i], *ranked[i + 1 :]]
    return ranked


_YEAR_ASKED_RE = re.compile(r"\b(?:what|which)\s+year\b|哪一?年|何年", re.IGNORECASE)


def year_of(span: str) -> str:
    """The year a date states ('1981' of 'April 12, 1981', '2024年' of '2024年3月5日'), or ''
    when the span is a year already or names none."""
    zh = re.search(r"(\d{4})\s*年", span)
    if zh:
        year = zh.group(1) + "年"
    else:
        found = re.findall(r"(?<![\d.])\d{3,4}(?:\s*(?:BC|BCE|AD|CE)\b)?(?!\d|\.\d)", span)
        year = found[-1] if found else ""
    return year if year and year != span.strip() else ""


def _names_subject(part: str, unit: Unit, span: str) -> bool:
    """Whether the unit says the span of what the part asks about: the name, then 'is' / 'was'
    and a few words, then the span ('Ann Lee (born 1950) was an American …', 'Tidewater is a
    1998 Tamil song'); not 'a 1915 American film directed by Ann Lee', nor 'Ann Lee starred in
    a French film'."""
    low = unit.text.lower()
    at = low.find(span.lower())
    names = [n.lower() for n in text_phrases(tx.PLACEHOLDER_RE.sub(" ", part))]
    starts = [low.find(n) + len(n) for n in names if 0 <= low.find(n) < at]
    return any(_SAID_OF_RE.search(low[start:at]) for start in starts)


# between the subject and the span: a copula and at most four words ('was an', 'is a 1998')
_SAID_OF_RE = re.compile(r"\b(?:is|was|are|were|is\s+also|was\s+also)\s+(?:[\w'’-]+\s+){0,4}$")
