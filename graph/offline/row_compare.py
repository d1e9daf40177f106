"""Rows of one table that the question names, compared on the column it asks about: 'A or B,
which is cheaper?' over a price list, '甲和乙谁的额度高？' over a customer table.

A row is named when the question gives a piece of one of its cells (the cell, a run of Chinese
characters of it, a part of it between dashes or brackets) that no other row of the table
holds. The column is the one whose header holds the question's words (`header_match`); when
none does and the headers are in the other language, the comparable columns all shown,
nearest in meaning first (the built-in embedder), if two or more all pick the same row. Only
a question that picks one ('which', 'A or B', '谁', '哪') and asks no difference is read so.
Nothing is stated unless every named row has a value in that column and the values differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline.answer_compare import comparison_direction
from graph.offline.columns import header_match
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.totals import asks_difference
from graph.offline.units import Unit, pool_units
from graph.offline.values import date_keys, numeric_value
from graph.protocols import EvidenceItem, Similarity
from ingest.lang import CODE_RE

MAX_ROWS = 4  # a question names at most this many rows to compare
MAX_COLUMNS = 3  # columns that agree are all shown; more than this are no answer
_CJK_RUN_RE = re.compile(f"[{tx.CJK}]{{2,}}")
_SEGMENT_RE = re.compile(r"\s+[—–-]\s+|[(),;/（）；，、:：]")
_LETTER_RE = re.compile(f"[A-Za-z{tx.CJK}]")
# a question that picks one of the named things ('which', 'A or B', '谁', '哪', '还是')
_CHOICE_RE = re.compile(r"\b(?:which|who|whose|whom|or)\b|哪|谁|还是", re.IGNORECASE)
# digits in groups ('0100 555', '028-8512 6630') or after a leading zero: a phone, an ID
_DIGIT_GROUPS_RE = re.compile(r"\d[\s-]+\d|^\+?0\d")


@dataclass(frozen=True)
class RowChoice:
    text: str  # the picked row's name, then each compared value
    cites: list[int]
    shown: list[tuple[int, str]]  # (citation, row as shown) of every compared row


def pieces(cell: str) -> list[str]:
    """What of a cell a question may name it by: the cell, its runs of Chinese characters,
    its parts between dashes, brackets and commas; each with a letter, none of only digits."""
    latin = _CJK_RUN_RE.sub(" ", cell).split()
    heads = [" ".join(latin[:k]) for k in range(2, len(latin) + 1)]  # without "Co." or the Chinese
    found = [cell.strip(), *_CJK_RUN_RE.findall(cell), *_SEGMENT_RE.split(cell), *heads]
    out = []
    for piece in (p.strip() for p in found):
        if len(piece) >= 2 and _LETTER_RE.search(piece) and piece.casefold() not in _STOP:
            out.append(piece)
    return list(dict.fromkeys(out))


_STOP = tx.EN_STOPWORDS


def given(piece: str, question: str) -> bool:
    """Whether the question gives this piece of a cell (a Latin piece as whole words)."""
    if tx.has_cjk(piece):
        return piece in question
    return re.search(rf"(?<!\w){re.escape(piece)}(?!\w)", question) is not None


def given_pieces(row: Unit, question: str) -> list[tuple[str, str]]:
    """(cell value, piece) of each piece of the row's cells the question gives, no header's
    word among them (a code aside): what the question names the row by."""
    headers = " ".join(h for h, _ in row.cells)
    return [
        (value, piece)
        for _, value in row.cells
        for piece in pieces(value)
        if given(piece, question) and (piece not in headers or CODE_RE.fullmatch(piece))
    ]


def without(question: str, named: Iterable[str]) -> str:
    """The question without the pieces it names rows by: what it asks of them."""
    for piece in sorted(named, key=len, reverse=True):
        question = question.replace(piece, " ")
    return question


def tables(units: Sequence[Unit]) -> list[list[Unit]]:
    """The rows of the evidence grouped by table (same headers and context), in order."""
    out: dict[tuple[str, tuple[str, ...]], list[Unit]] = {}
    for unit in units:
        if unit.kind == "row" and unit.cells:
            key = (unit.context, tuple(h for h, _ in unit.cells))
            rows = out.setdefault(key, [])
            if all(r.text != unit.text for r in rows):
                rows.append(unit)
    return list(out.values())


def named_rows(question: str, rows: Sequence[Unit]) -> list[tuple[str, Unit]]:
    """(the piece the question names it by, the row) of each row the question names, in the
    question's order; a piece that more rows hold names none of them."""
    holders: dict[str, list[Unit]] = {}
    for row in rows:
        for piece in {p for _, p in given_pieces(row, question)}:
            holders.setdefault(piece, []).append(row)
    named: dict[int, tuple[str, Unit]] = {}
    for piece, held in holders.items():
        if len(held) != 1:
            continue
        row = held[0]
        current = named.get(id(row))
        if current is None or len(piece) > len(current[0]):  # its fullest piece
            named[id(row)] = (piece, row)
    chosen = list(named.values())
    # a piece inside another named row's piece ('Team' of 'Team Plus') names nothing of its own
    chosen = [(p, r) for p, r in chosen if not any(p != q and p in q for q, _ in chosen)]
    return sorted(chosen, key=lambda pair: question.find(pair[0]))


def _columns(named: Sequence[tuple[str, Unit]]) -> list[str]:
    """The headers under which every named row has a comparable value (not the cells that
    name the rows, not codes)."""
    headers = [h for h, _ in named[0][1].cells if h]
    out = []
    for header in headers:
        values = [dict(row.cells).get(header, "") for _, row in named]
        if any(piece in v for v in values for piece, _ in named):
            continue
        if all(_comparable(v) for v in values):
            out.append(header)
    return out


def _comparable(value: str) -> bool:
    """A value to compare: a date, or an amount that is no code, phone number or ID."""
    value = value.strip()
    if not value or CODE_RE.search(value):
        return False
    if date_keys(value):
        return True
    return numeric_value(value) is not None and not _DIGIT_GROUPS_RE.search(value)


def _pick(values: Sequence[float], direction: int) -> int | None:
    if len(set(values)) < len(values):
        return None  # a tie picks nothing
    best = (min if direction < 0 else max)(values)
    return values.index(best)


def compare_named_rows(
    question: str,
    evidence: Sequence[EvidenceItem],
    similarity: Similarity | None = None,
    params: OfflineParams = PARAMS,
) -> RowChoice | None:
    """The named row the comparison word picks on the asked column, with every value shown;
    None unless the question compares and names two to MAX_ROWS rows of one table."""
    direction = comparison_direction(question)
    if not direction or not _CHOICE_RE.search(question) or asks_difference(question):
        return None  # no pick among named things: 'how much more' is a difference
    for rows in tables(pool_units(evidence)):
        named = named_rows(question, rows)
        if not 2 <= len(named) <= MAX_ROWS:
            continue
        columns = _column(question, named, direction, similarity, params)
        if not columns:
            continue
        values = [numeric_value(dict(row.cells)[columns[0]]) or 0.0 for _, row in named]
        picked = _pick(values, direction)
        if picked is None:
            continue
        said = "; ".join(
            f"{column} — " + ", ".join(f"{p}: {dict(r.cells)[column]}" for p, r in named)
            for column in columns
        )
        cites = list(dict.fromkeys(r.n for _, r in named))
        shown = [(r.n, r.shown()) for _, r in named]
        return RowChoice(f"{named[picked][0]} ({said})", cites, shown)
    return None


def _column(
    question: str,
    named: Sequence[tuple[str, Unit]],
    direction: int,
    similarity: Similarity | None,
    params: OfflineParams,
) -> list[str]:
    """The compared column: the one whose header holds the question's words; when none does,
    the comparable columns headed in the other language (where words cannot match), nearest
    in meaning first, if there are two or more and they all pick the same row; [] when
    neither tells."""
    columns = _columns(named)
    if not columns:
        return []
    asked = without(question, (piece for piece, _ in named))
    by_words = sorted(((header_match(asked, h), h) for h in columns), key=lambda x: -x[0])
    if by_words[0][0] >= params.reader_column_min and (
        len(by_words) == 1 or by_words[1][0] < by_words[0][0]
    ):
        return [by_words[0][1]]
    # a header in the question's language that holds none of its words is not what it asks:
    # only across languages, where words cannot match, does meaning choose
    asked_lang = tx.language_of(asked)
    columns = [h for h in columns if tx.language_of(h) != asked_lang]
    if not columns:
        return []
    picks = {
        _pick([numeric_value(dict(r.cells)[h]) or 0.0 for _, r in named], direction)
        for h in columns
    }
    if len(picks) != 1 or None in picks or not 2 <= len(columns) <= MAX_COLUMNS:
        return []  # one column says nothing of being asked; several that disagree, neither
    if similarity is None:
        return columns
    try:
        sims = similarity(tx.normalize_space(asked), list(columns))
    except Exception:  # noqa: BLE001 - the order of columns that agree is only how they show
        return columns
    return [h for _, h in sorted(zip(sims, columns, strict=True), key=lambda x: -x[0])]
