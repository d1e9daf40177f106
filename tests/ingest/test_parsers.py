"""Parsers on real files of every format, and the bad-input matrix at the parser level."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ingest.errors import IngestError
from ingest.models import ParsedDocument
from ingest.parse import SUPPORTED_EXTENSIONS, decode_text, parse_bytes, parse_file, safe_source
from tests.fakes import docs


def assert_offsets(doc: ParsedDocument) -> None:
    """Every block's offsets index the document text exactly, in order."""
    last = 0
    for block in doc.blocks:
        assert doc.text[block.start_char : block.end_char] == block.text
        assert block.start_char >= last
        last = block.end_char


def test_pdf_keeps_pages_and_metadata_title(tmp_path: Path) -> None:
    doc = parse_file(docs.make_pdf(tmp_path))
    assert_offsets(doc)
    assert doc.source == "manual.pdf"
    assert doc.title == "Supply Manual"
    pages = {b.page for b in doc.blocks}
    assert pages == {1, 2, 3}
    penalty = next(b for b in doc.blocks if "two percent" in b.text)
    assert penalty.page == 2
    assert "warranty lasts two years" in doc.text


def test_pdf_bookmarks_become_section_paths(tmp_path: Path) -> None:
    doc = parse_file(docs.make_pdf_with_bookmarks(tmp_path))
    assert_offsets(doc)
    where = {b.text: (b.page, b.kind, " > ".join(b.section_path)) for b in doc.blocks}
    assert where["1 Delivery"] == (1, "heading", "1 Delivery")
    assert where["Still about delivery: the carrier is chosen by the supplier."] == (
        2, "text", "1 Delivery",
    )  # fmt: skip
    # a body line that merely starts with a title word is not mistaken for the heading
    penalties = "Penalties apply to late delivery. Late delivery costs two percent per week."
    assert where[penalties] == (2, "text", "2 Penalties")
    assert where["The total is capped at ten percent."] == (2, "text", "2 Penalties > 2.1 Caps")
    assert where["Nothing titled on this page."] == (3, "text", "Annex")


def test_pdf_table_row_with_a_wrapped_cell_is_one_row(tmp_path: Path) -> None:
    """Each piece of a row goes to its column, whatever order the PDF writes them in: the
    wrapped name is one cell and the price stays on its row."""
    doc = parse_file(docs.make_pdf_wrapped_table(tmp_path))
    assert_offsets(doc)
    rows = [b.text for b in doc.blocks if b.kind == "table"]
    assert rows == [
        "Code | Part | Supplier | Unit price",
        "KX-100 | Pump seal | Norrow | 1,250",
        "KX-200 | Detector cooling fan assembly | Ostrel | 4,860",
        "KX-300 | Valve | Norrow | 310",
    ]
    assert "Prices include delivery to the main warehouse." in doc.text


def test_pdf_without_title_falls_back_to_file_stem(tmp_path: Path) -> None:
    doc = parse_file(docs.make_pdf(tmp_path, "q3-report.pdf", title=None))
    assert doc.title == "q3-report"


def test_docx_headings_become_section_paths_and_tables_stay_in_order(tmp_path: Path) -> None:
    doc = parse_file(docs.make_docx(tmp_path))
    assert_offsets(doc)
    assert doc.title == "Travel Policy"
    kinds = [(b.kind, b.text) for b in doc.blocks]
    rows = [text for kind, text in kinds if kind == "table"]
    assert rows == ["City | Hotel | Meals", "Beijing | 800 | 200", "Shanghai | 900 | 220"]
    texts = [text for _, text in kinds]
    # the table sits between the "Rates" heading and the paragraph after it
    assert (
        texts.index("Rates") < texts.index(rows[0]) < texts.index("Rates are reviewed every year.")
    )
    beijing = next(b for b in doc.blocks if b.text.startswith("Beijing"))
    assert beijing.section_path == ["Delivery", "Rates"]
    penalty = next(b for b in doc.blocks if "two percent" in b.text)
    assert penalty.section_path == ["Penalties"]
    assert "Beijing | 800 | 200\nShanghai | 900 | 220" in doc.text


def test_docx_chinese_without_core_title_uses_first_heading_or_stem(tmp_path: Path) -> None:
    doc = parse_file(docs.make_docx(tmp_path, "合同.docx", title=None, chinese=True))
    assert doc.title == "交付"
    assert any(b.section_path == ["交付", "费率"] for b in doc.blocks)
    assert "违约金为每周合同金额的百分之二！" in doc.text


def test_markdown_headings_tables_code_and_wrapped_lines(tmp_path: Path) -> None:
    doc = parse_file(docs.make_markdown(tmp_path))
    assert_offsets(doc)
    assert doc.title == "Operations Runbook"
    by_text = {b.text: b for b in doc.blocks}
    assert "Intro paragraph that is wrapped over two lines." in by_text
    assert by_text["Setext Section"].kind == "heading"
    assert by_text["db1 | primary"].kind == "table"
    assert by_text["db1 | primary"].section_path == ["Operations Runbook", "Setext Section"]
    assert "Host | Role\ndb1 | primary\ndb2 | replica" in doc.text
    code = next(b for b in doc.blocks if b.kind == "code")
    assert code.text == "systemctl restart app\nsystemctl status app"
    zh = next(b for b in doc.blocks if b.text.startswith("重启前"))
    assert zh.section_path == ["Operations Runbook", "Setext Section", "中文小节"]
    assert "---" not in doc.text


def test_html_drops_scripts_and_hidden_elements(tmp_path: Path) -> None:
    doc = parse_file(docs.make_html(tmp_path))
    assert_offsets(doc)
    assert doc.title == "Handbook"
    for marker in (
        "SCRIPT_TEXT", "HIDDEN_ATTR", "HIDDEN_DISPLAY", "HIDDEN_VISIBILITY", "HIDDEN_ARIA",
        "NOSCRIPT_TEXT", "TEMPLATE_TEXT", "HIDDEN_ROW", "COMMENT_TEXT", "color:red",
    ):  # fmt: skip
        assert marker not in doc.text, marker
    assert "Visible intro text." in doc.text
    rows = [b.text for b in doc.blocks if b.kind == "table"]
    assert rows == ["Item | Price", "Apple | 3", "Pear | 4"]
    note = next(b for b in doc.blocks if b.text == "- Second note.")  # a list item stays one
    assert note.section_path == ["Handbook", "Prices", "Notes"]


def test_html_list_items_keep_their_numbers_and_bullets() -> None:
    html = (
        "<h2>Returns</h2><ol start='2'><li>Open a request.<ul><li>Photos help.</li></ul></li>"
        "<li>Pack the part.</li></ol><p>Done.</p>"
    )
    doc = parse_bytes(html.encode(), "returns.html")
    assert [b.text for b in doc.blocks] == [
        "Returns", "2. Open a request.", "- Photos help.", "3. Pack the part.", "Done.",
    ]  # fmt: skip


def test_html_title_tag_when_there_is_no_h1(tmp_path: Path) -> None:
    html = "<html><head><title>规章制度</title></head><body><p>第一条 总则。</p></body></html>"
    doc = parse_bytes(html.encode("utf-8"), "rules.htm")
    assert doc.title == "规章制度"
    assert doc.text == "第一条 总则。"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gb18030", "gbk"])
def test_txt_encodings(tmp_path: Path, encoding: str) -> None:
    doc = parse_file(docs.make_txt(tmp_path, encoding=encoding))
    assert_offsets(doc)
    assert doc.title == "notes"
    assert doc.text.startswith("甲方应在三十日内交付货物。")
    assert "\ufeff" not in doc.text
    assert "Late delivery incurs a penalty." in doc.text
    assert len(doc.blocks) == 4


def test_short_gb18030_text_is_not_mistaken_for_big5() -> None:
    assert decode_text("简体中文测试".encode("gb18030")) == "简体中文测试"
    assert decode_text("违约金".encode("gbk")) == "违约金"


def test_txt_soft_wrapped_lines_are_joined(tmp_path: Path) -> None:
    text = "第一行文字\n接着第二行。\nThe next line\ncontinues here.\n\nNew paragraph."
    doc = parse_bytes(text.encode(), "wrap.txt")
    assert [b.text for b in doc.blocks] == [
        "第一行文字接着第二行。 The next line continues here.",
        "New paragraph.",
    ]


@pytest.mark.parametrize(
    ("maker", "reason"),
    [
        (docs.make_corrupt_pdf, "corrupt PDF"),
        (docs.make_encrypted_pdf, "encrypted PDF"),
        (docs.make_corrupt_docx, "corrupt DOCX"),
        (docs.make_zip_docx_without_document, "corrupt DOCX"),
        (docs.make_zip_bomb_docx, "zip bomb"),
        (docs.make_binary_txt, "binary file, not text"),
        (docs.make_empty, "empty file"),
        (docs.make_unsupported, "unsupported file type .xyz"),
        (docs.make_undecodable_txt, "cannot decode text"),
    ],
)
def test_bad_files_raise_one_line_reasons(tmp_path: Path, maker, reason: str) -> None:
    with pytest.raises(IngestError) as info:
        parse_file(maker(tmp_path))
    message = str(info.value)
    assert reason in message
    assert "\n" not in message


def test_whitespace_only_and_empty_markup_are_empty(tmp_path: Path) -> None:
    for name, content in [
        ("ws.md", b"  \n\n\t \n"),
        ("blank.html", b"<html><body> </body></html>"),
    ]:
        with pytest.raises(IngestError, match="empty file"):
            parse_file(docs.make_empty(tmp_path, name, content))


def test_oversize_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = docs.make_oversize(tmp_path, size_bytes=3 * 1024 * 1024)
    with pytest.raises(IngestError, match=r"file is 3 MB, over the 2 MB limit"):
        parse_file(path, max_bytes=2 * 1024 * 1024)
    with pytest.raises(IngestError, match="over the 2 MB limit"):
        parse_bytes(path.read_bytes(), "big.txt", max_bytes=2 * 1024 * 1024)


def test_unsupported_reason_lists_supported_types() -> None:
    with pytest.raises(IngestError) as info:
        parse_bytes(b"hello", "slides.pptx")
    for ext in SUPPORTED_EXTENSIONS:
        assert ext in str(info.value)


@pytest.mark.parametrize(
    ("uploaded", "expected"),
    [
        ("../../etc/passwd.txt", "passwd.txt"),
        ("C:\\Users\\ann\\合同.docx", "合同.docx"),
        ("/abs/path/notes.md", "notes.md"),
        ("na\x00me.txt", "name.txt"),
    ],
)
def test_source_is_a_base_name_never_a_path(uploaded: str, expected: str) -> None:
    assert safe_source(uploaded) == expected
    if expected.endswith((".txt", ".md")):
        assert parse_bytes(b"hello world.", uploaded).source == expected


def test_source_without_a_name_is_refused() -> None:
    with pytest.raises(IngestError, match="invalid file name"):
        parse_bytes(b"hello", "../..")


def test_worker_parse_matches_inline_parse(tmp_path: Path) -> None:
    for path in (docs.make_pdf(tmp_path), docs.make_docx(tmp_path), docs.make_html(tmp_path)):
        assert parse_file(path, timeout_s=30) == parse_file(path)
    with pytest.raises(IngestError, match="encrypted PDF"):
        parse_file(docs.make_encrypted_pdf(tmp_path), timeout_s=30)


def test_parse_deadline_kills_a_slow_parse_and_recovers(tmp_path: Path) -> None:
    big = docs.make_markdown(tmp_path, "huge.md", "# T\n\n" + "A sentence here. " * 600_000)
    with pytest.raises(IngestError, match="parsing took longer than"):
        parse_file(big, timeout_s=0.05)
    doc = parse_file(docs.make_markdown(tmp_path), timeout_s=30)
    assert doc.title == "Operations Runbook"


def test_markdown_front_matter_is_dropped_and_gives_the_title() -> None:
    text = (
        "---\ntitle: 'Release notes'\ndate: 2024-01-01\n---\n\nSome notes.\n\n## Fixes\n\nOne fix."
    )
    doc = parse_bytes(text.encode(), "notes.md")
    assert doc.title == "Release notes"
    assert "date:" not in doc.text
    assert [b.text for b in doc.blocks] == ["Some notes.", "Fixes", "One fix."]


def test_html_declared_and_undeclared_chinese_encodings() -> None:
    body = "<h1>规章</h1><p>违约金为百分之五。</p>"
    declared = f'<html><head><meta charset="gbk"></head><body>{body}</body></html>'
    assert parse_bytes(declared.encode("gbk"), "a.html").text == "规章\n\n违约金为百分之五。"
    bare = f"<html><body>{body}</body></html>"
    assert parse_bytes(bare.encode("gb18030"), "b.html").title == "规章"
    assert parse_bytes(b"\xef\xbb\xbf" + bare.encode(), "c.html").title == "规章"


def test_old_doc_renamed_to_docx_gets_a_helpful_reason() -> None:
    with pytest.raises(IngestError, match="old Word .doc format"):
        parse_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, "report.docx")


def test_pdf_page_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ingest.parse.pdf

    monkeypatch.setattr(ingest.parse.pdf, "MAX_PDF_PAGES", 2)  # a 2,001-page file is slow to make
    with pytest.raises(IngestError, match="PDF has 3 pages, over the 2-page limit"):
        parse_file(docs.make_pdf(tmp_path))


def test_worker_that_cannot_start_falls_back_to_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from ingest.parse.worker import Worker

    worker = Worker()
    monkeypatch.setattr(sys, "executable", "/bin/false")  # e.g. a frozen or embedded Python
    data = docs.make_markdown(tmp_path).read_bytes()
    doc = worker.parse(data, "runbook.md", ".md", timeout_s=5)
    assert doc.title == "Operations Runbook"
    assert worker.unavailable


def test_copy_protected_aes_pdf_parses(tmp_path: Path) -> None:
    """AES with an empty user password (copy protection only) opens: needs `cryptography`,
    a runtime dependency through pypdf[crypto]."""
    from pypdf import PdfReader, PdfWriter

    plain = docs.make_pdf(tmp_path, "plain.pdf").read_bytes()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(plain)))
    writer.encrypt(user_password="", owner_password="owner-secret", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    doc = parse_bytes(out.getvalue(), "protected.pdf")
    assert "warranty lasts two years" in doc.text
    assert {b.page for b in doc.blocks} == {1, 2, 3}


def test_a_worker_reply_may_hold_only_the_tasks_declared_classes() -> None:
    """The worker reads untrusted files: what it sends back must not run code here."""
    import os
    import pickle

    from ingest.parse.worker import PlainData

    hostile = pickle.dumps(os.system)
    with pytest.raises(pickle.UnpicklingError, match="may not send"):
        PlainData(hostile, {}).load()
    assert PlainData(pickle.dumps({"png": b"x", "boxes": [(1.0, 2.0)]}), {}).load() == {
        "png": b"x",
        "boxes": [(1.0, 2.0)],
    }


def test_a_pdf_set_like_tex_reads_as_typed() -> None:
    """TeX places each word on its own, with no space glyph between them, and hyphenates at
    line ends: the text must come back with its word spaces and the split word whole."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    x = 20.0
    line = "The yield of the second batch was higher than that of the first"
    for word in line.split(" "):
        pdf.text(x, 40, word)  # one text object per word, a gap instead of a space
        x += pdf.get_string_width(word) + 1.4
    pdf.text(20, 46, "batch in every trial, and the differ-")
    pdf.text(20, 52, "ence grew with the temperature.")
    text = parse_bytes(bytes(pdf.output()), "paper.pdf").text
    assert "was higher than that of the first batch" in text
    assert "the difference grew" in text
