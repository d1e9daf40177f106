"""PDF pages as positioned lines, read with PDFium (pypdf2ium2), minus the text nobody sees.

Why PDFium: measured against pypdf and pdfminer.six on real PDFs (docs/documents.md, "Parsing
real documents"), it matches poppler's pdftotext word for word most closely, puts spaces between
words that TeX positions without a space character, and is an order of magnitude faster than
pypdf.

`read_page` returns a page's lines top to bottom in PDFium's reading order, each with its
vertical position and its cells (runs of text separated by a gap much wider than a word
space), so the parser can find running headers and footers and table rows. Text that a
viewer does not show is dropped with the same rules as every other format (ingest/hidden):
render mode 3/7 (unless over an image: an OCR layer), the background colour or transparent,
glyphs under MIN_TEXT_PT, outside the crop box or the clip path.
"""

from __future__ import annotations

import ctypes
import math
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ingest.hidden import (
    FAINT_TEXT,
    HIDDEN_MARKUP,
    MIN_TEXT_PT,
    OFF_PAGE,
    TINY_TEXT,
    Tally,
    faint,
    visible_len,
)
from ingest.hidden.pdf import IMAGE, Box, Canvas, contains, intersect

CELL_GAP_EM = 1.2  # a horizontal gap wider than this many line heights separates two cells
_TEXT, _PATH, _IMAGE, _SHADING, _FORM = 1, 2, 3, 4, 5
_INVISIBLE_MODES = (3, 7)
_FILL_MODES = (0, 2, 4, 6)  # render modes that paint with the fill colour
_STROKE_MODES = (1, 2, 5, 6)  # ... and with the stroke colour
_LEADER = re.compile(r"(?:\s?[.·]){4,}\s*")  # a contents line's dot leaders
_MARKER = re.compile(r"[^\w\s]{1,2}|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)]")


@dataclass
class Line:
    """One visual line: its cells left to right, and where it sits (PDF points, y up)."""

    cells: list[str]
    top: float
    bottom: float
    left: float = 0.0
    right: float = 0.0
    spans: list[tuple[float, float]] = field(default_factory=list)  # each cell's (left, right)

    @property
    def text(self) -> str:
        return " ".join(self.cells)

    @property
    def height(self) -> float:
        return max(0.0, self.top - self.bottom)


@dataclass
class PageText:
    number: int
    width: float
    height: float
    view: Box = (0.0, 0.0, 0.0, 0.0)  # the visible box (crop within media), PDF points
    lines: list[Line] = field(default_factory=list)
    images: float = 0.0  # fraction of the page covered by images (a scan, if no text)
    notes: list[str] = field(default_factory=list)  # filled-in form fields and comments


# PDFium is not thread-safe, "not even with different documents" (pypdfium2's docs): every
# call into it in one process (parsing in-process, the app's page viewer) holds this lock.
PDFIUM_LOCK = threading.RLock()


def open_pdf(data: bytes) -> Any:
    """A PdfDocument; raises pypdfium2's PdfiumError (code in `err_code`) when it cannot."""
    import pypdfium2

    return pypdfium2.PdfDocument(data)


def _floats(n: int) -> list[ctypes.c_float]:
    return [ctypes.c_float() for _ in range(n)]


def _bounds(raw: Any, obj: Any) -> Box | None:
    left, bottom, right, top = _floats(4)
    if not raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
        return None
    return left.value, bottom.value, right.value, top.value


def _clip(raw: Any, obj: Any) -> Box | None:
    """The bounding box of an object's clip path (None: not clipped)."""
    clip = raw.FPDFPageObj_GetClipPath(obj)
    if not clip:
        return None
    xs: list[float] = []
    ys: list[float] = []
    x, y = _floats(2)
    for path in range(raw.FPDFClipPath_CountPaths(clip)):
        for index in range(raw.FPDFClipPath_CountPathSegments(clip, path)):
            segment = raw.FPDFClipPath_GetPathSegment(clip, path, index)
            if segment and raw.FPDFPathSegment_GetPoint(segment, x, y):
                xs.append(x.value)
                ys.append(y.value)
    if not xs:
        return None
    return min(xs), min(ys), max(xs), max(ys)


def _fill(raw: Any, obj: Any) -> tuple[float, float, float, float] | None:
    return _color(raw.FPDFPageObj_GetFillColor, obj)


def _stroke(raw: Any, obj: Any) -> tuple[float, float, float, float] | None:
    return _color(raw.FPDFPageObj_GetStrokeColor, obj)


def _color(getter: Any, obj: Any) -> tuple[float, float, float, float] | None:
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    if not getter(obj, r, g, b, a):
        return None
    return r.value / 255, g.value / 255, b.value / 255, a.value / 255


def _objects(raw: Any, page: Any) -> Iterator[Any]:
    """Every page object in paint order, form XObjects entered (PDFium gives their children
    page coordinates and the form's bounding box as their clip)."""

    def walk(count: int, get: Any) -> Iterator[Any]:
        for index in range(count):
            obj = get(index)
            if not obj:
                continue
            if raw.FPDFPageObj_GetType(obj) == _FORM:
                yield from walk(
                    raw.FPDFFormObj_CountObjects(obj),
                    lambda i, form=obj: raw.FPDFFormObj_GetObject(form, i),
                )
            else:
                yield obj

    yield from walk(raw.FPDFPage_CountObjects(page), lambda i: raw.FPDFPage_GetObject(page, i))


def _address(obj: Any) -> int:
    return ctypes.cast(obj, ctypes.c_void_p).value or 0


def _hidden_objects(raw: Any, page: Any, view: Box) -> tuple[dict[int, str], float]:
    """Why each invisible text object is hidden (by object address), and the fraction of
    the page covered by images."""
    canvas = Canvas(view)
    hidden: dict[int, str] = {}
    # An invisible text layer is an OCR layer when it lies on an image, whichever is drawn
    # first, so the image boxes are collected before the text is judged.
    pictures = [
        box
        for obj in _objects(raw, page)
        if raw.FPDFPageObj_GetType(obj) == _IMAGE
        and (box := _visible_bounds(raw, obj)) is not None
        and min(box[2] - box[0], box[3] - box[1]) >= MIN_TEXT_PT  # a sliver is no scan
    ]
    area = max(1.0, (view[2] - view[0]) * (view[3] - view[1]))
    images = 0.0
    for obj in _objects(raw, page):
        kind = raw.FPDFPageObj_GetType(obj)
        box = _visible_bounds(raw, obj)
        if box is None:
            continue
        if kind == _TEXT:
            if why := _why_hidden(raw, obj, box, view, canvas, pictures):
                hidden[_address(obj)] = why
        elif kind == _PATH:
            mode, stroke = ctypes.c_int(), ctypes.c_int()
            raw.FPDFPath_GetDrawMode(obj, mode, stroke)
            color = _fill(raw, obj)
            if mode.value and color is not None and color[3] >= 0.99 and box[2] > box[0]:
                canvas.paint(box, color[:3])
        elif kind in (_IMAGE, _SHADING) and box[2] > box[0] and box[3] > box[1]:
            canvas.paint(box, IMAGE)
            if kind == _IMAGE:
                shown = intersect(box, view)
                images += max(0.0, shown[2] - shown[0]) * max(0.0, shown[3] - shown[1]) / area
    return hidden, min(1.0, images)


def _visible_bounds(raw: Any, obj: Any) -> Box | None:
    box = _bounds(raw, obj)
    clip = _clip(raw, obj) if box is not None else None
    return intersect(box, clip) if box is not None and clip is not None else box


def _why_hidden(
    raw: Any, obj: Any, box: Box, view: Box, canvas: Canvas, pictures: list[Box]
) -> str | None:
    height = box[3] - box[1]
    if min(_glyph_size(raw, obj)) < MIN_TEXT_PT:
        return TINY_TEXT
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if height < 0 or box[2] < box[0] or not contains(view, x, y):
        return OFF_PAGE  # nothing of it inside the clip path, or outside the crop box
    mode = raw.FPDFTextObj_GetTextRenderMode(obj)
    if mode in _INVISIBLE_MODES:
        return None if any(contains(p, x, y) for p in pictures) else HIDDEN_MARKUP
    under = canvas.under(box[0] + 0.3 * height, box[1] + 0.3 * height)
    inks = []
    if mode in _FILL_MODES:
        inks.append(_fill(raw, obj))
    if mode in _STROKE_MODES:
        inks.append(_stroke(raw, obj))
    if inks and all(ink is not None and faint(ink, under) for ink in inks):
        return FAINT_TEXT
    return None


def _glyph_size(raw: Any, obj: Any) -> tuple[float, float]:
    """(height, width) of an em as a text object draws it on the page: its font size times
    the vertical and horizontal scale of its matrix (not its ink, which is tiny for "." or
    "_"; a squashed or flattened text is tiny in one of them)."""
    size = ctypes.c_float()
    matrix = raw.FS_MATRIX()
    if not raw.FPDFTextObj_GetFontSize(obj, size) or not raw.FPDFPageObj_GetMatrix(obj, matrix):
        return MIN_TEXT_PT, MIN_TEXT_PT  # unknown: never drop text for it
    em = abs(size.value)
    return em * math.hypot(matrix.c, matrix.d), em * math.hypot(matrix.a, matrix.b)


def page_view(page: Any) -> Box:
    """The crop box within the media box (inherited ones included): what a viewer shows."""
    import pypdfium2.raw as raw

    rect = raw.FS_RECTF()
    if not raw.FPDF_GetPageBoundingBox(page.raw, rect):
        return (-1e6, -1e6, 1e6, 1e6)  # a damaged box: never drop text for it
    return (
        min(rect.left, rect.right),
        min(rect.bottom, rect.top),
        max(rect.left, rect.right),
        max(rect.bottom, rect.top),
    )


def read_page(pdf: Any, index: int, tally: Tally) -> PageText:
    """Page `index` (0-based) as lines; hidden text is counted in `tally` and left out."""
    import pypdfium2.raw as raw

    page = pdf[index]
    try:
        view = page_view(page)
        width, height = page.get_size()
        result = PageText(number=index + 1, width=width, height=height, view=view)
        hidden, result.images = _hidden_objects(raw, page.raw, view)
        textpage = page.get_textpage()
        try:
            result.lines = _lines(raw, textpage, hidden, tally)
        finally:
            textpage.close()
        result.notes = _annotations(raw, pdf, page, tally)
    finally:
        page.close()
    return result


OCR_DPI = 150  # scans are read at this resolution (the OCR target is measured there)
OCR_MIN_IMAGE_SHARE = 0.02  # a page without text whose images cover this much is a scan
# A page mostly covered by a picture with only a stamp or a page number as text is a scan too.
OCR_SCAN_SHARE = 0.5
OCR_SPARSE_CHARS = 200
MAX_RENDER_PIXELS = 12_000_000  # a poster-size page is rendered below OCR_DPI, not refused


def needs_ocr(page: PageText) -> bool:
    """A scanned page: no text layer but pictures, or a page-size picture with next to no
    text on it (a Bates stamp, a page number). A blank page has neither."""
    if not page.lines and not page.notes:
        return page.images >= OCR_MIN_IMAGE_SHARE
    chars = sum(len(line.text) for line in page.lines)
    return page.images >= OCR_SCAN_SHARE and chars < OCR_SPARSE_CHARS


def render(pdf: Any, index: int, dpi: int = OCR_DPI) -> Any:
    """Page `index` as an RGB numpy array at `dpi` (less for a page too big for
    MAX_RENDER_PIXELS)."""
    page = pdf[index]
    try:
        width, height = page.get_size()
        scale = min(dpi / 72, math.sqrt(MAX_RENDER_PIXELS / max(1.0, width * height)))
        bitmap = page.render(scale=scale, rev_byteorder=True)  # RGB, not PDFium's BGR
        try:
            return bitmap.to_numpy().copy()
        finally:
            bitmap.close()
    finally:
        page.close()


def _utf16(call: Any) -> str:
    """A PDFium string getter `call(buffer, size) -> bytes needed` as text."""
    size = call(None, 0)
    if size <= 2:
        return ""
    buffer = (ctypes.c_ushort * (size // 2))()
    call(buffer, size)
    return bytes(buffer).decode("utf-16-le", "replace").rstrip("\x00").strip()


_FIELD_TYPES = (6, 4, 5)  # FPDF_FORMFIELD_TEXTFIELD, COMBOBOX, LISTBOX: fields holding text
_CHECKABLE = (2, 3)  # CHECKBOX, RADIOBUTTON
# Comments a viewer shows as such: Text (a note), FreeText, and the markup of Highlight,
# Underline, Squiggly and StrikeOut. A link's or a stamp's /Contents is no reader's text.
_COMMENT_ANNOTS = (1, 3, 9, 10, 11, 12)
_WIDGET = 20
_HIDDEN_FLAGS = 1 | 2 | 32  # FPDF_ANNOT_FLAG_INVISIBLE, HIDDEN, NOVIEW
MIN_ANNOT_PT = 4.0  # an annotation smaller than this in width or height cannot be seen


def _annotations(raw: Any, pdf: Any, page: Any, tally: Tally) -> list[str]:
    """Form fields that hold a value ("Name: value") and comments ("Comment: text") on a
    page, in the page's annotation order; hidden ones are counted, not kept."""
    form = getattr(getattr(pdf, "formenv", None), "raw", None)
    view = page_view(page)
    notes: list[str] = []
    for index in range(raw.FPDFPage_GetAnnotCount(page.raw)):
        annot = raw.FPDFPage_GetAnnot(page.raw, index)
        if not annot:
            continue
        try:
            kind = raw.FPDFAnnot_GetSubtype(annot)
            if kind not in _COMMENT_ANNOTS and kind != _WIDGET:
                continue
            if kind == _WIDGET:
                note = _field(raw, form, annot) if form else ""
            else:
                note = _utf16(
                    lambda b, n, a=annot: raw.FPDFAnnot_GetStringValue(a, b"Contents", b, n)
                )
                note = f"Comment: {note}" if note else ""
            if not note:
                continue
            if raw.FPDFAnnot_GetFlags(annot) & _HIDDEN_FLAGS:
                tally[HIDDEN_MARKUP] += visible_len(note)
                continue
            if not _annot_on_page(raw, annot, view):
                tally[OFF_PAGE] += visible_len(note)
                continue
            notes.append(note)
        finally:
            raw.FPDFPage_CloseAnnot(annot)
    return notes


def _annot_on_page(raw: Any, annot: Any, view: Box) -> bool:
    rect = raw.FS_RECTF()
    if not raw.FPDFAnnot_GetRect(annot, rect):
        return False
    box = intersect(
        (min(rect.left, rect.right), min(rect.bottom, rect.top),
         max(rect.left, rect.right), max(rect.bottom, rect.top)),
        view,
    )  # fmt: skip
    return min(box[2] - box[0], box[3] - box[1]) >= MIN_ANNOT_PT


def _field(raw: Any, form: Any, annot: Any) -> str:
    kind = raw.FPDFAnnot_GetFormFieldType(form, annot)
    name = _utf16(lambda b, n: raw.FPDFAnnot_GetFormFieldName(form, annot, b, n))
    label = name.rsplit(".", 1)[-1] or "Field"
    if kind in _FIELD_TYPES:
        value = _utf16(lambda b, n: raw.FPDFAnnot_GetFormFieldValue(form, annot, b, n))
        return f"{label}: {value}" if value else ""
    if kind in _CHECKABLE and raw.FPDFAnnot_IsChecked(form, annot):
        return f"{label}: yes"
    return ""


def _lines(raw: Any, textpage: Any, hidden: dict[int, str], tally: Tally) -> list[Line]:
    tp = textpage.raw
    count = raw.FPDFText_CountChars(tp)
    if count <= 0:
        return []
    text = textpage.get_text_range(0, count)
    if len(text) != count:  # characters outside the BMP: read them one by one
        text = "".join(chr(raw.FPDFText_GetUnicode(tp, i) or 32) for i in range(count))
    keep = None
    if hidden:
        keep = [True] * count
        dropped: dict[str, list[str]] = {}
        for i in range(count):
            why = hidden.get(_address(raw.FPDFText_GetTextObject(tp, i)))
            if why is not None:
                keep[i] = False
                dropped.setdefault(why, []).append(text[i])
        for why, chars in dropped.items():
            tally[why] += visible_len("".join(chars))
    rect = raw.FS_RECTF()

    def loose(i: int) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of the character's font box (the same height for every
        glyph of a font)."""
        raw.FPDFText_GetLooseCharBox(tp, i, rect)
        return rect.left, max(rect.top, rect.bottom), rect.right, min(rect.top, rect.bottom)

    cuts = _cell_starts(raw, tp)
    lines: list[Line] = []
    start = 0
    for end in [*(i for i, ch in enumerate(text) if ch == "\n"), count]:
        line = _line(text, start, end, keep, cuts, loose)
        if line is not None:
            if lines and _same_row(lines[-1], line):
                _join_row(lines[-1], line)
            else:
                lines.append(line)
        start = end + 1
    return lines


def _same_row(a: Line, b: Line) -> bool:
    """PDFium starts a new line before text far to the right on the same baseline (a table's
    last column); such a piece belongs to the row it sits on."""
    overlap = min(a.top, b.top) - max(a.bottom, b.bottom)
    return overlap > 0.5 * min(a.height, b.height) and b.left > a.right


def _join_row(a: Line, b: Line) -> None:
    spans = len(a.spans) == len(a.cells) and len(b.spans) == len(b.cells)
    if b.left - a.right > CELL_GAP_EM * max(a.height, b.height, 1.0):
        a.cells += b.cells
        a.spans = a.spans + b.spans if spans else []
    else:
        a.cells[-1] = f"{a.cells[-1]} {b.cells[0]}"
        a.cells += b.cells[1:]
        a.spans = [*a.spans[:-1], (a.spans[-1][0], b.spans[0][1]), *b.spans[1:]] if spans else []
    a.right = b.right
    a.top, a.bottom = max(a.top, b.top), min(a.bottom, b.bottom)


def _cell_starts(raw: Any, tp: Any) -> set[int]:
    """Indexes of the characters that start a cell: the first character of a text run
    (PDFium's text rectangles) that begins more than CELL_GAP_EM line heights to the right
    of the previous run on the same line. Rectangles cost two calls each where measuring
    every word gap would cost two per space."""
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    starts: set[int] = set()
    previous: tuple[float, float, float, float] | None = None
    for index in range(raw.FPDFText_CountRects(tp, 0, -1)):
        if not raw.FPDFText_GetRect(tp, index, left, top, right, bottom):
            continue
        box = (left.value, max(top.value, bottom.value), right.value, min(top.value, bottom.value))
        if previous is not None:
            height = max(previous[1] - previous[3], box[1] - box[3], 1.0)
            same_line = min(previous[1], box[1]) - max(previous[3], box[3]) > 0.3 * height
            if same_line and box[0] - previous[2] > CELL_GAP_EM * height:
                middle = (box[1] + box[3]) / 2
                char = raw.FPDFText_GetCharIndexAtPos(tp, box[0] + 0.5, middle, 2.0, height)
                if char >= 0:
                    starts.add(char)
        previous = box
    return starts


def _line(
    text: str, start: int, end: int, keep: list[bool] | None, cuts: set[int], loose: Any
) -> Line | None:
    """Characters [start, end) as one Line, cut into cells where a wide gap precedes one."""
    chars = [
        i for i in range(start, end) if text[i] not in "\r\n\x00" and (keep is None or keep[i])
    ]
    solid = [i for i in chars if not text[i].isspace()]
    if not solid:
        return None
    left, top, _, first_bottom = loose(solid[0])
    _, last_top, right, bottom = loose(solid[-1])  # PDFium may have joined a wrapped line
    pieces: list[list[int]] = [[]]
    for i in chars:
        if i in cuts and pieces[-1]:
            pieces.append([])
        pieces[-1].append(i)
    cells: list[str] = []
    spans: list[tuple[float, float]] = []
    for piece in pieces:
        cell = _LEADER.sub(" … ", "".join(text[i] for i in piece)).strip()
        inked = [i for i in piece if not text[i].isspace()]
        if cell and inked:
            cells.append(cell)
            spans.append((loose(inked[0])[0], loose(inked[-1])[2]))
    # a list marker ("•", "1.", "a)") set off by a tab stop belongs to its item (not the
    # first cell of a table row: "1. | Bolt | 12")
    if len(cells) == 2 and _MARKER.fullmatch(cells[0]):
        cells, spans = [f"{cells[0]} {cells[1]}"], [(spans[0][0], spans[1][1])]
    return Line(
        cells=cells,
        top=max(top, last_top),
        bottom=min(bottom, first_bottom),
        left=min(left, right),
        right=max(left, right),
        spans=spans,
    )
