"""DOCX into blocks: the body in reading order, with what lives outside its paragraphs.

Text boxes and shapes (DrawingML and VML, one branch of each mc:AlternateContent) become
paragraphs right after the paragraph that anchors them, unless their shape is hidden, of no
size or off its section's page (counted as hidden text). Footnotes and endnotes become a
"[^n] text" block right after the paragraph (or table) that references them, numbered in
reference order as Word shows them (footnotes 1, 2, 3; endnotes i, ii, iii), so a note
lands in the chunk of the sentence it qualifies. Headers and footers (default, first and
even) go once into `furniture`, never into the text. Tables are read from the raw w:tr/w:tc
XML; one that still cannot be read is skipped with a warning. Strict Open XML is read after
mapping its namespaces onto the transitional ones python-docx knows.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections.abc import Callable
from typing import Any, Protocol

import docx
from docx.oxml.parser import parse_xml

from ingest.errors import IngestError
from ingest.hidden import RGB, hex_color, named_color, visible_len
from ingest.hidden.word import WordRuns, cell_background, page_size, shape_hidden
from ingest.models import ParsedDocument
from ingest.parse.builder import Builder, join_lines
from ingest.parse.limits import MAX_DOCX_RATIO, MAX_DOCX_UNCOMPRESSED, megabytes

log = logging.getLogger(__name__)


def check_zip(data: bytes, kind: str) -> None:
    """Refuse zip bombs by reading the central directory before anything is inflated."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        if data.startswith(b"\xd0\xcf\x11\xe0"):
            raise IngestError("old Word .doc format, not DOCX; save it as .docx first") from exc
        raise IngestError(f"corrupt {kind} (not a valid zip archive)") from exc
    total = sum(info.file_size for info in infos)
    packed = max(1, sum(info.compress_size for info in infos))
    if total > MAX_DOCX_UNCOMPRESSED or (
        total > 10 * 1024 * 1024 and total / packed > MAX_DOCX_RATIO
    ):
        raise IngestError(
            f"{kind} expands to {megabytes(total)} MB from {megabytes(len(data))} MB; refused as a zip bomb"
        )


HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)

STRICT_REFUSAL = "Strict Open XML is not supported — save as Word Document (.docx)"

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_WPS = "{http://schemas.microsoft.com/office/word/2010/wordprocessingShape}"
_V = "{urn:schemas-microsoft-com:vml}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

P, TBL, TR, TC, T = (f"{_W}{tag}" for tag in ("p", "tbl", "tr", "tc", "t"))
SDT, SDT_CONTENT, CUSTOM_XML = f"{_W}sdt", f"{_W}sdtContent", f"{_W}customXml"
BODY, P_PR, SECT_PR = f"{_W}body", f"{_W}pPr", f"{_W}sectPr"
TXBX = f"{_W}txbxContent"
FOOTNOTE_REF, ENDNOTE_REF = f"{_W}footnoteReference", f"{_W}endnoteReference"
ALTERNATE, CHOICE, FALLBACK = f"{_MC}AlternateContent", f"{_MC}Choice", f"{_MC}Fallback"
VAL, TYPE, ID = f"{_W}val", f"{_W}type", f"{_W}id"

# Word's own order: the default header, then the first-page and even-page ones.
_REF_ORDER = {"default": 0, "first": 1, "even": 2}
# Strict Open XML names the same schemas under purl.oclc.org; two part names differ too.
_STRICT_NS = re.compile(
    rb"http://purl\.oclc\.org/ooxml/(officeDocument|drawingml|wordprocessingml)/"
)
_STRICT_RENAMES = ((b"/extendedProperties", b"/extended-properties"),
                   (b"/customProperties", b"/custom-properties"))  # fmt: skip
# Fills other than solid: none, or not one colour (taken as the page colour).
_FILLS = ("noFill", "gradFill", "blipFill", "pattFill", "grpFill")
# Theme slot names a shape may use for the scheme's colours.
_SCHEME_ALIAS = {"bg1": "lt1", "tx1": "dk1", "bg2": "lt2", "tx2": "dk2"}


class _Sink(Protocol):
    def heading(self, level: int, text: str) -> None: ...
    def text(self, text: str) -> None: ...
    def table(self, rows: list[list[str]]) -> None: ...


class _Lines:
    """Flattens blocks into lines (header and footer text, notes), `visible` as the
    builder sees text."""

    def __init__(self, visible: Callable[[str], str]) -> None:
        self.visible = visible
        self.lines: list[str] = []

    def heading(self, level: int, text: str) -> None:
        self.text(text)

    def text(self, text: str) -> None:
        line = join_lines(self.visible(text))
        if line:
            self.lines.append(line)

    def table(self, rows: list[list[str]]) -> None:
        for cells in rows:
            if any(cell.strip() for cell in cells):
                self.lines.append(" | ".join(join_lines(cell) for cell in cells))


class _CellLines(_Lines):
    """A table cell's lines; a table nested in it leaves its rows in `rows`."""

    def __init__(self, visible: Callable[[str], str]) -> None:
        super().__init__(visible)
        self.rows: list[list[str]] = []

    def table(self, rows: list[list[str]]) -> None:
        self.rows.extend(rows)


def parse_docx(data: bytes, source: str) -> ParsedDocument:
    """Parse a DOCX (transitional or strict) into ordered blocks."""
    check_zip(data, "DOCX")
    if not _is_strict(data):
        try:
            document = docx.Document(io.BytesIO(data))
        except Exception as exc:  # python-docx raises KeyError/ValueError/lxml errors on damage
            raise IngestError(f"corrupt DOCX ({type(exc).__name__}: {exc})") from exc
        return _read(document, source)
    try:  # whatever the renaming does not cover gets the refusal, not a stack of errors
        return _read(docx.Document(io.BytesIO(_transitional(data))), source)
    except IngestError:
        raise
    except Exception as exc:
        raise IngestError(STRICT_REFUSAL) from exc


def _read(document: Any, source: str) -> ParsedDocument:
    builder = Builder()
    reader = _Reader(document, builder)
    reader.blocks(document.element.body, builder)
    reader.furniture()
    try:
        core = (document.core_properties.title or "").strip()
    except Exception:  # a damaged docProps/core.xml only costs us the title
        core = ""
    return builder.build(source, core or reader.styled_title)


def _is_strict(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return b"purl.oclc.org/ooxml/" in archive.read("_rels/.rels")
    except (KeyError, zipfile.BadZipFile, ValueError, OSError):
        return False  # python-docx reports the damage


def _transitional(data: bytes) -> bytes:
    """The package with Strict namespaces and relationship types renamed to transitional."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as archive, zipfile.ZipFile(out, "w") as copy:
        for info in archive.infolist():
            body = archive.read(info)
            if info.filename.endswith((".xml", ".rels")):
                body = _STRICT_NS.sub(rb"http://schemas.openxmlformats.org/\1/2006/", body)
                for old, new in _STRICT_RENAMES:
                    body = body.replace(old, new)
            copy.writestr(info, body)
    return out.getvalue()


class _Reader:
    """Walks one document's block containers (body, cells, text boxes, notes, headers)."""

    def __init__(self, document: Any, builder: Builder) -> None:
        self.document = document
        self.builder = builder
        self.runs = WordRuns(document, builder.hidden)
        # Paragraph.style resolves the default style on every call (slow); map ids once.
        self.styles = {style.style_id: style.name or "" for style in document.styles}
        self.styled_title: str | None = None
        self.tables = 0  # tables outside tables, as warnings count them
        self.notes = {
            FOOTNOTE_REF: self._notes("footnotes", f"{_W}footnote"),
            ENDNOTE_REF: self._notes("endnotes", f"{_W}endnote"),
        }
        self.numbered: dict[str, set[str]] = {FOOTNOTE_REF: set(), ENDNOTE_REF: set()}
        self.pending: list[str] = []  # note blocks waiting for their paragraph or table
        self.theme = self._theme()
        body = document.element.body  # a w:sectPrChange holds an earlier revision's section
        self.sections = [s for s in body.iter(SECT_PR) if s.getparent().tag in (BODY, P_PR)]
        self.page = page_size(self.sections[0] if self.sections else None)
        self._pages = (page_size(sect) for sect in self.sections[1:])

    # ----------------------------------------------------------------------- blocks

    def blocks(self, container: Any, sink: _Sink, shade: RGB | None = None) -> None:
        """Paragraphs and tables of a container, also inside content controls."""
        for child in container.iterchildren():
            if child.tag == P:
                self.paragraph(child, sink, shade)
                if child.find(f"{P_PR}/{SECT_PR}") is not None:  # its section ends here
                    self.page = next(self._pages, self.page)
            elif child.tag == TBL:
                self.table(child, sink, shade)
            elif (inner := _wrapped(child)) is not None:
                self.blocks(inner, sink, shade)
            if sink is self.builder:
                self._flush_notes()

    def paragraph(self, p: Any, sink: _Sink, shade: RGB | None) -> None:
        text = self.runs.paragraph_text(p, shade)
        style_id = p.style
        style = (self.styles.get(style_id, style_id) if style_id else "").strip()
        match = HEADING_STYLE.match(style)
        if match:
            sink.heading(int(match.group(1)), text)
        elif style.lower() == "title" and text.strip():
            if sink is self.builder:
                self.styled_title = self.styled_title or join_lines(text)
            sink.heading(1, text)
        else:
            sink.text(text)
        boxes = []
        for found in p.iter(TXBX, FOOTNOTE_REF, ENDNOTE_REF):
            if not _belongs(found, p):
                continue
            if found.tag == TXBX:
                boxes.append(found)
            else:
                self._note(found)
        if sink is self.builder:
            self._flush_notes()
        for box in boxes:
            kind = shape_hidden(box, self.page)
            if kind is None:
                self.blocks(box, sink, self._fill(box) or shade)
            elif count := visible_len("".join(t.text or "" for t in box.iter(T))):
                self.builder.hidden[kind] += count

    # ----------------------------------------------------------------------- tables

    def table(self, tbl: Any, sink: _Sink, shade: RGB | None) -> None:
        if isinstance(sink, _CellLines):  # nested: its outer table answers for it
            sink.table(self._rows(tbl, shade))
            return
        self.tables += 1
        try:
            rows = self._rows(tbl, shade)
        except Exception as exc:  # an odd table costs that table, never the document
            reason = str(exc) or type(exc).__name__
            self.builder.warnings.append(f"table {self.tables} skipped: malformed ({reason})")
            log.info("DOCX table %d skipped", self.tables, exc_info=True)
            return
        sink.table(rows)

    def _rows(self, tbl: Any, shade: RGB | None) -> list[list[str]]:
        """One row per w:tr, then the rows of tables nested in its cells.

        Nested rows follow their outer row as rows of their own rather than inside the
        cell: each line then stays one row of one table, its " | " unambiguous, where
        inlined they would blur into one cell and mix their separators with the outer row's.
        """
        rows: list[list[str]] = []
        read: dict[Any, str] = {}  # a vertically merged cell is read once
        for tcs in _grid(tbl):
            cells: list[str] = []
            nested: list[list[str]] = []
            for tc in tcs:
                if tc not in read:
                    lines = _CellLines(self.builder._visible)
                    self.blocks(tc, lines, cell_background(tc) or shade)
                    read[tc] = "\n".join(lines.lines)
                    nested += lines.rows
                cells.append(read[tc])
            rows.append(cells)
            rows += nested
        return rows

    # ----------------------------------------------------------------------- notes

    def _notes(self, reltype: str, tag: str) -> dict[str, Any]:
        """Note id -> w:footnote/w:endnote, without separator and continuation notes."""
        root = self._related_xml(reltype)
        if root is None:
            return {}
        return {
            str(note.get(ID)): note
            for note in root.iterchildren(tag)
            if note.get(TYPE, "normal") == "normal"
        }

    def _note(self, ref: Any) -> None:
        note_id = str(ref.get(ID))
        note = self.notes[ref.tag].get(note_id)
        seen = self.numbered[ref.tag]
        if note is None or note_id in seen:
            return
        seen.add(note_id)
        label = str(len(seen)) if ref.tag == FOOTNOTE_REF else _roman(len(seen))
        lines = _Lines(self.builder._visible)
        self.blocks(note, lines)
        if lines.lines:
            self.pending.append(f"[^{label}] " + " ".join(lines.lines))

    def _flush_notes(self) -> None:
        for text in self.pending:
            self.builder.text(text)
        self.pending.clear()

    # ----------------------------------------------------------------------- furniture

    def furniture(self) -> None:
        """Header and footer lines of every section, each part once, into `furniture`."""
        parts = self.document.part.related_parts
        seen: set[Any] = set()
        for sect in self.sections:
            self.page = page_size(sect)
            refs = sect.iterchildren(f"{_W}headerReference", f"{_W}footerReference")
            for ref in sorted(refs, key=_ref_order):
                part = parts.get(ref.get(_R_ID))
                if part is None or part in seen:
                    continue
                seen.add(part)
                lines = _Lines(self.builder._visible)
                self.blocks(_part_xml(part), lines)
                self.builder.furniture += lines.lines

    # ----------------------------------------------------------------------- parts, colours

    def _related_xml(self, name: str) -> Any:
        """The XML of the document's `name` part (footnotes, theme...), None if absent or
        unreadable."""
        try:
            part = self.document.part.part_related_by(_RELS + name)
        except (KeyError, ValueError):
            return None
        try:
            return _part_xml(part)
        except Exception as exc:  # lxml syntax errors: lose the part, keep the document
            self.builder.warnings.append(f"{name} skipped: unreadable ({exc})")
            return None

    def _theme(self) -> dict[str, str]:
        """Theme colour slot (accent1, lt1...) -> hex."""
        root = self._related_xml("theme")
        scheme = root.find(f".//{_A}clrScheme") if root is not None else None
        colours: dict[str, str] = {}
        for slot in scheme if scheme is not None else []:
            colour = slot.find(f"{_A}srgbClr")
            value = colour.get("val") if colour is not None else None
            if colour is None and (system := slot.find(f"{_A}sysClr")) is not None:
                value = system.get("lastClr")
            if value and isinstance(slot.tag, str):
                colours[slot.tag.removeprefix(_A)] = value
        return colours

    def _fill(self, box: Any) -> RGB | None:
        """What a text box paints behind its text: the shape's solid fill, if known."""
        holder = box.getparent()
        shape = holder.getparent() if holder is not None else None
        if shape is None:
            return None
        if holder.tag == f"{_V}textbox":
            if shape.get("filled", "t").lower() in ("f", "false"):
                return None
            value = (shape.get("fillcolor") or "white").split()[0]
            rgba = hex_color(value) or named_color(value)
            return rgba[:3] if rgba else None
        props = shape.find(f"{_WPS}spPr")
        if props is None:
            return None
        fill = props.find(f"{_A}solidFill")
        if fill is None and not any(props.find(f"{_A}{kind}") is not None for kind in _FILLS):
            fill = shape.find(f"{_WPS}style/{_A}fillRef")  # no fill of its own: the style's
            if fill is not None and fill.get("idx") == "0":
                return None
        return self._colour(fill) if fill is not None else None

    def _colour(self, fill: Any) -> RGB | None:
        for colour in fill:
            name = colour.tag.removeprefix(_A) if isinstance(colour.tag, str) else ""
            value = colour.get("val", "")
            if name == "schemeClr":
                value = self.theme.get(_SCHEME_ALIAS.get(value, value), "")
            elif name == "sysClr":
                value = colour.get("lastClr", "")
            rgba = named_color(value) if name == "prstClr" else hex_color(value)
            if rgba:
                return rgba[:3]
        return None


# --------------------------------------------------------------------------- XML helpers


def _wrapped(element: Any) -> Any:
    """The content of a wrapper (content control, custom XML, alternate content), or None."""
    if element.tag == SDT:
        return element.find(SDT_CONTENT)
    if element.tag == CUSTOM_XML:
        return element
    if element.tag == ALTERNATE:
        return _branch(element)
    return None


def _branch(alternate: Any) -> Any:
    """The one branch of an mc:AlternateContent to read, so its text is not doubled: the
    first (a Choice, normally DrawingML) that has text, else the first."""
    branches = [child for child in alternate if child.tag in (CHOICE, FALLBACK)]
    with_text = (b for b in branches if next(b.iter(T), None) is not None)
    return next(with_text, branches[0] if branches else None)


def _belongs(element: Any, p: Any) -> bool:
    """`element` is p's own: not inside a text box within p, nor in a branch not taken."""
    node = element.getparent()
    while node is not None and node is not p:
        if node.tag == TXBX:
            return False
        if node.tag in (CHOICE, FALLBACK) and node is not _branch(node.getparent()):
            return False
        node = node.getparent()
    return True


def _children(parent: Any, tag: str) -> list[Any]:
    """Children `tag` of `parent`, also those inside wrappers."""
    found = []
    for child in parent.iterchildren():
        if child.tag == tag:
            found.append(child)
        elif (inner := _wrapped(child)) is not None:
            found += _children(inner, tag)
    return found


def _grid(tbl: Any) -> list[list[Any]]:
    """The w:tc of each row, straight from the XML (python-docx refuses irregular grids).

    A merged cell appears once per row: a vertical continuation stands for the cell it
    continues at the same grid column (its own, usually empty, content is not shown by
    Word), or for itself when there is none. Ragged rows simply have fewer cells.
    """
    grid: list[list[Any]] = []
    above: dict[int, Any] = {}
    for tr in _children(tbl, TR):
        column = _int(tr.find(f"{_W}trPr/{_W}gridBefore"), 0)
        row: list[Any] = []
        here: dict[int, Any] = {}
        for tc in _children(tr, TC):
            props = tc.find(f"{_W}tcPr")
            span = _int(props.find(f"{_W}gridSpan"), 1) if props is not None else 1
            merge = props.find(f"{_W}vMerge") if props is not None else None
            if merge is not None and merge.get(VAL, "continue") != "restart":
                tc = above.get(column, tc)
            here[column] = tc
            if all(tc is not seen for seen in row):
                row.append(tc)
            column += max(1, span)
        grid.append(row)
        above = here
    return grid


def _int(element: Any, default: int) -> int:
    try:
        return int(element.get(VAL)) if element is not None else default
    except (TypeError, ValueError):
        return default


def _ref_order(ref: Any) -> tuple[bool, int]:
    return ref.tag.endswith("footerReference"), _REF_ORDER.get(ref.get(TYPE), 3)


def _part_xml(part: Any) -> Any:
    """A part's root element with python-docx's element classes (runs know their text)."""
    element = getattr(part, "element", None)
    return element if element is not None else parse_xml(part.blob)


def _roman(number: int) -> str:
    digits = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
              (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))  # fmt: skip
    out = ""
    for value, letters in digits:
        count, number = divmod(number, value)
        out += letters * count
    return out
