"""The Milvus knowledge-base store: BM25 (jieba) inside Milvus, optional dense vectors, ACL filters.

pymilvus is used directly (not langchain-milvus) for the hot path because the product needs
schema control, per-channel scores for the hop trace, and the ACL filter inside every request.
`as_langchain_vectorstore()` exposes the same collection to LangChain code.

Crash safety: a small manifest collection (same Milvus, so it works remotely too) records per
document the active version and whether the document is "in transition". While a document is in
transition only its active version (0 = none) is visible to searches; the filter that enforces
this sits inside each search request, next to the ACL filter.

Index formats: `reindex_format` rebuilds an older chunk collection in the current format,
keeping every row; it copies and checks before it swaps, so a crash leaves either the old
collection or the new one whole, and the next open finishes or undoes the swap.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import errno
import functools
import hashlib
import itertools
import json
import logging
import math
import re
import shutil
import tempfile
import threading
import time
import uuid
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ingest.config import FusionConfig
from ingest.lang import CJK, CODE_RE, language_of
from ingest.locks import DocumentLocks
from ingest.models import DEFAULT_GROUP, Chunk, DocumentInfo, Hit
from ingest.normalize import normalize_text, strip_controls
from ingest.phrases import MAX_KEY_CHARS, MAX_PHRASES, PHRASER, chunk_phrases, fold

if TYPE_CHECKING:
    from ingest.config import StoreConfig
    from ingest.embeddings import Embedder
    from ingest.vectors import EmbeddingWorker, VectorIndex

log = logging.getLogger(__name__)
T = TypeVar("T")

FAST_ENGINE = "2.5.2rc1"  # the last build of milvus-lite's C++ engine (see docs/store.md)
ENGINE_SERVER = "milvus server"
RRF_K = 60
INSERT_BATCH = 500
# Inserts are pipelined: the engine (a process of its own) takes one piece of rows while
# Python builds the next piece's folded text and phrase keys. The first piece of a write is
# small (nothing runs beside its building); later ones match the engine's ~3x slower pace per
# row. Measured on 2 cores, 500-chunk documents: 10k 1,692 -> 1,915 chunks/s, 50k ~1,500 ->
# ~1,740 (pieces of 100: slower than none, each insert call has a fixed cost; 250/250: 2,015
# against 2,100 for 125/375 in the same minutes).
INSERT_FIRST = 125
INSERT_PIECE = 375
MAX_TEXT_BYTES = 65_535
MAX_GROUPS = 64  # the ARRAY field's capacity
QUERY_LIMIT = 16_384  # Milvus caps offset + limit of one query
LEXICAL_THREADS = 4  # BM25 channels of hybrid searches in flight at once (one per question)
VISIBILITY_TTL_S = 1.0  # how long the in-transition list is reused between this store's writes
EMBEDDED_OPEN_BACKOFF_S = (0.3, 0.8, 2.0)  # waits before retrying an embedded start (busy machine)
# Embedded Milvus Lite answers a write it cannot persist (a full disk) with "Unexpected error
# in RPC handling", which pymilvus retries 75 times (3.5 minutes); a local engine that failed
# three times will not succeed on the fourth.
EMBEDDED_RETRIES = 3
# Disk space an embedded write must leave free, and what a write needs per byte of chunk text:
# measured 1.7 bytes of milvus.db per byte of text (text, BM25 index, fields), plus a margin.
MIN_FREE_BYTES = 4 * 1024 * 1024
DISK_BYTES_PER_TEXT_BYTE = 2.5
# jieba for Chinese and English alike; lower-cased so "Battle" matches "battle"; English stop
# words and the space/punctuation tokens jieba emits are dropped so they do not score.
PUNCTUATION_TOKENS = list(" ?？!！,，.。:：;；、'\"“”‘’()（）[]【】《》-–—/")
TEXT_ANALYZER = {
    "tokenizer": "jieba",
    "filter": ["lowercase", {"type": "stop", "stop_words": ["_english_", *PUNCTUATION_TOKENS]}],
}
_GROUP_RE = re.compile(f"^[A-Za-z0-9_.@:\\-{CJK}]{{1,64}}$")  # letters, digits, Han
_COLLECTION_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_REMOTE_PREFIXES = ("http://", "https://", "tcp://", "grpc://", "unix:")

CHUNK_FIELDS = [
    "chunk_id", "doc_id", "doc_version", "title", "source", "section_path", "page",
    "start_char", "end_char", "text", "groups_json", "checksum", "created_at",
    "parser_version", "chunker_version", "embedding_version",
]  # fmt: skip
# Index format: 2 adds metadata_json (LangChain documents' own metadata); 3 runs BM25 over
# search_text, the chunk text folded (ingest/phrases.fold: "Tekezé" is indexed as "Tekeze"),
# and keeps each chunk's phrase keys (phrases) with the extractor's version (PHRASER) in the
# collection description. An older collection still opens, answers and takes writes in its
# own format until `reindex_format` rebuilds it; format 1 refuses writes that carry metadata.
INDEX_FORMAT = 3
LANGUAGE_SAMPLE = 200  # chunks read to tell the knowledge base's language
LANGUAGE_CACHE_S = 60.0
MAX_METADATA_BYTES = 16_384
PHRASE_BYTES = 4 * MAX_KEY_CHARS + 32  # an element's VARCHAR limit: 4 UTF-8 bytes a character
FORMAT3_ROW_BYTES = 400  # the folded text and phrase keys, per chunk (see _bytes_need)
REINDEX_PAGE = 500  # rows per page when reindex_format copies a collection
REINDEX_SUFFIX = "_reindex"  # the copy reindex_format builds before it swaps
UNCHANGED = "the knowledge base was not changed"
SWAP_PENDING = "the rebuilt copy is kept: opening the knowledge base again finishes the rebuild"
MANIFEST_FIELDS = [
    "doc_id", "active_version", "pending_version", "in_transition", "title", "source",
    "groups_json", "checksum", "created_at", "chunks", "updated_at",
]  # fmt: skip
OPTIONAL_MANIFEST_FIELDS = ["hidden_removed", "parser", "furniture_json"]
MAX_FURNITURE_BYTES = 8192  # absent from older manifests


class DiskFullError(OSError):
    """The disk holding an embedded knowledge base has too little free space to write."""

    def __str__(self) -> str:
        return str(self.strerror)


class StoreError(RuntimeError):
    """The store cannot be used (unreachable server, locked database, schema mismatch)."""


@dataclass(frozen=True)
class Reindexed:
    """What `MilvusStore.reindex_format` did."""

    format_before: int
    format_after: int
    phraser_before: str  # the phrase extractor before ("" below format 3)
    rows: int  # chunk rows in the collection (every stored version)
    seconds: float
    rebuilt: bool  # False: the collection was current already


def _checked_names(groups: Iterable[str] | str | None) -> list[str]:
    """Group names from a list or a comma-separated string, each checked, duplicates dropped."""
    if groups is None:
        items: list[str] = []
    elif isinstance(groups, str):
        items = [g.strip() for g in groups.split(",") if g.strip()]
    else:
        items = [str(g).strip() for g in groups]
    result: list[str] = []
    for name in items:
        if not _GROUP_RE.match(name):
            raise ValueError(f"invalid group name {name!r}: use letters, digits and _.@:- only")
        if name not in result:
            result.append(name)
    return result


def validate_groups(groups: Iterable[str] | str | None) -> list[str]:
    """A reader's groups, "all" first; a bad name raises ValueError so no filter is widened."""
    names = _checked_names(groups)
    return [DEFAULT_GROUP] + [g for g in names if g != DEFAULT_GROUP]


def validate_chunk_groups(groups: Iterable[str] | str | None) -> list[str]:
    """A document's readers as given (checked names); no groups means everyone ("all")."""
    names = _checked_names(groups)
    if len(names) > MAX_GROUPS:
        raise ValueError(f"a document can have at most {MAX_GROUPS} groups")
    return names or [DEFAULT_GROUP]


def group_filter(groups: Iterable[str] | str | None) -> str:
    """The ACL expression for a user's groups; every value is JSON-quoted after validation."""
    values = ", ".join(json.dumps(g, ensure_ascii=False) for g in validate_groups(groups))
    return f"array_contains_any(groups, [{values}])"


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


_EMBEDDED = _EmbeddedServers()


def _import_pymilvus() -> Any:
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


def _clip(value: str, max_bytes: int) -> str:
    """Cut a metadata string to fit a VARCHAR limit (bytes), never mid-character."""
    data = value.encode("utf-8")
    if len(data) <= max_bytes:
        return value
    return data[:max_bytes].decode("utf-8", errors="ignore")


def quote_value(value: str) -> str:
    """A string as a Milvus expression literal (JSON-quoted: no way out of the quotes)."""
    return json.dumps(value, ensure_ascii=False)


def _milvus_errors(method: Callable[..., T]) -> Callable[..., T]:
    """Turn engine/connection failures into StoreError with the operation and URI named."""

    @functools.wraps(method)
    def wrapper(self: MilvusStore, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except DiskFullError as exc:
            raise StoreError(str(exc)) from None
        except (self._pm.MilvusException, OSError) as exc:
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


def _is_lite_server(client: Any) -> bool:
    """milvus-lite's gRPC server does not implement GetVersion; a Milvus server does."""
    try:
        client.get_server_version(timeout=5)
    except Exception as exc:  # noqa: BLE001 - anything but UNIMPLEMENTED is a real server's
        return "UNIMPLEMENTED" in str(exc).upper()
    return False


def _is_connection_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return "rpcerror" in text or any(sign in text for sign in _CONNECTION_SIGNS)


class _GuardedClient:
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

    def __init__(self, client: Any, reopen: Callable[[], Any], store: MilvusStore) -> None:
        self._client: Any = client
        self._reopen = reopen
        self._store = store
        self._lock = threading.Lock()
        self._deadline = max(1, math.ceil(store._timeout))  # pymilvus honours int timeouts only
        self._holds_rows: set[str] = set()  # milvus-lite: collections seen with rows
        self.lite = not store.remote or _is_lite_server(client)
        self._orm: dict[tuple[str, str], Any] = {}  # ORM Collections for insert_columns

    def _current(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    self._client = self._reopen()
                except Exception as exc:
                    raise StoreError(self._unreachable()) from exc
            return self._client

    def _unreachable(self) -> str:
        return f"the Milvus server at {self._store.shown_uri} is not reachable; try again when it is up"

    def _drop(self, client: Any) -> None:
        with self._lock:
            if self._client is not client:
                return
            self._client = None
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
                if not (self._store.remote and _is_connection_error(exc)):
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
                collection = self._store._pm.Collection(name, using=alias)
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
        if not (self._store.remote and _is_connection_error(exc)):
            raise exc
        self._drop(client)
        raise StoreError(self._unreachable()) from exc

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        self._orm.clear()
        if client is not None:
            client.close()


class MilvusStore:
    """Chunks in Milvus (embedded Milvus Lite file or a server URI); implements Retriever."""

    def __init__(
        self,
        uri: str,
        *,
        token: str | None = None,
        collection: str = "hopwise_chunks",
        embedder: Embedder | None = None,
        repair_after_s: float | None = None,
        timeout_s: float = 10.0,
        lock_dir: Path | str | None = None,
        lock_timeout_s: float = 600.0,
        fusion: FusionConfig | None = None,
    ) -> None:
        if not _COLLECTION_RE.match(collection):
            raise ValueError(f"invalid collection name {collection!r}")
        self.embedder = embedder
        self.remote = is_remote_uri(uri)
        self.uri = uri if self.remote else str(Path(uri).expanduser().resolve())
        self.shown_uri = redact_uri_secrets(self.uri)  # for every message: no password in it
        self.collection = collection if embedder is None else f"{collection}_dense{embedder.dim}"
        self.manifest = f"{self.collection}_docs"
        self._visibility: tuple[float, str] | None = None  # (when, _visibility_filter's text)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.locks = DocumentLocks(self._lock_dir(lock_dir), timeout_s=lock_timeout_s)
        self.vectors: VectorIndex | None = None  # side-collection vectors (attach_vectors)
        self.worker: EmbeddingWorker | None = None  # fills them (start_embedding_worker)
        self.embedding_problem = ""  # why there is no dense channel, when one was wanted
        self.fusion = fusion or FusionConfig()
        self._query_vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._query_lock = threading.Lock()
        self.repairs: list[str] = []  # what the consistency check on open found and did
        self._timeout = timeout_s
        self._maybe_empty = True
        self.index_format = INDEX_FORMAT  # of the opened collection (set when it is checked)
        self._language_cache: dict[tuple[str, ...], tuple[float, dict[str, float]]] = {}
        # the phrase extractor of the collection's phrases ("" before format 3)
        self.phraser = PHRASER if self.index_format >= 3 else ""
        # Embedded: this process holds the file lock, so every transition is a crash leftover.
        # Remote: another process may be mid-write; only repair transitions older than this.
        self._repair_after = (
            (600.0 if self.remote else 0.0) if repair_after_s is None else repair_after_s
        )
        self._pm = _import_pymilvus()
        self._token = token
        self._client = self._connect(token)
        try:
            self._ensure_collections()
            postponed = "repairs wait until there is space (reads still work)"
            low = self.disk_problem(consequence=postponed)
            if low:  # cleanup writes; documents in transition stay hidden meanwhile
                log.warning("%s", low)
            else:
                self.repair(self._repair_after)
                self.check_consistency()
        except Exception:
            self.close()
            raise

    @classmethod
    def from_config(
        cls,
        config: StoreConfig,
        *,
        embedder: Embedder | None = None,
        fusion: FusionConfig | None = None,
    ) -> MilvusStore:
        """The store a StoreConfig describes (the composition root builds it from settings)."""
        return cls(
            config.uri,
            token=config.token,
            collection=config.collection,
            embedder=embedder,
            timeout_s=config.timeout_s,
            lock_dir=config.lock_dir,
            fusion=fusion,
        )

    def _lock_dir(self, configured: Path | str | None) -> Path:
        """Per-document write locks: next to the embedded file, else in a folder per server URI
        under the temp dir (every process on this machine finds the same one)."""
        if configured:
            return Path(configured)
        if not self.remote:
            return Path(self.uri).parent / "locks"
        digest = hashlib.sha256(f"{self.uri}|{self.collection}".encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / "hopwise-locks" / digest

    def document_lock(self, doc_id: str, what: str = "") -> contextlib.AbstractContextManager[None]:
        """Hold while reading and rewriting one document (re-entrant; threads and processes)."""
        return self.locks.hold(doc_id, what)

    # ---- disk space (embedded) -------------------------------------------------------------

    def _disk_full_message(self, needed: int, consequence: str = "") -> str:
        folder = Path(self.uri).parent
        free = shutil.disk_usage(folder).free if folder.exists() else 0
        need = f"; this write needs about {_mb(needed)}" if needed else ""
        consequence = consequence or UNCHANGED
        return (
            f"disk full: {_mb(free)} free on {_mount_point(folder)} (holding {self.uri}){need}. "
            f"Free some space or move HOPWISE_DATA_DIR; {consequence}"
        )

    def disk_problem(self, needed: int = 0, consequence: str = "") -> str:
        """'' when an embedded write of about `needed` bytes fits, else the one-line reason
        naming the disk and the path. Always '' for a server (its disk is not ours to see)."""
        if self.remote:
            return ""
        try:
            free = shutil.disk_usage(Path(self.uri).parent).free
        except OSError:
            return ""
        if free >= needed + MIN_FREE_BYTES:
            return ""
        return self._disk_full_message(needed, consequence)

    def _dense_dim(self) -> int:
        """The dimension of the vectors written inline with the chunks (0: none)."""
        return self.embedder.dim if self.embedder is not None else 0

    def _check_disk(self, needed: int, consequence: str = "") -> None:
        problem = self.disk_problem(needed, consequence)
        if problem:
            raise DiskFullError(errno.ENOSPC, problem)

    # ---- connection and schema -------------------------------------------------------------

    def _connect(self, token: str | None) -> Any:
        if not self.remote:
            path = Path(self.uri)
            if not re.match(r"^[A-Za-z0-9.\-_]{1,36}$", path.name):
                raise StoreError(  # Milvus Lite's own limits on the database file name
                    f"embedded database name {path.name!r} must be at most 36 letters, digits, "
                    "'.', '-' or '_'"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            if _lock_held_elsewhere(path):
                raise StoreError(_locked_message(self.uri))
            _EMBEDDED.acquire(self.uri)
        try:
            client = self._open_client(token) if self.remote else self._open_embedded(token)
            return _GuardedClient(client, lambda: self._open_client(token), self)
        except Exception as exc:
            if not self.remote:
                _EMBEDDED.release(self.uri)
                if "opened by another program" in str(exc) or _lock_held_elsewhere(Path(self.uri)):
                    raise StoreError(_locked_message(self.uri)) from exc
                raise StoreError(f"cannot open the knowledge base at {self.uri}: {exc}") from exc
            reason = redact_uri_secrets(str(exc)).replace(token or "\0", "***")
            raise StoreError(
                f"cannot reach the Milvus server at {self.shown_uri}: {reason}"
            ) from None

    def _open_embedded(self, token: str | None) -> Any:
        """Milvus Lite's embedded start can fail once on a busy machine right after another
        process let go of the file ("Open local milvus failed"): try again after short waits
        (EMBEDDED_OPEN_BACKOFF_S) before reporting, unless another program holds the file."""
        for delay in (*EMBEDDED_OPEN_BACKOFF_S, None):
            try:
                return self._open_client(token)
            except Exception as exc:
                held = "opened by another program" in str(exc) or _lock_held_elsewhere(
                    Path(self.uri)
                )
                if held or delay is None:
                    raise
                log.info("embedded Milvus did not start (%s); retrying in %.1f s", exc, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _open_client(self, token: str | None) -> Any:
        """A fresh client (after the server was lost; see _GuardedClient)."""
        alias = f"hopwise-{uuid.uuid4().hex}"
        return self._pm.MilvusClient(
            uri=self.uri, token=token or "", timeout=self._timeout, alias=alias
        )

    def _ensure_collections(self) -> None:
        existing = set(self._client.list_collections())
        if self._reindex_name in existing:
            self._resume_reindex(existing)
            existing = set(self._client.list_collections())
        if self.collection not in existing:
            description = self._description(self.index_format)
            self._create_chunk_collection(self.collection, self.index_format, description)
        else:
            self._check_chunk_collection()
        if self.manifest not in existing:
            self._create_manifest_collection()
        fields = self._client.describe_collection(self.manifest).get("fields") or []
        names = {f.get("name") for f in fields}
        # a manifest written before hidden_removed or parser existed keeps working without
        # them (its documents' parser reads as unknown, so the same bytes re-ingest)
        self._manifest_fields = [*MANIFEST_FIELDS, *(f for f in OPTIONAL_MANIFEST_FIELDS
                                                     if f in names)]  # fmt: skip
        for name in (self.collection, self.manifest):
            self._client.load_collection(name)

    def _description(self, index_format: int, reindexed_at: float | None = None) -> str:
        """What a chunk collection records about itself: its format (and phrase extractor),
        the inline vectors' model, and which `reindex_format` run built it, if one did."""
        info: dict[str, Any] = {
            "hopwise": index_format,
            "dense_dim": self.embedder.dim if self.embedder else None,
            "embedding_model": self.embedder.name if self.embedder else None,
        }
        if index_format >= 3:
            info["phraser"] = PHRASER
        if reindexed_at is not None:
            info["reindexed_at"] = reindexed_at
        return json.dumps(info)

    def _collection_info(self, name: str) -> dict[str, Any]:
        desc = self._client.describe_collection(name).get("description") or ""
        try:
            info = json.loads(desc)
        except ValueError:
            info = None
        if not isinstance(info, dict):
            raise StoreError(
                f"collection {name} was not created by Hopwise; "
                "set HOPWISE_COLLECTION to another name"
            )
        return info

    @property
    def index_current(self) -> bool:
        """The chunk collection is in the current format, its phrases from the current
        extractor (otherwise `reindex_format` rebuilds it)."""
        return self.index_format == INDEX_FORMAT and self.phraser == PHRASER

    @property
    def _fields(self) -> list[str]:
        return [*CHUNK_FIELDS, "metadata_json"] if self.index_format >= 2 else CHUNK_FIELDS

    def _check_chunk_collection(self) -> None:
        """Read the collection's format; refuse to mix vectors of two embedding models in it."""
        info = self._collection_info(self.collection)
        self.index_format = int(info.get("hopwise") or 1)
        self.phraser = str(info.get("phraser") or "")
        if self.embedder is not None and info.get("embedding_model") != self.embedder.name:
            raise StoreError(
                f"collection {self.collection} holds vectors from embedding model "
                f"{info.get('embedding_model')!r}, but {self.embedder.name!r} is configured; "
                "set HOPWISE_COLLECTION to a new name and re-ingest, or restore the old model"
            )

    def _create_chunk_collection(self, name: str, index_format: int, description: str) -> None:
        """The chunk collection's schema in one index format (older ones: tests build the
        collections earlier releases made, to check they still open and reindex)."""
        pm = self._pm
        dt = pm.DataType
        schema = pm.MilvusClient.create_schema(
            auto_id=False, enable_dynamic_field=False, description=description
        )
        schema.add_field("chunk_id", dt.VARCHAR, is_primary=True, max_length=512)
        schema.add_field("doc_id", dt.VARCHAR, max_length=512)
        schema.add_field("doc_version", dt.INT64)
        schema.add_field("title", dt.VARCHAR, max_length=2048)
        schema.add_field("source", dt.VARCHAR, max_length=2048)
        schema.add_field("section_path", dt.VARCHAR, max_length=4096)
        schema.add_field("page", dt.INT64)
        schema.add_field("start_char", dt.INT64)
        schema.add_field("end_char", dt.INT64)
        # BM25 reads `text` itself before format 3, its folded copy `search_text` since
        # (what is displayed keeps its accents; what is matched has none, like the query).
        bm25_input = "text" if index_format < 3 else "search_text"
        schema.add_field(
            "text", dt.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=index_format < 3,
            **({"analyzer_params": TEXT_ANALYZER} if index_format < 3 else {}),
        )  # fmt: skip
        if index_format >= 3:
            schema.add_field(
                "search_text", dt.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True,
                analyzer_params=TEXT_ANALYZER,
            )  # fmt: skip
            schema.add_field(
                "phrases", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_PHRASES,
                max_length=PHRASE_BYTES,
            )  # fmt: skip
        # ARRAY for the filter; the JSON copy is what we read back (Milvus Lite 2.5 fails to
        # decode an empty query result that names an ARRAY output field).
        schema.add_field(
            "groups", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_GROUPS, max_length=256
        )
        schema.add_field("groups_json", dt.VARCHAR, max_length=8192)
        schema.add_field("checksum", dt.VARCHAR, max_length=128)
        schema.add_field("created_at", dt.DOUBLE)
        schema.add_field("parser_version", dt.VARCHAR, max_length=128)
        schema.add_field("chunker_version", dt.VARCHAR, max_length=128)
        schema.add_field("embedding_version", dt.VARCHAR, max_length=512)
        if index_format >= 2:
            schema.add_field("metadata_json", dt.VARCHAR, max_length=MAX_METADATA_BYTES)
        schema.add_field("sparse", dt.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            pm.Function(
                name="text_bm25", function_type=pm.FunctionType.BM25,
                input_field_names=[bm25_input], output_field_names=["sparse"],
            )
        )  # fmt: skip
        index = self._client.prepare_index_params()
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        if self.embedder is not None:
            schema.add_field("dense", dt.FLOAT_VECTOR, dim=self.embedder.dim)
            index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
        self._create(name, schema, index)

    def _create_manifest_collection(self) -> None:
        dt = self._pm.DataType
        schema = self._pm.MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("doc_id", dt.VARCHAR, is_primary=True, max_length=512)
        schema.add_field("active_version", dt.INT64)
        schema.add_field("pending_version", dt.INT64)
        schema.add_field("in_transition", dt.BOOL)
        schema.add_field("title", dt.VARCHAR, max_length=2048)
        schema.add_field("source", dt.VARCHAR, max_length=2048)
        schema.add_field("groups_json", dt.VARCHAR, max_length=8192)
        schema.add_field("checksum", dt.VARCHAR, max_length=128)
        schema.add_field("created_at", dt.DOUBLE)
        schema.add_field("chunks", dt.INT64)
        schema.add_field("updated_at", dt.DOUBLE)
        schema.add_field("hidden_removed", dt.INT64)
        schema.add_field("parser", dt.VARCHAR, max_length=256)
        schema.add_field("furniture_json", dt.VARCHAR, max_length=MAX_FURNITURE_BYTES)
        schema.add_field("unused", dt.FLOAT_VECTOR, dim=2)  # Milvus needs a vector per collection
        index = self._client.prepare_index_params()
        index.add_index("unused", index_type="FLAT", metric_type="L2")
        self._create(self.manifest, schema, index)

    def _create(self, name: str, schema: Any, index: Any) -> None:
        """Create, then index without pymilvus's fixed 0.5 s wait per index (sync=False); the
        load that follows waits until the collection is ready."""
        self._client.create_collection(name, schema=schema, consistency_level="Strong")
        self._client.create_index(name, index, sync=False)

    # ---- manifest -------------------------------------------------------------------------

    def _manifest_rows(self, expr: str) -> list[dict[str, Any]]:
        return list(
            self._client.query(
                self.manifest,
                filter=expr,
                output_fields=self._manifest_fields,
                limit=QUERY_LIMIT,
            )
        )

    def _manifest_row(self, doc_id: str) -> dict[str, Any] | None:
        rows = self._manifest_rows(f"doc_id == {quote_value(doc_id)}")
        return rows[0] if rows else None

    def _put_manifest(self, row: dict[str, Any]) -> None:
        row = {k: row[k] for k in self._manifest_fields if k in row}
        if "hidden_removed" in self._manifest_fields:
            row.setdefault("hidden_removed", 0)
        if "parser" in self._manifest_fields:
            row["parser"] = _clip(str(row.get("parser") or ""), 256)
        if "furniture_json" in self._manifest_fields:
            row.setdefault("furniture_json", "[]")
        row.update(updated_at=time.time(), unused=[0.0, 0.0])
        self._visibility = None  # before and after the write: a search never sees a stale list
        self._client.upsert(self.manifest, [row])
        self._visibility = None

    def _visibility_filter(self) -> str:
        """Hide every version but the active one of documents in transition (crash safety).

        The list is one query of the manifest, a third of a BM25 search's time; it is kept for
        VISIBILITY_TTL_S and dropped at once when this store writes the manifest, so only
        another writer's transition (another store on the same server) shows up that late."""
        now = time.monotonic()
        cached = self._visibility
        if cached is not None and now - cached[0] < VISIBILITY_TTL_S:
            return cached[1]
        rows = self._client.query(
            self.manifest,
            filter="in_transition == true",
            output_fields=["doc_id", "active_version"],
            limit=QUERY_LIMIT,
        )
        expr = " and ".join(
            f"(doc_id != {quote_value(r['doc_id'])} or doc_version == {int(r['active_version'])})"
            for r in rows
        )
        self._visibility = (now, expr)
        return expr

    @_milvus_errors
    def repair(self, older_than_s: float = 0.0) -> int:
        """Finish or roll back interrupted writes; returns how many documents were repaired."""
        cutoff = time.time() - older_than_s
        repaired = 0
        for row in self._manifest_rows("in_transition == true"):
            if float(row.get("updated_at") or 0.0) > cutoff:
                continue
            with self.document_lock(str(row["doc_id"]), str(row.get("source") or "")):
                current = self._manifest_row(str(row["doc_id"]))  # a writer may have finished
                if not _same_transition(row, current):
                    continue
                self._settle(self._checked_active(current))  # type: ignore[arg-type]
            repaired += 1
        if repaired:
            log.warning("repaired %d interrupted document write(s) in %s", repaired, self.shown_uri)
        return repaired

    def _stored_versions(self, doc_id: str) -> set[int]:
        expr = f"doc_id == {quote_value(doc_id)}"
        if not self._count(expr):
            return set()
        rows = self._client.query(
            self.collection, filter=expr, output_fields=["doc_version"], limit=QUERY_LIMIT
        )
        return {int(r["doc_version"]) for r in rows}

    def _checked_active(self, row: dict[str, Any]) -> dict[str, Any]:
        """The manifest row to keep, after checking that its active version is all there.

        An engine that accepted writes it could not persist (a full disk) can leave a manifest
        that names a version with fewer chunks than it lists. Then the newest other stored
        version is restored if there is one; otherwise the entry is corrected to what is
        stored, with no checksum (so uploading the same file again re-ingests it), or dropped
        when nothing is stored. Each repair is logged and kept in `self.repairs`.
        """
        doc_id, active = str(row["doc_id"]), int(row["active_version"])
        listed = int(row.get("chunks") or 0)
        if active <= 0:
            return row
        have = self._count(f"doc_id == {quote_value(doc_id)} and doc_version == {active}")
        if have >= listed:
            return row
        name = row.get("source") or doc_id
        others = sorted(self._stored_versions(doc_id) - {active})
        if others:
            version = others[-1]
            expr = f"doc_id == {quote_value(doc_id)} and doc_version == {version}"
            sample = self._client.query(
                self.collection, filter=expr, output_fields=self._fields, limit=1
            )[0]
            fixed = {
                **row, "active_version": version, "chunks": self._count(expr),
                "checksum": sample.get("checksum", ""), "title": sample.get("title", ""),
                "source": sample.get("source", ""), "groups_json": sample.get("groups_json"),
                "created_at": sample.get("created_at", 0.0), "hidden_removed": 0,
            }  # fmt: skip
            note = f"version {version} restored"
        else:
            fixed = {**row, "chunks": have, "checksum": "", "active_version": active if have else 0}
            note = f"kept as {have} chunks; upload it again" if have else "removed from the list"
        message = (
            f"{name}: version {active} was incomplete ({have} of {listed} chunks stored); {note}"
        )
        log.warning("consistency check of %s: %s", self.shown_uri, message)
        self.repairs.append(message)
        return {**fixed, "in_transition": True}

    @_milvus_errors
    def check_consistency(self) -> list[str]:
        """Check that every listed document is stored exactly as listed; repair what is not
        (see `_checked_active`). One count query when all is well. Returns the repairs."""
        rows = self._manifest_rows("active_version > 0 and in_transition == false")
        listed = sum(int(r.get("chunks") or 0) for r in rows)
        if self._count(self._visibility_filter()) == listed:
            return []
        before = len(self.repairs)
        for row in rows:
            with self.document_lock(str(row["doc_id"]), str(row.get("source") or "")):
                current = self._manifest_row(str(row["doc_id"]))
                if current is None or current.get("updated_at") != row.get("updated_at"):
                    continue  # rewritten meanwhile by a writer, who counted its rows
                checked = self._checked_active(current)
                if checked is not current:
                    self._settle(checked)
        self._drop_unlisted_rows()
        return self.repairs[before:]

    def _drop_unlisted_rows(self) -> None:
        """Rows no listed version owns (a delete the engine acknowledged but did not keep)
        would be searchable yet invisible in the document list: remove them."""
        rows = self._manifest_rows("active_version > 0")
        listed = sum(int(r.get("chunks") or 0) for r in rows)
        if self._count(self._visibility_filter()) <= listed:
            return
        for row in rows:
            if row.get("in_transition"):
                continue
            expr = (
                f"doc_id == {quote_value(str(row['doc_id']))} "
                f"and doc_version != {int(row['active_version'])}"
            )
            if self._count(expr):
                self._client.delete(self.collection, filter=expr)
        known = self._manifest_rows('doc_id != ""')  # writes in progress own their rows too
        names = ", ".join(quote_value(str(r["doc_id"])) for r in known)
        orphans = f"doc_id not in [{names}]" if known else 'chunk_id != ""'
        found = self._count(orphans)
        if found:
            self._client.delete(self.collection, filter=orphans)
            message = f"{found} chunks of no listed document removed"
            log.warning("consistency check of %s: %s", self.shown_uri, message)
            self.repairs.append(message)

    def _settle(self, row: dict[str, Any]) -> None:
        """Delete every chunk version but the active one, then end the transition."""
        doc_id, active = str(row["doc_id"]), int(row["active_version"])
        self._maybe_empty = True
        self._client.delete(
            self.collection, filter=f"doc_id == {quote_value(doc_id)} and doc_version != {active}"
        )
        self._flush(self.collection)
        if self.vectors is not None:
            self.vectors.forget(doc_id, keep_version=max(active, 0))
        if active <= 0:
            self._client.delete(self.manifest, filter=f"doc_id == {quote_value(doc_id)}")
            self._visibility = None
        else:
            self._put_manifest({**row, "pending_version": 0, "in_transition": False})
        self._flush(self.manifest)

    def _flush(self, name: str) -> None:
        try:
            self._client.flush(name)
        except Exception as exc:  # Milvus Lite persists on write; a server flush is advisory
            log.debug("flush %s: %s", name, exc)

    # ---- index format ---------------------------------------------------------------------

    @property
    def _reindex_name(self) -> str:
        return f"{self.collection}{REINDEX_SUFFIX}"

    @_milvus_errors
    def reindex_format(self, progress: Callable[[str, int, int], None] | None = None) -> Reindexed:
        """Rebuild the chunk collection in the current index format, keeping every row (all
        versions, groups, metadata, inline vectors); the manifest and the side vectors (keyed by
        chunk id) stay as they are. A current collection is left alone. `progress(step, rows
        done, rows)` follows the two copies ("copy", then "swap").

        The rows are copied and converted into a new collection and counted; only then is the
        old one dropped and the copy put in its place (`_swap_in`). Run it while nothing else
        writes: a change made meanwhile by another process stops it before the swap."""
        started = time.monotonic()
        before, phraser = self.index_format, self.phraser
        if before > INDEX_FORMAT:
            raise StoreError(
                f"collection {self.collection} has index format {before}, newer than this "
                f"release's {INDEX_FORMAT}; upgrade Hopwise"
            )
        if self.index_current:
            return Reindexed(before, before, phraser, self._count(""), 0.0, rebuilt=False)
        temp = self._reindex_name
        if temp in set(self._client.list_collections()):  # left when another process runs
            raise StoreError(f"{self.collection} at {self.shown_uri} is being reindexed already")
        self._check_disk(self._reindex_need())
        seen = self._manifest_signature()
        stamp = time.time()
        self._create_chunk_collection(temp, INDEX_FORMAT, self._description(INDEX_FORMAT, stamp))
        self._client.load_collection(temp)
        try:
            rows = self._copy_rows(
                self.collection, temp, _upgraded, _step(progress, "copy"), UNCHANGED
            )
            if self._manifest_signature() != seen:
                raise StoreError(
                    f"documents of {self.shown_uri} changed while it was reindexed (another "
                    "process wrote); nothing was changed: reindex when nothing else writes"
                )
        except BaseException:
            with contextlib.suppress(Exception):  # otherwise the next open drops it
                self._client.drop_collection(temp)
            raise
        self._swap_in(temp, rows, _step(progress, "swap"))
        seconds = round(time.monotonic() - started, 1)
        return Reindexed(before, self.index_format, phraser, rows, seconds, rebuilt=True)

    def _swap_in(
        self, temp: str, rows: int, progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Put the complete, counted copy `temp` in place of the chunk collection (Milvus Lite
        cannot rename): drop the collection, create it again as `temp` describes itself, copy
        `temp` back, count, drop `temp`. From the drop on, `temp` is the only whole copy and
        a crash leaves it there: the next open finishes the swap (`_resume_reindex`)."""
        description = self._client.describe_collection(temp).get("description") or ""
        info = self._collection_info(temp)
        if self.collection in set(self._client.list_collections()):
            self._client.drop_collection(self.collection)
        self._create_chunk_collection(self.collection, int(info["hopwise"]), description)
        self._client.load_collection(self.collection)
        if self._copy_rows(temp, self.collection, dict, progress, SWAP_PENDING) != rows:
            raise StoreError(f"{temp} changed while it was swapped in; {SWAP_PENDING}")
        self._client.drop_collection(temp)
        self.index_format, self.phraser = int(info["hopwise"]), str(info.get("phraser") or "")
        self._maybe_empty = True

    def _resume_reindex(self, existing: set[str]) -> None:
        """Settle a `reindex_format` that stopped part-way: a copy that was never swapped in
        is dropped (the old collection is whole), an interrupted swap is finished. Remote: a
        copy younger than the repair delay may belong to a reindex still running elsewhere."""
        temp = self._reindex_name
        info = self._collection_info(temp)
        started = float(info.get("reindexed_at") or 0.0)
        if self.remote and time.time() - started < self._repair_after:
            if self.collection not in existing:
                raise StoreError(
                    f"{self.collection} at {self.shown_uri} is being reindexed by another "
                    "process; try again when it has finished"
                )
            return
        self._client.load_collection(temp)
        if self.collection in existing:
            self._client.load_collection(self.collection)
            swapped = self._collection_info(self.collection).get("reindexed_at") == started
            if not swapped or self._count("", self.collection) == self._count("", temp):
                self._client.drop_collection(temp)  # never swapped in, or swapped in whole
                if not swapped:
                    self._note_repair("an interrupted index rebuild was undone; nothing changed")
                return
        self._swap_in(temp, self._count("", temp))
        self._note_repair(f"an interrupted index rebuild was finished (format {self.index_format})")

    def _note_repair(self, message: str) -> None:
        log.warning("%s: %s", self.shown_uri, message)
        self.repairs.append(message)

    def _copy_rows(
        self,
        source: str,
        target: str,
        convert: Callable[[dict[str, Any]], dict[str, Any]],
        progress: Callable[[int, int], None] | None,
        consequence: str,
    ) -> int:
        """Copy every row of `source` into `target`, converted, a page at a time by primary
        key; returns how many, once `target` is counted to hold exactly those. A failure
        message ends with `consequence` (what it means for the knowledge base)."""
        fields = [
            f["name"]
            for f in self._client.describe_collection(source).get("fields") or []
            if not f.get("is_function_output")
        ]
        total, copied, expr = self._count("", source), 0, ""
        while self._count(expr, source):  # counted first: an empty page cannot be decoded
            page = self._client.query(source, filter=expr, output_fields=fields, limit=REINDEX_PAGE)
            rows = [convert(row) for row in page]
            text = sum(len(r["text"].encode("utf-8")) for r in rows)
            need = _bytes_need(text, len(rows), self._dense_dim(), INDEX_FORMAT)
            self._check_disk(need, consequence)
            self._client.insert_columns(target, rows)
            copied += len(rows)
            expr = f"chunk_id > {quote_value(max(str(r['chunk_id']) for r in page))}"
            if progress is not None:
                progress(copied, total)
        self._flush(target)
        stored = self._count("", target)
        if not copied == total == stored:
            raise StoreError(
                f"copying {source} to {target} at {self.shown_uri} stored {stored} of {total} "
                f"rows; {consequence}"
            )
        return copied

    def _reindex_need(self) -> int:
        """Disk a reindex needs (embedded): the copy, and the rebuilt collection beyond the
        space the dropped one frees; twice the database file covers both (measured: 5.3 MB
        of format 2 grew to 15.3 MB, 1.9 x more, the dropped pages reused afterwards)."""
        if self.remote:
            return 0
        path = Path(self.uri)
        return 2 * path.stat().st_size if path.exists() else 0

    def _manifest_signature(self) -> str:
        """Changes whenever any document is written or deleted (every write stamps its row)."""
        rows = self._client.query(
            self.manifest, filter='doc_id != ""', output_fields=["doc_id", "updated_at"],
            limit=QUERY_LIMIT,
        )  # fmt: skip
        stamps = sorted((str(r["doc_id"]), float(r.get("updated_at") or 0.0)) for r in rows)
        return hashlib.sha256(json.dumps(stamps).encode()).hexdigest()

    # ---- writes ---------------------------------------------------------------------------

    @_milvus_errors
    def replace_document(self, chunks: Iterable[Chunk]) -> None:
        """Write a complete new version of one document, then drop the old one.

        Until the new version is fully written it is invisible; afterwards the old one is. A
        crash at any point leaves exactly one complete version visible (see `repair`). Writes
        to one document are serialised (`document_lock`); an embedded write that would not fit
        on the disk is refused before anything changes. `chunks` may be a generator (a big
        file chunked as it is read): it is embedded and written a batch at a time.
        """
        stream = iter(chunks)
        first = next(stream, None)
        if first is None:
            raise ValueError("replace_document needs at least one chunk")
        if isinstance(chunks, Sequence):  # the whole size is known: check the disk first
            self._check_disk(_disk_need(chunks, self._dense_dim(), self.index_format))
        with self.document_lock(first.doc_id, first.source):
            self._activate(self._write_pending(itertools.chain([first], stream)))
        if self.worker is not None:
            self.worker.wake()  # the new version's vectors

    def _write_pending(self, chunks: Iterable[Chunk]) -> dict[str, Any]:
        """Steps 1-2: mark the new version pending, insert all its chunks (still invisible)."""
        stream = iter(chunks)
        first = next(stream, None)
        if first is None:
            raise ValueError("replace_document needs at least one chunk")
        chunks = itertools.chain([first], stream)
        doc_id, version = first.doc_id, first.doc_version
        ids: set[str] = set()
        batches = _batches(chunks, INSERT_BATCH)
        batch = next(batches)
        self._check_chunks(batch, doc_id, version, ids)
        vectors = self._vectors(batch)  # embeds first: a failing embedder changes nothing
        self._check_disk(_disk_need(batch, self._dense_dim(), self.index_format))
        old = self._manifest_row(doc_id)
        active = int(old["active_version"]) if old else 0
        if version == active:
            raise ValueError(f"version {version} of {doc_id} is already stored")
        self._check_ids_free(doc_id, version, [c.chunk_id for c in batch])
        record = {
            "doc_id": doc_id, "active_version": active, "pending_version": version,
            "in_transition": True, "title": _clip(first.title, 2048),
            "source": _clip(first.source, 2048),
            "groups_json": json.dumps(validate_chunk_groups(first.groups), ensure_ascii=False),
            "checksum": first.checksum, "created_at": first.created_at, "chunks": 0,
            "hidden_removed": first.hidden_removed, "parser": first.parser_version,
            "furniture_json": _furniture_json(first.furniture),
            "fresh": old is None,  # no other version of this document exists anywhere
        }  # fmt: skip
        previous = {**old, "active_version": active} if old else {**record, "active_version": 0}
        self._put_manifest({**previous, "pending_version": version, "in_transition": True})
        self._flush(self.manifest)
        in_flight: Callable[[], None] | None = None  # waits for the insert the engine is taking
        try:
            if old is not None:  # leftovers of an earlier interrupted write of this version
                self._client.delete(
                    self.collection,
                    filter=f"doc_id == {quote_value(doc_id)} and doc_version == {version}",
                )
            written = 0
            while True:
                for start, end in _pieces(len(batch), in_flight is None):
                    piece = batch[start:end]
                    part = None if vectors is None else vectors[start:end]
                    rows = self._rows(piece, part)  # while the engine takes the last piece
                    if in_flight is not None:
                        done, in_flight = in_flight, None
                        done()
                    in_flight = self._client.insert_columns(self.collection, rows, wait=False)
                    written += len(rows)
                batch = next(batches, [])
                if not batch:
                    break
                self._check_chunks(batch, doc_id, version, ids)
                vectors = self._vectors(batch)
                self._check_ids_free(doc_id, version, [c.chunk_id for c in batch])
                self._check_disk(_disk_need(batch, self._dense_dim(), self.index_format))
            if in_flight is not None:
                done, in_flight = in_flight, None
                done()
            self._flush(self.collection)
            stored = self._count(f"doc_id == {quote_value(doc_id)} and doc_version == {version}")
            if stored != written:  # never switch to a version that is not all there
                raise StoreError(
                    f"only {stored} of {written} chunks of {first.source} were stored "
                    f"at {self.shown_uri}; the previous version was kept"
                )
        except BaseException:
            if in_flight is not None:  # the rollback's delete must come after that insert
                with contextlib.suppress(Exception):
                    in_flight()
            self._settle(previous)  # roll back: the previous version stays as it was
            raise
        record["chunks"] = written
        return record

    def _activate(self, record: dict[str, Any]) -> None:
        """Steps 3-4: switch the active version, then delete the old version's chunks."""
        version = int(record["pending_version"])
        if record.get("fresh"):  # nothing old to hide or delete: one manifest write suffices
            self._put_manifest(
                {**record, "active_version": version, "pending_version": 0, "in_transition": False}
            )
            self._flush(self.manifest)
            return
        self._put_manifest({**record, "active_version": version})
        self._flush(self.manifest)
        try:
            self._settle({**record, "active_version": version})
        except Exception as exc:  # noqa: BLE001 - the new version is live; the old is hidden
            log.warning(
                "removing the old version of %s failed (%s); it stays hidden and is removed "
                "when the knowledge base is next opened", record.get("source"), exc,
            )  # fmt: skip

    def _check_chunks(
        self, chunks: Sequence[Chunk], doc_id: str, version: int, ids: set[str]
    ) -> None:
        for chunk in chunks:
            if chunk.doc_id != doc_id or chunk.doc_version != version:
                raise ValueError("all chunks of replace_document must share doc_id and version")
            if chunk.chunk_id in ids:
                raise ValueError(f"duplicate chunk_id {chunk.chunk_id!r}")
            ids.add(chunk.chunk_id)
            if len(chunk.text.encode("utf-8")) > MAX_TEXT_BYTES:
                raise ValueError(
                    f"chunk {chunk.chunk_id} is longer than the store's {MAX_TEXT_BYTES} bytes"
                )
            if chunk.metadata and self.index_format < 2:
                raise StoreError(
                    f"collection {self.collection} uses index format {self.index_format}, which "
                    "cannot keep document metadata; set HOPWISE_COLLECTION to a new name and "
                    "re-ingest to write through LangChain"
                )
            _metadata_json(chunk.metadata)  # raises ValueError when it is too large
            validate_chunk_groups(chunk.groups)  # before anything is written

    def _check_ids_free(self, doc_id: str, version: int, chunk_ids: list[str]) -> None:
        """Primary keys must differ between versions, or deleting the old would hit the new."""
        for start in range(0, len(chunk_ids), 1000):
            batch = ", ".join(quote_value(c) for c in chunk_ids[start : start + 1000])
            expr = (
                f"chunk_id in [{batch}] and (doc_id != {quote_value(doc_id)} "
                f"or doc_version != {version})"  # no `not`: Milvus Lite 2.5 rejects it
            )
            if self._count(expr):
                raise ValueError(
                    "a chunk_id already exists in another document or version; "
                    "chunk ids must be unique per version"
                )

    def _vectors(self, chunks: Sequence[Chunk]) -> list[list[float]] | None:
        """The chunks' dense vectors from the store's own embedder (None without one)."""
        if self.embedder is None:
            return None
        vectors: list[list[float]] = []
        texts = [c.text for c in chunks]
        for start in range(0, len(texts), 256):
            vectors.extend(self.embedder.embed_documents(texts[start : start + 256]))
        if len(vectors) != len(chunks):
            raise StoreError("the embedder returned a different number of vectors")
        return vectors

    def _rows(
        self, chunks: Sequence[Chunk], vectors: Sequence[list[float]] | None
    ) -> list[dict[str, Any]]:
        rows = []
        for i, c in enumerate(chunks):
            groups = validate_chunk_groups(c.groups)
            row: dict[str, Any] = {
                "chunk_id": c.chunk_id, "doc_id": c.doc_id, "doc_version": c.doc_version,
                "title": _clip(c.title, 2048), "source": _clip(c.source, 2048),
                "section_path": _clip(c.section_path, 4096),
                "page": c.page if c.page is not None else -1,
                "start_char": c.start_char, "end_char": c.end_char, "text": c.text,
                "groups": groups, "groups_json": json.dumps(groups, ensure_ascii=False),
                "checksum": c.checksum, "created_at": c.created_at,
                "parser_version": c.parser_version, "chunker_version": c.chunker_version,
                "embedding_version": self.embedder.name if self.embedder else "",
            }  # fmt: skip
            if self.index_format >= 2:
                row["metadata_json"] = _metadata_json(c.metadata)
            if self.index_format >= 3:
                row.update(_lexical_fields(c.title, c.section_path, c.text))
            if vectors is not None:
                row["dense"] = vectors[i]
            rows.append(row)
        return rows

    @_milvus_errors
    def delete_document(self, doc_id: str) -> int:
        """Remove a document's chunks and manifest entry; returns the number of chunks removed
        (0 when it is not there, e.g. another admin deleted it first). Waits for a write of the
        same document in progress (`document_lock`) and then deletes what that write left."""
        with self.document_lock(doc_id):
            row = self._manifest_row(doc_id)
            if row is None:
                return 0
            self._check_disk(0)
            expr = f"doc_id == {quote_value(doc_id)}"
            count = self._count(expr)
            self._put_manifest({**row, "active_version": 0, "in_transition": True})
            self._flush(self.manifest)
            self._settle({**row, "active_version": 0})
            return count

    # ---- reads ----------------------------------------------------------------------------

    @_milvus_errors
    def search(self, query: str, groups: Sequence[str], k: int = 10) -> list[Hit]:
        """Top-k chunks the groups may read: BM25, or BM25 + dense fused with RRF (k=60)."""
        typed, query = query or "", _query_forms(query or "")
        # format 3 matches the folded query against folded text (no typed forms needed: the
        # folded field holds no unnormalised text); the dense channel reads the query as typed
        lexical = fold(typed) if self.index_format >= 3 else query
        if not lexical.strip() or k <= 0:
            return []
        expr = self.search_filter(groups)
        if self._maybe_empty:  # BM25 on an empty collection errors out in Milvus Lite 2.5
            if not self._count(""):
                return []
            self._maybe_empty = False
        embedder = self.embedder or (self.vectors.embedder if self.vectors else None)
        if embedder is None:
            hits = self._channel(lexical, "sparse", expr, k)
            return [self._hit(e, rank, bm25=s, fused=s) for rank, (s, e) in enumerate(hits, 1)]
        depth = min(max(self.fusion.depth_factor * k, 20), QUERY_LIMIT)
        # BM25 runs while the query is embedded and the dense channel searched: the two round
        # trips (and the model) overlap instead of adding up
        pending = self._lexical_pool().submit(self._channel, lexical, "sparse", expr, depth)
        weights = self._lexical_weights(query)
        try:
            vector = self._query_vector(embedder, query)
            wide = max(depth, self.fusion.cross_language_depth)
            if self.vectors is None:
                dense, has_vector = self._channel(vector, "dense", expr, wide), None
            else:
                dense, has_vector = self._side_dense(vector, expr, wide, pending.result())
            dense, other = dense[:depth], _other_language(dense, language_of(query))
        except Exception as exc:  # noqa: BLE001 - BM25 results stand while the dense side is down
            log.warning("dense channel skipped: %s", exc)
            sparse = pending.result()
            exact = self._exact(typed, expr, depth)
            return _fuse(sparse, [], k, self._hit, self.fusion, weights, lambda _cid: False, exact)
        exact = self._exact(typed, expr, depth)
        fused = _fuse(
            pending.result(), dense, k, self._hit, self.fusion, weights, has_vector, exact
        )
        return _with_other_language(fused, other, k, self._hit)

    def _exact(self, query: str, expr: str, limit: int) -> list[tuple[float, dict]] | None:
        """Chunks that hold a code the query names letter for letter ('LQ-FW-2024-017'), most
        codes first; None when the query names none (the channel then takes no part)."""
        codes = list(dict.fromkeys(CODE_RE.findall(query)))[: self.fusion.max_codes]
        if not codes or self.index_format < 3:
            return None
        found: dict[str, tuple[int, dict]] = {}
        try:
            for code in codes:  # capitals, digits and hyphens only: nothing to escape
                like = f'search_text like "%{fold(code)}%"'
                where = f"{like} and ({expr})" if expr else like
                count = self._count(where)  # pymilvus cannot read an empty result whose
                if not count or count > limit:  # filter reads an ARRAY field: count first;
                    continue  # a code in that many chunks ('UTF-8') names no one thing
                rows = self._client.query(
                    self.collection, filter=where, output_fields=self._fields, limit=limit
                )
                for row in rows:
                    held, _ = found.get(row["chunk_id"], (0, row))
                    found[row["chunk_id"]] = (held + 1, row)
        except Exception as exc:  # noqa: BLE001 - the other channels' results stand
            log.warning("exact code channel skipped: %s", exc)
            return None
        ordered = sorted(found.values(), key=lambda pair: -pair[0])  # stable: query order
        return [(float(count), row) for count, row in ordered[:limit]]

    def _lexical_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        """Threads for the BM25 channel of hybrid searches (closed with the store)."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=LEXICAL_THREADS, thread_name_prefix="hopwise-bm25"
                )
            return self._pool

    def attach_vectors(
        self, embedder: Embedder, document_embedder: Embedder | None = None
    ) -> VectorIndex:
        """Search with vectors kept beside the chunks (ingest/vectors.py), filled in the
        background by an EmbeddingWorker, instead of inline vectors written at ingest."""
        from ingest.vectors import VectorIndex

        if self.embedder is not None:
            raise StoreError("this store already writes its vectors inline")
        self.vectors = VectorIndex(self, embedder, document_embedder)
        return self.vectors

    def start_embedding_worker(self) -> EmbeddingWorker | None:
        """Fill missing vectors in a background thread (long-running processes: the app)."""
        from ingest.vectors import EmbeddingWorker

        if self.vectors is not None and self.worker is None:
            self.worker = EmbeddingWorker(self.vectors).start()
        return self.worker

    def _query_vector(self, embedder: Embedder, query: str) -> list[float]:
        """The query's embedding, cached per question text (hops and retries repeat it)."""
        key = f"{embedder.name}\0{query}"
        with self._query_lock:
            if key in self._query_vectors:
                self._query_vectors.move_to_end(key)
                return self._query_vectors[key]
        vector = embedder.embed_query(query)
        with self._query_lock:
            self._query_vectors[key] = vector
            while len(self._query_vectors) > 512:
                self._query_vectors.popitem(last=False)
        return vector

    def _lexical_weights(self, query: str) -> Callable[[dict[str, Any]], float]:
        """A chunk's weight in the BM25 vote: lower when it is in the other language."""
        asked = language_of(query)
        fusion = self.fusion

        def weight(entity: dict[str, Any]) -> float:
            same = _chunk_language(str(entity.get("text", ""))[:2000]) == asked
            return fusion.lexical_weight if same else fusion.cross_language_lexical_weight

        return weight

    def _side_dense(
        self, vector: list[float], expr: str, depth: int, sparse: list[tuple[float, dict]]
    ) -> tuple[list[tuple[float, dict]], Callable[[str], bool]]:
        """The dense channel from the side collection, with each hit's chunk row (fetched in
        one query for the ones BM25 did not return; vectors of rows gone are dropped), and
        which BM25 hits have a vector at all (the others compete on BM25 alone)."""
        assert self.vectors is not None
        found = self.vectors.search(vector, expr, depth)
        entities = {e["chunk_id"]: e for _, e in sparse}
        need = [cid for _, cid in found if cid not in entities]
        if need:
            quoted = ", ".join(quote_value(c) for c in need)
            for row in self._query_chunks(f"chunk_id in [{quoted}] and {expr}"):
                entities[row["chunk_id"]] = row
        dense = [(score, entities[cid]) for score, cid in found if cid in entities]
        found_ids = {cid for _, cid in found}
        with_vector = found_ids | self.vectors.have_vectors(
            [e["chunk_id"] for _, e in sparse if e["chunk_id"] not in found_ids]
        )
        return dense, with_vector.__contains__

    def search_filter(self, groups: Sequence[str]) -> str:
        """The filter every search request carries: the reader's groups, minus in-flight
        versions."""
        expr = group_filter(groups)
        visibility = self._visibility_filter()
        return f"{expr} and {visibility}" if visibility else expr

    @_milvus_errors
    def phrase_counts(self, keys: Sequence[str], groups: Sequence[str]) -> dict[str, int]:
        """How many chunks the groups may read carry each phrase key (`phrase_key` form;
        versions in flight excluded, as in search); keys none carries are left out, and a
        collection older than index format 3 (no phrase table) answers {}.

        One count query per key (~1.5 ms at 2,000 chunks), after one for all of them (none
        found: done). Fetching the matching rows' phrase arrays to count them here was measured
        slower: 0.2-2.4 s for 700-1,500 rows, where one count takes ~2 ms whatever it matches."""
        wanted = [k for k in dict.fromkeys(keys) if k and len(k.encode("utf-8")) <= PHRASE_BYTES]
        if self.index_format < 3 or not wanted:
            return {}
        expr = self.search_filter(groups)
        every = ", ".join(quote_value(key) for key in wanted)
        if not self._count(f"array_contains_any(phrases, [{every}]) and {expr}"):
            return {}
        counts = {key: self._count(f"array_contains(phrases, {quote_value(key)}) and {expr}")
                  for key in wanted}  # fmt: skip
        return {key: n for key, n in counts.items() if n}

    @_milvus_errors
    def language_mix(
        self, groups: Sequence[str], sample: int = LANGUAGE_SAMPLE
    ) -> dict[str, float]:
        """The languages of the chunks the groups may read, as shares of a sample of them
        ({'zh': 0.9, 'en': 0.1}); {} for an empty knowledge base. Cached for a minute per
        group set: it only steers whether a model also writes queries in another language."""
        key = tuple(sorted(set(groups)))
        cached = self._language_cache.get(key)
        if cached and time.monotonic() - cached[0] < LANGUAGE_CACHE_S:
            return cached[1]
        rows = self._client.query(
            self.collection, filter=self.search_filter(groups), output_fields=["text"],
            limit=sample,
        )  # fmt: skip
        counts = Counter(language_of(str(r.get("text", ""))[:400]) for r in rows)
        total = sum(counts.values())
        mix: dict[str, float] = (
            {lang: round(n / total, 3) for lang, n in counts.items()} if total else {}
        )
        self._language_cache[key] = (time.monotonic(), mix)
        return mix

    def _channel(self, data: Any, field: str, expr: str, limit: int) -> list[tuple[float, dict]]:
        """One filtered search request; scores normalised so higher is better."""
        metric = "BM25" if field == "sparse" else "COSINE"
        try:
            result = self._client.search(
                self.collection, [data], anns_field=field, limit=limit, filter=expr,
                output_fields=self._fields, search_params={"metric_type": metric},
            )  # fmt: skip
        except self._pm.MilvusException as exc:
            if "NaN or Inf" in str(exc):  # BM25 over an empty collection (no length statistics)
                return []
            raise
        out = []
        for item in result[0] if result else []:
            score = float(item["distance"])
            if field == "sparse":
                score = abs(score)  # BM25 is non-negative; some engines return it negated
            out.append((score, item["entity"]))
        return out

    @staticmethod
    def _hit(
        entity: dict[str, Any], rank: int, *, fused: float, bm25: float | None = None,
        dense: float | None = None,
    ) -> Hit:  # fmt: skip
        page = int(entity.get("page", -1))
        return Hit(
            chunk_id=entity["chunk_id"], doc_id=entity["doc_id"],
            doc_version=int(entity["doc_version"]), title=entity.get("title", ""),
            source=entity.get("source", ""), section=entity.get("section_path", ""),
            page=page if page >= 0 else None, start_char=int(entity.get("start_char", 0)),
            end_char=int(entity.get("end_char", 0)), text=entity["text"],
            groups=json.loads(entity.get("groups_json") or "[]"), score=fused,
            bm25_score=bm25, dense_score=dense, rank=rank,
            metadata=json.loads(entity.get("metadata_json") or "{}"),
            parser=entity.get("parser_version", ""),
        )  # fmt: skip

    @_milvus_errors
    def get_document(self, doc_id: str) -> DocumentInfo | None:
        row = self._manifest_row(doc_id)
        if not row or int(row["active_version"]) <= 0:
            return None
        info = _doc_info(row)
        if "parser" not in self._manifest_fields:  # a manifest older than lineage in it
            info.parser = self._chunk_parser(doc_id, int(row["active_version"]))
        return info

    def _chunk_parser(self, doc_id: str, version: int) -> str:
        """The parser lineage one chunk of a document's version records."""
        rows = self._client.query(
            self.collection,
            filter=f"doc_id == {quote_value(doc_id)} and doc_version == {version}",
            output_fields=["parser_version"],
            limit=1,
        )
        return str(rows[0].get("parser_version") or "") if rows else ""

    @_milvus_errors
    def list_documents(self) -> list[DocumentInfo]:
        rows = self._manifest_rows("active_version > 0")
        return sorted((_doc_info(r) for r in rows), key=lambda d: (d.source, d.doc_id))

    @_milvus_errors
    def get_chunks(self, doc_id: str) -> list[Chunk]:
        """The visible version's chunks in document order."""
        row = self._manifest_row(doc_id)
        if row is None or int(row["active_version"]) <= 0:
            return []
        expr = f"doc_id == {quote_value(doc_id)} and doc_version == {int(row['active_version'])}"
        if int(row.get("chunks", 0)) > QUERY_LIMIT:
            log.warning(
                "%s has %s chunks; only %d are returned", doc_id, row["chunks"], QUERY_LIMIT
            )
        chunks = [_chunk(r) for r in self._query_chunks(expr)]
        return sorted(chunks, key=lambda c: (c.start_char, c.chunk_id))

    @_milvus_errors
    def document_hits(self, doc_id: str, groups: Sequence[str], limit: int) -> list[Hit]:
        """The chunks of one document the groups may read, in document order, as hits (score
        0): a table or a log a search found part of, read whole. [] when the groups may not
        read it, it has no visible version, or it has more than `limit` chunks."""
        expr = f"{self.search_filter(groups)} and doc_id == {quote_value(doc_id)}"
        if not 0 < self._count(expr) <= limit:
            return []
        rows = self._client.query(
            self.collection, filter=expr, output_fields=self._fields, limit=limit
        )
        hits = [self._hit(r, 0, fused=0.0) for r in rows]
        return sorted(hits, key=lambda h: (h.start_char, h.chunk_id))

    def _query_chunks(self, expr: str) -> list[dict[str, Any]]:
        """Chunk rows; an empty result is [] (Milvus Lite 2.5 fails to decode it
        when the collection has an ARRAY field)."""
        if not self._count(expr):
            return []
        return list(
            self._client.query(
                self.collection, filter=expr, output_fields=self._fields, limit=QUERY_LIMIT
            )
        )

    @_milvus_errors
    def count_chunks(self) -> int:
        """Chunks visible to searches (in-flight versions excluded)."""
        return self._count(self._visibility_filter())

    def _count(self, expr: str, collection: str | None = None) -> int:
        rows = self._client.query(
            collection or self.collection, filter=expr, output_fields=["count(*)"]
        )
        return int(rows[0]["count(*)"]) if rows else 0

    @_milvus_errors
    def stats(self) -> dict[str, Any]:
        docs = self._client.query(
            self.manifest, filter="active_version > 0", output_fields=["count(*)"]
        )
        return {
            "engine": ENGINE_SERVER
            if self.remote
            else f"milvus-lite {embedded_engine_version()} (embedded)",
            "uri": self.shown_uri,
            "collection": self.collection,
            "documents": int(docs[0]["count(*)"]) if docs else 0,
            "chunks": self.count_chunks(),
            "index_format": self.index_format,
            "phraser": self.phraser,
            "index_current": self.index_current,
            "dense": self.embedder is not None or self.vectors is not None,
            "embedding_model": self.embedder.name
            if self.embedder
            else (self.vectors.embedder.name if self.vectors else None),
            **(self._vector_stats() if self.vectors is not None else {}),
        }

    def _vector_stats(self) -> dict[str, Any]:
        assert self.vectors is not None
        coverage = self.vectors.coverage()
        return {
            "embedded_chunks": coverage.embedded,
            "embedding_complete": coverage.complete,
            "embedding_note": coverage.line(self.vectors.embedder.name),
        }

    def as_langchain_vectorstore(
        self, groups: Sequence[str] = (DEFAULT_GROUP,), *, write_groups: Sequence[str] | None = None
    ) -> Any:
        """This knowledge base as a LangChain VectorStore for a reader's groups; documents
        added through it become knowledge-base documents readable by `write_groups`."""
        from ingest.langchain_view import KnowledgeBaseVectorStore

        return KnowledgeBaseVectorStore(self, groups=groups, write_groups=write_groups)

    def as_langchain_milvus(self) -> Any:
        """The raw langchain_milvus.Milvus over this same collection (read-only interop, e.g.
        for langchain-milvus retrievers). It does not add the ACL or the version filter by
        itself: pass `expr=store.search_filter(groups)` to every search; never write with it
        (writes bypass the document manifest; use as_langchain_vectorstore). From index format
        3 on, BM25 matches folded text: pass `ingest.phrases.fold(query)` to ignore accents."""
        from langchain_milvus import BM25BuiltInFunction, Milvus

        bm25 = BM25BuiltInFunction(
            input_field_names="text" if self.index_format < 3 else "search_text",
            output_field_names="sparse",
            analyzer_params=TEXT_ANALYZER,
            enable_match=False,
        )
        common: dict[str, Any] = {
            "collection_name": self.collection,
            "connection_args": {"uri": self.uri, "token": self._token or ""},
            "builtin_function": bm25,
            "text_field": "text",
            "primary_field": "chunk_id",
            "auto_id": False,
            "consistency_level": "Strong",
        }
        if self.embedder is None:
            return Milvus(embedding_function=None, vector_field="sparse", **common)
        from ingest.langchain_view import AsLangChainEmbeddings

        return Milvus(
            embedding_function=AsLangChainEmbeddings(self.embedder),
            vector_field=["dense", "sparse"],
            **common,
        )

    def drop(self) -> None:
        """Delete both collections (scratch stores: benchmarks, evaluation, tests)."""
        existing = set(self._client.list_collections())
        for name in (self.collection, self.manifest, self._reindex_name):
            if name in existing:
                self._client.drop_collection(name)
        self._visibility = None

    def close(self) -> None:
        worker, self.worker = getattr(self, "worker", None), None
        if worker is not None:
            worker.stop()
        pool, self._pool = getattr(self, "_pool", None), None
        if pool is not None:
            pool.shutdown(wait=True)
        client, self._client = getattr(self, "_client", None), None
        if client is None:
            return
        try:
            client.close()
        finally:
            if not self.remote:
                _EMBEDDED.release(self.uri)

    def __enter__(self) -> MilvusStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _other_language(dense: list[tuple[float, dict]], asked: str) -> tuple[float, dict] | None:
    """The best dense candidate in another language than the question's, if any."""
    for score, entity in dense:
        if _chunk_language(str(entity.get("text", ""))[:2000]) != asked:
            return score, entity
    return None


def _with_other_language(
    hits: list[Hit], other: tuple[float, dict] | None, k: int, make: Any
) -> list[Hit]:
    """The fused top k, its last place given to the best chunk in the other language when
    none made it: the built-in embedder ranks a chunk in the question's own language above a
    better one in the other (a Chinese question about an English manual: the right chunk
    ranked 42nd by vectors, nowhere by keywords), and both channels agree on that bias."""
    if other is None or len(hits) < k or k < 2:
        return hits
    entity = other[1]
    language = _chunk_language(str(entity.get("text", ""))[:2000])
    if any(h.chunk_id == entity["chunk_id"] or _chunk_language(h.text[:2000]) == language
           for h in hits):  # fmt: skip
        return hits
    last = hits[-1]
    return [*hits[:-1], make(entity, last.rank, fused=last.score, dense=other[0])]


def _fuse(
    sparse: list[tuple[float, dict]],
    dense: list[tuple[float, dict]],
    k: int,
    make: Any,
    fusion: FusionConfig | None = None,
    lexical_weight: Callable[[dict[str, Any]], float] | None = None,
    has_vector: Callable[[str], bool] | None = None,
    exact: list[tuple[float, dict]] | None = None,
) -> list[Hit]:
    """Weighted reciprocal-rank fusion of the channels, keeping BM25's and dense's own scores.
    `exact` (None: the query names no code) is the channel of chunks holding a code the query
    names; when it ran, every chunk could have been found by it.

    A chunk gains weight / (rrf_k + rank) from each channel that found it, divided by the
    total weight of the channels that could have found it: a chunk with no vector yet
    (`has_vector` False; None means every chunk has one) competes on BM25 alone, on the
    same scale, instead of losing to every dense candidate while the background worker is
    still on its way."""
    fusion = fusion or FusionConfig()
    fused: dict[str, float] = {}
    entities: dict[str, dict] = {}
    scores: dict[str, dict[str, float]] = {}
    for channel, results in (("bm25", sparse), ("dense", dense), ("exact", exact or [])):
        for rank, (score, entity) in enumerate(results, 1):
            cid = entity["chunk_id"]
            if channel == "exact":
                weight = fusion.exact_weight
            elif channel == "dense":
                weight = fusion.dense_weight
            elif lexical_weight is not None and dense:  # languages matter only beside vectors
                weight = lexical_weight(entity)
            else:
                weight = fusion.lexical_weight
            fused[cid] = fused.get(cid, 0.0) + weight / (fusion.rrf_k + rank)
            entities.setdefault(cid, entity)
            scores.setdefault(cid, {})[channel] = score
    for cid in fused:
        possible = fusion.lexical_weight + (
            fusion.dense_weight if has_vector is None or has_vector(cid) else 0.0
        )
        possible += fusion.exact_weight if exact is not None else 0.0
        fused[cid] /= possible or 1.0
    order = sorted(fused, key=lambda c: (-fused[c], c))[:k]
    return [
        make(
            entities[cid],
            rank,
            fused=fused[cid],
            bm25=scores[cid].get("bm25"),
            dense=scores[cid].get("dense"),
        )  # fmt: skip
        for rank, cid in enumerate(order, 1)
    ]


def _metadata_json(metadata: dict[str, Any]) -> str:
    """Caller metadata as stored: JSON, "" when empty, refused when over the field's size."""
    if not metadata:
        return ""
    try:
        text = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"document metadata must be JSON-serialisable: {exc}") from None
    if len(text.encode("utf-8")) > MAX_METADATA_BYTES:
        raise ValueError(f"document metadata is larger than {MAX_METADATA_BYTES} bytes as JSON")
    return text


def _furniture_json(lines: list[str]) -> str:
    """As many whole header/footer lines as fit the manifest field, as JSON."""
    kept: list[str] = []
    for line in lines:
        candidate = json.dumps([*kept, line[:500]], ensure_ascii=False)
        if len(candidate.encode("utf-8")) > MAX_FURNITURE_BYTES:
            break
        kept.append(line[:500])
    return json.dumps(kept, ensure_ascii=False)


def _query_forms(query: str) -> str:
    """The query as documents are indexed (ingest/normalize), plus its words that
    normalising changed as they were typed, so chunks stored by a release without
    normalisation (full-width digits, ligatures) still match until they are re-ingested."""
    normal = normalize_text(query)
    typed = [word for word in strip_controls(query).split() if normalize_text(word) != word]
    return f"{normal} {' '.join(typed)}" if typed else normal


def _doc_info(row: dict[str, Any]) -> DocumentInfo:
    return DocumentInfo(
        doc_id=row["doc_id"], title=row.get("title", ""), source=row.get("source", ""),
        version=int(row["active_version"]), chunks=int(row.get("chunks", 0)),
        groups=json.loads(row.get("groups_json") or "[]"), checksum=row.get("checksum", ""),
        created_at=float(row.get("created_at", 0.0)),
        hidden_removed=int(row.get("hidden_removed") or 0), parser=row.get("parser") or "",
        furniture=json.loads(row.get("furniture_json") or "[]"),
    )  # fmt: skip


def _chunk(row: dict[str, Any]) -> Chunk:
    page = int(row.get("page", -1))
    return Chunk(
        chunk_id=row["chunk_id"], doc_id=row["doc_id"], doc_version=int(row["doc_version"]),
        title=row.get("title", ""), source=row.get("source", ""),
        section_path=row.get("section_path", ""), page=page if page >= 0 else None,
        start_char=int(row.get("start_char", 0)), end_char=int(row.get("end_char", 0)),
        text=row["text"], groups=json.loads(row.get("groups_json") or "[]"),
        checksum=row.get("checksum", ""), created_at=float(row.get("created_at", 0.0)),
        parser_version=row.get("parser_version", ""),
        chunker_version=row.get("chunker_version", ""),
        embedding_version=row.get("embedding_version", ""),
        metadata=json.loads(row.get("metadata_json") or "{}"),
    )  # fmt: skip


def _same_transition(seen: dict[str, Any], current: dict[str, Any] | None) -> bool:
    """The manifest row is still the interrupted write that was seen (not finished since)."""
    return (
        current is not None
        and bool(current.get("in_transition"))
        and current.get("updated_at") == seen.get("updated_at")
    )


def _pieces(total: int, first: bool) -> list[tuple[int, int]]:
    """Where a batch is cut for the pipeline: a small first piece (built while nothing else
    runs), then pieces the engine takes while the next is built."""
    cuts, start = [], 0
    while start < total:
        end = min(total, start + (INSERT_FIRST if first and start == 0 else INSERT_PIECE))
        cuts.append((start, end))
        start = end
    return cuts


def _batches(chunks: Iterator[Chunk], size: int) -> Iterator[list[Chunk]]:
    while batch := list(itertools.islice(chunks, size)):
        yield batch


def _disk_need(chunks: Sequence[Chunk], dim: int, index_format: int) -> int:
    """About how many bytes of milvus.db these chunks will take, with `dim`-d inline vectors
    (0: none); see DISK_BYTES_PER_TEXT_BYTE."""
    text = sum(len(c.text.encode("utf-8")) + len(c.section_path) for c in chunks)
    return _bytes_need(text, len(chunks), dim, index_format)


def _bytes_need(text_bytes: int, rows: int, dim: int, index_format: int) -> int:
    """Index format 3 adds the folded text and the phrase keys: measured 0.75-1.2 KB more a
    chunk (English and Chinese passages, a repetitive manual), FORMAT3_ROW_BYTES x the factor."""
    per_row = 512 + (FORMAT3_ROW_BYTES if index_format >= 3 else 0)
    return int((text_bytes + 8 * dim * rows + per_row * rows) * DISK_BYTES_PER_TEXT_BYTE)


def _lexical_fields(title: str, section_path: str, text: str) -> dict[str, Any]:
    """Index format 3's fields derived from a chunk: the folded text BM25 indexes (the title
    is not added: a document's heading is already the first line of its first chunk), and the
    chunk's phrase keys."""
    return {
        "search_text": _clip(fold(text), MAX_TEXT_BYTES),
        "phrases": [_clip(key, PHRASE_BYTES) for key in chunk_phrases(title, section_path, text)],
    }


def _upgraded(row: dict[str, Any]) -> dict[str, Any]:
    """A chunk row of an older index format with the current format's fields filled in."""
    derived = _lexical_fields(row.get("title") or "", row.get("section_path") or "", row["text"])
    return {"metadata_json": "", **row, **derived}


def _step(
    progress: Callable[[str, int, int], None] | None, step: str
) -> Callable[[int, int], None] | None:
    return None if progress is None else functools.partial(progress, step)


def _mb(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MB" if count >= 1024 * 1024 else f"{count // 1024} KB"


def _mount_point(path: Path) -> str:
    path = path.resolve()
    while not path.is_mount() and path != path.parent:
        path = path.parent
    return f"the disk mounted at {path}"


def _lock_path(db: Path) -> Path:
    return db.parent / f".{db.name}.lock"


def _lock_held_elsewhere(db: Path) -> bool:
    """True when another process holds Milvus Lite's lock on this database file."""
    import fcntl

    from milvus_lite.server_manager import server_manager_instance

    if str(db) in getattr(server_manager_instance, "_servers", {}):
        return False  # this process already runs the engine for it
    lock = _lock_path(db)
    if not lock.exists():
        return False
    with open(lock, "a") as handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.lockf(handle, fcntl.LOCK_UN)
    return False


def _locked_message(uri: str) -> str:
    return (
        f"the knowledge base at {uri} is open in another process; stop it or use a Milvus "
        "server via HOPWISE_MILVUS_URI"
    )


@functools.lru_cache(maxsize=2048)
def _chunk_language(text: str) -> str:
    """A hit's language for the BM25 vote, remembered: the same chunks come back query after
    query, and reading the language of every hit was a tenth of a hybrid search."""
    return language_of(text)
