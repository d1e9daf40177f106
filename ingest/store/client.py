"""The connection to Milvus: the embedded engine (Milvus Lite, one process per file) or a server
URI, a deadline on every call, reconnect after a lost server, and secrets kept out of messages.
"""

from __future__ import annotations

import errno
import functools
import logging
import math
import os
import re
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypeVar

log = logging.getLogger(__name__)

UNCHANGED = "the knowledge base was not changed"


T = TypeVar("T")


FAST_ENGINE = "2.5.2rc1"  # the last build of milvus-lite's C++ engine (see docs/store.md)


ENGINE_SERVER = "milvus server"


EMBEDDED_OPEN_BACKOFF_S = (0.3, 0.8, 2.0)  # waits before retrying an embedded start (busy machine)


# Embedded Milvus Lite answers a write it cannot persist (a full disk) with "Unexpected error
# in RPC handling", which pymilvus retries 75 times (3.5 minutes); a local engine that failed
# three times will not succeed on the fourth.
EMBEDDED_RETRIES = 3


_REMOTE_PREFIXES = ("http://", "https://", "tcp://", "grpc://", "unix:")


class DiskFullError(OSError):
    """The disk holding an embedded knowledge base has too little free space to write."""

    def __str__(self) -> str:
        return str(self.strerror)


class StoreError(RuntimeError):
    """The store cannot be used (unreachable server, locked database, schema mismatch)."""


class ServedStore(Protocol):
    """What the connection and `milvus_errors` read of the store they serve (StoreBase is one)."""

    pm: Any  # the pymilvus module
    remote: bool
    shown_uri: str  # the URI with its secrets redacted, for every message
    _timeout: float

    def disk_problem(self, needed: int = 0, consequence: str = "") -> str: ...

    def _disk_full_message(self, needed: int, consequence: str = "") -> str: ...


def is_remote_uri(uri: str) -> bool:
    return uri.startswith(_REMOTE_PREFIXES)


class _EmbeddedServers:
    """Reference counts per embedded db file, so closing one store does not kill another's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refs: dict[str, int] = {}

    def acquire(self, path: str) -> None:
        with self._lock:
            self._refs[path] = self._refs.get(path, 0) + 1

    def release(self, path: str) -> None:
        with self._lock:
            self._refs[path] = self._refs.get(path, 1) - 1
            if self._refs[path] > 0:
                return
            del self._refs[path]
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(path)


EMBEDDED = _EmbeddedServers()


def import_pymilvus() -> Any:
    with warnings.catch_warnings():  # an older milvus-lite imports the deprecated pkg_resources
        warnings.simplefilter("ignore")
        import pymilvus

    return pymilvus


def embedded_engine_version() -> str:
    """The installed milvus-lite version ("" when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("milvus-lite")
    except PackageNotFoundError:
        return ""


def slow_engine_warning(engine_version: str | None = None) -> str | None:
    """One line when the embedded engine is milvus-lite 3.x or newer (the pure-Python rewrite,
    about 1000x slower at BM25 search), with the fix; None for the C++ engine."""
    found = embedded_engine_version() if engine_version is None else engine_version
    major = re.match(r"(\d+)", found)
    if not major or int(major.group(1)) < 3:
        return None
    return (
        f"milvus-lite {found} is the pure-Python engine (BM25 search ~1000x slower than the C++ "
        f"engine); restore it with: pip install 'milvus-lite=={FAST_ENGINE}'"
    )


def milvus_errors(method: Callable[..., T]) -> Callable[..., T]:
    """Turn engine/connection failures into StoreError with the operation and URI named."""

    @functools.wraps(method)
    def wrapper(self: ServedStore, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except DiskFullError as exc:
            raise StoreError(str(exc)) from None
        except (self.pm.MilvusException, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno != errno.ENOSPC:
                raise
            full = self.disk_problem()  # the engine's own message never names the disk
            if full or isinstance(exc, OSError):
                raise StoreError(full or self._disk_full_message(0)) from exc
            reason = getattr(exc, "message", None) or str(exc)
            reason = redact_uri_secrets(str(reason))
            raise StoreError(
                f"Milvus {method.__name__} failed at {self.shown_uri}: {reason}"
            ) from exc

    return wrapper


_CONNECTION_SIGNS = (
    "unavailable", "failed to connect", "connection refused", "deadline", "retry timeout",
    "retry run out", "socket closed", "connection reset", "fail connecting",
)  # fmt: skip


# MilvusClient methods that make a server call (they all take `timeout=`).
_RPC_METHODS = frozenset(
    {
        "query", "search", "insert", "upsert", "delete", "flush", "list_collections",
        "load_collection", "describe_collection", "create_collection", "drop_collection",
    }
)  # fmt: skip


_URI_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]*@")


_SECRET_QUERY = re.compile(r"(?i)([?&](?:token|password|passwd|pwd|secret|key|api_key)=)[^&\s]+")


def redact_uri_secrets(text: str) -> str:
    """Credentials inside URIs ('http://user:pass@host', '?token=...') replaced by ***."""
    return _SECRET_QUERY.sub(r"\1***", _URI_USERINFO.sub(r"\g<scheme>***@", text))


def is_lite_server(client: Any) -> bool:
    """milvus-lite's gRPC server does not implement GetVersion; a Milvus server does."""
    try:
        client.get_server_version(timeout=5)
    except Exception as exc:  # noqa: BLE001 - anything but UNIMPLEMENTED is a real server's
        return "UNIMPLEMENTED" in str(exc).upper()
    return False


def is_connection_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return "rpcerror" in text or any(sign in text for sign in _CONNECTION_SIGNS)


class GuardedClient:
    """The pymilvus client with a deadline on every server call, rebuilt after a lost server.

    Without an int `timeout` pymilvus retries an unreachable server 75 times (3.5 minutes), and
    a gRPC channel whose server went away may sit in reconnect backoff for a minute after it is
    back. So each remote call gets the deadline, and a connection failure drops the client: the
    next call opens a fresh one and works as soon as the server is up again (no app restart).

    milvus-lite (embedded, or its gRPC server standing in for a remote one): the 2.5.2rc1
    engine dies on a query or search of a collection that holds no rows at all (never written,
    or everything deleted before the file was reopened). Until a collection is seen to hold rows
    (its row count, a cheap call), reads of it return the empty answer without reaching the
    engine; a delete makes it "maybe empty" again. A real Milvus server is never guarded.
    """

    def __init__(self, client: Any, reopen: Callable[[], Any], store: ServedStore) -> None:
        self.client: Any = client
        self._reopen = reopen
        self._store = store
        self._lock = threading.Lock()
        self._deadline = max(1, math.ceil(store._timeout))  # pymilvus honours int timeouts only
        self._holds_rows: set[str] = set()  # milvus-lite: collections seen with rows
        self.lite = not store.remote or is_lite_server(client)
        self._orm: dict[tuple[str, str], Any] = {}  # ORM Collections for insert_columns

    def _current(self) -> Any:
        with self._lock:
            if self.client is None:
                try:
                    self.client = self._reopen()
                except Exception as exc:
                    raise StoreError(self._unreachable()) from exc
            return self.client

    def _unreachable(self) -> str:
        return f"the Milvus server at {self._store.shown_uri} is not reachable; try again when it is up"

    def _drop(self, client: Any) -> None:
        with self._lock:
            if self.client is not client:
                return
            self.client = None
        try:
            client.close()
        except Exception as exc:  # noqa: BLE001 - the old channel is broken anyway
            log.debug("closing a broken Milvus client: %s", exc)

    def _rowless(self, client: Any, name: str) -> bool:
        """milvus-lite: True while the collection holds no rows (reads would kill the engine)."""
        if not self.lite or name in self._holds_rows:
            return False
        if int(client.get_collection_stats(name).get("row_count", 0)) == 0:
            return True
        self._holds_rows.add(name)
        return False

    @staticmethod
    def _empty_answer(name: str, kwargs: dict[str, Any]) -> Any:
        if name == "search":
            return [[]]
        if "count(*)" in (kwargs.get("output_fields") or []):
            return [{"count(*)": 0}]
        return []

    def __getattr__(self, name: str) -> Any:
        if name not in _RPC_METHODS:
            return getattr(self._current(), name)

        def call(*args: Any, **kwargs: Any) -> Any:
            client = self._current()
            if self._store.remote:
                kwargs.setdefault("timeout", self._deadline)
            else:
                kwargs.setdefault("retry_times", EMBEDDED_RETRIES)
            if name in ("query", "search") and self._rowless(client, args[0]):
                return self._empty_answer(name, kwargs)
            if name in ("delete", "drop_collection", "create_collection"):
                self._holds_rows.discard(args[0])
            if name in ("drop_collection", "create_collection"):  # a new schema under the name
                self._orm = {k: v for k, v in self._orm.items() if k[1] != args[0]}
            try:
                return getattr(client, name)(*args, **kwargs)
            except Exception as exc:
                if not (self._store.remote and is_connection_error(exc)):
                    raise
                self._drop(client)
                raise StoreError(self._unreachable()) from exc

        return call

    def insert_columns(
        self, name: str, rows: list[dict[str, Any]], *, wait: bool = True
    ) -> Callable[[], None] | None:
        """Insert rows as columns through the ORM Collection on the same connection: ~20% more
        rows/s than MilvusClient's row-by-row conversion (pymilvus 2.6), same request.

        With wait=False the request is sent and a function is returned that waits for the
        engine's answer (raising its error): the caller builds the next rows meanwhile, while
        the engine, a process of its own, takes these. None: the insert is already done."""
        client = self._current()
        alias = getattr(client, "_using", None)
        if alias is None:  # a pymilvus without the shared ORM alias: the row path
            self.__getattr__("insert")(name, rows)
            return None
        key = (alias, name)
        collection = self._orm.get(key)
        try:
            kwargs: dict[str, Any] = (
                {"timeout": self._deadline}
                if self._store.remote
                else {"retry_times": EMBEDDED_RETRIES}
            )
            if collection is None:
                collection = self._store.pm.Collection(name, using=alias)
                self._orm[key] = collection
            fields = [
                f.name
                for f in collection.schema.fields
                if not f.is_function_output and not (f.is_primary and f.auto_id)
            ]
            columns = [[row[f] for row in rows] for f in fields]
            future = collection.insert(columns, _async=not wait, **kwargs)
        except Exception as exc:
            self._insert_failed(key, client, exc)
            raise  # not reached: _insert_failed raises
        if wait:
            self._holds_rows.add(name)
            return None

        def done() -> None:
            try:
                future.result()
            except Exception as exc:
                self._insert_failed(key, client, exc)
            self._holds_rows.add(name)

        return done

    def _insert_failed(self, key: tuple[str, str], client: Any, exc: Exception) -> NoReturn:
        self._orm.pop(key, None)
        if not (self._store.remote and is_connection_error(exc)):
            raise exc
        self._drop(client)
        raise StoreError(self._unreachable()) from exc

    def close(self) -> None:
        with self._lock:
            client, self.client = self.client, None
        self._orm.clear()
        if client is not None:
            client.close()


def megabytes(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MB" if count >= 1024 * 1024 else f"{count // 1024} KB"


def mount_point(path: Path) -> str:
    path = path.resolve()
    while not path.is_mount() and path != path.parent:
        path = path.parent
    return f"the disk mounted at {path}"


def lock_path(db: Path) -> Path:
    return db.parent / f".{db.name}.lock"


def lock_held_elsewhere(db: Path) -> bool:
    """True when another process holds Milvus Lite's lock on this database file."""
    import fcntl

    from milvus_lite.server_manager import server_manager_instance

    if str(db) in getattr(server_manager_instance, "_servers", {}):
        return False  # this process already runs the engine for it
    lock = lock_path(db)
    if not lock.exists():
        return False
    with open(lock, "a") as handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.lockf(handle, fcntl.LOCK_UN)
    return False


def lock_holder(db: Path) -> str:
    """Which process holds the lock on an embedded database: 'process 4242: streamlit run
    ui/app.py', from Linux's /proc/locks and the holder's command line; '' elsewhere or when
    it cannot be told."""
    try:
        inode = os.stat(lock_path(db)).st_ino
        locks = Path("/proc/locks").read_text()
    except OSError:
        return ""
    for line in locks.splitlines():
        fields = line.split()
        # '1: POSIX  ADVISORY  WRITE 4242 fe:00:2302785 0 EOF'
        if len(fields) >= 6 and fields[4].isdigit() and fields[5].endswith(f":{inode}"):
            pid = int(fields[4])
            if pid == os.getpid():
                continue
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                return f"process {pid}"
            words = [Path(a.decode(errors="replace")).name if i == 0 else a.decode(errors="replace")
                     for i, a in enumerate(argv) if a]  # fmt: skip
            command = " ".join(" ".join(words).split())[:120]
            return f"process {pid}: {command}" if command else f"process {pid}"
    return ""


def locked_message(uri: str) -> str:
    holder = lock_holder(Path(uri)) if "://" not in uri else ""
    return (
        f"the knowledge base at {uri} is open in another process"
        f"{f' ({holder})' if holder else ''}; stop it or use a Milvus server via "
        "HOPWISE_MILVUS_URI"
    )
