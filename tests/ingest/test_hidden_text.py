"""Hidden text never becomes evidence: per format, a file shows a reader one text and carries
another (white, tiny, off-page, vanished, CSS-hidden, invisible characters); the hidden words
are absent from the parsed text and from every stored chunk, the visible words are intact,
the removal is counted, and readable look-alikes (dark-blue small print, white on a dark box,
an OCR layer) are kept so the rules cannot pass by dropping too much."""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hopwise.commands.kb import format_result
from ingest.config import IngestConfig
from ingest.hidden import (
    COMMENTS,
    FAINT_TEXT,
    HIDDEN_MARKUP,
    INVISIBLE_CHARS,
    OFF_PAGE,
    TINY_TEXT,
    Tally,
    hidden_note,
    strip_invisible,
)
from ingest.models import DocumentInfo, IngestResult
from ingest.parse import parse_bytes
from ingest.pipeline import ingest_bytes
from tests.fakes import docs
from tests.fakes.memory_store import MemoryStore
from ui.uploads import result_rows

MARK = docs.HIDDEN_MARK
CONFIG = IngestConfig(parse_timeout_s=0)
Maker = Callable[[Path], Path]

# per format: the generator, the readable words that must survive, the kinds it must report
FORMATS: dict[str, tuple[Maker, list[str], set[str]]] = {
    "pdf": (
        docs.make_pdf_with_hidden_text,
        ["KEEPDARKBLUE", "KEEPGREY", "KEEPWHITEONNAVY", "KEEPOCRLAYER"],
        {FAINT_TEXT, TINY_TEXT, OFF_PAGE, HIDDEN_MARKUP},
    ),
    "docx": (
        docs.make_docx_with_hidden_text,
        ["KEEPDARKBLUE", "KEEPWHITEONNAVY", "KEEPHIGHLIGHT", "KEEPCELLNAVY", "Dock B", "Dispatch"],
        {FAINT_TEXT, TINY_TEXT, HIDDEN_MARKUP},
    ),
    "html": (
        docs.make_html_with_hidden_text,
        ["KEEPVISIBLECHILD", "KEEPDARKBLUE", "KEEPWHITEONNAVY", "KEEPGREY", "KEEPSCREENONLY",
         "KEEPWIDE", "KEEPCHILDSIZE", "Dispatch"],
        {FAINT_TEXT, TINY_TEXT, OFF_PAGE, HIDDEN_MARKUP},
    ),
    "md": (
        docs.make_markdown_with_hidden_text,
        ["KEEPDARKBLUE", "KEEPCODESPAN", "KEEPFENCED", "KEEPBIDI", "SPLITWORDJOINED"],
        {COMMENTS, HIDDEN_MARKUP, FAINT_TEXT, TINY_TEXT, INVISIBLE_CHARS},
    ),
    "txt": (
        docs.make_txt_with_hidden_text,
        ["KEEPBIDI", "KEEPISOLATE", "SPLITWORDJOINED", "softhyphen", "\u2764\ufe0f", "\u0600"],
        {INVISIBLE_CHARS},
    ),
}  # fmt: skip
VISIBLE = ["The courier collects parcels at noon", "Closing paragraph in plain black."]
BIDI_AND_ZERO_WIDTH = "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def hidden_file(tmp_path: Path, fmt: str) -> Path:
    return FORMATS[fmt][0](tmp_path)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_hidden_text_is_dropped_and_counted_at_parse(tmp_path: Path, fmt: str) -> None:
    _, keep, kinds = FORMATS[fmt]
    path = hidden_file(tmp_path, fmt)
    doc = parse_bytes(path.read_bytes(), path.name, timeout_s=30)
    texts = [
        doc.text,
        doc.title,
        *(b.text for b in doc.blocks),
        *(" ".join(b.section_path) for b in doc.blocks),
    ]
    assert not [t for t in texts if MARK in t]
    assert not [t for t in texts if set(t) & set(BIDI_AND_ZERO_WIDTH)]
    flat = " ".join(doc.text.split())
    for words in [*VISIBLE, *keep]:
        assert words in flat, words
    assert set(doc.hidden_kinds) == kinds
    assert doc.hidden_removed >= 20


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_hidden_text_never_reaches_a_chunk_or_a_search(tmp_path: Path, fmt: str) -> None:
    path = hidden_file(tmp_path, fmt)
    store = MemoryStore()
    result = ingest_bytes(path.read_bytes(), path.name, store, config=CONFIG)
    assert result.status == "ingested", result.reason
    chunks = store.get_chunks(result.doc_id or "")
    assert chunks and not [c.text for c in chunks if MARK in c.text]
    assert "The courier collects parcels at noon" in " ".join(
        " ".join(c.text for c in chunks).split()
    )
    assert store.search(f"{MARK}WHITE {MARK}TINY {MARK}COMMENT {MARK}TAGS", ["all"]) == []
    parsed = parse_bytes(path.read_bytes(), path.name)
    assert (result.hidden_removed, result.hidden_kinds) == (
        parsed.hidden_removed,
        parsed.hidden_kinds,
    )
    assert {c.hidden_removed for c in chunks} == {parsed.hidden_removed}


@pytest.mark.parametrize("backend", ["lite-bm25"], indirect=True)
def test_a_milvus_store_holds_no_hidden_word(tmp_path: Path, store: Any) -> None:
    for fmt in sorted(FORMATS):
        path = hidden_file(tmp_path, fmt)
        assert ingest_bytes(path.read_bytes(), path.name, store, config=CONFIG).status == "ingested"
    for word in ("WHITE", "TINY", "VANISH", "CLASS", "COMMENT", "OFFPAGE", "INVISIBLE", "TAGS"):
        assert store.search(MARK + word, ["all"]) == []
    hits = store.search("SPLITWORDJOINED", ["all"])
    assert {h.source for h in hits} == {"hidden.md", "hidden.txt"}
    assert all(MARK not in h.text for h in store.search("courier parcels noon", ["all"], k=20))


def test_the_counts_show_in_the_ingest_line_and_the_upload_table(tmp_path: Path) -> None:
    path = docs.make_html_with_hidden_text(tmp_path)
    result = ingest_bytes(path.read_bytes(), path.name, MemoryStore(), config=CONFIG)
    line = format_result(result)
    assert f"hidden text removed: {result.hidden_removed} [" in line and "tiny text" in line
    assert result_rows([result])[0]["hidden text"].startswith("hidden text removed: ")
    plain = IngestResult(path="a.md", source="a.md", status="ingested", chunks=1, version=1)
    assert format_result(plain) == "ingested  a.md  (1 chunks, v1)"
    assert result_rows([plain])[0]["hidden text"] == ""
    info = DocumentInfo(doc_id="d", title="t", source="s", version=1, chunks=1, groups=["all"],
                        hidden_removed=7)  # fmt: skip
    assert hidden_note(info.hidden_removed) == "hidden text removed (7)"


@pytest.mark.parametrize(
    "maker",
    [
        docs.make_pdf,
        docs.make_pdf_with_bookmarks,
        docs.make_docx,
        docs.make_markdown,
        docs.make_txt,
    ],
)
def test_ordinary_files_report_nothing_hidden(tmp_path: Path, maker: Maker) -> None:
    path = maker(tmp_path)
    doc = parse_bytes(path.read_bytes(), path.name)
    assert (doc.hidden_removed, doc.hidden_kinds) == (0, [])


# ----------------------------------------------------------------------------- characters


def test_a_word_split_by_zero_width_characters_becomes_searchable_joined() -> None:
    tally = Tally()
    assert (
        strip_invisible("IGNORE\u200bPREV\u200cIOUS\u2060ZX\ufeff9", tally) == "IGNOREPREVIOUSZX9"
    )
    assert tally == {INVISIBLE_CHARS: 4}
    store = MemoryStore()
    ingest_bytes("Note: OVER\u200bRIDE\u200dWORD here.".encode(), "split.txt", store, config=CONFIG)
    assert [h.source for h in store.search("OVERRIDEWORD", ["all"])] == ["split.txt"]


def test_bidi_controls_vanish_and_ordinary_whitespace_stays() -> None:
    tally = Tally()
    text = "a\u202eb\u202c c\u2066d\u2069 e\u200ef\u200fg\u061ch\tI\u00a0J\u3000K\nL"
    assert strip_invisible(text, tally) == "ab cd efgh\tI\u00a0J\u3000K\nL"
    assert tally[INVISIBLE_CHARS] == 7


def test_variation_selector_runs_and_tag_characters_carry_nothing() -> None:
    tally = Tally()
    assert strip_invisible("ok\u2764\ufe0f" + "\ufe00\ufe01" * 20, tally) == "ok\u2764\ufe0f"
    assert strip_invisible("x" + docs.smuggled("ZX9 secret") + "y", tally) == "xy"


def test_every_invisible_format_character_is_removed() -> None:
    """The class in ingest.hidden against this Python's Unicode database: every Cf character
    goes, except the prepended concatenation marks, which render."""
    renders = {0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F, 0x0890, 0x0891,
               0x08E2, 0x110BD, 0x110CD}  # fmt: skip
    format_chars = [
        chr(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) == "Cf" and code not in renders
    ]
    assert [
        hex(ord(ch)) for ch in format_chars if strip_invisible(f"a{ch}b", Tally()) != "ab"
    ] == []
    for code in renders:
        assert strip_invisible(chr(code), Tally()) == chr(code)


# ----------------------------------------------------------------------------- HTML rules

HIDING_STYLES = [
    "display:none", "visibility:hidden", "opacity:0", "font-size:0", "font-size:1px",
    "font-size:1pt", "font: 0/0 a", "color:#fff", "color:#FFFFFF", "color:white", "color:snow",
    "color:rgb(254,254,254)", "color:rgba(0,0,0,0)", "color:transparent",
    "color:hsl(0, 0%, 99%)", "position:absolute; left:-9999px", "position:fixed; top:-100vh",
    "text-indent:-9999px", "margin-left:-3000px", "height:0; overflow:hidden",
    "width:1px; height:1px; overflow:hidden", "position:absolute; clip:rect(0 0 0 0)",
    "clip-path:inset(50%)", "transform:scale(0)", "content-visibility:hidden",
    "background:#000080; color:#000080", "color:#FFFFFF !important",
]  # fmt: skip
READABLE_STYLES = [
    "", "color:#00008b; font-size:9pt", "color:#999", "color:gray", "font-size:6px",
    "background:#002; color:#fff", "background-color:black; color:white",
    "color:rgba(0,0,0,0.6)", "position:absolute; left:20px", "text-indent:2em",
    "height:0", "overflow:hidden", "opacity:0.5", "transform:scale(0.8)", "color:#fff; text-shadow:0 0 2px #000",
    "background:url(bg.png); color:#fff", "visibility:visible",
]  # fmt: skip


def html_text(body: str) -> tuple[str, int]:
    doc = parse_bytes(f"<html><body><p>Plain words.</p>{body}</body></html>".encode(), "t.html")
    return doc.text, doc.hidden_removed


def md_text(body: str) -> tuple[str, int]:
    doc = parse_bytes(f"Plain words.\n\n{body}\n".encode(), "t.md")
    return doc.text, doc.hidden_removed


@pytest.mark.parametrize("style", HIDING_STYLES)
def test_each_hiding_style_hides_inline_in_a_sheet_and_in_markdown(style: str) -> None:
    """Metamorphic: the same declarations hide the text whether inline, by class, by id,
    by a descendant rule, or as raw HTML in Markdown."""
    variants = [
        html_text(f'<p>Seen <span style="{style}">ZX9MARK</span> text.</p>'),
        html_text(f'<style>.x {{ {style} }}</style><p>Seen <span class="x">ZX9MARK</span> text.</p>'),
        html_text(f'<style>#y {{ {style} }}</style><p>Seen <span id="y">ZX9MARK</span> text.</p>'),
        html_text(f'<style>div.w > p span {{ {style} }}</style><div class="w"><p>Seen <span>ZX9MARK</span> text.</p></div>'),
        md_text(f'Seen <span style="{style}">ZX9MARK</span> text.'),
        md_text(f'<style>.x {{ {style} }}</style>\n\nSeen <span class="x">ZX9MARK</span> text.'),
    ]  # fmt: skip
    for text, removed in variants:
        assert "ZX9MARK" not in text and "Seen" in text and "text." in text
        assert removed >= len("ZX9MARK")


@pytest.mark.parametrize("style", READABLE_STYLES)
def test_readable_styles_keep_their_text(style: str) -> None:
    for text, removed in (
        html_text(f'<p>Seen <span style="{style}">KEEPMARK</span> text.</p>'),
        html_text(
            f'<style>.x {{ {style} }}</style><p>Seen <span class="x">KEEPMARK</span> text.</p>'
        ),
        md_text(f'Seen <span style="{style}">KEEPMARK</span> text.'),
    ):
        assert "KEEPMARK" in text and removed == 0


def test_rules_that_do_not_apply_on_screen_or_are_overridden_keep_text() -> None:
    sheet = (
        "<style>@media print { .a { display:none } } @media (max-width: 300px) { .b { display:none } }"
        " .c { display:none } .c.open { display:block } p:hover .d { display:none }"
        " .e { color:#fff } #f.e { color:#000 }</style>"
    )  # fmt: skip
    text, removed = html_text(
        sheet + '<p class="a">KEEPA</p><p class="b">KEEPB</p><p class="c open">KEEPC</p>'
        '<p><span class="d">KEEPD</span></p><p id="f" class="e">KEEPE</p>'
    )
    assert all(word in text for word in ("KEEPA", "KEEPB", "KEEPC", "KEEPD", "KEEPE"))
    assert removed == 0


def test_markdown_code_keeps_markup_literally_and_hidden_blocks_hide_code() -> None:
    text, _ = md_text("Use `<!-- KEEPSPAN -->` here.\n\n```\n<!-- KEEPFENCE -->\n```")
    assert "<!-- KEEPSPAN -->" in text and "<!-- KEEPFENCE -->" in text
    text, removed = md_text("<div hidden>\n\n```\nZX9CODE\n```\n\n</div>\n\nAfter.")
    assert "ZX9CODE" not in text and "After." in text and removed >= 7


def test_deeply_nested_html_is_filtered_in_linear_time() -> None:
    import time

    depth = 20_000
    body = "<div>" * depth + '<span style="color:#fff">ZX9DEEP</span>KEEPDEEP' + "</div>" * depth
    started = time.monotonic()
    try:
        text, _ = html_text(body)
    except Exception as exc:  # the walker refuses very deep trees with a reason
        assert "nested too deeply" in str(exc)
    else:
        assert "ZX9DEEP" not in text and "KEEPDEEP" in text
    assert time.monotonic() - started < 20


# ----------------------------------------------------------------------------- PDF rules


def raw_pdf(content: bytes, forms: list[tuple[bytes, bytes]]) -> bytes:
    """A one-page PDF written by hand, for content streams no generator writes: `forms` are
    (dictionary entries, content) of form XObjects /Fm1, /Fm2, ..."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    xobjects = b" ".join(b"/Fm%d %d 0 R" % (i + 1, 7 + i) for i in range(len(forms)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /CropBox [0 0 612 760]"
        b" /Resources 4 0 R /Contents 5 0 R >>",
        b"<< /Font << /F1 6 0 R >> /ExtGState << /Clear << /ca 0 >> >> /XObject << "
        + xobjects
        + b" >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        font,
        *(
            b"<< /Type /XObject /Subtype /Form %s /Resources << /Font << /F1 6 0 R >> >>"
            b" /Length %d >>\nstream\n%s\nendstream" % (entries, len(body), body)
            for entries, body in forms
        ),
    ]
    return docs.pdf_of_objects(objects)


def test_pdf_rules_follow_the_graphics_state() -> None:
    """q/Q restore colours, cm scales glyphs, TJ arrays, CMYK, alpha, clip paths, the crop
    box and form XObjects (their matrix, bounding box and saved state) all count."""
    content = b"\n".join([
        b"BT /F1 12 Tf 72 720 Td (KEEPPLAIN visible) Tj ET",
        b"q 1 1 1 rg BT /F1 12 Tf 72 700 Td (ZX9WHITEQ) Tj ET Q",
        b"BT /F1 12 Tf 72 680 Td (KEEPAFTERQ black again) Tj ET",
        b"q 0.1 0 0 0.1 0 0 cm BT /F1 12 Tf 720 6600 Td (ZX9SCALED) Tj ET Q",
        b"q 2 0 0 2 0 0 cm BT /F1 6 Tf 36 320 Td (KEEPSCALEDUP) Tj ET Q",
        b"BT /F1 12 Tf 72 600 Td [(KEEPTJ) -250 (array)] TJ ET",
        b"BT /F1 12 Tf 3 Tr 72 580 Td [(ZX9TJINVISIBLE)] TJ 0 Tr ET",
        b"q /Clear gs BT /F1 12 Tf 72 560 Td (ZX9ALPHA) Tj ET Q",
        b"q 0 0 0 1 k 72 500 200 30 re f 0 0 0 0 k BT /F1 12 Tf 80 510 Td (KEEPWHITEONBLACK) Tj ET Q",
        b"q 0 0 1 rg 72 460 200 30 re f BT /F1 12 Tf 80 470 Td (ZX9BLUEONBLUE) Tj ET Q",
        b"q 72 400 10 10 re W n BT /F1 12 Tf 300 405 Td (ZX9CLIPPED) Tj ET Q",
        b"BT /F1 12 Tf 72 785 Td (ZX9CROPPED) Tj ET",
        b"/Fm1 Do",
        b"BT /F1 12 Tf 72 280 Td (KEEPAFTERFORM) Tj ET",
        b"/Fm2 Do",
        b"BT /F1 12 Tf 72 200 Td (KEEPLAST) Tj ' ET",
    ])  # fmt: skip
    forms = [
        (b"/BBox [0 0 500 50] /Matrix [1 0 0 1 72 300]",
         b"1 1 1 rg BT /F1 12 Tf 0 10 Td (ZX9INFORM) Tj ET"),
        (b"/BBox [0 0 10 10] /Matrix [1 0 0 1 72 250]",
         b"BT /F1 12 Tf 200 0 Td (ZX9FORMBBOX) Tj ET"),
    ]  # fmt: skip
    doc = parse_bytes(raw_pdf(content, forms), "raw.pdf")
    assert MARK not in doc.text
    for word in ("KEEPPLAIN", "KEEPAFTERQ", "KEEPSCALEDUP", "KEEPTJ", "KEEPWHITEONBLACK",
                 "KEEPAFTERFORM", "KEEPLAST"):  # fmt: skip
        assert word in doc.text
    assert set(doc.hidden_kinds) == {FAINT_TEXT, TINY_TEXT, OFF_PAGE, HIDDEN_MARKUP}
    assert doc.hidden_removed >= sum(len(w) for w in ("ZX9WHITEQ", "ZX9SCALED", "ZX9ALPHA"))
