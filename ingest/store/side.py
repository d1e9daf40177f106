"""What a side collection kept beside the chunks (the phrase keys of phrase_table.py, the
vectors of ingest/vectors.py) uses of its store: MilvusStore is one. The store builds its side
collections, so they see it through this Protocol, never by importing it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from ingest.busy import BusySignal
from ingest.models import DocumentInfo


class ChunkStore(Protocol):
    """The store a side collection keys: its chunk collection, connection and documents."""

    collection: str  # the chunk collection
    client: Any  # a GuardedClient
    pm: Any  # the pymilvus module
    busy: BusySignal  # held while a search runs; background work yields to it

    def count_rows(self, expr: str, collection: str | None = None) -> int: ...

    def row_ids(self, collection: str, expr: str) -> list[str]: ...

    def visibility_filter(self) -> str: ...

    def check_disk(self, needed: int, consequence: str = "") -> None: ...

    def document_lock(self, doc_id: str, what: str = "") -> AbstractContextManager[None]: ...

    def get_document(self, doc_id: str) -> DocumentInfo | None: ...

    def list_documents(self) -> list[DocumentInfo]: ...
