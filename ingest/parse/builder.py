"""Plain text and block offsets for every parser: `Builder` owns both, so the offsets in
`Block.start_char/end_char` always index `ParsedDocument.text` exactly; `join_lines`
unwraps a paragraph's lines (no space between CJK lines, one between Latin ones).
"""

from __future__ import annotations

import logging
import re
from pathlib import PurePosixPath

from ingest.errors import IngestError
from ingest.hidden import Tally, strip_invisible
from ingest.lang import CJK, FIELD_LABEL
from ingest.models import Block, ParsedDocument
from ingest.normalize import normalize_text
from ingest.parse.aligned import split_aligned
from ingest.parse.limits import OCR_ENGINE, parser_lineage

log = logging.getLogger(__name__)

# Written without spaces between words: Han (ingest.lang.CJK) plus radicals, CJK punctuation,
# kana, bopomofo and full-width forms. Not Hangul: Korean puts spaces between words.
_CJK = "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\uff00-\uffef" + CJK
_CJK_CHAR = re.compile(f"[{_CJK}]")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")


# --------------------------------------------------------------------------- text building


# A line that is a field of its own: 'Label: value', '[TAG-01]', a list item. Such a line
# starts a new line when the paragraph is unwrapped, so 'Lead: A' and 'Phone: 1' stay apart.
_FIELD_LINE = re.compile(
    rf"^(?:\[[^\]\s]{{1,40}}\]|{FIELD_LABEL}[:：]\s*\S|(?:[-*•]|\d{{1,2}}[.)、])\s+\S)"
)


def join_lines(text: str) -> str:
    """Unwrap soft line breaks: CJK lines join directly, others with one space; a line that
    is a field, a tag or a list item keeps its own line."""
    parts: list[str] = []
    for raw in text.splitlines():
        line = _SPACES.sub(" ", raw).strip()
        if not line:
            continue
        if parts and _FIELD_LINE.match(line):
            parts.append("\n")
        elif parts and not (_CJK_CHAR.match(parts[-1][-1]) and _CJK_CHAR.match(line[0])):
            parts.append(" ")
        parts.append(line)
    return "".join(parts)


class Builder:
    """Accumulates blocks and the document text, tracking the heading stack.

    Every text passes `strip_invisible` here; the parsers add what their format hides to
    `hidden` (see ingest/hidden), and the document reports the total.
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []
        self._stack: list[tuple[int, str]] = []
        self.first_h1: str | None = None
        self.hidden: Tally = Tally()
        self.furniture: list[str] = []  # running headers/footers, kept once (ParsedDocument)
        self.ocr_pages: list[int] = []
        self.warnings: list[str] = []

    def _visible(self, text: str) -> str:
        return normalize_text(strip_invisible(text, self.hidden))

    @property
    def path(self) -> list[str]:
        return [title for _, title in self._stack]

    def heading(self, level: int, text: str, page: int | None = None) -> None:
        text = join_lines(self._visible(text))
        if not text:
            return
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))
        if level == 1 and self.first_h1 is None:
            self.first_h1 = text
        self._append(text, "heading", page, tight=False)

    def set_path(self, path: list[str]) -> None:
        """Enter a section known from outside the text (a PDF bookmark) without adding text."""
        self._stack = list(enumerate((self._visible(title) for title in path), start=1))

    def add_heading_block(self, text: str, page: int | None = None) -> None:
        """A heading line whose section was already entered with `set_path`."""
        self._append(join_lines(self._visible(text)), "heading", page, tight=False)

    def text(self, text: str, page: int | None = None, *, columns: bool = False) -> None:
        """A paragraph or list item; soft line breaks are unwrapped. With `columns` (plain
        text, where spacing is the author's), lines set apart into columns by tabs or spaces
        are a table (ingest/parse/aligned.py); when their columns cannot be told apart they
        stay lines, marked as a table read as text."""
        runs = split_aligned(self._visible(text)) if columns else [("text", self._visible(text))]
        for kind, part in runs:
            if isinstance(part, list):
                self.table(part, page)
            elif kind == "text_table":
                lines = (_SPACES.sub(" ", ln).strip() for ln in part.splitlines())
                self._append("\n".join(ln for ln in lines if ln), kind, page, tight=False)
            else:
                self._append(join_lines(part), "text", page, tight=False)

    def code(self, text: str, page: int | None = None) -> None:
        """Preformatted text: line breaks kept, trailing blanks trimmed."""
        lines = [line.rstrip() for line in self._visible(text).replace("\r\n", "\n").split("\n")]
        self._append("\n".join(lines).strip("\n"), "code", page, tight=False)

    def table(self, rows: list[list[str]], page: int | None = None) -> None:
        """A table, one block per row, cells joined with ' | ', rows one line each."""
        first = True
        for cells in rows:
            clean = [join_lines(self._visible(cell)) for cell in cells]
            while clean and not clean[-1]:
                clean.pop()  # columns no cell of this row reaches
            if not any(clean):
                continue
            self._append(" | ".join(clean), "table", page, tight=not first)
            first = False

    def _append(self, text: str, kind: str, page: int | None, *, tight: bool) -> None:
        if not text.strip():
            return
        if self.parts:
            sep = "\n" if tight else "\n\n"
            self.parts.append(sep)
            self.length += len(sep)
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        self.blocks.append(
            Block(
                text=text,
                section_path=self.path,
                page=page,
                start_char=start,
                end_char=self.length,
                kind=kind,
            )
        )

    def build(self, source: str, title: str | None) -> ParsedDocument:
        text = "".join(self.parts)
        if not text.strip():
            raise IngestError("empty file (no text found)")
        stem = PurePosixPath(source).stem or source
        title = join_lines(self._visible(title or "")) or self.first_h1 or stem
        parser = parser_lineage(source)
        if self.ocr_pages:
            parser += f" ocr={OCR_ENGINE}"
        return ParsedDocument(
            source=source,
            title=title.strip(),
            parser=parser,
            text=text,
            blocks=self.blocks,
            hidden_removed=sum(n for n in self.hidden.values() if n > 0),
            hidden_kinds=sorted(kind for kind, n in self.hidden.items() if n > 0),
            furniture=list(dict.fromkeys(f for f in self.furniture if f.strip())),
            ocr_pages=sorted(set(self.ocr_pages)),
            warnings=self.warnings,
        )
