"""The admin upload handler: a plain function over (filename, bytes) pairs, so it is tested
without the file-uploader widget, and the page only draws progress and the result table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hopwise.settings import Settings
from ingest.models import IngestResult

UPLOAD_TYPES = ("pdf", "docx", "md", "txt", "html")
ProgressFn = Callable[[int, str, str], None]  # (index, filename, phase: "start" | "done")


def _failed(name: str, reason: str) -> IngestResult:
    return IngestResult(path=name, source=name, status="failed", reason=reason)


def precheck(name: str, size: int, settings: Settings) -> str | None:
    """Why a file is refused before parsing (type or size), or None when it may go on."""
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix == "htm":
        suffix = "html"
    if suffix not in UPLOAD_TYPES:
        return f"unsupported file type .{suffix or '?'} (accepted: {', '.join(UPLOAD_TYPES)})"
    limit = settings.max_upload_mb * 1024 * 1024
    if size > limit:
        return f"file is {size / 1048576:.1f} MB, over the {settings.max_upload_mb:g} MB limit"
    if size == 0:
        return "file is empty"
    return None


def ingest_uploads(
    files: Sequence[tuple[str, bytes]],
    store: Any,
    *,
    groups: Sequence[str],
    settings: Settings,
    on_progress: ProgressFn | None = None,
) -> list[IngestResult]:
    """Ingest each uploaded file; one file's failure never stops the others."""
    from ingest.pipeline import ingest_bytes

    results = []
    for index, (name, data) in enumerate(files):
        if on_progress:
            on_progress(index, name, "start")
        reason = precheck(name, len(data), settings)
        if reason:
            result = _failed(name, reason)
        else:
            try:
                result = ingest_bytes(data, name, store, groups=list(groups), settings=settings)
            except Exception as exc:  # noqa: BLE001 - reported per file, never a stack trace
                result = _failed(name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
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
