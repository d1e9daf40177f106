"""Pure functions that pick the next node from the state (the nodes already decided why)."""

from __future__ import annotations

from typing import Literal

from graph.state import GraphState


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
