"""An in-memory store with MilvusStore's contract (BM25 via jieba over folded text, optional
dense + RRF, ACL, the phrase table of index format 3).

State lives in a `MemoryBacking` so a test can "reopen" a store over the same data, and the
write is split into the same two steps as MilvusStore so a crash between them can be simulated.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jieba

from ingest.config import FusionConfig
from ingest.models import Chunk, DocumentInfo, Hit
from ingest.normalize import normalize_text
from ingest.phrases import chunk_phrases, fold
from ingest.store import validate_chunk_groups, validate_groups

jieba.setLogLevel(60)
_WORD = re.compile(r"\w", re.UNICODE)


@dataclass
class MemoryBacking:
    """What survives a "restart": chunk rows and the per-document manifest."""

    chunks: dict[str, Chunk] = field(default_factory=dict)
    manifest: dict[str, dict[str, Any]] = field(default_factory=dict)
    vectors: dict[str, list[float]] = field(default_factory=dict)
    locks: dict[str, threading.RLock] = field(default_factory=dict)


def _terms(text: str) -> list[str]:
    """Terms of the folded text, as MilvusStore's BM25 indexes them (index format 3)."""
    return [t.lower() for t in jieba.lcut_for_search(fold(text)) if _WORD.search(t)]


@lru_cache(maxsize=8192)
def _phrases(title: str, section_path: str, text: str) -> frozenset[str]:
    """A chunk's phrase keys, computed once per content (tests rewrite the same chunk ids)."""
    return frozenset(chunk_phrases(title, section_path, text))


class MemoryStore:
    """Same public behaviour as ingest.store.MilvusStore, for fast graph and UI tests."""

    def __init__(self, backing: MemoryBacking | None = None, *, embedder: Any = None) -> None:
        self.backing = backing or MemoryBacking()
        self.embedder = embedder
        self.repair()

    # ---- writes ---------------------------------------------------------------------------

    def document_lock(self, doc_id: str, what: str = "") -> threading.RLock:
        """Writes to one document are serialised across the threads sharing the backing."""
        return self.backing.locks.setdefault(doc_id, threading.RLock())

    def replace_document(self, chunks: Iterable[Chunk]) -> None:
        chunks = list(chunks)
        if not chunks:
            raise ValueError("replace_document needs at least one chunk")
        with self.document_lock(chunks[0].doc_id):
            self._activate(self._write_pending(chunks))

    def _write_pending(self, chunks: Sequence[Chunk]) -> dict[str, Any]:
        if not chunks:
            raise ValueError("replace_document needs at least one chunk")
        first = chunks[0]
        if any(c.doc_id != first.doc_id or c.doc_version != first.doc_version for c in chunks):
            raise ValueError("all chunks of replace_document must share doc_id and version")
        if len({c.chunk_id for c in chunks}) != len(chunks):
            raise ValueError("duplicate chunk_id")
        for c in chunks:
            if c.chunk_id in self.backing.chunks:
                raise ValueError("chunk ids must be unique per version")
        old = self.backing.manifest.get(first.doc_id)
        active = old["active_version"] if old else 0
        if first.doc_version == active:
            raise ValueError(f"version {active} of {first.doc_id} is already stored")
        groups = validate_chunk_groups(first.groups)
        record = {
            "doc_id": first.doc_id, "active_version": active,
            "pending_version": first.doc_version, "in_transition": True, "title": first.title,
            "source": first.source, "groups": groups, "checksum": first.checksum,
            "created_at": first.created_at, "chunks": len(chunks),
            "hidden_removed": first.hidden_removed, "parser": first.parser_version,
            "furniture": list(first.furniture),
        }  # fmt: skip
        previous = dict(old) if old else {**record, "active_version": 0}
        self.backing.manifest[first.doc_id] = {**previous, "in_transition": True}
        vectors = self.embedder.embed_documents([c.text for c in chunks]) if self.embedder else []
        for i, c in enumerate(chunks):
            if vectors:
                self.backing.vectors[c.chunk_id] = vectors[i]
            groups_i = validate_chunk_groups(c.groups)
            self.backing.chunks[c.chunk_id] = c.model_copy(update={"groups": groups_i})
        return record

    def _activate(self, record: dict[str, Any]) -> None:
        self._settle({**record, "active_version": record["pending_version"]})

    def _settle(self, row: dict[str, Any]) -> None:
        doc_id, active = row["doc_id"], row["active_version"]
        for cid, c in list(self.backing.chunks.items()):
            if c.doc_id == doc_id and c.doc_version != active:
                del self.backing.chunks[cid]
                self.backing.vectors.pop(cid, None)
        if active <= 0:
            self.backing.manifest.pop(doc_id, None)
        else:
            self.backing.manifest[doc_id] = {**row, "pending_version": 0, "in_transition": False}

    def repair(self, older_than_s: float = 0.0) -> int:
        stale = [r for r in self.backing.manifest.values() if r["in_transition"]]
        for row in stale:
            self._settle(row)
        return len(stale)

    def delete_document(self, doc_id: str) -> int:
        with self.document_lock(doc_id):
            if doc_id not in self.backing.manifest:
                return 0
            count = sum(1 for c in self.backing.chunks.values() if c.doc_id == doc_id)
            self._settle({**self.backing.manifest[doc_id], "active_version": 0})
            return count

    # ---- reads ----------------------------------------------------------------------------

    def _visible(self, chunk: Chunk) -> bool:
        row = self.backing.manifest.get(chunk.doc_id)
        if row is None:
            return False
        return not row["in_transition"] or chunk.doc_version == row["active_version"]

    def search(self, query: str, groups: Sequence[str], k: int = 10) -> list[Hit]:
        query = normalize_text(query or "")  # as MilvusStore: the form documents are indexed in
        if not fold(query).strip() or k <= 0:
            return []
        allowed = set(validate_groups(groups))
        pool = [
            c for c in self.backing.chunks.values() if self._visible(c) and allowed & set(c.groups)
        ]
        bm25 = self._bm25(query, pool)[: max(2 * k, 20)]
        if self.embedder is None:
            return [self._hit(c, r, s, s, None) for r, (s, c) in enumerate(bm25[:k], 1)]
        try:
            qv = self.embedder.embed_query(query)
        except Exception:  # same as MilvusStore: BM25 alone while embeddings are down
            qv = None
        vecs = self.backing.vectors
        dense = (
            []
            if qv is None
            else sorted(
                ((sum(a * b for a, b in zip(qv, vecs[c.chunk_id], strict=True)), c) for c in pool),
                key=lambda p: (-p[0], p[1].chunk_id),
            )[: max(2 * k, 20)]
        )
        fused: dict[str, float] = {}
        per: dict[str, dict[str, float]] = {}
        fusion = FusionConfig()  # the same weights as MilvusStore (same language here)
        for name, results in (("bm25", bm25), ("dense", dense)):
            weight = fusion.dense_weight if name == "dense" else fusion.lexical_weight
            for rank, (score, c) in enumerate(results, 1):
                share = weight / (fusion.lexical_weight + fusion.dense_weight)  # as MilvusStore
                fused[c.chunk_id] = fused.get(c.chunk_id, 0.0) + share / (fusion.rrf_k + rank)
                per.setdefault(c.chunk_id, {})[name] = score
        order = sorted(fused, key=lambda cid: (-fused[cid], cid))[:k]
        return [
            self._hit(
                self.backing.chunks[cid],
                r,
                fused[cid],
                per[cid].get("bm25"),
                per[cid].get("dense"),
            )  # fmt: skip
            for r, cid in enumerate(order, 1)
        ]

    @staticmethod
    def _bm25(query: str, pool: list[Chunk]) -> list[tuple[float, Chunk]]:
        """Okapi BM25 (k1=1.2, b=0.75) over the pool the reader may see."""
        q_terms = set(_terms(query))
        docs = [(c, Counter(_terms(c.text))) for c in pool]
        if not docs or not q_terms:
            return []
        avg = sum(sum(tf.values()) for _, tf in docs) / len(docs) or 1.0
        n = len(docs)
        scored = []
        for c, tf in docs:
            length = sum(tf.values())
            score = 0.0
            for t in q_terms & tf.keys():
                df = sum(1 for _, other in docs if t in other)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * length / avg))
            if score > 0:
                scored.append((score, c))
        return sorted(scored, key=lambda p: (-p[0], p[1].chunk_id))

    @staticmethod
    def _hit(c: Chunk, rank: int, fused: float, bm25: float | None, dense: float | None) -> Hit:
        return Hit(
            chunk_id=c.chunk_id, doc_id=c.doc_id, doc_version=c.doc_version, title=c.title,
            source=c.source, section=c.section_path, page=c.page, start_char=c.start_char,
            end_char=c.end_char, text=c.text, groups=list(c.groups), score=fused,
            bm25_score=bm25, dense_score=dense, rank=rank, metadata=dict(c.metadata),
            parser=c.parser_version,
        )  # fmt: skip

    def phrase_counts(self, keys: Sequence[str], groups: Sequence[str]) -> dict[str, int]:
        """As MilvusStore: chunks the groups may read (versions in flight excluded) carrying
        each phrase key; absent keys left out."""
        allowed, wanted = set(validate_groups(groups)), set(keys)
        counts: Counter[str] = Counter()
        for c in self.backing.chunks.values():
            if self._visible(c) and allowed & set(c.groups):
                counts.update(wanted & _phrases(c.title, c.section_path, c.text))
        return dict(counts)

    def document_hits(self, doc_id: str, groups: Sequence[str], limit: int) -> list[Hit]:
        """As MilvusStore: one document's chunks the groups may read, in order; [] past limit."""
        allowed = set(validate_groups(groups))
        chunks = [c for c in self.backing.chunks.values()
                  if c.doc_id == doc_id and self._visible(c) and allowed & set(c.groups)]  # fmt: skip
        if not 0 < len(chunks) <= limit:
            return []
        ordered = sorted(chunks, key=lambda c: (c.start_char, c.chunk_id))
        return [self._hit(c, 0, 0.0, None, None) for c in ordered]

    def language_mix(self, groups: Sequence[str], sample: int = 200) -> dict[str, float]:
        """As MilvusStore: the languages of (a sample of) the chunks the groups may read."""
        from ingest.lang import language_of

        allowed = set(validate_groups(groups))
        texts = [c.text for c in self.backing.chunks.values()
                 if self._visible(c) and allowed & set(c.groups)][:sample]  # fmt: skip
        counts = Counter(language_of(t[:400]) for t in texts)
        return {k: round(v / len(texts), 3) for k, v in counts.items()} if texts else {}

    def get_document(self, doc_id: str) -> DocumentInfo | None:
        row = self.backing.manifest.get(doc_id)
        return _info(row) if row and row["active_version"] > 0 else None

    def list_documents(self) -> list[DocumentInfo]:
        rows = [r for r in self.backing.manifest.values() if r["active_version"] > 0]
        return sorted((_info(r) for r in rows), key=lambda d: (d.source, d.doc_id))

    def get_chunks(self, doc_id: str) -> list[Chunk]:
        row = self.backing.manifest.get(doc_id)
        if not row or row["active_version"] <= 0:
            return []
        chunks = [
            c.model_copy()
            for c in self.backing.chunks.values()
            if c.doc_id == doc_id and c.doc_version == row["active_version"]
        ]
        return sorted(chunks, key=lambda c: (c.start_char, c.chunk_id))

    def count_chunks(self) -> int:
        return sum(1 for c in self.backing.chunks.values() if self._visible(c))

    def stats(self) -> dict[str, Any]:
        return {
            "engine": "memory",
            "uri": "memory://",
            "documents": len(self.list_documents()),
            "chunks": self.count_chunks(),
            "dense": self.embedder is not None,
            "embedding_model": self.embedder.name if self.embedder else None,
        }

    def close(self) -> None:
        """Nothing to release; the backing stays for a later reopen."""


def _info(row: dict[str, Any]) -> DocumentInfo:
    return DocumentInfo(
        doc_id=row["doc_id"], title=row["title"], source=row["source"],
        version=row["active_version"], chunks=row["chunks"], groups=list(row["groups"]),
        checksum=row["checksum"], created_at=row["created_at"],
        hidden_removed=int(row.get("hidden_removed", 0)), parser=row.get("parser", ""),
        furniture=list(row.get("furniture", [])),
    )  # fmt: skip
