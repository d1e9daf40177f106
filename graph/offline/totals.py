"""Counts, sums and differences over records: 'how many … in total' over a table held whole
(the asked column summed over the rows the question names, or those rows counted), a sum
across two tables joined by the codes they share, the entries of a log read whole counted,
and one value minus another of one table ('相差多少', 'how much longer'). Every value used is
shown; two tables that could answer say neither.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline import reader_checks as rc
from graph.offline import reader_units as ru
from graph.offline import values as vl
from graph.offline.calc import is_measure
from graph.offline.chunks import neighbours_joined, whole_documents
from graph.offline.columns import asked_clause, asked_head
from graph.offline.records import Record, filter_value, records, word_in
from graph.protocols import EvidenceItem
from ingest import lexicon
from ingest.lang import CODE_RE

_TOTAL_RE = re.compile(
    r"一共|总共|合计|加起来|总计|共计|\b(?:in total|total|altogether|sum|combined)\b", re.IGNORECASE
)
_COUNT_RE = re.compile(  # '那几台设备', '这几张', '好几次' point at some, they ask no count
    r"(?<![那这哪好前后])几(?:台|张|个|项|条|份|件|次|位)|多少(?:台|张|个|项|条|份|件|位)|\bhow many\b",
    re.IGNORECASE,
)


_DIFFERENCE = sorted((w.replace("_", " ") for w in lexicon.words("differences")), key=len)


def asks_difference(question: str) -> bool:
    """'相差多少', 'how much more': the question wants one value minus another."""
    folded = question.casefold()
    return any(
        w in question if tx.has_cjk(w) else re.search(rf"\b{re.escape(w)}\b", folded)
        for w in _DIFFERENCE
    )


@dataclass(frozen=True)
class Difference:
    answer: str  # '相差 16 小时：到场时限（二类站点） 24小时，到场时限（一类站点） 8小时'
    rows: tuple[Record, ...]
    n: int


def _amount(value: str) -> tuple[float, str] | None:
    """'120 元/班' -> (120.0, '元/班'); None unless the cell is one amount."""
    m = re.fullmatch(r"\s*(-?\d[\d,]*(?:\.\d+)?)\s*([^\d\s]{0,8})\s*", value)
    return (float(m.group(1).replace(",", "")), m.group(2)) if m else None


def _named_cell(value: str, question: str) -> bool:
    """The question names the row by this cell: its text without a parenthesis ('二线' of
    '二线（任意日期）'), or its leading code ('P2' of 'P2 严重')."""
    core = re.sub(r"[（(].*?[）)]", "", value).strip()
    if len(core) >= 2 and (tx.has_cjk(core) and core in question or word_in(core, question)):
        return True
    lead = core.split()[0] if core.split() else ""
    return (
        len(lead) >= 2
        and re.fullmatch(r"[A-Za-z]+\d+", lead) is not None
        and word_in(lead, question)
    )


def _qualifier_named(header: str, question: str) -> bool:
    """'到场时限（一类站点）' is named by '一类站点': the part that tells it from its neighbours."""
    inside = re.findall(r"[（(](.*?)[）)]", header)
    return any(len(q) >= 2 and q in question for q in inside)


def difference(question: str, items: Sequence[EvidenceItem]) -> Difference | None:
    """One value minus another, both stated in one table in the same unit: two rows the
    question names in the column it asks about, or one named row's two columns it names by
    their qualifiers; None unless exactly one such pair is found."""
    if not asks_difference(question):
        return None
    tables: dict[str, dict[str, Record]] = {}
    for r in records(items):
        if any(h for h, _ in r.fields):
            tables.setdefault(r.group, {})[r.shown] = r  # a row two passages repeat counts once
    pairs: list[tuple[tuple[str, str], tuple[str, str], tuple[Record, ...]]] = []
    for rows in tables.values():
        named = [r for r in rows.values()
                 if any(_named_cell(v, question) for _, v in r.fields if not _amount(v))]  # fmt: skip
        for r in named if len(named) == 1 else ():
            cols = [
                (h, v) for h, v in r.fields if h and _amount(v) and _qualifier_named(h, question)
            ]
            if len(cols) == 2:
                pairs.append((cols[0], cols[1], (r,)))
        if len(named) == 2:
            headers = [h for h, v in named[0].fields if h and _amount(v)]
            column = asked_head(question, headers, match=0.5) or (
                headers[0] if len(headers) == 1 else ""
            )
            label = [next((v for _, v in r.fields if _named_cell(v, question) and not _amount(v)), "")
                     for r in named]  # fmt: skip
            values = [dict(r.fields).get(column, "") for r in named]
            if column and all(_amount(v) for v in values):
                pairs.append(((label[0], values[0]), (label[1], values[1]), tuple(named)))
    if len(pairs) != 1:
        return None
    (name_a, value_a), (name_b, value_b), used = pairs[0]
    (a, unit_a), (b, unit_b) = _amount(value_a), _amount(value_b)  # type: ignore[misc]
    if unit_a != unit_b:
        return None
    if b > a:
        (name_a, value_a, a), (name_b, value_b, b) = (name_b, value_b, b), (name_a, value_a, a)
    gap = f"{a - b:g}{' ' if unit_a and not tx.has_cjk(unit_a) else ''}{unit_a}"
    if tx.has_cjk(question):
        answer = f"相差 {gap}：{name_a} {value_a}，{name_b} {value_b}"
    else:
        answer = f"A difference of {gap}: {name_a} {value_a}, {name_b} {value_b}"
    return Difference(answer, used, used[0].n)


def counts(question: str) -> bool:
    """'几张', 'how many orders': a count of rows or entries; 'how many days' asks a quantity
    in a unit of measure, which no count of entries answers."""
    return bool(_COUNT_RE.search(question)) and not is_measure(vl.asked_unit(question))


def aggregates(question: str) -> bool:
    """A count or a sum over rows ('一共有几张', 'how many … in total'): its 的 phrases filter
    the rows, they are no chain to follow."""
    return bool(_TOTAL_RE.search(question)) or counts(question)


@dataclass(frozen=True)
class Total:
    answer: str  # '17 = 6 + 5 + 6' or '3'
    rows: tuple[Record, ...]
    n: int


def _whole_tables(items: Sequence[EvidenceItem], whole: bool = False) -> dict[str, list[Record]]:
    """The rows of each table that a passage holds whole: its header row is in the passage
    and the passage goes on after its last row (or is a `whole` document), so no row of it
    can be missing."""
    out: dict[str, list[Record]] = {}
    for item in items:
        blocks = [b for b in re.split(r"\n\s*\n", item.text) if b.strip()]
        for i, block in enumerate(blocks):
            if item.table_header and i == 0:
                continue  # a continuation: the table began in another passage
            if i == len(blocks) - 1 and not whole:
                continue  # the passage ends in the table: it may go on in the next
            rows = [u for u in ru.units(EvidenceItem(n=item.n, text=block, title=item.title,
                                                     section=item.section)) if u.cells]  # fmt: skip
            if len(rows) >= 2 and all(h for h, _ in rows[0].cells):
                out[f"{item.chunk_id}:{i}"] = [
                    Record(u.cells, item.n, u.shown(), f"{item.chunk_id}:{i}", row=True)
                    for u in rows
                ]
    return out


def _number(text: str) -> float | None:
    m = re.fullmatch(r"\s*(-?\d[\d,]*(?:\.\d+)?)\s*\S{0,3}\s*", text)
    return float(m.group(1).replace(",", "")) if m else None


def total(question: str, items: Sequence[EvidenceItem]) -> Total | None:
    """'How many … in total' over a table the passages hold whole: the rows the question names
    by a value (all rows when it names none), then the asked column summed, or the rows
    counted when it asks how many of them; every value used is shown."""
    if not aggregates(question):
        return None
    documents = whole_documents(items)
    whole = _whole_tables(documents, whole=True)
    asked = _counted(question, items)
    best: Total | None = None
    filters = any(filter_value(v, question) for r in records(items) for v in r.values())
    for key, rows in _unique_items(_whole_tables(items) | whole):
        if not _about(asked, question, [rows[0].group, *(r.shown for r in rows)]):
            continue  # a table of something else that happens to name the same value
        named = [r for r in rows if any(filter_value(v, question) for v in r.values())]
        if not named and (key in whole or filters):
            continue  # summed over the rows the question names: it names some elsewhere
        chosen = named or rows
        head = asked_head(question, [h for h, _ in rows[0].fields], match=0.5)
        values = [_number(dict(r.fields).get(head, "")) for r in chosen] if head else []
        if head and values and all(v is not None for v in values):
            parts = [f"{v:g}" for v in values if v is not None]
            amount = sum(v for v in values if v is not None)
            answer = f"{amount:g} = {' + '.join(parts)}" if len(parts) > 1 else parts[0]
        elif counts(question) and named:
            answer = f"{len(named)}{vl.asked_unit(question) if tx.has_cjk(question) else ''}"
        else:
            continue
        if best is not None:
            return None  # two tables could answer: say neither
        best = Total(answer, tuple(chosen), chosen[0].n)
    return best or _log_count(question, documents, asked)


def linked_total(question: str, items: Sequence[EvidenceItem]) -> Total | None:
    """'The devices of site X: their fees added up', when one table names the rows (the
    register's rows of site X, held whole) and another holds the asked amount for each of
    them by the code they share (the fee schedule's row of each device): the amounts summed,
    each shown with its code. None unless every named row has exactly one amount, from one
    table whose asked column the question names (or its one column of amounts)."""
    if not aggregates(question) or counts(question):
        return None
    documents = whole_documents(items)
    held = _unique_items(
        _whole_tables([*items, *neighbours_joined(items)]) | _whole_tables(documents, whole=True)
    )
    asked = _counted(question, items)
    others = [r for r in records([*items, *documents]) if _is_row(r)]
    found: Total | None = None
    for _, rows in held:
        named = [r for r in rows if any(filter_value(v, question) for v in r.values())]
        keys = [next((v for v in r.values() if CODE_RE.fullmatch(v)), "") for r in named]
        if not named or not all(keys) or len(set(keys)) != len(keys):
            continue
        amounts = _amounts_by_key(question, asked, keys, rows[0].group, others)
        if amounts is None:
            continue
        values = [amounts[k] for k in keys]
        amount = sum(v for v, _, _ in values)
        unit = _unit_of(values[0][2])
        parts = [f"{v:g}{unit} ({k})" for k, (v, _, _) in zip(keys, values, strict=True)]
        answer = f"{amount:g}{unit} = {' + '.join(parts)}" if len(parts) > 1 else parts[0]
        if found is not None:
            return None  # two tables name rows: say neither
        targets = tuple(r for _, r, _ in values)
        found = Total(answer, (*named, *targets), targets[0].n)
    return found


def _amounts_by_key(
    question: str, asked: str, keys: Sequence[str], start: str, rows: Sequence[Record]
) -> dict[str, tuple[float, Record, str]] | None:
    """For each key, the asked amount of the one row of another table that holds it (with the
    row and its column), all from one table about what is asked; None when a key has none or
    several, or the tables that have them differ."""
    by_table: dict[str, dict[str, list[tuple[float, Record, str]]]] = {}
    for row in rows:
        if row.group == start or not _about(asked, question, [row.group, row.shown]):
            continue
        key = next((k for k in keys if k in row.values()), "")
        if not key:
            continue
        numeric = [h for h, v in row.fields if v != key and _plain_amount(v) is not None]
        head = asked_head(question, numeric, match=0.5)  # the asked column of amounts,
        head = head or (numeric[0] if len(numeric) == 1 else "")  # or the row's only one
        value = _plain_amount(dict(row.fields).get(head, "")) if head else None
        if value is not None:
            table = by_table.setdefault(row.group, {})
            if all(r.shown != row.shown for _, r, _ in table.get(key, [])):
                table.setdefault(key, []).append((value, row, head))
    complete = [
        {k: found[0] for k, found in table.items()}
        for table in by_table.values()
        if set(table) == set(keys) and all(len(found) == 1 for found in table.values())
    ]
    amounts = {tuple(sorted((k, v) for k, (v, _, _) in table.items())) for table in complete}
    return complete[0] if len(amounts) == 1 else None  # one table, maybe seen twice (a chunk's
    # and its whole document's): the same amounts


def _plain_amount(text: str) -> float | None:
    """A cell that is one amount ('238,000', '42 EUR'), not a version ('5.0.1'), a date or a
    code."""
    m = re.fullmatch(r"\s*(-?\d[\d,]*(?:\.\d+)?)\s*[^\d\s.:/-]{0,3}\s*", text)
    return float(m.group(1).replace(",", "")) if m else None


def _unit_of(header: str) -> str:
    """The unit a column header gives its amounts ('年度服务费（元）': '元', 'Cost (EUR)': ' EUR')."""
    m = re.search(r"[（(]\s*([^\d\s（）()]{1,3})\s*[）)]\s*$", header)
    if not m:
        return ""
    return m.group(1) if tx.has_cjk(m.group(1)) else f" {m.group(1)}"


def _counted(question: str, items: Sequence[EvidenceItem]) -> str:
    """What a count or sum is of: the asked clause without the names it gives and the words
    of counting ('一共', 'total')."""
    asked = _COUNT_RE.sub(" ", _TOTAL_RE.sub(" ", asked_clause(question)))
    return rc.relation_of(asked, ru.names_in(items))


def _about(counted: str, question: str, texts: Sequence[str]) -> bool:
    """Whether a table or log is about what is `counted` (_counted): it holds a content word
    of it; in another language than the question's, there is nothing to judge by and it may
    be."""
    text = " ".join(texts)
    if tx.language_of(text) != tx.language_of(question):
        return True  # no shared words to judge by: the named value alone decides
    return rc.holds_relation(counted, "", text)


def _unique_items(tables: dict[str, list[Record]]) -> list[tuple[str, list[Record]]]:
    """Each table once, the fullest first: a chunk's table and the same table of its whole
    document are one."""
    seen: list[set[str]] = []
    out = []
    for key, rows in sorted(tables.items(), key=lambda kv: -len(kv[1])):
        shown = {r.shown for r in rows}
        if not any(shown <= other for other in seen):
            out.append((key, rows))
        seen.append(shown)
    return out


def _log_count(question: str, documents: Sequence[EvidenceItem], counted: str) -> Total | None:
    """'How many … are there' over a log read whole: its entries (blocks of field lines) that
    hold a value the question names ('等级：P1'), counted; None unless exactly one log has
    such entries."""
    if not counts(question):
        return None
    found = []
    for doc in documents:
        if not _about(counted, question, [doc.title, doc.source, doc.text]):
            continue
        entries = list({r.shown: r for r in records([doc]) if r.group and not _is_row(r)}.values())
        named = [r for r in entries if any(filter_value(v, question) for v in r.values())]
        if named:
            found.append(named)
    if len(found) != 1 or all(  # 'Part: RX-7 x 40' for 'how many RX-7': that amount is
        any(vl.amount_beside(v, question) for _, v in r.fields) for r in found[0]
    ):  # asked, not how many entries name it
        return None
    named = found[0]
    unit = vl.asked_unit(question) if tx.has_cjk(question) else ""
    return Total(f"{len(named)}{unit}", tuple(named), named[0].n)


def _is_row(record: Record) -> bool:
    return record.row  # a log entry may label every field too
