"""What an answer quotes from each source, and where that sits in the source's passage, for the
source cards: the cited unit (sentence, row or line) with its neighbours, the quoted part marked.
Pure functions, no Streamlit; the marking is drawn by ui.documents.section_markdown (escaped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ui.documents import TABLE_CELL, SectionText, find_passage

_MARKER = re.compile(r"\[(\d{1,4}(?:\s*[,，、]\s*\d{1,4})*)\]")
_QUOTED = re.compile(r"[“\"「『]([^”\"」』\n]{2,})[”\"」』]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_LEAD = re.compile(r"^[^\s:：]{1,20}(?:\s[^\s:：]{1,20}){0,3}\s*[:：]\s*")  # 'Answer: ', '答案：'
_FIELD = re.compile(r"^[^:：;；]{1,40}[:：]\s*(?=\S)")  # 'Label: ' before a value
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？；]")
_LINE = re.compile(r"[^\r\n]+")
MIN_COVERAGE = 0.5  # share of the quoted words found in the passage for it to count
CONTEXT_UNITS = 1  # units shown on either side of the cited one
ELLIPSIS = "…"


def answer_quotes(answer: str) -> dict[int, list[str]]:
    """For each [n] of the answer, the text it is attached to, in order: what stands between
    the previous marker on the line (or its start) and this one, the inside of a quotation
    when there is one, without list marks, a lead label ('Answer:') or bold marks."""
    found: dict[int, list[str]] = {}
    for line in answer.splitlines():
        at = 0
        for marker in _MARKER.finditer(line):
            piece = _cleaned(line[at : marker.start()])
            at = marker.end()
            if not piece:
                continue
            for number in re.split(r"\s*[,，、]\s*", marker.group(1)):
                found.setdefault(int(number), []).append(piece)
    return found


def _cleaned(piece: str) -> str:
    piece = piece.replace("**", "")
    quoted = _QUOTED.findall(piece)
    if quoted:
        return " ".join(_values(q) for q in quoted).strip()
    piece = _LIST_MARK.sub("", piece).strip(" \t.,;，。；")
    values = _values(piece)
    return values if values != piece else _LEAD.sub("", piece, count=1)


def _values(text: str) -> str:
    """A table row quoted as its fields ('Item: Vela; Room: 217') as its values ('Vela 217'),
    the words the row itself holds (its column names are in the header row); else the text."""
    fields = [f.strip() for f in re.split(r"[;；]\s*", text) if f.strip()]
    if len(fields) < 2 or not all(_FIELD.match(f) for f in fields):
        return text
    return " ".join(_FIELD.sub("", f, count=1) for f in fields)


def unit_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of each line of `text` (a table row or a list line is one unit), as
    character offsets without their leading blanks."""
    spans = []
    for line in _LINE.finditer(text):
        start = line.start()
        ends = [line.start() + m.end() for m in _SENTENCE_END.finditer(line.group())]
        for stop in [*ends, line.end()]:
            piece = text[start:stop]
            if piece.strip():
                spans.append((start + len(piece) - len(piece.lstrip()), stop))
            start = stop
    return spans


def cited_context(passage: str, wanted: Iterable[str]) -> SectionText | None:
    """The units of `passage` holding the first of `wanted` found in it (most of its words, in
    order), with CONTEXT_UNITS units either side and an ellipsis where the passage goes on; the
    found words marked. None when none of `wanted` is in the passage."""
    for quote in wanted:
        found = find_passage(passage, quote) if quote.strip() else None
        if found is not None and found.coverage >= MIN_COVERAGE:
            break
    else:
        return None
    units = unit_spans(passage)
    first = next(i for i, u in enumerate(units) if u[1] > found.start)
    last = max(i for i, u in enumerate(units) if u[0] < found.end)
    start = units[max(0, first - CONTEXT_UNITS)][0]
    end = units[min(len(units) - 1, last + CONTEXT_UNITS)][1]
    header = table_header(passage, units[first][0])
    if header is not None and header[1] < start:  # a row keeps its table's header row above it
        gap = passage[header[1] : start].strip()
        before = passage[header[0] : header[1]] + "\n" + (ELLIPSIS + " " if gap else "")
    else:
        before = ELLIPSIS + " " if passage[:start].strip() else ""
    after = " " + ELLIPSIS if passage[end:].strip() else ""
    text = before + passage[start:end] + after
    shift = len(before) - start
    return SectionText(text, (found.start + shift, found.end + shift))


def table_header(passage: str, at: int) -> tuple[int, int] | None:
    """The first line of the table whose row starts at `at` (rows are lines of cells joined
    with ' | ', one table a run of such lines); None when `at` starts no table row."""
    lines = [m.span() for m in _LINE.finditer(passage) if TABLE_CELL in m.group()]
    row = next((i for i, span in enumerate(lines) if span[0] <= at < span[1]), None)
    if row is None:
        return None
    while (
        row > 0
        and not passage[lines[row - 1][1] : lines[row][0]].strip("\r\n")
        and (passage.count("\n", lines[row - 1][1], lines[row][0]) == 1)
    ):
        row -= 1
    return lines[row]


def marked_passage(passage: str, quote: str) -> SectionText:
    """The whole passage, `quote` marked where most of its words are (unmarked otherwise)."""
    found = find_passage(passage, quote) if quote.strip() else None
    if found is None or found.coverage < MIN_COVERAGE:
        return SectionText(passage, None)
    return SectionText(passage, (found.start, found.end))
