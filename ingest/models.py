"""The records that flow through ingestion and retrieval."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

PARSER_VERSION = "parse-9"  # 2: hidden text dropped; 3: PDFium, NFKC, furniture, tables, OCR; 4: field lines kept; 5: Markdown inline marks read as text; 6: field labels of several words; 7: PDF table rows laid out by column; 8: HTML list items keep their number or bullet; 9: plain-text columns set apart by spaces or tabs are table rows
CHUNKER_VERSION = "chunk-2"  # 2: a chunk starting inside a table carries its header row
DEFAULT_GROUP = "all"


class Block(BaseModel):
    """One structural unit a parser found: a paragraph, list item, or table row run."""

    text: str
    section_path: list[str] = Field(default_factory=list, description="Headings above it.")
    page: int | None = Field(None, description="1-based page (PDF only).")
    start_char: int = Field(0, description="Offset of the block in the document's plain text.")
    end_char: int = 0
    kind: str = Field("text", description="text | heading | table")


class ParsedDocument(BaseModel):
    """A file turned into ordered blocks; `text` is the concatenated plain text."""

    source: str = Field(description="File name as uploaded.")
    title: str
    text: str
    blocks: list[Block]
    parser: str = PARSER_VERSION
    hidden_removed: int = Field(
        0, description="Characters of text a reader never sees (ingest/hidden) left out of it."
    )
    hidden_kinds: list[str] = Field(
        default_factory=list, description="What that hidden text was, e.g. 'tiny text'."
    )
    furniture: list[str] = Field(
        default_factory=list,
        description="Running headers and footers (page furniture) removed from the text, "
        "each kept once, in order of first appearance.",
    )
    ocr_pages: list[int] = Field(
        default_factory=list,
        description="1-based pages (1 for an image) whose text came from OCR.",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="Parts of the file that could not be read while the rest was, in plain "
        "words (e.g. 'table 3 skipped: malformed').",
    )


class Chunk(BaseModel):
    """One retrievable passage: its text, where it sits in its document, and who may read it."""

    chunk_id: str
    doc_id: str
    doc_version: int = 1
    title: str = ""
    source: str = ""
    section_path: str = Field("", description="Headings joined with ' > '.")
    page: int | None = None
    start_char: int = 0
    end_char: int = 0
    text: str
    groups: list[str] = Field(default_factory=lambda: [DEFAULT_GROUP])
    checksum: str = Field("", description="SHA-256 of the source file bytes.")
    created_at: float = 0.0
    parser_version: str = PARSER_VERSION
    chunker_version: str = CHUNKER_VERSION
    embedding_version: str = Field("", description="Embedding model id, empty when BM25-only.")
    hidden_removed: int = Field(
        0,
        description="ParsedDocument.hidden_removed of the whole document (document-level, "
        "like checksum), for the document list.",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Caller metadata kept as given (documents written through the LangChain "
        "view); for uploaded files only `table_header`, the header row of the table a chunk "
        "starts inside of.",
    )
    furniture: list[str] = Field(
        default_factory=list,
        description="ParsedDocument.furniture of the whole document (document-level, kept in "
        "the document list, not per chunk).",
    )


class Hit(BaseModel):
    """A chunk returned by a search, with per-channel scores (higher is better)."""

    chunk_id: str
    doc_id: str
    doc_version: int = 1
    title: str = ""
    source: str = ""
    section: str = ""
    page: int | None = None
    start_char: int = 0
    end_char: int = 0
    text: str
    groups: list[str] = Field(default_factory=list)
    score: float = Field(description="Fused score used for ranking.")
    bm25_score: float | None = None
    dense_score: float | None = None
    rank: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict, description="Chunk.metadata.")
    parser: str = Field("", description="Chunk.parser_version (lineage).")


class DocumentInfo(BaseModel):
    """One document as the document list shows it."""

    doc_id: str
    title: str
    source: str
    version: int
    chunks: int
    groups: list[str]
    checksum: str = ""
    created_at: float = 0.0
    hidden_removed: int = Field(
        0,
        description="Characters of hidden text dropped at parse (0 where the store does not "
        "record it).",
    )
    parser: str = Field(
        "", description="Parser lineage of the active version ('' where the store predates it)."
    )
    furniture: list[str] = Field(
        default_factory=list,
        description="Running headers and footers left out of the text ([] where the store "
        "predates them).",
    )


class IngestResult(BaseModel):
    """The outcome for one file: ingested, skipped (unchanged) or failed (reason)."""

    path: str
    source: str
    status: str = Field(description="ingested | skipped | failed")
    doc_id: str | None = None
    version: int | None = None
    chunks: int = 0
    reason: str | None = None
    hidden_removed: int = Field(0, description="Characters of hidden text dropped at parse.")
    hidden_kinds: list[str] = Field(default_factory=list, description="What that text was.")
    ocr_pages: list[int] = Field(default_factory=list, description="Pages read by OCR.")
    warnings: list[str] = Field(
        default_factory=list, description="Parts of the file skipped while the rest was read."
    )


def parse_notes(
    parser: str, ocr_pages: list[int] | None = None, warnings: list[str] | None = None
) -> str:
    """How the document list and the ingest result flag how text was obtained ("" when
    nothing is worth saying): "text from OCR (3 pages)", plus any skipped parts."""
    notes = []
    if ocr_pages:
        notes.append(f"text from OCR ({len(ocr_pages)} page{'s' if len(ocr_pages) != 1 else ''})")
    elif " ocr=" in parser:
        notes.append("text from OCR")
    notes += warnings or []
    return "; ".join(notes)
