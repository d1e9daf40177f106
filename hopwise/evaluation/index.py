"""An isolated Milvus Lite index per evaluation corpus, cached by the corpus checksum.

Passages go in as chunks directly (one chunk per passage, the title as its first line, the way a
parsed file starts with its heading), bypassing file parsing. A finished index leaves a marker
file, so the next run with the same corpus and settings opens it at once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

from hopwise.evaluation.data import Dataset, Passage
from hopwise.settings import Settings
from ingest.models import Chunk

log = logging.getLogger(__name__)

INDEX_FORMAT = "eval-index-3"
COLLECTION = "eval_chunks"
BATCH_PASSAGES = 2000


def chunk_text(passage: Passage) -> str:
    """The indexed text: the title as a first line unless the passage already starts with it."""
    title = passage.title.strip()
    if not title or passage.text.lstrip().startswith(title):
        return passage.text
    return f"{title}\n{passage.text}"


def passages_to_chunks(dataset: Dataset, passages: Iterable[Passage], part: int) -> list[Chunk]:
    """One chunk per passage; chunk_id is the passage id so gold ids compare directly."""
    doc_id = f"eval-{dataset.name}-{part}"
    now = time.time()
    return [
        Chunk(
            chunk_id=p.id, doc_id=doc_id, doc_version=1, title=p.title,
            source=f"{dataset.name}.corpus.jsonl", text=chunk_text(p), groups=["all"],
            checksum=dataset.corpus_checksum, created_at=now,
        )
        for p in passages
    ]  # fmt: skip


def index_key(dataset: Dataset, excluded: set[str], embedder_name: str) -> str:
    """Changes with the corpus, the excluded passages, the embedder, the BM25 analyzer, the
    store's index format and the phrase extractor."""
    from ingest.phrases import PHRASER
    from ingest.store import INDEX_FORMAT as STORE_FORMAT
    from ingest.store import TEXT_ANALYZER

    analyzer = json.dumps(TEXT_ANALYZER, sort_keys=True, ensure_ascii=False)
    lineage = (INDEX_FORMAT, f"store-{STORE_FORMAT}", PHRASER, analyzer)
    digest = hashlib.sha256()
    for part in (*lineage, dataset.corpus_checksum, embedder_name, *sorted(excluded)):
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()[:16]


def open_index(dataset: Dataset, settings: Settings, *, excluded: set[str] | None = None):  # noqa: ANN201
    """A MilvusStore over the dataset's passages (minus `excluded`), built once and cached."""
    from hopwise.app import build_embedder
    from ingest.store import MilvusStore

    excluded = excluded or set()
    embedder = build_embedder(settings)
    background = None
    if embedder is None and settings.embedding_mode == "builtin":
        from hopwise.app import builtin_embedder

        try:  # the product's own path: vectors beside the chunks, filled here up front
            background = builtin_embedder()
        except Exception as exc:  # noqa: BLE001 - evaluate BM25-only, and say so
            log.warning("BM25-only: %s", exc)
    model = embedder.name if embedder else (f"side:{background.name}" if background else "bm25")
    key = index_key(dataset, excluded, model)
    folder = settings.data_dir / "eval"
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"{dataset.name}-{key}.db"
    marker = folder / f"{dataset.name}-{key}.ready"
    if not marker.exists():
        _remove_db(db)
    store = MilvusStore(str(db), collection=COLLECTION, embedder=embedder, fusion=settings.fusion)
    if background is not None:
        store.attach_vectors(background)
    if marker.exists():
        log.info("eval index %s is cached (%s)", dataset.name, db)
        return store
    try:
        _ingest(store, dataset, excluded)
        store.build_phrases()
        if store.vectors is not None:
            from ingest.vectors import EmbeddingWorker, wait_until_complete

            started = time.perf_counter()
            wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=4 * 3600)
            log.info("embedded %s in %.1fs", dataset.name, time.perf_counter() - started)
    except BaseException:
        store.close()
        _remove_db(db)
        raise
    marker.write_text(
        json.dumps(
            {"dataset": dataset.name, "chunks": store.count_chunks(), "excluded": len(excluded)}
        )
    )
    return store


def _ingest(store, dataset: Dataset, excluded: set[str]) -> None:  # noqa: ANN001
    keep = [p for p in dataset.passages if p.id not in excluded and p.text.strip()]
    started = time.perf_counter()
    for part, start in enumerate(range(0, len(keep), BATCH_PASSAGES)):
        store.replace_document(
            passages_to_chunks(dataset, keep[start : start + BATCH_PASSAGES], part)
        )
    log.info(
        "indexed %d passages of %s in %.1fs", len(keep), dataset.name, time.perf_counter() - started
    )


def _remove_db(db: Path) -> None:
    """Drop a half-built index (Milvus Lite keeps a file plus a lock/sidecar)."""
    for path in db.parent.glob(f"{db.name}*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    for path in db.parent.glob(f".{db.name}*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
