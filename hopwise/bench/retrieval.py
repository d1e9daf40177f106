"""Retrieval benchmark: insert chunks/s and search latency, BM25-only and hybrid (384-d).

Synthetic Chinese chunks go through the product's own MilvusStore.replace_document (manifest,
batched insert, flush) into a scratch database in a temp dir; searches go through
MilvusStore.search with the ACL and visibility filter, exactly as the graph calls it.
"""

from __future__ import annotations

import hashlib
import statistics
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ingest.models import Chunk
from ingest.store import MilvusStore, embedded_engine_version

DIM = 384
DOC_CHUNKS = 500  # chunks per synthetic document (a ~250-page manual)
CHUNK_CHARS = 300  # ~ a 500-token chunk of Chinese prose
QUERIES = 200
_CHARS = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面"
    "而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把"
    "性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质"
    "气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活"
    "设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则"
    "任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美"
    "再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元"
    "合同违约金付款期限服务器重启工程师变更系统审批流程财务报销政策员工休假条款责任赔偿保密协议客户订单发票"
)


class SyntheticEmbedder:
    """Deterministic pseudo-random unit vectors (seeded by the text); no model, no network."""

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim
        self.name = f"synthetic-{dim}"

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        vec = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return vec / np.linalg.norm(vec)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text).tolist()


def vocabulary(size: int = 4000, seed: int = 7) -> list[str]:
    """Two- and three-character pseudo-words over common Chinese characters."""
    rng = np.random.default_rng(seed)
    chars = np.array(list(_CHARS))
    words = {"".join(rng.choice(chars, size=int(rng.integers(2, 4)))) for _ in range(size * 2)}
    return sorted(words)[:size]


def synthetic_chunks(n: int, seed: int = 11) -> list[Chunk]:
    """n chunks of Zipf-distributed pseudo-words with sentence punctuation, in 500-chunk docs."""
    rng = np.random.default_rng(seed)
    vocab = vocabulary()
    weights = 1.0 / (np.arange(len(vocab)) + 20.0)  # Zipf-like, without one word dominating
    ranks = rng.choice(len(vocab), size=n * (CHUNK_CHARS // 2), p=weights / weights.sum())
    chunks: list[Chunk] = []
    cursor = 0
    for i in range(n):
        words: list[str] = []
        length = 0
        while length < CHUNK_CHARS:
            word = vocab[int(ranks[cursor % len(ranks)])]
            cursor += 1
            words.append(word + ("。" if rng.random() < 0.08 else ""))
            length += len(word)
        doc = i // DOC_CHUNKS
        chunks.append(
            Chunk(
                chunk_id=f"bench-{doc}-{i}",
                doc_id=f"bench-{doc}",
                doc_version=1,
                title=f"手册 {doc}",
                source=f"manual-{doc}.pdf",
                section_path="第一章 > 概述",
                page=i % DOC_CHUNKS // 2 + 1,
                start_char=(i % DOC_CHUNKS) * CHUNK_CHARS,
                end_char=(i % DOC_CHUNKS + 1) * CHUNK_CHARS,
                text="".join(words),
                groups=["all"] if i % 10 else ["all", "legal"],
                checksum="bench",
                created_at=time.time(),
            )  # fmt: skip
        )
    return chunks


def queries(count: int = QUERIES, seed: int = 5) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = vocabulary()
    return ["".join(rng.choice(vocab[:1500], size=int(rng.integers(2, 5)))) for _ in range(count)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def measure(store: MilvusStore, chunks: list[Chunk], qs: Sequence[str]) -> dict[str, float]:
    """Insert all chunks document by document, then time each search (after a warm-up).

    A one-chunk document is written first so the engine's one-time jieba load is not counted.
    The phrase keys are built in the background after the inserts (`PhraseWorker`): the time
    from the last insert until they are all built is reported beside the insert rate.
    """
    warm = chunks[0].model_copy(update={"chunk_id": "warm-up", "doc_id": "warm-up"})
    store.replace_document([warm])
    store.delete_document("warm-up")
    start = time.perf_counter()
    for first in range(0, len(chunks), DOC_CHUNKS):
        store.replace_document(chunks[first : first + DOC_CHUNKS])
    insert_s = time.perf_counter() - start
    start = time.perf_counter()
    store.build_phrases()
    phrases_s = time.perf_counter() - start
    return {
        "insert_per_s": len(chunks) / insert_s,
        "phrases_after_s": phrases_s,
        **search_latency(store, qs),
    }


def search_latency(store: MilvusStore, qs: Sequence[str]) -> dict[str, float]:
    """p50 / p95 of one search per query, after ten warm-up searches."""
    for q in qs[:10]:
        store.search(q, ["all"], k=10)
    latencies = []
    for q in qs:
        t = time.perf_counter()
        store.search(q, ["all"], k=10)
        latencies.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": statistics.median(latencies), "p95_ms": percentile(latencies, 95)}


def run(args: Any) -> dict[str, Any]:
    """`hopwise bench retrieval --chunks N`: both modes in a scratch database."""
    n = int(getattr(args, "chunks", None) or 10_000)
    chunks = synthetic_chunks(n)
    qs = queries(int(getattr(args, "queries", None) or QUERIES))
    uri = getattr(args, "uri", None)
    with tempfile.TemporaryDirectory(prefix="hopwise-bench-") as tmp:
        target = uri or str(Path(tmp) / "bench.db")
        name = f"bench_{uuid.uuid4().hex[:8]}"  # scratch collections, dropped afterwards
        with MilvusStore(target, collection=name) as store:
            try:
                bm25 = measure(store, chunks, qs)
                side = measure_side(store, qs)
                with MilvusStore(target, collection=name, embedder=SyntheticEmbedder()) as dense:
                    try:
                        hybrid = measure(dense, chunks, qs)
                    finally:
                        dense.drop()
            finally:
                store.drop()
    return {
        "chunks": n,
        "chunk_chars": CHUNK_CHARS,
        "engine": "milvus server" if uri else f"milvus-lite {embedded_engine_version()} (embedded)",
        "insert_per_s": round(bm25["insert_per_s"], 1),
        "phrase_keys_done_after_s": round(bm25["phrases_after_s"], 1),
        "bm25_p50_ms": round(bm25["p50_ms"], 2),
        "bm25_p95_ms": round(bm25["p95_ms"], 2),
        "hybrid_insert_per_s": round(hybrid["insert_per_s"], 1),
        "hybrid_p50_ms": round(hybrid["p50_ms"], 2),
        "hybrid_p95_ms": round(hybrid["p95_ms"], 2),
        "side_fill_per_s": round(side["fill_per_s"], 1),
        "side_hybrid_p50_ms": round(side["p50_ms"], 2),
        "side_hybrid_p95_ms": round(side["p95_ms"], 2),
        **builtin_query_ms(qs),
        "dense_dim": DIM,
        "queries": len(qs),
    }


def measure_side(store: MilvusStore, qs: Sequence[str]) -> dict[str, float]:
    """The built-in mode's layout: vectors in a side collection (ingest/vectors.py), filled by
    the worker after the BM25 insert, searched and fused with the chunks' BM25."""
    from ingest.vectors import EmbeddingWorker, wait_until_complete

    index = store.attach_vectors(SyntheticEmbedder())
    start = time.perf_counter()
    wait_until_complete(EmbeddingWorker(index), timeout_s=3600)
    fill_s = time.perf_counter() - start
    latency = search_latency(store, qs)
    store.vectors = None
    store.client.drop_collection(index.name)
    return {"fill_per_s": store.count_chunks() / fill_s, **latency}


def builtin_query_ms(qs: Sequence[str]) -> dict[str, float]:
    """What the built-in model adds to a question's first search: one query embedding."""
    try:
        from ingest.builtin_embedder import load_builtin_embedder

        embedder = load_builtin_embedder()
    except Exception:  # noqa: BLE001 - not available here: nothing to report
        return {}
    embedder.embed_query("warm-up")
    latencies = []
    for q in qs[:50]:
        t = time.perf_counter()
        embedder.embed_query(f"{q} ?")  # not in the cache
        latencies.append((time.perf_counter() - t) * 1000)
    return {"builtin_query_embed_p50_ms": round(statistics.median(latencies), 2)}
