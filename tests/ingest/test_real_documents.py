"""What people actually upload: PDF text as a reader sees it (ligatures, hyphenation, word
spaces, running headers and footers, tables, form fields, comments), text encodings, and
the real sample documents in ../shared/realfiles (skipped cleanly when absent).

Every fixture is generated here from made-up text, so each test names the defect it pins.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.chunker import chunk_document
from ingest.models import PARSER_VERSION
from ingest.normalize import normalize_text
from ingest.parse import decode_text, join_lines, parse_bytes, parse_file, parser_lineage
from tests.fakes import docs

REAL = Path(__file__).resolve().parents[3] / "shared" / "realfiles"


def hand_pdf(pages: list[bytes], extra: list[bytes] | None = None, catalog: bytes = b"") -> bytes:
    """A PDF written by hand: one content stream per page (Helvetica as /F1, and as /F2 in
    StandardEncoding), `extra` objects numbered after the pages (the first is 5 + 2 * pages),
    all of them annotations of page 1."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    ligatures = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /StandardEncoding >>"
    )
    kids = b" ".join(b"%d 0 R" % (5 + 2 * i) for i in range(len(pages)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R %s >>" % catalog,
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages)),
        font,
        ligatures,
    ]
    annots = extra or []
    first_extra = 5 + 2 * len(pages)
    for i, content in enumerate(pages):
        refs = (
            b" ".join(b"%d 0 R" % (first_extra + j) for j in range(len(annots))) if i == 0 else b""
        )
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >>"
            b" /Contents %d 0 R /Annots [%s] >>" % (6 + 2 * i, refs)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    objects += annots
    return docs.pdf_of_objects(objects)


def lines(*rows: tuple[float, bytes], size: int = 11) -> bytes:
    return b"\n".join(b"BT /F1 %d Tf 72 %g Td (%s) Tj ET" % (size, y, text) for y, text in rows)


# ----------------------------------------------------------------------------- normalisation


def test_one_normalisation_for_index_and_query() -> None:
    assert normalize_text("De\ufb01nition \uff21\uff22\uff23 \uff11\uff12") == "Definition ABC 12"
    assert normalize_text("minus\x00sign\x07 tab\tkept\n") == "minussign tab\tkept\n"
    # the punctuation Chinese is written with stays full-width
    assert normalize_text("甲方，乙方！（附件）") == "甲方，乙方！（附件）"


def test_pdf_ligatures_and_control_characters_become_searchable_text() -> None:
    """Helvetica's StandardEncoding has the fi and fl ligature glyphs at 0xAE and 0xAF."""
    content = (
        b"BT /F2 11 Tf 72 700 Td (De\\256nition of the \\257ow, in \\256ve \\256les.) Tj ET\n"
        + lines((680, b"value A\x00B"))
    )
    doc = parse_bytes(hand_pdf([content]), "lig.pdf")
    assert "Definition of the flow, in five files." in doc.text
    assert "\ufb01" not in doc.text and "\x00" not in doc.text and "value A" in doc.text


# ----------------------------------------------------------------------------- PDF layout


def test_words_positioned_without_spaces_keep_their_spaces() -> None:
    """TeX sets word gaps by moving the pen (TJ offsets), not with a space character."""
    content = b"BT /F1 11 Tf 72 700 Td [(higher) -400 (than) -400 (that) -400 (of)] TJ ET"
    assert "higher than that of" in parse_bytes(hand_pdf([content]), "tex.pdf").text


def test_line_end_hyphenation_is_joined_unless_the_document_hyphenates_the_word() -> None:
    content = lines(
        (700, b"The reading room of the li-"),
        (686, b"brary opens early. It is a well-"),
        (672, b"known place, and well-known to all."),
    )
    text = parse_bytes(hand_pdf([content]), "hyphen.pdf").text
    assert "library opens early" in text
    assert "a well-known place" in text


def test_running_headers_and_footers_are_metadata_not_text() -> None:
    pages = [
        lines(
            (760, b"Model R-12 Service Manual V2.1"),
            (640, b"Section %d explains part %d of the machine." % (n, n)),
            (626, b"Every section is different from the others."[: 20 + n]),
            (40, b"Page %d of 5" % n),
        )
        for n in range(1, 6)
    ]
    doc = parse_bytes(hand_pdf(pages), "manual.pdf")
    assert "Service Manual" not in doc.text and "of 5" not in doc.text
    assert doc.furniture == ["Model R-12 Service Manual V2.1", "Page 1 of 5"]
    assert "Section 3 explains part 3 of the machine." in doc.text
    assert {b.page for b in doc.blocks} == {1, 2, 3, 4, 5}


def test_two_page_document_keeps_lines_it_cannot_prove_are_furniture() -> None:
    pages = [lines((760, b"Same first line"), (700, b"Body %d" % n)) for n in (1, 2)]
    assert "Same first line" in parse_bytes(hand_pdf(pages), "memo.pdf").text


def test_table_rows_have_cell_separators_and_are_never_split() -> None:
    header = b"BT /F1 10 Tf 72 700 Td (Item) Tj 150 0 Td (Spec) Tj 150 0 Td (Qty) Tj ET"
    rows = [
        b"BT /F1 10 Tf 72 %d Td (Part-%02d) Tj 150 0 Td (M%d x %d mm) Tj 150 0 Td (%d pcs) Tj ET"
        % (686 - 14 * i, i, i, 10 + i, 5 * i)
        for i in range(40)
    ]
    content = b"\n".join([lines((740, b"Bill of materials")), header, *rows])
    doc = parse_bytes(hand_pdf([content]), "bom.pdf")
    assert "Item | Spec | Qty" in doc.text
    assert "Part-07 | M7 x 17 mm | 35 pcs" in doc.text
    chunks = chunk_document(
        doc, doc_id="bom", doc_version=1, groups=["all"], checksum="x", chunk_tokens=60,
        overlap_tokens=10,
    )  # fmt: skip
    assert len(chunks) > 3
    for chunk in chunks:
        for line in chunk.text.splitlines():
            if "|" in line:
                assert line.count("|") == 2, line  # a whole row, never part of one


def test_form_field_values_and_comments_are_extracted_and_hidden_ones_dropped() -> None:
    widget = (
        b"<< /Type /Annot /Subtype /Widget /FT /Tx /T (Supplier) /V (Northwind Ltd)"
        b" /Rect [72 600 300 620] /F 4 >>"
    )
    comment = b"<< /Type /Annot /Subtype /Text /Rect [72 560 90 580] /Contents (Check the date) >>"
    hidden = (
        b"<< /Type /Annot /Subtype /Text /Rect [72 540 90 560] /F 2 /Contents (ZX9HIDDENNOTE) >>"
    )
    n = 7  # the first extra object: 5 + 2 * one page
    raw = hand_pdf(
        [lines((700, b"Order form"))],
        [widget, comment, hidden],
        catalog=b"/AcroForm << /Fields [%d 0 R] >>" % n,
    )
    doc = parse_bytes(raw, "form.pdf")
    assert "Supplier: Northwind Ltd" in doc.text
    assert "Comment: Check the date" in doc.text
    assert "ZX9HIDDENNOTE" not in doc.text and doc.hidden_removed > 0


def test_aes_encrypted_pdf_without_a_user_password_opens(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(docs.make_pdf(tmp_path)))
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-256")
    path = tmp_path / "protected.pdf"
    with path.open("wb") as out:
        writer.write(out)
    assert "thirty days" in parse_file(path).text


def test_lineage_names_the_parsers_and_changes_make_documents_re_ingest() -> None:
    lineage = parser_lineage("a.pdf")
    assert lineage.startswith(PARSER_VERSION) and "pypdfium2-" in lineage
    assert parser_lineage("a.docx") != lineage
    doc = parse_bytes(hand_pdf([lines((700, b"Lineage"))]), "a.pdf")
    assert doc.parser == lineage


# ----------------------------------------------------------------------------- encodings


def test_western_european_text_is_not_read_as_central_european() -> None:
    text = "Le café est très bon, à côté de la forêt. Élève numéro deux, déjà vu."
    assert decode_text(text.encode("cp1252")) == text
    html = f"<html><body><p>{text}</p></body></html>".encode("cp1252")
    assert text in parse_bytes(html, "page.html").text


def test_central_european_text_still_decodes() -> None:
    text = "Příliš žluťoučký kůň úpěl ďábelské ódy. Čeština není těžká."
    assert decode_text(text.encode("cp1250")) == text
    polish = "Zażółć gęślą jaźń. Łódź leży w centrum kraju, a Wrocław na zachodzie."
    assert decode_text(polish.encode("cp1250")) == polish


@pytest.mark.parametrize("codec", ["utf-32", "utf-16-le", "utf-16-be", "utf-32-le"])
def test_wide_unicode_with_or_without_byte_order_mark(codec: str) -> None:
    text = "Delivery within thirty days.\n\n交付期限为三十日。"
    doc = parse_bytes(text.encode(codec), "notes.txt")
    assert doc.text == "Delivery within thirty days.\n\n交付期限为三十日。"


def test_korean_lines_join_with_a_space_chinese_without() -> None:
    assert join_lines("계약 기간은\n삼십 일입니다") == "계약 기간은 삼십 일입니다"
    assert join_lines("合同期限为\n三十日") == "合同期限为三十日"


# ----------------------------------------------------------------------------- real files


def real(name: str) -> Path:
    path = REAL / name
    if not path.exists():
        pytest.skip(f"{path} not present (../shared/realfiles)")
    return path


def test_real_utf16_without_bom_and_latin1_markdown() -> None:
    assert "unit tests" in parse_file(real("fake-text-utf-16-le.txt")).text
    assert "können" in parse_file(real("umlauts-non-utf8.md")).text


def test_real_list_items_are_separate_paragraphs() -> None:
    doc = parse_file(real("list-item-example.pdf"))
    items = [b.text for b in doc.blocks if b.text.startswith("●")]
    assert len(items) >= 10
    assert all(item.count("●") == 1 for item in items)


def test_real_ocr_layer_of_a_scanned_article_is_kept() -> None:
    doc = parse_file(real("a1977-backus-p21.pdf"))
    assert "functional forms" in doc.text
    assert "\ufffe" not in doc.text and "definition" in doc.text


def test_real_pdfs_with_cid_fonts_and_rotation_read_in_order() -> None:
    assert "embedded CMap" in parse_file(real("embedded-cmap-cidfont.pdf")).text
    doc = parse_file(real("rotated-page-90.pdf"))
    assert doc.text.index("Rotated page") < doc.text.index("Second line")


def test_real_duplicate_page_keeps_both_page_numbers() -> None:
    doc = parse_file(real("fake-memo-with-duplicate-page.pdf"))
    assert {b.page for b in doc.blocks} == {1, 2}


# ----------------------------------------------------------------------------- review cases


def test_body_lines_that_differ_only_in_numbers_are_not_furniture() -> None:
    """Report pages whose first and last lines share wording but not the page's number."""
    figures = [17, 4, 230, 56, 9]
    pages = [
        lines(
            (770, b"Region %d: quarterly sales" % (n * 3 + 1)),
            (640, b"Sales rose on page body %d." % n),
            (30, b"Region %d sold %d units" % (n * 3 + 1, figures[n])),
        )
        for n in range(5)
    ]
    doc = parse_bytes(hand_pdf(pages), "report.pdf")
    assert doc.furniture == []
    assert "Region 13: quarterly sales" in doc.text and "Region 7 sold 230 units" in doc.text


def test_page_numbers_and_chapter_headers_follow_the_page_even_when_numbering_restarts() -> None:
    pages = []
    for n in range(1, 7):
        printed = n if n <= 3 else n - 3  # the body restarts at 1 after three front pages
        pages.append(
            lines(
                (770, b"Chapter %d: Setup %d" % (1 if n <= 3 else 2, printed)),
                (640, b"Body text of page %d, all different words %s." % (n, b"x" * n)),
                (30, b"- %d -" % printed),
            )
        )
    doc = parse_bytes(hand_pdf(pages), "guide.pdf")
    assert "Chapter" not in doc.text and "- 2 -" not in doc.text
    assert "Body text of page 5" in doc.text


def test_repeated_table_header_row_stays_in_the_text() -> None:
    header = b"BT /F1 10 Tf 72 770 Td (Item) Tj 150 0 Td (Spec) Tj 150 0 Td (Qty) Tj ET"
    pages = [
        header + b"\n" + b"BT /F1 10 Tf 72 750 Td (P-%d) Tj 150 0 Td (M%d) Tj 150 0 Td (%d) Tj ET"
        % (n, n, n * 7)
        + b"\n" + b"BT /F1 10 Tf 72 736 Td (Q-%d) Tj 150 0 Td (N%d) Tj 150 0 Td (%d) Tj ET"
        % (n, n, n * 9)
        for n in range(4)
    ]  # fmt: skip
    doc = parse_bytes(hand_pdf(pages), "parts.pdf")
    assert doc.text.count("Item | Spec | Qty") == 4


def test_a_far_right_column_stays_in_its_row() -> None:
    """PDFium starts a new line before text far to the right on the same baseline."""
    rows = [(b"Travel", b"3", b"300.00"), (b"Hotel", b"2", b"840.00"), (b"Meals", b"5", b"95.50")]
    content = b"\n".join(
        b"BT /F1 10 Tf 1 0 0 1 72 %d Tm (%s) Tj 1 0 0 1 330 %d Tm (%s) Tj"
        b" 1 0 0 1 480 %d Tm (%s) Tj ET" % (700 - 14 * i, a, 700 - 14 * i, b, 700 - 14 * i, c)
        for i, (a, b, c) in enumerate(rows)
    )
    doc = parse_bytes(hand_pdf([content]), "invoice.pdf")
    assert "Travel | 3 | 300.00" in doc.text and "Meals | 5 | 95.50" in doc.text


def test_numbered_first_cell_does_not_shift_the_columns() -> None:
    content = b"\n".join(
        b"BT /F1 10 Tf 72 %d Td (%s) Tj 150 0 Td (%s) Tj 150 0 Td (%s) Tj ET" % (700 - 14 * i, *r)
        for i, r in enumerate([(b"No.", b"Item", b"Qty"), (b"1.", b"Bolt", b"12"), (b"2.", b"Nut", b"30")])
    )  # fmt: skip
    doc = parse_bytes(hand_pdf([content]), "list.pdf")
    assert "No. | Item | Qty" in doc.text and "1. | Bolt | 12" in doc.text


def test_hyphenated_compounds_at_line_ends_keep_their_hyphen() -> None:
    content = lines(
        (700, b"The self-service desk offers service to self-"),
        (686, b"service users. A state-of-the-"),
        (672, b"art e-"),
        (658, b"mail system checks ISO-"),
        (644, b"9001 and the li-"),
        (630, b"brary catalogue."),
    )
    text = parse_bytes(hand_pdf([content]), "desk.pdf").text
    for expected in ("to self-service users", "state-of-the-art", "e-mail", "ISO-9001", "library"):
        assert expected in text, (expected, text)


def test_hidden_pdf_text_the_engine_switch_must_not_let_through() -> None:
    content = b"\n".join([
        b"BT /F1 12 Tf 72 700 Td (KEEPVISIBLE plain text) Tj ET",
        b"q 1 1 1 RG BT /F1 12 Tf 1 Tr 72 680 Td (ZX9STROKEWHITE) Tj ET Q",
        b"q BT /F1 12 Tf 0.01 0 0 1 72 660 Tm (ZX9SQUASHED) Tj ET Q",
        b"BT /F1 12 Tf 0 0 0 rg 2 Tr 72 640 Td (KEEPFILLSTROKE visible) Tj ET",
    ])  # fmt: skip
    doc = parse_bytes(hand_pdf([content]), "ink.pdf")
    assert "ZX9" not in doc.text
    assert "KEEPVISIBLE" in doc.text and "KEEPFILLSTROKE" in doc.text
    assert doc.hidden_removed >= len("ZX9STROKEWHITE") + len("ZX9SQUASHED")


def test_annotations_a_viewer_does_not_show_as_comments_are_not_text() -> None:
    extra = [
        b"<< /Type /Annot /Subtype /Link /Rect [72 600 200 620] /Contents (ZX9LINK) >>",
        b"<< /Type /Annot /Subtype /Text /Rect [72 560 90 580] /F 1 /Contents (ZX9INVISIBLE) >>",
        b"<< /Type /Annot /Subtype /Text /Rect [5000 5000 5020 5020] /Contents (ZX9OFFPAGE) >>",
        b"<< /Type /Annot /Subtype /Text /Rect [72 540 72 540] /Contents (ZX9ZERO) >>",
        b"<< /Type /Annot /Subtype /Text /Rect [72 520 90 540] /Contents (KEEPNOTE) >>",
    ]
    doc = parse_bytes(hand_pdf([lines((700, b"Annotated"))], extra), "notes.pdf")
    assert "ZX9" not in doc.text and "Comment: KEEPNOTE" in doc.text


def test_superscripts_and_fractions_keep_their_meaning() -> None:
    assert normalize_text("2³ = 8, ½ cup, H₂O") == "2³ = 8, ½ cup, H₂O"


def test_french_with_typographic_apostrophes_reads_as_cp1252() -> None:
    text = "C’est l’été : le café est très bon, à côté de la forêt."
    assert decode_text(text.encode("cp1252")) == text


def test_a_document_parsed_by_an_older_parser_re_ingests_and_then_is_unchanged(
    tmp_path: Path,
) -> None:
    from ingest.config import IngestConfig
    from ingest.pipeline import ingest_bytes
    from tests.fakes.memory_store import MemoryStore

    store = MemoryStore()
    data = hand_pdf([lines((700, b"Lineage decides re-ingest"))])
    config = IngestConfig()
    assert ingest_bytes(data, "a.pdf", store, config=config).status == "ingested"
    assert ingest_bytes(data, "a.pdf", store, config=config).status == "skipped"
    row = next(iter(store.backing.manifest.values()))
    row["parser"] = "parse-2"  # what an older release recorded
    again = ingest_bytes(data, "a.pdf", store, config=config)
    assert again.status == "ingested" and again.version == 2
    assert ingest_bytes(data, "a.pdf", store, config=config).status == "skipped"


def test_a_text_layer_with_lone_surrogates_parses_in_the_worker_and_stays_searchable() -> None:
    """A real arXiv PDF whose text layer holds lone surrogates once crashed the parser worker
    (its reply could not be encoded as UTF-8); each becomes U+FFFD, offsets unchanged."""
    path = REAL / "arxiv-2201.00069.pdf"
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared/realfiles)")
    doc = parse_bytes(path.read_bytes(), path.name, timeout_s=120)
    doc.model_dump_json().encode("utf-8")  # valid UTF-8 all through
    assert "MeerKAT" in doc.text and len(doc.text) > 5000
    chunks = chunk_document(doc, doc_id="d", doc_version=1, groups=["all"], checksum="c")
    assert all(c.text == doc.text[c.start_char : c.end_char] for c in chunks)


def test_valid_text_keeps_every_offset() -> None:
    from ingest.parse.formats import valid_text

    text = "a\ud835b c"
    assert valid_text(text) == "a\ufffdb c" and len(valid_text(text)) == len(text)
    assert valid_text({"t": [text]}) == {"t": ["a\ufffdb c"]}
