"""A PDF page as a PNG, rendered on the server with PDFium, the cited passage highlighted.

An image on purpose: the uploaded PDF is untrusted, and as pixels it can run nothing in the
browser (no pdf.js, no scripts, no fonts or links fetched from anywhere). The passage is found
among the page's text characters by its words (ui.documents.find_passage), its characters'
boxes merged into one rectangle per line and drawn as semi-transparent yellow. Pure functions,
no Streamlit: the viewer runs them in the killable worker (ingest.parse.call_in_worker), so a
PDF that makes PDFium spin costs one page view, and caches the PNG.
"""

from __future__ import annotations

import ctypes
import functools
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ingest.parse import worker_task
from ingest.parse.pdf_text import PDFIUM_LOCK
from ui.documents import Found, Token, find_in_tokens, tokens

MAX_WIDTH_PX = 1400  # the widest rendering (a phone shows it scaled down)
MAX_PIXELS = 4_000_000  # a poster-size page is rendered smaller, never refused
MAX_SCALE = 3.0
MIN_COVERAGE = 0.35  # below this share of the passage's words nothing is highlighted
MIN_WORDS = 3  # ... and at least this many of them (all of a shorter passage)
SCAN_PAGES = 40  # pages searched around the cited one when the passage is not on it
HIGHLIGHT = (255, 221, 0, 110)  # RGBA: yellow, the text under it stays readable

T = TypeVar("T")
Box = tuple[float, float, float, float]  # left, top, right, bottom in image pixels


def _pdfium(function: Callable[..., T]) -> Callable[..., T]:
    """Hold ingest.parse.pdf_text.PDFIUM_LOCK for the whole call: Streamlit runs every session's
    script on its own thread, and PDFium crashes the process when two threads use it."""

    @functools.wraps(function)
    def locked(*args: Any, **kwargs: Any) -> T:
        with PDFIUM_LOCK:
            return function(*args, **kwargs)

    return locked


@dataclass
class RenderedPage:
    """One page as PNG bytes, its number (1-based) of how many, and the highlight drawn."""

    png: bytes
    page: int
    pages: int
    width: int
    height: int
    boxes: list[Box] = field(default_factory=list)
    coverage: float = 0.0


@dataclass
class _PageText:
    text: str
    words: list[Token]


@worker_task()
@_pdfium
def page_count(data: bytes) -> int:
    pdf = _open(data)
    try:
        return len(pdf)
    finally:
        pdf.close()


@worker_task()
@_pdfium
def cited_page(data: bytes, passage: str, hint: int | None) -> int:
    """The 1-based page that holds the passage: the cited one when it is there, else the
    nearest page (within SCAN_PAGES) where most of it is; the hint (or 1) when none is."""
    pdf = _open(data)
    try:
        pages = len(pdf)
        start = min(max(hint or 1, 1), max(pages, 1))
        needle = tokens(passage)
        if not needle or not pages:
            return start
        order = sorted(range(1, pages + 1), key=lambda p: (abs(p - start), p))[:SCAN_PAGES]
        best, best_share = start, 0.0
        for number in order:
            found = _find(_page_text(pdf, number - 1), needle)
            share = found.coverage if found is not None else 0.0
            if number == start and share >= 0.8:
                return start
            if share > best_share + 1e-9:
                best, best_share = number, share
        return best if best_share >= MIN_COVERAGE else start
    finally:
        pdf.close()


@worker_task(RenderedPage)
@_pdfium
def render_page(data: bytes, page: int, passage: str = "") -> RenderedPage:
    """Page `page` (1-based, clamped to the document) as a PNG, with the passage highlighted
    where at least MIN_COVERAGE of its words are found on it."""
    from PIL import Image, ImageDraw

    pdf = _open(data)
    try:
        pages = len(pdf)
        number = min(max(page, 1), pages)
        handle = pdf[number - 1]
        try:
            width_pt, height_pt = handle.get_size()
            scale = min(
                MAX_WIDTH_PX / max(width_pt, 1.0),
                math.sqrt(MAX_PIXELS / max(width_pt * height_pt, 1.0)) * 0.995,  # rounding
                MAX_SCALE,
            )
            bitmap = handle.render(scale=scale, may_draw_forms=False)
            try:
                image = bitmap.to_pil().convert("RGBA")
            finally:
                bitmap.close()
            boxes: list[Box] = []
            coverage = 0.0
            needle = tokens(passage)
            if needle:
                textpage = handle.get_textpage()
                try:
                    found = _find(_text_of(textpage), needle)
                    if found is not None and _enough(found, len(needle)):
                        coverage = found.coverage
                        boxes = _line_boxes(handle, textpage, found, image.size)
                finally:
                    textpage.close()
        finally:
            handle.close()
    finally:
        pdf.close()
    if boxes:
        layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        for left, top, right, bottom in boxes:
            draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=HIGHLIGHT)
        image = Image.alpha_composite(image, layer)
    out = io.BytesIO()
    image.convert("RGB").save(
        out, format="PNG"
    )  # default compression: optimize=True costs seconds on a 4 MP page
    return RenderedPage(out.getvalue(), number, pages, image.width, image.height, boxes, coverage)


def scan_png(data: bytes, max_side: int = 2000) -> bytes:
    """An uploaded scan (PNG/JPEG) re-encoded by Pillow, at most `max_side` pixels a side:
    the browser gets pixels we wrote, not the uploaded file."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail((max_side, max_side))
        out = io.BytesIO()
        image.convert("RGB").save(out, format="PNG")
    return out.getvalue()


def _open(data: bytes) -> Any:
    import pypdfium2

    return pypdfium2.PdfDocument(data)


def _enough(found: Found, needle_words: int) -> bool:
    matched = round(found.coverage * needle_words)
    return found.coverage >= MIN_COVERAGE and matched >= min(MIN_WORDS, needle_words)


def _find(page: _PageText, needle: list[Token]) -> Found | None:
    return find_in_tokens(page.words, needle)


def _page_text(pdf: Any, index: int) -> _PageText:
    handle = pdf[index]
    try:
        textpage = handle.get_textpage()
        try:
            return _text_of(textpage)
        finally:
            textpage.close()
    finally:
        handle.close()


def _text_of(textpage: Any) -> _PageText:
    """The page's characters, one string position per PDFium character index (a character
    PDFium cannot name is a space), so match offsets are character indexes."""
    import pypdfium2.raw as raw

    chars = []
    for index in range(textpage.count_chars()):
        code = raw.FPDFText_GetUnicode(textpage.raw, index)
        chars.append(chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else " ")
    text = "".join(chars)
    return _PageText(text, tokens(text))


def _line_boxes(page: Any, textpage: Any, found: Found, size: tuple[int, int]) -> list[Box]:
    """The found characters' boxes in image pixels, merged into one rectangle per line."""
    lines: list[list[float]] = []
    for index in range(found.start, found.end):
        left, bottom, right, top = textpage.get_charbox(index)
        if right - left <= 0 or top - bottom <= 0:
            continue  # a space or a generated line break has no box
        x0, y0 = _to_pixels(page, size, left, top)
        x1, y1 = _to_pixels(page, size, right, bottom)
        box = [min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)]
        if lines and _same_line(lines[-1], box):
            last = lines[-1]
            lines[-1] = [
                min(last[0], box[0]),
                min(last[1], box[1]),
                max(last[2], box[2]),
                max(last[3], box[3]),
            ]
        else:
            lines.append(box)
    return [(a, b, c, d) for a, b, c, d in lines]


def _same_line(line: list[float], box: list[float]) -> bool:
    """The box continues the line: they overlap vertically by half the smaller height and the
    box does not jump back to the left (a new line of a paragraph)."""
    overlap = min(line[3], box[3]) - max(line[1], box[1])
    height = min(line[3] - line[1], box[3] - box[1])
    return overlap >= 0.5 * height and box[0] >= line[0] - 1


def _to_pixels(page: Any, size: tuple[int, int], x: float, y: float) -> tuple[float, float]:
    """A point in PDF page space as image pixels (PDFium's own mapping: crop box, rotation)."""
    import pypdfium2.raw as raw

    px, py = ctypes.c_int(), ctypes.c_int()
    raw.FPDF_PageToDevice(page.raw, 0, 0, size[0], size[1], 0, x, y, px, py)
    return float(px.value), float(py.value)
