"""Questions a knowledge base answers about itself, with their answers: from its tables (a
cell by its row's key and its column's header), its records (a field by the record's key)
and its threshold rows (the row an amount inside its range falls in).

They are asked back through the real graph to measure how well the reader reads a
deployment's own documents (`hopwise selfcheck`) and, with the dev knowledge bases, they are
labelled examples for fitting the reader (`hopwise fit-reader`). Deterministic for a seed.
Cells that repeat in their column, keys that are not unique and values the question already
gives are skipped: nothing a reader cannot tell apart.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from graph import text as tx
from graph.offline.features import ranges_in
from graph.offline.units import FIELD_RE, Unit
from ingest.lang import CODE_RE, language_of

_EMPTY = {"", "—", "-", "/", "✓", "✗", "n/a", "N/A"}
MAX_VALUE_CHARS = 60  # longer cells are prose, not a value to ask for
MAX_KEY_CHARS = 40
# a cell that states an amount's range, not a phone number's digits
_AMOUNT_CUE_RE = re.compile(r"元|万|公斤|kg|£|\$|€|USD|EUR|GBP|以上|以下|over|under|above|below",
                            re.IGNORECASE)  # fmt: skip
_PAIR_RE = re.compile(r"(?<![\w=])([A-Za-z_][\w-]{0,20})=(.*?)(?=\s+[A-Za-z_][\w-]{0,20}=|$)")


@dataclass(frozen=True)
class SelfQuestion:
    question: str
    answer: str  # the value a right first line holds
    anchor: str  # the row's or record's key the question names
    unit: str  # the unit it was made from, as shown
    source: str  # the document
    kind: str  # cell | field | range | chain
    lang: str
    label: str = ""  # the column or field asked for ('' when the question names none)
    cross: bool = False  # asked in the other language than the document's


def _numeric(value: str) -> bool:
    return bool(re.search(r"\d", value))


def _ask(lang: str, key: str, label: str, value: str) -> str:
    if lang == "zh":
        return f"{key}的{label}是{'多少' if _numeric(value) else '什么'}？"
    return f"What is the {label} of {key}?"


def _ask_range(lang: str, amount: str, label: str, value: str) -> str:
    if lang == "zh":
        return f"金额为{amount}时，{label}是{'多少' if _numeric(value) else '什么'}？"
    return f"For an amount of {amount}, what is the {label}?"


def _usable(value: str) -> bool:
    return value.strip() not in _EMPTY and 0 < len(value) <= MAX_VALUE_CHARS


def _table_questions(
    rows: Sequence[Unit], shared: frozenset[str] = frozenset()
) -> list[SelfQuestion]:
    """A cell by its row's key and its column's header, for keys and values unique in their
    columns and keys no other table of the document has (`shared`); and, for a column of
    ranges, the row an amount inside one falls in."""
    out: list[SelfQuestion] = []
    headers = [h for h, _ in rows[0].cells]
    if not any(headers) or len(rows) < 2:
        return out
    columns: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        for h, v in row.cells:
            columns[h][v] += 1
    key_header = headers[0]
    pairs = len(headers) == 2  # a two-column table of labels and values ('Version | 3.2')
    for row in rows:
        cells = dict(row.cells)
        key = cells.get(key_header, "")
        if not _usable(key) or len(key) > MAX_KEY_CHARS or columns[key_header][key] > 1:
            continue
        if key.casefold() in shared:
            continue  # a row of another table too: which one is asked cannot be told
        lang = language_of(f"{key} {' '.join(headers)}")
        if pairs:
            value = row.cells[1][1] if len(row.cells) > 1 else ""
            if _usable(value) and columns[headers[1]][value] == 1:
                asked = f"{key}是{'多少' if _numeric(value) else '什么'}？" if lang == "zh" \
                    else f"What is the {key}?"  # fmt: skip
                out.append(SelfQuestion(asked, value, key, row.shown(), row.source, "cell", lang))
            continue
        for h, v in row.cells[1:]:
            if not h or not _usable(v) or columns[h][v] > 1 or v in key or key in v:
                continue
            out.append(SelfQuestion(_ask(lang, key, h, v), v, key, row.shown(), row.source,
                                    "cell", lang, h))  # fmt: skip
        for h, v in row.cells:
            spans = ranges_in(v) if _AMOUNT_CUE_RE.search(v) else []
            if len(spans) != 1 or not h:
                continue
            lo, hi = spans[0]
            amount = lo * 2 if hi >= 1e17 else (lo + hi) / 2
            shown_amount = f"{amount:,.0f}"
            for other, value in row.cells:
                if other in (h, "") or not _usable(value) or columns[other][value] > 1:
                    continue
                out.append(SelfQuestion(_ask_range(lang, shown_amount, other, value), value,
                                        shown_amount, row.shown(), row.source, "range", lang))  # fmt: skip
    return out


def _record_questions(units: Sequence[Unit]) -> list[SelfQuestion]:
    """A record's field by the record's key (its first field's value, or the code its line
    names), for keys named by one record only."""
    out: list[SelfQuestion] = []
    keyed = [u for u in units if u.kind == "field" and u.key]
    keys = Counter(u.key for u in keyed if FIELD_RE.match(u.text) and u.key not in u.text)
    for unit in keyed:
        field = FIELD_RE.match(unit.text)
        if field is None or keys[unit.key] != 1 and unit.key in unit.text:
            continue
        label, value = field.group("label"), field.group("value").strip()
        if unit.key in unit.text or not _usable(value) or len(unit.key) > MAX_KEY_CHARS:
            continue
        lang = language_of(f"{unit.key} {label}")
        out.append(SelfQuestion(_ask(lang, unit.key, label, value), value, unit.key,
                                unit.shown(), unit.source, "field", lang, label))  # fmt: skip
    for unit in units:
        if unit.kind != "record":
            continue
        codes = [m.group(0) for m in CODE_RE.finditer(unit.text)]
        pairs = _PAIR_RE.findall(unit.text)
        if len(codes) != 1 or not pairs:
            continue
        lang = language_of(unit.text)
        pairs[-1] = (pairs[-1][0], pairs[-1][1].split()[0] if pairs[-1][1].split() else "")
        for label, value in pairs:
            if _usable(value) and value != codes[0]:
                out.append(SelfQuestion(_ask(lang, codes[0], label, value), value, codes[0],
                                        unit.shown(), unit.source, "field", lang, label))  # fmt: skip
    return out


def _ask_chain(lang: str, key: str, first: str, second: str, value: str) -> str:
    if lang == "zh":
        return f"{key}的{first}的{second}是{'多少' if _numeric(value) else '什么'}？"
    return f"What is the {second} of the {first} of {key}?"


def chain_questions(units: Sequence[Unit], seed: int = 0, limit: int = 40) -> list[SelfQuestion]:
    """Two hops across tables: a row's cell that is another table's row key leads to that
    row ('the Phone of the Team lead of queue-relay'), asked as one question."""
    rows = [u for u in units if u.cells and u.key]
    by_value: dict[str, list[Unit]] = defaultdict(list)
    for row in rows:
        for _, v in row.cells:
            if _usable(v) and len(v) >= 3:
                by_value[v.casefold()].append(row)
    out: list[SelfQuestion] = []
    for row in rows:
        key = row.key
        for h1, v1 in row.cells[1:]:
            if not h1 or not _usable(v1) or len(v1) < 3 or re.search(r"\d", v1):
                continue  # an amount or a date leads nowhere; a name or a code's words do
            targets = [
                r for r in by_value.get(v1.casefold(), [])
                if r.context != row.context
                and v1.casefold() in (c.casefold() for _, c in r.cells[:2])  # names that row
            ]  # fmt: skip
            if len(targets) != 1:
                continue  # leads nowhere, or to rows a reader cannot tell apart
            target = targets[0]
            for h2, v2 in target.cells:
                if not h2 or not _usable(v2) or v2.casefold() == v1.casefold() or v2 in row.shown():
                    continue
                lang = language_of(f"{key} {h1} {h2}")
                out.append(SelfQuestion(_ask_chain(lang, key, h1, h2, v2), v2, v1,
                                        target.shown(), target.source, "chain", lang))  # fmt: skip
    unique = list({q.question: q for q in out}.values())
    random.Random(seed).shuffle(unique)
    return unique[:limit]


def in_other_language(question: SelfQuestion) -> SelfQuestion | None:
    """The question asked in the document's other language (English ↔ Chinese): the frame is
    the other language's, the key and the column as the document writes them (nothing is
    translated). None for a question that names no column."""
    if not question.label or question.kind not in ("cell", "field"):
        return None
    other = "en" if question.lang == "zh" else "zh"
    asked = _ask(other, question.anchor, question.label, question.answer)
    return replace(question, question=asked, lang=other, cross=True)


def self_questions(
    units: Sequence[Unit], seed: int = 0, limit: int = 40, other_language: bool = False
) -> list[SelfQuestion]:
    """At most `limit` questions about one document's units, a seeded sample of every kind;
    with `other_language` (a deployment with English and Chinese documents) a quarter of them
    asked in the document's other language."""
    tables: dict[tuple[str, tuple[str, ...]], list[Unit]] = defaultdict(list)
    for unit in units:
        if unit.cells:
            tables[(unit.context, tuple(h for h, _ in unit.cells))].append(unit)
    keyed = Counter(k for rows in tables.values() for k in {r.cells[0][1].casefold() for r in rows})
    shared = frozenset(k for k, n in keyed.items() if n > 1)
    found: list[SelfQuestion] = []
    for rows in tables.values():
        found += _table_questions(rows, shared)
    found += _record_questions(units)
    unique = list({q.question: q for q in found if tx.normalize_space(q.answer)}.values())
    random.Random(seed).shuffle(unique)
    if not other_language or limit < 2:
        return unique[:limit]
    crossed = [c for q in unique[: max(1, limit // 4)] if (c := in_other_language(q)) is not None]
    return unique[: limit - len(crossed)] + crossed
