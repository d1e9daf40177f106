"""Which runs of a DOCX paragraph Word shows.

A run's formatting is resolved as Word does for the properties that hide text: the run's
own properties, then its character style, the paragraph style and the document defaults
(each style with its `basedOn` chain). Hidden: `w:vanish` / `w:specVanish`, a size under
MIN_TEXT_PT (`w:sz` is in half-points, `w:w` scales the width), or a colour that cannot be
told from what is behind it: the run's highlight or shading, else the paragraph's, the
table cell's, the page colour, else white. A text box is hidden with its shape
(`shape_hidden`): a hidden or near-zero-size shape, or one placed wholly off the page.
"""

from __future__ import annotations

from typing import Any

from docx.oxml.ns import qn

from ingest.hidden import (
    FAINT_TEXT,
    HIDDEN_MARKUP,
    MIN_TEXT_PT,
    OFF_PAGE,
    RGB,
    TINY_TEXT,
    WHITE,
    Tally,
    faint,
    hex_color,
    visible_len,
)
from ingest.hidden.colors import WORD_HIGHLIGHT
from ingest.hidden.css import DEFAULT_FONT_PX, css_length, parse_declarations

_VAL = qn("w:val")
_OFF = ("0", "false", "off")
DEFAULT_SIZE_PT = 10.0  # Word's size when no style sets one
# A shape wholly this far beyond the page edge is out of sight; nearer, it may still show
# in the margin or as a bleed. One inch.
OFF_PAGE_SLACK_PT = 72.0
DEFAULT_PAGE_PT = (612.0, 842.0)  # no w:pgSz: the wider (Letter) and the taller (A4) page
EMU_PER_PT = 12700
Page = tuple[float, float]  # width, height in points

_WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
_WPS = "{http://schemas.microsoft.com/office/word/2010/wordprocessingShape}"
_V = "{urn:schemas-microsoft-com:vml}"


def _rgb(value: str | None) -> RGB | None:
    color = hex_color(value) if value and value.lower() != "auto" else None
    return (color[0], color[1], color[2]) if color else None


def _on(element: Any) -> bool:
    """A toggle property that is present and not switched off."""
    return element is not None and str(element.get(_VAL, "true")).lower() not in _OFF


def _first(chain: list[Any], tag: str) -> Any:
    """The nearest definition of `tag` along a chain of property elements."""
    name = qn(tag)
    for props in chain:
        found = props.find(name)
        if found is not None:
            return found
    return None


def shading(shd: Any) -> RGB | None:
    """The colour a `w:shd` paints: its pattern colour when solid, else its fill."""
    if shd is None or shd.get(_VAL) == "nil":
        return None
    if shd.get(_VAL) == "solid":
        return _rgb(shd.get(qn("w:color")))
    return _rgb(shd.get(qn("w:fill")))


def cell_background(tc: Any) -> RGB | None:
    """A table cell's shading, if it has one."""
    props = tc.find(qn("w:tcPr"))
    return shading(props.find(qn("w:shd"))) if props is not None else None


class WordRuns:
    """The visible text of paragraphs of one document; hidden runs go to `tally`."""

    def __init__(self, document: Any, tally: Tally) -> None:
        self.tally = tally
        styles = document.styles.element
        self._styles = {s.get(qn("w:styleId")): s for s in styles.findall(qn("w:style"))}
        self._default_para = next(
            (
                sid for sid, s in self._styles.items()
                if s.get(qn("w:type")) == "paragraph" and _on_attr(s.get(qn("w:default")))
            ),
            None,
        )  # fmt: skip
        self._defaults = styles.findall(f"{qn('w:docDefaults')}/{qn('w:rPrDefault')}/{qn('w:rPr')}")
        page = document.element.find(qn("w:background"))
        self.page = (_rgb(page.get(qn("w:color"))) if page is not None else None) or WHITE
        self._chains: dict[tuple[str | None, str], list[Any]] = {}

    def _style_chain(self, style_id: str | None, part: str) -> list[Any]:
        """`part` (w:rPr or w:pPr) of a style and of the styles it is based on."""
        key = (style_id, part)
        if key not in self._chains:
            found: list[Any] = []
            seen: set[str] = set()
            while style_id and style_id not in seen and len(seen) < 32:
                seen.add(style_id)
                style = self._styles.get(style_id)
                if style is None:
                    break
                props = style.find(qn(part))
                if props is not None:
                    found.append(props)
                based = style.find(qn("w:basedOn"))
                style_id = based.get(_VAL) if based is not None else None
            self._chains[key] = found
        return self._chains[key]

    def paragraph_text(self, p: Any, cell: RGB | None = None) -> str:
        """The text of a `w:p` (runs and hyperlinks, as python-docx reads it) without the
        runs a reader cannot see."""
        ppr = p.find(qn("w:pPr"))
        pstyle = ppr.find(qn("w:pStyle")) if ppr is not None else None
        style_id = pstyle.get(_VAL) if pstyle is not None else self._default_para
        para_chain = ([ppr] if ppr is not None else []) + self._style_chain(style_id, "w:pPr")
        behind = shading(_first(para_chain, "w:shd")) or cell or self.page
        inherited = self._style_chain(style_id, "w:rPr") + self._defaults
        parts = []
        for run in p.xpath("./w:r | ./w:hyperlink/w:r"):
            text = run.text
            kind = self._hidden(run, inherited, behind)
            if kind is None:
                parts.append(text)
            elif n := visible_len(text):
                self.tally[kind] += n
        return "".join(parts)

    def _hidden(self, run: Any, inherited: list[Any], behind: RGB) -> str | None:
        rpr = run.find(qn("w:rPr"))
        chain: list[Any] = []
        if rpr is not None:
            rstyle = rpr.find(qn("w:rStyle"))
            style_id = rstyle.get(_VAL) if rstyle is not None else None
            chain = [rpr, *self._style_chain(style_id, "w:rPr")]
        chain += inherited
        if _on(_first(chain, "w:vanish")) or _on(_first(chain, "w:specVanish")):
            return HIDDEN_MARKUP
        size = _number(_first(chain, "w:sz"), 2 * DEFAULT_SIZE_PT) / 2
        width = _number(_first(chain, "w:w"), 100.0) / 100
        if min(size, size * width) < MIN_TEXT_PT:
            return TINY_TEXT
        color = _first(chain, "w:color")
        ink = _rgb(color.get(_VAL)) if color is not None else None
        if ink is None:  # "auto": Word picks black or white against the background
            return None
        highlight = _first(chain, "w:highlight")
        name = str(highlight.get(_VAL, "")).lower() if highlight is not None else ""
        under = _rgb(WORD_HIGHLIGHT.get(name)) or shading(_first(chain, "w:shd")) or behind
        return FAINT_TEXT if faint((*ink, 1.0), under) else None


# --------------------------------------------------------------------------- shapes


def page_size(sect: Any) -> Page:
    """The page of a section (`w:sectPr`, its `w:pgSz` in twips) in points."""
    size = sect.find(qn("w:pgSz")) if sect is not None else None
    dims = []
    for attr, default in zip(("w:w", "w:h"), DEFAULT_PAGE_PT, strict=True):
        try:
            dims.append(float(size.get(qn(attr))) / 20 if size is not None else default)
        except (TypeError, ValueError):
            dims.append(default)
    return dims[0], dims[1]


def shape_hidden(box: Any, page: Page) -> str | None:
    """Why Word shows nothing of the shape holding text box `box` (a `w:txbxContent`):
    hidden or of near-zero size (HIDDEN_MARKUP), wholly off `page` (OFF_PAGE); None if shown."""
    holder = box.getparent()
    if holder is None:
        return None
    if holder.tag == f"{_V}textbox":
        return _vml_hidden(holder, page)
    frame = next(box.iterancestors(f"{_WP}anchor", f"{_WP}inline"), None)
    return _drawing_hidden(frame, holder.getparent(), page) if frame is not None else None


def _drawing_hidden(frame: Any, shape: Any, page: Page) -> str | None:
    """A DrawingML shape: `wp:docPr` (or a grouped shape's `wps:cNvPr`) hidden, a
    `wp:extent` under MIN_TEXT_PT, or a `wp:anchor` position off the page."""
    props = [frame.find(f"{_WP}docPr"), shape.find(f"{_WPS}cNvPr") if shape is not None else None]
    if any(prop is not None and _on_attr(prop.get("hidden")) for prop in props):
        return HIDDEN_MARKUP
    extent = frame.find(f"{_WP}extent")
    size = [_emu(extent.get(axis) if extent is not None else None) for axis in ("cx", "cy")]
    if any(side is not None and side < MIN_TEXT_PT for side in size):
        return HIDDEN_MARKUP
    if frame.tag != f"{_WP}anchor":
        return None  # inline with the text
    simple = frame.find(f"{_WP}simplePos") if _on_attr(frame.get("simplePos")) else None
    for index, (axis, coord) in enumerate((("H", "x"), ("V", "y"))):
        if simple is not None:
            offset, from_edge = _emu(simple.get(coord)), True
        else:
            pos = frame.find(f"{_WP}position{axis}")
            found = pos.find(f"{_WP}posOffset") if pos is not None else None
            offset = _emu(found.text if found is not None else None)  # None: aligned
            from_edge = pos is not None and pos.get("relativeFrom") == "page"
        if offset is not None and _beyond(offset, size[index] or 0.0, page[index], from_edge):
            return OFF_PAGE
    return None


def _vml_hidden(textbox: Any, page: Page) -> str | None:
    """A VML shape (and the groups around it): `visibility:hidden` or `display:none`, a
    width or height under MIN_TEXT_PT, or the outermost one positioned off the page."""
    chain = [textbox]
    while (parent := chain[-1].getparent()) is not None and str(parent.tag).startswith(_V):
        chain.append(parent)
    styles = [_style(element) for element in chain]
    for decls in styles:
        if decls.get("visibility") == "hidden" or decls.get("display") == "none":
            return HIDDEN_MARKUP
        sides = (_pt(decls.get("width")), _pt(decls.get("height")))
        if any(side is not None and side < MIN_TEXT_PT for side in sides):
            return HIDDEN_MARKUP
    outer = styles[-1]
    if outer.get("position") not in ("absolute", "relative"):
        return None  # inline with the text
    axes = (("horizontal", "left", "width"), ("vertical", "top", "height"))
    for index, (axis, start, dim) in enumerate(axes):
        if outer.get(f"mso-position-{axis}", "absolute") != "absolute":
            continue  # aligned (left, center...): the offset does not apply
        lengths = [_pt(outer[name]) for name in (start, f"margin-{start}") if name in outer]
        known = [length for length in lengths if length is not None]
        if not known or len(known) < len(lengths):
            continue
        from_edge = outer.get(f"mso-position-{axis}-relative") == "page"
        if _beyond(sum(known), _pt(outer.get(dim)) or 0.0, page[index], from_edge):
            return OFF_PAGE
    return None


def _style(element: Any) -> dict[str, str]:
    """A VML element's `style`, values lower-cased."""
    decls = parse_declarations(element.get("style", ""))
    return {prop: value.strip().lower() for prop, (value, _) in decls.items()}


def _beyond(offset: float, size: float, length: float, from_edge: bool) -> bool:
    """A span `size` long at `offset` from an origin on a page `length` long (its edge when
    `from_edge`, else anywhere on it: margin, column, paragraph) lies wholly more than
    OFF_PAGE_SLACK_PT beyond the page."""
    reach = 0.0 if from_edge else length
    return offset + size + reach < -OFF_PAGE_SLACK_PT or offset > length + OFF_PAGE_SLACK_PT


def _emu(value: str | None) -> float | None:
    """EMU as points; None if absent or not a number."""
    try:
        return float(str(value).strip()) / EMU_PER_PT if value is not None else None
    except ValueError:
        return None


def _pt(value: str | None) -> float | None:
    """A VML style length (CSS units) in points; None if unknown (group units, auto)."""
    px = css_length(value, DEFAULT_FONT_PX) if value else None
    return px * 72 / 96 if px is not None else None


def _on_attr(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "on")


def _number(element: Any, default: float) -> float:
    try:
        return float(str(element.get(_VAL)).rstrip("%")) if element is not None else default
    except ValueError:
        return default
