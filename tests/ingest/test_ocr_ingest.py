"""Scans through the whole parser: a PDF page with no text layer and an image upload are
read by OCR (page numbers kept, the lineage says so), progress is reported page by page across
the worker process, and a scan gets the OCR deadline instead of the parse deadline.

The scans are rendered here from text this test writes, so what OCR must find is known.
"""

from __future__ import annotations

import difflib
import io
from pathlib import Path

import pytest

from ingest.errors import IngestError
from ingest.models import parse_notes
from ingest.parse import parse_bytes

PAGES = [
    ["Delivery Terms", "The supplier ships every order within ten working days.",
     "Late orders earn a discount of two percent per week."],
    ["Warranty", "Every pump carries a warranty of three years from delivery.",
     "Claims go to the service desk in writing."],
]  # fmt: skip


def _text_pdf(pages: list[list[str]]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    for lines in pages:
        pdf.add_page()
        pdf.set_font("helvetica", size=16)
        for line in lines:
            pdf.multi_cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
    return bytes(pdf.output())


def _page_images(data: bytes, dpi: int = 150) -> list[bytes]:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(data)
    images = []
    for page in pdf:
        out = io.BytesIO()
        page.render(scale=dpi / 72).to_pil().save(out, format="PNG")
        images.append(out.getvalue())
    return images


def scanned_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose pages are pictures of text: no text layer at all."""
    from fpdf import FPDF

    pdf = FPDF()
    for image in _page_images(_text_pdf(pages)):
        pdf.add_page()
        pdf.image(io.BytesIO(image), x=0, y=0, w=pdf.w, h=pdf.h)
    return bytes(pdf.output())


def similarity(found: str, expected: str) -> float:
    return difflib.SequenceMatcher(None, found.casefold(), expected.casefold()).ratio()


@pytest.fixture(scope="module")
def scan() -> bytes:
    return scanned_pdf(PAGES)


def test_scanned_pdf_is_read_by_ocr_with_its_page_numbers(scan: bytes) -> None:
    doc = parse_bytes(scan, "scan.pdf")
    assert doc.ocr_pages == [1, 2]
    assert " ocr=rapidocr-onnxruntime-" in doc.parser
    for number, lines in enumerate(PAGES, start=1):
        page_text = " ".join(b.text for b in doc.blocks if b.page == number)
        assert similarity(page_text, " ".join(lines)) >= 0.9, page_text
    assert "three years" in doc.text
    assert parse_notes(doc.parser, doc.ocr_pages) == "text from OCR (2 pages)"


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_progress_crosses_the_worker_and_the_scan_gets_the_ocr_deadline() -> None:
    long_scan = scanned_pdf(PAGES * 4)  # 8 pages: OCR takes several seconds on 2 cores
    seen: list[tuple[str, int, int]] = []
    doc = parse_bytes(
        long_scan, "scan.pdf", timeout_s=2, ocr_timeout_s=300,
        on_page=lambda stage, done, total: seen.append((stage, done, total)),
    )  # fmt: skip
    assert seen == [("ocr", n, 8) for n in range(1, 9)]
    assert doc.ocr_pages == list(range(1, 9))
    # without the OCR allowance the same file misses the parse deadline
    with pytest.raises(IngestError, match="longer than 2 s"):
        parse_bytes(long_scan, "scan.pdf", timeout_s=2, ocr_timeout_s=2)


class PageRerun(BaseException):
    """What Streamlit raises inside a callback when the user interacts mid-upload."""


def test_an_interrupted_parse_never_hands_its_reply_to_the_next_file(scan: bytes) -> None:
    def interrupt(stage: str, done: int, total: int) -> None:
        raise PageRerun

    with pytest.raises(PageRerun):
        parse_bytes(scan, "scan.pdf", timeout_s=30, ocr_timeout_s=120, on_page=interrupt)
    doc = parse_bytes(b"# Next file\n\nIts own text.", "next.md", timeout_s=30)
    assert doc.source == "next.md" and "Its own text." in doc.text


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_a_failing_progress_display_does_not_stop_the_parse(scan: bytes) -> None:
    def broken(stage: str, done: int, total: int) -> None:
        raise RuntimeError("display gone")

    doc = parse_bytes(scan, "scan.pdf", timeout_s=30, ocr_timeout_s=120, on_page=broken)
    assert doc.ocr_pages == [1, 2]


def test_image_upload_is_read_as_page_one() -> None:
    image = _page_images(_text_pdf(PAGES[1:]))[0]
    for name, data in (("warranty.png", image), ("warranty.jpg", _jpeg(image))):
        doc = parse_bytes(data, name)
        assert doc.ocr_pages == [1] and {b.page for b in doc.blocks} == {1}
        assert similarity(" ".join(b.text for b in doc.blocks), " ".join(PAGES[1])) >= 0.9


def _jpeg(png: bytes) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(out, format="JPEG", quality=85)
    return out.getvalue()


def test_broken_image_is_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="image"):
        parse_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "broken.png")


def test_a_page_with_a_text_layer_is_not_ocred() -> None:
    doc = parse_bytes(_text_pdf(PAGES), "typed.pdf")
    assert doc.ocr_pages == [] and " ocr=" not in doc.parser


def test_a_scanned_table_is_read_as_table_rows_with_its_empty_cell() -> None:
    """A table in a scan (each cell its own box, columns set well apart) comes out as table
    rows under their header, an empty cell kept in its column; the lines around it as text."""
    import io

    from PIL import Image, ImageDraw, ImageFont

    from ingest.parse.image import parse_image

    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 28)
    image = Image.new("RGB", (1400, 600), "white")
    draw = ImageDraw.Draw(image)
    draw.text((80, 60), "Cranes in service this week, by bay.", font=font, fill="black")
    rows = [["Bay", "Crane", "Operator", "Load"], ["B1", "Otter", "Lena Varga", "12 t"],
            ["B2", "Heron", "Ivo Kranjc", "30 t"], ["B3", "Kite", "", "8 t"]]  # fmt: skip
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            draw.text((80 + 320 * c, 160 + 60 * r), cell, font=font, fill="black")
    data = io.BytesIO()
    image.save(data, format="PNG")
    doc = parse_image(data.getvalue(), "cranes.png")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("text", "Cranes in service this week, by bay."),
        ("table", "Bay | Crane | Operator | Load"),
        ("table", "B1 | Otter | Lena Varga | 12 t"),
        ("table", "B2 | Heron | Ivo Kranjc | 30 t"),
        ("table", "B3 | Kite |  | 8 t"),
    ]
