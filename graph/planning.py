"""Which sub-question is searched next, and when code can settle the plan without a model."""

from __future__ import annotations

from collections.abc import Sequence

from graph import text as tx
from graph.context import GraphContext
from graph.evidence import same_text_key
from graph.protocols import Reasoner
from graph.schemas import PlanDecision
from graph.schemas import SubQuestion as SchemaSubQuestion
from graph.state import GraphState, PlanAction, StopReason, SubQuestion


def pending_sub_questions(state: GraphState) -> list[SubQuestion]:
    done = {h["sub_question_id"] for h in state.get("hops", [])}
    return [sq for sq in state.get("sub_questions", []) if sq["id"] not in done]


def next_batch(state: GraphState, max_hops: int) -> list[SubQuestion]:
    """The next sub-question; consecutive independent ones travel together (within the cap)."""
    pending = pending_sub_questions(state)
    room = max(1, max_hops - len(state.get("hops", [])))
    if not pending or pending[0].get("depends_on"):
        return pending[:1]
    batch: list[SubQuestion] = []
    for sq in pending:
        if sq.get("depends_on") or len(batch) >= room:
            break
        batch.append(sq)
    return batch


def sub_question_records(raw: Sequence[SchemaSubQuestion], question: str) -> list[SubQuestion]:
    """Ids renumbered 1..n, links only to earlier ones, at most 8; the question if none."""
    subs: list[SubQuestion] = [
        {
            "id": sq.id,
            "question": sq.question,
            "depends_on": sq.depends_on,
            "search_query": sq.search_query,
            "follow_up": False,
        }
        for sq in tx.renumber_sub_questions(raw)
    ]
    return subs or [{"id": 1, "question": question, "depends_on": None, "follow_up": False}]


def pick_planner(
    state: GraphState, ctx: GraphContext, action: str | None, update: GraphState
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


def apply_plan(state: GraphState, decision: PlanDecision) -> tuple[PlanAction, str, GraphState]:
    """Check the proposal: a follow-up is added once; retrieve only if something is left."""
    update = add_follow_up(state, decision.follow_up)
    has_next = bool(pending_sub_questions(state)) or "sub_questions" in update
    action: PlanAction = "retrieve" if decision.action == "retrieve" and has_next else "evaluate"
    reason = decision.reason or ("planner" if action == "retrieve" else "plan_evaluate")
    if action == "evaluate":
        update["stop_reason"] = "plan_evaluate" if has_next else "sub_questions_exhausted"
    return action, reason, update


def decide_by_code(
    state: GraphState, ctx: GraphContext
) -> tuple[PlanAction | None, str, GraphState]:
    """(action, reason, update) for the cases code can settle; action None asks the model."""
    hops = state.get("hops", [])
    last = [h for h in hops if h["round"] == state.get("rounds", 0)]
    pending = pending_sub_questions(state)
    just_found = {h["sub_question_id"] for h in last}
    chained = any(sq.get("depends_on") in just_found for sq in pending)  # its #k is now known
    stop: StopReason | None = None
    if ctx.deadline_passed():
        stop = "deadline"
    elif len(hops) >= ctx.config.max_hops:
        stop = "hop_cap"
    elif last and all(h["repeated"] for h in last):
        stop = "repeated_query"
    elif last and sum(h["new_count"] for h in last) == 0 and not chained:
        stop = "no_new_evidence"  # a chain's next step still reads what was found with #k
    elif not pending:
        stop = "sub_questions_exhausted"
    if stop:
        update: GraphState = {"stop_reason": stop}
        if stop == "deadline":
            update["deadline_hit"] = True
        return "evaluate", stop, update
    if len(pending) == 1:
        return "retrieve", "one sub-question left", {}
    waiting = [sq for sq in pending if sq.get("depends_on") in just_found]
    if len(waiting) == 1 and waiting[0] is pending[0]:
        return "retrieve", "the chain continues from the hop just searched", {}
    return None, "", {}


def add_follow_up(state: GraphState, follow_up: str | None) -> GraphState:
    """Append the model's follow-up sub-question once, unless it repeats an existing one."""
    subs = state.get("sub_questions", [])
    if not follow_up or not follow_up.strip() or state.get("follow_up_added"):
        return {}
    if same_text_key(follow_up) in {same_text_key(sq["question"]) for sq in subs}:
        return {}
    new: SubQuestion = {
        "id": len(subs) + 1,
        "question": follow_up.strip(),
        "depends_on": None,
        "follow_up": True,
    }
    return {"sub_questions": [*subs, new], "follow_up_added": True}
