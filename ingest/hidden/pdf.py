"""What a PDF page paints where, so the PDF reader (ingest/pdf_text) can tell text nobody
sees: `Canvas` keeps, on a coarse grid, the opaque colours and images painted so far, and
`under` answers what a glyph is drawn on (the page's white, a colour, or IMAGE).
"""

from __future__ import annotations

from ingest.hidden import MIN_TEXT_PT, RGB, WHITE

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
IMAGE = None  # what `Canvas.under` returns where an image (or unknown paint) is on top


def intersect(a: Box, b: Box) -> Box:
    return max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])


def contains(box: Box, x: float, y: float, margin: float = 0.0) -> bool:
    return box[0] - margin <= x <= box[2] + margin and box[1] - margin <= y <= box[3] + margin


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
