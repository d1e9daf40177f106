"""The Admin page's Preview shows the whole document as it is searched (issue 46, item 1):
every section, tables as tables, a long document in parts with Previous / Next; for HTML,
DOCX and Markdown alike. AppTest on a real knowledge base with invented documents."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest.models import Chunk
from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app, texts
from ui.documents import document_parts, table_columns, text_blocks

PAGE = b"""<html><head><title>Quarry yard</title></head><body>
<p>Home / Sites / Quarry yard</p>
<h1>Quarry yard</h1>
<p>The quarry yard at Thornmere keeps three loaders on site.</p>
<h2>Loaders</h2>
<table>
<tr><th>Loader</th><th>Bucket</th><th>Operator</th></tr>
<tr><td>L-7</td><td>4.5 m3</td><td>Idris Vale</td></tr>
<tr><td>L-9</td><td>6 m3</td><td>Noor Castell</td></tr>
</table>
<h2>Closing</h2>
<p>The yard gate closes at dusk on Saturdays.</p>
</body></html>"""


def kit_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Field kit", level=1)
    document.add_paragraph("Every surveyor carries the field kit listed below.")
    table = document.add_table(rows=3, cols=2)
    for r, row in enumerate([["Tool", "Count"], ["Plumb bob", "2"], ["Range pole", "3"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_heading("Returns", level=1)
    document.add_paragraph("Kits go back to the Brackley store within five days.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def long_markdown(sections: int = 12) -> bytes:
    body = ["# Lantern log"]
    for n in range(1, sections + 1):
        filler = " ".join(f"Lantern {n} was trimmed on round {k}." for k in range(1, 40))
        body.append(f"## Lantern {n}\n\n{filler}")
    body.append("## Last note\n\nThe final lantern hangs above the Ostry gate.")
    return "\n\n".join(body).encode()


@pytest.fixture(scope="module")
def kb(app_data: Path) -> dict[str, str]:
    from ingest.originals import OriginalStore
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    settings, store = get_settings(), get_store()
    originals = OriginalStore(settings.originals_root)
    ids = {}
    for name, data in [
        ("yard.html", PAGE),
        ("kit.docx", kit_docx()),
        ("lanterns.md", long_markdown()),
    ]:
        done = ingest_bytes(data, name, store, groups=["all"], config=settings.ingest,
                            originals=originals)  # fmt: skip
        assert done.status == "ingested", done.reason
        ids[name] = done.doc_id or ""
    return ids


def previewed(doc_id: str) -> AppTest:
    at = new_app().run()
    at.switch_page("app_pages/admin.py").run()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    at.button(key=f"admin_preview_{doc_id}").click().run()
    assert_no_exception(at)
    return at


def tables(at: AppTest) -> list[list[list[str]]]:
    """Every dataframe on the page as rows of cells, its column names first."""
    return [
        [list(map(str, frame.value.columns)), *frame.value.astype(str).values.tolist()]
        for frame in at.dataframe
    ]


def test_an_html_page_is_previewed_whole_with_its_table(kb: dict[str, str]) -> None:
    at = previewed(kb["yard.html"])
    shown = texts(at)
    assert "Home / Sites / Quarry yard" in shown  # the first chunk …
    assert "three loaders on site" in shown and "closes at dusk on Saturdays" in shown  # … and all
    assert [
        ["Loader", "Bucket", "Operator"],
        ["L-7", "4.5 m3", "Idris Vale"],
        ["L-9", "6 m3", "Noor Castell"],
    ] in tables(at)
    assert "L-7 \\| 4.5" not in shown  # the rows are a table, not text


def test_a_docx_is_previewed_whole_with_its_table(kb: dict[str, str]) -> None:
    at = previewed(kb["kit.docx"])
    shown = texts(at)
    assert "field kit listed below" in shown and "Brackley store within five days" in shown
    assert [["Tool", "Count"], ["Plumb bob", "2"], ["Range pole", "3"]] in tables(at)


def test_a_long_document_is_previewed_in_parts(kb: dict[str, str]) -> None:
    at = previewed(kb["lanterns.md"])
    shown = texts(at)
    assert "Lantern 1 was trimmed on round 1." in shown and "Ostry gate" not in shown
    count = int(shown.split("Part 1 of ", 1)[1].split()[0])
    assert count >= 2
    for _ in range(count - 1):
        at.button(key=f"admin_preview_{kb['lanterns.md']}_next").click().run()
        assert_no_exception(at)
    shown = texts(at)
    assert f"Part {count} of {count}" in shown and "Ostry gate" in shown
    assert "Lantern 1 was trimmed on round 1." not in shown
    assert at.button(key=f"admin_preview_{kb['lanterns.md']}_next").disabled


def chunk(n: int, text: str, start: int, section: str) -> Chunk:
    return Chunk(chunk_id=f"d-v1-{n:05d}", doc_id="d", text=text, start_char=start,
                 end_char=start + len(text), section_path=section)  # fmt: skip


def test_parts_keep_every_chunk_in_order_and_whole_sections() -> None:
    chunks = [chunk(2, "C" * 30, 80, "B"), chunk(0, "A" * 30, 0, "A"), chunk(1, "B" * 30, 40, "B")]
    parts = document_parts(chunks, max_chars=70)
    assert [[s for s, _ in p.pieces] for p in parts] == [["A"], ["B"]]  # B does not fit after A
    assert parts[1].pieces[0][1] == "B" * 30 + "\n\n" + "C" * 30
    one = document_parts(chunks, max_chars=10_000)
    assert len(one) == 1 and [s for s, _ in one[0].pieces] == ["A", "B"]


def test_tables_are_found_in_text_and_named_by_their_header() -> None:
    blocks = text_blocks("Intro | not a table\n\nName | Age\nAda | 36\nBo\n\nA | B\nx | y | z")
    assert blocks[0] == "Intro | not a table"  # one line is no table
    assert blocks[1] == "Name | Age\nAda | 36\nBo"  # a line without cells: text
    assert blocks[2] == [["A", "B"], ["x", "y", "z"]]
    assert table_columns([["A", "B"], ["x", "y", "z"]]) == (
        ["1", "2", "3"],
        [["A", "B", ""], ["x", "y", "z"]],
    )
    assert table_columns([["A", "B"], ["x", "y"]]) == (["A", "B"], [["x", "y"]])
