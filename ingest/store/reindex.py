"""Rebuilding an older chunk collection in the current index format: copy, check, swap; a crash
leaves the old collection or the new one whole, and the next open finishes or undoes it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.store import schema
from ingest.store.client import UNCHANGED, StoreError, milvus_errors
from ingest.store.documents import DocumentsPart
from ingest.store.groups import quote_value
from ingest.store.schema import (
    MANIFEST_FIELDS,
    OPTIONAL_MANIFEST_FIELDS,
    QUERY_LIMIT,
    bytes_need,
    upgraded_row,
)

log = logging.getLogger(__name__)


REINDEX_PAGE = 500  # rows per page when reindex_format copies a collection


REINDEX_SUFFIX = "_reindex"  # the copy reindex_format builds before it swaps


SWAP_PENDING = "the rebuilt copy is kept: opening the knowledge base again finishes the rebuild"


@dataclass(frozen=True)
class Reindexed:
    """What `MilvusStore.reindex_format` did."""

    format_before: int
    format_after: int
    phraser_before: str  # the phrase extractor before ("" below format 3)
    rows: int  # chunk rows in the collection (every stored version)
    seconds: float
    rebuilt: bool  # False: the collection was current already


def progress_step(
    progress: Callable[[str, int, int], None] | None, step: str
) -> Callable[[int, int], None] | None:
    return None if progress is None else functools.partial(progress, step)


class ReindexPart(DocumentsPart):
    """Rebuilding an older chunk collection in the current index format: copy, check, swap; a crash"""

    def _ensure_collections(self) -> None:
        existing = set(self.client.list_collections())
        if self._reindex_name in existing:
            self._resume_reindex(existing)
            existing = set(self.client.list_collections())
        if self.collection not in existing:
            description = self._description(self.index_format)
            self._create_chunk_collection(self.collection, self.index_format, description)
        else:
            self._check_chunk_collection()
        if self.manifest not in existing:
            self._create_manifest_collection()
        fields = self.client.describe_collection(self.manifest).get("fields") or []
        names = {f.get("name") for f in fields}
        # a manifest written before hidden_removed or parser existed keeps working without
        # them (its documents' parser reads as unknown, so the same bytes re-ingest)
        self._manifest_fields = [*MANIFEST_FIELDS, *(f for f in OPTIONAL_MANIFEST_FIELDS
                                                     if f in names)]  # fmt: skip
        for name in (self.collection, self.manifest):
            self.client.load_collection(name)

    @property
    def _reindex_name(self) -> str:
        return f"{self.collection}{REINDEX_SUFFIX}"

    @milvus_errors
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
        if before > schema.INDEX_FORMAT:
            raise StoreError(
                f"collection {self.collection} has index format {before}, newer than this "
                f"release's {schema.INDEX_FORMAT}; upgrade Hopwise"
            )
        if self.index_current:
            return Reindexed(before, before, phraser, self.count_rows(""), 0.0, rebuilt=False)
        temp = self._reindex_name
        if temp in set(self.client.list_collections()):  # left when another process runs
            raise StoreError(f"{self.collection} at {self.shown_uri} is being reindexed already")
        self.check_disk(self._reindex_need())
        seen = self._manifest_signature()
        stamp = time.time()
        self._create_chunk_collection(
            temp, schema.INDEX_FORMAT, self._description(schema.INDEX_FORMAT, stamp)
        )
        self.client.load_collection(temp)
        try:
            rows = self._copy_rows(
                self.collection, temp, upgraded_row, progress_step(progress, "copy"), UNCHANGED
            )
            if self._manifest_signature() != seen:
                raise StoreError(
                    f"documents of {self.shown_uri} changed while it was reindexed (another "
                    "process wrote); nothing was changed: reindex when nothing else writes"
                )
        except BaseException:
            with contextlib.suppress(Exception):  # otherwise the next open drops it
                self.client.drop_collection(temp)
            raise
        self._swap_in(temp, rows, progress_step(progress, "swap"))
        self.attach_phrases()  # a format 3 table, keyed by chunk id, outlives the rebuild
        seconds = round(time.monotonic() - started, 1)
        return Reindexed(before, self.index_format, phraser, rows, seconds, rebuilt=True)

    def _swap_in(
        self, temp: str, rows: int, progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Put the complete, counted copy `temp` in place of the chunk collection (Milvus Lite
        cannot rename): drop the collection, create it again as `temp` describes itself, copy
        `temp` back, count, drop `temp`. From the drop on, `temp` is the only whole copy and
        a crash leaves it there: the next open finishes the swap (`_resume_reindex`)."""
        description = self.client.describe_collection(temp).get("description") or ""
        info = self._collection_info(temp)
        if self.collection in set(self.client.list_collections()):
            self.client.drop_collection(self.collection)
        self._create_chunk_collection(self.collection, int(info["hopwise"]), description)
        self.client.load_collection(self.collection)
        if self._copy_rows(temp, self.collection, dict, progress, SWAP_PENDING) != rows:
            raise StoreError(f"{temp} changed while it was swapped in; {SWAP_PENDING}")
        self.client.drop_collection(temp)
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
        self.client.load_collection(temp)
        if self.collection in existing:
            self.client.load_collection(self.collection)
            swapped = self._collection_info(self.collection).get("reindexed_at") == started
            if not swapped or self.count_rows("", self.collection) == self.count_rows("", temp):
                self.client.drop_collection(temp)  # never swapped in, or swapped in whole
                if not swapped:
                    self._note_repair("an interrupted index rebuild was undone; nothing changed")
                return
        self._swap_in(temp, self.count_rows("", temp))
        self._note_repair(f"an interrupted index rebuild was finished (format {self.index_format})")

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
            for f in self.client.describe_collection(source).get("fields") or []
            if not f.get("is_function_output")
        ]
        total, copied, expr = self.count_rows("", source), 0, ""
        while self.count_rows(expr, source):  # counted first: an empty page cannot be decoded
            page = self.client.query(source, filter=expr, output_fields=fields, limit=REINDEX_PAGE)
            rows = [convert(row) for row in page]
            text = sum(len(r["text"].encode("utf-8")) for r in rows)
            need = bytes_need(text, len(rows), self._dense_dim(), schema.INDEX_FORMAT)
            self.check_disk(need, consequence)
            self.client.insert_columns(target, rows)
            copied += len(rows)
            expr = f"chunk_id > {quote_value(max(str(r['chunk_id']) for r in page))}"
            if progress is not None:
                progress(copied, total)
        self._flush(target)
        stored = self.count_rows("", target)
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
        rows = self.client.query(
            self.manifest, filter='doc_id != ""', output_fields=["doc_id", "updated_at"],
            limit=QUERY_LIMIT,
        )  # fmt: skip
        stamps = sorted((str(r["doc_id"]), float(r.get("updated_at") or 0.0)) for r in rows)
        return hashlib.sha256(json.dumps(stamps).encode()).hexdigest()
