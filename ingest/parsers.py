"""Turn uploaded files (PDF, DOCX, Markdown, TXT, HTML) into ordered, structured blocks.

Every parser feeds a `_Builder`, which owns the plain text and the block offsets, so the
offsets in `Block.start_char/end_char` always index `ParsedDocument.text` exactly.
Bad input raises `IngestError` with a one-line reason; nothing else escapes `parse_bytes`.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib
import io
import itertools
import json
import logging
import os
import pickle
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from ingest.errors import IngestError
from ingest.hidden import Tally, strip_invisible
from ingest.lang import CJK, CJK_RE, FIELD_LABEL
from ingest.models import PARSER_VERSION, Block, ParsedDocument
from ingest.normalize import NORMALIZER, normalize_text

log = logging.getLogger(__name__)

SUPPORTED_EXTENSIONS = (
    ".pdf", ".docx", ".md", ".markdown", ".txt", ".html", ".htm", ".png", ".jpg", ".jpeg",
)  # fmt: skip
MAX_PDF_PAGES = 2000
MAX_DOCX_UNCOMPRESSED = 300 * 1024 * 1024  # bytes a DOCX may expand to
MAX_DOCX_RATIO = 100  # uncompressed / compressed; real DOCX files are well under 20
WORKER_MEMORY_LIMIT = 4 * 1024**3  # address-space cap for the parse worker

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


class _Builder:
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

    def text(self, text: str, page: int | None = None) -> None:
        """A paragraph or list item; soft line breaks are unwrapped."""
        self._append(join_lines(self._visible(text)), "text", page, tight=False)

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
            from ingest.ocr import OCR_ENGINE

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


# --------------------------------------------------------------------------- names and limits

# The libraries that read each format: part of every chunk's lineage (ParsedDocument.parser),
# so a document re-ingests when one of them, or Hopwise's own parsing, changes.
_ENGINES = {
    ".pdf": ("pypdfium2",),
    ".docx": ("python-docx",),
    ".html": ("beautifulsoup4", "lxml"),
    ".htm": ("beautifulsoup4", "lxml"),
    ".md": ("beautifulsoup4",),
    ".markdown": ("beautifulsoup4",),
    ".txt": ("charset-normalizer",),
    ".png": ("rapidocr-onnxruntime",),
    ".jpg": ("rapidocr-onnxruntime",),
    ".jpeg": ("rapidocr-onnxruntime",),
}


def parser_lineage(source: str) -> str:
    """What parses a file of this name, e.g. "parse-3 nfkc-1 pypdfium2-5.15.2" (an OCR'd
    document adds " ocr=<engine>")."""
    return _lineage(PurePosixPath(source).suffix.lower())


@functools.cache
def _lineage(ext: str) -> str:
    """Per extension, once a process: package versions do not change while it runs, and a
    streamed text file builds a document per window."""
    import importlib.metadata

    engines = []
    for package in _ENGINES.get(ext, ()):
        try:
            engines.append(f"{package}-{importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            engines.append(package)
    return " ".join([PARSER_VERSION, NORMALIZER, *engines])


def safe_source(filename: str) -> str:
    """The base name of an uploaded file: never a path, never `..`, no control characters."""
    name = unicodedata.normalize("NFC", str(filename)).replace("\\", "/").split("/")[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    if name in {"", ".", ".."}:
        raise IngestError(f"invalid file name {filename!r}")
    return name


def _extension(name: str) -> str:
    ext = PurePosixPath(name).suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        shown = ext or "(none)"
        supported = ", ".join(SUPPORTED_EXTENSIONS)
        raise IngestError(f"unsupported file type {shown} (supported: {supported})")
    return ext


def _mb(n: float) -> str:
    return f"{n / (1024 * 1024):.1f}".rstrip("0").rstrip(".")


def check_size(size: int, max_bytes: int | None) -> None:
    """Reject a file over the upload limit before it is read or parsed."""
    if max_bytes is not None and size > max_bytes:
        raise IngestError(f"file is {_mb(size)} MB, over the {_mb(max_bytes)} MB limit")


def lineage_is_current(stored: str, source: str) -> bool:
    """A document parsed with this lineage would be parsed the same way today (OCR'd ones:
    by the same OCR engine and settings too)."""
    base = parser_lineage(source)
    if stored == base:
        return True
    if not stored.startswith(f"{base} ocr="):
        return False
    from ingest.ocr import OCR_ENGINE

    return stored == f"{base} ocr={OCR_ENGINE}"


# --------------------------------------------------------------------------- PDF


def _parse_pdf(data: bytes, source: str) -> ParsedDocument:
    from ingest import pdf_text

    with pdf_text.PDFIUM_LOCK:  # a parse in this process never overlaps a page render
        return _parse_pdf_locked(data, source)


def _parse_pdf_locked(data: bytes, source: str) -> ParsedDocument:
    import pypdfium2

    from ingest import pdf_text

    if b"%PDF-" not in data[:1024]:
        raise IngestError("corrupt PDF (no PDF header)")
    try:
        pdf = pdf_text.open_pdf(data)
    except pypdfium2.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pypdfium2.raw.FPDF_ERR_PASSWORD:
            raise IngestError(
                "encrypted PDF (password protected); remove the password first"
            ) from exc
        raise IngestError(f"corrupt PDF ({exc})") from exc
    try:
        count = len(pdf)
        if count > MAX_PDF_PAGES:
            raise IngestError(f"PDF has {count} pages, over the {MAX_PDF_PAGES}-page limit")
        builder = _Builder()
        with contextlib.suppress(Exception):  # a document without an AcroForm has no fields
            pdf.init_forms()
        pages = []
        for index in range(count):
            try:
                pages.append(pdf_text.read_page(pdf, index, builder.hidden))
            except Exception as exc:  # PDFium reports damage as many kinds of error
                raise IngestError(f"corrupt PDF (page {index + 1}: {exc})") from exc
        scans = [page for page in pages if pdf_text.needs_ocr(page)]
        ocr_text = _ocr_pages(pdf, scans, builder) if scans else {}
        outline = _pdf_outline(pdf)
        title = _pdf_title(pdf)
    finally:
        pdf.close()
    running = _running_lines(pages)
    known = _vocabulary(pages)
    furniture_keys: set[str] = set()
    for page in pages:
        lines = [line for line in page.lines if id(line) not in running]
        for line in page.lines:
            if id(line) in running and (key := _line_key(line.text)) not in furniture_keys:
                furniture_keys.add(key)
                builder.furniture.append(line.text)
        _pdf_page(builder, page, lines, outline.get(page.number, []), known)
        for paragraph in ocr_text.get(page.number, []):
            builder.text(paragraph, page=page.number)
        for note in page.notes:
            builder.text(note, page=page.number)
    if not builder.blocks:
        if scans and (problem := _ocr_problem()):
            raise IngestError(f"PDF has no text layer and OCR is unavailable ({problem})")
        raise IngestError("PDF has no extractable text (no text layer, and OCR found none)")
    return builder.build(source, title)


def _pages(n: int) -> str:
    return f"{n} page{'s' if n != 1 else ''}"


def _ocr_problem() -> str | None:
    from ingest.ocr import ocr_available

    return ocr_available()


# Scanned pages read per file: a dense page takes ~5 s on 2 cores, so 200 fit the OCR deadline
# (HOPWISE_OCR_TIMEOUT_S, 1200 s); the pages after them are named in the document's warnings.
MAX_OCR_PAGES = 200


def _ocr_pages(pdf: Any, scans: list[Any], builder: _Builder) -> dict[int, list[str]]:
    """Paragraphs read by OCR from each scanned page, by page number ({} without OCR); what
    could not be read is said in the document's warnings."""
    from ingest import ocr, pdf_text

    if (problem := ocr.ocr_available()) is not None:
        builder.warnings.append(
            f"{_pages(len(scans))} scanned and not read: OCR is unavailable ({problem})"
        )
        return {}
    if len(scans) > MAX_OCR_PAGES:
        skipped = scans[MAX_OCR_PAGES:]
        builder.warnings.append(
            f"{_pages(len(skipped))} scanned and not read (from page {skipped[0].number}): "
            f"over the {MAX_OCR_PAGES}-page OCR limit per file"
        )
        scans = scans[:MAX_OCR_PAGES]
    found: dict[int, list[str]] = {}
    for done, page in enumerate(scans, start=1):
        report("ocr", done, len(scans))
        image = pdf_text.render(pdf, page.number - 1)
        height, width = image.shape[:2]
        paragraphs = ocr.lines_to_paragraphs(ocr.ocr_image(image), width, height)
        if paragraphs:
            found[page.number] = paragraphs
            builder.ocr_pages.append(page.number)
    return found


def _pdf_title(pdf: Any) -> str | None:
    """The metadata title, unless it is a placeholder a tool wrote ("Untitled", "Microsoft
    Word - x.docx")."""
    try:
        title = join_lines(str(pdf.get_metadata_value("Title") or ""))
    except Exception:  # a broken info dictionary only costs us the title
        return None
    if title.lower() in {"", "untitled", "title", "document"} or title.startswith(
        "Microsoft Word - "
    ):
        return None
    return title


def _pdf_outline(pdf: Any) -> dict[int, list[list[str]]]:
    """Bookmark paths by 1-based page, in outline order; a broken outline is just ignored."""
    found: dict[int, list[list[str]]] = {}
    path: list[str] = []
    try:
        for item in pdf.get_toc(max_depth=16):
            title = join_lines(item.get_title() or "")
            path = [*path[: item.level], title]
            dest = item.get_dest()
            page = dest.get_index() if dest is not None else None
            if title and page is not None and page >= 0:
                found.setdefault(page + 1, []).append(list(path))
    except Exception:
        return {}
    return found


# Running headers and footers: one of the two outermost lines in the top or bottom
# FURNITURE_ZONE of the visible page whose text repeats on other pages, either the same text
# in one cell (a title) on FURNITURE_SHARE of the pages and FURNITURE_MIN_PAGES or more, or the same
# text but for a number that follows the page number ("Page 7 of 40", "Chapter 2: Setup 14",
# "- 7 -") on two pages or more. Text that only repeats with numbers unrelated to the page
# ("Region 3 sold 40 units") stays in the text.
FURNITURE_ZONE = 0.12
FURNITURE_SHARE = 0.4  # odd and even pages often carry different headers
FURNITURE_MIN_PAGES = 3
PARAGRAPH_GAP = 1.4  # a line pitch over this many times the page's usual pitch: new paragraph
_DIGITS = re.compile(r"\d+")
_NOT_WORD = re.compile(r"[\W_]+")


def _line_pitch(lines: list[Any]) -> float:
    """The page's usual distance from one line to the next (its line spacing)."""
    steps = [
        a.bottom - b.bottom
        for a, b in itertools.pairwise(lines)
        if 0.5 * a.height < a.bottom - b.bottom < 3 * a.height
    ]
    if steps:
        return statistics.median(steps)
    heights = [line.height for line in lines if line.height > 0]
    return 1.2 * statistics.median(heights) if heights else 12.0


def _line_key(text: str) -> str:
    return _NOT_WORD.sub("", _DIGITS.sub("#", unicodedata.normalize("NFKC", text).casefold()))


def _edge_lines(page: Any) -> Iterator[Any]:
    """The two outermost lines at the top and at the bottom of a page's visible box."""
    bottom, top = page.view[1], page.view[3]
    zone = FURNITURE_ZONE * (top - bottom)
    by_height = sorted(page.lines, key=lambda line: -line.top)
    for line in by_height[:2]:
        if line.bottom >= top - zone:
            yield line
    for line in by_height[::-1][:2]:
        if line.top <= bottom + zone:
            yield line


def _page_numbered(seen: list[tuple[int, list[int]]]) -> list[bool]:
    """Which lines carry a number that goes up with the page: one whose (number - page
    number) another line of the group shares (the printed numbering may restart, e.g. after
    the front matter, so each run of pages has its own offset)."""
    width = len(seen[0][1])
    if not width or any(len(numbers) != width for _, numbers in seen):
        return [False] * len(seen)
    marked = [False] * len(seen)
    for i in range(width):
        offsets = [numbers[i] - page for page, numbers in seen]
        for j, offset in enumerate(offsets):
            marked[j] = marked[j] or offsets.count(offset) >= 2
    return marked


def _running_lines(pages: list[Any]) -> set[int]:
    """id() of every line that is a running header or footer."""
    with_text = [page for page in pages if page.lines]
    if len(with_text) < 2:
        return set()
    need = max(FURNITURE_MIN_PAGES, FURNITURE_SHARE * len(with_text))
    groups: dict[str, list[tuple[int, Any]]] = {}
    for page in with_text:
        for line in {id(line): line for line in _edge_lines(page)}.values():
            groups.setdefault(_line_key(line.text), []).append((page.number, line))
    running: set[int] = set()
    for members in groups.values():
        pages_with = {index for index, _ in members}
        if len(pages_with) < 2:
            continue
        texts = {line.text for _, line in members}
        single = all(len(line.cells) == 1 for _, line in members)
        if single and len(texts) == 1 and len(pages_with) >= need:
            # the same title on most pages (a table's header row repeated on every page,
            # which has cells, stays)
            running.update(id(line) for _, line in members)
        elif len(pages_with) == len(members):
            numbers = [
                (page, [int(n) for n in _DIGITS.findall(line.text)]) for page, line in members
            ]
            marks = _page_numbered(numbers)
            running.update(id(line) for (_, line), mark in zip(members, marks, strict=True) if mark)
    return running


_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_HYPHENATED = re.compile(r"([^\W\d_]+)-$")
_COMPOUND_END = re.compile(r"[^\W\d_]-[^\W\d_]+-$")
_LOWER_START = re.compile(r"^([^\W\d_]+)")
_PDF_ITEM = re.compile(r"^\s*(?:[•●▪◦■□‣⁃∙○◆◇➢✓*+-]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+")
_SOFT_HYPHEN = re.compile("([^\\W\\d_]+)\ufffe\\s*([^\\W\\d_]+)")


def _vocabulary(pages: list[Any]) -> Counter[str]:
    """How often each word (lower-cased) occurs in the document: which spelling the document
    itself uses."""
    words: Counter[str] = Counter()
    for page in pages:
        for line in page.lines:
            words.update(w.casefold() for w in _WORD.findall(line.text))
    return words


def _dehyphenate(lines: list[str], known: Counter[str]) -> list[str]:
    """Join a word broken across lines with a hyphen ("li-" + "brary"; PDFium marks ones it
    already joined with U+FFFE) unless it reads as a compound: the document writes the
    hyphenated form and not the joined one ("well-known"), both parts are words the document
    uses on their own ("self-service"; each part occurs once as the broken fragment itself),
    the first part is one letter ("e-mail"), the line ends in a longer compound
    ("state-of-the-"), or the second part starts with a capital or a digit."""

    def keep_hyphen(head: str, tail: str, compound: bool = False) -> bool:
        joined, hyphenated = f"{head}{tail}".casefold(), f"{head}-{tail}".casefold()
        if not tail[0].islower():
            return True
        if known[joined] > 0:
            return False
        return (
            compound
            or known[hyphenated] > 0
            or len(head) == 1
            or (known[head.casefold()] >= 2 and known[tail.casefold()] >= 2)
        )

    def soft(match: re.Match[str]) -> str:
        head, tail = match.group(1), match.group(2)
        compound = match.string[max(0, match.start() - 1) : match.start()] == "-"
        return f"{head}-{tail}" if keep_hyphen(head, tail, compound) else head + tail

    out: list[str] = []
    for raw_line in lines:
        line = _SOFT_HYPHEN.sub(soft, raw_line) if "\ufffe" in raw_line else raw_line
        line = line.replace("\ufffe", "-")  # before a digit or a symbol: a real hyphen
        if out and (end := _HYPHENATED.search(out[-1])) and (start := _LOWER_START.match(line)):
            head, tail = end.group(1), start.group(1)
            compound = bool(_COMPOUND_END.search(out[-1]))
            out[-1] = (out[-1] if keep_hyphen(head, tail, compound) else out[-1][:-1]) + line
            continue
        if out and out[-1].endswith("-") and out[-1][-2:-1].isalnum() and line[:1].isalnum():
            out[-1] += line  # "ISO-" + "9001", "Jean-" + "Paul": the hyphen is the word's own
            continue
        out.append(line)
    return out


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _opens(line: str, mark: list[str]) -> bool:
    """A (whitespace-free) line is a bookmark's heading: its title, maybe with a number."""
    title = _squeeze(mark[-1])
    if not title or not line or len(line) > len(title) + 8:
        return False
    return line.startswith(title) or line.endswith(title)


class _TableRows:
    """The rows of one table on a PDF page, laid out by column. A cell that wraps onto the
    next line, or a row whose cells the PDF writes one column at a time (a wrapped cell
    beside centred ones), arrives as several lines; each piece goes to the column it sits
    in, of the row it belongs to: on the row's first line, or starting above its lowest piece
    or just below it, and not opening a new row in the first column. A piece right of every
    cell of a column and before the next one opens a column between them."""

    def __init__(self, width: float) -> None:
        self.rows: list[list[str]] = []
        self.widest = TABLE_PIECE_WIDTH * width  # wider than this, a piece is a text column's line
        self.reset()

    def reset(self) -> None:
        self.rows.clear()
        self.columns: list[list[float]] = []  # [left, right] of each column's cells so far
        self.top = self.bottom = 0.0  # the current row's first line top, lowest piece bottom

    def start(self, line: Any) -> None:
        if len(line.spans) != len(line.cells) or (self.rows and not self.columns):
            self.columns = []  # no positions: rows as the PDF gives them
            self.rows.append(list(line.cells))
            return
        self.top, self.bottom = line.top, line.bottom
        self.rows.append([""] * len(self.columns))
        self.add(line)

    def _column(self, left: float, right: float, height: float) -> int:
        """The column a piece at [left, right] belongs to, opening one where none does."""
        tol = 0.5 * height
        i = max((k for k, (lo, _) in enumerate(self.columns) if lo <= left + tol), default=-1)
        if i >= 0 and left <= self.columns[i][1] + tol:
            self.columns[i] = [min(self.columns[i][0], left), max(self.columns[i][1], right)]
            return i
        i += 1  # right of column i's cells (or of none): a column of its own
        self.columns.insert(i, [left, right])
        for row in self.rows:
            row.insert(i, "")
        return i

    def continues(self, line: Any) -> bool:
        if not self.columns or len(line.spans) != len(line.cells) or not line.cells:
            return False
        if any(right - left > self.widest for left, right in line.spans):
            return False
        height = max(line.height, 1.0)
        if line.spans[0][0] < self.columns[0][0] - 0.5 * height:
            return False  # left of the table
        if abs(line.top - self.top) <= TABLE_ROW_BAND * height:  # on the row's first line
            return True
        below = self.bottom - TABLE_WRAP_GAP * height <= line.top < self.top  # within the row
        first = line.spans[0][0] <= self.columns[0][1] + 0.5 * height
        return below and (not first or (len(line.cells) == 1 and len(self.rows) >= 2))

    def add(self, line: Any) -> None:
        height = max(line.height, 1.0)
        for cell, (left, right) in zip(line.cells, line.spans, strict=True):
            i = self._column(left, right, height)
            row = self.rows[-1]
            row[i] = f"{row[i]}\n{cell}" if row[i] else cell  # unwrapped by the builder
        self.bottom = min(self.bottom, line.bottom)


TABLE_PIECE_WIDTH = 0.35  # share of the page width: a wider piece is no table cell
TABLE_ROW_BAND = 0.5  # line heights: a piece this near the row's first line is on it
TABLE_WRAP_GAP = 0.8  # line heights: a piece starting this close below the row continues it


def _pdf_page(
    builder: _Builder, page: Any, lines: list[Any], marks: list[list[str]], known: Counter[str]
) -> None:
    """Add one page: paragraphs split at vertical gaps and at lines that open a bookmark;
    runs of two or more lines with several cells become table rows.

    A bookmark whose title is not found on its page takes effect at the top of the page.
    """
    number = page.number
    squeezed = [_squeeze(line.text) for line in lines]
    found = [m for m in marks if any(_opens(sq, m) for sq in squeezed)]
    for missing in marks:
        if missing not in found:
            builder.set_path(missing)
    pitch = _line_pitch(lines)
    para: list[str] = []
    table = _TableRows(page.width)
    rows = table.rows

    def flush() -> None:
        if len(rows) >= 2:
            builder.table(rows, page=number)
        elif rows:
            para.append(" ".join(c for c in rows[0] if c))
        table.reset()
        builder.text("\n".join(_dehyphenate(para, known)), page=number)
        para.clear()

    previous = None
    for line, sq in zip(lines, squeezed, strict=True):
        mark: list[str] | None = next((m for m in found if _opens(sq, m)), None)
        if rows and mark is None and table.continues(line):
            table.add(line)  # a wrapped cell, or the cells of its row set apart
            continue
        step = previous.bottom - line.bottom if previous is not None else 0.0
        broken = previous is not None and (
            step > PARAGRAPH_GAP * pitch or step < -0.5 * pitch or bool(_PDF_ITEM.match(line.text))
        )
        table_row = len(line.cells) >= 2 and mark is None
        if table_row and rows:
            broken = False  # table rows are often spaced wider than lines of a paragraph
        if mark is not None or broken or table_row != bool(rows):
            flush()
        if mark is not None:
            found = found[found.index(mark) + 1 :]
            builder.set_path(mark)
            builder.add_heading_block(line.text, page=number)
        elif table_row:
            table.start(line)
        else:
            para.append(line.text)
        previous = line
    flush()


# --------------------------------------------------------------------------- DOCX


def _check_zip(data: bytes, kind: str) -> None:
    """Refuse zip bombs by reading the central directory before anything is inflated."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        if data.startswith(b"\xd0\xcf\x11\xe0"):
            raise IngestError("old Word .doc format, not DOCX; save it as .docx first") from exc
        raise IngestError(f"corrupt {kind} (not a valid zip archive)") from exc
    total = sum(info.file_size for info in infos)
    packed = max(1, sum(info.compress_size for info in infos))
    if total > MAX_DOCX_UNCOMPRESSED or (
        total > 10 * 1024 * 1024 and total / packed > MAX_DOCX_RATIO
    ):
        raise IngestError(
            f"{kind} expands to {_mb(total)} MB from {_mb(len(data))} MB; refused as a zip bomb"
        )


_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)


def _parse_docx(data: bytes, source: str) -> ParsedDocument:
    from ingest.docx_parse import parse_docx  # imported here: docx_parse builds on this module

    return parse_docx(data, source)


# --------------------------------------------------------------------------- text decoding


def _looks_binary(data: bytes) -> bool:
    sample = data[:65536]
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    return controls > max(8, len(sample) // 50)


def _gb2312_ratio(text: str) -> float:
    hanzi = CJK_RE.findall(text)
    if not hanzi:
        return 0.0
    ok = 0
    for ch in hanzi:
        try:
            ch.encode("gb2312")
            ok += 1
        except UnicodeEncodeError:
            pass
    return ok / len(hanzi)


_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
# Single-byte Latin code pages a detector may pick for Western European text: where the
# bytes are also valid cp1252 and read as plain words there, the Western reading wins ("très",
# not "trčs"). Text of those languages read as cp1252 puts symbols inside words ("³" for
# "ł", "¹" for "ą"), which `_plain_words` catches.
_OTHER_LATIN = {
    "cp1250", "cp1254", "cp1257", "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_9",
    "iso8859_10", "iso8859_13", "iso8859_16", "mac_latin2", "cp852",
}  # fmt: skip
_SYMBOL_IN_WORD = re.compile(r"[^\W\d_][\u00a1-\u00bf\u00d7\u00f7][^\W\d_]")


def _plain_words(text: str) -> bool:
    return _SYMBOL_IN_WORD.search(text) is None


def _wide_encoding(data: bytes) -> str | None:
    """UTF-32 or UTF-16 without a byte-order mark, told by where the zero bytes of mostly
    Latin text fall (every other byte, or three bytes in four)."""
    sample = data[: 1 << 14]
    if len(sample) < 8:
        return None

    def zeros(start: int, step: int) -> float:
        part = sample[start::step]
        return sum(1 for b in part if b == 0) / max(1, len(part))

    if len(data) % 4 == 0:  # the high bytes of a code point below U+10000 are zero
        if min(zeros(2, 4), zeros(3, 4)) > 0.95 and zeros(0, 4) < 0.05:
            return "utf-32-le"
        if min(zeros(0, 4), zeros(1, 4)) > 0.95 and zeros(3, 4) < 0.05:
            return "utf-32-be"
    if len(data) % 2 == 0:
        if zeros(1, 2) > 0.4 and zeros(0, 2) < 0.05:
            return "utf-16-le"
        if zeros(0, 2) > 0.4 and zeros(1, 2) < 0.05:
            return "utf-16-be"
    return None


def decode_text(data: bytes) -> str:
    """Decode UTF-8 (with or without BOM), UTF-16 and UTF-32 (with or without BOM),
    GB18030/GBK and other encodings."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    else:
        bom = next(((mark, codec) for mark, codec in _BOMS if data.startswith(mark)), None)
        wide = bom[1] if bom else _wide_encoding(data)
        if wide is not None:
            try:
                return data[len(bom[0]) if bom else 0 :].decode(wide)
            except UnicodeDecodeError as exc:
                if bom:
                    raise IngestError(f"cannot decode text (broken {wide.upper()})") from exc
    if _looks_binary(data):
        raise IngestError("binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    gb_text: str | None
    try:
        gb_text = data.decode("gb18030")
    except UnicodeDecodeError:
        gb_text = None
    # Short simplified-Chinese files are often guessed as Big5; GB2312 coverage settles it.
    if gb_text is not None and _gb2312_ratio(gb_text) >= 0.95:
        return gb_text
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is not None:
        if best.encoding in _OTHER_LATIN:
            with contextlib.suppress(UnicodeDecodeError):
                western = data.decode("cp1252")
                if _plain_words(western):
                    return western
        return str(best)
    if gb_text is not None:
        return gb_text
    raise IngestError("cannot decode text (unknown encoding; save it as UTF-8)")


_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
TEXT_WINDOW_CHARS = 256 * 1024  # how much plain text is parsed and chunked at a time


def _parse_txt(data: bytes, source: str) -> ParsedDocument:
    windows = list(iter_text_windows(data, source, window_chars=len(data) + 1))
    if not windows:
        raise IngestError("empty file (no text found)")
    return windows[0][1]


def iter_text_windows(
    data: bytes, source: str, *, window_chars: int = TEXT_WINDOW_CHARS
) -> Iterator[tuple[int, ParsedDocument]]:
    """A plain-text file as consecutive documents of about `window_chars`, each cut at a
    paragraph break and paired with its offset in the whole text, so a big file is parsed
    and chunked a window at a time in bounded memory. Invisible characters are counted
    once over the whole text and reported by the first window."""
    text = decode_text(data)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    hidden = Tally()
    text = strip_invisible(text, hidden)
    offset = 0
    position = 0
    first = True
    while position < len(text):
        end = min(len(text), position + window_chars)
        if end < len(text):
            cut = _PARAGRAPH_BREAK.search(text, end)
            end = cut.end() if cut else len(text)
        builder = _Builder()
        for para in _PARAGRAPH_BREAK.split(text[position:end]):
            builder.text(para)
        position = end
        if not builder.parts:
            continue
        if first:
            builder.hidden = hidden
        doc = builder.build(source, None)
        yield offset, doc
        offset += len(doc.text) + 2  # the paragraph break between two windows
        first = False


# --------------------------------------------------------------------------- Markdown

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


_MD_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # an image: its alt text
    (re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)[^)]*\)"), r"\1 (\2)"),  # a link: text (url)
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
    (re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)"), r"\2"),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
]


def md_inline(text: str) -> str:
    """Markdown's inline marks read as a reader sees them: '**fee**' is 'fee', a link its text
    (and address), an image its alt text, a code span its code."""
    for pattern, replacement in _MD_INLINE:
        text = pattern.sub(replacement, text)
    return text


def _md_cells(line: str) -> list[str]:
    line = line.strip()
    line = line.removeprefix("|")
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [md_inline(cell.strip().replace("\\|", "|")) for cell in re.split(r"(?<!\\)\|", line)]


_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_STYLE_BLOCK = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.IGNORECASE | re.DOTALL)


def _md_pieces(lines: list[str]) -> list[tuple[bool, str]]:
    """The file as (is_code, text) pieces in order: fenced blocks and code spans are code."""
    pieces: list[tuple[bool, str]] = []
    marker: str | None = None
    for number, line in enumerate(lines):
        end = "\n" if number < len(lines) - 1 else ""
        fence = _FENCE.match(line)
        if marker is not None or fence:
            if marker is not None and line.strip().startswith(marker):
                marker = None
            elif marker is None and fence:
                marker = fence.group(1)
            pieces.append((True, line + end))
            continue
        pos = 0
        for span in _CODE_SPAN.finditer(line):
            pieces += [(False, line[pos : span.start()]), (True, span.group())]
            pos = span.end()
        pieces.append((False, line[pos:] + end))
    return pieces


def _md_visible(lines: list[str], tally: Tally) -> list[str]:
    """What a Markdown viewer shows: raw HTML comments, <script>/<style> bodies and elements
    hidden by the HTML rules (ingest.hidden.css) are dropped; code stays as written."""
    pieces = _md_pieces(lines)
    if not any("<" in text for code, text in pieces if not code):
        return lines
    from ingest.hidden.css import MarkupFilter

    markup = "".join(text for code, text in pieces if not code)
    shown = MarkupFilter("\n".join(_STYLE_BLOCK.findall(markup)), tally)
    text = "".join(shown.literal(t) if code else shown.markup(t) for code, t in pieces)
    return text.split("\n")


def _parse_markdown(data: bytes, source: str) -> ParsedDocument:
    lines = decode_text(data).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines, front_title = _front_matter(lines)
    builder = _Builder()
    lines = _md_visible(lines, builder.hidden)
    para: list[str] = []

    def flush() -> None:
        if para:
            builder.text(md_inline("\n".join(para)))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            marker = fence.group(1)
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                body.append(lines[i])
                i += 1
            builder.code("\n".join(body))
            i += 1
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            builder.heading(len(atx.group(1)), md_inline(atx.group(2) or ""))
            i += 1
            continue
        setext = _SETEXT.match(line)
        if setext and para:
            text = "\n".join(para)
            para.clear()
            builder.heading(1 if setext.group(1)[0] == "=" else 2, md_inline(text))
            i += 1
            continue
        if (
            "|" in line
            and i + 1 < len(lines)
            and _TABLE_SEP.match(lines[i + 1])
            and "-" in lines[i + 1]
        ):
            flush()
            rows = [_md_cells(line)]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(_md_cells(lines[i]))
                i += 1
            builder.table(rows)
            continue
        if not line.strip() or (setext and not para):
            flush()
        elif _LIST_ITEM.match(line):
            flush()
            para.append(line)
        else:
            para.append(line)
        i += 1
    flush()
    return builder.build(source, builder.first_h1 or front_title)


def _front_matter(lines: list[str]) -> tuple[list[str], str | None]:
    """Drop a leading YAML front-matter block, keeping its `title:` if it has one."""
    if not lines or lines[0].strip() != "---":
        return lines, None
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() in ("---", "..."):
            title = None
            for line in lines[1:end]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "title" and value.strip():
                    title = value.strip().strip("'\"")
            return lines[end + 1 :], title
    return lines, None


# --------------------------------------------------------------------------- HTML

_DROP_TAGS = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object"}
_BLOCK_TAGS = {
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "html",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "section",
    "summary",
    "ul",
}


class _HtmlWalker:
    """Depth-first walk that turns HTML into builder blocks; run it on a tree whose hidden
    elements `strip_hidden_html` has already removed."""

    def __init__(self, builder: _Builder) -> None:
        self.builder = builder
        self.buffer: list[str] = []

    def flush(self) -> None:
        if self.buffer:
            self.builder.text(" ".join("".join(self.buffer).split()))
            self.buffer.clear()

    def visible_text(self, node: Any) -> str:
        from bs4 import NavigableString, Tag

        out: list[str] = []
        for child in node.children:
            if type(child) is NavigableString:
                out.append(str(child))
            elif isinstance(child, Tag) and child.name not in _DROP_TAGS:
                out.append(" " if child.name in ("br", "td", "th") else "")
                out.append(self.visible_text(child))
        return " ".join("".join(out).split())

    def walk(self, node: Any) -> None:
        from bs4 import NavigableString, Tag

        for child in node.children:
            if type(child) is NavigableString:
                self.buffer.append(str(child))
                continue
            if not isinstance(child, Tag) or child.name in _DROP_TAGS:
                continue
            name = child.name
            if re.fullmatch(r"h[1-6]", name):
                self.flush()
                self.builder.heading(int(name[1]), self.visible_text(child))
            elif name == "table":
                self.flush()
                self.builder.table(self._rows(child))
            elif name == "pre":
                self.flush()
                self.builder.code(child.get_text())
            elif name == "br":
                self.buffer.append(" ")
            else:
                block = name in _BLOCK_TAGS
                if block:
                    self.flush()
                self.walk(child)
                if block:
                    self.flush()

    def _rows(self, table: Any) -> list[list[str]]:
        rows = []
        for tr in table.find_all("tr"):
            if tr.find_parent("table") is not table:
                continue
            cells = tr.find_all(["td", "th"], recursive=False)
            rows.append([self.visible_text(cell) for cell in cells])
        return rows


_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_\-]+)", re.IGNORECASE)


def _decode_html(data: bytes) -> str:
    """The declared <meta charset> when there is one, else the same detection as text files."""
    match = _META_CHARSET.search(data[:4096])
    if match and not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        if _looks_binary(data):
            raise IngestError("binary file, not text")
        try:
            return data.decode(match.group(1).decode("ascii"), errors="replace")
        except LookupError:
            pass  # an unknown charset name: fall back to detection
    return decode_text(data)


def _parse_html(data: bytes, source: str) -> ParsedDocument:
    from bs4 import BeautifulSoup

    from ingest.hidden.css import strip_hidden_html

    markup = _decode_html(data)
    try:
        soup = BeautifulSoup(markup, "lxml")
    except Exception as exc:
        raise IngestError(f"corrupt HTML ({exc})") from exc
    builder = _Builder()
    strip_hidden_html(soup, builder.hidden, skip=_DROP_TAGS)
    walker = _HtmlWalker(builder)
    try:
        walker.walk(soup)
    except RecursionError as exc:
        raise IngestError("HTML is nested too deeply to parse") from exc
    walker.flush()
    title_tag = soup.find("title")
    page_title = title_tag.get_text(" ", strip=True) if title_tag else ""
    return walker.builder.build(source, walker.builder.first_h1 or page_title or None)


# --------------------------------------------------------------------------- images


def _parse_image(data: bytes, source: str) -> ParsedDocument:
    """A scan or a photo of a page (PNG, JPEG): its text by OCR, as page 1."""
    from ingest import ocr

    if (problem := ocr.ocr_available()) is not None:
        raise IngestError(f"images are read by OCR, which is unavailable here ({problem})")
    image = ocr.decode_image(data)
    report("ocr", 1, 1)
    height, width = image.shape[:2]
    builder = _Builder()
    for paragraph in ocr.lines_to_paragraphs(ocr.ocr_image(image), width, height):
        builder.text(paragraph, page=1)
    if not builder.blocks:
        raise IngestError("no text found in the image (OCR)")
    builder.ocr_pages.append(1)
    return builder.build(source, None)


# --------------------------------------------------------------------------- dispatch

_PARSERS: dict[str, Callable[[bytes, str], ParsedDocument]] = {
    ".pdf": _parse_pdf,
    ".docx": _parse_docx,
    ".md": _parse_markdown,
    ".markdown": _parse_markdown,
    ".txt": _parse_txt,
    ".html": _parse_html,
    ".htm": _parse_html,
    ".png": _parse_image,
    ".jpg": _parse_image,
    ".jpeg": _parse_image,
}


def _parse_inline(data: bytes, source: str, ext: str) -> ParsedDocument:
    try:
        return _PARSERS[ext](data, source)
    except IngestError:
        raise
    except MemoryError as exc:
        raise IngestError("file needs too much memory to parse") from exc
    except Exception as exc:  # any parser bug or odd input becomes one clear line
        raise IngestError(f"could not parse {ext} file ({type(exc).__name__}: {exc})") from exc


PageProgress = Callable[[str, int, int], None]  # (stage, done, total), e.g. ("ocr", 3, 12)
_progress = threading.local()


@contextlib.contextmanager
def _reporting(on_page: PageProgress | None) -> Iterator[None]:
    """Send this thread's parse progress to `on_page` while the block runs."""
    previous = getattr(_progress, "sink", None)
    _progress.sink = on_page
    try:
        yield
    finally:
        _progress.sink = previous


@contextlib.contextmanager
def _listener_errors_logged() -> Iterator[None]:
    try:
        yield
    except Exception:  # noqa: BLE001 - a progress display never stops a parse
        log.warning("parse progress listener failed", exc_info=True)


def report(stage: str, done: int, total: int) -> None:
    """Tell whoever asked (the upload page, through the worker) how a slow stage is going;
    a listener's failure never stops the parse."""
    sink = getattr(_progress, "sink", None)
    if sink is not None:
        with _listener_errors_logged():
            sink(stage, done, total)


class _Task:
    """A pure function the worker may run by name (the allow-list is every function marked
    with `worker_task`), and the classes its result may be rebuilt from."""

    def __init__(self, function: Callable[..., Any], results: tuple[type, ...]) -> None:
        self.function = function
        self.name = f"{function.__module__}:{function.__qualname__}"
        self.results = {(kind.__module__, kind.__qualname__): kind for kind in results}


_TASKS: dict[str, _Task] = {}
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def worker_task(*results: type) -> Callable[[F], F]:
    """Allow the worker to run the decorated module-level function (`call_in_worker`); its
    result is plain data or instances of `results` (dataclasses of plain data)."""

    def register(function: F) -> F:
        task = _Task(function, results)
        _TASKS[task.name] = task
        return function

    return register


class _PlainData(pickle.Unpickler):
    """Unpickles a worker's reply: builtins, and instances of the task's declared result
    classes only, so a worker that an untrusted file took over cannot run code here."""

    def __init__(self, data: bytes, allowed: dict[tuple[str, str], type]) -> None:
        super().__init__(io.BytesIO(data))
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        kind = self.allowed.get((module, name))
        if kind is None:
            raise pickle.UnpicklingError(f"the worker may not send {module}.{name}")
        return kind


class _Worker:
    """One long-lived worker subprocess (a parse, or a `worker_task` call such as a PDF page
    render), restarted after a timeout or crash.

    A pathological file can spin or balloon inside a C extension, where no thread can stop
    it; a separate process can be killed. Keeping the process between requests keeps the
    normal path fast (one start-up, then a pipe round-trip per request).
    """

    def __init__(self, preload: tuple[str, ...] = ()) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._errors: Any = None  # the worker's stderr (a temp file), read when it dies
        self._lock = threading.Lock()
        self._preload = preload  # modules imported before the worker says it is ready
        self.unavailable = False  # the worker cannot start here: run in-process instead

    def parse(
        self,
        data: bytes,
        source: str,
        ext: str,
        timeout_s: float,
        ocr_timeout_s: float | None = None,
        on_page: PageProgress | None = None,
    ) -> ParsedDocument:
        with self._lock:
            proc = None if self.unavailable else self._ensure()
            if proc is None:
                with _reporting(on_page):
                    return _parse_inline(data, source, ext)
            assert proc.stdin is not None and proc.stdout is not None
            started = time.monotonic()
            deadline = started + timeout_s
            self._forget_errors()
            try:
                _send(proc.stdin, pickle.dumps(("parse", (data, source, ext))))
                while True:
                    reply = _recv(proc.stdout, deadline)
                    if not reply.startswith(b"P"):
                        break
                    stage, done, total = json.loads(reply[1:])
                    if stage == "ocr":  # scans get the OCR deadline instead of the parse one
                        deadline = max(deadline, started + (ocr_timeout_s or timeout_s))
                    if on_page is not None:
                        with _listener_errors_logged():
                            on_page(str(stage), int(done), int(total))
            except TimeoutError as exc:
                self.stop()
                limit = deadline - started
                raise IngestError(f"parsing took longer than {limit:g} s; file refused") from exc
            except (OSError, EOFError, ValueError) as exc:
                cause = self._death(proc)
                raise IngestError(f"the parser crashed on this file: {cause}") from exc
            except BaseException:
                # Interrupted mid-conversation (e.g. the page reran): what the worker still
                # has to say belongs to this file, so it must never be read as the next one's.
                self.stop()
                raise
        # The reply is JSON, not pickle: the worker handles untrusted files, so nothing it
        # sends back may be able to run code in this process.
        if reply.startswith(b"E"):
            raise IngestError(reply[1:].decode("utf-8", "replace"))
        return ParsedDocument.model_validate_json(reply[1:])

    def call(self, function: Callable[..., T], args: tuple[Any, ...], timeout_s: float) -> T:
        """`function(*args)` in the worker within `timeout_s` (waiting for the worker
        included): TimeoutError past it, RuntimeError if the worker dies or the call fails."""
        task = _TASKS.get(f"{function.__module__}:{function.__qualname__}")
        if task is None or task.function is not function:
            raise ValueError(f"{function.__qualname__} is not a worker task")
        if self.unavailable:
            return function(*args)
        started = time.monotonic()
        if not self._lock.acquire(timeout=timeout_s):
            raise TimeoutError(f"the worker stayed busy for {timeout_s:g} s")
        try:
            proc = None if self.unavailable else self._ensure(function.__module__)
            if proc is None:
                return function(*args)
            assert proc.stdin is not None and proc.stdout is not None
            self._forget_errors()
            try:
                _send(proc.stdin, pickle.dumps(("call", (task.name, args))))
                reply = _recv(proc.stdout, started + timeout_s)
            except TimeoutError as exc:
                self.stop()
                raise TimeoutError(f"took longer than {timeout_s:g} s") from exc
            except (OSError, EOFError, ValueError) as exc:
                raise RuntimeError(f"the worker crashed: {self._death(proc)}") from exc
            except BaseException:
                self.stop()  # interrupted: its reply must never be read as the next one's
                raise
        finally:
            self._lock.release()
        if reply.startswith(b"E"):
            raise RuntimeError(reply[1:].decode("utf-8", "replace"))
        result: T = _PlainData(reply[1:], task.results).load()
        return result

    def _ensure(self, *modules: str) -> subprocess.Popen[bytes] | None:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from ingest.parsers import serve_worker; serve_worker(sys.argv[1:])",
                *self._preload,
                *modules,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._error_file(),
            env=env,
        )
        assert self._proc.stdout is not None
        try:  # the worker says "R" once its imports are done
            ready = _read_exact(self._proc.stdout.fileno(), 1, time.monotonic() + 60) == b"R"
        except (TimeoutError, EOFError, OSError):
            ready = False
        if not ready:
            log.warning("worker process could not start; running in-process without a deadline")
            self.stop()
            self.unavailable = True
        return self._proc

    def _error_file(self) -> Any:
        """Where the worker's stderr goes: a temp file, emptied before each request, so a
        worker that dies leaves its last words there (a native library's abort message)."""
        if self._errors is None:
            try:
                self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - as long as the worker
            except OSError:  # no writable temp dir: the worker runs, its last words are lost
                return subprocess.DEVNULL
        return self._errors

    def _forget_errors(self) -> None:
        if self._errors is not None:
            with contextlib.suppress(OSError):
                self._errors.seek(0)
                self._errors.truncate()

    def _death(self, proc: subprocess.Popen[bytes]) -> str:
        """Why the worker stopped answering, in words, after it is reaped (a pipe can close
        before the exit status exists); the worker is stopped."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(DEATH_WAIT_S)
        code = proc.poll()
        self.stop()
        last = ""
        if self._errors is not None:
            with contextlib.suppress(OSError):
                self._errors.seek(max(0, self._errors.seek(0, os.SEEK_END) - 4096))
                lines = self._errors.read().decode("utf-8", "replace").splitlines()
                last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        return death_cause(code, last)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            for stream in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if stream:
                        stream.close()


DEATH_WAIT_S = 2.0  # how long a worker whose pipe closed gets to report its exit status
_SIGNAL_CAUSES: dict[int, str] = {
    signal.SIGKILL: "it was killed (SIGKILL; the system may have run out of memory)",
    signal.SIGABRT: "it aborted (SIGABRT; often a native library out of memory under the "
    f"worker's {WORKER_MEMORY_LIMIT // 1024**3} GB limit)",
    signal.SIGSEGV: "it crashed in native code (SIGSEGV)",
    signal.SIGBUS: "it crashed in native code (SIGBUS)",
}


def death_cause(code: int | None, last_words: str = "") -> str:
    """A dead worker's exit status in words, with the last line it wrote to stderr."""
    if code is None:
        cause = "it stopped answering and did not exit"
    elif code < 0:
        number = -code
        try:
            name = signal.Signals(number).name
        except ValueError:  # a real-time signal has no name
            name = str(number)
        cause = _SIGNAL_CAUSES.get(number, f"it was stopped by signal {name}")
    else:
        cause = f"it exited with status {code}"
    shown = "".join(ch for ch in last_words if ch.isprintable())[:200]
    return f"{cause}; its last message: {shown}" if shown else cause


def _send(stream: Any, payload: bytes) -> None:
    stream.write(struct.pack(">Q", len(payload)) + payload)
    stream.flush()


def _recv(stream: Any, deadline: float) -> bytes:
    """Read one length-prefixed message, giving up at `deadline` (monotonic seconds)."""
    fd = stream.fileno()
    header = _read_exact(fd, 8, deadline)
    return _read_exact(fd, struct.unpack(">Q", header)[0], deadline)


def _read_exact(fd: int, size: int, deadline: float) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        piece = os.read(fd, min(size, 1 << 20))
        if not piece:
            raise EOFError
        parts.append(piece)
        size -= len(piece)
    return b"".join(parts)


def serve_worker(preload: Sequence[str] = ()) -> None:
    """The worker subprocess: read requests on stdin, answer on the original stdout."""
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_LIMIT, WORKER_MEMORY_LIMIT))
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from libraries must not corrupt the protocol
    for module in preload:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    out.write(b"R")
    out.flush()
    stdin = sys.stdin.buffer
    while True:
        header = stdin.read(8)
        if len(header) < 8:
            return
        kind, request = pickle.loads(stdin.read(struct.unpack(">Q", header)[0]))
        if kind == "call":
            _send(out, _run_task(*request))
            continue
        data, source, ext = request

        def progress(stage: str, done: int, total: int) -> None:
            _send(out, b"P" + json.dumps([stage, done, total]).encode("ascii"))

        try:
            with _reporting(progress):
                reply = b"K" + _parse_inline(data, source, ext).model_dump_json().encode("utf-8")
        except IngestError as exc:
            reply = b"E" + str(exc).encode("utf-8")
        _send(out, reply)


def _run_task(name: str, args: tuple[Any, ...]) -> bytes:
    """A `worker_task` call in the worker: its module is imported, which registers it."""
    try:
        importlib.import_module(name.partition(":")[0])
        task = _TASKS.get(name)
        if task is None:
            raise ValueError(f"{name} is not a worker task")
        return b"K" + pickle.dumps(task.function(*args))
    except Exception as exc:  # noqa: BLE001 - the caller gets the error, the worker lives on
        return b"E" + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")


_WORKER = _Worker(preload=("pypdfium2", "docx", "bs4", "charset_normalizer", "ingest.ocr"))
_TASK_WORKER = _Worker()  # its own process: a page view never queues behind a slow parse
atexit.register(_WORKER.stop)
atexit.register(_TASK_WORKER.stop)


def call_in_worker(function: Callable[..., T], *args: Any, timeout_s: float) -> T:
    """Run a `worker_task` function in the task worker, killed past `timeout_s` (TimeoutError);
    in-process, without a deadline, where no worker can start."""
    return _TASK_WORKER.call(function, args, timeout_s)


def parse_bytes(
    data: bytes,
    filename: str,
    *,
    source: str | None = None,
    max_bytes: int | None = None,
    timeout_s: float | None = None,
    ocr_timeout_s: float | None = None,
    on_page: PageProgress | None = None,
) -> ParsedDocument:
    """Parse an uploaded file's bytes. With `timeout_s` the parse runs in a killable worker;
    a file that needs OCR gets `ocr_timeout_s` (default: the same) from the start instead.
    `on_page(stage, done, total)` hears about slow stages ("ocr": page 3 of 12)."""
    name = safe_source(source or filename)
    ext = _extension(name)
    check_size(len(data), max_bytes)
    if not data.strip():
        raise IngestError("empty file")
    if timeout_s is None:
        with _reporting(on_page):
            return _parse_inline(data, name, ext)
    ocr = max(timeout_s, ocr_timeout_s or timeout_s)
    return _WORKER.parse(data, name, ext, timeout_s, ocr, on_page)


def parse_file(
    path: Path,
    *,
    source: str | None = None,
    max_bytes: int | None = None,
    timeout_s: float | None = None,
) -> ParsedDocument:
    """Parse a file on disk; the size limit is checked before the file is read."""
    path = Path(path)
    name = safe_source(source or path.name)
    _extension(name)
    try:
        check_size(path.stat().st_size, max_bytes)
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"cannot read file ({exc.strerror or exc})") from exc
    return parse_bytes(data, name, max_bytes=max_bytes, timeout_s=timeout_s)
