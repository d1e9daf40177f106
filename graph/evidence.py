"""The evidence pool: retrieved chunks as the state keeps them, numbered evidence for the
reasoner, and what a reasoner may know of the finished hops.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph.context import GraphContext
from graph.protocols import EvidenceItem, HopView
from graph.state import GraphState, HitTrace, Hop, PoolEntry, SubQuestion, WebHit
from ingest.models import Hit

SNIPPET_CHARS = 240


def same_text_key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def pool_item(hit: Hit, hop: int, rank: int, whole: bool = False) -> PoolEntry:
    """A retrieved chunk as the evidence pool keeps it (`whole`: its document was read whole)."""
    return {
        "chunk_id": hit.chunk_id,
        "doc_id": hit.doc_id,
        "title": hit.title,
        "source": hit.source,
        "section": hit.section,
        "page": hit.page,
        "text": hit.text,
        "table_header": str(hit.metadata.get("table_header") or ""),
        "whole_document": whole,
        "score": hit.score,
        "bm25": hit.bm25_score,
        "dense": hit.dense_score,
        "hop": hop,
        "rank": rank,
        "sentences": [],
    }


def hit_record(hit: Hit, new: bool) -> HitTrace:
    """A hit as the hop trace shows it: where it is, its scores, new or duplicate."""
    return {
        "chunk_id": hit.chunk_id,
        "doc_id": hit.doc_id,
        "doc": hit.title or hit.source,
        "source": hit.source,
        "section": hit.section,
        "page": hit.page,
        "bm25": hit.bm25_score,
        "dense": hit.dense_score,
        "fused": hit.score,
        "rank": hit.rank,
        "new": new,
        "snippet": hit.text[:SNIPPET_CHARS],
    }


def as_hit(item: PoolEntry) -> Hit:
    return Hit(
        chunk_id=item["chunk_id"],
        doc_id=item.get("doc_id", ""),
        title=item.get("title", ""),
        source=item.get("source", ""),
        section=item.get("section", ""),
        page=item.get("page"),
        text=item.get("text", ""),
        score=item.get("score", 0.0),
        bm25_score=item.get("bm25"),
        dense_score=item.get("dense"),
        rank=item.get("rank", 0),
    )


def rank_pool(pool: dict[str, PoolEntry]) -> list[PoolEntry]:
    """Best first: by rank within the hop that found the chunk, then by score.

    Interleaving hops (not raw score across hops) keeps every hop's best chunks in a capped
    prompt, so a bridge hop's evidence is never crowded out by another hop. On the dev sets
    this ordering gave the best recall@5 of the orderings tried.
    """
    return sorted(pool.values(), key=lambda it: (it.get("rank", 0), -it.get("score", 0.0)))


def _whole_documents_complete(ranked: Sequence[PoolEntry], limit: int) -> list[PoolEntry]:
    """The first `limit` entries, each document read whole completed by its other chunks
    (at most `limit` more in all); a document that cannot be completed is left out whole."""
    first = list(ranked[:limit])
    whole = {it["doc_id"] for it in first if it.get("whole_document") and it.get("doc_id")}
    if not whole:
        return first
    rest = {d: [it for it in ranked[limit:] if it.get("doc_id") == d and it.get("whole_document")]
            for d in whole}  # fmt: skip
    room, complete = limit, set()
    for doc in sorted(whole, key=lambda d: len(rest[d])):
        if len(rest[doc]) <= room:
            room -= len(rest[doc])
            complete.add(doc)
    out: list[PoolEntry] = []
    for it in first:
        doc = str(it.get("doc_id") or "")
        if doc in whole and doc not in complete:
            continue
        out.append(it)
        if doc in complete and it.get("whole_document"):
            out += rest.pop(doc, [])  # its other chunks right after its first: one table
    return out


def evidence_items(
    pool: dict[str, PoolEntry], web_results: Sequence[WebHit], limit: int
) -> list[EvidenceItem]:
    """Numbered evidence for the reasoner: up to `limit` chunks, then web results (untrusted).
    A document read whole (for a count or a sum) comes whole or not at all: its other chunks
    follow the first one the limit lets in, so a table is never summed over half its rows."""
    kept = _whole_documents_complete(rank_pool(pool), max(0, limit))
    items = [
        EvidenceItem(
            n=i,
            chunk_id=it["chunk_id"],
            source=it.get("source", ""),
            title=it.get("title", ""),
            section=it.get("section", ""),
            page=it.get("page"),
            text=it.get("text", ""),
            table_header=it.get("table_header", ""),
            sentences=list(it.get("sentences", [])),
            score=it.get("score", 0.0),
            whole_document=bool(it.get("whole_document")),
        )
        for i, it in enumerate(kept, start=1)
    ]
    for result in web_results:
        items.append(
            EvidenceItem(
                n=len(items) + 1,
                url=result["url"],
                source=result.get("source", ""),
                title=result.get("title", ""),
                text=result.get("snippet", ""),
            )
        )
    return items


def hop_views(
    hops: Sequence[Hop],
    pool: dict[str, PoolEntry],
    sub_questions: Sequence[SubQuestion] = (),
) -> list[HopView]:
    """What a reasoner may know of the finished hops; `final` marks the hop that searched the
    last planned sub-question (so a chain cut short is not answered from its middle)."""
    planned = [sq["id"] for sq in sub_questions if not sq.get("follow_up")]
    last = planned[-1] if planned else None
    return [
        HopView(
            sub_question=h["sub_question"],
            query=h["query"],
            new_chunk_ids=[x["chunk_id"] for x in h["hits"] if x["new"]],
            top_hits=[as_hit(pool[x["chunk_id"]]) for x in h["hits"][:3] if x["chunk_id"] in pool],
            hit_ids=[x["chunk_id"] for x in h["hits"]],
            follow_up=bool(h.get("follow_up")),
            final=last is not None and h.get("sub_question_id") == last,
            entity=str((h.get("bridge") or {}).get("chosen_entity") or ""),
            unlinked=bool((h.get("bridge") or {}).get("unlinked")),
        )
        for h in hops
    ]


def answer_inputs(
    state: GraphState, ctx: GraphContext
) -> tuple[list[EvidenceItem], list[str], list[HopView]]:
    """The numbered evidence, the missing facts and the hops an answer is written from."""
    items = evidence_items(
        state.get("evidence", {}), state.get("web_results", []), ctx.config.max_evidence_chunks
    )
    missing = list((state.get("evaluation") or {}).get("missing", []))
    views = hop_views(
        state.get("hops", []), state.get("evidence", {}), state.get("sub_questions", [])
    )
    return items, missing, views
