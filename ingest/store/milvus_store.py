"""The Milvus knowledge-base store: BM25 (jieba) inside Milvus, optional dense vectors, ACL filters.

pymilvus is used directly (not langchain-milvus) for the hot path because the product needs
schema control, per-channel scores for the hop trace, and the ACL filter inside every request.
`ingest.langchain_view.as_langchain_vectorstore(store)` exposes the same collection to
LangChain code.

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
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.busy import BusySignal
from ingest.config import FusionConfig
from ingest.locks import DocumentLocks
from ingest.phrases import PHRASER
from ingest.store import schema
from ingest.store.client import (
    EMBEDDED,
    ENGINE_SERVER,
    StoreError,
    embedded_engine_version,
    import_pymilvus,
    is_remote_uri,
    milvus_errors,
    redact_uri_secrets,
)
from ingest.store.reindex import ReindexPart
from ingest.store.schema import COLLECTION_RE
from ingest.store.search import SearchPart

if TYPE_CHECKING:
    from ingest.config import StoreConfig
    from ingest.embeddings import Embedder
    from ingest.store.phrase_table import PhraseTable, PhraseWorker
    from ingest.vectors import EmbeddingWorker, VectorIndex

log = logging.getLogger(__name__)


class MilvusStore(SearchPart, ReindexPart):
    """The Milvus knowledge-base store: BM25 (jieba) inside Milvus, optional dense vectors, ACL filters."""

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
        if not COLLECTION_RE.match(collection):
            raise ValueError(f"invalid collection name {collection!r}")
        self.embedder = embedder
        self.remote = is_remote_uri(uri)
        self.uri = uri if self.remote else str(Path(uri).expanduser().resolve())
        self.shown_uri = redact_uri_secrets(self.uri)  # for every message: no password in it
        self.collection = collection if embedder is None else f"{collection}_dense{embedder.dim}"
        self.manifest = f"{self.collection}_docs"
        self._visibility: tuple[float, str] | None = None  # (when, visibility_filter's text)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.locks = DocumentLocks(self._lock_dir(lock_dir), timeout_s=lock_timeout_s)
        self.vectors: VectorIndex | None = None  # side-collection vectors (attach_vectors)
        self.worker: EmbeddingWorker | None = None  # fills them (start_embedding_worker)
        self.phrases: PhraseTable | None = None  # phrase keys beside the chunks (format 3 on)
        self.phrase_worker: PhraseWorker | None = None  # builds them (start_phrase_worker)
        self.busy = BusySignal()  # held while a search runs; background work yields to it
        self.embedding_problem = ""  # why there is no dense channel, when one was wanted
        self.fusion = fusion or FusionConfig()
        self._query_vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._query_lock = threading.Lock()
        self.repairs: list[str] = []  # what the consistency check on open found and did
        self._timeout = timeout_s
        self._maybe_empty = True
        self.index_format = schema.INDEX_FORMAT  # of the opened collection (set when it is checked)
        self._language_cache: dict[tuple[str, ...], tuple[float, dict[str, float]]] = {}
        # the phrase extractor of the collection's phrases ("" before format 3)
        self.phraser = PHRASER if self.index_format >= 3 else ""
        # Embedded: this process holds the file lock, so every transition is a crash leftover.
        # Remote: another process may be mid-write; only repair transitions older than this.
        self._repair_after = (
            (600.0 if self.remote else 0.0) if repair_after_s is None else repair_after_s
        )
        self.pm = import_pymilvus()
        self._token = token
        self.client = self._connect(token)
        try:
            self._ensure_collections()
            self.attach_phrases()
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

    def connection_args(self) -> dict[str, str]:
        """How another Milvus client reaches this collection (the LangChain view's)."""
        return {"uri": self.uri, "token": self._token or ""}

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

    @milvus_errors
    def build_phrases(self, timeout_s: float = 3600.0) -> bool:
        """Finish the phrase keys now, waiting for the background worker (short-lived commands
        after an ingest, tests); True when nothing is left to build."""
        worker = self.start_phrase_worker()
        return worker is None or worker.settle(timeout_s)

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

    def start_embedding_worker(
        self,
        elect: Callable[[], bool] | None = None,
        on_document: Callable[[str, int], None] | None = None,
    ) -> EmbeddingWorker | None:
        """Fill missing vectors in a background thread (long-running processes: the app);
        `elect` and `on_document` as in EmbeddingWorker."""
        from ingest.vectors import EmbeddingWorker

        if self.vectors is not None and self.worker is None:
            self.worker = EmbeddingWorker(
                self.vectors, elect=elect, on_document=on_document
            ).start()
        return self.worker

    @milvus_errors
    def stats(self) -> dict[str, Any]:
        docs = self.client.query(
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
            **({"phrase_keys_complete": self.phrases.complete()} if self.phrases else {}),
        }

    def _vector_stats(self) -> dict[str, Any]:
        assert self.vectors is not None
        coverage = self.vectors.coverage()
        return {
            "embedded_chunks": coverage.embedded,
            "embedding_complete": coverage.complete,
            "embedding_note": coverage.line(self.vectors.embedder.name),
        }

    def drop(self) -> None:
        """Delete both collections (scratch stores: benchmarks, evaluation, tests)."""
        self._stop_phrase_worker()
        existing = set(self.client.list_collections())
        phrases = self.phrases.name if self.phrases else ""
        for name in (self.collection, self.manifest, self._reindex_name, phrases):
            if name in existing:
                self.client.drop_collection(name)
        self.phrases = None
        self._visibility = None

    def _stop_phrase_worker(self) -> None:
        worker, self.phrase_worker = getattr(self, "phrase_worker", None), None
        if worker is not None:
            worker.stop()

    def close(self) -> None:
        worker, self.worker = getattr(self, "worker", None), None
        if worker is not None:
            worker.stop()
        self._stop_phrase_worker()
        locks = getattr(self, "locks", None)
        if locks is not None:
            locks.close()
        pool, self._pool = getattr(self, "_pool", None), None
        if pool is not None:
            pool.shutdown(wait=True)
        client, self.client = getattr(self, "client", None), None
        if client is None:
            return
        try:
            client.close()
        finally:
            if not self.remote:
                EMBEDDED.release(self.uri)

    def __enter__(self) -> MilvusStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
