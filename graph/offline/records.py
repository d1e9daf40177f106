"""Records and joins: a table row, or a block of 'Label: value' lines (a log entry, a form), is a
record of fields. A question that names one record and asks for a field another record holds
is answered by following a value the two share: the bridge comes from the record that answers
the first step, never from a global guess.

    device row (names the asked code) --its site--> contact row (has the asked column)

Counts, sums and differences over records are in totals.py.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline import evidence as ev
from graph.offline import reader_checks as rc
from graph.offline import reader_units as ru
from graph.offline import values as vl
from graph.offline.columns import asked_clause, asked_head
from graph.offline.kinds import answer_type
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.spans import question_spans
from graph.offline.units import FIELD_RE, table_cells
from graph.protocols import EvidenceItem
from ingest.phrases import text_phrases

# Fields side by side on one line: a wide gap, or a space before a Chinese 'label：'
# ('报修：2024-05-28 09:40 等级：P2'; a time's ':' is no label).
_FIELD_SPLIT_RE = re.compile(r"\s{2,}|\u3000+|\s+(?=[^\s\d:：|][^\s:：|]{0,11}：\S)")
_TAG_RE = re.compile(r"^\[[^\]\s]{1,40}\]")


@dataclass(frozen=True)
class Record:
    fields: tuple[tuple[str, str], ...]  # (label or column header, value)
    n: int  # the citation of its passage
    shown: str  # how it is quoted
    group: str  # records of one table or one log share it
    row: bool = False  # a table's row (its cells), not a block of field lines

    def values(self) -> list[str]:
        return [v for _, v in self.fields if v]


def records(items: Sequence[EvidenceItem]) -> list[Record]:
    """Every table row and every block of two or more field lines in the passages."""
    out: list[Record] = []
    for item in items:
        for unit in ru.units(item):
            if unit.cells and any(h for h, _ in unit.cells):
                out.append(Record(unit.cells, unit.n, unit.shown(), unit.context, row=True))
        for block in re.split(r"\n\s*\n", item.text):
            lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
            fields = []
            for line in lines:
                tag = _TAG_RE.match(line)
                if tag:
                    fields.append(("", tag.group(0).strip("[]")))
                for piece in _FIELD_SPLIT_RE.split(line[tag.end() :] if tag else line):
                    m = FIELD_RE.match(piece.strip())
                    if m:
                        fields.append((m.group("label"), m.group("value").strip()))
                    elif (
                        tag and piece.strip()
                    ):  # what the tag line says beside it ('2031-02-03 sent')
                        fields.append(("", piece.strip()))
            if sum(1 for label, _ in fields if label) >= 2:
                shown = "; ".join(
                    f"{label}: {value}" if label else value for label, value in fields
                )
                out.append(Record(tuple(fields), item.n, shown, item.source or item.title))
    return out


_ACRONYM_RE = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]+(?![A-Za-z0-9])")


def described(question: str, found: Sequence[Record]) -> list[Record]:
    """The records the question names, or describes best: those holding the most of what it
    gives (its values, and names it marks such as 'DR'); '北湾县医院那台DR' is the one row
    holding both, not every row of that hospital."""
    marked = {s.text for s in question_spans(question) if len(s.text) >= 2}
    marked |= set(_ACRONYM_RE.findall(question))  # a type or unit named in capitals ('DR')
    scored: list[tuple[int, Record]] = []
    for r in found:
        named = [v for v in r.values() if _names_in(v, question)]
        if named:  # a city inside a hospital's name adds nothing
            given = named + [v for v in r.values() if v in marked and v not in named]
            scored.append((sum(1 for v in given if not any(v != o and v in o for o in given)), r))
    most = max((score for score, _ in scored), default=0)
    return [r for score, r in scored if score == most]


def _names_in(value: str, question: str) -> bool:
    value = tx.fold(value).casefold().replace(" ", "")
    return len(value) >= 3 and value in tx.fold(question).casefold().replace(" ", "")


def brief(fields: Sequence[tuple[str, str]], values: Sequence[str]) -> str:
    """A row or record quoted by what names it and what was read from it: its first field and
    every field holding one of `values` (the answer, a value the question or a link names);
    '' when no field holds one. The purchase cost's row without the sale price beside it."""
    kept = [
        (label, value)
        for i, (label, value) in enumerate(fields)
        if value and (i == 0 or any(v and v in value for v in values))
    ]
    if not any(v and v in value for _, value in kept for v in values):
        return ""
    return "; ".join(f"{label}: {value}" if label else value for label, value in kept)


@dataclass(frozen=True)
class Joined:
    answer: str
    field: str
    start: Record
    target: Record
    via: str


_PARTS_RE = re.compile(r"[\s,，;；/、]+")  # what separates the parts of one value


def _shares(value: str, target: Record) -> bool:
    """The target holds the value, or one of its cells is a whole token of it ('E-1001' of
    'E-1001 Ada Moss')."""
    tokens = set(_PARTS_RE.split(value))
    return any(v == value or (len(v) >= 3 and v in tokens) for v in target.values())


def join(question: str, items: Sequence[EvidenceItem]) -> Joined | None:
    """The asked field of the record that shares a value with the record the question names,
    when exactly one such answer exists; None when there is none or more than one."""
    found = records(items)
    head = asked_head(question, [label for r in found for label, _ in r.fields])
    if not head:
        return None
    starts = described(question, found)
    kind = answer_type(question)
    answers: dict[str, Joined] = {}
    for start in starts:
        if any(label == head for label, _ in start.fields):
            continue  # the named record answers itself: the reader reads it
        for label, value in start.fields:
            if len(value) < 3 or _names_in(value, question) or not label:
                continue
            for target in found:
                if target.group == start.group or not _shares(value, target):
                    continue
                for field, answer in target.fields:
                    if answer and field == head and answer not in value and _fits(kind, answer):
                        answers.setdefault(answer, Joined(answer, field, start, target, value))
    return next(iter(answers.values())) if len(answers) == 1 else None


def through_sentence(
    question: str, items: Sequence[EvidenceItem], params: OfflineParams = PARAMS
) -> Joined | None:
    """The asked cell of the row a sentence puts the question's subject in. The question names
    a thing no row names ('the night rate in Orrin'); a sentence names it and, a few words on,
    a row's key ('Orrin and Kelda are band B' for rows keyed by 'Site band': after the key
    column's word when the key is a letter or two). That row's asked cell answers, the sentence
    and the row shown. None unless exactly one answer is reached."""
    rows = [r for r in records(items) if r.row and r.fields and r.fields[0][1]]
    head = asked_head(question, [label for r in rows for label, _ in r.fields[1:]], match=0.5)
    if not head:
        return None
    held = " ".join(v for r in rows for v in r.values())
    subjects = [
        s
        for s in dict.fromkeys(
            [*(s.text for s in question_spans(question)), *text_phrases(question)]
        )
        if len(s) >= 2 and s not in held and s.casefold() != head.casefold()
    ]
    keyed = [r for r in rows if any(label == head for label, _ in r.fields)]
    kind = answer_type(question)
    answers: dict[str, Joined] = {}
    for item in items:
        for unit in ru.units(item):
            if unit.cells:
                continue
            for subject in subjects:
                at = _word_at(unit.text, subject)
                if at < 0:
                    continue
                after = re.split(r"[;；.。]", unit.text[at + len(subject) :], maxsplit=1)[0]
                near = " ".join(after.split()[: params.through_words])
                found = sorted((m.start(), r) for r in keyed if (m := _key_in(near, r)) is not None)
                if not found:
                    continue
                target = found[0][1]
                answer = dict(target.fields).get(head, "")
                if answer and _fits(kind, answer):
                    start = Record((("", unit.text),), unit.n, unit.text, f"{item.chunk_id}:prose")
                    via = target.fields[0][1]
                    answers.setdefault(answer, Joined(answer, head, start, target, via))
    return next(iter(answers.values())) if len(answers) == 1 else None


def own_field(question: str, items: Sequence[EvidenceItem]) -> Joined | None:
    """'Which team owns the invoice archive?' of a directory of records (Team / Lead / Owns):
    the asked field of the one record whose other fields hold every word the question says of
    it ('owns', 'invoice archive'), shown with the field that says it. None when the question
    names no field of it, or no single record holds all its words."""
    found = [r for r in records(items) if not r.row]
    head = asked_head(question, [label for r in found for label, _ in r.fields])
    if not head:
        return None
    words = tx.term_set(question) - tx.term_set(head)
    if not words:
        return None
    kind = answer_type(question)
    held: dict[str, Joined] = {}
    for record in found:
        fields = dict(record.fields)
        answer = fields.get(head, "")
        rest = [(label, v) for label, v in record.fields if label != head]
        terms = tx.term_set(" ".join(f"{label} {v}" for label, v in rest))
        if not answer or not _fits(kind, answer) or not words <= terms:
            continue
        said = next((v for _, v in rest if tx.term_set(v) & words), "")
        held.setdefault(record.shown, Joined(answer, head, record, record, said))
    return next(iter(held.values())) if len(held) == 1 else None


def _word_at(text: str, name: str) -> int:
    """Where a name stands in a text as a whole word (anywhere in Chinese); -1 if nowhere."""
    if tx.has_cjk(name):
        return text.find(name)
    m = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)
    return m.start() if m else -1


def _key_in(text: str, row: Record) -> re.Match[str] | None:
    """A row's key said in a text: a key of a letter or two after its column's last word
    ('band B' for 'Site band: B'), a longer key anywhere as a whole word ('二类', 'Tier 2')."""
    label, key = row.fields[0]
    if len(key) > 2 or tx.has_cjk(key):
        return re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text)
    word = (label.split() or [""])[-1]
    if not word:
        return None
    return re.search(rf"\b{re.escape(word)}\s+{re.escape(key)}\b", text, re.IGNORECASE)


def _fits(kind: str, value: str) -> bool:
    """Whether a field's value can answer a question of the kind: 'how long' or 'how many' is
    no date or time of day ('到场: 2024-09-06 14:05' for '多久到场'), 'when' holds a date."""
    return kind not in ("number", "date") or bool(vl.spans_of(kind, value))


@dataclass(frozen=True)
class Led:
    answer: str
    path: tuple[Record, ...]  # the named record, then each record it led to
    lines: tuple[str, ...]  # each record of the path as quoted: its tag and the fields used


def _ids(record: Record) -> set[str]:
    """What names a record from elsewhere: its tag ('#05', 'WO-7') and the codes it holds."""
    tags = {v for label, v in record.fields[:1] if not label}
    return tags | set(vl.codes_in(" ".join(record.values())))


def lead(
    question: str, items: Sequence[EvidenceItem], kind: str, params: OfflineParams = PARAMS
) -> Led | None:
    """The date a question asks of a record that the one it names leads to: 'X 那次修复超时，我们
    是哪天递交申请的' names the repair's record (by X); a code that record holds (its tag) is
    named by another record (the application letter), and so on for `lead_links` links. Of
    the records reached, the one that holds most of what the asked clause asks about (the
    nearer of equals) answers with its first date, when it holds at least `lead_coverage` of
    it and no other record as near holds as much with another date."""
    if kind != "date":
        return None
    found = records(items)
    given = set(vl.codes_in(question))
    starts = [r for r in found if any(_names_in(v, question) for v in r.values())]
    relation = rc.relation_of(asked_clause(question), ru.names_in(items, params))
    if not starts or not tx.term_set(relation):
        return None
    paths: dict[Record, tuple[Record, ...]] = {r: (r,) for r in starts}
    frontier = list(starts)
    for _ in range(params.lead_links):
        reached = []
        for record in frontier:
            ids = _ids(record) - given
            for other in found:
                if other in paths:
                    continue
                linked = any(word_in(i, other.shown) for i in ids) or any(
                    word_in(i, record.shown) for i in _ids(other) - given
                )
                if linked:
                    paths[other] = (*paths[record], other)
                    reached.append(other)
        frontier = reached
    scored = []
    for record, path in paths.items():
        date = _asked_date(record, relation) if len(path) > 1 else ""
        if date:
            scored.append((ev.relevance(relation, "", record.shown), date, path))
    if not scored:
        return None
    scored.sort(key=lambda x: (-x[0], len(x[2])))  # as good, the nearer record
    best, answer, path = scored[0]
    rivals = {d for c, d, p in scored if c >= best - 1e-9 and len(p) == len(path)}
    if best < params.lead_coverage or len(rivals) > 1:
        return None
    links = _links(path)
    return Led(answer, path, tuple(_quoted(r, links, question, answer) for r in path))


def _asked_date(record: Record, relation: str) -> str:
    """The record's date for what is asked: in the field that holds most of it ('the repair
    deadline was moved to …'), else the first (a log entry's own date)."""
    dated = [(ev.relevance(relation, label, value), value) for label, value in record.fields
             if vl.spans_of("date", value)]  # fmt: skip
    if not dated:
        return ""
    best = max(dated, key=lambda x: x[0])
    return vl.spans_of("date", best[1] if best[0] > 0 else dated[0][1])[0]


def _quoted(record: Record, links: set[str], question: str, answer: str) -> str:
    """A record of a path as quoted: its tag line, the fields that name what the question
    names or link it to the record before or after it, and the one that holds the answer."""

    def kept(i: int, label: str, value: str) -> bool:
        if not label and i < 2:
            return True
        return (
            answer in value
            or _names_in(value, question)
            or any(word_in(x, value) for x in links)
            or any(_names_in(x, question) for x in _PARTS_RE.split(value))
        )

    quoted = [f"{label}: {value}" if label else value
              for i, (label, value) in enumerate(record.fields) if kept(i, label, value)]  # fmt: skip
    return "; ".join(quoted) or record.shown


def _links(path: Sequence[Record]) -> set[str]:
    """The identifiers that lead from each record of a path to the next: the tag of one
    that the other names, else every code they share."""
    out: set[str] = set()
    for a, b in itertools.pairwise(path):
        shared = {i for i in _ids(a) if word_in(i, b.shown)} | {
            i for i in _ids(b) if word_in(i, a.shown)
        }
        tags = {v for r in (a, b) for label, v in r.fields[:1] if not label} & shared
        out |= tags or shared  # a record's own tag names it; codes both mention may not
    return out


def word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None


def tabular(text: str) -> bool:
    """A passage that holds a table (two rows of cells) or a log (two field lines)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    rows = sum(1 for ln in lines if len(table_cells(ln)) >= 2)
    return rows >= 2 or sum(1 for ln in lines if FIELD_RE.match(ln)) >= 2


def filter_value(value: str, question: str) -> bool:
    """A cell value the question names as a condition ('柯明远', 'P1', 'KX-200'), whole or as
    one of its parts ('柯明远' of 'E-2073 柯明远')."""
    short_code = len(value) >= 2 and bool(re.fullmatch(r"[A-Za-z]+\d+", value))
    if (short_code and word_in(value, question)) or _names_in(value, question):
        return True
    parts = [p for p in _PARTS_RE.split(value) if len(p) >= 2 and p != value]
    if any(tx.has_cjk(p) and p in question for p in parts):
        return True
    # in Latin script a part names the row when it is a code ('E-1001' of 'E-1001 Ada Moss'),
    # or all its words but the codes are named together ('Ada Moss'); one word of a longer
    # cell is no condition ('Thermal' of 'Thermal history endpoint' for 'thermal alarms')
    codes = [p for p in parts if not tx.has_cjk(p) and re.search(r"\d", p)]
    if any(word_in(p, question) for p in codes):
        return True
    rest = " ".join(p for p in parts if not tx.has_cjk(p) and p not in codes)
    return len(parts) > 1 and len(rest) >= 3 and rest != value and word_in(rest, question)
