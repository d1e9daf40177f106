"""What every part of the store shares: its state, the connection and disk checks, the
collections' creation, the manifest's rows and the visibility filter of documents in transition.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import errno
import hashlib
import json
import logging
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ingest.config import FusionConfig
from ingest.locks import DocumentLocks
from ingest.phrases import MAX_PHRASES, PHRASER
from ingest.store import schema
from ingest.store.client import (
    EMBEDDED,
    EMBEDDED_OPEN_BACKOFF_S,
    UNCHANGED,
    DiskFullError,
    GuardedClient,
    StoreError,
    lock_held_elsewhere,
    locked_message,
    megabytes,
    milvus_errors,
    mount_point,
    redact_uri_secrets,
)
from ingest.store.groups import MAX_GROUPS, clip, quote_value
from ingest.store.schema import (
    CHUNK_FIELDS,
    MAX_FURNITURE_BYTES,
    MAX_METADATA_BYTES,
    MAX_TEXT_BYTES,
    MIN_FREE_BYTES,
    PHRASE_BYTES,
    QUERY_LIMIT,
    TEXT_ANALYZER,
)

if TYPE_CHECKING:
    from ingest.busy import BusySignal
    from ingest.embeddings import Embedder
    from ingest.store.phrase_table import PhraseTable, PhraseWorker
    from ingest.store.side import ChunkStore
    from ingest.vectors import EmbeddingWorker, VectorIndex

log = logging.getLogger(__name__)


VISIBILITY_TTL_S = 1.0  # how long the in-transition list is reused between this store's writes


class StoreBase:
    """What every part of the store shares: its state (set by MilvusStore.__init__), the
    connection and disk checks, the collections, the manifest and the visibility filter."""

    uri: str  # resolved path of the embedded file, or the server URI
    shown_uri: str  # the URI with its secrets redacted, for every message
    remote: bool
    collection: str  # the chunk collection (with its dense dimension when vectors are inline)
    manifest: str  # the manifest collection: one row per document
    embedder: Embedder | None  # inline vectors (None: BM25 only, or side vectors)
    vectors: VectorIndex | None  # side-collection vectors (attach_vectors)
    worker: EmbeddingWorker | None  # fills them (start_embedding_worker)
    phrases: PhraseTable | None  # phrase keys beside the chunks (index format 3 on)
    phrase_worker: PhraseWorker | None  # builds them in the background
    busy: BusySignal  # held while a search runs; background work yields to it
    embedding_problem: str  # why there is no dense channel, when one was wanted
    fusion: FusionConfig
    locks: DocumentLocks
    repairs: list[str]  # what the consistency check on open found and did
    index_format: int  # of the opened collection (set when it is checked)
    phraser: str  # the phrase extractor of the collection's phrases ("" before format 3)
    pm: Any  # the pymilvus module
    client: Any  # a GuardedClient (None once closed)
    _token: str | None
    _timeout: float
    _repair_after: float
    _maybe_empty: bool
    _manifest_fields: list[str]
    _visibility: tuple[float, str] | None  # (when, visibility_filter's text)
    _pool: concurrent.futures.ThreadPoolExecutor | None
    _pool_lock: threading.Lock
    _query_vectors: OrderedDict[str, list[float]]
    _query_lock: threading.Lock
    _language_cache: dict[tuple[str, ...], tuple[float, dict[str, float]]]

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

    def attach_phrases(self) -> PhraseTable | None:
        """Open (or create) the phrase-key table of a collection of index format 3 or later;
        None before that, or when it cannot be opened (phrase counts then answer {})."""
        if self.phrases is not None or self.index_format < 3:
            return self.phrases
        from ingest.store.phrase_table import PhraseTable

        try:
            self.phrases = PhraseTable(cast("ChunkStore", self))  # every store (MilvusStore) is one
        except Exception as exc:  # noqa: BLE001 - search works without phrase keys
            log.warning("phrase keys of %s unavailable: %s", self.shown_uri, exc)
        return self.phrases

    def start_phrase_worker(self) -> PhraseWorker | None:
        """Build missing phrase keys in a background thread: started by the first write or
        phrase count, or by the app at start, so work a previous run left is resumed. None
        without a phrase table (index formats before 3)."""
        if self.phrases is None:
            return None
        with self._pool_lock:
            if self.phrase_worker is None:
                from ingest.store.phrase_table import PhraseWorker

                self.phrase_worker = PhraseWorker(self.phrases, self.busy).start()
            return self.phrase_worker

    def _disk_full_message(self, needed: int, consequence: str = "") -> str:
        folder = Path(self.uri).parent
        free = shutil.disk_usage(folder).free if folder.exists() else 0
        need = f"; this write needs about {megabytes(needed)}" if needed else ""
        consequence = consequence or UNCHANGED
        return (
            f"disk full: {megabytes(free)} free on {mount_point(folder)} (holding {self.uri}){need}. "
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

    def check_disk(self, needed: int, consequence: str = "") -> None:
        problem = self.disk_problem(needed, consequence)
        if problem:
            raise DiskFullError(errno.ENOSPC, problem)

    def _connect(self, token: str | None) -> Any:
        if not self.remote:
            path = Path(self.uri)
            if not re.match(r"^[A-Za-z0-9.\-_]{1,36}$", path.name):
                raise StoreError(  # Milvus Lite's own limits on the database file name
                    f"embedded database name {path.name!r} must be at most 36 letters, digits, "
                    "'.', '-' or '_'"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            if lock_held_elsewhere(path):
                raise StoreError(locked_message(self.uri))
            EMBEDDED.acquire(self.uri)
        try:
            client = self._open_client(token) if self.remote else self._open_embedded(token)
            return GuardedClient(client, lambda: self._open_client(token), self)
        except Exception as exc:
            if not self.remote:
                EMBEDDED.release(self.uri)
                if "opened by another program" in str(exc) or lock_held_elsewhere(Path(self.uri)):
                    raise StoreError(locked_message(self.uri)) from exc
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
                held = "opened by another program" in str(exc) or lock_held_elsewhere(
                    Path(self.uri)
                )
                if held or delay is None:
                    raise
                log.info("embedded Milvus did not start (%s); retrying in %.1f s", exc, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _open_client(self, token: str | None) -> Any:
        """A fresh client (after the server was lost; see GuardedClient)."""
        alias = f"hopwise-{uuid.uuid4().hex}"
        return self.pm.MilvusClient(
            uri=self.uri, token=token or "", timeout=self._timeout, alias=alias
        )

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
        desc = self.client.describe_collection(name).get("description") or ""
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
        return self.index_format == schema.INDEX_FORMAT and self.phraser == PHRASER

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
        pm = self.pm
        dt = pm.DataType
        fields = pm.MilvusClient.create_schema(
            auto_id=False, enable_dynamic_field=False, description=description
        )
        fields.add_field("chunk_id", dt.VARCHAR, is_primary=True, max_length=512)
        fields.add_field("doc_id", dt.VARCHAR, max_length=512)
        fields.add_field("doc_version", dt.INT64)
        fields.add_field("title", dt.VARCHAR, max_length=2048)
        fields.add_field("source", dt.VARCHAR, max_length=2048)
        fields.add_field("section_path", dt.VARCHAR, max_length=4096)
        fields.add_field("page", dt.INT64)
        fields.add_field("start_char", dt.INT64)
        fields.add_field("end_char", dt.INT64)
        # BM25 reads `text` itself before format 3, its folded copy `search_text` since
        # (what is displayed keeps its accents; what is matched has none, like the query).
        bm25_input = "text" if index_format < 3 else "search_text"
        fields.add_field(
            "text", dt.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=index_format < 3,
            **({"analyzer_params": TEXT_ANALYZER} if index_format < 3 else {}),
        )  # fmt: skip
        if index_format >= 3:
            fields.add_field(
                "search_text", dt.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True,
                analyzer_params=TEXT_ANALYZER,
            )  # fmt: skip
            fields.add_field(
                "phrases", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_PHRASES,
                max_length=PHRASE_BYTES,
            )  # fmt: skip
        # ARRAY for the filter; the JSON copy is what we read back (Milvus Lite 2.5 fails to
        # decode an empty query result that names an ARRAY output field).
        fields.add_field(
            "groups", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_GROUPS, max_length=256
        )
        fields.add_field("groups_json", dt.VARCHAR, max_length=8192)
        fields.add_field("checksum", dt.VARCHAR, max_length=128)
        fields.add_field("created_at", dt.DOUBLE)
        fields.add_field("parser_version", dt.VARCHAR, max_length=128)
        fields.add_field("chunker_version", dt.VARCHAR, max_length=128)
        fields.add_field("embedding_version", dt.VARCHAR, max_length=512)
        if index_format >= 2:
            fields.add_field("metadata_json", dt.VARCHAR, max_length=MAX_METADATA_BYTES)
        fields.add_field("sparse", dt.SPARSE_FLOAT_VECTOR)
        fields.add_function(
            pm.Function(
                name="text_bm25", function_type=pm.FunctionType.BM25,
                input_field_names=[bm25_input], output_field_names=["sparse"],
            )
        )  # fmt: skip
        index = self.client.prepare_index_params()
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        if self.embedder is not None:
            fields.add_field("dense", dt.FLOAT_VECTOR, dim=self.embedder.dim)
            index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
        self._create(name, fields, index)

    def _create_manifest_collection(self) -> None:
        dt = self.pm.DataType
        fields = self.pm.MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        fields.add_field("doc_id", dt.VARCHAR, is_primary=True, max_length=512)
        fields.add_field("active_version", dt.INT64)
        fields.add_field("pending_version", dt.INT64)
        fields.add_field("in_transition", dt.BOOL)
        fields.add_field("title", dt.VARCHAR, max_length=2048)
        fields.add_field("source", dt.VARCHAR, max_length=2048)
        fields.add_field("groups_json", dt.VARCHAR, max_length=8192)
        fields.add_field("checksum", dt.VARCHAR, max_length=128)
        fields.add_field("created_at", dt.DOUBLE)
        fields.add_field("chunks", dt.INT64)
        fields.add_field("updated_at", dt.DOUBLE)
        fields.add_field("hidden_removed", dt.INT64)
        fields.add_field("parser", dt.VARCHAR, max_length=256)
        fields.add_field("furniture_json", dt.VARCHAR, max_length=MAX_FURNITURE_BYTES)
        fields.add_field("unused", dt.FLOAT_VECTOR, dim=2)  # Milvus needs a vector per collection
        index = self.client.prepare_index_params()
        index.add_index("unused", index_type="FLAT", metric_type="L2")
        self._create(self.manifest, fields, index)

    def _create(self, name: str, fields: Any, index: Any) -> None:
        """Create, then index without pymilvus's fixed 0.5 s wait per index (sync=False); the
        load that follows waits until the collection is ready."""
        self.client.create_collection(name, schema=fields, consistency_level="Strong")
        self.client.create_index(name, index, sync=False)

    def _manifest_rows(self, expr: str) -> list[dict[str, Any]]:
        return list(
            self.client.query(
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
            row["parser"] = clip(str(row.get("parser") or ""), 256)
        if "furniture_json" in self._manifest_fields:
            row.setdefault("furniture_json", "[]")
        row.update(updated_at=time.time(), unused=[0.0, 0.0])
        self._visibility = None  # before and after the write: a search never sees a stale list
        self.client.upsert(self.manifest, [row])
        self._visibility = None

    def visibility_filter(self) -> str:
        """Hide every version but the active one of documents in transition (crash safety).

        The list is one query of the manifest, a third of a BM25 search's time; it is kept for
        VISIBILITY_TTL_S and dropped at once when this store writes the manifest, so only
        another writer's transition (another store on the same server) shows up that late."""
        now = time.monotonic()
        cached = self._visibility
        if cached is not None and now - cached[0] < VISIBILITY_TTL_S:
            return cached[1]
        rows = self.client.query(
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

    def _flush(self, name: str) -> None:
        try:
            self.client.flush(name)
        except Exception as exc:  # Milvus Lite persists on write; a server flush is advisory
            log.debug("flush %s: %s", name, exc)

    def _note_repair(self, message: str) -> None:
        log.warning("%s: %s", self.shown_uri, message)
        self.repairs.append(message)

    def _query_chunks(self, expr: str) -> list[dict[str, Any]]:
        """Chunk rows; an empty result is [] (Milvus Lite 2.5 fails to decode it
        when the collection has an ARRAY field)."""
        if not self.count_rows(expr):
            return []
        return list(
            self.client.query(
                self.collection, filter=expr, output_fields=self._fields, limit=QUERY_LIMIT
            )
        )

    @milvus_errors
    def count_chunks(self) -> int:
        """Chunks visible to searches (in-flight versions excluded)."""
        return self.count_rows(self.visibility_filter())

    def row_ids(self, collection: str, expr: str) -> list[str]:
        """Every chunk id of `collection` matching `expr` (a chunk collection or a side one
        keyed by chunk id, with start_char), paged by character offset under Milvus's cap."""
        return self._row_ids_between(collection, expr, 0, 1 << 62)

    def _row_ids_between(self, collection: str, expr: str, low: int, high: int) -> list[str]:
        ranged = f"{expr} and start_char >= {low} and start_char < {high}"
        # Milvus Lite 2.5 cannot decode an empty result of a collection with an ARRAY field
        if not self.count_rows(ranged, collection):
            return []
        rows = self.client.query(
            collection, filter=ranged, output_fields=["chunk_id"], limit=QUERY_LIMIT
        )
        if len(rows) < QUERY_LIMIT or high - low <= 1:
            return [str(r["chunk_id"]) for r in rows]
        middle = (low + min(high, 1 << 40)) // 2
        return self._row_ids_between(collection, expr, low, middle) + self._row_ids_between(
            collection, expr, middle, high
        )

    def count_rows(self, expr: str, collection: str | None = None) -> int:
        rows = self.client.query(
            collection or self.collection, filter=expr, output_fields=["count(*)"]
        )
        return int(rows[0]["count(*)"]) if rows else 0
