"""Uploaded files kept as they were, by content, so a citation can open its source.

`OriginalStore(root)` holds each file's bytes once at `root/<sha256[:2]>/<sha256>`; the
SHA-256 is the `checksum` every chunk and `DocumentInfo` already carries, so two documents
with the same bytes share one file. A file is written atomically (temp file, fsync,
`os.replace`) and removed when no document of the knowledge base lists its checksum any more.
The store holds one version per document (an older one is removed once the new one is live),
so the originals kept are exactly those of the documents listed.

The composition root passes the directory (HOPWISE_ORIGINALS_DIR); nothing here knows the
application's settings.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
from pathlib import Path, PurePath

from ingest.locks import DocumentLocks
from ingest.protocols import KnowledgeBase

log = logging.getLogger(__name__)

_CHECKSUM = re.compile(r"^[0-9a-f]{64}$")
MIME_TYPES = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".html": "text/html",
    ".htm": "text/html",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
}
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")


def mime_type(source: str) -> str:
    """The media type of a document's original, from its file name's extension."""
    return MIME_TYPES.get(PurePath(source).suffix.lower(), "application/octet-stream")


def checksum_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class OriginalStore:
    """Content-addressed original files; see the module docstring."""

    def __init__(self, root: Path | str, locks: DocumentLocks | None = None) -> None:
        """`locks`: replicas sharing `root` on a network file system pass the deployment's
        shared locks (lock files there may not lock across machines); default, lock files
        under `root/.locks`."""
        self.root = Path(root)
        self._locks = locks if locks is not None else DocumentLocks(self.root / ".locks")

    def path(self, checksum: str) -> Path:
        """Where the bytes with this SHA-256 live; ValueError for anything but a SHA-256."""
        if not _CHECKSUM.match(checksum or ""):
            raise ValueError(f"not a SHA-256 checksum: {checksum!r}")
        return self.root / checksum[:2] / checksum

    def has(self, checksum: str) -> bool:
        return (
            bool(checksum)
            and _CHECKSUM.match(checksum) is not None
            and self.path(checksum).is_file()
        )

    def read(self, checksum: str) -> bytes | None:
        """The original's bytes, or None when it was not kept (or the checksum is empty)."""
        if not self.has(checksum):
            return None
        try:
            return self.path(checksum).read_bytes()
        except FileNotFoundError:  # removed meanwhile (the last document using it deleted)
            return None

    def put(self, data: bytes) -> bool:
        """Keep `data`; True when this call wrote it, False when it was there already."""
        checksum = checksum_of(data)
        target = self.path(checksum)
        with self._lock(checksum):
            if target.is_file():
                return False
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        return True

    def discard(self, checksum: str, store: KnowledgeBase) -> bool:
        """Remove the original unless a document of `store` still lists its checksum; True
        when it was removed."""
        if not checksum or not _CHECKSUM.match(checksum):
            return False
        with self._lock(checksum):
            if referenced(store, checksum):
                return False
            try:
                self.path(checksum).unlink()
            except FileNotFoundError:
                return False
        return True

    def _lock(self, checksum: str) -> contextlib.AbstractContextManager[None]:
        """Keeping and removing one checksum take turns (threads and processes alike)."""
        return self._locks.hold(f"original-{checksum}", "an original file")


def referenced(store: KnowledgeBase, checksum: str) -> bool:
    """Whether any listed document's current version has these bytes."""
    return any(doc.checksum == checksum for doc in store.list_documents())


def delete_document(store: KnowledgeBase, doc_id: str, originals: OriginalStore | None) -> int:
    """Delete a document and, when no other document has the same bytes, its original;
    returns the chunks removed (0 when it was already gone)."""
    with store.document_lock(doc_id):
        doc = store.get_document(doc_id)
        removed = store.delete_document(doc_id)
        if doc is not None and originals is not None:
            originals.discard(doc.checksum, store)
    return removed
