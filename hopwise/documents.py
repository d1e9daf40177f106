"""The knowledge base's documents as the application changes them: an admin's upload of
(filename, bytes) pairs, and deleting a document with its original. The Admin page and the CLI
go through these (via hopwise.app.Hopwise), never to the store and the originals directly."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hopwise.settings import Settings
from ingest.models import DEFAULT_GROUP, DocumentInfo, IngestResult
from ingest.protocols import KnowledgeBase

if TYPE_CHECKING:
    from ingest.originals import OriginalStore

# (index, filename, phase): "start"; a slow stage in progress such as "ocr 3/12"; then the
# file's outcome, "ingested" | "skipped" | "failed"
ProgressFn = Callable[[int, str, str], None]


def ingest_uploads(
    files: Sequence[tuple[str, bytes]],
    store: KnowledgeBase,
    *,
    groups: Sequence[str] | None,
    settings: Settings,
    on_progress: ProgressFn | None = None,
) -> list[IngestResult]:
    """Ingest each uploaded file (type, size and parse checks happen in ingest_bytes); one
    file's failure never stops the others. `groups=None` keeps an existing document's readers
    (a new one is readable by all). Each file is kept in the originals directory too."""
    from ingest.pipeline import ingest_bytes

    originals = originals_for(settings, store)
    results = []
    for index, (name, data) in enumerate(files):
        if on_progress:
            on_progress(index, name, "start")
        try:
            readers = None if groups is None else list(groups)

            def on_page(
                stage: str, done: int, total: int, index: int = index, name: str = name
            ) -> None:
                if on_progress:
                    on_progress(index, name, f"{stage} {done}/{total}")

            result = ingest_bytes(
                data, name, store, groups=readers, config=settings.ingest, on_page=on_page,
                originals=originals,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - reported per file, never a stack trace
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            result = IngestResult(path=name, source=name, status="failed", reason=reason)
        results.append(result)
        if on_progress:
            on_progress(index, name, result.status)
    return results


def delete_document(store: KnowledgeBase, doc_id: str, settings: Settings) -> int:
    """Remove a document's chunks, manifest entry and (when no other document shares it) its
    original; the number of chunks removed (0: already deleted, e.g. by another admin)."""
    from ingest.originals import delete_document as delete_with_original

    return delete_with_original(store, doc_id, originals_for(settings, store))


def originals_for(settings: Settings, store: Any) -> OriginalStore:
    """The originals directory (HOPWISE_ORIGINALS_DIR). Replicas sharing it on a network file
    system take the store's deployment-wide locks (PostgreSQL's), not lock files in it."""
    from ingest.originals import OriginalStore

    shared = getattr(store, "locks", None) if settings.database_url else None
    return OriginalStore(settings.originals_root, shared)


def readable_document(
    store: KnowledgeBase, doc_id: str, groups: Sequence[str], *, admin: bool = False
) -> DocumentInfo | None:
    """The document, or None unless the reader's groups (plus `all`) share one with it. An
    unlocked admin (checked server side by the caller) reads every document. Every view and
    download of an original goes through this."""
    from ingest.store import validate_groups

    if not doc_id:
        return None
    doc = store.get_document(doc_id)
    if doc is None or admin:
        return doc
    try:
        readers = set(validate_groups(groups))
    except ValueError:
        return None
    return doc if readers & set(doc.groups) else None


@dataclass(frozen=True)
class AccessChange:
    """How an upload changes who may read a file's document."""

    name: str
    before: tuple[str, ...]  # () for a new document
    after: tuple[str, ...]

    @property
    def widens(self) -> bool:
        """True when someone could read it after the upload who could not before."""
        if not self.before:
            return False
        old, new = set(self.before), set(self.after)
        return DEFAULT_GROUP not in old and (DEFAULT_GROUP in new or not new <= old)


def access_changes(
    names: Sequence[str],
    current: Callable[[str], DocumentInfo | None],
    groups: Sequence[str] | None,
) -> list[AccessChange]:
    """Per uploaded file name: its document's readers now (`current`: the document an upload
    of that name replaces, Hopwise.document_named) and after the upload."""
    changes = []
    for name in names:
        try:
            old = current(name)
        except Exception:  # noqa: BLE001 - a bad name fails in the upload itself
            old = None
        before = tuple(old.groups) if old else ()
        after = tuple(groups) if groups is not None else (before or (DEFAULT_GROUP,))
        changes.append(AccessChange(name, before, after))
    return changes
