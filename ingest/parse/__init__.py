"""Turn uploaded files (PDF, DOCX, Markdown, TXT, HTML) into ordered, structured blocks.

Every parser feeds a `Builder`, which owns the plain text and the block offsets, so the
offsets in `Block.start_char/end_char` always index `ParsedDocument.text` exactly.
Bad input raises `IngestError` with a one-line reason; nothing else escapes `parse_bytes`.
"""

from __future__ import annotations

from pathlib import Path

from ingest.errors import IngestError
from ingest.models import ParsedDocument
from ingest.parse.builder import Builder, join_lines
from ingest.parse.formats import parse_inline
from ingest.parse.limits import (
    MAX_PDF_PAGES,
    SUPPORTED_EXTENSIONS,
    check_size,
    extension,
    lineage_is_current,
    parser_lineage,
    safe_source,
)
from ingest.parse.markdown import md_inline
from ingest.parse.progress import PageProgress, report, reporting
from ingest.parse.text import decode_text, iter_text_windows
from ingest.parse.worker import PARSE_WORKER, call_in_worker, worker_task

__all__ = [
    "MAX_PDF_PAGES",
    "SUPPORTED_EXTENSIONS",
    "Builder",
    "PageProgress",
    "call_in_worker",
    "check_size",
    "decode_text",
    "iter_text_windows",
    "join_lines",
    "lineage_is_current",
    "md_inline",
    "parse_bytes",
    "parse_file",
    "parser_lineage",
    "report",
    "safe_source",
    "worker_task",
]


def parse_bytes(
    data: bytes,
    filename: str,
    *,
    source: str | None = None,
    max_bytes: int | None = None,
    timeout_s: float | None = None,
    ocr_timeout_s: float | None = None,
    on_page: PageProgress | None = None,
) -> ParsedDocument:
    """Parse an uploaded file's bytes. With `timeout_s` the parse runs in a killable worker;
    a file that needs OCR gets `ocr_timeout_s` (default: the same) from the start instead.
    `on_page(stage, done, total)` hears about slow stages ("ocr": page 3 of 12)."""
    name = safe_source(source or filename)
    ext = extension(name)
    check_size(len(data), max_bytes)
    if not data.strip():
        raise IngestError("empty file")
    if timeout_s is None:
        with reporting(on_page):
            return parse_inline(data, name, ext)
    ocr = max(timeout_s, ocr_timeout_s or timeout_s)
    return PARSE_WORKER.parse(data, name, ext, timeout_s, ocr, on_page)


def parse_file(
    path: Path,
    *,
    source: str | None = None,
    max_bytes: int | None = None,
    timeout_s: float | None = None,
) -> ParsedDocument:
    """Parse a file on disk; the size limit is checked before the file is read."""
    path = Path(path)
    name = safe_source(source or path.name)
    extension(name)
    try:
        check_size(path.stat().st_size, max_bytes)
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"cannot read file ({exc.strerror or exc})") from exc
    return parse_bytes(data, name, max_bytes=max_bytes, timeout_s=timeout_s)
