"""The only place nodes and edges are wired (docs/architecture.md, "The state machine")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph

from graph import nodes, routing
from graph.context import GraphContext
from graph.result import TraceEvent
from graph.state import GraphState

NODE_NAMES = (
    "route_question",
    "answer_directly",
    "decompose_question",
    "retrieve_hop",
    "plan_next_step",
    "evaluate_evidence",
    "search_web",
    "generate_answer",
    "check_claims",
)

# (source, target) pairs of every possible transition, for the trace viewer's drawing.
EDGES = (
    ("__start__", "route_question"),
    ("route_question", "answer_directly"),
    ("route_question", "decompose_question"),
    ("answer_directly", "check_claims"),
    ("decompose_question", "retrieve_hop"),
    ("retrieve_hop", "plan_next_step"),
    ("plan_next_step", "retrieve_hop"),
    ("plan_next_step", "evaluate_evidence"),
    ("evaluate_evidence", "search_web"),
    ("evaluate_evidence", "generate_answer"),
    ("search_web", "evaluate_evidence"),
    ("generate_answer", "check_claims"),
    ("check_claims", "__end__"),
)


def build_graph() -> StateGraph[GraphState, GraphContext, GraphState, GraphState]:
    """The uncompiled state machine; compile with a checkpointer to keep conversations."""
    graph = StateGraph(GraphState, context_schema=GraphContext)
    for name in NODE_NAMES:
        graph.add_node(name, getattr(nodes, name))
    graph.add_edge(START, "route_question")
    graph.add_conditional_edges("route_question", routing.route_after_question)
    graph.add_edge("answer_directly", "check_claims")  # a direct reply states facts too
    graph.add_edge("decompose_question", "retrieve_hop")
    graph.add_edge("retrieve_hop", "plan_next_step")
    graph.add_conditional_edges("plan_next_step", routing.route_after_plan)
    graph.add_conditional_edges("evaluate_evidence", routing.route_after_evaluation)
    graph.add_edge("search_web", "evaluate_evidence")
    graph.add_edge("generate_answer", "check_claims")
    graph.add_edge("check_claims", END)
    return graph


def compile_graph(checkpointer: Any = None) -> Any:
    """Compiled graph; `checkpointer` None means no persistence (one-shot runs)."""
    return build_graph().compile(checkpointer=checkpointer)


def taken_edges(trace: Sequence[TraceEvent]) -> list[tuple[str, str]]:
    """The transitions one answer took, in order, for highlighting the path in the drawing."""
    names = ["__start__", *(event.node for event in trace), "__end__"]
    return list(zip(names, names[1:], strict=False))
