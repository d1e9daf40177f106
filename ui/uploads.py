"""What the Admin page shows about an upload: who may read a file before and after, the result
table, the document list's rows. The upload itself is hopwise.app.Hopwise.ingest_uploads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hopwise.documents import AccessChange as AccessChange
from hopwise.documents import access_changes as access_changes
from ingest.hidden import hidden_note
from ingest.models import DocumentInfo, IngestResult, parse_notes
from ingest.parse import SUPPORTED_EXTENSIONS
from ui.documents import count_text

UPLOAD_TYPES = tuple(ext.lstrip(".") for ext in SUPPORTED_EXTENSIONS)


def parse_groups(text: str) -> list[str]:
    """Groups typed by the admin; an empty value is an error, never "public"."""
    groups = [g.strip() for g in text.split(",") if g.strip()]
    if not groups:
        raise ValueError("Name at least one group (`all` is everyone).")
    from ingest.store import validate_chunk_groups

    return validate_chunk_groups(groups)


def result_rows(results: Sequence[IngestResult]) -> list[dict[str, Any]]:
    """The result table: file, status, chunks, version, reason, hidden text removed."""
    return [
        {
            "file": r.source,
            "status": r.status,
            "chunks": r.chunks,
            "version": r.version,
            "reason": r.reason or "",
            "hidden text": hidden_note(r.hidden_removed, r.hidden_kinds),
            "notes": parse_notes("", r.ocr_pages, r.warnings),
        }
        for r in results
    ]


def document_row(doc: DocumentInfo) -> list[str]:
    """A document of the Admin list as its non-empty parts, plain text: source (when the title
    differs), version, chunks ("1 chunk"), groups, when it was ingested, notes."""
    ingested = (
        "ingested " + datetime.fromtimestamp(doc.created_at).strftime("%Y-%m-%d %H:%M")
        if doc.created_at
        else ""
    )
    parts = [
        doc.source if doc.title and doc.title != doc.source else "",
        f"version {doc.version}",
        count_text(doc.chunks, "chunk"),
        "groups: " + ", ".join(doc.groups) if doc.groups else "",
        ingested,
        hidden_note(doc.hidden_removed),
        parse_notes(doc.parser),
    ]
    return [part for part in parts if part]
