"""One text normalisation for what is indexed and what is searched.

NFKC folds compatibility forms a PDF or a CJK input method produces (ligatures "ﬁ",
full-width letters and digits, "①", non-breaking spaces) into the characters a user types,
except the punctuation Chinese and Japanese text is written with (full-width "，！：（）",
"…"), which reads wrong half-width and is not searched anyway, and superscripts, subscripts
and fractions, which NFKC would turn into other numbers ("2³" into "23");
control characters (C0 and C1, except tab and line breaks) and Unicode non-characters, which
broken fonts emit for symbols they cannot map, are dropped. The parsers apply it to every
block (ingest/parse/builder.py `Builder`) and the store to every query, so both sides agree.
Accent folding ("Tekezé" = "Tekeze") belongs to the BM25 analyzer (an index format change),
not to the stored text.
"""

from __future__ import annotations

import re
import unicodedata

NORMALIZER = "nfkc-1"  # part of the parser lineage: change it and documents re-ingest
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\ufffd]")
# Kept as written: the punctuation CJK text is written with, and the characters NFKC would
# turn into other numbers (superscripts "2³", subscripts, vulgar fractions "½").
_KEPT = re.compile(
    "[\u2026\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
    "\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u209f\u2150-\u218f]+"
)


def strip_controls(text: str) -> str:
    """Only the control characters and non-characters removed."""
    return _CONTROL.sub("", text)


def normalize_text(text: str) -> str:
    """NFKC (CJK punctuation kept), control characters and non-characters removed (tab and
    newlines kept)."""
    if text.isascii():
        return _CONTROL.sub("", text) if _CONTROL.search(text) else text
    if unicodedata.is_normalized("NFKC", text):
        return _CONTROL.sub("", text)
    out: list[str] = []
    position = 0
    for kept in _KEPT.finditer(text):
        out += [unicodedata.normalize("NFKC", text[position : kept.start()]), kept.group()]
        position = kept.end()
    out.append(unicodedata.normalize("NFKC", text[position:]))
    return _CONTROL.sub("", "".join(out))
