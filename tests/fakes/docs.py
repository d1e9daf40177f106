"""Generators for real sample files of every supported format, good and bad.

Each `make_*` writes a file under the given folder and returns its path, so tests exercise
the real parsers on real bytes (fpdf2 for PDF, python-docx for DOCX).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

EN_PARAGRAPHS = [
    "The supplier shall deliver the goods within thirty days. Late delivery incurs a penalty.",
    "The penalty is two percent of the order value per week. It is capped at ten percent.",
]
ZH_PARAGRAPHS = [
    "甲方应在三十日内交付货物。逾期交付的，应支付违约金。",
    "违约金为每周合同金额的百分之二！累计不超过百分之十。",
]


def _font_path() -> str | None:
    """A TTF with CJK glyphs if the system has one (fpdf2 core fonts are Latin-1 only)."""
    for candidate in (
        "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
        "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    ):
        if Path(candidate).exists():
            return candidate
    return None


def make_pdf(
    folder: Path,
    name: str = "manual.pdf",
    pages: Sequence[Sequence[str]] | None = None,
    *,
    title: str | None = "Supply Manual",
    password: str | None = None,
) -> Path:
    """A multi-page PDF, one list of paragraphs per page; optionally encrypted."""
    from fpdf import FPDF

    pages = pages or [
        ["Chapter one covers delivery.", EN_PARAGRAPHS[0]],
        ["Chapter two covers penalties.", EN_PARAGRAPHS[1]],
        ["Chapter three covers the warranty. The warranty lasts two years."],
    ]
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    if title:
        pdf.set_title(title)
    for paragraphs in pages:
        pdf.add_page()
        for para in paragraphs:
            pdf.multi_cell(0, 6, para)
            pdf.ln(6)
    path = folder / name
    data = bytes(pdf.output())
    if password:
        data = encrypt_pdf(data, password)
    path.write_bytes(data)
    return path


def make_pdf_with_bookmarks(folder: Path, name: str = "handbook.pdf") -> Path:
    """Three pages with an outline (bookmarks), one section starting mid-page, one nested."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)

    def para(text: str) -> None:
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)

    pdf.add_page()
    pdf.start_section("1 Delivery", 0)
    para("1 Delivery")
    para("Goods ship in thirty days. Delivery is free of charge.")
    pdf.add_page()
    para("Still about delivery: the carrier is chosen by the supplier.")
    pdf.start_section("2 Penalties", 0)
    para("2 Penalties")
    para("Penalties apply to late delivery. Late delivery costs two percent per week.")
    pdf.start_section("2.1 Caps", 1)
    para("2.1 Caps")
    para("The total is capped at ten percent.")
    pdf.add_page()
    pdf.start_section("Annex", 0)
    para("Nothing titled on this page.")
    path = folder / name
    path.write_bytes(bytes(pdf.output()))
    return path


def encrypt_pdf(data: bytes, password: str) -> bytes:
    """The same PDF encrypted with a user password (pypdf)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(
    folder: Path,
    name: str = "policy.docx",
    *,
    title: str | None = "Travel Policy",
    chinese: bool = False,
) -> Path:
    """A DOCX with Heading 1/2 styles, paragraphs and a table in the middle."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    paras = ZH_PARAGRAPHS if chinese else EN_PARAGRAPHS
    document.add_heading("Delivery" if not chinese else "交付", level=1)
    document.add_paragraph(paras[0])
    document.add_heading("Rates" if not chinese else "费率", level=2)
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate(
        [["City", "Hotel", "Meals"], ["Beijing", "800", "200"], ["Shanghai", "900", "220"]]
    ):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("Rates are reviewed every year.")
    document.add_heading("Penalties" if not chinese else "违约", level=1)
    document.add_paragraph(paras[1])
    path = folder / name
    document.save(str(path))
    return path


MARKDOWN_SAMPLE = """# Operations Runbook

Intro paragraph that is
wrapped over two lines.

## Restart

1. Stop the service.
2. Start it again.

```bash
systemctl restart app
systemctl status app
```

Setext Section
--------------

| Host | Role |
| --- | --- |
| db1 | primary |
| db2 | replica |

### 中文小节

重启前请通知值班人员。完成后记录工单号！
"""


def make_markdown(folder: Path, name: str = "runbook.md", text: str = MARKDOWN_SAMPLE) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


HTML_SAMPLE = """<!doctype html>
<html><head><title>Page Title</title><style>.x{color:red}</style>
<script>var secret = "SCRIPT_TEXT";</script></head>
<body>
<h1>Handbook</h1>
<p>Visible <b>intro</b> text.</p>
<div hidden>HIDDEN_ATTR</div>
<div style="display: none">HIDDEN_DISPLAY</div>
<p style="visibility:hidden">HIDDEN_VISIBILITY</p>
<span aria-hidden="true">HIDDEN_ARIA</span>
<noscript>NOSCRIPT_TEXT</noscript>
<template><p>TEMPLATE_TEXT</p></template>
<h2>Prices</h2>
<table><tr><th>Item</th><th>Price</th></tr>
<tr><td>Apple</td><td>3</td></tr>
<tr style="display:none"><td>HIDDEN_ROW</td><td>0</td></tr>
<tr><td>Pear</td><td>4</td></tr></table>
<h3>Notes</h3>
<ul><li>First note.</li><li>Second note.</li></ul>
<!-- COMMENT_TEXT -->
</body></html>
"""


def make_html(folder: Path, name: str = "handbook.html", text: str = HTML_SAMPLE) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def make_txt(
    folder: Path, name: str = "notes.txt", text: str | None = None, encoding: str = "utf-8"
) -> Path:
    """Plain text in utf-8, utf-8-sig, gb18030, gbk or any other codec."""
    text = text if text is not None else "\n\n".join(ZH_PARAGRAPHS + EN_PARAGRAPHS)
    path = folder / name
    path.write_bytes(text.encode(encoding))
    return path


# ----------------------------------------------------------------------------- bad files


def make_corrupt_pdf(folder: Path, name: str = "broken.pdf") -> Path:
    path = folder / name
    path.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage garbage\n" * 3)
    return path


def make_encrypted_pdf(folder: Path, name: str = "secret.pdf") -> Path:
    return make_pdf(folder, name, password="s3cret")


def make_corrupt_docx(folder: Path, name: str = "broken.docx") -> Path:
    path = folder / name
    path.write_bytes(b"PK\x03\x04 this is not really a zip archive" * 10)
    return path


def make_zip_docx_without_document(folder: Path, name: str = "hollow.docx") -> Path:
    """A valid zip that is not a Word document."""
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a document")
    return path


def make_zip_bomb_docx(folder: Path, name: str = "bomb.docx", inflated_mb: int = 24) -> Path:
    """A tiny zip whose member inflates ~1000x (zeros); the ratio alone must trip the guard."""
    path = folder / name
    chunk = b"\0" * (1024 * 1024)
    archive = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9)
    with archive, archive.open("word/document.xml", "w", force_zip64=True) as member:
        for _ in range(inflated_mb):
            member.write(chunk)
    return path


def make_binary_txt(folder: Path, name: str = "image.txt") -> Path:
    path = folder / name
    path.write_bytes(bytes(range(256)) * 64)
    return path


def make_empty(folder: Path, name: str = "empty.txt", content: bytes = b"") -> Path:
    path = folder / name
    path.write_bytes(content)
    return path


def make_oversize(folder: Path, name: str = "big.txt", size_bytes: int = 2 * 1024 * 1024) -> Path:
    path = folder / name
    line = b"This line repeats to make a large but valid text file.\n"
    path.write_bytes(line * (size_bytes // len(line) + 1))
    return path


def make_unsupported(folder: Path, name: str = "table.xyz") -> Path:
    path = folder / name
    path.write_bytes(b"some content")
    return path


def make_undecodable_txt(folder: Path, name: str = "mangled.txt") -> Path:
    """High bytes that are valid in no common text encoding together with UTF-8 fragments."""
    path = folder / name
    path.write_bytes(("正常文字" * 3).encode("utf-8") + bytes([0xFF, 0xFE, 0xFD, 0x80]) * 40)
    return path
