"""One hop: bridge a dependent sub-question, search (and the documents' language, a model's
alternative reading, a beam of entities), read a table whole for a count, keep sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from graph import text as tx
from graph.context import GraphContext
from graph.evidence import evidence_items, hit_record, hop_views, pool_item, same_text_key
from graph.state import HitTrace, Hop, JsonObject, KeptSentence, PoolEntry, SubQuestion
from graph.step import Step
from ingest.models import Hit


def run_hop(
    ctx: GraphContext,
    step: Step,
    sq: SubQuestion,
    hops: list[Hop],
    pool: dict[str, PoolEntry],
    hop_no: int,
    round_no: int,
    asked: str = "",
) -> tuple[Hop, list[PoolEntry]]:
    """One sub-question: bridge if dependent, search unless the query repeats, extract.
    `asked` is the whole question: a step of a sum or count ('那几台设备' of '…那几台设备，
    维保费加起来是多少') reads its tables whole too."""
    query, bridged, explained, alternative = sq["question"], False, {}, ""
    earlier = [h for h in hops if h["sub_question_id"] == sq.get("depends_on")] or hops[-1:]
    if sq.get("depends_on") and earlier:
        ids = [x["chunk_id"] for h in earlier for x in h["hits"]]
        sub_pool = {i: pool[i] for i in ids if i in pool}
        found = evidence_items(sub_pool, [], ctx.config.max_evidence_chunks)
        query, usage = ctx.reasoner.bridge(sq["question"], hop_views(earlier, pool), found)
        step.add(usage)
        explained = usage.details
        query, bridged = (query.strip() or sq["question"]), True
        if usage.mode == "llm" and ctx.code is not None:  # the code's reading, searched too
            alternative, code_usage = ctx.code.bridge(
                sq["question"], hop_views(earlier, pool), found
            )
            step.add(code_usage, by_code=True)
    query = " ".join(tx.PLACEHOLDER_RE.sub(" ", query).split()) or sq["question"]  # unfilled "#1"
    repeated = same_text_key(query) in {same_text_key(h["query"]) for h in hops}
    hits = [] if repeated else ctx.retriever.search(query, list(ctx.groups), k=ctx.config.top_k)
    found_by: dict[str, str] = {}
    alternative = " ".join(tx.PLACEHOLDER_RE.sub(" ", alternative).split())
    if alternative and same_text_key(alternative) not in {
        same_text_key(query),
        *(same_text_key(h["query"]) for h in hops),
    }:
        # A model's bridge may pick another entity of the earlier passages than the code's
        # reading does: both are searched, so the evidence holds the right one either way
        # (the claim check then keeps only what the cited passages say).
        extra = ctx.retriever.search(alternative, list(ctx.groups), k=ctx.config.top_k)
        hits = interleave([hits, extra])[: ctx.config.top_k * 2]
        for hit in extra:
            found_by.setdefault(hit.chunk_id, alternative)
        explained = {**explained, "also_searched": alternative}
    if explained.get("beam") and not repeated:
        query, hits, explained, found_by = search_beam(ctx, query, hits, explained)
    translated = "" if repeated else documents_query(sq, query, explained)
    if translated:  # the same sub-question in the documents' language, searched too
        extra = ctx.retriever.search(translated, list(ctx.groups), k=ctx.config.top_k)
        hits = interleave([hits, extra])[: ctx.config.top_k * 2]
        for hit in extra:
            found_by.setdefault(hit.chunk_id, translated)
    whole, whole_docs = ([], set()) if repeated else read_whole(ctx, sq["question"], hits, asked)
    seen = set(pool)
    records: list[HitTrace] = []
    items: list[PoolEntry] = []
    new_hits: list[Hit] = []
    order = evidence_order(query, hits, found_by)
    for chunk, source in whole:  # read whole beside the hit that led to it
        order[chunk.chunk_id] = order[source.chunk_id]
    hits = [*hits, *(chunk for chunk, _ in whole)]
    for rank, hit in enumerate(hits, start=1):
        new = hit.chunk_id not in seen
        seen.add(hit.chunk_id)
        records.append(hit_record(hit, new))
        item = pool_item(hit, hop_no, order[hit.chunk_id], hit.doc_id in whole_docs)
        old = pool.get(hit.chunk_id)
        if new:
            new_hits.append(hit)
            items.append(item)
        elif old and (hit.score > old.get("score", 0.0) or rank < old.get("rank", rank)):
            # the reducer keeps the higher score and the better rank; sentences stay
            items.append({**item, "sentences": old.get("sentences", [])})
    kept: list[KeptSentence] = []
    if new_hits:
        extractor, by_code = ctx.reasoner_for(code_can_settle=True)
        sentences, usage = extractor.extract(sq["question"], new_hits)
        step.add(usage, by_code=by_code)
        by_id = {it["chunk_id"]: it for it in items}
        for s in sentences:
            if s.chunk_id in by_id and s.text not in by_id[s.chunk_id]["sentences"]:
                by_id[s.chunk_id]["sentences"].append(s.text)
                kept.append({"chunk_id": s.chunk_id, "text": s.text})
    hop: Hop = {
        "hop": hop_no,
        "round": round_no,
        "sub_question_id": sq["id"],
        "sub_question": sq["question"],
        "query": query,
        "bridged": bridged,
        "bridge": explained,
        "search_query": translated,
        "follow_up": bool(sq.get("follow_up")),
        "repeated": repeated,
        "hits": records,
        "new_count": len(new_hits),
        "evidence": kept,
    }
    return hop, items


def read_whole(
    ctx: GraphContext, question: str, hits: Sequence[Hit], asked: str = ""
) -> tuple[list[tuple[Hit, Hit]], set[str]]:
    """For a count or a sum ('一共有几张', 'how many … in total'): the documents of the best
    hits that hold a table or a log, read whole, so no row of it is missing; (chunk, the hit
    that led to it) for every chunk of such a document the search did not return, and the ids
    of the documents read whole. The groups are enforced by the store; nothing for a
    retriever that cannot read a document (a capability, like phrase_counts)."""
    from graph.offline.records import tabular
    from graph.offline.totals import aggregates

    fetch = getattr(ctx.retriever, "document_hits", None)
    if fetch is None or not (aggregates(question) or (asked and aggregates(asked))):
        return [], set()
    known = {h.chunk_id for h in hits}
    out: list[tuple[Hit, Hit]] = []
    read: set[str] = set()
    whole: set[str] = set()
    # the hits that hold a table or log first; then, while there is room, a hit whose
    # document holds one further on (the notes above a fee table are found, the table is
    # not); each document read once
    for hit in sorted(hits, key=lambda h: not tabular(h.text)):  # stable: rank order kept
        if hit.doc_id in read:
            continue  # two chunks of one table are one document, not two of the few read
        if len(whole) >= ctx.config.whole_documents or len(read) >= 2 * ctx.config.whole_documents:
            break
        read.add(hit.doc_id)
        try:
            chunks = fetch(hit.doc_id, list(ctx.groups), ctx.config.whole_document_chunks)
        except Exception:  # noqa: BLE001 - the hits found stand; the count says what it saw
            continue
        if not any(tabular(c.text) for c in chunks):
            continue  # no table or log in it: nothing to count
        whole.add(hit.doc_id)
        out += [(chunk, hit) for chunk in chunks if chunk.chunk_id not in known]
        known |= {c.chunk_id for c in chunks}
    return out, whole


def documents_query(sq: SubQuestion, query: str, explained: JsonObject) -> str:
    """The sub-question's search_query (written in the documents' language by the model),
    its #k filled with the entity the bridge chose; '' when there is none or it repeats."""
    translated = str(sq.get("search_query") or "").strip()
    if tx.PLACEHOLDER_RE.search(translated):
        entity = str(explained.get("chosen_entity") or "")
        translated = tx.PLACEHOLDER_RE.sub(entity, translated) if entity else ""
    translated = " ".join(translated.split())
    return translated if translated and same_text_key(translated) != same_text_key(query) else ""


def interleave(lists: Sequence[Sequence[Hit]]) -> list[Hit]:
    """Each list's first hit, then each one's second…, duplicates dropped."""
    out: list[Hit] = []
    seen: set[str] = set()
    for rank in range(max((len(x) for x in lists), default=0)):
        for hits in lists:
            if rank < len(hits) and hits[rank].chunk_id not in seen:
                seen.add(hits[rank].chunk_id)
                out.append(hits[rank])
    return out


def evidence_order(
    query: str, hits: Sequence[Hit], found_by: dict[str, str] | None = None
) -> dict[str, int]:
    """Each hit's place in the hop's evidence: search rank, moved up by how much of the
    query it holds (a rank-8 hit naming every query term beats a rank-3 one naming half), so
    the final list keeps each hop's best evidence before anyone's second best."""
    from graph.offline.evidence import relevance
    from graph.offline.params import PARAMS

    scored = [
        (
            relevance((found_by or {}).get(h.chunk_id, query), h.title, h.text)
            - PARAMS.rank_penalty * rank,
            -rank,
            h.chunk_id,
        )
        for rank, h in enumerate(hits, start=1)
    ]
    ordered = sorted(scored, reverse=True)
    return {cid: place for place, (_, _, cid) in enumerate(ordered, start=1)}


def search_beam(
    ctx: GraphContext, query: str, hits: list[Hit], explained: JsonObject
) -> tuple[str, list[Hit], JsonObject, dict[str, str]]:
    """Search each bridge candidate's query and keep the one its hits confirm best (its own
    passage, holding the relation's words), weighed by the candidate's score; the runners-up's
    best hits follow the winner's. (query, hits, explanation for the trace)."""
    from graph.offline.bridge import confirm
    from graph.offline.params import PARAMS

    beam = explained["beam"]
    top = max(float(b["score"]) for b in beam) or 1.0
    results: list[tuple[float, JsonObject, list[Hit]]] = []
    for i, option in enumerate(beam):
        found = (
            hits
            if i == 0
            else ctx.retriever.search(option["query"], list(ctx.groups), k=ctx.config.top_k)
        )
        prior = (float(option["score"]) / top) ** PARAMS.bridge_prior_weight
        score = confirm(
            option["entity"], option["query"], found, option.get("previous", ""),
            kind=str(option.get("kind", "")),
        )  # fmt: skip
        results.append((score * prior, option, found))
    ranked = sorted(results, key=lambda r: -r[0])
    _, chosen, chosen_hits = ranked[0]
    merged = interleave([found for _, _, found in ranked])  # each one's best before a second
    found_by: dict[str, str] = {}
    for _, option, found in ranked:
        for hit in found:
            found_by.setdefault(hit.chunk_id, option["query"])
    merged = merged[: ctx.config.top_k + PARAMS.bridge_extra_hits * (len(ranked) - 1)]
    shown = [{**o, "confirmed": round(c, 3)} for c, o, _ in ranked]
    explained = {**explained, "beam": shown, "chosen_entity": chosen["entity"]}
    return chosen["query"], merged, explained, found_by
