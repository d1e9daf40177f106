"""The Milvus knowledge-base store (see milvus_store.py for its shape and crash safety).

`MilvusStore` is the facade; its parts live beside it: `client` (connection), `schema`
(fields, rows, index format), `groups` (access groups and filters), `base` (shared state,
manifest, visibility), `documents` (versions, repair), `reindex`, `search` and `fusion`;
`phrase_table` keeps phrase keys beside the chunks and sees the store through `side`.
This module only re-exports; the layering is in docs/architecture.md.
"""

from __future__ import annotations

from ingest.store.client import (
    EMBEDDED,
    FAST_ENGINE,
    DiskFullError,
    StoreError,
    embedded_engine_version,
    is_remote_uri,
    redact_uri_secrets,
    slow_engine_warning,
)
from ingest.store.groups import (
    MAX_GROUPS,
    group_filter,
    quote_value,
    validate_chunk_groups,
    validate_groups,
)
from ingest.store.milvus_store import MilvusStore
from ingest.store.reindex import Reindexed
from ingest.store.schema import (
    DISK_BYTES_PER_TEXT_BYTE,
    INDEX_FORMAT,
    MAX_TEXT_BYTES,
    TEXT_ANALYZER,
)

__all__ = [
    "DISK_BYTES_PER_TEXT_BYTE",
    "EMBEDDED",
    "FAST_ENGINE",
    "INDEX_FORMAT",
    "MAX_GROUPS",
    "MAX_TEXT_BYTES",
    "TEXT_ANALYZER",
    "DiskFullError",
    "MilvusStore",
    "Reindexed",
    "StoreError",
    "embedded_engine_version",
    "group_filter",
    "is_remote_uri",
    "quote_value",
    "redact_uri_secrets",
    "slow_engine_warning",
    "validate_chunk_groups",
    "validate_groups",
]
