"""Reciprocal-rank fusion of the BM25, exact-phrase and dense channels, with places kept
for the other language's best dense candidates.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ingest.config import FusionConfig
from ingest.models import Hit
from ingest.normalize import normalize_text, strip_controls
from ingest.store.schema import chunk_language

log = logging.getLogger(__name__)


RRF_K = 60


def other_language(
    dense: list[tuple[float, dict[str, Any]]], asked: str, slots: int = 1
) -> list[tuple[float, dict[str, Any]]]:
    """The best `slots` dense candidates in another language than the question's."""
    out: list[tuple[float, dict[str, Any]]] = []
    for score, entity in dense:
        if len(out) >= slots:
            break
        if chunk_language(str(entity.get("text", ""))[:2000]) != asked:
            out.append((score, entity))
    return out


def with_other_language(
    hits: list[Hit], other: list[tuple[float, dict[str, Any]]], k: int, make: Any
) -> list[Hit]:
    """The fused top k with at least len(other) chunks of the other language (at most half of
    k): the best dense ones it lacks take the places of its last hits in the question's own
    language, and the list is ranked again by position. The built-in embedder ranks a chunk in
    the question's own language above a better one in the other (a Chinese question about an
    English manual: the right chunk ranked 42nd by vectors, nowhere by keywords), both channels
    agree on that bias, and the one other-language chunk that made it is often the manual's
    wrong page."""
    if not other or len(hits) < k or k < 2:
        return hits
    language = chunk_language(str(other[0][1].get("text", ""))[:2000])
    theirs = [chunk_language(h.text[:2000]) == language for h in hits]
    held = {h.chunk_id for h in hits}
    room = min(len(other), k // 2) - sum(theirs)
    missing = [(score, e) for score, e in other if e["chunk_id"] not in held][: max(room, 0)]
    if not missing:
        return hits
    own = [i for i, t in enumerate(theirs) if not t]
    gone = set(own[len(own) - len(missing) :])  # the question's language's last hits
    last = hits[-1]
    added = [make(e, last.rank, fused=last.score, dense=score) for score, e in missing]
    kept = [h for i, h in enumerate(hits) if i not in gone] + added
    return [h.model_copy(update={"rank": i}) for i, h in enumerate(kept, 1)]


def fuse(
    sparse: list[tuple[float, dict[str, Any]]],
    dense: list[tuple[float, dict[str, Any]]],
    k: int,
    make: Any,
    fusion: FusionConfig | None = None,
    lexical_weight: Callable[[dict[str, Any]], float] | None = None,
    has_vector: Callable[[str], bool] | None = None,
    exact: list[tuple[float, dict[str, Any]]] | None = None,
) -> list[Hit]:
    """Weighted reciprocal-rank fusion of the channels, keeping BM25's and dense's own scores.
    `exact` (None: the query names no code) is the channel of chunks holding a code the query
    names; when it ran, every chunk could have been found by it.

    A chunk gains weight / (rrf_k + rank) from each channel that found it, divided by the
    total weight of the channels that could have found it: a chunk with no vector yet
    (`has_vector` False; None means every chunk has one) competes on BM25 alone, on the
    same scale, instead of losing to every dense candidate while the background worker is
    still on its way."""
    fusion = fusion or FusionConfig()
    fused: dict[str, float] = {}
    entities: dict[str, dict[str, Any]] = {}
    scores: dict[str, dict[str, float]] = {}
    for channel, results in (("bm25", sparse), ("dense", dense), ("exact", exact or [])):
        for rank, (score, entity) in enumerate(results, 1):
            cid = entity["chunk_id"]
            if channel == "exact":
                weight = fusion.exact_weight
            elif channel == "dense":
                weight = fusion.dense_weight
            elif lexical_weight is not None and dense:  # languages matter only beside vectors
                weight = lexical_weight(entity)
            else:
                weight = fusion.lexical_weight
            fused[cid] = fused.get(cid, 0.0) + weight / (fusion.rrf_k + rank)
            entities.setdefault(cid, entity)
            scores.setdefault(cid, {})[channel] = score
    for cid in fused:
        possible = fusion.lexical_weight + (
            fusion.dense_weight if has_vector is None or has_vector(cid) else 0.0
        )
        possible += fusion.exact_weight if exact is not None else 0.0
        fused[cid] /= possible or 1.0
    order = sorted(fused, key=lambda c: (-fused[c], c))[:k]
    return [
        make(
            entities[cid],
            rank,
            fused=fused[cid],
            bm25=scores[cid].get("bm25"),
            dense=scores[cid].get("dense"),
        )  # fmt: skip
        for rank, cid in enumerate(order, 1)
    ]


def query_forms(query: str) -> str:
    """The query as documents are indexed (ingest/normalize), plus its words that
    normalising changed as they were typed, so chunks stored by a release without
    normalisation (full-width digits, ligatures) still match until they are re-ingested."""
    normal = normalize_text(query)
    typed = [word for word in strip_controls(query).split() if normalize_text(word) != word]
    return f"{normal} {' '.join(typed)}" if typed else normal
