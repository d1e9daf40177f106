"""Records and joins: a table row, or a block of 'Label: value' lines (a log entry, a form), is a
record of fields. A question that names one record and asks for a field another record holds
is answered by following a value the two share: the bridge comes from the record that answers
the first step, never from a global guess.

    device row (names the asked code) --its site--> contact row (has the asked column)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline import evidence as ev
from graph.offline import reader as rd
from graph.offline import values as vl
from graph.offline.calc import is_measure
from graph.offline.kinds import answer_type
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.spans import question_spans
from graph.protocols import EvidenceItem
from ingest import lexicon
from ingest.lang import CODE_RE
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
        for unit in rd.units(item):
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
                    m = rd.FIELD_RE.match(piece.strip())
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


_CLAUSE_RE = re.compile(r"[，,；;。？?!！]")
_ASKING_RE = re.compile(
    r"谁|哪|什么|多少|几|何|\b(?:what|who|whom|whose|when|where|which|how)\b", re.IGNORECASE
)


def asked_clause(question: str) -> str:
    """The clause that holds the question word: what is asked, not what names the subject
    ('X 那次修复超时，我们是哪天递交申请的' asks about the filing, not the repair)."""
    clauses = [c for c in _CLAUSE_RE.split(question) if c.strip()]
    asking = [c for c in clauses if _ASKING_RE.search(c)]
    return " ".join(asking) if asking else question


def _where(asked: str, label: str, match: float = 0.99) -> int:
    """Where the asked clause names a label (-1 when it does not): the label itself, or
    `match` of its words."""
    core = re.sub(r"[（(].*?[）)]", "", label).strip()
    if not core:
        return -1
    at = asked.casefold().find(core.casefold())
    if at < 0 and rd.header_match(asked, label) >= match:
        words = tx.term_set(label)
        at = min((asked.casefold().find(w) for w in words if w in asked.casefold()), default=-1)
    return at


def asked_head(question: str, labels: Sequence[str], match: float = 0.99) -> str:
    """Of the labels the asked clause names, the one asked for: the head of the phrase, the
    last named in Chinese ('所在医院的设备科联系人'), the first in English ('the contact for
    the site of X'). Failing that, the one label that is a named word plus a noun of the
    asked kind ('按计划哪天做' asks '计划日期'). '' when it names none."""
    asked = asked_clause(question)
    named = sorted(
        (at, label) for label in set(labels) if label and (at := _where(asked, label, match)) >= 0
    )
    if named:
        return named[-1][1] if tx.has_cjk(asked) else named[0][1]
    nouns = _KIND_NOUNS.get(answer_type(question), ())
    kinded = {label for label in set(labels) for noun in nouns if _kind_word(label, noun, asked)}
    return kinded.pop() if len(kinded) == 1 else ""


_KIND_NOUNS = {kind: tuple(nouns) for kind, nouns in lexicon.table("answer_nouns")}


def _kind_word(label: str, noun: str, asked: str) -> bool:
    """Whether a label is a word the asked clause names plus the kind's noun ('计划日期' for
    '按计划哪天'; 'Ship date' for 'when does it ship', words whole in English)."""
    if not label.casefold().endswith(noun.casefold()):
        return False
    word = label[: -len(noun)]
    if noun.isascii():
        if not word.endswith(" ") or len(word.strip()) < 3:
            return False
        return re.search(rf"\b{re.escape(word.strip())}\b", asked, re.IGNORECASE) is not None
    return len(word.strip()) >= 2 and _where(asked, word.strip()) >= 0


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
        for unit in rd.units(item):
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
    relation = rd.relation_of(asked_clause(question), rd.names_in(items, params))
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
                linked = any(_word_in(i, other.shown) for i in ids) or any(
                    _word_in(i, record.shown) for i in _ids(other) - given
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
            or any(_word_in(x, value) for x in links)
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
        shared = {i for i in _ids(a) if _word_in(i, b.shown)} | {
            i for i in _ids(b) if _word_in(i, a.shown)
        }
        tags = {v for r in (a, b) for label, v in r.fields[:1] if not label} & shared
        out |= tags or shared  # a record's own tag names it; codes both mention may not
    return out


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
    if len(core) >= 2 and (tx.has_cjk(core) and core in question or _word_in(core, question)):
        return True
    lead = core.split()[0] if core.split() else ""
    return (
        len(lead) >= 2
        and re.fullmatch(r"[A-Za-z]+\d+", lead) is not None
        and _word_in(lead, question)
    )


def _word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None


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


def tabular(text: str) -> bool:
    """A passage that holds a table (two rows of cells) or a log (two field lines)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    rows = sum(1 for ln in lines if len(rd.table_cells(ln)) >= 2)
    return rows >= 2 or sum(1 for ln in lines if rd.FIELD_RE.match(ln)) >= 2


_CHUNK_RE = re.compile(r"^(?P<doc>.+)-(?P<index>\d+)$")


def whole_documents(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """The documents read whole (every chunk the reader may see is in the evidence), each as
    one passage: its chunks in order, the text two neighbours share said once."""
    parts: dict[str, list[tuple[int, EvidenceItem]]] = {}
    for item in items:
        m = _CHUNK_RE.match(item.chunk_id or "")
        if item.whole_document and m:
            parts.setdefault(m.group("doc"), []).append((int(m.group("index")), item))
    out = []
    for chunks in parts.values():
        chunks.sort(key=lambda x: x[0])
        out.append(_run_passage([item for _, item in chunks], table_header=""))
    return out


def neighbours_joined(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """Each run of two or more neighbouring chunks of one document in the evidence, as one
    passage (a table cut between chunk 3 and chunk 4 is whole again when both were found)."""
    parts: dict[str, dict[int, EvidenceItem]] = {}
    for item in items:
        m = _CHUNK_RE.match(item.chunk_id or "")
        if m and not item.whole_document:
            parts.setdefault(m.group("doc"), {})[int(m.group("index"))] = item
    out = []
    for chunks in parts.values():
        run: list[EvidenceItem] = []
        for index in sorted(chunks):
            if run and index - 1 not in chunks:
                out += [_run_passage(run)] if len(run) > 1 else []
                run = []
            run.append(chunks[index])
        out += [_run_passage(run)] if len(run) > 1 else []
    return out


def _run_passage(run: Sequence[EvidenceItem], **update: str) -> EvidenceItem:
    """Neighbouring chunks, in order, as one passage: the first one's, with their joined text."""
    text = run[0].text
    for item in run[1:]:
        text = _joined(text, item.text)
    return run[0].model_copy(update={"text": text, **update})


def _joined(a: str, b: str) -> str:
    """Two neighbouring chunks as one text: their overlap once; a table cut between them
    stays one block."""
    for k in range(min(len(a), len(b)), PARAMS.chunk_overlap_chars - 1, -1):
        if a.endswith(b[:k]):
            return a + b[k:]
    last, first = a.rstrip().rsplit("\n", 1)[-1], b.lstrip().split("\n", 1)[0]
    rows = len(rd.table_cells(last)) >= 2 and len(rd.table_cells(first)) >= 2
    return f"{a.rstrip()}{chr(10) if rows else chr(10) * 2}{b.lstrip()}"


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
            rows = [u for u in rd.units(EvidenceItem(n=item.n, text=block, title=item.title,
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
    filters = any(_filter_value(v, question) for r in records(items) for v in r.values())
    for key, rows in _unique_items(_whole_tables(items) | whole):
        if not _about(asked, question, [rows[0].group, *(r.shown for r in rows)]):
            continue  # a table of something else that happens to name the same value
        named = [r for r in rows if any(_filter_value(v, question) for v in r.values())]
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
        named = [r for r in rows if any(_filter_value(v, question) for v in r.values())]
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
    return rd.relation_of(asked, rd.names_in(items))


def _about(counted: str, question: str, texts: Sequence[str]) -> bool:
    """Whether a table or log is about what is `counted` (_counted): it holds a content word
    of it; in another language than the question's, there is nothing to judge by and it may
    be."""
    text = " ".join(texts)
    if tx.language_of(text) != tx.language_of(question):
        return True  # no shared words to judge by: the named value alone decides
    return rd.holds_relation(counted, "", text)


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
        named = [r for r in entries if any(_filter_value(v, question) for v in r.values())]
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


def _filter_value(value: str, question: str) -> bool:
    """A cell value the question names as a condition ('柯明远', 'P1', 'KX-200'), whole or as
    one of its parts ('柯明远' of 'E-2073 柯明远')."""
    short_code = len(value) >= 2 and bool(re.fullmatch(r"[A-Za-z]+\d+", value))
    if (short_code and _word_in(value, question)) or _names_in(value, question):
        return True
    parts = [p for p in _PARTS_RE.split(value) if len(p) >= 2 and p != value]
    if any(tx.has_cjk(p) and p in question for p in parts):
        return True
    # in Latin script a part names the row when it is a code ('E-1001' of 'E-1001 Ada Moss'),
    # or all its words but the codes are named together ('Ada Moss'); one word of a longer
    # cell is no condition ('Thermal' of 'Thermal history endpoint' for 'thermal alarms')
    codes = [p for p in parts if not tx.has_cjk(p) and re.search(r"\d", p)]
    if any(_word_in(p, question) for p in codes):
        return True
    rest = " ".join(p for p in parts if not tx.has_cjk(p) and p not in codes)
    return len(parts) > 1 and len(rest) >= 3 and rest != value and _word_in(rest, question)
