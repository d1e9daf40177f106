"""Text a reader never sees, and the rules every parser uses to drop it.

A file can carry text that an extractor indexes but a viewer never shows: zero-width and bidi
controls, white or 1-pt runs, off-page or CSS-hidden text. Retrieved as evidence, it is a
channel for hidden instructions, so the parsers drop it at parse time and count what they
dropped per kind (`Tally`). Format rules live in html.py, docx.py and pdf.py; the thresholds
and the colour test they share live here.
"""

from __future__ import annotations

import re
from collections import Counter

from ingest.hidden.colors import CSS_NAMED

MIN_TEXT_PT = 2.0  # text smaller than this cannot be read
MIN_CONTRAST = 1.25  # WCAG contrast ratio below which text melts into its background
MIN_ALPHA = 0.1  # an opacity below this is invisible

# Kinds, as the document list and the ingest result name them.
INVISIBLE_CHARS = "invisible characters"
HIDDEN_MARKUP = "hidden by markup"
TINY_TEXT = "tiny text"
FAINT_TEXT = "text in the background colour"
OFF_PAGE = "off-page text"
COMMENTS = "comments"

Tally = Counter[str]
RGB = tuple[float, float, float]
RGBA = tuple[float, float, float, float]
WHITE: RGB = (1.0, 1.0, 1.0)
BLACK: RGBA = (0.0, 0.0, 0.0, 1.0)


def hidden_note(count: int, kinds: list[str] | None = None) -> str:
    """How the ingest result and the document list flag a document ("" when nothing was
    dropped): `hidden text removed: 42 [tiny text]`, or `hidden text removed (42)`."""
    if count <= 0:
        return ""
    if kinds is None:
        return f"hidden text removed ({count})"
    return f"hidden text removed: {count}" + (f" [{', '.join(kinds)}]" if kinds else "")


def visible_len(text: str) -> int:
    """What a removal counts: the characters that are not whitespace."""
    return sum(not ch.isspace() for ch in text)


# --------------------------------------------------------------------------- characters

# Format characters (Unicode category Cf) render as nothing: zero-width space/joiners, word
# joiner, BOM, soft hyphen, bidi embeddings/overrides/isolates and marks, invisible math
# operators, interlinear annotation, tag characters (U+E0000 block). The Cf characters that
# do render (the prepended concatenation marks U+0600-0605, U+06DD, U+070F, U+0890-0891,
# U+08E2, U+110BD, U+110CD) are left out. Added: the combining grapheme joiner U+034F (Mn)
# and the supplementary variation selectors U+E0100-E01EF, which carry no visible text.
# tests/ingest/test_hidden_text.py checks the class against unicodedata.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f\U000e0100-\U000e01ef]+"
)
# A character takes at most one variation selector; a run of them encodes hidden bytes.
_SELECTOR_RUN = re.compile("([\ufe00-\ufe0f])[\ufe00-\ufe0f]+")


def strip_invisible(text: str, tally: Tally) -> str:
    """Drop characters that render as nothing (ordinary whitespace stays)."""
    if text.isascii():
        return text
    before = len(text)
    text = _SELECTOR_RUN.sub(r"\1", _INVISIBLE.sub("", text))
    if len(text) < before:
        tally[INVISIBLE_CHARS] += before - len(text)
    return text


# --------------------------------------------------------------------------- colour


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def contrast(a: RGB, b: RGB) -> float:
    """WCAG 2 contrast ratio of two sRGB colours, 1 (same) to 21 (black on white)."""
    la, lb = (
        0.2126 * _linear(c[0]) + 0.7152 * _linear(c[1]) + 0.0722 * _linear(c[2]) for c in (a, b)
    )
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def over(fg: RGBA, bg: RGB) -> RGB:
    """`fg` painted with its alpha over an opaque `bg`."""
    alpha = fg[3]
    return (
        fg[0] * alpha + bg[0] * (1 - alpha),
        fg[1] * alpha + bg[1] * (1 - alpha),
        fg[2] * alpha + bg[2] * (1 - alpha),
    )


def faint(fg: RGBA, bg: RGB | None) -> bool:
    """Text of colour `fg` cannot be told from its background (`None`: unknown, e.g. an
    image, so only a transparent colour counts)."""
    if fg[3] < MIN_ALPHA:
        return True
    return bg is not None and contrast(over(fg, bg), bg) < MIN_CONTRAST


def hex_color(value: str) -> RGBA | None:
    """`#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, with or without `#`; None if not hex."""
    digits = value.strip().removeprefix("#")
    if len(digits) in (3, 4):
        digits = "".join(ch * 2 for ch in digits)
    if len(digits) not in (6, 8) or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
        return None
    rgba = [int(digits[i : i + 2], 16) / 255 for i in range(0, len(digits), 2)]
    return (rgba[0], rgba[1], rgba[2], rgba[3] if len(rgba) == 4 else 1.0)


def named_color(name: str) -> RGBA | None:
    """A CSS colour name (`white`, `snow`, ...) or `transparent`."""
    name = name.strip().lower()
    if name == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    code = CSS_NAMED.get(name)
    return hex_color(code) if code else None
