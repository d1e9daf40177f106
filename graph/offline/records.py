"""Records and joins: a table row, or a block of 'Label: value' lines (a log entry, a form), is a
record of fields. A question that names one record and asks for a field another record holds
is answered by following a value the two share: the bridge comes from the record that answers
the first step, never from a global guess.

    device row (names the asked code) --its site--> contact row (has the asked column)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline import reader as rd
from graph.protocols import EvidenceItem

_FIELD_RE = re.compile(r"^(?P<label>[^\s:：|]{1,12})[:：]\s*(?P<value>\S.*)$")
_TAG_RE = re.compile(r"^\[[^\]\s]{1,40}\]")


@dataclass(frozen=True)
class Record:
    fields: tuple[tuple[str, str], ...]  # (label or column header, value)
    n: int  # the citation of its passage
    shown: str  # how it is quoted
    group: str  # records of one table or one log share it

    def values(self) -> list[str]:
        return [v for _, v in self.fields if v]


def records(items: Sequence[EvidenceItem]) -> list[Record]:
    """Every table row and every block of two or more field lines in the passages."""
    out: list[Record] = []
    for item in items:
        for unit in rd.units(item):
            if unit.cells and any(h for h, _ in unit.cells):
                out.append(Record(unit.cells, unit.n, unit.shown(), unit.context))
        for block in re.split(r"\n\s*\n", item.text):
            lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
            fields = []
            for line in lines:
                tag = _TAG_RE.match(line)
                if tag:
                    fields.append(("", tag.group(0).strip("[]")))
                for piece in re.split(r"\s{2,}|\u3000+", line[tag.end() :] if tag else line):
                    m = _FIELD_RE.match(piece.strip())
                    if m:
                        fields.append((m.group("label"), m.group("value").strip()))
            if sum(1 for label, _ in fields if label) >= 2:
                shown = "; ".join(
                    f"{label}: {value}" if label else value for label, value in fields
                )
                out.append(Record(tuple(fields), item.n, shown, item.source or item.title))
    return out


def _names_in(value: str, question: str) -> bool:
    value = tx.fold(value).casefold().replace(" ", "")
    return len(value) >= 3 and value in tx.fold(question).casefold().replace(" ", "")


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


def _where(asked: str, label: str) -> int:
    """Where the asked clause names a label (-1 when it does not)."""
    core = re.sub(r"[（(].*?[）)]", "", label).strip()
    if not core:
        return -1
    at = asked.casefold().find(core.casefold())
    if at < 0 and rd.header_match(asked, label) >= 0.99:
        words = tx.term_set(label)
        at = min((asked.casefold().find(w) for w in words if w in asked.casefold()), default=-1)
    return at


def asked_head(question: str, labels: Sequence[str]) -> str:
    """Of the labels the asked clause names, the one asked for: the head of the phrase, the
    last named in Chinese ('所在医院的设备科联系人'), the first in English ('the contact for
    the site of X'). '' when it names none."""
    asked = asked_clause(question)
    named = sorted(
        (at, label) for label in set(labels) if label and (at := _where(asked, label)) >= 0
    )
    if not named:
        return ""
    return named[-1][1] if tx.has_cjk(asked) else named[0][1]


def _shares(value: str, target: Record) -> bool:
    """The target holds the value, or one of its cells is a whole token of it ('E-1001' of
    'E-1001 Ada Moss')."""
    tokens = set(re.split(r"[\s,，;；/、]+", value))
    return any(v == value or (len(v) >= 3 and v in tokens) for v in target.values())


def join(question: str, items: Sequence[EvidenceItem]) -> Joined | None:
    """The asked field of the record that shares a value with the record the question names,
    when exactly one such answer exists; None when there is none or more than one."""
    found = records(items)
    head = asked_head(question, [label for r in found for label, _ in r.fields])
    if not head:
        return None
    starts = [r for r in found if any(_names_in(v, question) for v in r.values())]
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
                    if answer and field == head and answer not in value:
                        answers.setdefault(answer, Joined(answer, field, start, target, value))
    return next(iter(answers.values())) if len(answers) == 1 else None
