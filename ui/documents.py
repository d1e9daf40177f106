"""The text views of a document. Pure functions, no Streamlit.

Who may open a document is `Hopwise.readable_document` (hopwise/documents.py): every view and
download of an original goes through it; the page that asks is never trusted, the store's
groups are. A passage is found in a text by its words, not its
characters (`find_passage`), so a different line break, a hyphenated word or punctuation the
parser normalised still marks most of it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ingest.lang import CJK
from ingest.models import Chunk
from ui import safe

_HYPHENS = "\\-\u00ad\u2010\u2011\x02\ufffe"  # PDFium reports a line-end hyphen as \x02
_WORD = rf"[^\W_{CJK}]+"
# a Han character is a token of its own; a word may be hyphenated, across a line break too
_TOKEN = re.compile(rf"[{CJK}]|{_WORD}(?:[{_HYPHENS}][ \t\r\n]*{_WORD})*")
_FOLDED_AWAY = re.compile(rf"[{_HYPHENS}\s]+")
MIN_RUN = 2  # matched words in a row that count (one word alone matches anywhere)
MAX_GAP = 8  # unmatched words allowed inside one passage
MARK = "yellow-background"  # with bold text: visible on white, like the PDF highlight
MAX_SECTION_CHUNKS = 12


# ---------------------------------------------------------------- finding a passage


@dataclass(frozen=True)
class Token:
    key: str  # NFKC, case-folded, hyphens and spaces removed
    start: int
    end: int


@dataclass(frozen=True)
class Found:
    """Where a passage is in a text: character offsets, and the share of its words matched."""

    start: int
    end: int
    coverage: float


def tokens(text: str) -> list[Token]:
    """The words (and single Han characters) of a text with their offsets."""
    found = []
    for match in _TOKEN.finditer(text):
        key = _FOLDED_AWAY.sub("", unicodedata.normalize("NFKC", match.group()).casefold())
        if key:
            found.append(Token(key, match.start(), match.end()))
    return found


def find_passage(text: str, passage: str) -> Found | None:
    """The stretch of `text` that holds most of `passage`'s words in order, or None.

    Runs of at least MIN_RUN matched words count (all of a shorter passage); runs closer
    than MAX_GAP words form one stretch, and the stretch with most matched words wins."""
    return find_in_tokens(tokens(text), tokens(passage))


def find_in_tokens(haystack: list[Token], needle: list[Token]) -> Found | None:
    if not haystack or not needle:
        return None
    matcher = difflib.SequenceMatcher(
        None, [t.key for t in haystack], [t.key for t in needle], autojunk=False
    )
    least = min(MIN_RUN, len(needle))
    blocks = [b for b in matcher.get_matching_blocks() if b.size >= least]
    best: tuple[int, int, int] | None = None  # matched words, first, last (haystack indexes)
    group: list[int] = []  # matched, first, last of the stretch being built
    for block in blocks:
        if group and block.a - group[2] - 1 <= MAX_GAP:
            group = [group[0] + block.size, group[1], block.a + block.size - 1]
        else:
            group = [block.size, block.a, block.a + block.size - 1]
        if best is None or group[0] > best[0]:
            best = (group[0], group[1], group[2])
    if best is None:
        return None
    matched, first, last = best
    return Found(haystack[first].start, haystack[last].end, matched / len(needle))


# ---------------------------------------------------------------- the section view


@dataclass(frozen=True)
class SectionText:
    """A section of a document rebuilt from its chunks, with the cited stretch."""

    text: str
    marked: tuple[int, int] | None  # character offsets of the cited passage in `text`


def section_chunks(chunks: Sequence[Chunk], anchor: Chunk) -> list[Chunk]:
    """The chunks of the anchor's section in document order, at most MAX_SECTION_CHUNKS of
    them around it (a text file without headings is one long section)."""
    ordered = sorted(chunks, key=lambda c: (c.start_char, c.chunk_id))
    same = [c for c in ordered if c.section_path == anchor.section_path]
    at = next((i for i, c in enumerate(same) if c.chunk_id == anchor.chunk_id), None)
    if at is None:
        return [anchor]
    first = max(0, min(at - MAX_SECTION_CHUNKS // 2, len(same) - MAX_SECTION_CHUNKS))
    return same[first : first + MAX_SECTION_CHUNKS]


def section_text(chunks: Sequence[Chunk], cited: Chunk | None, passage: str = "") -> SectionText:
    """The chunks joined without their overlaps (offsets into the document's text), and where
    the passage (or else the whole cited chunk) is in the result; without a cited chunk, the
    passage wherever most of it is, or no mark."""
    text, end, cited_at = "", -1, None
    for chunk in chunks:
        if end < 0 or chunk.start_char >= end:
            if text:
                text += "" if chunk.start_char == end else "\n\n"
            at = len(text)
            text += chunk.text
        else:  # overlaps what came before: only its new part is added
            at = len(text) - (end - chunk.start_char)
            text += chunk.text[end - chunk.start_char :]
        end = max(end, chunk.end_char)
        if cited is not None and chunk.chunk_id == cited.chunk_id:
            cited_at = (max(0, at), max(0, at) + len(chunk.text))
    within = cited_at or (0, len(text))  # no cited chunk (a replaced version): anywhere
    found = find_passage(text[within[0] : within[1]], passage) if passage else None
    if found is not None and found.coverage >= 0.5:
        return SectionText(text, (within[0] + found.start, within[0] + found.end))
    return SectionText(text, cited_at)


# ---------------------------------------------------------------- the whole document


MAX_PART_CHARS = 6000  # text shown per part of a previewed document (a part holds sections)
TABLE_CELL = " | "  # how the parsers join a table row's cells (ingest.parse.builder)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Part:
    """A stretch of a document for its preview: (section path, text) pieces in order."""

    pieces: tuple[tuple[str, str], ...]


def chunks_in_order(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The chunks in document order."""
    return sorted(chunks, key=lambda c: (c.start_char, c.chunk_id))


def document_parts(chunks: Sequence[Chunk], max_chars: int = MAX_PART_CHARS) -> list[Part]:
    """The whole document as it is searched, in order, cut into parts of whole sections (a
    section longer than `max_chars` is cut between its chunks): what the Admin preview pages."""
    runs: list[list[Chunk]] = []
    for chunk in chunks_in_order(chunks):
        last = runs[-1] if runs else []
        if (
            last
            and last[-1].section_path == chunk.section_path
            and (sum(len(c.text) for c in last) + len(chunk.text) <= max_chars)
        ):
            last.append(chunk)
        else:
            runs.append([chunk])
    parts: list[list[tuple[str, str]]] = []
    size = 0
    for run in runs:
        text = section_text(run, None).text
        if parts and size + len(text) <= max_chars:
            parts[-1].append((run[0].section_path, text))
            size += len(text)
        else:
            parts.append([(run[0].section_path, text)])
            size = len(text)
    return [Part(tuple(pieces)) for pieces in parts]


def text_blocks(text: str) -> list[str | list[list[str]]]:
    """The paragraphs of a text; a paragraph of two or more lines that are all table rows
    (cells joined with ' | ') comes back as its rows of cells."""
    blocks: list[str | list[list[str]]] = []
    for paragraph in _BLANK_LINE.split(text):
        lines = [line for line in paragraph.splitlines() if line.strip()]
        if not lines:
            continue
        if len(lines) >= 2 and all(TABLE_CELL in line for line in lines):
            blocks.append([[cell.strip() for cell in line.split(TABLE_CELL)] for line in lines])
        else:
            blocks.append(paragraph.strip("\n"))
    return blocks


def table_columns(rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """(column names, body rows) of a table: its first row when every cell of it is a distinct
    name, else numbered columns; rows padded to the same width."""
    width = max(len(row) for row in rows)
    padded = [row + [""] * (width - len(row)) for row in rows]
    head = padded[0]
    if all(head) and len(set(head)) == width and len(padded) > 1:
        return head, padded[1:]
    return [str(i) for i in range(1, width + 1)], padded


def _inline(piece: str) -> str:
    """Part of a line as literal Markdown, keeping a space at either edge."""
    body = safe.escape_inline(piece)
    if not body:
        return " " if piece else ""
    lead = " " if piece[:1].isspace() else ""
    tail = " " if piece[-1:].isspace() else ""
    return lead + body + tail


def section_markdown(section: SectionText) -> str:
    """The section as literal Markdown (document text is untrusted: no HTML, link or image can
    come out of it), the cited passage marked line by line with an orange background."""
    if section.marked is None:
        return safe.escape_text(section.text)
    start, end = section.marked
    paragraphs: list[list[str]] = [[]]
    position = 0
    for line in re.split(r"(\r\n|\r|\n)", section.text):
        if line in ("\r\n", "\r", "\n"):
            position += len(line)
            continue
        line_start, line_end = position, position + len(line)
        position = line_end
        if not line.strip():
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        a, b = max(start, line_start) - line_start, min(end, line_end) - line_start
        if a >= b:
            rendered = _inline(line)
        else:
            marked = _inline(line[a:b]).strip()
            rendered = _inline(line[:a]) + (f":{MARK}[**{marked}**]" if marked else "")
            rendered += _inline(line[b:])
        rendered = rendered.strip()
        if rendered:
            paragraphs[-1].append(rendered)
    return "\n\n".join("  \n".join(lines) for lines in paragraphs if lines)


def count_text(count: int, unit: str) -> str:
    """'1 chunk', '3 chunks'."""
    return f"{count} {unit if count == 1 else unit + 's'}"
