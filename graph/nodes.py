"""One function per node: read the state, call the reasoner/retriever, return a partial update.

Code decides whatever it can (hop cap, repeated query, nothing new, deadline, obvious next
step); the reasoner is asked only otherwise. Every node appends exactly one trace event.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from langgraph.runtime import Runtime

from graph import claims as cl
from graph import text as tx
from graph.claims import CITATION_RE
from graph.context import GraphContext
from graph.protocols import EvidenceItem, HopView, Reasoner, Usage, WebSearchError
from graph.schemas import PlanDecision
from graph.state import GraphState
from graph.web import search_with_timeout
from ingest.models import Hit

SNIPPET_CHARS = 240
# Stop reasons an "enough" verdict replaces; budget reasons (hop_cap, deadline...) are kept.
NATURAL_STOPS = {"", "sub_questions_exhausted", "plan_evaluate", "web_used"}


class Step:
    """Times one node run and folds the Usage of its reasoner calls into one trace event."""

    def __init__(self, ctx: GraphContext, node: str) -> None:
        self.ctx, self.node = ctx, node
        self.started_ms = ctx.elapsed_ms()
        self.usages: list[Usage] = []

    def add(self, usage: Usage, *, by_code: bool = False) -> None:
        if by_code:  # the code reasoner settled it: no model involved
            usage = usage.model_copy(update={"mode": "code", "llm_calls": 0})
        self.usages.append(usage)

    @property
    def mode(self) -> str:
        modes = {u.mode for u in self.usages}
        for mode in ("fallback", "llm", "offline"):
            if mode in modes:
                return mode
        return "code"

    @property
    def decided_by(self) -> str:
        """model: the LLM decided; offline: offline reasoning (configured or standing in)."""
        return {"llm": "model", "fallback": "offline", "offline": "offline"}.get(self.mode, "code")

    def finish(self, **details: Any) -> dict[str, Any]:
        """Build the event, hand it to the on_event callback, and return it for the trace."""
        ended = self.ctx.elapsed_ms()
        errors = [u.error for u in self.usages if u.error]
        if errors:
            details["errors"] = errors
        event = {
            "node": self.node,
            "started_ms": round(self.started_ms, 2),
            "ended_ms": round(ended, 2),
            "duration_ms": round(ended - self.started_ms, 2),
            "llm_calls": sum(u.llm_calls for u in self.usages),
            "tokens": sum(u.prompt_tokens + u.completion_tokens for u in self.usages),
            "mode": self.mode,
            "details": details,
        }
        self.ctx.emit_event(event)
        return event


# --- evidence helpers -------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def pool_item(hit: Hit, hop: int, rank: int, whole: bool = False) -> dict[str, Any]:
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


def hit_record(hit: Hit, new: bool) -> dict[str, Any]:
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


def as_hit(item: dict[str, Any]) -> Hit:
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


def rank_pool(pool: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Best first: by rank within the hop that found the chunk, then by score.

    Interleaving hops (not raw score across hops) keeps every hop's best chunks in a capped
    prompt, so a bridge hop's evidence is never crowded out by another hop. On the dev sets
    this ordering gave the best recall@5 of the orderings tried.
    """
    return sorted(pool.values(), key=lambda it: (it.get("rank", 0), -it.get("score", 0.0)))


def evidence_items(
    pool: dict[str, dict[str, Any]], web_results: Sequence[dict[str, Any]], limit: int
) -> list[EvidenceItem]:
    """Numbered evidence for the reasoner: up to `limit` chunks, then web results (untrusted)."""
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
        for i, it in enumerate(rank_pool(pool)[: max(0, limit)], start=1)
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
    hops: Sequence[dict[str, Any]],
    pool: dict[str, dict[str, Any]],
    sub_questions: Sequence[dict[str, Any]] = (),
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
        )
        for h in hops
    ]


def pending_sub_questions(state: GraphState) -> list[dict[str, Any]]:
    done = {h["sub_question_id"] for h in state.get("hops", [])}
    return [sq for sq in state.get("sub_questions", []) if sq["id"] not in done]


def next_batch(state: GraphState, max_hops: int) -> list[dict[str, Any]]:
    """The next sub-question; consecutive independent ones travel together (within the cap)."""
    pending = pending_sub_questions(state)
    room = max(1, max_hops - len(state.get("hops", [])))
    if not pending or pending[0].get("depends_on"):
        return pending[:1]
    batch: list[dict[str, Any]] = []
    for sq in pending:
        if sq.get("depends_on") or len(batch) >= room:
            break
        batch.append(sq)
    return batch


def cited_numbers(answer: str, known: Collection[int]) -> list[int]:
    """The `known` numbers the answer's [n] / [n, m] markers use, in order of first use."""
    used: list[int] = []
    for match in CITATION_RE.finditer(answer):
        for n in re.split(r"\s*[,，、]\s*", match.group(1)):
            if int(n) in known and int(n) not in used:
                used.append(int(n))
    return used


def find_citations(answer: str, items: Sequence[EvidenceItem]) -> list[dict[str, Any]]:
    """The [n] markers the answer actually uses, resolved to their chunk or URL."""
    by_n = {item.n: item for item in items}
    return [citation(by_n[n]) for n in sorted(cited_numbers(answer, by_n))]


def renumber_citations(
    answer: str, items: Sequence[EvidenceItem]
) -> tuple[str, list[EvidenceItem], list[dict[str, Any]]]:
    """Number the sources 1, 2, 3... in the order the answer first uses them, so the answer, the
    source cards and the trace agree and have no gaps; the unused evidence is numbered after
    them. The items keep their ranked order (recall is measured on it); markers that name no
    evidence item stay as written. (answer, items, citations)."""
    order = cited_numbers(answer, {item.n for item in items})
    order += [item.n for item in items if item.n not in order]
    new_n = {old: new for new, old in enumerate(order, start=1)}

    def marker(match: re.Match[str]) -> str:
        parts = re.split(r"(\s*[,，、]\s*)", match.group(1))
        return "[" + "".join(str(new_n.get(int(p), p)) if p.isdigit() else p for p in parts) + "]"

    text = CITATION_RE.sub(marker, answer)
    # The evidence keeps its ranked order (what recall is measured on); only numbers change.
    renumbered = [item.model_copy(update={"n": new_n[item.n]}) for item in items]
    return text, renumbered, find_citations(text, renumbered)


def citation(item: EvidenceItem) -> dict[str, Any]:
    quote = " ".join(item.sentences) if item.sentences else item.text[:400]
    return {
        "n": item.n,
        "chunk_id": item.chunk_id,
        "url": item.url,
        "source": item.source,
        "title": item.title,
        "section": item.section,
        "page": item.page,
        "quote": quote,
    }


def stream_answer(
    ctx: GraphContext, pieces: Iterable[str | Usage], step: Step, live: bool = True
) -> str:
    """Forward text pieces to on_token as they come (when `live`); the trailing Usage goes to
    the step."""
    parts: list[str] = []
    for piece in pieces:
        if isinstance(piece, Usage) and piece.details.get("retract"):
            parts.clear()  # the reasoner withdrew what it streamed (a runaway reply)
            if live:
                ctx.emit_token("\n\n")
        elif isinstance(piece, Usage):
            step.add(piece)
        else:
            parts.append(piece)
            if live:
                ctx.emit_token(piece)
    return "".join(parts)


def degraded_note(question: str) -> str:
    if tx.language_of(question) == "zh":
        return "（注意：语言模型有步骤失败，已由离线推理代替。）\n\n"
    return (
        "(Note: the language model failed for part of this answer; offline reasoning stood in.)\n\n"
    )


def fell_back(trace: Iterable[dict[str, Any]]) -> bool:
    return any(event.get("mode") == "fallback" for event in trace)


# --- nodes ------------------------------------------------------------------------------


def route_question(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Rewrite a follow-up into a standalone question and pick simple or complex."""
    ctx = runtime.context
    step = Step(ctx, "route_question")
    history = state.get("history", [])
    reasoner, by_code = ctx.reasoner_for(code_can_settle=not history)
    decision, usage = reasoner.route(state["question"], history)
    step.add(usage, by_code=by_code)
    standalone = decision.standalone_question.strip() or state["question"]
    event = step.finish(
        route=decision.route,
        reason=decision.reason,
        standalone=standalone,
        decided_by=step.decided_by,
    )
    return {
        "standalone_question": standalone,
        "route": decision.route,
        "route_reason": decision.reason,
        "trace": [event],
    }


def answer_directly(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Greetings and general questions: answer without the knowledge base."""
    ctx = runtime.context
    step = Step(ctx, "answer_directly")
    question = state["standalone_question"]
    pieces = ctx.reasoner.answer_directly(question, state.get("history", []))
    text = stream_answer(ctx, pieces, step)
    if step.mode == "fallback" or fell_back(state.get("trace", [])):
        text = degraded_note(question) + text
    return {"answer": text, "stop_reason": "simple", "trace": [step.finish(chars=len(text))]}


def decompose_question(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Split into ordered, self-contained sub-questions."""
    ctx = runtime.context
    step = Step(ctx, "decompose_question")
    question = state["standalone_question"]
    language = ctx.documents_language()
    decomposition, usage = ctx.reasoner.decompose(question, ctx.phrase_counts, language)
    step.add(usage)
    subs = sub_question_records(decomposition.sub_questions, state["standalone_question"])
    return {"sub_questions": subs, "trace": [step.finish(sub_questions=subs)]}


def sub_question_records(raw: Sequence[Any], question: str) -> list[dict[str, Any]]:
    """Ids renumbered 1..n, links only to earlier ones, at most 8; the question if none."""
    subs = [{**sq.model_dump(), "follow_up": False} for sq in tx.renumber_sub_questions(raw)]
    return subs or [{"id": 1, "question": question, "depends_on": None, "follow_up": False}]


def retrieve_hop(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Search for the next sub-question(s), merge into the pool, keep verbatim sentences."""
    ctx = runtime.context
    step = Step(ctx, "retrieve_hop")
    round_no = state.get("rounds", 0) + 1
    pool = dict(state.get("evidence", {}))
    hops = list(state.get("hops", []))
    new_hops: list[dict[str, Any]] = []
    added: dict[str, dict[str, Any]] = {}
    for sq in next_batch(state, ctx.config.max_hops):
        if new_hops and ctx.deadline_passed():
            break
        hop = run_hop(ctx, step, sq, hops, pool, len(hops) + 1, round_no)
        hops.append(hop)
        new_hops.append(hop)
        for item in hop.pop("_items"):
            added[item["chunk_id"]] = item
            pool[item["chunk_id"]] = item
    event = step.finish(
        round=round_no,
        planned_sub_questions=len(state.get("sub_questions", [])),
        hops=[
            {
                "hop": h["hop"],
                "sub_question_id": h.get("sub_question_id"),
                "sub_question": h["sub_question"],
                "query": h["query"],
                "hits": len(h["hits"]),
                "new": h["new_count"],
            }
            for h in new_hops
        ],
    )
    return {"hops": new_hops, "evidence": added, "rounds": round_no, "trace": [event]}


def run_hop(
    ctx: GraphContext,
    step: Step,
    sq: dict[str, Any],
    hops: list[dict[str, Any]],
    pool: dict[str, dict[str, Any]],
    hop_no: int,
    round_no: int,
) -> dict[str, Any]:
    """One sub-question: bridge if dependent, search unless the query repeats, extract."""
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
    repeated = _norm(query) in {_norm(h["query"]) for h in hops}
    hits = [] if repeated else ctx.retriever.search(query, list(ctx.groups), k=ctx.config.top_k)
    found_by: dict[str, str] = {}
    alternative = " ".join(tx.PLACEHOLDER_RE.sub(" ", alternative).split())
    if alternative and _norm(alternative) not in {_norm(query), *(_norm(h["query"]) for h in hops)}:
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
    whole, whole_docs = ([], set()) if repeated else read_whole(ctx, sq["question"], hits)
    seen = set(pool)
    records: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
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
    kept: list[dict[str, str]] = []
    if new_hits:
        extractor, by_code = ctx.reasoner_for(code_can_settle=True)
        sentences, usage = extractor.extract(sq["question"], new_hits)
        step.add(usage, by_code=by_code)
        by_id = {it["chunk_id"]: it for it in items}
        for s in sentences:
            if s.chunk_id in by_id and s.text not in by_id[s.chunk_id]["sentences"]:
                by_id[s.chunk_id]["sentences"].append(s.text)
                kept.append({"chunk_id": s.chunk_id, "text": s.text})
    return {
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
        "_items": items,
    }


def read_whole(
    ctx: GraphContext, question: str, hits: Sequence[Hit]
) -> tuple[list[tuple[Hit, Hit]], set[str]]:
    """For a count or a sum ('一共有几张', 'how many … in total'): the documents of the best
    hits that hold a table or a log, read whole, so no row of it is missing; (chunk, the hit
    that led to it) for every chunk of such a document the search did not return, and the ids
    of the documents read whole. The groups are enforced by the store; nothing for a
    retriever that cannot read a document (a capability, like phrase_counts)."""
    from graph.offline.records import aggregates, tabular

    fetch = getattr(ctx.retriever, "document_hits", None)
    if fetch is None or not aggregates(question):
        return [], set()
    known = {h.chunk_id for h in hits}
    out: list[tuple[Hit, Hit]] = []
    read: set[str] = set()
    whole: set[str] = set()
    for hit in [h for h in hits if tabular(h.text)][: ctx.config.whole_documents]:
        if hit.doc_id in read:
            continue
        read.add(hit.doc_id)
        try:
            chunks = fetch(hit.doc_id, list(ctx.groups), ctx.config.whole_document_chunks)
        except Exception:  # noqa: BLE001 - the hits found stand; the count says what it saw
            continue
        if chunks:
            whole.add(hit.doc_id)
        out += [(chunk, hit) for chunk in chunks if chunk.chunk_id not in known]
        known |= {c.chunk_id for c in chunks}
    return out, whole


def documents_query(sq: dict[str, Any], query: str, explained: dict[str, Any]) -> str:
    """The sub-question's search_query (written in the documents' language by the model),
    its #k filled with the entity the bridge chose; '' when there is none or it repeats."""
    translated = str(sq.get("search_query") or "").strip()
    if tx.PLACEHOLDER_RE.search(translated):
        entity = str(explained.get("chosen_entity") or "")
        translated = tx.PLACEHOLDER_RE.sub(entity, translated) if entity else ""
    translated = " ".join(translated.split())
    return translated if translated and _norm(translated) != _norm(query) else ""


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
    ctx: GraphContext, query: str, hits: list[Hit], explained: dict[str, Any]
) -> tuple[str, list[Hit], dict[str, Any], dict[str, str]]:
    """Search each bridge candidate's query and keep the one its hits confirm best (its own
    passage, holding the relation's words), weighed by the candidate's score; the runners-up's
    best hits follow the winner's. (query, hits, explanation for the trace)."""
    from graph.offline.bridge import confirm
    from graph.offline.params import PARAMS

    beam = explained["beam"]
    top = max(float(b["score"]) for b in beam) or 1.0
    results: list[tuple[float, dict[str, Any], list[Hit]]] = []
    for i, option in enumerate(beam):
        found = (
            hits
            if i == 0
            else ctx.retriever.search(option["query"], list(ctx.groups), k=ctx.config.top_k)
        )
        prior = (float(option["score"]) / top) ** PARAMS.bridge_prior_weight
        score = confirm(option["entity"], option["query"], found, option.get("previous", ""))
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


def plan_next_step(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Code decides when it can; otherwise the reasoner proposes and code checks the proposal."""
    ctx = runtime.context
    step = Step(ctx, "plan_next_step")
    action, reason, update = decide_by_code(state, ctx)
    chosen = pick_planner(state, ctx, action, update)
    if chosen is not None:
        planner, by_code = chosen
        decision, usage = planner.plan(
            state["standalone_question"],
            [sq["question"] for sq in pending_sub_questions(state)],
            hop_views(state.get("hops", []), state.get("evidence", {})),
            evidence_items(state.get("evidence", {}), [], ctx.config.max_evidence_chunks),
        )
        step.add(usage, by_code=by_code)
        action, reason, update = apply_plan(state, decision)
    event = step.finish(action=action, reason=reason, decided_by=step.decided_by)
    return {**update, "plan_action": action, "plan_reason": reason, "trace": [event]}


def pick_planner(
    state: GraphState, ctx: GraphContext, action: str | None, update: dict[str, Any]
) -> tuple[Reasoner, bool] | None:
    """The model when code could not decide; when the sub-questions ran out, a free planner
    (code or offline reasoning) may still propose one follow-up. (reasoner, by_code)."""
    if action is None:
        return ctx.reasoner, False
    if update.get("stop_reason") != "sub_questions_exhausted" or state.get("follow_up_added"):
        return None
    if ctx.code is not None:
        return ctx.code, True
    return (ctx.reasoner, False) if ctx.reasoner.name == "offline" else None


def apply_plan(state: GraphState, decision: PlanDecision) -> tuple[str, str, dict[str, Any]]:
    """Check the proposal: a follow-up is added once; retrieve only if something is left."""
    update = add_follow_up(state, decision.follow_up)
    has_next = bool(pending_sub_questions(state)) or "sub_questions" in update
    action = "retrieve" if decision.action == "retrieve" and has_next else "evaluate"
    reason = decision.reason or ("planner" if action == "retrieve" else "plan_evaluate")
    if action == "evaluate":
        update["stop_reason"] = "plan_evaluate" if has_next else "sub_questions_exhausted"
    return action, reason, update


def decide_by_code(state: GraphState, ctx: GraphContext) -> tuple[str | None, str, dict[str, Any]]:
    """(action, reason, update) for the cases code can settle; action None asks the model."""
    hops = state.get("hops", [])
    last = [h for h in hops if h["round"] == state.get("rounds", 0)]
    pending = pending_sub_questions(state)
    stop = None
    if ctx.deadline_passed():
        stop = "deadline"
    elif len(hops) >= ctx.config.max_hops:
        stop = "hop_cap"
    elif last and all(h["repeated"] for h in last):
        stop = "repeated_query"
    elif last and sum(h["new_count"] for h in last) == 0:
        stop = "no_new_evidence"
    elif not pending:
        stop = "sub_questions_exhausted"
    if stop:
        update: dict[str, Any] = {"stop_reason": stop}
        if stop == "deadline":
            update["deadline_hit"] = True
        return "evaluate", stop, update
    if len(pending) == 1:
        return "retrieve", "one sub-question left", {}
    just_found = {h["sub_question_id"] for h in last}
    waiting = [sq for sq in pending if sq.get("depends_on") in just_found]
    if len(waiting) == 1 and waiting[0] is pending[0]:
        return "retrieve", "the chain continues from the hop just searched", {}
    return None, "", {}


def add_follow_up(state: GraphState, follow_up: str | None) -> dict[str, Any]:
    """Append the model's follow-up sub-question once, unless it repeats an existing one."""
    subs = state.get("sub_questions", [])
    if not follow_up or not follow_up.strip() or state.get("follow_up_added"):
        return {}
    if _norm(follow_up) in {_norm(sq["question"]) for sq in subs}:
        return {}
    new = {
        "id": len(subs) + 1,
        "question": follow_up.strip(),
        "depends_on": None,
        "follow_up": True,
    }
    return {"sub_questions": [*subs, new], "follow_up_added": True}


def evaluate_evidence(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Is the evidence enough for the original question? No model call when code knows."""
    ctx = runtime.context
    step = Step(ctx, "evaluate_evidence")
    question = state["standalone_question"]
    pool, web = state.get("evidence", {}), state.get("web_results", [])
    update: dict[str, Any] = {}
    if ctx.deadline_passed():
        verdict = {
            "enough": False,
            "missing": [
                "评估证据前时间已用完"
                if tx.language_of(question) == "zh"
                else "time ran out before the evidence was judged"
            ],
            "web_query": None,
        }
        update = {"deadline_hit": True, "stop_reason": "deadline"}
    elif not pool and not web:
        verdict = {"enough": False, "missing": [question], "web_query": question}
    else:
        items = evidence_items(pool, web, ctx.config.max_evidence_chunks)
        views = hop_views(state.get("hops", []), pool, state.get("sub_questions", []))
        result, usage, by_code = _judge(ctx, question, items, views)
        step.add(usage, by_code=by_code)
        verdict = result.model_dump()
    if verdict["enough"] and state.get("stop_reason", "") in NATURAL_STOPS:
        update["stop_reason"] = "enough"
    event = step.finish(**verdict, decided_by=step.decided_by)
    return {**update, "evaluation": verdict, "trace": [event]}


def _judge(
    ctx: GraphContext, question: str, items: list[EvidenceItem], views: list[HopView]
) -> tuple[Any, Usage, bool]:
    """The model judges sufficiency; code settles it only when it can prove the answer is
    there (every part answered by one passage and a short answer found). (verdict, usage,
    by_code)."""
    if ctx.code is not None:
        verdict, usage = ctx.code.evaluate(question, items, views)
        if verdict.enough:
            return verdict, usage, True
    verdict, usage = ctx.reasoner.evaluate(question, items, views)
    return verdict, usage, False


def search_web(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """One web search for the gaps; any failure is recorded and local evidence carries on."""
    ctx = runtime.context
    step = Step(ctx, "search_web")
    verdict = state.get("evaluation") or {}
    query = (verdict.get("web_query") or state["standalone_question"]).strip()
    update: dict[str, Any] = {
        "web_searches": state.get("web_searches", 0) + 1,
        "web_query": query,
        "stop_reason": "web_used",
    }
    timeout = min(ctx.config.web_timeout_s, max(0.1, ctx.seconds_left()))
    try:
        if ctx.web is None:
            raise WebSearchError("web search is not configured")
        results = search_with_timeout(ctx.web, query, ctx.config.web_max_results, timeout)
        update["web_used"] = True
        update["web_results"] = [r.model_dump() | {"source": _domain(r.url)} for r in results]
        event = step.finish(query=query, results=len(results))
    except WebSearchError as exc:
        update["web_error"] = str(exc)
        event = step.finish(query=query, results=0, error=str(exc))
    return {**update, "trace": [event]}


def _domain(url: str) -> str:
    match = re.match(r"^[a-z]+://([^/]+)", url, re.I)
    return match.group(1) if match else url


def generate_answer(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Answer only from numbered evidence; cite what the text uses. Tokens stream to the page
    as they come only when the claim check is off: with it on, check_claims shows the answer
    once it is checked, so no unchecked claim ever reaches the page."""
    ctx = runtime.context
    step = Step(ctx, "generate_answer")
    question = state["standalone_question"]
    items, missing, views = answer_inputs(state, ctx)
    earlier_fallback = fell_back(state.get("trace", []))
    prefix = degraded_note(question) if earlier_fallback else ""
    live = not ctx.config.claim_check
    if prefix and live:
        ctx.emit_token(prefix)
    text = stream_answer(ctx, ctx.reasoner.answer(question, items, missing, views), step, live)
    if not prefix and step.mode == "fallback":
        prefix = degraded_note(question)
    text, items, citations = renumber_citations(text, items)
    answer = prefix + text
    event = step.finish(evidence=len(items), citations=[c["n"] for c in citations])
    return {
        "answer": answer,
        "answer_evidence": [item.model_dump() for item in items],
        "citations": citations,
        "trace": [event],
    }


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


def check_claims(state: GraphState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
    """Every claim of the answer against the passages it cites (graph/claims.py). A model's
    claim that fails is cut, with its citation; when its stated answer (the first claim) fails,
    or nothing cited is left, or the model wrote no answer, offline reasoning's answer to the
    whole question replaces it (_offline_answer) and the answer is marked degraded. Offline
    answers are checked and their failures only reported."""
    ctx = runtime.context
    step = Step(ctx, "check_claims")
    answer = state.get("answer", "")
    if not ctx.config.claim_check:
        return {"trace": [step.finish(checked=False)]}
    question = state["standalone_question"]
    items = [EvidenceItem.model_validate(e) for e in state.get("answer_evidence", [])]
    claims = cl.check(cl.split_claims(answer), items, question, ctx.similarity)
    failed = [c for c in claims if c.failed]
    written_by = _answer_mode(state)
    by_model = written_by == "llm"
    update: dict[str, Any] = {}
    fell_back_why = ""
    if written_by == "fallback" and ctx.offline_run is not None:  # the model wrote no answer
        fell_back_why = "the model could not write it"
    first = cl.stated(claims)
    lead_fails = first is not None and first.verdict != "supported"
    if by_model and (failed or lead_fails):
        kept = cl.without(answer, claims)
        if first is not None and lead_fails:
            why = first.why or "it cites no passage"
            fell_back_why = f"its stated answer failed the claim check ({why})"
        elif not CITATION_RE.search(kept):
            fell_back_why = "no cited claim passed the claim check"
        if not fell_back_why:
            text, renumbered, citations = renumber_citations(kept, items)
            update = {
                "answer": text,
                "answer_evidence": [i.model_dump() for i in renumbered],
                "citations": citations,
            }
    rerun: dict[str, Any] = {}
    if fell_back_why:
        step.add(Usage(mode="fallback", error=f"the model's answer was replaced: {fell_back_why}"))
        update = _offline_answer(state, ctx, step)
        rerun = update.pop("offline_rerun", {})
    ctx.emit_token(update.get("answer", answer))
    event = step.finish(
        checked=len([c for c in claims if c.verdict != "no_claim"]),
        removed=len(failed) if by_model and not fell_back_why else 0,
        fell_back=bool(fell_back_why),
        **({"unwritten": True} if fell_back_why and written_by == "fallback" else {}),
        claims=[c.record() for c in claims if c.verdict != "no_claim"][:MAX_TRACED_CLAIMS],
        **({"offline_rerun": rerun} if rerun else {}),
    )
    return {**update, "trace": [event]}


MAX_TRACED_CLAIMS = 30


def _answer_mode(state: GraphState) -> str:
    """How the answer being checked was written: llm, offline or fallback."""
    for event in reversed(state.get("trace", [])):
        if event.get("node") == "generate_answer":
            return str(event.get("mode", ""))
    return ""


def _offline_answer(state: GraphState, ctx: GraphContext, step: Step) -> dict[str, Any]:
    """What a model's answer that failed the check is replaced by: the whole question asked
    again by offline reasoning (its own sub-questions, hops and evidence: the model's may have
    led elsewhere), or, without that or when it fails, the offline reader's evidence-first
    answer over the evidence this run found. Either way with its own citations."""
    question = state["standalone_question"]
    if ctx.offline_run is not None:
        try:
            final = ctx.offline_run(state["question"], state.get("history", []))
            text = str(final.get("answer", ""))
            if text.strip():
                return {
                    "answer": degraded_note(question) + text,
                    "answer_evidence": list(final.get("answer_evidence", [])),
                    "citations": list(final.get("citations", [])),
                    "offline_rerun": {
                        "sub_questions": [
                            str(s.get("question", "")) for s in final.get("sub_questions", [])
                        ],
                        "hops": len(final.get("hops", [])),
                        "stop_reason": str(final.get("stop_reason", "")),
                    },
                }
        except Exception as exc:  # noqa: BLE001 - the evidence found here is still answerable
            step.add(Usage(mode="fallback", error=f"the offline run failed: {exc}"))
    items, missing, views = answer_inputs(state, ctx)
    reasoner = ctx.offline or ctx.reasoner
    text = "".join(
        piece
        for piece in reasoner.answer(question, items, missing, views)
        if isinstance(piece, str)
    )
    text, items, citations = renumber_citations(text, items)
    return {
        "answer": degraded_note(question) + text,
        "answer_evidence": [item.model_dump() for item in items],
        "citations": citations,
    }
