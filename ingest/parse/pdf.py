"""PDF into blocks (pypdfium2): text by page, running headers and footers dropped, lines
unwrapped and dehyphenated, table rows kept as rows, scanned pages read by OCR.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ingest.errors import IngestError
from ingest.models import ParsedDocument
from ingest.parse.builder import Builder, join_lines
from ingest.parse.limits import MAX_PDF_PAGES
from ingest.parse.progress import report

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- PDF


def parse_pdf(data: bytes, source: str) -> ParsedDocument:
    from ingest.parse import pdf_text

    with pdf_text.PDFIUM_LOCK:  # a parse in this process never overlaps a page render
        return _parse_pdf_locked(data, source)


def _parse_pdf_locked(data: bytes, source: str) -> ParsedDocument:
    import pypdfium2

    from ingest.parse import pdf_text

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
        builder = Builder()
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
            builder.text(paragraph, page=page.number, columns=True)  # a scanned table's rows
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
    from ingest.parse.ocr import ocr_available

    return ocr_available()


# Scanned pages read per file: a dense page takes ~5 s on 2 cores, so 200 fit the OCR deadline
# (HOPWISE_OCR_TIMEOUT_S, 1200 s); the pages after them are named in the document's warnings.
MAX_OCR_PAGES = 200


def _ocr_pages(pdf: Any, scans: list[Any], builder: Builder) -> dict[int, list[str]]:
    """Paragraphs read by OCR from each scanned page, by page number ({} without OCR); what
    could not be read is said in the document's warnings."""
    from ingest.parse import ocr, pdf_text

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
        return float(statistics.median(steps))
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
    builder: Builder, page: Any, lines: list[Any], marks: list[list[str]], known: Counter[str]
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
