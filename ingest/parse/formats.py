"""One parser per file extension; any failure inside one becomes one clear IngestError."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from ingest.errors import IngestError
from ingest.models import ParsedDocument
from ingest.parse.docx import parse_docx
from ingest.parse.html import parse_html
from ingest.parse.image import parse_image
from ingest.parse.markdown import parse_markdown
from ingest.parse.pdf import parse_pdf
from ingest.parse.text import parse_txt

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- dispatch

PARSERS: dict[str, Callable[[bytes, str], ParsedDocument]] = {
    ".pdf": parse_pdf,
    ".docx": parse_docx,
    ".md": parse_markdown,
    ".markdown": parse_markdown,
    ".txt": parse_txt,
    ".html": parse_html,
    ".htm": parse_html,
    ".png": parse_image,
    ".jpg": parse_image,
    ".jpeg": parse_image,
}


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def valid_text(value: Any) -> Any:
    """Every string in `value` valid UTF-8: a lone surrogate (some PDFs' text layers have
    them) becomes U+FFFD, one character for one, so offsets stay exact."""
    if isinstance(value, str):
        return _SURROGATE_RE.sub("\ufffd", value)
    if isinstance(value, list):
        return [valid_text(v) for v in value]
    if isinstance(value, dict):
        return {valid_text(k): valid_text(v) for k, v in value.items()}
    return value


def parse_inline(data: bytes, source: str, ext: str) -> ParsedDocument:
    try:
        doc = PARSERS[ext](data, source)
        clean = valid_text(doc.model_dump())
        return doc if clean == doc.model_dump() else ParsedDocument.model_validate(clean)
    except IngestError:
        raise
    except MemoryError as exc:
        raise IngestError("file needs too much memory to parse") from exc
    except Exception as exc:  # any parser bug or odd input becomes one clear line
        raise IngestError(f"could not parse {ext} file ({type(exc).__name__}: {exc})") from exc
