"""Documents as versions: write a new version hidden, activate it in the manifest, delete; the
consistency check and repair of writes a crash interrupted; reading documents and chunks.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ingest.models import Chunk, DocumentInfo
from ingest.store.base import StoreBase
from ingest.store.client import StoreError, milvus_errors
from ingest.store.groups import clip, quote_value, validate_chunk_groups
from ingest.store.schema import (
    INSERT_BATCH,
    MAX_TEXT_BYTES,
    QUERY_LIMIT,
    chunk_batches,
    disk_need,
    furniture_json,
    insert_pieces,
    lexical_fields,
    metadata_json,
    row_to_chunk,
    row_to_document,
    same_transition,
)

log = logging.getLogger(__name__)


class DocumentsPart(StoreBase):
    """Documents as versions: write a new version hidden, activate it in the manifest, delete; the"""

    @milvus_errors
    def repair(self, older_than_s: float = 0.0) -> int:
        """Finish or roll back interrupted writes; returns how many documents were repaired."""
        cutoff = time.time() - older_than_s
        repaired = 0
        for row in self._manifest_rows("in_transition == true"):
            if float(row.get("updated_at") or 0.0) > cutoff:
                continue
            with self.document_lock(str(row["doc_id"]), str(row.get("source") or "")):
                current = self._manifest_row(str(row["doc_id"]))  # a writer may have finished
                if not same_transition(row, current):
                    continue
                self._settle(self._checked_active(current))  # type: ignore[arg-type]
            repaired += 1
        if repaired:
            log.warning("repaired %d interrupted document write(s) in %s", repaired, self.shown_uri)
        return repaired

    def _stored_versions(self, doc_id: str) -> set[int]:
        expr = f"doc_id == {quote_value(doc_id)}"
        if not self.count_rows(expr):
            return set()
        rows = self.client.query(
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
        have = self.count_rows(f"doc_id == {quote_value(doc_id)} and doc_version == {active}")
        if have >= listed:
            return row
        name = row.get("source") or doc_id
        others = sorted(self._stored_versions(doc_id) - {active})
        if others:
            version = others[-1]
            expr = f"doc_id == {quote_value(doc_id)} and doc_version == {version}"
            sample = self.client.query(
                self.collection, filter=expr, output_fields=self._fields, limit=1
            )[0]
            fixed = {
                **row, "active_version": version, "chunks": self.count_rows(expr),
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

    @milvus_errors
    def check_consistency(self) -> list[str]:
        """Check that every listed document is stored exactly as listed; repair what is not
        (see `_checked_active`). One count query when all is well. Returns the repairs."""
        rows = self._manifest_rows("active_version > 0 and in_transition == false")
        listed = sum(int(r.get("chunks") or 0) for r in rows)
        if self.count_rows(self.visibility_filter()) == listed:
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
        if self.count_rows(self.visibility_filter()) <= listed:
            return
        for row in rows:
            if row.get("in_transition"):
                continue
            expr = (
                f"doc_id == {quote_value(str(row['doc_id']))} "
                f"and doc_version != {int(row['active_version'])}"
            )
            if self.count_rows(expr):
                self.client.delete(self.collection, filter=expr)
        known = self._manifest_rows('doc_id != ""')  # writes in progress own their rows too
        names = ", ".join(quote_value(str(r["doc_id"])) for r in known)
        orphans = f"doc_id not in [{names}]" if known else 'chunk_id != ""'
        found = self.count_rows(orphans)
        if found:
            self.client.delete(self.collection, filter=orphans)
            message = f"{found} chunks of no listed document removed"
            log.warning("consistency check of %s: %s", self.shown_uri, message)
            self.repairs.append(message)

    def _settle(self, row: dict[str, Any]) -> None:
        """Delete every chunk version but the active one, then end the transition."""
        doc_id, active = str(row["doc_id"]), int(row["active_version"])
        self._maybe_empty = True
        self.client.delete(
            self.collection, filter=f"doc_id == {quote_value(doc_id)} and doc_version != {active}"
        )
        self._flush(self.collection)
        if self.vectors is not None:
            self.vectors.forget(doc_id, keep_version=max(active, 0))
        if self.phrases is not None:
            self.phrases.forget(doc_id, keep_version=max(active, 0))
        if active <= 0:
            self.client.delete(self.manifest, filter=f"doc_id == {quote_value(doc_id)}")
            self._visibility = None
        else:
            self._put_manifest({**row, "pending_version": 0, "in_transition": False})
        self._flush(self.manifest)

    @milvus_errors
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
            self.check_disk(disk_need(chunks, self._dense_dim(), self.index_format))
        with self.document_lock(first.doc_id, first.source):
            self._activate(self._write_pending(itertools.chain([first], stream)))
        if self.worker is not None:
            self.worker.wake()  # the new version's vectors
        phrases = self.start_phrase_worker()
        if phrases is not None:
            phrases.wake()  # and its phrase keys, once writes pause

    def _write_pending(self, chunks: Iterable[Chunk]) -> dict[str, Any]:
        """Steps 1-2: mark the new version pending, insert all its chunks (still invisible)."""
        stream = iter(chunks)
        first = next(stream, None)
        if first is None:
            raise ValueError("replace_document needs at least one chunk")
        chunks = itertools.chain([first], stream)
        doc_id, version = first.doc_id, first.doc_version
        ids: set[str] = set()
        batches = chunk_batches(chunks, INSERT_BATCH)
        batch = next(batches)
        self._check_chunks(batch, doc_id, version, ids)
        vectors = self._vectors(batch)  # embeds first: a failing embedder changes nothing
        self.check_disk(disk_need(batch, self._dense_dim(), self.index_format))
        old = self._manifest_row(doc_id)
        active = int(old["active_version"]) if old else 0
        if version == active:
            raise ValueError(f"version {version} of {doc_id} is already stored")
        self._check_ids_free(doc_id, version, [c.chunk_id for c in batch])
        record = {
            "doc_id": doc_id, "active_version": active, "pending_version": version,
            "in_transition": True, "title": clip(first.title, 2048),
            "source": clip(first.source, 2048),
            "groups_json": json.dumps(validate_chunk_groups(first.groups), ensure_ascii=False),
            "checksum": first.checksum, "created_at": first.created_at, "chunks": 0,
            "hidden_removed": first.hidden_removed, "parser": first.parser_version,
            "furniture_json": furniture_json(first.furniture),
            "fresh": old is None,  # no other version of this document exists anywhere
        }  # fmt: skip
        previous = {**old, "active_version": active} if old else {**record, "active_version": 0}
        self._put_manifest({**previous, "pending_version": version, "in_transition": True})
        self._flush(self.manifest)
        in_flight: Callable[[], None] | None = None  # waits for the insert the engine is taking
        try:
            if old is not None:  # leftovers of an earlier interrupted write of this version
                self.client.delete(
                    self.collection,
                    filter=f"doc_id == {quote_value(doc_id)} and doc_version == {version}",
                )
            written = 0
            while True:
                for start, end in insert_pieces(len(batch), in_flight is None):
                    piece = batch[start:end]
                    part = None if vectors is None else vectors[start:end]
                    rows = self._rows(piece, part)  # while the engine takes the last piece
                    if in_flight is not None:
                        done, in_flight = in_flight, None
                        done()
                    in_flight = self.client.insert_columns(self.collection, rows, wait=False)
                    written += len(rows)
                batch = next(batches, [])
                if not batch:
                    break
                self._check_chunks(batch, doc_id, version, ids)
                vectors = self._vectors(batch)
                self._check_ids_free(doc_id, version, [c.chunk_id for c in batch])
                self.check_disk(disk_need(batch, self._dense_dim(), self.index_format))
            if in_flight is not None:
                done, in_flight = in_flight, None
                done()
            self._flush(self.collection)
            stored = self.count_rows(
                f"doc_id == {quote_value(doc_id)} and doc_version == {version}"
            )
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
            metadata_json(chunk.metadata)  # raises ValueError when it is too large
            validate_chunk_groups(chunk.groups)  # before anything is written

    def _check_ids_free(self, doc_id: str, version: int, chunk_ids: list[str]) -> None:
        """Primary keys must differ between versions, or deleting the old would hit the new."""
        for start in range(0, len(chunk_ids), 1000):
            batch = ", ".join(quote_value(c) for c in chunk_ids[start : start + 1000])
            expr = (
                f"chunk_id in [{batch}] and (doc_id != {quote_value(doc_id)} "
                f"or doc_version != {version})"  # no `not`: Milvus Lite 2.5 rejects it
            )
            if self.count_rows(expr):
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
                "title": clip(c.title, 2048), "source": clip(c.source, 2048),
                "section_path": clip(c.section_path, 4096),
                "page": c.page if c.page is not None else -1,
                "start_char": c.start_char, "end_char": c.end_char, "text": c.text,
                "groups": groups, "groups_json": json.dumps(groups, ensure_ascii=False),
                "checksum": c.checksum, "created_at": c.created_at,
                "parser_version": c.parser_version, "chunker_version": c.chunker_version,
                "embedding_version": self.embedder.name if self.embedder else "",
            }  # fmt: skip
            if self.index_format >= 2:
                row["metadata_json"] = metadata_json(c.metadata)
            if self.index_format >= 3:
                row.update(lexical_fields(c.text))
            if vectors is not None:
                row["dense"] = vectors[i]
            rows.append(row)
        return rows

    @milvus_errors
    def delete_document(self, doc_id: str) -> int:
        """Remove a document's chunks and manifest entry; returns the number of chunks removed
        (0 when it is not there, e.g. another admin deleted it first). Waits for a write of the
        same document in progress (`document_lock`) and then deletes what that write left."""
        with self.document_lock(doc_id):
            row = self._manifest_row(doc_id)
            if row is None:
                return 0
            self.check_disk(0)
            expr = f"doc_id == {quote_value(doc_id)}"
            count = self.count_rows(expr)
            self._put_manifest({**row, "active_version": 0, "in_transition": True})
            self._flush(self.manifest)
            self._settle({**row, "active_version": 0})
            return count

    @milvus_errors
    def get_document(self, doc_id: str) -> DocumentInfo | None:
        row = self._manifest_row(doc_id)
        if not row or int(row["active_version"]) <= 0:
            return None
        info = row_to_document(row)
        if "parser" not in self._manifest_fields:  # a manifest older than lineage in it
            info.parser = self._chunk_parser(doc_id, int(row["active_version"]))
        return info

    def _chunk_parser(self, doc_id: str, version: int) -> str:
        """The parser lineage one chunk of a document's version records."""
        rows = self.client.query(
            self.collection,
            filter=f"doc_id == {quote_value(doc_id)} and doc_version == {version}",
            output_fields=["parser_version"],
            limit=1,
        )
        return str(rows[0].get("parser_version") or "") if rows else ""

    @milvus_errors
    def list_documents(self) -> list[DocumentInfo]:
        rows = self._manifest_rows("active_version > 0")
        return sorted((row_to_document(r) for r in rows), key=lambda d: (d.source, d.doc_id))

    @milvus_errors
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
        chunks = [row_to_chunk(r) for r in self._query_chunks(expr)]
        return sorted(chunks, key=lambda c: (c.start_char, c.chunk_id))
