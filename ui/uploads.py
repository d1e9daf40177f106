"""The admin upload handler: a plain function over (filename, bytes) pairs, so it is tested
without the file-uploader widget, and the page only draws progress and the result table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hopwise.settings import Settings
from ingest.models import IngestResult
from ingest.parsers import SUPPORTED_EXTENSIONS
from ingest.protocols import KnowledgeBase

UPLOAD_TYPES = tuple(ext.lstrip(".") for ext in SUPPORTED_EXTENSIONS)
ProgressFn = Callable[[int, str, str], None]  # (index, filename, phase: "start" | "done")


def ingest_uploads(
    files: Sequence[tuple[str, bytes]],
    store: KnowledgeBase,
    *,
    groups: Sequence[str],
    settings: Settings,
    on_progress: ProgressFn | None = None,
) -> list[IngestResult]:
    """Ingest each uploaded file (type, size and parse checks happen in ingest_bytes); one
    file's failure never stops the others."""
    from ingest.pipeline import ingest_bytes

    results = []
    for index, (name, data) in enumerate(files):
        if on_progress:
            on_progress(index, name, "start")
        try:
            result = ingest_bytes(data, name, store, groups=list(groups), config=settings.ingest)
        except Exception as exc:  # noqa: BLE001 - reported per file, never a stack trace
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            result = IngestResult(path=name, source=name, status="failed", reason=reason)
        results.append(result)
        if on_progress:
            on_progress(index, name, "done")
    return results


def result_rows(results: Sequence[IngestResult]) -> list[dict[str, Any]]:
    """The result table: file, status, chunks, version, reason."""
    return [
        {
            "file": r.source,
            "status": r.status,
            "chunks": r.chunks,
            "version": r.version,
            "reason": r.reason or "",
        }
        for r in results
    ]
