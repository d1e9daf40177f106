"""What ingestion and the store need to know of the application's configuration.

The composition root builds these from the HOPWISE_* settings; ingest/ never imports them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IngestConfig:
    """Limits and chunking of one upload, and how long the viewer may draw one of its pages."""

    max_upload_mb: float = 50.0
    chunk_tokens: int = 500
    chunk_overlap_tokens: int = 50
    parse_timeout_s: float = 60.0
    # a scan: 0.5-5.5 s a page on 2 cores (sparse to dense), so 1200 s covers the OCR page
    # limit (ingest.parse.pdf.MAX_OCR_PAGES) of dense pages
    ocr_timeout_s: float = 1200.0
    render_timeout_s: float = 10.0  # a PDF page for the viewer (a few hundred ms normally)

    @property
    def max_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)


@dataclass(frozen=True)
class StoreConfig:
    """Where the knowledge base lives: a Milvus Lite file or a Milvus server URI."""

    uri: str
    token: str | None = None
    collection: str = "hopwise_chunks"
    timeout_s: float = 10.0
    lock_dir: str | None = None  # per-document write locks (default: beside the embedded file)

    def __repr__(self) -> str:  # never print the token
        return f"StoreConfig(uri={self.uri!r}, collection={self.collection!r}, token=***)"


@dataclass(frozen=True)
class FusionConfig:
    """How the BM25 and dense channels are fused (reciprocal-rank fusion, weighted).

    A question in one language scores keywords against a chunk in the other only through
    shared names and numbers, so the lexical channel's vote for such a chunk is weighted by
    `cross_language_lexical_weight`; measured on the dev sets and the cross-lingual probe
    (docs/search.md)."""

    rrf_k: int = 60
    lexical_weight: float = 1.0
    dense_weight: float = 1.0
    cross_language_lexical_weight: float = 0.3
    depth_factor: int = 2  # each channel returns depth_factor * k candidates (at least 20)
    # A code the question names ('KF-FW-2031-017') is looked up letter for letter as a third
    # channel: BM25 cuts it into common pieces ('lq', '2024') and dense vectors blur it.
    exact_weight: float = 1.0
    max_codes: int = 3  # codes of one query looked up
    # The built-in embedder ranks a chunk in the question's own language above a better one in
    # the other: the dense channel reads `cross_language_depth` candidates, and the top k holds
    # at least `cross_language_slots` chunks of the other language when the knowledge base has
    # some (the best dense ones it lacks take the last places; measured in docs/search.md).
    cross_language_depth: int = 60
    cross_language_slots: int = 2


@dataclass(frozen=True)
class EmbeddingConfig:
    """An OpenAI-compatible embedding endpoint."""

    base_url: str
    model: str
    api_key: str | None = None
    dim: int | None = None
    timeout_s: float = 30.0
    max_retries: int = 1

    def __repr__(self) -> str:
        return f"EmbeddingConfig(base_url={self.base_url!r}, model={self.model!r}, api_key=***)"
