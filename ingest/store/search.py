"""Hybrid search inside Milvus: BM25, exact phrases and dense vectors, each with the ACL and
visibility filter inside the request, fused by rank; phrase counts and language mix.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ingest.lang import CODE_RE, language_of
from ingest.models import Hit
from ingest.phrases import fold
from ingest.store.base import StoreBase
from ingest.store.client import milvus_errors
from ingest.store.fusion import fuse, other_language, query_forms, with_other_language
from ingest.store.groups import group_filter, quote_value
from ingest.store.phrase_table import WAIT_S
from ingest.store.schema import PHRASE_BYTES, QUERY_LIMIT, chunk_language

if TYPE_CHECKING:
    from ingest.embeddings import Embedder

log = logging.getLogger(__name__)


LEXICAL_THREADS = 4  # BM25 channels of hybrid searches in flight at once (one per question)


LANGUAGE_SAMPLE = 200  # chunks read to tell the knowledge base's language


LANGUAGE_CACHE_S = 60.0


class SearchPart(StoreBase):
    """Hybrid search inside Milvus: BM25, exact phrases and dense vectors, each with the ACL and"""

    @milvus_errors
    def search(self, query: str, groups: Sequence[str], k: int = 10) -> list[Hit]:
        """Top-k chunks the groups may read: BM25, or BM25 + dense fused with RRF (k=60).
        Background work (vectors, phrase keys) waits while it runs (`busy`)."""
        with self.busy.held():
            return self._search(query, groups, k)

    def _search(self, query: str, groups: Sequence[str], k: int) -> list[Hit]:
        typed, query = query or "", query_forms(query or "")
        # format 3 matches the folded query against folded text (no typed forms needed: the
        # folded field holds no unnormalised text); the dense channel reads the query as typed
        lexical = fold(typed) if self.index_format >= 3 else query
        if not lexical.strip() or k <= 0:
            return []
        expr = self.search_filter(groups)
        if self._maybe_empty:  # BM25 on an empty collection errors out in Milvus Lite 2.5
            if not self.count_rows(""):
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
            dense, other = (
                dense[:depth],
                other_language(dense, language_of(query), self.fusion.cross_language_slots),
            )
        except Exception as exc:  # noqa: BLE001 - BM25 results stand while the dense side is down
            log.warning("dense channel skipped: %s", exc)
            sparse = pending.result()
            exact = self._exact(typed, expr, depth)
            return fuse(sparse, [], k, self._hit, self.fusion, weights, lambda _cid: False, exact)
        exact = self._exact(typed, expr, depth)
        fused = fuse(pending.result(), dense, k, self._hit, self.fusion, weights, has_vector, exact)
        return with_other_language(fused, other, k, self._hit)

    def _exact(
        self, query: str, expr: str, limit: int
    ) -> list[tuple[float, dict[str, Any]]] | None:
        """Chunks that hold a code the query names letter for letter ('KF-FW-2031-017'), most
        codes first; None when the query names none (the channel then takes no part)."""
        codes = list(dict.fromkeys(CODE_RE.findall(query)))[: self.fusion.max_codes]
        if not codes or self.index_format < 3:
            return None
        found: dict[str, tuple[int, dict[str, Any]]] = {}
        try:
            for code in codes:  # capitals, digits and hyphens only: nothing to escape
                like = f'search_text like "%{fold(code)}%"'
                where = f"{like} and ({expr})" if expr else like
                count = self.count_rows(where)  # pymilvus cannot read an empty result whose
                if not count or count > limit:  # filter reads an ARRAY field: count first;
                    continue  # a code in that many chunks ('UTF-8') names no one thing
                rows = self.client.query(
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
            same = chunk_language(str(entity.get("text", ""))[:2000]) == asked
            return fusion.lexical_weight if same else fusion.cross_language_lexical_weight

        return weight

    def _side_dense(
        self, vector: list[float], expr: str, depth: int, sparse: list[tuple[float, dict[str, Any]]]
    ) -> tuple[list[tuple[float, dict[str, Any]]], Callable[[str], bool]]:
        """The dense channel from the side collection, with each hit's chunk row (fetched in
        one query for the ones BM25 did not return; vectors of rows gone are dropped), and
        which BM25 hits have a vector at all (the others compete on BM25 alone)."""
        assert self.vectors is not None
        found = self.vectors.search(vector, expr, depth)
        found_ids = {cid for _, cid in found}
        # which BM25 hits have a vector is asked beside the rows query (two round trips at once)
        having = self._lexical_pool().submit(
            self.vectors.have_vectors,
            [e["chunk_id"] for _, e in sparse if e["chunk_id"] not in found_ids],
        )
        entities = {e["chunk_id"]: e for _, e in sparse}
        need = [cid for _, cid in found if cid not in entities]
        if need:
            quoted = ", ".join(quote_value(c) for c in need)
            for row in self._query_chunks(f"chunk_id in [{quoted}] and {expr}"):
                entities[row["chunk_id"]] = row
        dense = [(score, entities[cid]) for score, cid in found if cid in entities]
        with_vector = found_ids | having.result()
        return dense, with_vector.__contains__

    def search_filter(self, groups: Sequence[str]) -> str:
        """The filter every search request carries: the reader's groups, minus in-flight
        versions."""
        expr = group_filter(groups)
        visibility = self.visibility_filter()
        return f"{expr} and {visibility}" if visibility else expr

    @milvus_errors
    def phrase_counts(self, keys: Sequence[str], groups: Sequence[str]) -> dict[str, int]:
        """How many chunks the groups may read carry each phrase key (`phrase_key` form;
        versions in flight excluded, as in search); keys none carries are left out, and a
        collection older than index format 3 (no phrase table) answers {}.

        Keys are read from the phrase table beside the chunks (ingest/store/phrase_table.py),
        built in the background after each write: a count first waits (at most WAIT_S) for
        the work this store queued, so a question right after an upload sees its phrases."""
        wanted = [k for k in dict.fromkeys(keys) if k and len(k.encode("utf-8")) <= PHRASE_BYTES]
        if self.phrases is None or not wanted:
            return {}
        expr = self.search_filter(groups)  # validates the groups before anything waits
        worker = self.start_phrase_worker()
        if worker is not None:
            worker.catch_up(WAIT_S)
        return self.phrases.counts(wanted, expr)

    @milvus_errors
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
        rows = self.client.query(
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

    def _channel(
        self, data: Any, field: str, expr: str, limit: int
    ) -> list[tuple[float, dict[str, Any]]]:
        """One filtered search request; scores normalised so higher is better."""
        metric = "BM25" if field == "sparse" else "COSINE"
        try:
            result = self.client.search(
                self.collection, [data], anns_field=field, limit=limit, filter=expr,
                output_fields=self._fields, search_params={"metric_type": metric},
            )  # fmt: skip
        except self.pm.MilvusException as exc:
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

    @milvus_errors
    def document_hits(self, doc_id: str, groups: Sequence[str], limit: int) -> list[Hit]:
        """The chunks of one document the groups may read, in document order, as hits (score
        0): a table or a log a search found part of, read whole. [] when the groups may not
        read it, it has no visible version, or it has more than `limit` chunks."""
        expr = f"{self.search_filter(groups)} and doc_id == {quote_value(doc_id)}"
        if not 0 < self.count_rows(expr) <= limit:
            return []
        rows = self.client.query(
            self.collection, filter=expr, output_fields=self._fields, limit=limit
        )
        hits = [self._hit(r, 0, fused=0.0) for r in rows]
        return sorted(hits, key=lambda h: (h.start_char, h.chunk_id))
