"""Per-document write locks shared by every thread and every process on this machine.

Two admins (two browser sessions in one Streamlit process, or the CLI beside the app against
a Milvus server) writing the same document must not interleave: a delete in the middle of a
re-ingest, or two uploads of one file name, would otherwise leave a mixture of versions. Each
document's writes run under one lock: a reentrant thread lock (threads of this process) plus an
`fcntl.flock` on a small file in the lock directory (other processes). The second writer waits
for the first, then works on the state the first left, so both are told the truth.

Replicas on several machines share no lock directory: the composition root then passes a
`SharedLock` (a database lock every replica respects) instead of the directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

POLL_S = 0.05


class LockTimeout(RuntimeError):
    """Another writer held the document longer than the wait allows."""


class SharedLock(Protocol):
    """A lock held by one thread of the whole deployment (all replicas) at a time."""

    scope: str  # one name per deployment (the same lock object in every replica)

    def hold(self, name: str, timeout_s: float) -> contextlib.AbstractContextManager[None]: ...


@dataclass
class _Entry:
    lock: threading.RLock = field(default_factory=threading.RLock)
    depth: int = 0
    fd: int = -1
    held: contextlib.ExitStack | None = None


_ENTRIES: dict[str, _Entry] = {}
_ENTRIES_LOCK = threading.Lock()


def _entry(path: str) -> _Entry:
    with _ENTRIES_LOCK:
        return _ENTRIES.setdefault(path, _Entry())


class DocumentLocks:
    """`hold(doc_id)` serialises writes to one document across threads and processes."""

    def __init__(
        self,
        directory: Path | str | None = None,
        *,
        shared: SharedLock | None = None,
        timeout_s: float = 600.0,
    ) -> None:
        if (directory is None) == (shared is None):
            raise ValueError("document locks need a lock directory or a shared lock")
        self.directory = Path(directory) if directory is not None else Path()
        self.shared = shared
        self.timeout_s = timeout_s

    def path_for(self, doc_id: str) -> Path:
        digest = hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:24]
        return self.directory / f"doc-{digest}.lock"

    @contextlib.contextmanager
    def hold(self, doc_id: str, what: str = "") -> Iterator[None]:
        """Wait (up to timeout_s) until no other thread or process writes `doc_id`."""
        path = self.path_for(doc_id)
        key = str(path) if self.shared is None else f"{self.shared.scope}\0{path.name}"
        entry = _entry(key)
        deadline = time.monotonic() + self.timeout_s
        if not entry.lock.acquire(timeout=max(self.timeout_s, 0.0)):
            raise LockTimeout(_busy(what or doc_id, self.timeout_s))
        try:
            if entry.depth == 0:
                if self.shared is not None:
                    entry.held = self._hold_shared(path.name, deadline, what or doc_id)
                else:
                    entry.fd = _flock(path, deadline, what or doc_id, self.timeout_s)
            entry.depth += 1
            try:
                yield
            finally:
                entry.depth -= 1
                if entry.depth == 0 and entry.held is not None:
                    entry.held.close()
                    entry.held = None
                elif entry.depth == 0:
                    fcntl.flock(entry.fd, fcntl.LOCK_UN)
                    os.close(entry.fd)
                    entry.fd = -1
        finally:
            entry.lock.release()

    def close(self) -> None:
        """Release what the shared lock holds open (a database pool); lock files need nothing."""
        closer = getattr(self.shared, "close", None)
        if callable(closer):
            closer()

    def _hold_shared(self, name: str, deadline: float, what: str) -> contextlib.ExitStack:
        assert self.shared is not None
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(self.shared.hold(name, max(deadline - time.monotonic(), 0.0)))
        except LockTimeout:
            raise LockTimeout(_busy(what, self.timeout_s)) from None
        return stack


def _flock(path: Path, deadline: float, what: str, timeout_s: float) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise LockTimeout(_busy(what, timeout_s)) from None
            time.sleep(POLL_S)


def _busy(what: str, timeout_s: float) -> str:
    return (
        f"{what} is being written by another admin or process (waited {timeout_s:.0f} s); "
        "try again when that upload or delete has finished"
    )
