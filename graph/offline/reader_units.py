"""The hand reader's units: a passage cut into what a reader would point at, and its Reading.

A unit is a sentence, a field line of a log or a form ('Label: value'), or a table row read
with its column headers, with its context (the block's first line, the section, the title),
so a field line under '[TAG-7]' answers a question about TAG-7. Headings, navigation and
table-of-contents lines are never units. (The fitted reader cuts its own answer units:
graph/offline/units.py.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline.evidence import heading_like
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.units import (  # one definition, the answer units'
    FIELD_RE,
    RULE_RE,
    TOC_RE,
    lists_joined,
    looks_like_data,
    sentence_names,
    table_cells,
)
from graph.protocols import EvidenceItem

LIST_RE = re.compile(r"^(?:[-*•]|\d{1,2}[.)、]|[（(]?\d{1,2}[）)])\s*")


@dataclass(frozen=True)
class Unit:
    """One thing a reader can quote, with where it sits."""

    text: str  # verbatim (a row: its cells joined by ' | ')
    context: str  # the block's first line, the section and the title
    n: int  # the citation of its passage
    rank: int  # its passage's place in the evidence order
    cells: tuple[tuple[str, str], ...] = ()  # (column header, value) for a table row
    listed: tuple[str, ...] = ()  # the whole list when the unit is one of its items
    title: str = ""  # its passage's title: what 'The club …' or 'He …' is about
    referent: str = ""  # the names 'He …' / 'The project …' may refer back to, the sentence before
    heading: str = ""  # the last heading of its section ('Odile Marsh' of 'Staff > Odile Marsh')

    def meant(self) -> str:
        """What the embedder compares: the unit as shown; a sentence that opens by referring
        back ('He …', 'The club …') after its passage's title, what it refers to ('Harrow
        Deep: The club was formed in 1993')."""
        shown = self.shown()
        if not self.title or self.cells or not tx.refers_back(shown):
            return shown
        return f"{self.title}: {shown}"

    def shown(self) -> str:
        """How the unit is quoted: a row as 'header: value' pairs, a list in full."""
        if self.cells:
            return "; ".join(f"{h}: {v}" if h else v for h, v in self.cells if v)
        return " ".join(self.listed) if self.listed else self.text


@dataclass
class Reading:
    unit: Unit
    score: float  # how well the unit answers the part (0..1+)
    span: str = ""  # the answer inside it, '' when none of the expected type
    confident: bool = False
    stated: str = ""  # the answer line's text when not the span (a comparison, a country)
    others: tuple[Unit, ...] = ()  # the other units the stated line quotes (compared rows)
    via: Unit | None = None  # the unit that put the question's subject in the read column's class


def _furniture(line: str, item: EvidenceItem) -> bool:
    """A heading, the document's title or a section name, a banner in capitals or a rule
    line: where an answer sits, never one."""
    folded = tx.normalize_space(RULE_RE.sub(" ", line)).casefold()
    if not folded or folded in item.title.casefold() or folded in item.section.casefold():
        return True
    letters = [c for c in line if c.isascii() and c.isalpha()]
    shouting = len(letters) >= 12 and sum(c.isupper() for c in letters) > 0.8 * len(letters)
    return shouting or (heading_like(line) and not FIELD_RE.match(line))


def _record_fields(lines: Sequence[str], params: OfflineParams = PARAMS) -> list[str]:
    """A block that is a record (a log entry or a form: mostly 'Label: value' lines): its short
    field lines, which say what each of its fields belongs to ('Type: delay notice', the order
    number); [] for prose."""
    fields = [ln for ln in lines if FIELD_RE.match(ln)]
    if len(lines) < 3 or len(fields) * 2 < len(lines):
        return []
    return [ln for ln in fields if len(ln) <= params.reader_record_field_chars]


def units(item: EvidenceItem, params: OfflineParams = PARAMS) -> list[Unit]:
    """The passage's units in order: sentences, field lines, table rows with their headers."""
    out: list[Unit] = []
    where = " ".join(p for p in (item.title, item.section) if p)
    for block in lists_joined(re.split(r"\n\s*\n", item.text), LIST_RE):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = lines[0]
        rows = [ln for ln in lines if ln.count("|") >= 1 and len(table_cells(ln)) >= 2]
        if len(rows) >= 2 and len(rows) >= len(lines) - 1:
            header = table_cells(rows[0])
            if looks_like_data(header):  # a table cut by the chunker: its header came along
                carried = table_cells(item.table_header) if item.table_header else []
                header = carried if len(carried) == len(header) else [""] * len(header)
                rows = ["", *rows]
            for row in rows[1:]:
                cells = table_cells(row)
                pairs = tuple(zip(header + [""] * (len(cells) - len(header)), cells, strict=False))
                out.append(
                    Unit(row, f"{' '.join(header)} {where}", item.n, 0, pairs, title=item.title)
                )
            continue
        items = [ln for ln in lines if LIST_RE.match(ln)]
        listed = tuple(items) if len(items) >= 2 else ()
        record = _record_fields(lines)
        for line in lines:
            if TOC_RE.search(line):
                continue
            # a short field line ('内容：…', 'Reason: …') is one value, whatever its stops; any
            # other line is read sentence by sentence, however short
            whole = len(line) <= params.reader_field_line_chars and FIELD_RE.match(line)
            sentences = [line] if whole else tx.split_sentences(line) or [line]
            for k, sentence in enumerate(sentences):
                opening = sentences[0] if sentence != sentences[0] else ""  # what it is about
                fields = " ".join(f for f in record if f != line)  # the record it belongs to
                context = f"{head if line != head else ''} {fields} {opening} {where}".strip()
                if _furniture(sentence, item):
                    continue
                listing = listed if line in items else ()
                before = sentence_names(sentences[k - 1]) if k and tx.refers_back(sentence) else ""
                out.append(
                    Unit(sentence, context, item.n, 0, listed=listing, title=item.title,
                         referent=before, heading=re.split(r"\s*>\s*", item.section)[-1])
                )  # fmt: skip
    return out


def names_in(items: Sequence[EvidenceItem], params: OfflineParams = PARAMS) -> list[str]:
    """What the passages use as names: their table cells and the labels and values of their
    field lines, when short enough to be one ('Site: North depot', 'North depot: A. Moss')."""
    return unit_names([u for item in items[: params.reader_passages] for u in units(item)], params)


def unit_names(found: Sequence[Unit], params: OfflineParams) -> list[str]:
    shortest, longest = params.reader_name_chars
    out: set[str] = set()
    for unit in found:
        values = [v for _, v in unit.cells]
        field = FIELD_RE.match(unit.text)
        values += [field.group("label"), field.group("value").strip()] if field else []
        out |= {v for v in values if shortest <= len(v) <= longest}
    return sorted(out)


def unit_holding(span: str, item: EvidenceItem) -> Unit | None:
    """The unit of a passage that holds a span (to quote a value found some other way)."""
    return next((u for u in units(item) if span in u.text), None)
