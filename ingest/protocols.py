"""The knowledge base as the graph, the ingestion pipeline and the admin page see it.

MilvusStore implements it (embedded or server), and so does the in-memory store of the tests;
one contract suite (tests/ingest/test_store_contract.py) runs against every implementation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from ingest.models import Chunk, DocumentInfo, Hit


@runtime_checkable
class Searcher(Protocol):
    """Searches the knowledge base; `groups` are enforced inside the search itself."""

    def search(self, query: str, groups: Sequence[str], k: int = 10) -> list[Hit]: ...


@runtime_checkable
class PhraseCounter(Protocol):
    """An optional capability of a knowledge base (MilvusStore, the in-memory store): how
    often the documents use a phrase. Callers check for it (`getattr(store, "phrase_counts",
    None)`); a Searcher without it still works."""

    def phrase_counts(self, keys: Sequence[str], groups: Sequence[str]) -> dict[str, int]:
        """For each key (`ingest.phrases.phrase_key` form), the number of chunks the groups may
        read whose phrase table holds it; keys with none are left out."""
        ...


@runtime_checkable
class KnowledgeBase(Searcher, Protocol):
    """Versioned documents of chunks, with the reader's groups checked inside every search."""

    def get_document(self, doc_id: str) -> DocumentInfo | None: ...

    def get_chunks(self, doc_id: str) -> list[Chunk]: ...

    def replace_document(self, chunks: Iterable[Chunk]) -> None:
        """Write a complete new version of one document, then drop the old one (atomic).
        `chunks` may be a generator; it is consumed once."""
        ...

    def delete_document(self, doc_id: str) -> int: ...

    def document_lock(self, doc_id: str, what: str = "") -> AbstractContextManager[None]:
        """Held while a document is read and rewritten: writes to one document are serialised
        across threads (and processes, for MilvusStore); re-entrant."""
        ...

    def list_documents(self) -> list[DocumentInfo]: ...

    def count_chunks(self) -> int: ...

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...
