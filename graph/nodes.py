"""One function per node: read the state, call the reasoner/retriever, return a partial update.

Code decides whatever it can (hop cap, repeated query, nothing new, deadline, obvious next
step); the reasoner is asked only otherwise. Every node appends exactly one trace event.
"""

from __future__ import annotations

import re
from typing import Any, cast

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from graph import claims as cl
from graph import text as tx
from graph.citations import renumber_citations
from graph.claims import CITATION_RE
from graph.context import GraphContext
from graph.evidence import answer_inputs, evidence_items, hop_views
from graph.garble import keep_names
from graph.hops import run_hop
from graph.offline.route import needs_no_source
from graph.planning import (
    apply_plan,
    decide_by_code,
    next_batch,
    pending_sub_questions,
    pick_planner,
    sub_question_records,
)
from graph.protocols import EvidenceItem, HopView, Usage, WebSearchError
from graph.routing import SEARCHED_FOLLOW_UP, must_search, standalone_follow_up
from graph.state import NATURAL_STOPS, GraphState, Hop, JsonObject, PoolEntry, Verdict
from graph.step import Step, degraded_note, fell_back, stream_answer
from graph.web import search_with_timeout


def route_question(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
    """Rewrite a follow-up into a standalone question and pick simple or complex. Code
    overrules a simple route for a follow-up that asks for a fact: it is searched."""
    ctx = runtime.context
    step = Step(ctx, "route_question")
    question, history = state["question"], state.get("history", [])
    reasoner, by_code = ctx.reasoner_for(code_can_settle=not history)
    decision, usage = reasoner.route(question, history)
    step.add(usage, by_code=by_code)
    standalone = decision.standalone_question.strip() or question
    route, reason, overruled = decision.route, decision.reason, {}
    if route == "simple" and must_search(question, history):
        standalone = standalone_follow_up(question, standalone, history)
        route, reason, overruled = "complex", SEARCHED_FOLLOW_UP, {"overruled": decision.route}
    event = step.finish(
        route=route, reason=reason, standalone=standalone, decided_by=step.decided_by, **overruled
    )
    return {
        "standalone_question": standalone,
        "route": route,
        "route_reason": reason,
        "trace": [event],
    }


def answer_directly(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
    """Greetings and general questions: answer without the knowledge base. The reply is shown
    as it streams only when no claim check follows (check_claims shows it once checked)."""
    ctx = runtime.context
    step = Step(ctx, "answer_directly")
    question = state["standalone_question"]
    pieces = ctx.reasoner.answer_directly(question, state.get("history", []))
    text = stream_answer(ctx, pieces, step, live=not ctx.config.claim_check)
    if step.mode == "fallback" or fell_back(state.get("trace", [])):
        text = degraded_note(question) + text
    return {"answer": text, "stop_reason": "simple", "trace": [step.finish(chars=len(text))]}


def decompose_question(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
    """Split into ordered, self-contained sub-questions."""
    ctx = runtime.context
    step = Step(ctx, "decompose_question")
    question = state["standalone_question"]
    language = ctx.documents_language()
    decomposition, usage = ctx.reasoner.decompose(question, ctx.phrase_counts, language)
    step.add(usage)
    kept, garbled = keep_names(decomposition.sub_questions, question)  # a name cut: ask whole
    subs = sub_question_records(kept, state["standalone_question"])
    extra = {"garbled_names": garbled} if garbled else {}
    return {"sub_questions": subs, "trace": [step.finish(sub_questions=subs, **extra)]}


def retrieve_hop(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
    """Search for the next sub-question(s), merge into the pool, keep verbatim sentences."""
    ctx = runtime.context
    step = Step(ctx, "retrieve_hop")
    round_no = state.get("rounds", 0) + 1
    pool = dict(state.get("evidence", {}))
    hops = list(state.get("hops", []))
    new_hops: list[Hop] = []
    added: dict[str, PoolEntry] = {}
    for sq in next_batch(state, ctx.config.max_hops):
        if new_hops and ctx.deadline_passed():
            break
        hop, items = run_hop(
            ctx, step, sq, hops, pool, len(hops) + 1, round_no,
            asked=str(state.get("standalone_question") or state.get("question") or ""),
        )  # fmt: skip
        hops.append(hop)
        new_hops.append(hop)
        for item in items:
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


def plan_next_step(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
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
    return {**update, "plan_action": action or "evaluate", "plan_reason": reason, "trace": [event]}


def evaluate_evidence(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
    """Is the evidence enough for the original question? No model call when code knows."""
    ctx = runtime.context
    step = Step(ctx, "evaluate_evidence")
    question = state["standalone_question"]
    pool, web = state.get("evidence", {}), state.get("web_results", [])
    update: GraphState = {}
    verdict: Verdict
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
        verdict = {
            "enough": result.enough,
            "missing": list(result.missing),
            "web_query": result.web_query,
        }
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


def search_web(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
    """One web search for the gaps; any failure is recorded and local evidence carries on."""
    ctx = runtime.context
    step = Step(ctx, "search_web")
    verdict = state.get("evaluation") or {}
    query = (verdict.get("web_query") or state["standalone_question"]).strip()
    update: GraphState = {
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
        update["web_results"] = [
            {"url": r.url, "title": r.title, "snippet": r.snippet, "source": _domain(r.url)}
            for r in results
        ]
        event = step.finish(query=query, results=len(results))
    except WebSearchError as exc:
        update["web_error"] = str(exc)
        event = step.finish(query=query, results=0, error=str(exc))
    return {**update, "trace": [event]}


def _domain(url: str) -> str:
    match = re.match(r"^[a-z]+://([^/]+)", url, re.I)
    return match.group(1) if match else url


def generate_answer(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
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


def check_claims(state: GraphState, runtime: Runtime[GraphContext]) -> GraphState:
    """Every claim of the answer against the passages it cites (graph/claims.py). A model's
    claim that fails is cut, with its citation; when its stated answer (the first claim) fails,
    or nothing cited is left, or the model wrote no answer, offline reasoning's answer to the
    whole question replaces it (_offline_answer) and the answer is marked degraded. A direct
    reply cites nothing, so a fact it states beyond the question (and what offline reasoning
    replies itself: its own name, a sum) fails, and the whole question is asked again offline,
    through the documents. Offline answers are checked and their failures only reported."""
    ctx = runtime.context
    step = Step(ctx, "check_claims")
    answer = state.get("answer", "")
    if not ctx.config.claim_check:
        return {"trace": [step.finish(checked=False)]}
    question = state["standalone_question"]
    items = [EvidenceItem.model_validate(e) for e in state.get("answer_evidence", [])]
    direct = state.get("route") == "simple"
    given = needs_no_source(question) if direct else question
    claims = cl.check(cl.split_claims(answer), items, given, ctx.similarity)
    failed = [c for c in claims if c.failed]
    written_by = _answer_mode(state)
    by_model = written_by == "llm"
    update: GraphState = {}
    fell_back_why = ""
    if written_by == "fallback" and ctx.offline_run is not None:  # the model wrote no answer
        fell_back_why = "the model could not write it"
    first = cl.stated(claims)
    lead_fails = first is not None and first.verdict != "supported"
    if by_model and direct:  # nothing to cite, so no first line to hold against a passage
        if failed:
            fell_back_why = f"its direct reply states what no source holds ({failed[0].why})"
    elif by_model and (failed or lead_fails):
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
    rerun: JsonObject = {}
    if fell_back_why:
        step.add(Usage(mode="fallback", error=f"the model's answer was replaced: {fell_back_why}"))
        update, rerun = _offline_answer(state, ctx, step)
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
    """How the answer being checked was written: llm, offline, fallback or bypassed."""
    for event in reversed(state.get("trace", [])):
        if event.get("node") in ("generate_answer", "answer_directly"):
            return str(event.get("mode", ""))
    return ""


def _offline_answer(
    state: GraphState, ctx: GraphContext, step: Step
) -> tuple[GraphState, JsonObject]:
    """What a model's answer that failed the check is replaced by: the whole question asked
    again by offline reasoning (its own sub-questions, hops and evidence: the model's may have
    led elsewhere), or, without that or when it fails, the offline reader's evidence-first
    answer over the evidence this run found. Either way with its own citations."""
    question = state["standalone_question"]
    if ctx.offline_run is not None:
        try:
            final = ctx.offline_run(state["question"], state.get("history", []), ctx.started)
            text = str(final.get("answer", ""))
            if text.strip():
                rerun = {
                    "sub_questions": [
                        str(s.get("question", "")) for s in final.get("sub_questions", [])
                    ],
                    "hops": len(final.get("hops", [])),
                    "stop_reason": str(final.get("stop_reason", "")),
                }
                # The answer's hops, evidence and plan become the offline run's: which
                # documents an answer shows (and withholds later) is read from its hops.
                return {
                    "answer": degraded_note(question) + text,
                    "answer_evidence": list(final.get("answer_evidence", [])),
                    "citations": list(final.get("citations", [])),
                    "hops": cast("list[Hop]", Overwrite(list(final.get("hops", [])))),
                    "evidence": cast(
                        "dict[str, PoolEntry]", Overwrite(dict(final.get("evidence", {})))
                    ),
                    "sub_questions": list(final.get("sub_questions", [])),
                    "evaluation": final.get("evaluation", {}),
                    "stop_reason": final.get("stop_reason", ""),
                    "route": final.get("route", state.get("route", "")),
                }, rerun
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
    }, {}
