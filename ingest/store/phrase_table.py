"""Phrase keys beside the chunks, built in the background.

A chunk is found by BM25 the moment it is written; its phrase keys (`ingest.phrases.
chunk_phrases`, ~0.2 ms of Python a chunk, a fifth of an insert) are built afterwards by a
`PhraseWorker` into a side collection `<chunks>_phrases`, as the embedding worker fills
vectors. Each row carries the chunk's doc id, version, checksum and reader groups, so a
phrase count carries the same ACL and visibility filter as a search. Nothing pending is kept
in memory only: the work left is what the table lacks (listed versions with fewer current
rows than chunks), so a restart, a crash or a reindex (which rebuilds the chunk collection,
not this one) resumes where it stopped. The table records its extractor (`PHRASER`); another
one drops it and the worker builds it again.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ingest.busy import BusySignal, lower_thread_priority
from ingest.models import DocumentInfo
from ingest.phrases import MAX_PHRASES, PHRASER, chunk_phrases
from ingest.store.groups import clip, current_expr, quote_value, version_expr
from ingest.store.schema import PHRASE_BYTES, side_schema

if TYPE_CHECKING:
    from ingest.store.side import ChunkStore

log = logging.getLogger(__name__)

PHRASE_BATCH = 250  # chunks read, keyed and written at a time (a search waits for one at most)
QUIET_S = 0.5  # the worker starts a document once writes have paused this long ...
MAX_DEFER_S = 5.0  # ... or this long after its last one, so a long ingest never starves it
WAIT_S = 2.0  # how long a phrase count waits for the work its own store queued
SOURCE_FIELDS = [
    "chunk_id", "doc_id", "doc_version", "title", "section_path", "text", "groups_json",
    "checksum", "start_char",
]  # fmt: skip


class PhraseTable:
    """The side collection of phrase keys of one MilvusStore's chunk collection."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self.name = f"{store.collection}_phrases"
        client = store.client
        if self.name in set(client.list_collections()) and self.phraser() != PHRASER:
            log.info("phrase keys of %s were built by another extractor; rebuilding", self.name)
            client.drop_collection(self.name)
        if self.name not in set(client.list_collections()):
            self._create()
        client.load_collection(self.name)

    def phraser(self) -> str:
        desc = self.store.client.describe_collection(self.name).get("description") or ""
        try:
            return str(json.loads(desc).get("phraser") or "")
        except (ValueError, AttributeError):
            return ""

    def _create(self) -> None:
        pm, client = self.store.pm, self.store.client
        dt = pm.DataType
        description = json.dumps({"hopwise_phrases": 1, "phraser": PHRASER})
        fields = side_schema(pm, description)
        fields.add_field(
            "phrases", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_PHRASES,
            max_length=PHRASE_BYTES,
        )  # fmt: skip
        fields.add_field("unused", dt.FLOAT_VECTOR, dim=2)  # Milvus needs a vector per collection
        index = client.prepare_index_params()
        index.add_index("unused", index_type="FLAT", metric_type="L2")
        client.create_collection(self.name, schema=fields, consistency_level="Strong")
        client.create_index(self.name, index, sync=False)

    # ---- reads ------------------------------------------------------------------------------

    def count(self, expr: str = "") -> int:
        return self.store.count_rows(expr, self.name)

    def counts(self, keys: Sequence[str], expr: str) -> dict[str, int]:
        """How many rows the filter allows carry each key; keys none carries left out. One
        count per key (~1.5 ms at 2,000 chunks), after one for all of them (none: done)."""
        every = ", ".join(quote_value(key) for key in keys)
        if not self.count(f"array_contains_any(phrases, [{every}]) and {expr}"):
            return {}
        counts = {key: self.count(f"array_contains(phrases, {quote_value(key)}) and {expr}")
                  for key in keys}  # fmt: skip
        return {key: n for key, n in counts.items() if n}

    def missing(self) -> list[DocumentInfo]:
        """Listed document versions with fewer current rows than chunks."""
        return [
            doc
            for doc in self.store.list_documents()
            if self.count(current_expr(doc.doc_id, doc.version, doc.checksum)) < doc.chunks
        ]

    def complete(self) -> bool:
        """Every visible chunk has its row (two counts; stale rows are pruned by the worker)."""
        expr = self.store.visibility_filter()
        return self.count(expr) >= self.store.count_rows(expr)

    # ---- writes -----------------------------------------------------------------------------

    def fill_document(
        self, doc_id: str, version: int, busy: BusySignal | None = None,
        stop: threading.Event | None = None,
    ) -> int:  # fmt: skip
        """Build and store the phrase keys one listed version lacks; returns how many rows.
        Each batch waits for searches in flight (bounded) and is written under the
        document's lock after checking the version is still the listed one."""
        store = self.store
        doc = store.get_document(doc_id)
        if doc is None or doc.version != version:
            return 0
        have = set(store.row_ids(self.name, current_expr(doc_id, version, doc.checksum)))
        todo = [c for c in store.row_ids(store.collection, version_expr(doc_id, version))
                if c not in have]  # fmt: skip
        added = 0
        for start in range(0, len(todo), PHRASE_BATCH):
            if stop is not None and stop.is_set():
                break
            if busy is not None:
                busy.wait_idle()
            quoted = ", ".join(quote_value(c) for c in todo[start : start + PHRASE_BATCH])
            rows = [
                self._row(r)
                for r in store.client.query(
                    store.collection, filter=f"chunk_id in [{quoted}]", output_fields=SOURCE_FIELDS
                )
            ]
            with store.document_lock(doc_id):
                current = store.get_document(doc_id)
                if current is None or current.version != version or not rows:
                    break  # replaced or deleted meanwhile: its phrases are not wanted
                store.check_disk(sum(len(json.dumps(r["phrases"])) + 256 for r in rows))
                store.client.upsert(self.name, rows)  # upsert: a retried batch never duplicates
            added += len(rows)
        return added

    @staticmethod
    def _row(chunk: dict[str, Any]) -> dict[str, Any]:
        keys = chunk_phrases(chunk.get("title") or "", chunk.get("section_path") or "",
                             chunk["text"])  # fmt: skip
        return {
            "chunk_id": chunk["chunk_id"], "doc_id": chunk["doc_id"],
            "doc_version": int(chunk["doc_version"]), "checksum": str(chunk.get("checksum") or ""),
            "start_char": int(chunk.get("start_char") or 0),
            "groups": json.loads(chunk.get("groups_json") or "[]"),
            "phrases": [clip(key, PHRASE_BYTES) for key in keys], "unused": [0.0, 0.0],
        }  # fmt: skip

    def forget(self, doc_id: str, keep_version: int = 0) -> None:
        """Remove a document's rows except those of `keep_version` (0: all of them)."""
        expr = f"doc_id == {quote_value(doc_id)}"
        if keep_version:
            expr += f" and doc_version != {int(keep_version)}"
        if self.count(expr):
            self.store.client.delete(self.name, filter=expr)

    def prune(self) -> int:
        """Drop rows no listed version owns (a crash between a delete and its forget)."""
        docs = self.store.list_documents()
        stale = 0
        for doc in docs:
            stale += self._delete(
                f"doc_id == {quote_value(doc.doc_id)} and doc_version != {int(doc.version)}"
            )
        listed = ", ".join(quote_value(d.doc_id) for d in docs)
        stale += self._delete(f"doc_id not in [{listed}]" if docs else 'chunk_id != ""')
        return stale

    def _delete(self, expr: str) -> int:
        found = self.count(expr)
        if found:
            self.store.client.delete(self.name, filter=expr)
        return found

    def clear(self) -> None:
        """Every row (tests and scratch stores empty a knowledge base in place)."""
        self._delete('chunk_id != ""')


class PhraseWorker:
    """A background thread that builds the phrase keys the table lacks, a document at a time,
    at low CPU priority, off the insert path: it starts once writes pause (QUIET_S) or, during
    a long ingest, one document every MAX_DEFER_S; `settle()` asks it to hurry and waits."""

    def __init__(
        self, table: PhraseTable, busy: BusySignal | None = None, *,
        quiet_s: float = QUIET_S, defer_s: float = MAX_DEFER_S, retry_s: float = 30.0,
    ) -> None:  # fmt: skip
        self.table = table
        self.busy = busy
        self.quiet_s, self.defer_s, self.retry_s = quiet_s, defer_s, retry_s
        self.error = ""
        self.passes = 0
        self._changed = threading.Condition()
        self._wanted = 1  # the first pass finds what a previous run left pending
        self._done = 0
        self._urgent = False
        self._late = False  # a catch_up timed out on the current backlog
        self._last_write = 0.0
        self._last_turn = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> PhraseWorker:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="hopwise-phrases", daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """A document was written: build its phrase keys once writes pause."""
        with self._changed:
            self._wanted += 1
            self._last_write = time.monotonic()
            self._changed.notify_all()

    @property
    def pending(self) -> bool:
        """Work was asked for that no finished pass has covered yet."""
        return self._done < self._wanted

    def settle(self, timeout_s: float) -> bool:
        """Hurry (no waiting for writes to pause) and wait until every pass asked for so far
        has run; False when `timeout_s` passed first."""
        with self._changed:
            target = self._wanted
            if self._done >= target:
                return True
            self._urgent = True
            self._changed.notify_all()
            return (
                self._changed.wait_for(
                    lambda: self._done >= target or self._stop.is_set(), timeout=timeout_s
                )
                and self._done >= target
            )

    def catch_up(self, timeout_s: float) -> None:
        """Before a phrase count: wait for the work queued so far, unless an earlier wait
        timed out on the same backlog (a big one: questions then go on without waiting)."""
        if not self.pending:
            self._late = False
        elif not self._late:
            self._late = not self.settle(timeout_s)

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def run_once(self) -> int:
        """One pass over every listed document lacking phrase rows; returns rows added. The
        first pass also drops rows no listed version owns."""
        if self.passes == 0:
            self.table.prune()
        added = 0
        for doc in self.table.missing():
            if self._stop.is_set():
                break
            self._take_turn()
            added += self.table.fill_document(doc.doc_id, doc.version, self.busy, self._stop)
        self.passes += 1
        return added

    def _take_turn(self) -> None:
        """Wait until writes pause, the previous document is MAX_DEFER_S old, or a phrase
        count asks to hurry."""
        with self._changed:
            while not (self._urgent or self._stop.is_set()):
                now = time.monotonic()
                quiet = self._last_write + self.quiet_s - now
                deferred = self._last_turn + self.defer_s - now
                if quiet <= 0 or deferred <= 0:
                    break
                self._changed.wait(min(quiet, deferred))
            self._last_turn = time.monotonic()

    def _run(self) -> None:
        lower_thread_priority()
        while not self._stop.is_set():
            with self._changed:
                waiting = self._changed.wait_for(
                    lambda: self._done < self._wanted or self._stop.is_set(),
                    timeout=self.retry_s if self.error else None,
                )
                if self._stop.is_set():
                    return
                if not waiting:  # the last pass failed: try again
                    self._wanted += 1
                target = self._wanted
            try:
                self.run_once()
                self.error = ""
            except Exception as exc:  # noqa: BLE001 - searches and counts go on; say why once
                self.error = " ".join(str(exc).split()) or type(exc).__name__
                log.warning("building phrase keys paused: %s", self.error)
            with self._changed:
                self._done = target
                if self._done >= self._wanted:
                    self._urgent = False
                self._changed.notify_all()
