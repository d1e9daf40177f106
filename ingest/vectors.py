"""Dense vectors beside a knowledge base, filled in the background.

A document is searchable by BM25 the moment it is ingested; its vectors are added later by an
`EmbeddingWorker`, off the request path. They live in a side collection of the same Milvus,
one per embedding model (its name and dimension in the collection name), so vectors of two
models are never mixed: a model change starts an empty side collection, search fuses the
dense channel for the chunks that have vectors, and `coverage()` says how far it got. Each
vector row carries the chunk's doc id, version and reader groups, so the dense request
carries the same ACL and visibility filter as the BM25 one (inside the request, never after).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ingest.busy import lower_thread_priority
from ingest.store.groups import current_expr, group_filter, quote_value, version_expr
from ingest.store.schema import side_schema

if TYPE_CHECKING:
    from ingest.embeddings import Embedder
    from ingest.store.side import ChunkStore

log = logging.getLogger(__name__)

EMBED_BATCH = 32  # chunks written at a time by the worker
# Chunks per embedder call: a question waits at most for the call in flight (the worker starts
# none while a question holds the busy signal). One thread of the built-in model embeds ~1.7
# Chinese chunks of 300 characters a second whether it is given 1, 2 or 4 a call (measured on
# 2 shared cores), so one a call cuts that wait from ~2.4 s to ~0.6 s for nothing.
EMBED_CALL = 1


def side_collection(chunks_collection: str, embedder: Embedder) -> str:
    """`<chunks>_vec_<model slug>_<dim>`: one side collection per model and dimension."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", embedder.name).strip("_")[:40] or "model"
    digest = hashlib.sha256(embedder.name.encode("utf-8")).hexdigest()[:8]
    return f"{chunks_collection}_vec_{slug}_{digest}_{embedder.dim}"


@dataclass(frozen=True)
class Coverage:
    """How many visible chunks have a vector of the current model."""

    embedded: int
    total: int

    @property
    def complete(self) -> bool:
        return self.embedded >= self.total

    @property
    def percent(self) -> float:
        return 100.0 if not self.total else 100.0 * self.embedded / self.total

    def line(self, model: str) -> str:
        if self.complete:
            if self.total == 1:
                return f"semantic search: {model}, the 1 chunk is embedded"
            return f"semantic search: {model}, all {self.total} chunks embedded"
        return (
            f"semantic search: {model}, {self.embedded} of {self.total} chunks embedded "
            f"({self.percent:.0f}%); the rest are found by keywords until they are done"
        )


class VectorIndex:
    """The side collection of one embedding model for one MilvusStore."""

    def __init__(
        self, store: ChunkStore, embedder: Embedder, document_embedder: Embedder | None = None
    ) -> None:
        if document_embedder is not None and document_embedder.name != embedder.name:
            raise ValueError("documents and queries must be embedded by the same model")
        self.store = store
        self.embedder = embedder  # queries
        self.document_embedder = document_embedder or embedder  # the worker (e.g. fewer threads)
        self.name = side_collection(store.collection, embedder)
        client = store.client
        if self.name not in set(client.list_collections()):
            self._create()
        client.load_collection(self.name)

    def _create(self) -> None:
        pm, client = self.store.pm, self.store.client
        dt = pm.DataType
        schema = side_schema(pm)
        schema.add_field("dense", dt.FLOAT_VECTOR, dim=self.embedder.dim)
        index = client.prepare_index_params()
        index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
        client.create_collection(self.name, schema=schema, consistency_level="Strong")
        client.create_index(self.name, index, sync=False)

    # ---- reads ------------------------------------------------------------------------------

    def search(self, vector: Sequence[float], expr: str, limit: int) -> list[tuple[float, str]]:
        """(cosine, chunk id) of the nearest vectors the filter allows, best first."""
        result = self.store.client.search(
            self.name, [list(vector)], anns_field="dense", limit=limit, filter=expr,
            output_fields=["chunk_id"], search_params={"metric_type": "COSINE"},
        )  # fmt: skip
        return [
            (float(item["distance"]), str(item["entity"]["chunk_id"]))
            for item in (result[0] if result else [])
        ]

    def have_vectors(self, chunk_ids: Sequence[str]) -> set[str]:
        """Which of these chunks have a vector (one or two small queries)."""
        if not chunk_ids:
            return set()
        expr = f"chunk_id in [{', '.join(quote_value(c) for c in chunk_ids)}]"
        found = self.count(expr)
        if found == len(set(chunk_ids)):
            return set(chunk_ids)
        if not found:
            return set()
        rows = self.store.client.query(self.name, filter=expr, output_fields=["chunk_id"])
        return {str(r["chunk_id"]) for r in rows}

    def count(self, expr: str = "") -> int:
        rows = self.store.client.query(self.name, filter=expr, output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def coverage(self, groups: Sequence[str] | None = None) -> Coverage:
        """Vectors of the chunks searches see, against those chunks (two count queries: the
        worker embeds only listed versions, and a replaced version's vectors go with it).
        With `groups`, only chunks those readers may see are counted: a reader never learns
        how much there is outside their groups."""
        expr = " and ".join(
            part
            for part in (
                self.store.visibility_filter(),
                group_filter(groups) if groups is not None else "",
            )
            if part
        )
        total = self.store.count_rows(expr)
        embedded = self.count(expr)
        return Coverage(min(embedded, total), total)

    def missing(self) -> list[tuple[str, int]]:
        """Listed document versions whose chunks lack current vectors: (doc id, version)."""
        return [
            (doc.doc_id, doc.version)
            for doc in self.store.list_documents()
            if self.count(current_expr(doc.doc_id, doc.version, doc.checksum)) < doc.chunks
        ]

    def prune(self) -> int:
        """Drop vectors no listed version owns (left by deletes and replacements made while
        no index was attached: BM25-only runs, repairs on open); returns how many."""
        docs = self.store.list_documents()
        stale = 0
        for doc in docs:
            expr = f"doc_id == {quote_value(doc.doc_id)} and doc_version != {int(doc.version)}"
            stale += self._delete(expr)
        listed = ", ".join(quote_value(d.doc_id) for d in docs)
        stale += self._delete(f"doc_id not in [{listed}]" if docs else "")
        return stale

    def _delete(self, expr: str) -> int:
        found = self.count(expr)
        if found:
            self.store.client.delete(self.name, filter=expr or 'chunk_id != ""')
        return found

    # ---- writes -----------------------------------------------------------------------------

    def fill_document(self, doc_id: str, version: int, stop: threading.Event | None = None) -> int:
        """Embed and store the vectors one document version lacks; returns how many were
        added. Each batch is written under the document's lock after checking that the
        version is still the listed one, so an admin's delete or re-upload waits for one
        batch at most, and a replaced version's chunks are never embedded."""
        store = self.store
        doc = store.get_document(doc_id)
        if doc is None or doc.version != version:
            return 0
        have = set(store.row_ids(self.name, current_expr(doc_id, version, doc.checksum)))
        todo = [
            cid for cid in store.row_ids(store.collection, version_expr(doc_id, version))
            if cid not in have
        ]  # fmt: skip
        added = 0
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            quoted = ", ".join(quote_value(c) for c in batch)
            fields = ["chunk_id", "doc_id", "doc_version", "groups_json", "text", "checksum"]
            rows = store.client.query(
                store.collection, filter=f"chunk_id in [{quoted}]",
                output_fields=[*fields, "start_char"],
            )  # fmt: skip
            vectors: list[list[float]] = []
            for first in range(0, len(rows), EMBED_CALL):
                if stop is not None and stop.is_set():
                    return added
                store.busy.wait_idle()  # no model call while a question runs (bounded)
                texts = [r["text"] for r in rows[first : first + EMBED_CALL]]
                vectors.extend(self.document_embedder.embed_documents(texts))
            if len(vectors) != len(rows):
                raise RuntimeError("the embedder returned a different number of vectors")
            with store.document_lock(doc_id):
                current = store.get_document(doc_id)
                if current is None or current.version != version or not rows:
                    return added  # replaced or deleted meanwhile: its vectors are not wanted
                store.check_disk(len(rows) * (8 * self.embedder.dim + 512))
                store.client.upsert(  # upsert: a retried batch never duplicates a vector
                    self.name,
                    [
                        {
                            "chunk_id": r["chunk_id"],
                            "doc_id": r["doc_id"],
                            "doc_version": int(r["doc_version"]),
                            "checksum": str(r.get("checksum") or ""),
                            "start_char": int(r.get("start_char") or 0),
                            "groups": json.loads(r.get("groups_json") or "[]"),
                            "dense": v,
                        }  # fmt: skip
                        for r, v in zip(rows, vectors, strict=True)
                    ],
                )
            added += len(rows)
        return added

    def forget(self, doc_id: str, keep_version: int = 0) -> None:
        """Remove a document's vectors except those of `keep_version` (0: all of them)."""
        expr = f"doc_id == {quote_value(doc_id)}"
        if keep_version:
            expr += f" and doc_version != {int(keep_version)}"
        if self.count(expr):
            self.store.client.delete(self.name, filter=expr)


class EmbeddingWorker:
    """A background thread that fills the vectors a knowledge base lacks, a document at a
    time, at low CPU priority; `wake()` after an ingest, `stop()` at shutdown. Resumable:
    each pass starts from what is stored, so a restart continues where it stopped.

    Several processes sharing one Milvus (replicas) pass `elect`: a pass runs only while it
    answers True (this process holds the deployment's worker lease), so each chunk is
    embedded by one process; the others keep asking, and take over when the holder dies."""

    def __init__(
        self,
        index: VectorIndex,
        *,
        idle_s: float = 30.0,
        elect: Callable[[], bool] | None = None,
        on_document: Callable[[str, int], None] | None = None,
    ) -> None:
        self.index = index
        self.idle_s = idle_s
        self.elect = elect
        self.on_document = on_document
        self.elected = elect is None  # whether the last pass ran here
        self.error = ""
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0

    def start(self) -> EmbeddingWorker:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="hopwise-embeddings", daemon=True
            )
            self._thread.start()
        return self

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def run_once(self, on_document: Callable[[str, int], None] | None = None) -> int:
        """One pass over every document lacking vectors; returns vectors added, and calls
        `on_document(doc_id, added)` after each document (CLI progress). The first pass also
        drops stale vectors and checks every document; later passes skip the scan while
        every chunk has a vector. A document that fails (the model, the disk) is reported in
        `error` and the pass goes on with the others."""
        if self.passes == 0:
            self.index.prune()
        elif self.index.coverage().complete:
            self.passes += 1
            return 0
        added, failures = 0, []
        for doc_id, version in self.index.missing():
            if self._stop.is_set():
                break
            try:
                filled = self.index.fill_document(doc_id, version, self._stop)
            except Exception as exc:  # noqa: BLE001 - one document must not stall the rest
                failures.append(f"{doc_id}: {' '.join(str(exc).split()) or type(exc).__name__}")
                log.warning("embedding %s failed: %s", doc_id, exc)
                continue
            added += filled
            if on_document is not None:
                on_document(doc_id, filled)
        self.error = "; ".join(failures[:3])
        self.passes += 1
        return added

    def _run(self) -> None:
        lower_thread_priority()
        while not self._stop.is_set():
            try:
                self.elected = self.elect is None or self.elect()
                if self.elected:
                    self.run_once(self.on_document)
            except Exception as exc:  # noqa: BLE001 - keep serving BM25; say why once
                self.error = " ".join(str(exc).split()) or type(exc).__name__
                log.warning("background embedding paused: %s", self.error)
            self._wake.wait(self.idle_s)
            self._wake.clear()


def wait_until_complete(worker: EmbeddingWorker, timeout_s: float) -> bool:
    """Run passes in this thread until every listed chunk has a vector (CLI, tests)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        worker.run_once()
        if worker.index.coverage().complete:
            return True
    return worker.index.coverage().complete
