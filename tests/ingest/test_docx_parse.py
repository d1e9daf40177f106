"""DOCX as people upload it: text boxes, nested and malformed tables, notes, headers and
footers, Strict Open XML. Fixtures are python-docx files with XML injected into the zip;
the real files in /work/shared/realfiles are checked when present."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pytest
from docx.enum.section import WD_ORIENT
from docx.oxml import parse_xml
from docx.shared import Inches

from ingest.errors import IngestError
from ingest.hidden import HIDDEN_MARKUP, OFF_PAGE
from ingest.models import ParsedDocument
from ingest.parse import docx as docx_parse
from ingest.parse import parse_bytes
from ingest.parse.docx import STRICT_REFUSAL

REAL = Path(__file__).resolve().parents[3] / "shared" / "realfiles"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DECL = (
    f'xmlns:w="{W_NS}" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


# ----------------------------------------------------------------------------- fixtures


def _saved(document: Any) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _rezip(data: bytes, edits: dict[str, Callable[[bytes], bytes]]) -> bytes:
    """The package with members rewritten (or added: the function gets b"")."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        names = src.namelist()
        for name in names:
            body = src.read(name)
            dst.writestr(name, edits[name](body) if name in edits else body)
        for name in edits.keys() - set(names):
            dst.writestr(name, edits[name](b""))
    return out.getvalue()


def _parse(data: bytes, name: str = "sample.docx") -> ParsedDocument:
    return parse_bytes(data, name)


def _para(text: str, color: str | None = None) -> str:
    props = f'<w:rPr><w:color w:val="{color}"/></w:rPr>' if color else ""
    return f'<w:p><w:r>{props}<w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def _box(
    paras: str,
    *,
    fill: str = "",
    fallback: str | None = None,
    place: str = "",
    extent: str = 'cx="914400" cy="457200"',
    doc_pr: str = "",
) -> Any:
    """A run anchoring a DrawingML text box (`fill`: the spPr fill markup; `place`: its
    wp:positionH/V; `extent` and `doc_pr`: attributes), with a VML fallback holding
    `fallback` (default: the same paragraphs), as Word writes it."""
    vml = paras if fallback is None else fallback
    return parse_xml(
        f'<w:r {DECL}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>'
        f"<wp:anchor>{place}<wp:extent {extent}/>"
        f'<wp:docPr id="7" name="Text Box 7" {doc_pr}/>'
        '<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/'
        f'wordprocessingShape"><wps:wsp><wps:spPr>{fill}</wps:spPr><wps:txbx><w:txbxContent>'
        f"{paras}</w:txbxContent></wps:txbx><wps:bodyPr/></wps:wsp></a:graphicData>"
        "</a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict>"
        f'<v:shape fillcolor="white"><v:textbox><w:txbxContent>{vml}</w:txbxContent>'
        "</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
    )


def _vml_box(paras: str, style: str = "", group: str | None = None) -> Any:
    """An older, VML-only text box (`style`: the shape's), inside a v:group styled `group`."""
    shape = (
        f'<v:shape style="{style}"><v:textbox><w:txbxContent>{paras}</w:txbxContent>'
        "</v:textbox></v:shape>"
    )
    if group is not None:
        shape = f'<v:group style="{group}" coordsize="1000,1000">{shape}</v:group>'
    return parse_xml(f"<w:r {DECL}><w:pict>{shape}</w:pict></w:r>")


def _place(axis: str, points: float, relative: str = "page") -> str:
    """A wp:positionH or wp:positionV offset of `points` from `relative`."""
    emu = round(points * 12700)
    return (
        f'<wp:position{axis} relativeFrom="{relative}"><wp:posOffset>{emu}</wp:posOffset>'
        f"</wp:position{axis}>"
    )


def _solid(hex_value: str) -> str:
    return f'<a:solidFill><a:srgbClr val="{hex_value}"/></a:solidFill>'


def _notes_part(kind: str, notes: dict[int, str]) -> Callable[[bytes], bytes]:
    """word/footnotes.xml or endnotes.xml with Word's separator notes and `notes`."""
    tag = kind[:-1]
    body = (
        f'<w:{tag} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{tag}>'
        f'<w:{tag} w:type="continuationNotice" w:id="0">{_para("ZX9NOTICE")}</w:{tag}>'
    )
    for note_id, text in notes.items():
        body += (
            f'<w:{tag} w:id="{note_id}"><w:p><w:r><w:{tag}Ref/></w:r>'
            f'<w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:{tag}>'
        )
    return lambda _: f"<w:{kind} {DECL}>{body}</w:{kind}>".encode()


def _with_notes(data: bytes, footnotes: dict[int, str], endnotes: dict[int, str]) -> bytes:
    """Add footnote and endnote parts, their relationships and content types."""
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml"

    def rels(xml: bytes) -> bytes:
        extra = "".join(
            f'<Relationship Id="rIdNote{kind}" Type="{RELS}/{kind}" Target="{kind}.xml"/>'
            for kind in ("footnotes", "endnotes")
        )
        return xml.replace(b"</Relationships>", extra.encode() + b"</Relationships>")

    def types(xml: bytes) -> bytes:
        extra = "".join(
            f'<Override PartName="/word/{kind}.xml" ContentType="{main}.{kind}+xml"/>'
            for kind in ("footnotes", "endnotes")
        )
        return xml.replace(b"</Types>", extra.encode() + b"</Types>")

    return _rezip(
        data,
        {
            "word/_rels/document.xml.rels": rels,
            "[Content_Types].xml": types,
            "word/footnotes.xml": _notes_part("footnotes", footnotes),
            "word/endnotes.xml": _notes_part("endnotes", endnotes),
        },
    )


def _ref(kind: str, note_id: int) -> Any:
    return parse_xml(f'<w:r {DECL}><w:{kind}Reference w:id="{note_id}"/></w:r>')


def _to_strict(data: bytes) -> bytes:
    """What Word's "Strict Open XML Document" writes: purl.oclc.org namespaces and
    relationship types, conformance="strict" on the document."""

    def convert(xml: bytes) -> bytes:
        xml = re.sub(
            rb"http://schemas\.openxmlformats\.org/(officeDocument|drawingml|wordprocessingml)"
            rb"/2006/",
            rb"http://purl.oclc.org/ooxml/\1/",
            xml,
        )
        xml = xml.replace(b"extended-properties", b"extendedProperties")
        return xml.replace(b"<w:document ", b'<w:document w:conformance="strict" ', 1)

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = [n for n in archive.namelist() if n.endswith((".xml", ".rels"))]
    return _rezip(data, dict.fromkeys(names, convert))


def _table_texts(doc: ParsedDocument) -> list[str]:
    return [block.text for block in doc.blocks if block.kind == "table"]


# ----------------------------------------------------------------------------- text boxes


def test_document_whose_only_text_is_a_text_box_ingests_once() -> None:
    document = docx.Document()
    anchor = document.add_paragraph()
    anchor._p.append(_box(_para("Gravel deliveries arrive on Tuesdays.")))
    doc = _parse(_saved(document))  # before: refused as "empty file (no text found)"
    assert doc.text.count("Gravel deliveries arrive on Tuesdays.") == 1  # Choice, not Fallback


def test_text_boxes_sit_where_their_anchor_is() -> None:
    document = docx.Document()
    document.add_heading("Yard", level=1)
    anchor = document.add_paragraph("The yard opens at seven.")
    anchor._p.append(_box(_para("Boxed: forklifts yield to walkers.")))
    old = document.add_paragraph("Older shapes too.")
    old._p.append(_vml_box(_para("Legacy box: keep the gate shut.")))
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Bay 4"
    table.cell(0, 1).paragraphs[0]._p.append(_box(_para("Cell box: diesel only")))
    # a Choice without text (e.g. a picture) leaves the Fallback's text as the one copy
    empty_choice = document.add_paragraph()
    empty_choice._p.append(_box("<w:p/>", fallback=_para("Fallback-only caption.")))
    document.add_paragraph("The yard closes at six.")
    doc = _parse(_saved(document))
    order = [
        "The yard opens at seven.",
        "Boxed: forklifts yield to walkers.",
        "Older shapes too.",
        "Legacy box: keep the gate shut.",
        "Bay 4 | Cell box: diesel only",
        "Fallback-only caption.",
        "The yard closes at six.",
    ]
    positions = [doc.text.find(part) for part in order]
    assert -1 not in positions and positions == sorted(positions)
    assert all(doc.text.count(part) == 1 for part in order)
    boxed = next(b for b in doc.blocks if b.text.startswith("Boxed"))
    assert boxed.section_path == ["Yard"] and boxed.kind == "text"


def test_text_box_runs_are_judged_against_the_shape_fill() -> None:
    document = docx.Document()
    anchor = document.add_paragraph("Notices follow.")
    anchor._p.append(_box(_para("ZX9WHITEONWHITE", "FFFFFF"), fill=_solid("FFFFFF")))
    anchor._p.append(_box(_para("KEEPWHITEONNAVY", "FFFFFF"), fill=_solid("1F1F5F")))
    scheme = '<a:solidFill><a:schemeClr val="accent1"/></a:solidFill>'
    anchor._p.append(_box(_para("KEEPWHITEONACCENT", "FFFFFF"), fill=scheme))
    hidden = _para("ZX9VANISHED").replace("<w:r>", "<w:r><w:rPr><w:vanish/></w:rPr>")
    anchor._p.append(_box(_para("Visible box line.") + hidden))
    doc = _parse(_saved(document))
    assert "ZX9" not in doc.text
    assert "KEEPWHITEONNAVY" in doc.text and "KEEPWHITEONACCENT" in doc.text
    assert "Visible box line." in doc.text
    assert doc.hidden_removed >= len("ZX9WHITEONWHITE") + len("ZX9VANISHED")


# Shapes Word does not show, by the rule that hides them (the marker text is their content).
FLOAT = "position:absolute;margin-left:10pt;margin-top:10pt;width:100pt;height:40pt"
UNSEEN_SHAPES: dict[str, tuple[Callable[[str], Any], str]] = {
    "vml visibility hidden": (lambda p: _vml_box(p, FLOAT + ";visibility:hidden"), HIDDEN_MARKUP),
    "vml display none": (lambda p: _vml_box(p, "display:none;" + FLOAT), HIDDEN_MARKUP),
    "vml hidden group": (
        lambda p: _vml_box(p, "width:500;height:500", group=FLOAT + ";visibility:hidden"),
        HIDDEN_MARKUP,
    ),
    "vml far left": (lambda p: _vml_box(p, FLOAT + ";margin-left:-5000pt"), OFF_PAGE),
    "vml far below": (lambda p: _vml_box(p, FLOAT + ";margin-top:9000pt"), OFF_PAGE),
    "vml group far left": (
        lambda p: _vml_box(p, "width:500;height:500", group=FLOAT + ";margin-left:-70in"),
        OFF_PAGE,
    ),
    "vml zero width": (lambda p: _vml_box(p, FLOAT + ";width:0"), HIDDEN_MARKUP),
    "vml zero height": (lambda p: _vml_box(p, FLOAT + ";height:0pt"), HIDDEN_MARKUP),
    "drawing docPr hidden": (lambda p: _box(p, doc_pr='hidden="1"'), HIDDEN_MARKUP),
    "drawing docPr hidden true": (lambda p: _box(p, doc_pr='hidden="true"'), HIDDEN_MARKUP),
    "drawing far left": (lambda p: _box(p, place=_place("H", -5000, "column")), OFF_PAGE),
    "drawing far right": (lambda p: _box(p, place=_place("H", 3000)), OFF_PAGE),
    "drawing far below": (lambda p: _box(p, place=_place("V", 9000, "paragraph")), OFF_PAGE),
    "drawing far above": (lambda p: _box(p, place=_place("V", -2000, "line")), OFF_PAGE),
    "drawing zero extent": (lambda p: _box(p, extent='cx="0" cy="457200"'), HIDDEN_MARKUP),
    "drawing few EMU tall": (lambda p: _box(p, extent='cx="914400" cy="3"'), HIDDEN_MARKUP),
}


@pytest.mark.parametrize("case", UNSEEN_SHAPES)
def test_text_of_a_shape_nobody_sees_is_dropped_and_counted(case: str) -> None:
    make, kind = UNSEEN_SHAPES[case]
    document = docx.Document()
    anchor = document.add_paragraph("Loading bays are numbered from the gate.")
    anchor._p.append(make(_para("ZX9SHAPE text inside the shape.")))
    anchor._p.append(_box(_para("Bay 1 takes the long trailers.")))
    old = document.add_paragraph("Older shapes too.")
    old._p.append(_vml_box(_para("Bay 2 is for vans."), FLOAT))
    doc = _parse(_saved(document))
    assert "ZX9" not in doc.text and "inside the shape" not in doc.text
    assert "Bay 1 takes the long trailers." in doc.text and "Bay 2 is for vans." in doc.text
    assert doc.hidden_removed >= len("ZX9SHAPEtextinsidetheshape.")
    assert doc.hidden_kinds == [kind]


def test_readable_shapes_keep_their_text() -> None:
    document = docx.Document()
    anchor = document.add_paragraph("Shapes a reader sees:")
    near = {
        "KEEPBLEED": _place("H", -18) + _place("V", -9),  # over the page edge
        "KEEPMARGIN": _place("H", -54, "margin"),  # in the left margin
        "KEEPBESIDE": _place("H", 640),  # just past the right edge, in the slack
        "KEEPALIGNED": '<wp:positionH relativeFrom="page"><wp:align>center</wp:align>'
        "</wp:positionH>",
    }
    for word, place in near.items():
        anchor._p.append(_box(_para(f"{word} label."), place=place))
    anchor._p.append(_box(_para("KEEPSMALL tag."), extent='cx="381000" cy="152400"'))
    anchor._p.append(_box(_para("KEEPSHOWN note."), doc_pr='hidden="0"'))
    callout = "position:absolute;margin-left:-20pt;margin-top:-30pt;width:120pt;height:40pt"
    anchor._p.append(_vml_box(_para("KEEPCALLOUT pointer."), callout))
    centred = "position:absolute;mso-position-horizontal:center;margin-left:-5000pt;width:90pt"
    anchor._p.append(_vml_box(_para("KEEPCENTRED heading."), centred))
    anchor._p.append(_vml_box(_para("KEEPVISIBLE box."), FLOAT + ";visibility:visible"))
    doc = _parse(_saved(document))
    for word in [*near, "KEEPSMALL", "KEEPSHOWN", "KEEPCALLOUT", "KEEPCENTRED", "KEEPVISIBLE"]:
        assert word in doc.text
    assert doc.hidden_removed == 0


def test_off_page_is_judged_against_the_page_of_the_shape_s_section() -> None:
    document = docx.Document()  # Letter portrait: 612 pt wide
    beyond = _place("H", 720)  # past a portrait page, on a landscape one
    document.add_paragraph("Portrait section.")._p.append(_box(_para("ZX9PORTRAIT aside.")))
    document.paragraphs[-1]._p.append(_box(_para("ZX9PORTRAIT far."), place=beyond))
    landscape = document.add_section()
    landscape.orientation = WD_ORIENT.LANDSCAPE
    landscape.page_width, landscape.page_height = Inches(11), Inches(8.5)
    document.add_paragraph("Landscape section.")._p.append(
        _box(_para("KEEPLANDSCAPE aside."), place=beyond)
    )
    doc = _parse(_saved(document))
    assert "ZX9PORTRAIT far" not in doc.text and "KEEPLANDSCAPE aside." in doc.text
    assert "ZX9PORTRAIT aside." in doc.text  # the unplaced box of the same paragraph stays
    assert doc.hidden_kinds == [OFF_PAGE]


# ----------------------------------------------------------------------------- tables


def test_nested_table_rows_follow_their_outer_row() -> None:
    document = docx.Document()
    outer = document.add_table(rows=3, cols=2)
    outer.cell(0, 0).text, outer.cell(0, 1).text = "Depot", "Hours"
    outer.cell(1, 0).text = "North"
    holder = outer.cell(1, 1)
    holder.paragraphs[0].text = "Week"
    inner = holder.add_table(rows=2, cols=2)
    for r, row in enumerate([["Mon", "8-17"], ["Sat", "9-12"]]):
        for c, value in enumerate(row):
            inner.cell(r, c).text = value
    outer.cell(2, 0).text, outer.cell(2, 1).text = "South", "closed"
    doc = _parse(_saved(document))
    assert _table_texts(doc) == [
        "Depot | Hours",
        "North | Week",
        "Mon | 8-17",
        "Sat | 9-12",
        "South | closed",
    ]


def _irregular_table() -> bytes:
    """Before and after a 3-row table python-docx refuses: row 1 is one cell spanning two
    columns, row 2 continues a vertical merge at column 1 where row 1 has no cell
    ("no tc element at grid_offset"); row 3 is ragged (one cell)."""
    document = docx.Document()
    document.add_paragraph("Before the ledger.")
    table = document.add_table(rows=3, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Quarter", "ignored"
    table.cell(1, 0).text, table.cell(1, 1).text = "Q1", "1200 t"
    table.cell(2, 0).text = "Q2 pending"
    document.add_paragraph("After the ledger.")
    rows = table._tbl.tr_lst
    first = rows[0].tc_lst
    first[0].get_or_add_tcPr().append(parse_xml(f'<w:gridSpan {DECL} w:val="2"/>'))
    rows[0].remove(first[1])
    rows[1].tc_lst[1].get_or_add_tcPr().append(parse_xml(f"<w:vMerge {DECL}/>"))
    rows[2].remove(rows[2].tc_lst[1])
    return _saved(document)


def test_malformed_table_is_read_from_its_xml() -> None:
    data = _irregular_table()
    with pytest.raises(ValueError, match="grid_offset"):  # what failed the whole file before
        [row.cells for row in docx.Document(io.BytesIO(data)).tables[0].rows]
    doc = _parse(data)
    assert "Before the ledger." in doc.text and "After the ledger." in doc.text
    # the spanning cell counted once, the continuation keeps its text, the ragged row stays
    assert _table_texts(doc) == ["Quarter", "Q1 | 1200 t", "Q2 pending"]
    assert doc.warnings == []


def test_merged_cells_count_once_per_row() -> None:
    document = docx.Document()
    table = document.add_table(rows=3, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Region"
    table.cell(0, 2).text = "Total"
    table.cell(1, 0).merge(table.cell(2, 0)).text = "Coast"
    for r, (kind, total) in enumerate([("sand", "40"), ("salt", "12")], start=1):
        table.cell(r, 1).text, table.cell(r, 2).text = kind, total
    doc = _parse(_saved(document))
    assert _table_texts(doc) == ["Region | Total", "Coast | sand | 40", "Coast | salt | 12"]


def test_unreadable_table_costs_that_table_only(monkeypatch: pytest.MonkeyPatch) -> None:
    document = docx.Document()
    for number in (1, 2, 3):
        document.add_table(rows=1, cols=2).cell(0, 0).text = f"table{number} cell"
    document.add_paragraph("Closing words.")
    real_grid = docx_parse._grid

    def grid(tbl: Any) -> list[list[Any]]:
        if "table2" in "".join(tbl.itertext()):
            raise ValueError("gridSpan beyond the grid")
        return real_grid(tbl)

    monkeypatch.setattr(docx_parse, "_grid", grid)
    doc = _parse(_saved(document))
    assert "table1 cell" in doc.text and "table3 cell" in doc.text and "Closing words." in doc.text
    assert "table2" not in doc.text
    assert doc.warnings == ["table 2 skipped: malformed (gridSpan beyond the grid)"]


# ----------------------------------------------------------------------------- notes


def test_notes_follow_the_paragraph_that_references_them() -> None:
    document = docx.Document()
    claim = document.add_paragraph("The quarry ships 40 tonnes a day.")
    claim._p.append(_ref("footnote", 5))
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Limestone", "crushed"
    table.cell(0, 1).paragraphs[0]._p.append(_ref("footnote", 6))
    later = document.add_paragraph("Shipping stops in January.")
    later._p.append(_ref("endnote", 2))
    document.add_paragraph("Unrelated closing line.")
    data = _with_notes(
        _saved(document),
        {5: "Measured at the weighbridge.", 6: "Grade B only.", 9: "Never referenced."},
        {2: "Because the harbour freezes."},
    )
    doc = _parse(data)
    texts = [block.text for block in doc.blocks]
    assert texts == [
        "The quarry ships 40 tonnes a day.",
        "[^1] Measured at the weighbridge.",
        "Limestone | crushed",
        "[^2] Grade B only.",
        "Shipping stops in January.",
        "[^i] Because the harbour freezes.",
        "Unrelated closing line.",
    ]
    assert "ZX9NOTICE" not in doc.text and "Never referenced" not in doc.text


# ----------------------------------------------------------------------------- headers, footers


def test_headers_and_footers_are_furniture_not_text() -> None:
    document = docx.Document()
    document.settings.odd_and_even_pages_header_footer = True
    section = document.sections[0]
    section.different_first_page_header_footer = True
    section.header.paragraphs[0].text = "Harbour Board internal"
    hidden = section.header.add_paragraph()
    hidden.add_run("ZX9HEADERVANISH").font.hidden = True
    section.first_page_header.paragraphs[0].text = "Cover sheet"
    section.even_page_header.paragraphs[0].text = "Harbour Board internal"
    section.footer.paragraphs[0].text = "Draft for review"
    form = section.even_page_footer.add_table(rows=1, cols=2, width=section.page_width)
    form.cell(0, 0).text, form.cell(0, 1).text = "Form 12", "rev 3"
    section.first_page_footer.paragraphs[0].text = "Draft for review"
    document.add_paragraph("Berths are assigned daily.")
    doc = _parse(_saved(document))
    assert doc.text == "Berths are assigned daily."
    assert doc.furniture == [
        "Harbour Board internal",
        "Cover sheet",
        "Draft for review",
        "Form 12 | rev 3",
    ]
    assert doc.hidden_removed >= len("ZX9HEADERVANISH")


# ----------------------------------------------------------------------------- strict


def test_strict_open_xml_is_read() -> None:
    document = docx.Document()
    document.core_properties.title = "Tide Tables"
    document.add_heading("Spring tides", level=1)
    document.add_paragraph("High water at dawn.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Monday", "06:10"
    document.sections[0].header.paragraphs[0].text = "Port notice"
    data = _to_strict(_saved(document))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert b"purl.oclc.org/ooxml/officeDocument/relationships/officeDocument" in (
            archive.read("_rels/.rels")
        )
        assert b"http://purl.oclc.org/ooxml/wordprocessingml/main" in archive.read(
            "word/document.xml"
        )
    with pytest.raises(KeyError, match="officeDocument"):  # before: "corrupt DOCX"
        docx.Document(io.BytesIO(data))
    doc = _parse(data)
    assert doc.title == "Tide Tables"
    assert doc.text == "Spring tides\n\nHigh water at dawn.\n\nMonday | 06:10"
    assert doc.blocks[1].section_path == ["Spring tides"]
    assert doc.furniture == ["Port notice"]


def test_strict_package_that_still_cannot_be_read_is_refused_with_advice() -> None:
    document = docx.Document()
    document.add_paragraph("Unreadable.")
    strict = _to_strict(_saved(document))
    broken = _rezip(strict, {"word/document.xml": lambda xml: xml[: len(xml) // 2]})
    with pytest.raises(IngestError) as caught:
        _parse(broken)
    assert str(caught.value) == STRICT_REFUSAL


# ----------------------------------------------------------------------------- real files


def _real(name: str) -> ParsedDocument:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{name} not in {REAL}")
    return parse_bytes(path.read_bytes(), name)


def test_real_headers_and_footers_with_a_nested_table() -> None:
    doc = _real("docx-hdrftr.docx")
    assert doc.text == "Main document"
    assert doc.furniture[:3] == [
        "First header para",
        "Table cell1 | Table cell2",
        "Last header para",
    ]
    # the footer's table nests a table with merged cells: nested rows follow the outer row,
    # and a vertically merged cell shows the text of the cell it continues, not its own
    assert doc.furniture[3:] == ["para1", "cell1 | a f", "b |  | c", "b | d |  | e", "para2"]
    assert not any("should not be included" in line for line in doc.furniture)


def test_real_ragged_rows_survive() -> None:
    doc = _real("tables-with-incomplete-rows.docx")
    rows = _table_texts(doc)
    assert doc.blocks[0].text.startswith("Example of DOCX table")
    assert rows[:6] == ["a | b", "c | d", "a", "b | c", "a", "b | c | d"]
    assert rows[6:12] == ["a | b", "a | c | d", "a | b | c", "d", "e | d | f", "d"]
    assert rows[-2:] == ["Strange", " | Format"]


def test_real_plain_table_keeps_rows_and_link_text() -> None:
    doc = _real("fake_table.docx")
    assert _table_texts(doc) == ["Header Col 1 | Header Col 2", "Lorem ipsum | A Link example"]
    assert doc.text.endswith("Dolor sit amet")


def test_real_handbook_page_furniture_and_body() -> None:
    doc = _real("handbook-1p.docx")
    assert doc.furniture == ["US Trustee Handbook", "Copyright"]
    assert "US Trustee Handbook" not in doc.text and "Copyright" not in doc.text
    assert "The United States Trustee appoints and supervises standing trustees" in doc.text
    assert len(doc.blocks) > 10
