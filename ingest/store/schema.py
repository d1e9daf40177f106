"""The chunk and manifest collections' fields, analyzer and index format, rows <-> Chunk, and
the size estimates the disk check uses.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ingest.lang import language_of
from ingest.models import Chunk, DocumentInfo
from ingest.phrases import MAX_KEY_CHARS, fold
from ingest.store.groups import MAX_GROUPS, clip

log = logging.getLogger(__name__)


INSERT_BATCH = 500


# Inserts are pipelined: the engine (a process of its own) takes one piece of rows while
# Python builds the next piece's folded text and phrase keys. The first piece of a write is
# small (nothing runs beside its building); later ones match the engine's ~3x slower pace per
# row. Measured on 2 cores, 500-chunk documents: 10k 1,692 -> 1,915 chunks/s, 50k ~1,500 ->
# ~1,740 (pieces of 100: slower than none, each insert call has a fixed cost; 250/250: 2,015
# against 2,100 for 125/375 in the same minutes).
INSERT_FIRST = 125


INSERT_PIECE = 375


MAX_TEXT_BYTES = 65_535


QUERY_LIMIT = 16_384  # Milvus caps offset + limit of one query


# Disk space an embedded write must leave free, and what a write needs per byte of chunk text:
# measured 1.7 bytes of milvus.db per byte of text (text, BM25 index, fields), plus a margin.
MIN_FREE_BYTES = 4 * 1024 * 1024


DISK_BYTES_PER_TEXT_BYTE = 2.5


# jieba for Chinese and English alike; lower-cased so "Battle" matches "battle"; English stop
# words and the space/punctuation tokens jieba emits are dropped so they do not score.
PUNCTUATION_TOKENS = list(" ?？!！,，.。:：;；、'\"“”‘’()（）[]【】《》-–—/")


TEXT_ANALYZER = {
    "tokenizer": "jieba",
    "filter": ["lowercase", {"type": "stop", "stop_words": ["_english_", *PUNCTUATION_TOKENS]}],
}


COLLECTION_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")


CHUNK_FIELDS = [
    "chunk_id", "doc_id", "doc_version", "title", "source", "section_path", "page",
    "start_char", "end_char", "text", "groups_json", "checksum", "created_at",
    "parser_version", "chunker_version", "embedding_version",
]  # fmt: skip


# Index format: 2 adds metadata_json (LangChain documents' own metadata); 3 runs BM25 over
# search_text, the chunk text folded (ingest/phrases.fold: "Tekezé" is indexed as "Tekeze"),
# and has a `phrases` field for each chunk's phrase keys with the extractor's version (PHRASER)
# in the collection description. The keys now live beside the chunks, built after the insert
# (ingest/store/phrase_table.py); the field is kept, empty, so format 3 collections written
# before and after stay one format. An older collection still opens, answers and takes writes in its
# own format until `reindex_format` rebuilds it; format 1 refuses writes that carry metadata.
INDEX_FORMAT = 3


MAX_METADATA_BYTES = 16_384


PHRASE_BYTES = 4 * MAX_KEY_CHARS + 32  # an element's VARCHAR limit: 4 UTF-8 bytes a character


FORMAT3_ROW_BYTES = 400  # the folded text and phrase keys, per chunk (see bytes_need)


MANIFEST_FIELDS = [
    "doc_id", "active_version", "pending_version", "in_transition", "title", "source",
    "groups_json", "checksum", "created_at", "chunks", "updated_at",
]  # fmt: skip


OPTIONAL_MANIFEST_FIELDS = ["hidden_removed", "parser", "furniture_json"]


MAX_FURNITURE_BYTES = 8192  # absent from older manifests


def metadata_json(metadata: dict[str, Any]) -> str:
    """Caller metadata as stored: JSON, "" when empty, refused when over the field's size."""
    if not metadata:
        return ""
    try:
        text = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"document metadata must be JSON-serialisable: {exc}") from None
    if len(text.encode("utf-8")) > MAX_METADATA_BYTES:
        raise ValueError(f"document metadata is larger than {MAX_METADATA_BYTES} bytes as JSON")
    return text


def furniture_json(lines: list[str]) -> str:
    """As many whole header/footer lines as fit the manifest field, as JSON."""
    kept: list[str] = []
    for line in lines:
        candidate = json.dumps([*kept, line[:500]], ensure_ascii=False)
        if len(candidate.encode("utf-8")) > MAX_FURNITURE_BYTES:
            break
        kept.append(line[:500])
    return json.dumps(kept, ensure_ascii=False)


def row_to_document(row: dict[str, Any]) -> DocumentInfo:
    return DocumentInfo(
        doc_id=row["doc_id"], title=row.get("title", ""), source=row.get("source", ""),
        version=int(row["active_version"]), chunks=int(row.get("chunks", 0)),
        groups=json.loads(row.get("groups_json") or "[]"), checksum=row.get("checksum", ""),
        created_at=float(row.get("created_at", 0.0)),
        hidden_removed=int(row.get("hidden_removed") or 0), parser=row.get("parser") or "",
        furniture=json.loads(row.get("furniture_json") or "[]"),
    )  # fmt: skip


def row_to_chunk(row: dict[str, Any]) -> Chunk:
    page = int(row.get("page", -1))
    return Chunk(
        chunk_id=row["chunk_id"], doc_id=row["doc_id"], doc_version=int(row["doc_version"]),
        title=row.get("title", ""), source=row.get("source", ""),
        section_path=row.get("section_path", ""), page=page if page >= 0 else None,
        start_char=int(row.get("start_char", 0)), end_char=int(row.get("end_char", 0)),
        text=row["text"], groups=json.loads(row.get("groups_json") or "[]"),
        checksum=row.get("checksum", ""), created_at=float(row.get("created_at", 0.0)),
        parser_version=row.get("parser_version", ""),
        chunker_version=row.get("chunker_version", ""),
        embedding_version=row.get("embedding_version", ""),
        metadata=json.loads(row.get("metadata_json") or "{}"),
    )  # fmt: skip


def same_transition(seen: dict[str, Any], current: dict[str, Any] | None) -> bool:
    """The manifest row is still the interrupted write that was seen (not finished since)."""
    return (
        current is not None
        and bool(current.get("in_transition"))
        and current.get("updated_at") == seen.get("updated_at")
    )


def insert_pieces(total: int, first: bool) -> list[tuple[int, int]]:
    """Where a batch is cut for the pipeline: a small first piece (built while nothing else
    runs), then pieces the engine takes while the next is built."""
    cuts, start = [], 0
    while start < total:
        end = min(total, start + (INSERT_FIRST if first and start == 0 else INSERT_PIECE))
        cuts.append((start, end))
        start = end
    return cuts


def chunk_batches(chunks: Iterator[Chunk], size: int) -> Iterator[list[Chunk]]:
    while batch := list(itertools.islice(chunks, size)):
        yield batch


def disk_need(chunks: Sequence[Chunk], dim: int, index_format: int) -> int:
    """About how many bytes of milvus.db these chunks will take, with `dim`-d inline vectors
    (0: none); see DISK_BYTES_PER_TEXT_BYTE."""
    text = sum(len(c.text.encode("utf-8")) + len(c.section_path) for c in chunks)
    return bytes_need(text, len(chunks), dim, index_format)


def bytes_need(text_bytes: int, rows: int, dim: int, index_format: int) -> int:
    """Index format 3 adds the folded text and the phrase keys: measured 0.75-1.2 KB more a
    chunk (English and Chinese passages, a repetitive manual), FORMAT3_ROW_BYTES x the factor."""
    per_row = 512 + (FORMAT3_ROW_BYTES if index_format >= 3 else 0)
    return int((text_bytes + 8 * dim * rows + per_row * rows) * DISK_BYTES_PER_TEXT_BYTE)


def lexical_fields(text: str) -> dict[str, Any]:
    """Index format 3's fields derived from a chunk: the folded text BM25 indexes (the title
    is not added: a document's heading is already the first line of its first chunk). Its
    phrase keys are built after the insert, beside the chunks (ingest/store/phrase_table.py);
    the chunk collection's own `phrases` field stays empty."""
    return {"search_text": clip(fold(text), MAX_TEXT_BYTES), "phrases": []}


def upgraded_row(row: dict[str, Any]) -> dict[str, Any]:
    """A chunk row of an older index format with the current format's fields filled in."""
    return {"metadata_json": "", **row, **lexical_fields(row["text"])}


@functools.lru_cache(maxsize=2048)
def chunk_language(text: str) -> str:
    """A hit's language for the BM25 vote, remembered: the same chunks come back query after
    query, and reading the language of every hit was a tenth of a hybrid search."""
    return language_of(text)


def side_schema(pm: Any, description: str = "") -> Any:
    """The schema of a side collection (vectors, phrase keys): one row per chunk, with what ties
    it to its chunk's version and filters it like the chunk (groups). The caller adds its own
    data field."""
    dt = pm.DataType
    schema = pm.MilvusClient.create_schema(
        auto_id=False, enable_dynamic_field=False, description=description
    )
    schema.add_field("chunk_id", dt.VARCHAR, is_primary=True, max_length=512)
    schema.add_field("doc_id", dt.VARCHAR, max_length=512)
    schema.add_field("doc_version", dt.INT64)
    # the version's file checksum: a row left from a deleted document whose name comes back
    # (chunk ids restart at v1) is recognised as stale and replaced
    schema.add_field("checksum", dt.VARCHAR, max_length=128)
    schema.add_field("start_char", dt.INT64)  # pages the ids of a big document
    schema.add_field(
        "groups", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_GROUPS, max_length=256
    )
    return schema
