"""What CSS hides, for HTML pages and for raw HTML inside Markdown.

A small cascade: inline `style`, `<style>` rules whose selectors are type, `.class`, `#id`
and `[attr]` compounds joined by descendant or child combinators (rules with other
selectors are skipped), and the presentational `color`/`bgcolor` attributes. It answers two
questions: does an element hide its whole subtree (`hidden`, `display:none`, opacity 0,
clipped, zero-sized, scaled to nothing, moved off-screen), and can a text run be seen where
it stands (visibility, font size, its colour against the background it sits on).
"""

from __future__ import annotations

import colorsys
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ingest.hidden import (
    BLACK,
    FAINT_TEXT,
    HIDDEN_MARKUP,
    MIN_ALPHA,
    MIN_TEXT_PT,
    OFF_PAGE,
    RGB,
    RGBA,
    TINY_TEXT,
    WHITE,
    faint,
    hex_color,
    named_color,
    over,
)

MIN_PX = MIN_TEXT_PT * 96 / 72
OFF_SCREEN_PX = 500  # an element moved this far out of the viewport is out of sight
VIEWPORT = (1280.0, 800.0)
DEFAULT_FONT_PX = 16.0
RAW_TEXT = ("script", "style")  # their content is code, never shown
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr"}  # fmt: skip
# Properties that can hide text; style-sheet rules with none of them are not kept.
_RELEVANT = {
    "display", "visibility", "opacity", "font", "font-size", "color", "background",
    "background-color", "background-image", "background-clip", "-webkit-background-clip",
    "-webkit-text-fill-color", "position", "left", "top", "right", "bottom", "text-indent",
    "margin", "margin-left", "margin-top", "clip", "clip-path", "height", "width",
    "max-height", "max-width", "overflow", "overflow-x", "overflow-y", "transform",
    "content-visibility", "text-shadow",
}  # fmt: skip
_FONT_KEYWORDS = {"xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0,
                  "large": 18.0, "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0}  # fmt: skip
_ABS_UNITS = {"px": 1.0, "pt": 96 / 72, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54,
              "mm": 96 / 25.4, "q": 96 / 101.6}  # fmt: skip
_LENGTH = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)([a-z%]*)$", re.IGNORECASE)
_VAR = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*([^()]*))?\)")


# --------------------------------------------------------------------------- values


def _split_top(text: str, sep: str) -> list[str]:
    """Split at `sep` (" " meaning any whitespace) outside parentheses and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch == sep or (sep == " " and ch.isspace())):
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def parse_declarations(text: str) -> dict[str, tuple[str, bool]]:
    """`prop: value [!important]; ...` as {prop: (value, important)}, later ones winning."""
    found: dict[str, tuple[str, bool]] = {}
    for item in _split_top(text, ";"):
        prop, colon, value = item.partition(":")
        prop = prop.strip()
        prop = prop if prop.startswith("--") else prop.lower()
        if not colon or not prop:
            continue
        value, bang = re.subn(r"\s*!\s*important\s*$", "", value.strip(), flags=re.IGNORECASE)
        found[prop] = (value, bool(bang))
    return found


def css_length(value: str, font_px: float, percent_of: float | None = None) -> float | None:
    """A CSS length in px; None when it cannot be known here (calc(), auto, % of nothing)."""
    match = _LENGTH.match(value.strip())
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2).lower()
    if unit in _ABS_UNITS:
        return number * _ABS_UNITS[unit]
    if unit in ("em", "ex", "ch"):
        return number * font_px * (1.0 if unit == "em" else 0.5)
    if unit == "rem":
        return number * DEFAULT_FONT_PX
    viewport = {"vw": VIEWPORT[0], "vh": VIEWPORT[1], "vmin": min(VIEWPORT), "vmax": max(VIEWPORT)}
    if unit in viewport:
        return number * viewport[unit] / 100
    if unit == "%":
        return None if percent_of is None else number * percent_of / 100
    return 0.0 if unit == "" and number == 0 else None


def _channels(args: str) -> list[str]:
    return [a for a in re.split(r"[\s,/]+", args.strip()) if a]


def _fraction(token: str, scale: float) -> float | None:
    """`50%` -> 0.5, `128` on a 255 scale -> 0.5; None if not a number."""
    try:
        return float(token[:-1]) / 100 if token.endswith("%") else float(token) / scale
    except ValueError:
        return None


def css_color(value: str, current: RGBA | None) -> RGBA | None:
    """A CSS colour; None when it cannot be known here (var(), lab(), color-mix())."""
    value = value.strip().lower()
    if value in ("currentcolor", "inherit"):
        return current
    if value.startswith("#"):
        return hex_color(value)
    func = re.fullmatch(r"(rgba?|hsla?)\((.*)\)", value)
    if func is None:
        return named_color(value)
    args = _channels(func.group(2))
    if len(args) not in (3, 4):
        return None
    alpha = _fraction(args[3], 1.0) if len(args) == 4 else 1.0
    channels: list[float | None]
    if func.group(1).startswith("rgb"):
        channels = [_fraction(a, 255.0) for a in args[:3]]
    else:
        hue = _fraction(args[0].removesuffix("deg"), 360.0)
        sat, light = _fraction(args[1], 100.0), _fraction(args[2], 100.0)
        if hue is None or sat is None or light is None:
            return None
        channels = list(colorsys.hls_to_rgb(hue, light, sat))
    rgb = [min(1.0, max(0.0, c)) for c in channels if c is not None]
    if alpha is None or len(rgb) != 3:
        return None
    return (rgb[0], rgb[1], rgb[2], min(1.0, max(0.0, alpha)))


# --------------------------------------------------------------------------- selectors


class Element(NamedTuple):
    """What a selector can test: tag name and attributes (id, class, ...)."""

    name: str
    attrs: Mapping[str, str]

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class Node(NamedTuple):
    """An element and its ancestors, shared rather than copied (documents nest deeply)."""

    element: Element
    parent: Node | None

    def path(self, limit: int = 256) -> list[Element]:
        """The elements from the root (or the `limit`-th ancestor) down to this one: a
        selector is matched against at most that many, so deep trees stay linear."""
        out: list[Element] = []
        node: Node | None = self
        while node is not None and len(out) < limit:
            out.append(node.element)
            node = node.parent
        return out[::-1]


_SIMPLE = re.compile(
    r"""(?P<type>\*|[A-Za-z][\w-]*)|\#(?P<id>[\w-]+)|\.(?P<cls>[\w-]+)"""
    r"""|\[\s*(?P<attr>[\w:-]+)\s*(?:(?P<op>[~|^$*]?=)\s*(?P<val>"[^"]*"|'[^']*'|[^\]\s]+)\s*)?\]"""
)
_COMBINATOR = re.compile(r"\s*>\s*|\s+")


@dataclass
class _Compound:
    tag: str = ""
    ids: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    attrs: list[tuple[str, str, str]] = field(default_factory=list)

    def matches(self, el: Element) -> bool:
        if self.tag and self.tag != el.name:
            return False
        if any(el.attrs.get("id") != i for i in self.ids):
            return False
        if self.classes and not set(self.classes) <= el.classes:
            return False
        return all(_attr_matches(el.attrs.get(name), op, val) for name, op, val in self.attrs)


def _attr_matches(have: str | None, op: str, want: str) -> bool:
    if have is None:
        return False
    return {
        "": True, "=": have == want, "~=": want in have.split(), "|=": have.split("-")[0] == want,
        "^=": have.startswith(want), "$=": have.endswith(want), "*=": want in have,
    }.get(op, False)  # fmt: skip


@dataclass
class _Selector:
    compounds: list[_Compound]
    child: list[bool]  # child[i]: compound i must be the parent of compound i + 1
    specificity: tuple[int, int, int]

    def key(self) -> str:
        """The index key: the rightmost compound's id, first class, or tag ("" for *)."""
        last = self.compounds[-1]
        if last.ids:
            return "#" + last.ids[0]
        return "." + last.classes[0] if last.classes else last.tag

    def matches(self, chain: list[Element]) -> bool:
        """`chain` runs from the root to the element; memoised, so never exponential."""
        memo: dict[tuple[int, int], bool] = {}

        def at(ci: int, pos: int) -> bool:
            if (ci, pos) not in memo:
                ok = self.compounds[ci].matches(chain[pos])
                if ok and ci > 0:
                    above = [pos - 1] if self.child[ci - 1] else range(pos - 1, -1, -1)
                    ok = any(at(ci - 1, j) for j in above if j >= 0)
                memo[(ci, pos)] = ok
            return memo[(ci, pos)]

        return at(len(self.compounds) - 1, len(chain) - 1)


def parse_selector(text: str) -> _Selector | None:
    """One selector; None for what is not supported (pseudo-classes, sibling combinators),
    so such a rule is skipped rather than guessed."""
    compounds: list[_Compound] = []
    child: list[bool] = []
    pos, text = 0, re.sub(r":root\b", "html", text.strip())  # in HTML :root is <html>
    while pos < len(text):
        compound, start = _Compound(), pos
        while (m := _SIMPLE.match(text, pos)) and m.end() > pos:
            if m.group("type"):
                if pos != start:
                    return None
                compound.tag = "" if m.group("type") == "*" else m.group("type").lower()
            elif m.group("id"):
                compound.ids.append(m.group("id"))
            elif m.group("cls"):
                compound.classes.append(m.group("cls"))
            else:
                value = (m.group("val") or "").strip("\"'")
                compound.attrs.append((m.group("attr").lower(), m.group("op") or "", value))
            pos = m.end()
        if pos == start:
            return None
        compounds.append(compound)
        if pos == len(text):
            break
        comb = _COMBINATOR.match(text, pos)
        if not comb or comb.end() == len(text):
            return None
        child.append(">" in comb.group())
        pos = comb.end()
    if not compounds or len(compounds) > 16:
        return None
    ids = sum(len(c.ids) for c in compounds)
    classes = sum(len(c.classes) + len(c.attrs) for c in compounds)
    return _Selector(compounds, child, (ids, classes, sum(bool(c.tag) for c in compounds)))


# --------------------------------------------------------------------------- style sheets


class _Rule(NamedTuple):
    selector: _Selector
    order: int
    declarations: dict[str, tuple[str, bool]]


def _blocks(css: str) -> Iterator[tuple[str, str]]:
    """Top-level (prelude, block) pairs; at-statements without a block are skipped."""
    pos = 0
    while pos < len(css):
        brace = css.find("{", pos)
        if brace < 0:
            return
        semi = css.find(";", pos, brace)
        if semi >= 0 and css[pos:semi].strip().startswith("@"):  # @import, @charset
            pos = semi + 1
            continue
        depth, end = 0, brace
        while end < len(css):
            depth += {"{": 1, "}": -1}.get(css[end], 0)
            if depth == 0:
                break
            end += 1
        yield css[pos:brace].strip(), css[brace + 1 : end]
        pos = end + 1


def _screen_media(query: str) -> bool:
    """An unconditional screen query: print rules and width-dependent rules are not what
    every reader sees, so they are not applied."""
    return any(q.strip().lower() in ("", "all", "screen", "only screen") for q in query.split(","))


class StyleSheet:
    """The `<style>` rules that can hide text, indexed by their rightmost id/class/tag."""

    def __init__(self, css: str = "") -> None:
        self._by_key: dict[str, list[_Rule]] = {}
        self._order = 0
        self._add(re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL), depth=0)

    def _add(self, css: str, depth: int) -> None:
        for prelude, block in _blocks(css):
            if prelude.startswith("@"):
                name, _, query = prelude[1:].partition(" ")
                name = name.lower()
                applies = (name == "media" and _screen_media(query)) or name in (
                    "supports",
                    "layer",
                )
                if applies and depth < 8:
                    self._add(block, depth + 1)
                continue
            declarations = {
                p: v for p, v in parse_declarations(block).items()
                if p in _RELEVANT or p.startswith("--")
            }  # fmt: skip
            if not declarations:
                continue
            for text in _split_top(prelude, ","):
                selector = parse_selector(text)
                if selector is not None:
                    self._order += 1
                    rule = _Rule(selector, self._order, declarations)
                    self._by_key.setdefault(selector.key(), []).append(rule)

    def declarations(self, node: Node, inline: str) -> dict[str, str]:
        """The cascaded value of every relevant property on `node`'s element."""
        el = node.element
        keys = ["", el.name, *("." + c for c in el.classes)]
        if el.attrs.get("id"):
            keys.append("#" + el.attrs["id"])
        ranked: list[tuple[tuple[Any, ...], str, str]] = [
            ((False, -1, (0, 0, 0), 0), prop, value) for prop, value in _presentational(el).items()
        ]
        chain: list[Element] | None = None
        for key in keys:
            for rule in self._by_key.get(key, ()):
                chain = chain or node.path()
                if rule.selector.matches(chain):
                    for prop, (value, important) in rule.declarations.items():
                        ranked.append(
                            ((important, 0, rule.selector.specificity, rule.order), prop, value)
                        )
        for prop, (value, important) in parse_declarations(inline).items():
            ranked.append(((important, 1, (0, 0, 0), 0), prop, value))
        ranked.sort(key=lambda item: item[0])
        return {prop: value for _, prop, value in ranked}


def _presentational(el: Element) -> dict[str, str]:
    """Old HTML attributes that still colour text: <font color>, <body text>, bgcolor."""
    hints = {}
    color = {"font": "color", "body": "text"}.get(el.name)
    if color and el.attrs.get(color):
        hints["color"] = el.attrs[color]
    if el.attrs.get("bgcolor"):
        hints["background-color"] = el.attrs["bgcolor"]
    return hints


# --------------------------------------------------------------------------- visibility


@dataclass(frozen=True)
class Context:
    """The inherited state text is drawn with."""

    color: RGBA | None = BLACK  # None: cannot be known here
    background: RGB | None = WHITE  # None: an image or gradient may be behind the text
    font_px: float = DEFAULT_FONT_PX
    visible: bool = True
    shadow: bool = False  # a text-shadow draws the glyphs even when their fill is transparent
    variables: Mapping[str, str] = field(default_factory=dict)


def _substitute(value: str, variables: Mapping[str, str]) -> str:
    """Resolve var(--x, fallback) against the inherited custom properties."""
    for _ in range(8):
        if "var(" not in value:
            break
        value = _VAR.sub(lambda m: variables.get(m.group(1), m.group(2) or ""), value)
    return value


def _font_px(decls: Mapping[str, str], parent: float) -> float:
    value = decls.get("font-size", "").lower()
    if not value and decls.get("font"):
        tokens = [t.split("/")[0].lower() for t in _split_top(decls["font"], " ")]
        sized = (
            t for t in tokens if t in _FONT_KEYWORDS or css_length(t, parent, parent) is not None
        )
        value = next(sized, "")
    if value in _FONT_KEYWORDS:
        return _FONT_KEYWORDS[value]
    if value in ("smaller", "larger"):
        return parent * (0.83 if value == "smaller" else 1.2)
    px = css_length(value, parent, percent_of=parent) if value else None
    return parent if px is None or px < 0 else px


def _background(decls: Mapping[str, str], ctx: Context) -> RGB | None:
    """The opaque colour behind this element's text; None when an image may be there."""
    short = decls.get("background", "")
    if re.search(r"url\(|gradient\(|image\(", decls.get("background-image", "") + short, re.I):
        return None
    value = decls.get("background-color")
    if value is None and short:
        value = next((t for t in _split_top(short, " ") if css_color(t, None)), "")
    if not value:
        return ctx.background
    color = css_color(value, ctx.color)
    if color is None:
        return None
    if color[3] < MIN_ALPHA:
        return ctx.background
    return over(color, ctx.background) if ctx.background is not None else None


def _off_screen(decls: Mapping[str, str], font_px: float) -> bool:
    """Positioned, indented or pulled by a margin far outside the viewport."""

    def far(value: str, size: float) -> bool:
        px = css_length(value, font_px, percent_of=size) if value else None
        return px is not None and px <= -OFF_SCREEN_PX

    width, height = VIEWPORT
    if decls.get("position", "").lower() in ("absolute", "fixed", "relative", "sticky"):
        sides = {"left": width, "right": width, "top": height, "bottom": height}
        if any(far(decls.get(side, ""), size) for side, size in sides.items()):
            return True
    margin = _split_top(decls.get("margin", ""), " ")
    top = decls.get("margin-top", margin[0] if margin else "")
    left = margin[3] if len(margin) == 4 else margin[1] if len(margin) > 1 else top
    left = decls.get("margin-left", left)
    return far(top, height) or far(left, width) or far(decls.get("text-indent", ""), width)


def _clipped(decls: Mapping[str, str], font_px: float) -> bool:
    """Clipped to nothing, or a box of at most 1px that hides its overflow."""
    clip = re.fullmatch(r"rect\((.*)\)", decls.get("clip", "").strip().lower())
    if clip:
        edges = [css_length(v, font_px) for v in _channels(clip.group(1))]
        if len(edges) == 4 and all(e is not None for e in edges):
            top, right, bottom, left = (e or 0.0 for e in edges)
            if bottom - top <= 1 or right - left <= 1:
                return True
    path = decls.get("clip-path", "").strip().lower()
    inset = re.fullmatch(r"inset\(([^)]*)\)", path)
    if inset:
        parts = [_fraction(v, 0.0) if v.endswith("%") else None for v in _channels(inset.group(1))]
        sides = (
            (parts * 4)[:4] if len(parts) == 1 else (parts * 2)[:4] if len(parts) == 2 else parts
        )
        if len(sides) == 4:
            t, r, b, left_ = ((s or 0.0) for s in sides)
            if t + b >= 1 or r + left_ >= 1:
                return True
    if re.match(r"(circle|ellipse)\(\s*0(?![.\d])", path):
        return True
    overflow = " ".join(decls.get(p, "") for p in ("overflow", "overflow-x", "overflow-y"))
    if not re.search(r"hidden|clip", overflow, re.IGNORECASE):
        return False
    sizes = [decls.get(p, "") for p in ("height", "width", "max-height", "max-width")]
    return any((px := css_length(v, font_px)) is not None and px <= 1 for v in sizes if v)


def _scaled_away(decls: Mapping[str, str]) -> bool:
    for args in re.findall(r"scale[xy]?\(([^)]*)\)", decls.get("transform", "").lower()):
        if any((f := _fraction(a, 1.0)) is not None and abs(f) < 0.05 for a in _channels(args)):
            return True
    return False


def enter(ctx: Context, el: Element, decls: Mapping[str, str]) -> tuple[Context, str | None]:
    """The context inside `el`, and why its whole subtree is hidden (None if it is not)."""
    if "hidden" in el.attrs or el.attrs.get("aria-hidden", "").strip().lower() == "true":
        return ctx, HIDDEN_MARKUP
    variables = {**ctx.variables, **{p: v for p, v in decls.items() if p.startswith("--")}}
    decls = {p: _substitute(v, variables).strip() for p, v in decls.items()}
    opacity = _fraction(decls.get("opacity") or "1", 1.0)
    if (
        decls.get("display", "").lower() == "none"
        or decls.get("content-visibility", "").lower() == "hidden"
        or (opacity is not None and opacity < MIN_ALPHA)
    ):
        return ctx, HIDDEN_MARKUP
    font_px = _font_px(decls, ctx.font_px)
    if _clipped(decls, font_px):
        return ctx, HIDDEN_MARKUP
    if _scaled_away(decls):
        return ctx, TINY_TEXT
    if _off_screen(decls, font_px):
        return ctx, OFF_PAGE
    visibility = decls.get("visibility", "").lower()
    visible = ctx.visible
    if visibility in ("hidden", "collapse", "visible"):
        visible = visibility == "visible"
    fill = decls.get("-webkit-text-fill-color") or decls.get("color")
    color = css_color(fill, ctx.color) if fill else ctx.color
    clip_to_text = decls.get("background-clip", "") + decls.get("-webkit-background-clip", "")
    if "text" in clip_to_text.lower():
        color = None  # the background shows through the glyphs
    shadow = decls.get("text-shadow", "").lower()
    return (
        Context(
            color=color,
            background=_background(decls, ctx),
            font_px=font_px,
            visible=visible,
            shadow=shadow not in ("none", "initial", "unset") if shadow else ctx.shadow,
            variables=variables,
        ),
        None,
    )


def text_hidden(ctx: Context) -> str | None:
    """Why text drawn in `ctx` cannot be seen (None if it can)."""
    if not ctx.visible:
        return HIDDEN_MARKUP
    if ctx.font_px < MIN_PX:
        return TINY_TEXT
    if ctx.color is not None and not ctx.shadow and faint(ctx.color, ctx.background):
        return FAINT_TEXT
    return None


# --------------------------------------------------------------------------- HTML pages


# --------------------------------------------------------------------------- Markdown
