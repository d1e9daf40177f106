"""Files in, versioned documents out: size check, parse, chunk, then one atomic store write.

Every outcome is an `IngestResult`; a failure at any step is reported as one line and leaves
the store exactly as it was (the store's `replace_document` writes the new version
completely before the old one is removed).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ingest.chunker import chunk_document, chunk_windows
from ingest.config import IngestConfig
from ingest.errors import IngestError
from ingest.models import Chunk, DocumentInfo, IngestResult, ParsedDocument
from ingest.originals import OriginalStore, checksum_of
from ingest.parse import (
    SUPPORTED_EXTENSIONS,
    PageProgress,
    check_size,
    iter_text_windows,
    lineage_is_current,
    parse_bytes,
    safe_source,
)
from ingest.protocols import KnowledgeBase
from ingest.store import validate_chunk_groups

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int, IngestResult], None]


def doc_id_for(source: str) -> str:
    """A stable id for a source name, so re-uploading the same name updates one document."""
    name = unicodedata.normalize("NFC", source)
    return "doc-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]


def document_groups(groups: Iterable[str] | str | None) -> list[str]:
    """Checked reader groups of a document; none given means everyone ("all").

    Re-ingesting without groups keeps an existing document's groups (see ingest_bytes), so a
    routine folder re-run can never widen who may read a restricted document.
    """
    try:
        return validate_chunk_groups(groups)
    except ValueError as exc:
        raise IngestError(str(exc)) from exc


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, IngestError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_room(store: KnowledgeBase, text_bytes: int) -> None:
    """A streamed file's whole size is not known as chunks: check the disk for its bytes."""
    problem = getattr(store, "disk_problem", None)
    if callable(problem):
        from ingest.store import DISK_BYTES_PER_TEXT_BYTE

        message = problem(int(text_bytes * DISK_BYTES_PER_TEXT_BYTE))
        if message:
            raise IngestError(message)


def _unchanged(old: DocumentInfo, checksum: str, groups: list[str] | None) -> bool:
    """The stored document has these bytes, was parsed by today's parsers, and (when given)
    has these readers. A document whose write did not complete has no checksum (see
    MilvusStore.check_consistency); one stored before lineage was kept has no parser."""
    if not old.checksum or old.checksum != checksum:
        return False
    if not lineage_is_current(old.parser, old.source):
        return False
    return groups is None or sorted(old.groups) == sorted(groups)


def _keep_original(originals: OriginalStore | None, data: bytes) -> bool:
    """Keep the file's bytes; True when this call wrote them (so a failure removes them)."""
    if originals is None:
        return False
    try:
        return originals.put(data)
    except OSError as exc:
        raise IngestError(f"the original file could not be kept ({exc.strerror or exc})") from exc


def _written(
    originals: OriginalStore, data: bytes, store: KnowledgeBase, old: DocumentInfo | None
) -> None:
    """After the new version went live: its original is there (a delete of a document with the
    same bytes may have removed it meanwhile), the replaced version's is gone."""
    originals.put(data)
    if old is not None and old.checksum != checksum_of(data):
        originals.discard(old.checksum, store)


def _tidy_originals(
    originals: OriginalStore | None, step: Callable[[OriginalStore], object]
) -> None:
    """Book-keeping of the originals that must not change the ingest's outcome: logged."""
    if originals is None:
        return
    try:
        step(originals)
    except Exception as exc:  # noqa: BLE001 - the knowledge base itself is as reported
        log.warning("original files in %s: %s", originals.root, exc)


def _skipped(
    shown: str,
    source: str,
    old: DocumentInfo,
    data: bytes,
    originals: OriginalStore | None,
    store: KnowledgeBase,
) -> IngestResult:
    """Unchanged: nothing is written, except the original of a document ingested before
    originals were kept (uploading it again is how its viewer gets the file)."""
    if originals is not None and not originals.has(old.checksum):
        with store.document_lock(old.doc_id, source):
            try:
                _keep_original(originals, data)
            except IngestError as exc:
                log.warning("%s: %s", source, exc)
    return IngestResult(
        path=shown, source=source, status="skipped", doc_id=old.doc_id,
        version=old.version, chunks=old.chunks, reason="unchanged",
    )  # fmt: skip


def ingest_bytes(
    data: bytes,
    filename: str,
    store: KnowledgeBase,
    *,
    groups: Iterable[str] | str | None = None,
    config: IngestConfig,
    path: str | None = None,
    on_page: PageProgress | None = None,
    originals: OriginalStore | None = None,
) -> IngestResult:
    """Ingest one uploaded file's bytes; never raises for bad input or a failing store.
    `on_page(stage, done, total)` hears about slow parse stages (OCR, page by page). With
    `originals`, the file itself is kept there too (also when it is unchanged but was
    ingested before originals were kept); a failed ingest keeps nothing."""
    shown = path or filename
    try:
        source = safe_source(filename)
    except IngestError as exc:
        return IngestResult(path=shown, source=str(filename), status="failed", reason=str(exc))
    doc_id = doc_id_for(source)
    try:
        given = document_groups(groups) if groups else None
        check_size(len(data), config.max_bytes)
        checksum = hashlib.sha256(data).hexdigest()
        old = store.get_document(doc_id)
        if old and _unchanged(old, checksum, given):
            return _skipped(shown, source, old, data, originals, store)
        timeout = config.parse_timeout_s if config.parse_timeout_s > 0 else None
        streamed = source.lower().endswith(".txt")  # plain text: read as it is written
        doc = (
            None
            if streamed
            else parse_bytes(
                data,
                source,
                max_bytes=config.max_bytes,
                timeout_s=timeout,
                ocr_timeout_s=config.ocr_timeout_s,
                on_page=on_page,
            )  # fmt: skip
        )
        # Parsing ran unlocked; from here on this document is ours alone. Another admin may
        # have changed or deleted it meanwhile: version and readers come from what they left.
        with store.document_lock(doc_id, source):
            old = store.get_document(doc_id)
            if old and _unchanged(old, checksum, given):
                return _skipped(shown, source, old, data, originals, store)
            # no groups given: an existing document keeps its readers
            readers = given or (list(old.groups) if old else document_groups(None))
            version = old.version + 1 if old else 1
            record: dict[str, Any] = {
                "doc_id": doc_id, "doc_version": version, "groups": readers,
                "checksum": checksum, "chunk_tokens": config.chunk_tokens,
                "overlap_tokens": config.chunk_overlap_tokens,
            }  # fmt: skip
            seen = _Seen()
            kept = _keep_original(originals, data)
            try:
                if doc is not None:  # a list: the store checks the disk for all of it up front
                    listed = chunk_document(doc, **record)
                    if not listed:
                        raise IngestError("empty file (no text found)")
                    store.replace_document(listed)
                    seen.chunks, seen.hidden_removed = len(listed), doc.hidden_removed
                    seen.hidden_kinds = doc.hidden_kinds
                    seen.ocr_pages, seen.warnings = doc.ocr_pages, doc.warnings
                else:
                    _check_room(store, len(data))
                    windows = seen.windows(data, source, timeout)
                    stream = seen.count(chunk_windows(windows, **record))
                    first = next(stream, None)
                    if first is None:
                        raise IngestError("empty file (no text found)")
                    store.replace_document(itertools.chain([first], stream))
            except BaseException:
                if kept:  # a broken upload keeps nothing
                    _tidy_originals(originals, lambda o: o.discard(checksum, store))
                raise
            _tidy_originals(originals, lambda o: _written(o, data, store, old))
    except Exception as exc:  # the contract: one line per failed file, store untouched
        log.info("ingest failed for %s: %s", shown, exc, exc_info=not isinstance(exc, IngestError))
        return IngestResult(
            path=shown, source=source, status="failed", doc_id=doc_id, reason=_one_line(exc)
        )
    return IngestResult(
        path=shown, source=source, status="ingested", doc_id=doc_id, version=version,
        chunks=seen.chunks, hidden_removed=seen.hidden_removed, hidden_kinds=seen.hidden_kinds,
        ocr_pages=seen.ocr_pages, warnings=seen.warnings,
    )  # fmt: skip


class _Seen:
    """What the store consumed of a (possibly streamed) document: chunks, hidden text."""

    def __init__(self) -> None:
        self.chunks = 0
        self.hidden_removed = 0
        self.hidden_kinds: list[str] = []
        self.ocr_pages: list[int] = []
        self.warnings: list[str] = []

    def count(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        for chunk in chunks:
            if not self.chunks:
                self.hidden_removed = chunk.hidden_removed
            self.chunks += 1
            yield chunk

    def windows(
        self, data: bytes, source: str, timeout_s: float | None
    ) -> Iterator[tuple[int, ParsedDocument]]:
        """A text file's windows (ingest.parse.iter_text_windows) under the parse deadline;
        a file over it is refused and the store rolls the partial write back."""
        spent = 0.0  # parsing only: chunking, embedding and writes of earlier windows not counted
        windows = iter_text_windows(data, source)
        while True:
            started = time.monotonic()
            item = next(windows, None)
            spent += time.monotonic() - started
            if item is None:
                return
            if not self.hidden_kinds:
                self.hidden_kinds = item[1].hidden_kinds
            if timeout_s and spent > timeout_s:
                raise IngestError(f"parsing took longer than {timeout_s:g} s; file refused")
            yield item


def ingest_file(
    path: Path | str,
    store: KnowledgeBase,
    *,
    groups: Iterable[str] | str | None = None,
    config: IngestConfig,
    originals: OriginalStore | None = None,
) -> IngestResult:
    """Ingest one file from disk; the size limit is checked before the file is read."""
    path = Path(path)
    try:
        check_size(path.stat().st_size, config.max_bytes)
        data = path.read_bytes()
    except (IngestError, OSError) as exc:
        reason = str(exc) if isinstance(exc, IngestError) else f"cannot read file ({exc.strerror})"
        return IngestResult(path=str(path), source=path.name, status="failed", reason=reason)
    return ingest_bytes(
        data, path.name, store, groups=groups, config=config, path=str(path), originals=originals
    )


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def expand_paths(paths: Iterable[Path | str]) -> list[tuple[Path, bool]]:
    """Files to ingest, folders walked recursively (sorted, hidden skipped).

    The flag says whether the file was named explicitly; files found in a folder walk with an
    unsupported extension are reported as skipped rather than failed.
    """
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and not _hidden(child, path):
                    found.append((child, False))
        else:
            found.append((path, True))
    return found


def ingest_paths(
    paths: Iterable[Path | str],
    store: KnowledgeBase,
    *,
    groups: Iterable[str] | str | None = None,
    config: IngestConfig,
    on_progress: ProgressCallback | None = None,
    originals: OriginalStore | None = None,
) -> list[IngestResult]:
    """Ingest files and folders; one result per file, in order, with progress callbacks."""
    files = expand_paths(paths)
    results: list[IngestResult] = []
    seen: dict[str, Path] = {}
    for done, (path, explicit) in enumerate(files, start=1):
        name = path.name
        if not explicit and path.suffix.lower() not in SUPPORTED_EXTENSIONS:
            result = IngestResult(
                path=str(path), source=name, status="skipped",
                reason=f"unsupported file type {path.suffix.lower() or '(none)'}",
            )  # fmt: skip
        elif not path.exists():
            result = IngestResult(
                path=str(path), source=name, status="failed", reason="no such file or directory"
            )
        elif name in seen:
            result = IngestResult(
                path=str(path), source=name, status="failed",
                reason=f"same file name as {seen[name]} in this batch; rename one of them",
            )  # fmt: skip
        else:
            seen[name] = path
            result = ingest_file(path, store, groups=groups, config=config, originals=originals)
        results.append(result)
        if on_progress is not None:
            on_progress(done, len(files), result)
    return results
