"""A record the question names by its code, written in the other language.

The reader matches a question's words against a passage's; a Chinese question about an English
log entry (or the reverse) shares no words with it but the code, so no line of the entry can
win on what is asked. Rather than 'the documents do not say' with the entry in hand, the answer
quotes the entry's values of the asked kind (its dates for 'when', its amounts for 'how much'),
verbatim and never stated: the reader sees them all and picks. Only when exactly one record
holds the code, the entry's labels are in the other language, and it has few such values.
A document whose title is the code (a contract by its number) is about the code as a whole:
its header record is not the one the question names, so its passages are left to the reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline import reader_checks as rc
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.records import Record, records
from graph.offline.values import spans_of
from graph.protocols import EvidenceItem


@dataclass(frozen=True)
class ForeignQuote:
    text: str  # the record's tag, the fields holding the code and the asked kind, '…' between
    n: int  # its passage's citation
    record: Record


def _holds(value: str, code: str) -> bool:
    return tx.fold(code).casefold() in tx.fold(value).casefold()


def quote(
    question: str, items: Sequence[EvidenceItem], kind: str, params: OfflineParams = PARAMS
) -> ForeignQuote | None:
    """The one record holding every code the question names, quoted by its values of the
    asked kind, when its labels are in the other language than the question's; else None."""
    codes = [c for c in rc.anchors_of(question) if any(ch.isdigit() for ch in c)]
    if kind not in ("date", "number") or not codes:
        return None
    titled = {e.n for e in items if any(_holds(e.title, c) for c in codes)}
    named = {
        r.shown: r
        for r in records(items)
        if r.n not in titled and all(any(_holds(v, c) for _, v in r.fields) for c in codes)
    }
    given = tx.fold(question).casefold()
    typed_of = {shown: _typed(r, codes, kind, given) for shown, r in named.items()}
    same = tx.language_of(question)
    foreign = [
        r for shown, r in named.items() if typed_of[shown] and _language(r) not in ("", same)
    ]
    if len(foreign) != 1 or any(
        typed_of[shown] and _language(r) == same for shown, r in named.items()
    ):
        return None  # several, or one in the question's language the reader could judge
    [record] = foreign
    typed = typed_of[record.shown]
    if not typed or len(typed) > params.foreign_record_values:
        return None
    keep = sorted(
        {
            0,
            *typed,
            *(i for i, (_, v) in enumerate(record.fields) if any(_holds(v, c) for c in codes)),
        }
    )
    pieces: list[str] = []
    for before, i in zip([None, *keep], keep, strict=False):
        label, value = record.fields[i]
        field = f"{label}: {value}" if label else (f"[{value}]" if i == 0 else value)
        gap = before is not None and i != before + 1
        after_tag = before == 0 and not record.fields[0][0]
        pieces.append((" … " if gap else (" " if after_tag else "; ")) if pieces else "")
        pieces.append(field)
    return ForeignQuote("".join(pieces), record.n, record)


def _language(record: Record) -> str:
    labels = " ".join(label for label, _ in record.fields if label)
    return tx.language_of(labels) if labels else ""


def _typed(record: Record, codes: Sequence[str], kind: str, given: str) -> list[int]:
    """The record's labelled fields holding a value of the kind the question does not give."""
    return [
        i
        for i, (label, value) in enumerate(record.fields)
        if label
        and not any(_holds(value, c) for c in codes)
        and [s for s in spans_of(kind, value) if tx.fold(s).casefold() not in given]
    ]
