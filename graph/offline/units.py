"""Answer units: what a reader can point at in a passage, with the structure around it.

A passage is cut into units: a sentence (with the names of the sentence before it when it
refers back), a short 'Label: value' field line with the record it belongs to, a log line
whole, a table row with its column headers (and the row's key), a list item with its list
and the heading above it. Headings, navigation, rules and table-of-contents lines are never
units. Every unit knows its passage (citation, rank, document, section) and its language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from graph import text as tx
from graph.offline.evidence import heading_like
from graph.protocols import EvidenceItem
from ingest import lexicon
from ingest.lang import FIELD_LABEL, language_of
from ingest.phrases import text_phrases

_LIST_RE = re.compile(
    r"^(?:[-*•]|\d{1,2}[.)、]|[（(]?\d{1,2}[）)]|第[一二三四五六七八九十\d]+步)\s*"
)
TOC_RE = re.compile(r"(?:\.{4,}|…{2,}|·{4,})\s*\d+\s*$")
RULE_RE = re.compile(r"[-=_*#·~]{6,}")
# A 'Label: value' line (ingest.lang.FIELD_LABEL); records read their fields with it too.
FIELD_RE = re.compile(rf"^(?P<label>{FIELD_LABEL})[:：]\s*(?P<value>\S.*)$")
# A log line: it opens with a date or time stamp or a bracketed tag, or names two key=value pairs
_STAMP_RE = re.compile(r"^(?:\[[^\]\s]{1,40}\]|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}:\d{2})")
_PAIR_RE = re.compile(r"(?<![\w=])[A-Za-z_][\w-]{0,20}=\S")
FIELD_LINE_CHARS = 80  # a 'Label: value' line this short is one unit, unsplit
RECORD_FIELD_CHARS = 80  # a record's field lines this short are its lines' context
ITEM_CHARS = 400  # a list item this short is one unit, its number kept
LIST_CHARS = 1500  # a list this long at most is also one unit whole (a procedure)
RECORD_LINES = 10  # a record of at most this many lines is also one unit whole
LOG_LINE_CHARS = 600  # a log line longer than this is read sentence by sentence
MEANT_CHARS = 300  # what the embedder compares of a unit
# runs of fields on one line ('Issued 31 July 2025 · Effective 1 September 2025', '版本：2.0 ｜
# 生效日期：…'): each piece is a field of its own
PIECES_RE = re.compile(r"\s+[·•｜|]\s+|\s*｜\s*")


@dataclass(frozen=True)
class Unit:
    """One thing a reader can quote, with where it sits."""

    text: str  # verbatim (a row: its cells joined by ' | ')
    context: str  # the block's first line, the record's fields, the section and the title
    n: int  # the citation of its passage
    rank: int  # its passage's place in the evidence order (0 first)
    kind: str = "sentence"  # sentence | field | record | row | item | list
    cells: tuple[tuple[str, str], ...] = ()  # (column header, value) for a table row
    listed: tuple[str, ...] = ()  # the whole list when the unit is one of its items
    title: str = ""  # its passage's title: what 'The club …' or 'He …' is about
    referent: str = ""  # the names of the sentence before, when this one refers back
    heading: str = ""  # the last heading of its section ('Odile Marsh' of 'Staff > Odile Marsh')
    key: str = ""  # what a row or record is about: its first cell, its first field's value
    source: str = ""  # the document's name
    chunk_id: str = ""
    position: int = 0  # its place among its passage's units
    lang: str = "en"
    lead: str = ""  # a record's key line, shown before each of its fields ('[#07] 2024-06-12 收文')

    def meant(self) -> str:
        """What the embedder compares (at most MEANT_CHARS): the unit as shown; a sentence
        that opens by referring back after its passage's title, what it refers to."""
        shown = self.shown()
        if self.title and not self.cells and tx.refers_back(shown):
            shown = f"{self.title}: {shown}"
        return shown[:MEANT_CHARS]

    def shown(self) -> str:
        """How the unit is quoted: a row as 'header: value' pairs, a list's steps on one line,
        anything else verbatim."""
        if self.cells:
            return "; ".join(f"{h}: {v}" if h else v for h, v in self.cells if v)
        if self.kind == "list":
            return " ".join(self.text.splitlines())
        return f"{self.lead} · {self.text}" if self.lead else self.text

    def whole_list(self) -> str:
        """A list item's whole list (a procedure's steps), else the unit as shown."""
        return " ".join(self.listed) if self.listed else self.shown()


_RULE_CELL_RE = re.compile(r":?-{2,}:?|")


def table_cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def looks_like_data(cells: Sequence[str]) -> bool:
    """A header names columns; a row whose cells are mostly numbers, dates or codes is data."""
    valued = [c for c in cells if len(re.findall(r"\d", c)) >= 2]
    return len(valued) * 2 > len(cells)


def furniture(line: str, item: EvidenceItem) -> bool:
    """A heading, the document's title or a section name, a banner in capitals or a rule
    line: where an answer sits, never one."""
    folded = tx.normalize_space(RULE_RE.sub(" ", line)).casefold()
    if not folded or folded in item.title.casefold() or folded in item.section.casefold():
        return True
    letters = [c for c in line if c.isascii() and c.isalpha()]
    shouting = len(letters) >= 12 and sum(c.isupper() for c in letters) > 0.8 * len(letters)
    return shouting or (heading_like(line) and not FIELD_RE.match(line) and not _log_line(line))


def _log_line(line: str) -> bool:
    return len(line) <= LOG_LINE_CHARS and bool(
        _STAMP_RE.match(line) or len(_PAIR_RE.findall(line)) >= 2
    )


def record_fields(lines: Sequence[str]) -> list[str]:
    """A block that is a record (mostly 'Label: value' lines): its short field lines, which
    say what each of its fields belongs to; [] for prose."""
    fields = [ln for ln in lines if FIELD_RE.match(ln)]
    if len(lines) < 3 or len(fields) * 2 < len(lines):
        return []
    return [ln for ln in fields if len(ln) <= RECORD_FIELD_CHARS]


def sentence_names(sentence: str) -> str:
    """The names a sentence gives: what a next sentence that refers back may be about."""
    return " ".join(text_phrases(sentence))


def lists_joined(blocks: Sequence[str], marker: re.Pattern[str] = _LIST_RE) -> list[str]:
    """Blocks in order, a run of list items that each stand alone ('1. Sign in …', '2. Attach
    …': parsers give every item its own block) joined into the one list they are; `marker`
    says what opens an item."""
    out: list[str] = []
    listed_before = False
    for block in blocks:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        listed = bool(lines) and all(marker.match(ln.strip()) for ln in lines)
        if listed and listed_before:
            out[-1] = f"{out[-1]}\n{block.strip()}"
        else:
            out.append(block)
        listed_before = listed
    return out


def _pieces(line: str) -> list[str]:
    """A line's sentences; a run of fields separated by ' · ' or '｜' one piece each."""
    out: list[str] = []
    for sentence in tx.split_sentences(line) or [line]:
        parts = [p for p in PIECES_RE.split(sentence) if p.strip()]
        out += parts if len(parts) >= 2 else [sentence]
    return out


def _table(lines: Sequence[str]) -> list[str]:
    return [ln for ln in lines if ln.count("|") >= 1 and len(table_cells(ln)) >= 2]


def units(item: EvidenceItem, rank: int = 0) -> list[Unit]:
    """The passage's units in order."""
    out: list[Unit] = []
    where = " ".join(p for p in (item.title, item.section) if p)
    heading = re.split(r"\s*>\s*", item.section)[-1] if item.section else ""
    base = {"n": item.n, "rank": rank, "title": item.title, "source": item.source,
            "chunk_id": item.chunk_id or ""}  # fmt: skip
    last_heading = heading
    for block in lists_joined(re.split(r"\n\s*\n", item.text)):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = lines[0]
        rows = _table(lines)
        if len(rows) >= 2 and len(rows) >= len(lines) - 1:
            out += _rows(rows, item, where, last_heading, base, len(out))
            continue
        if len(lines) == 1 and heading_like(head) and not FIELD_RE.match(head):
            last_heading = head  # a heading inside the chunk: the section of what follows
        items = [ln for ln in lines if _LIST_RE.match(ln)]
        listed = tuple(items) if len(items) >= 2 else ()
        if listed and sum(map(len, listed)) <= LIST_CHARS:  # a procedure's steps, one unit
            out.append(
                Unit("\n".join(listed), tx.normalize_space(f"{head if head not in items else ''} "
                                                             f"{last_heading} {where}"),
                     kind="list", heading=last_heading, position=len(out),
                     lang=language_of(block), **base)  # type: ignore[arg-type]
            )  # fmt: skip
        record = record_fields(lines)
        key_line = (head if not FIELD_RE.match(head) else record[0]) if record else ""
        if record and len(lines) <= RECORD_LINES:  # the record whole, one unit
            out.append(
                Unit(" · ".join(lines), tx.normalize_space(f"{last_heading} {where}"),
                     kind="record", heading=last_heading, key=key_line, position=len(out),
                     lang=language_of(block), **base)  # type: ignore[arg-type]
            )  # fmt: skip
        for line in lines:
            if TOC_RE.search(line) or (record and line == key_line and line == head
                                        and not FIELD_RE.match(line)):  # fmt: skip
                continue  # a record's key line is shown with each of its fields
            whole = (len(line) <= FIELD_LINE_CHARS and FIELD_RE.match(line)) or _log_line(line)
            whole = whole or (line in items and len(line) <= ITEM_CHARS)
            if not whole and furniture(line, item):
                continue
            sentences = [line] if whole else _pieces(line)
            kind = "record" if whole and _log_line(line) else "field" if whole else "sentence"
            if line in items:
                kind = "item"
            for k, sentence in enumerate(sentences):
                if (whole or len(sentences) == 1) and furniture(sentence, item):
                    continue
                opening = sentences[0] if sentence != sentences[0] else ""
                fields = " ".join(f for f in record if f != line)
                context = (
                    f"{head if line != head else ''} {fields} {opening} {last_heading} {where}"
                )
                before = sentence_names(sentences[k - 1]) if k and tx.refers_back(sentence) else ""
                field = FIELD_RE.match(record[0]) if record else None
                out.append(
                    Unit(sentence, tx.normalize_space(context), kind=kind,
                         listed=listed if line in items else (), referent=before,
                         heading=last_heading, key=field.group("value") if field else "",
                         position=len(out), lang=language_of(sentence),
                         lead=key_line if key_line and line != key_line else "",
                         **base)  # type: ignore[arg-type]
                )  # fmt: skip
    return out


def _rows(
    rows: Sequence[str],
    item: EvidenceItem,
    where: str,
    heading: str,
    base: dict[str, object],
    start: int,
) -> list[Unit]:
    """A table's rows, each with its header's names for its cells."""
    header = table_cells(rows[0])
    carried = table_cells(item.table_header) if item.table_header else []
    if carried and len(carried) == len(header) and header != carried:
        header, rows = carried, ["", *rows]  # a table cut by the chunker: its header came along
    elif looks_like_data(header):
        header, rows = [""] * len(header), ["", *rows]
    out: list[Unit] = []
    for row in rows[1:]:
        cells = table_cells(row)
        if all(_RULE_CELL_RE.fullmatch(c) for c in cells):
            continue  # a Markdown table's rule line: no row
        pairs = tuple(zip(header + [""] * (len(cells) - len(header)), cells, strict=False))
        key = next((v for v in cells if v), "")
        out.append(
            Unit(row, tx.normalize_space(f"{' '.join(header)} {heading} {where}"), kind="row",
                 cells=pairs, heading=heading, key=key, position=start + len(out),
                 lang=language_of(row), **base)  # type: ignore[arg-type]
        )  # fmt: skip
    return out


_ADDRESS = dict(lexicon.table("assistant_address"))
_ADDRESSEE_RE = re.compile(
    r"(?<![A-Za-z])(?:"
    + "|".join(re.escape(w).replace(r"\ ", r"\s*") for w in _ADDRESS["addressee"])
    + r")(?![A-Za-z])\s*(?:[,，:：]|请|please\b|must\b|should\b|注意|必须)",
    re.IGNORECASE,
)
_OVERRIDE_RE = re.compile(
    "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in _ADDRESS["override"]), re.IGNORECASE
)


def addresses_assistant(text: str) -> bool:
    """Whether a line speaks to an AI assistant instead of stating something
    (ingest/lexicon/assistant_address.txt): never quoted as an answer or as evidence."""
    return bool(_ADDRESSEE_RE.search(text) or _OVERRIDE_RE.search(text))


def without_planted(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """The passages with every line that speaks to an AI assistant taken out."""
    out: list[EvidenceItem] = []
    for item in items:
        lines = item.text.splitlines()
        kept = [ln for ln in lines if not addresses_assistant(ln)]
        out.append(
            item if len(kept) == len(lines) else item.model_copy(update={"text": "\n".join(kept)})
        )
    return out


def pool_units(items: Sequence[EvidenceItem], limit: int = 0) -> list[Unit]:
    """Every unit of the passages in evidence order (the first `limit` passages when set)."""
    chosen = items[:limit] if limit else items
    return [u for rank, item in enumerate(chosen) for u in units(item, rank)]


def quoted_rows(answer: str, evidence: Sequence[EvidenceItem]) -> list[Unit]:
    """The table rows an answer quotes as `Unit.shown()` puts them ('Header: value; …'), in
    the answer's order, each once: what a page draws as a small table instead of the run-on
    line. A row counts on a line that cites its passage ('[n]') and holds its text as shown
    (a bold span inside it counts too)."""
    lines = answer.replace("**", "").splitlines()
    found: list[tuple[int, Unit]] = []
    for item in evidence:
        cited = [k for k, line in enumerate(lines) if f"[{item.n}]" in line]
        if not cited:
            continue
        for unit in units(item):
            if sum(1 for _, value in unit.cells if value) < 2:
                continue
            at = next((k for k in cited if unit.shown() in lines[k]), -1)
            if at < 0:  # the row quoted without a column group the question did not ask
                at, unit = _part_of_row(unit, lines, cited)
            if at >= 0 and all(unit.shown() != u.shown() for _, u in found):
                found.append((at, unit))
    return [unit for _, unit in sorted(found, key=lambda pair: pair[0])]


_QUOTE_RE = re.compile(r"“([^”]+)”")


def _part_of_row(unit: Unit, lines: Sequence[str], cited: Sequence[int]) -> tuple[int, Unit]:
    """(the line, the row with only the cells it shows) when a cited line quotes some of the
    row's cells as the row shows them ('Header: value; …', two or more, in order); (-1, unit)
    otherwise."""
    pieces = {(f"{h}: {v}" if h else v): (h, v) for h, v in unit.cells if v}
    for k in cited:
        for quoted in _QUOTE_RE.findall(lines[k]):
            fields = quoted.split("; ")
            if len(fields) >= 2 and all(f in pieces for f in fields):
                return k, replace(unit, cells=tuple(pieces[f] for f in fields))
    return -1, unit
