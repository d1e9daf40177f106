"""The knowledge base through LangChain's `VectorStore` interface, for one reader's groups.

Writes go through the knowledge base: each LangChain `Document` becomes one knowledge-base
document (one chunk) with the view's groups, versioned, listed and deletable like an upload;
adding the same id again replaces it (unchanged content is a no-op). Its metadata is kept and
returned exactly as given. Reads run the store's own search (BM25, or BM25 + dense fused), so
the reader's groups are enforced inside every request. Uploaded files' chunks come back with
their record (doc_id, source, section, page...) as metadata and their chunk id as the id.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from ingest.models import DEFAULT_GROUP, Chunk, Hit
from ingest.store import MAX_TEXT_BYTES, TEXT_ANALYZER, validate_chunk_groups, validate_groups

if TYPE_CHECKING:
    from ingest.store import MilvusStore

LANGCHAIN_PARSER = "langchain-document"  # the lineage of documents written through the view
LANGCHAIN_CHUNKER = "langchain-document"


class KnowledgeBaseVectorStore(VectorStore):
    """A LangChain VectorStore over a Hopwise knowledge base, scoped to a reader's groups."""

    def __init__(
        self,
        store: MilvusStore,
        *,
        groups: Sequence[str] = (DEFAULT_GROUP,),
        write_groups: Sequence[str] | None = None,
    ) -> None:
        self.store = store
        self.groups = validate_groups(groups)
        # documents written through the view are readable by these groups ("all" by default)
        self.write_groups = validate_chunk_groups(write_groups)

    @property
    def embeddings(self) -> Embeddings | None:
        embedder = self.store.embedder
        return None if embedder is None else AsLangChainEmbeddings(embedder)

    # ---- writes ---------------------------------------------------------------------------

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        texts = list(texts)
        metadatas = metadatas or [{} for _ in texts]
        ids = ids or [uuid.uuid4().hex for _ in texts]
        if not len(texts) == len(metadatas) == len(ids):
            raise ValueError("texts, metadatas and ids must have the same length")
        docs = [
            Document(page_content=t, metadata=m, id=i)
            for t, m, i in zip(texts, metadatas, ids, strict=True)
        ]
        return self.add_documents(docs)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Each Document becomes (or replaces) one knowledge-base document; returns the ids."""
        given = kwargs.get("ids")
        if given is not None and len(given) != len(documents):
            raise ValueError("ids must have one id per document")
        ids = [
            str(given[i] if given is not None else doc.id or uuid.uuid4().hex)
            for i, doc in enumerate(documents)
        ]
        for doc_id, doc in zip(ids, documents, strict=True):
            self._write(doc_id, doc)
        return ids

    def _write(self, doc_id: str, doc: Document) -> None:
        text = doc.page_content
        if not text.strip():
            raise ValueError(f"document {doc_id!r} has no text")
        if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
            raise ValueError(
                f"document {doc_id!r} is longer than {MAX_TEXT_BYTES} bytes; split it first "
                "(e.g. with a langchain-text-splitters splitter)"
            )
        metadata = dict(doc.metadata)
        checksum = hashlib.sha256(
            repr((text, sorted(metadata.items(), key=str), self.write_groups)).encode()
        ).hexdigest()
        old = self.store.get_document(doc_id)
        if old is not None and old.checksum == checksum:
            return  # the same content, metadata and readers: nothing to do
        version = old.version + 1 if old else 1
        source = str(metadata.get("source") or doc_id)
        self.store.replace_document(
            [
                Chunk(
                    chunk_id=f"{doc_id}-v{version}-00000",
                    doc_id=doc_id,
                    doc_version=version,
                    title=str(metadata.get("title") or source),
                    source=source,
                    text=text,
                    start_char=0,
                    end_char=len(text),
                    groups=self.write_groups,
                    checksum=checksum,
                    created_at=time.time(),
                    parser_version=LANGCHAIN_PARSER,
                    chunker_version=LANGCHAIN_CHUNKER,
                    metadata=metadata,
                )  # fmt: skip
            ]
        )

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete knowledge-base documents by id (missing ids are ignored); ids are required."""
        if ids is None:
            raise ValueError("delete needs the ids of the documents to delete")
        for doc_id in ids:
            self.store.delete_document(doc_id)
        return True

    # ---- reads ----------------------------------------------------------------------------

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The store's own ranking and fused score (BM25, or RRF of BM25 and dense)."""
        return [(_document(hit), hit.score) for hit in self.store.search(query, self.groups, k)]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """MMR over the store's top `fetch_k` hits, with the knowledge base's embedder."""
        embeddings = self.embeddings
        if embeddings is None:
            raise ValueError(
                "max marginal relevance needs dense vectors; this knowledge base is BM25-only"
            )
        hits = self.store.search(query, self.groups, max(fetch_k, k))
        if not hits:
            return []
        query_vector = np.array(embeddings.embed_query(query))
        vectors = embeddings.embed_documents([h.text for h in hits])
        chosen = maximal_marginal_relevance(query_vector, vectors, lambda_mult=lambda_mult, k=k)
        return [_document(hits[i]) for i in chosen]

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Documents written through the view by their id, uploaded chunks by chunk id; ids the
        reader may not see are left out like missing ones."""
        found: list[Document] = []
        for wanted in ids:
            for chunk in self._chunks_for(wanted):
                if set(chunk.groups) & set(self.groups):
                    found.append(_document(_as_hit(chunk)))
        return found

    def _chunks_for(self, wanted: str) -> list[Chunk]:
        chunks = self.store.get_chunks(wanted)
        if chunks:  # a document id: a LangChain document is its single chunk
            return [c for c in chunks if c.parser_version == LANGCHAIN_PARSER]
        doc_id, _, _ = wanted.rpartition("-v")  # a chunk id: '<doc_id>-v<version>-<n>'
        return [c for c in self.store.get_chunks(doc_id) if c.chunk_id == wanted] if doc_id else []

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> KnowledgeBaseVectorStore:
        raise NotImplementedError(
            "open the knowledge base with MilvusStore(...), pass it to as_langchain_vectorstore() "
            "and call add_texts; its embedder is the knowledge base's own"
        )


def _as_hit(chunk: Chunk) -> Hit:
    return Hit(
        chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, doc_version=chunk.doc_version,
        title=chunk.title, source=chunk.source, section=chunk.section_path, page=chunk.page,
        start_char=chunk.start_char, end_char=chunk.end_char, text=chunk.text,
        groups=chunk.groups, score=0.0, metadata=chunk.metadata, parser=chunk.parser_version,
    )  # fmt: skip


def _document(hit: Hit) -> Document:
    """A LangChain Document: its own id and metadata if written through the view, otherwise the
    chunk id and the chunk's record."""
    if hit.parser == LANGCHAIN_PARSER:
        return Document(id=hit.doc_id, page_content=hit.text, metadata=dict(hit.metadata))
    record = {
        "chunk_id": hit.chunk_id, "doc_id": hit.doc_id, "doc_version": hit.doc_version,
        "title": hit.title, "source": hit.source, "section": hit.section, "page": hit.page,
        "groups": list(hit.groups),
    }  # fmt: skip
    return Document(id=hit.chunk_id, page_content=hit.text, metadata=record)


class AsLangChainEmbeddings(Embeddings):
    """The knowledge base's Embedder seen through LangChain's Embeddings interface."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = self._embedder.embed_documents(texts)
        return vectors

    def embed_query(self, text: str) -> list[float]:
        vector: list[float] = self._embedder.embed_query(text)
        return vector


# ---- the views of a store -------------------------------------------------------------------


def as_langchain_vectorstore(
    store: MilvusStore,
    groups: Sequence[str] = (DEFAULT_GROUP,),
    *,
    write_groups: Sequence[str] | None = None,
) -> KnowledgeBaseVectorStore:
    """This knowledge base as a LangChain VectorStore for a reader's groups; documents
    added through it become knowledge-base documents readable by `write_groups`."""
    return KnowledgeBaseVectorStore(store, groups=groups, write_groups=write_groups)


def as_langchain_milvus(store: MilvusStore) -> Any:
    """The raw langchain_milvus.Milvus over this same collection (read-only interop, e.g.
    for langchain-milvus retrievers). It does not add the ACL or the version filter by
    itself: pass `expr=store.search_filter(groups)` to every search; never write with it
    (writes bypass the document manifest; use as_langchain_vectorstore). From index format
    3 on, BM25 matches folded text: pass `ingest.phrases.fold(query)` to ignore accents."""
    from langchain_milvus import BM25BuiltInFunction, Milvus

    bm25 = BM25BuiltInFunction(
        input_field_names="text" if store.index_format < 3 else "search_text",
        output_field_names="sparse",
        analyzer_params=TEXT_ANALYZER,
        enable_match=False,
    )
    common: dict[str, Any] = {
        "collection_name": store.collection,
        "connection_args": store.connection_args(),
        "builtin_function": bm25,
        "text_field": "text",
        "primary_field": "chunk_id",
        "auto_id": False,
        "consistency_level": "Strong",
    }
    if store.embedder is None:
        return Milvus(embedding_function=None, vector_field="sparse", **common)
    return Milvus(
        embedding_function=AsLangChainEmbeddings(store.embedder),
        vector_field=["dense", "sparse"],
        **common,
    )
