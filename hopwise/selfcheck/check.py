"""Check how well Hopwise reads one document: questions the document answers itself (a table
cell by its row's key and its column's header, a record's field by the record's key: see
questions.py) asked back through the real graph, offline, as an admin reads, and what the
document's structure turned into (tables and their rows, records, and text that
looks like a table but was read as lines).

Each question keeps what a first line showed and the reader's own probability that its short
answer is right, so a deployment can choose its stated-answer threshold on its own documents
(hopwise/selfcheck/calibration.py).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from graph.offline.reading import Reading
from graph.offline.units import Unit, units
from graph.protocols import EvidenceItem
from graph.result import QuestionResult, answer_kind, lead_line, short_answer_of
from hopwise.selfcheck.questions import SelfQuestion, self_questions
from ingest.models import Chunk
from ingest.parse.aligned import ALIGNED_LINES, MIN_COLUMNS, cells_of

logger = logging.getLogger(__name__)

MISREADINGS_SHOWN = 5  # the worst misreadings kept per document


@dataclass
class Outcome:
    """One self-test question and what the first line of its answer was."""

    question: str
    expected: str
    got: str  # the first line, as shown
    kind: str  # short | quote | not_found | other
    right: bool  # the first line holds the expected value
    stated_prob: float  # the reader's probability that its short answer is right (0: none)
    span_right: bool  # the short answer the reader would state is the expected value
    made_from: str  # cell | field | range
    cross: bool = False  # asked in the other language than the document's

    @property
    def stated_right(self) -> bool:
        return self.kind == "short" and self.right


@dataclass
class DocumentCheck:
    """A document's reading check: its structure and its self-test questions' outcomes."""

    doc_id: str
    source: str
    version: int
    checksum: str
    checked_at: float = 0.0
    seconds: float = 0.0
    generated: int = 0  # questions the document's structure gave (before the budget)
    complete: bool = True  # every generated question was asked within the time budget
    tables: int = 0
    table_rows: int = 0
    records: int = 0
    as_text: list[str] = field(default_factory=list)  # where a table was read as lines
    outcomes: list[Outcome] = field(default_factory=list)
    lang: str = ""  # the document's language (most of its units'): en | zh

    @property
    def asked(self) -> int:
        return len(self.outcomes)

    @property
    def right(self) -> int:
        return sum(o.right for o in self.outcomes)

    @property
    def stated(self) -> int:
        return sum(o.kind == "short" for o in self.outcomes)

    @property
    def stated_right(self) -> int:
        return sum(o.stated_right for o in self.outcomes)

    @property
    def abstained(self) -> int:
        return sum(o.kind == "not_found" for o in self.outcomes)

    @property
    def score(self) -> float | None:
        """The share of right first lines (None: nothing to ask)."""
        return self.right / self.asked if self.asked else None

    def misreadings(self, limit: int = MISREADINGS_SHOWN) -> list[Outcome]:
        """The worst first: a wrong stated answer, then a quote without the value, then 'the
        documents do not say'."""
        order = {"short": 0, "other": 1, "quote": 2, "not_found": 3}
        wrong = [
            o for o in self.outcomes if not o.right or (o.kind == "short" and not o.stated_right)
        ]
        return sorted(wrong, key=lambda o: order.get(o.kind, 4))[:limit]

    def summary(self) -> dict[str, Any]:
        """The numbers an admin reads (the CLI's JSON and the Admin page)."""
        return {
            "doc_id": self.doc_id,
            "source": self.source,
            "version": self.version,
            "checked_at": round(self.checked_at, 3),
            "seconds": round(self.seconds, 2),
            "questions_generated": self.generated,
            "questions_asked": self.asked,
            "complete": self.complete,
            "right_first_lines": self.right,
            "score": None if self.score is None else round(self.score, 4),
            "stated": self.stated,
            "stated_right": self.stated_right,
            "abstained": self.abstained,
            "tables": self.tables,
            "table_rows": self.table_rows,
            "records": self.records,
            "tables_read_as_text": list(self.as_text),
            "lang": self.lang,
            "cross_language": {
                "asked": sum(o.cross for o in self.outcomes),
                "right": sum(o.right for o in self.outcomes if o.cross),
            },
            "misreadings": [
                {"question": o.question, "expected": o.expected, "got": o.got, "kind": o.kind}
                for o in self.misreadings()
            ],
        }

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> DocumentCheck:
        outcomes = [Outcome(**o) for o in data.get("outcomes", [])]
        return cls(**{**data, "outcomes": outcomes})


def chunk_evidence(chunk: Chunk, n: int) -> EvidenceItem:
    """A stored chunk as the answer step would see it."""
    return EvidenceItem(
        n=n, chunk_id=chunk.chunk_id, source=chunk.source, title=chunk.title,
        section=chunk.section_path, page=chunk.page, text=chunk.text,
        table_header=str(chunk.metadata.get("table_header") or ""),
    )  # fmt: skip


def document_units(chunks: Sequence[Chunk]) -> list[Unit]:
    return [u for i, c in enumerate(chunks) for u in units(chunk_evidence(c, i + 1))]


def main_language(found: Sequence[Unit]) -> str:
    """The language most of the units are in ('' for none)."""
    counts = Counter(u.lang for u in found if u.lang in ("en", "zh"))
    return counts.most_common(1)[0][0] if counts else ""


def text_table_at(text: str) -> bool:
    """Whether the text has a run of lines that each split into the same columns (by tabs or
    wide gaps, as the parser splits them: ingest/parse/aligned.py) but no table row of cells:
    a table read as lines (a preformatted block, say)."""
    run, width = 0, 0
    for line in text.splitlines():
        cells = cells_of(line) if "|" not in line else []
        if len(cells) < MIN_COLUMNS:
            run, width = 0, 0
            continue
        run, width = (run + 1, width) if len(cells) == width else (1, len(cells))
        if run >= ALIGNED_LINES:
            return True
    return False


def where(chunk: Chunk) -> str:
    """Where a table read as text is, in words: its page or section, and its first line."""
    first = chunk.metadata.get("table_as_text")
    starting = f" starting “{first}”" if isinstance(first, str) and first else ""
    section = chunk.section_path.split(" > ")[-1] if chunk.section_path else ""
    place = f" on page {chunk.page}" if chunk.page else f" under “{section}”" if section else ""
    return f"the table{place}{starting} was read as text"


def structure(chunks: Sequence[Chunk], found: Sequence[Unit]) -> tuple[int, int, int, list[str]]:
    """(tables, table rows, records, where a table was read as text) of a document."""
    tables = {(u.context, tuple(h for h, _ in u.cells)) for u in found if u.cells}
    rows = sum(1 for u in found if u.cells)
    records = sum(1 for u in found if u.kind == "record")
    with_rows = {u.chunk_id for u in found if u.cells}
    flagged = list(dict.fromkeys(
        where(c) for c in chunks
        if c.metadata.get("table_as_text") or (c.chunk_id not in with_rows and text_table_at(c.text))
    ))  # fmt: skip
    return len(tables), rows, records, flagged


def judge(sq: SelfQuestion, result: QuestionResult, stated_prob: float, span: str) -> Outcome:
    """What the first line showed against what the document states."""
    from hopwise.evaluation.kbgrade import normalise  # the knowledge-base sets' own rule

    expected = normalise(sq.answer)

    def states(text: str) -> bool:  # the value, and not much more (the fit's rule for a span)
        said = normalise(text)
        return bool(expected) and expected in said and len(said) <= 3 * len(expected) + 12

    first = lead_line(result.answer)
    kind = answer_kind(result.answer)
    right = kind != "not_found" and bool(expected) and expected in normalise(first)
    if kind == "short":  # judged on what it states, not on the whole line
        right = states(short_answer_of(result.answer))
    span_right = bool(span) and states(span)
    return Outcome(sq.question, sq.answer, first, kind, right, round(stated_prob, 6), span_right,
                   sq.kind, sq.cross)  # fmt: skip


Ask = Callable[[str], tuple[QuestionResult, Reading | None]]


def stated_of(reading: Reading | None) -> tuple[float, str]:
    """The reader's probability that its short answer is right, and that answer, from the
    reading behind a first line (0 and '' when it had none to state)."""
    if reading is None or reading.top is None or reading.span is None:
        return 0.0, ""
    if reading.span.source == "whole":
        return 0.0, ""
    return reading.stated, reading.span.text


def check_document(
    doc: Any,
    chunks: Sequence[Chunk],
    ask: Ask,
    *,
    limit: int,
    budget_s: float,
    seed: int = 0,
    before_each: Callable[[], None] | None = None,
    other_languages: Callable[[], set[str]] = set,
) -> DocumentCheck:
    """Generate a document's questions and ask each (`ask`: one question through the graph,
    returning the result and the reading behind its first line) until `limit` or `budget_s`; some in
    the document's other language when another document is in it (`other_languages`: the
    languages of the deployment's other documents)."""
    started = time.monotonic()
    found = document_units(chunks)
    tables, rows, records, flagged = structure(chunks, found)
    lang = main_language(found)
    both = bool(lang) and bool(other_languages() - {lang})
    asked = self_questions(found, seed=seed, limit=limit, other_language=both)
    check = DocumentCheck(doc.doc_id, doc.source, doc.version, doc.checksum, tables=tables,
                          table_rows=rows, records=records, as_text=flagged,
                          generated=len(asked), lang=lang)  # fmt: skip
    for sq in asked:
        if time.monotonic() - started > budget_s:
            check.complete = False
            break
        if before_each is not None:
            before_each()
        try:
            result, reading = ask(sq.question)
        except Exception:  # noqa: BLE001 - a question that fails is not a reading to score
            logger.info("A self-test question failed: %s", sq.question, exc_info=True)
            continue
        prob, span = stated_of(reading)
        check.outcomes.append(judge(sq, result, prob, span))
    check.seconds = time.monotonic() - started
    check.checked_at = time.time()
    return check
