"""An in-memory keyword retriever honouring groups, for graph tests (no Milvus)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ingest.models import Chunk, Hit

_STOP = {
    "the",
    "a",
    "an",
    "of",
    "is",
    "was",
    "who",
    "what",
    "which",
    "in",
    "and",
    "to",
    "did",
    "does",
    "do",
    "when",
    "where",
    "how",
    "for",
    "on",
    "by",
    "with",
    "are",
    "it",
    "its",
}


def terms(text: str) -> set[str]:
    """Lower-case words plus single CJK characters (enough for tiny test corpora)."""
    words = {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}
    return words | set(re.findall(r"[\u4e00-\u9fff]", text))


class KeywordRetriever:
    """Scores chunks by shared terms; a chunk is visible only to a reader with one of its groups."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = list(chunks)
        self.calls: list[tuple[str, list[str]]] = []

    def search(self, query: str, groups: Sequence[str], k: int = 10) -> list[Hit]:
        self.calls.append((query, list(groups)))
        allowed = set(groups) | {"all"}
        q = terms(query)
        scored = []
        for chunk in self.chunks:
            if not allowed & set(chunk.groups):
                continue
            score = len(q & terms(chunk.text + " " + chunk.title))
            if score:
                scored.append((score, chunk))
        scored.sort(key=lambda pair: -pair[0])
        return [
            to_hit(chunk, float(score), rank)
            for rank, (score, chunk) in enumerate(scored[:k], start=1)
        ]


def to_hit(chunk: Chunk, score: float, rank: int) -> Hit:
    return Hit(
        chunk_id=chunk.chunk_id,
        doc_id=chunk.doc_id,
        title=chunk.title,
        source=chunk.source,
        section=chunk.section_path,
        page=chunk.page,
        text=chunk.text,
        groups=chunk.groups,
        score=score,
        bm25_score=score,
        dense_score=None,
        rank=rank,
    )


def make_chunk(
    chunk_id: str,
    text: str,
    *,
    title: str = "",
    groups: Sequence[str] = ("all",),
    page: int | None = None,
    section: str = "",
) -> Chunk:
    return Chunk(
        chunk_id=chunk_id,
        doc_id=f"doc-{chunk_id}",
        title=title or chunk_id,
        source=f"{title or chunk_id}.md",
        section_path=section,
        page=page,
        text=text,
        groups=list(groups),
    )


def sample_chunks() -> list[Chunk]:
    """A tiny bilingual knowledge base; `acme-penalty` is readable by group `legal` only."""
    return [
        make_chunk(
            "inception",
            "Inception is a 2010 film directed by Christopher Nolan. It stars Leonardo DiCaprio.",
            title="Inception",
        ),
        make_chunk(
            "nolan",
            "Christopher Nolan was born in London, England, in 1970. "
            "He studied English literature.",
            title="Christopher Nolan",
        ),
        make_chunk(
            "london", "London is the capital of England. It lies on the Thames.", title="London"
        ),
        make_chunk(
            "acme-penalty",
            "The Acme supply contract penalty is 5% per late week, "
            "capped at 20%. Codeword ZEBRA-SECRET.",
            title="Acme contract",
            groups=["legal"],
            page=3,
            section="Penalties",
        ),
        make_chunk(
            "acme-public",
            "Acme is a supplier of industrial parts based in Ohio.",
            title="Acme overview",
        ),
        make_chunk(
            "zh-contract",
            "甲公司与乙公司签订的供货合同规定，违约金为每周百分之五。",
            title="供货合同",
        ),
    ]
