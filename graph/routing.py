"""Pure functions that pick the next node from the state (the nodes already decided why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from graph import text as tx
from graph.offline.route import is_simple, rewrite_followup
from graph.state import GraphState

SEARCHED_FOLLOW_UP = (
    "A follow-up that asks for a fact is searched in the documents, not answered from the "
    "conversation."
)


def must_search(question: str, history: Sequence[Mapping[str, str]]) -> bool:
    """A follow-up that asks for a fact goes to the documents even when the model routed it
    simple: the conversation alone is no source. Greetings, thanks, chit-chat, arithmetic and
    general requests (graph.offline.route.is_simple) may still be answered directly."""
    return bool(history) and is_simple(question) is None


def standalone_follow_up(question: str, rewritten: str, history: Sequence[dict[str, str]]) -> str:
    """The follow-up to search: the model's rewrite when it made one, else the question with
    the conversation's referent put in by code (graph.offline.route.rewrite_followup)."""
    if tx.normalize_space(rewritten).casefold() != tx.normalize_space(question).casefold():
        return rewritten
    return rewrite_followup(question, history)


def route_after_question(state: GraphState) -> Literal["answer_directly", "decompose_question"]:
    """Simple questions skip the knowledge base."""
    return "answer_directly" if state.get("route") == "simple" else "decompose_question"


def route_after_plan(state: GraphState) -> Literal["retrieve_hop", "evaluate_evidence"]:
    """plan_next_step wrote its (code-checked) decision into `plan_action`."""
    return "retrieve_hop" if state.get("plan_action") == "retrieve" else "evaluate_evidence"


def route_after_evaluation(state: GraphState) -> Literal["search_web", "generate_answer"]:
    """Gaps go to the web once, if allowed and time remains; everything else answers."""
    verdict = state.get("evaluation") or {}
    if verdict.get("enough") or state.get("deadline_hit"):
        return "generate_answer"
    if state.get("web_searches", 0) < state.get("web_budget", 0):
        return "search_web"
    return "generate_answer"
