"""Which runs of a DOCX paragraph Word shows.

A run's formatting is resolved as Word does for the properties that hide text: the run's
own properties, then its character style, the paragraph style and the document defaults
(each style with its `basedOn` chain). Hidden: `w:vanish` / `w:specVanish`, a size under
MIN_TEXT_PT (`w:sz` is in half-points, `w:w` scales the width), or a colour that cannot be
told from what is behind it: the run's highlight or shading, else the paragraph's, the
table cell's, the page colour, else white.
"""

from __future__ import annotations

from typing import Any

from docx.oxml.ns import qn

from ingest.hidden import (
    FAINT_TEXT,
    HIDDEN_MARKUP,
    MIN_TEXT_PT,
    RGB,
    TINY_TEXT,
    WHITE,
    Tally,
    faint,
    hex_color,
    visible_len,
)
from ingest.hidden.colors import WORD_HIGHLIGHT

_VAL = qn("w:val")
_OFF = ("0", "false", "off")
DEFAULT_SIZE_PT = 10.0  # Word's size when no style sets one


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


def _on_attr(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "on")


def _number(element: Any, default: float) -> float:
    try:
        return float(str(element.get(_VAL)).rstrip("%")) if element is not None else default
    except ValueError:
        return default
