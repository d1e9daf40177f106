"""What a PDF page actually paints, so text extraction can skip the text nobody sees.

pypdf's `extract_text` calls a visitor before every content-stream operator. `PageInk`
follows the graphics state there (colours, alpha, render mode, font size, matrices, clip,
form XObjects) and what has been painted where, and blanks a text-showing operator's string
before pypdf reads it when the text would be invisible: render mode 3 or 7 (unless it lies
on an image: an OCR layer), a colour that cannot be told from what is under it (white on
the white page, dark blue on a dark blue box, or transparent), glyphs under MIN_TEXT_PT, or
an origin outside the page's crop box and the clip path. pypdf then lays out the rest as
before, so line breaks and spacing are unchanged.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field, replace
from typing import Any

from ingest.hidden import (
    BLACK,
    FAINT_TEXT,
    HIDDEN_MARKUP,
    MIN_TEXT_PT,
    OFF_PAGE,
    RGB,
    RGBA,
    TINY_TEXT,
    WHITE,
    Tally,
    faint,
    visible_len,
)

Matrix = list[float]  # [a b c d e f], row-vector convention as in the PDF spec
Box = tuple[float, float, float, float]  # x0, y0, x1, y1
IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
LARGEST_PAGE: Box = (0.0, 0.0, 14400.0, 14400.0)  # 200 inches, the PDF 1.7 limit
IMAGE = None  # what `Canvas.under` returns where an image (or unknown paint) is on top
_SPACES = {
    "/DeviceGray": 1, "/G": 1, "/CalGray": 1, "/DeviceRGB": 3, "/RGB": 3, "/CalRGB": 3,
    "/DeviceCMYK": 4, "/CMYK": 4,
}  # fmt: skip
_FILLS = {b"f", b"F", b"f*", b"B", b"B*", b"b", b"b*"}
_PATH_ENDS = _FILLS | {b"S", b"s", b"n"}
_SHOWS = {b"Tj", b"TJ", b"'", b'"'}
_INVISIBLE_MODES = (3, 7)


def mul(m: Matrix, n: Matrix) -> Matrix:
    """m then n."""
    return [
        m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2], m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5],
    ]  # fmt: skip


def apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    return x * m[0] + y * m[2] + m[4], x * m[1] + y * m[3] + m[5]


def bounds(points: list[tuple[float, float]]) -> Box:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def intersect(a: Box, b: Box) -> Box:
    return max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])


def contains(box: Box, x: float, y: float, margin: float = 0.0) -> bool:
    return box[0] - margin <= x <= box[2] + margin and box[1] - margin <= y <= box[3] + margin


def _numbers(operands: list[Any]) -> list[float] | None:
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in operands):
        return None
    return [float(v) for v in operands]


def _rgb(components: list[float]) -> RGB | None:
    """Gray, RGB or CMYK components as sRGB (naive CMYK conversion)."""
    c = [min(1.0, max(0.0, v)) for v in components]
    if len(c) == 1:
        return c[0], c[0], c[0]
    if len(c) == 3:
        return c[0], c[1], c[2]
    if len(c) == 4:
        k = 1 - c[3]
        return (1 - c[0]) * k, (1 - c[1]) * k, (1 - c[2]) * k
    return None


class Canvas:
    """What is on top where, on a coarse grid: opaque colours and images, in paint order."""

    def __init__(self, page: Box) -> None:
        self.page = page
        self.cell = max(64.0, (page[2] - page[0]) / 32, (page[3] - page[1]) / 32)
        self.cells: dict[tuple[int, int], list[tuple[Box, RGB | None]]] = {}

    def _range(self, lo: float, hi: float, origin: float) -> range:
        return range(int((lo - origin) // self.cell), int((hi - origin) // self.cell) + 1)

    def paint(self, box: Box, color: RGB | None) -> None:
        box = intersect(box, self.page)
        if box[2] - box[0] < MIN_TEXT_PT or box[3] - box[1] < MIN_TEXT_PT:
            return  # a rule or a dot: no text sits on it
        for i in self._range(box[0], box[2], self.page[0]):
            for j in self._range(box[1], box[3], self.page[1]):
                x0, y0 = self.page[0] + i * self.cell, self.page[1] + j * self.cell
                cell = (x0, y0, x0 + self.cell, y0 + self.cell)
                covered = intersect(box, cell) == cell
                layers = self.cells.setdefault((i, j), [])
                if covered:
                    layers.clear()  # an opaque paint over the whole cell hides all below
                layers.append((box, color))

    def under(self, x: float, y: float) -> RGB | None:
        """The colour on top at (x, y): the page's white, a painted colour, or IMAGE."""
        key = (int((x - self.page[0]) // self.cell), int((y - self.page[1]) // self.cell))
        for box, color in reversed(self.cells.get(key, [])):
            if contains(box, x, y):
                return color
        return WHITE


@dataclass
class _State:
    """The part of the PDF graphics state that decides whether text is seen."""

    clip: Box
    resources: Any
    outer: Matrix = field(default_factory=lambda: list(IDENTITY))  # form space -> page
    fill: RGBA | None = BLACK  # None: a pattern or a colour space we do not model
    stroke: RGBA | None = BLACK
    fill_n: int = 1  # components of the fill colour space (0: not modelled)
    stroke_n: int = 1
    fill_alpha: float = 1.0
    stroke_alpha: float = 1.0
    render: int = 0
    font_size: float = 12.0
    two_byte: bool = False  # the current font codes each glyph in two bytes (Type0)
    h_scale: float = 1.0


class PageInk:
    """The visitor pair for `PageObject.extract_text`; hidden text goes to `tally`."""

    def __init__(self, page: Any, tally: Tally) -> None:
        self.tally = tally
        box = _visible_box(page)
        self.canvas = Canvas(box)
        self.state = _State(clip=box, resources=_resolve(page.get("/Resources")))
        self.saved: list[_State] = []
        self.forms: list[tuple[_State, int]] = []
        self.path: list[tuple[float, float]] = []
        self.clip_pending = False

    # ---- visitor entry points ---------------------------------------------------------

    def before(self, op: bytes, operands: list[Any], cm: Matrix, tm: Matrix) -> None:
        # a malformed operator: pypdf decides what to make of it, and the text is kept
        with contextlib.suppress(
            ArithmeticError, LookupError, TypeError, ValueError, AttributeError
        ):
            self._before(op, operands, cm, tm)

    def after(self, op: bytes, operands: list[Any], cm: Matrix, tm: Matrix) -> None:
        if op == b"Do" and self.forms:
            self.state, depth = self.forms.pop()
            del self.saved[depth:]

    # ---- state ------------------------------------------------------------------------

    def _before(self, op: bytes, operands: list[Any], cm: Matrix, tm: Matrix) -> None:
        st = self.state
        if op in _SHOWS:
            self._show(op, operands, mul(mul(tm, cm), st.outer))
        elif op == b"q":
            self.saved.append(replace(st))
        elif op == b"Q":
            if len(self.saved) > (self.forms[-1][1] if self.forms else 0):
                self.state = self.saved.pop()
        elif op in (b"g", b"rg", b"k", b"G", b"RG", b"K"):
            self._color(op.islower(), len(operands), operands)
        elif op in (b"cs", b"CS") and operands:
            n = self._space(operands[0])  # a new colour space starts at black
            if op == b"cs":
                st.fill_n, st.fill = n, BLACK if n else None
            else:
                st.stroke_n, st.stroke = n, BLACK if n else None
        elif op in (b"sc", b"scn", b"SC", b"SCN"):
            fill = op.islower()
            self._color(fill, st.fill_n if fill else st.stroke_n, operands)
        elif op == b"Tr" and operands:
            st.render = int(operands[0])
        elif op == b"Tf" and len(operands) >= 2:
            st.font_size = float(operands[1])
            st.two_byte = self._font_subtype(operands[0]) == "/Type0"
        elif op == b"Tz" and operands:
            st.h_scale = float(operands[0]) / 100
        elif op == b"gs" and operands:
            state = _resolve(_lookup(st.resources, "/ExtGState", operands[0])) or {}
            st.fill_alpha = float(state.get("/ca", st.fill_alpha))
            st.stroke_alpha = float(state.get("/CA", st.stroke_alpha))
        elif op == b"Do":  # `after` restores the state the form XObject ran in
            self.forms.append((replace(st), len(self.saved)))
            if operands:
                self._do(operands[0], cm)
        elif op == b"INLINE IMAGE":
            self.canvas.paint(self._device_box([(0, 0), (1, 0), (0, 1), (1, 1)], cm), IMAGE)
        elif op == b"sh":
            self.canvas.paint(st.clip, IMAGE)
        else:
            self._path(op, operands, cm)

    def _color(self, fill: bool, n: int, operands: list[Any]) -> None:
        values = _numbers(operands)
        rgb = _rgb(values) if values is not None and len(values) == n else None
        color: RGBA | None = (*rgb, 1.0) if rgb else None
        if fill:
            self.state.fill, self.state.fill_n = color, n
        else:
            self.state.stroke, self.state.stroke_n = color, n

    def _space(self, name: Any) -> int:
        """Components of a colour space we can turn into sRGB; 0 for the others."""
        if str(name) in _SPACES:
            return _SPACES[str(name)]
        space = _resolve(_lookup(self.state.resources, "/ColorSpace", name))
        if isinstance(space, list) and space:
            family = str(space[0])
            if family == "/ICCBased" and len(space) > 1:
                n = int(_resolve(space[1]).get("/N", 0))
                return n if n in (1, 3, 4) else 0
            return _SPACES.get(family, 0)
        return _SPACES.get(str(space), 0)

    def _font_subtype(self, name: Any) -> str:
        font = _resolve(_lookup(self.state.resources, "/Font", name)) or {}
        return str(font.get("/Subtype", ""))

    def _device_box(self, points: list[tuple[float, float]], cm: Matrix) -> Box:
        m = mul(cm, self.state.outer)
        return bounds([apply(m, x, y) for x, y in points])

    def _do(self, name: Any, cm: Matrix) -> None:
        st = self.state
        xobject = _resolve(_lookup(st.resources, "/XObject", name)) or {}
        subtype = str(xobject.get("/Subtype", ""))
        if subtype == "/Image":
            self.canvas.paint(self._device_box([(0, 0), (1, 0), (0, 1), (1, 1)], cm), IMAGE)
        elif subtype == "/Form":
            matrix = _numbers(list(xobject.get("/Matrix", IDENTITY))) or IDENTITY
            outer = mul(mul(matrix[:6], cm), st.outer)
            inner = replace(st, outer=outer)
            bbox = _numbers(list(xobject.get("/BBox", [])))
            if bbox and len(bbox) == 4:
                x0, y0, x1, y1 = bbox
                corners = [apply(outer, x, y) for x, y in ((x0, y0), (x1, y0), (x0, y1), (x1, y1))]
                inner.clip = intersect(st.clip, bounds(corners))
            resources = _resolve(xobject.get("/Resources"))
            inner.resources = resources if resources is not None else st.resources
            self.state = inner

    def _path(self, op: bytes, operands: list[Any], cm: Matrix) -> None:
        values = _numbers(operands) or []
        m = mul(cm, self.state.outer)
        if op == b"re" and len(values) == 4:
            x, y, w, h = values
            self.path += [apply(m, x + dx, y + dy) for dx in (0, w) for dy in (0, h)]
        elif op in (b"m", b"l", b"c", b"v", b"y") and len(values) % 2 == 0:
            self.path += [apply(m, values[i], values[i + 1]) for i in range(0, len(values), 2)]
        elif op in (b"W", b"W*"):
            self.clip_pending = True
        elif op in _PATH_ENDS:
            if self.path:
                box = bounds(self.path)
                st = self.state
                if op in _FILLS and st.fill_alpha >= 0.5:
                    fill = st.fill
                    self.canvas.paint(box, (fill[0], fill[1], fill[2]) if fill else IMAGE)
                if self.clip_pending:
                    st.clip = intersect(st.clip, box)
            self.path, self.clip_pending = [], False

    # ---- text -------------------------------------------------------------------------

    def _show(self, op: bytes, operands: list[Any], m: Matrix) -> None:
        kind = self._hidden(m)
        if kind is None:
            return
        index = 2 if op == b'"' else 0
        if len(operands) <= index:
            return
        shown = operands[index]
        strings = [s for s in shown if isinstance(s, (str, bytes))] if op == b"TJ" else [shown]
        if n := sum(self._chars(s) for s in strings if isinstance(s, (str, bytes))):
            self.tally[kind] += n
        operands[index] = [] if op == b"TJ" else ""

    def _hidden(self, m: Matrix) -> str | None:
        """Why text drawn at text-space matrix `m` (text space -> page) is not seen."""
        st = self.state
        size = abs(st.font_size)
        height = size * math.hypot(m[2], m[3])
        width = size * abs(st.h_scale) * math.hypot(m[0], m[1])
        x, y = m[4], m[5]
        if min(height, width) < MIN_TEXT_PT:
            return TINY_TEXT
        if not contains(st.clip, x, y, margin=max(height, width)):
            return OFF_PAGE
        # probe inside the first glyph, not on the baseline a table rule may sit on
        under = self.canvas.under(*apply(m, 0.3 * size, 0.3 * size))
        if st.render in _INVISIBLE_MODES:
            return None if under is IMAGE else HIDDEN_MARKUP
        inks = []
        if st.render in (0, 2, 4, 6):
            inks.append(_ink(st.fill, st.fill_alpha))
        if st.render in (1, 2, 5, 6):
            inks.append(_ink(st.stroke, st.stroke_alpha))
        if inks and all(ink is not None and faint(ink, under) for ink in inks):
            return FAINT_TEXT
        return None

    def _chars(self, text: str | bytes) -> int:
        if isinstance(text, str):
            return visible_len(text)
        if self.state.two_byte:
            return len(text) // 2
        return sum(b not in b" \t\r\n" for b in text)


def _ink(color: RGBA | None, alpha: float) -> RGBA | None:
    return None if color is None else (color[0], color[1], color[2], alpha)


def _resolve(obj: Any) -> Any:
    try:
        return obj.get_object() if hasattr(obj, "get_object") else obj
    except Exception:  # a dangling reference in a damaged file
        return None


def _lookup(resources: Any, category: str, name: Any) -> Any:
    """resources[category][name], or None when any part is missing or damaged."""
    try:
        group = _resolve(resources.get(category)) if resources is not None else None
        return group.get(name) if group is not None else None
    except Exception:  # damaged resource dictionaries are common
        return None


def _box(rect: Any) -> Box:
    x0, y0, x1, y1 = (float(v) for v in (rect.left, rect.bottom, rect.right, rect.top))
    return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)


def _visible_box(page: Any) -> Box:
    """The crop box within the media box: what a viewer shows of the page."""
    try:
        box = intersect(_box(page.mediabox), _box(page.cropbox))
    except Exception:  # a damaged box: assume the largest page PDF allows, never drop text
        return LARGEST_PAGE
    sound = all(map(math.isfinite, box)) and box[2] > box[0] and box[3] > box[1]
    return box if sound else LARGEST_PAGE
