"""Cut a parsed document into ~N-token chunks along headings, sentences and table rows.

Sections (a heading and the blocks under it) are split independently, so a chunk never
spans two sections. Inside a section langchain's RecursiveCharacterTextSplitter works down
a separator ladder — blocks, table rows/lines, sentence ends (Chinese and English) — and
only reaches clause or word cuts for a single sentence longer than a whole chunk.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from langchain_text_splitters import RecursiveCharacterTextSplitter

from ingest.lang import CJK
from ingest.models import CHUNKER_VERSION, Block, Chunk, ParsedDocument

_CJK_CHARS = "\u3040-\u30ff\u3100-\u312f\uac00-\ud7af" + CJK  # one token per character
_TOKEN = re.compile(rf"[{_CJK_CHARS}]|[^\W{_CJK_CHARS}]+|[^\w\s]")
_LONG_WORD = re.compile(rf"[^\W{_CJK_CHARS}]{{17,}}")

SEPARATORS = [
    r"\n\n+",  # between blocks (paragraphs, headings, tables)
    r"\n",  # between table rows and code lines
    r"[。！？；…]+[”’」』）)]*",  # Chinese sentence ends, with closing quotes
    r"(?<=[.!?])[\"')\]”’]*\s+",  # English sentence ends followed by space
    r"[，,、：:]",  # clauses: only inside a single over-long sentence
    r"\s+",
    "",
]


def count_tokens(text: str) -> int:
    """Approximate model tokens: one per CJK character, word or punctuation mark.

    Words over 16 characters (hashes, base64, URLs) count one token per 16 characters, so a
    blob without spaces still gets cut into bounded chunks.
    """
    extra = sum((len(word) - 1) // 16 for word in _LONG_WORD.findall(text))
    return len(_TOKEN.findall(text)) + extra


TABLE_LINE_CHARS = 60  # of a table read as text, kept to say where it is


def _sections(blocks: list[Block]) -> Iterator[list[Block]]:
    """Group blocks by heading and by PDF page (so a chunk's page is the page of all its text).

    A heading with no body yet stays with its sub-heading.
    """
    group: list[Block] = []
    only_headings = True  # the group so far holds nothing but headings
    for block in blocks:
        if group:
            new_page = block.page != group[-1].page
            new_heading = block.kind == "heading" and not only_headings
            # a section entered without a heading block (PDF bookmarks)
            new_path = (
                block.kind != "heading"
                and not only_headings
                and (block.section_path != group[-1].section_path)
            )
            if new_page or new_heading or new_path:
                yield group
                group, only_headings = [], True
        group.append(block)
        only_headings = only_headings and block.kind == "heading"
    if group:
        yield group


def _splitter(chunk_tokens: int, overlap_tokens: int) -> RecursiveCharacterTextSplitter:
    return RecursiveCharacterTextSplitter(
        separators=SEPARATORS,
        is_separator_regex=True,
        keep_separator="end",
        chunk_size=max(1, chunk_tokens),
        chunk_overlap=max(0, min(overlap_tokens, chunk_tokens // 2)),
        length_function=count_tokens,
        strip_whitespace=True,
    )


def _pieces(
    text: str, splitter: RecursiveCharacterTextSplitter, heading_end: int
) -> Iterator[tuple[int, str]]:
    """Split `text` and locate each piece (verbatim substrings, in order).

    A piece holding only the section's leading headings is glued to the piece after it, so
    a heading never becomes a chunk of its own.
    """
    if count_tokens(text) <= splitter._chunk_size:
        stripped = text.strip()
        if stripped:
            yield text.index(stripped), stripped
        return
    overlap = splitter._chunk_overlap
    cursor = prev_end = 0
    carry: int | None = None
    for piece in splitter.split_text(text):
        # each piece starts after the previous start, brings new text past its end, and
        # shares at most the overlap with it (this settles repetitive text)
        found = text.find(piece, cursor)
        while found >= 0 and (
            found + len(piece) <= prev_end
            or (found < prev_end and count_tokens(text[found:prev_end]) > overlap)
        ):
            found = text.find(piece, found + 1)
        if found < 0:  # cannot happen for verbatim pieces; keep going rather than lose text
            found = text.find(piece)
        cursor = found + 1
        end = prev_end = found + len(piece)
        if end <= heading_end and carry is None:
            carry = found
            continue
        if carry is not None:
            found, carry = min(carry, found), None
        yield found, text[found:end]
    if carry is not None:
        yield carry, text[carry:heading_end]


def chunk_windows(
    windows: Iterable[tuple[int, ParsedDocument]],
    *,
    doc_id: str,
    doc_version: int,
    groups: list[str],
    checksum: str,
    chunk_tokens: int = 500,
    overlap_tokens: int = 50,
) -> Iterator[Chunk]:
    """Chunks of a document that arrives in windows (ingest.parse.iter_text_windows), one
    window in memory at a time: offsets are into the whole text, ids numbered throughout, the
    title and hidden-text count are the first window's. A window break is a section break."""
    record = _Record(doc_id, doc_version, groups, checksum, chunk_tokens, overlap_tokens)
    number = 0
    first: ParsedDocument | None = None
    for offset, window in windows:
        first = first or window
        for chunk in _chunks(window, record, offset=offset, number=number, first=first):
            yield chunk
            number += 1


def chunk_document(
    doc: ParsedDocument,
    *,
    doc_id: str,
    doc_version: int,
    groups: list[str],
    checksum: str,
    chunk_tokens: int = 500,
    overlap_tokens: int = 50,
) -> list[Chunk]:
    """The document's chunks, each with the full record and its offsets into `doc.text`."""
    return list(
        chunk_windows(
            [(0, doc)], doc_id=doc_id, doc_version=doc_version, groups=groups,
            checksum=checksum, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens,
        )
    )  # fmt: skip


@dataclass(frozen=True)
class _Record:
    """What every chunk of one document version carries, and how to cut it."""

    doc_id: str
    doc_version: int
    groups: list[str]
    checksum: str
    chunk_tokens: int
    overlap_tokens: int


def _chunks(
    doc: ParsedDocument, record: _Record, *, offset: int, number: int, first: ParsedDocument
) -> Iterator[Chunk]:
    """`doc`'s chunks, its offsets shifted by `offset` and ids numbered from `number`; title
    and hidden-text count from `first` (the document itself, or its first window)."""
    splitter = _splitter(record.chunk_tokens, record.overlap_tokens)
    starts = [block.start_char for block in doc.blocks]
    created = time.time()
    for section in _sections(doc.blocks):
        base = section[0].start_char
        body = doc.text[base : section[-1].end_char]
        path = " > ".join(section[-1].section_path)
        heading_end = max((b.end_char - base for b in section if b.kind == "heading"), default=0)
        for at, piece in _pieces(body, splitter, heading_end):
            start = base + at
            index = max(0, bisect.bisect_right(starts, start) - 1)
            block = doc.blocks[index]
            header = _table_header(doc, index)
            metadata: dict[str, Any] = {"table_header": header} if header else {}
            inside = doc.blocks[index : bisect.bisect_left(starts, start + len(piece))]
            flat = next((b for b in inside if b.kind == "text_table"), None)
            if flat is not None:  # lines that look like a table, read as text: its first line
                metadata["table_as_text"] = flat.text.split("\n", 1)[0][:TABLE_LINE_CHARS]
            yield Chunk(
                chunk_id=f"{record.doc_id}-v{record.doc_version}-{number:05d}",
                doc_id=record.doc_id,
                doc_version=record.doc_version,
                title=first.title,
                source=doc.source,
                section_path=path,
                page=block.page,
                start_char=offset + start,
                end_char=offset + start + len(piece),
                text=piece,
                groups=list(record.groups),
                checksum=record.checksum,
                created_at=created,
                parser_version=doc.parser,
                chunker_version=CHUNKER_VERSION,
                embedding_version="",  # set by the store, which knows the embedder
                hidden_removed=first.hidden_removed,
                furniture=first.furniture,
                metadata=metadata,
            )
            number += 1


def _table_header(doc: ParsedDocument, index: int) -> str:
    """The header row of the table a chunk starts inside of (after its first row), so the
    rows it carries can still be read by their columns; '' otherwise."""
    if doc.blocks[index].kind != "table":
        return ""
    first = index
    while first > 0 and doc.blocks[first - 1].kind == "table":
        gap = doc.text[doc.blocks[first - 1].end_char : doc.blocks[first].start_char]
        if gap != "\n":  # rows of one table are one line apart; a blank line starts another
            break
        first -= 1
    return doc.blocks[first].text if first < index else ""
