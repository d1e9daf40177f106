"""The graph state and its reducers.

Everything in the state is plain JSON-like data (dicts, lists, strings) so the SQLite
checkpointer stores it without custom types. Per-question fields are reset at the start
of every question (see `question_input`); `messages` lives for the whole conversation.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langgraph.types import Overwrite

MAX_MESSAGES = 20  # conversation turns kept for follow-up rewriting (user + assistant)


def merge_evidence(
    left: dict[str, dict[str, Any]] | None, right: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """Merge pools by chunk id: keep the higher-scored entry, union the extracted sentences."""
    merged = dict(left or {})
    for chunk_id, item in (right or {}).items():
        old = merged.get(chunk_id)
        if old is None:
            merged[chunk_id] = item
            continue
        best = dict(item if item.get("score", 0.0) > old.get("score", 0.0) else old)
        sentences = list(old.get("sentences", []))
        sentences += [s for s in item.get("sentences", []) if s not in sentences]
        best["sentences"] = sentences
        best["hop"] = min(old.get("hop", 0), item.get("hop", 0))
        best["rank"] = min(old.get("rank", 0), item.get("rank", 0))
        if old.get("whole_document") or item.get("whole_document"):
            best["whole_document"] = True  # its document was read whole by either hop
        merged[chunk_id] = best
    return merged


def append_items(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Append-only lists: trace events, hop records."""
    return list(left or []) + list(right or [])


def append_messages(
    left: list[dict[str, str]] | None, right: list[dict[str, str]] | None
) -> list[dict[str, str]]:
    """Conversation turns, bounded so old threads stay cheap to checkpoint."""
    return (list(left or []) + list(right or []))[-MAX_MESSAGES:]


class GraphState(TypedDict, total=False):
    """One question's working state plus the conversation it belongs to."""

    # input
    question: str
    history: list[dict[str, str]]
    web_budget: int  # web searches allowed for this question (0 when off)
    # route_question
    standalone_question: str
    route: str
    route_reason: str
    # decompose_question / plan_next_step
    sub_questions: list[dict[str, Any]]  # {id, question, depends_on, follow_up}
    follow_up_added: bool
    plan_action: str  # retrieve | evaluate
    plan_reason: str
    # retrieve_hop
    hops: Annotated[list[dict[str, Any]], append_items]
    rounds: int
    evidence: Annotated[dict[str, dict[str, Any]], merge_evidence]
    # evaluate_evidence / search_web
    evaluation: dict[str, Any]
    web_searches: int
    web_used: bool
    web_query: str
    web_results: list[dict[str, Any]]
    web_error: str
    deadline_hit: bool
    stop_reason: str
    # generate_answer / answer_directly
    answer: str
    answer_evidence: list[dict[str, Any]]
    citations: list[dict[str, Any]]
    # whole run
    trace: Annotated[list[dict[str, Any]], append_items]
    # conversation (kept across questions of a thread)
    messages: Annotated[list[dict[str, str]], append_messages]
    result: dict[str, Any]  # the last answer's full result (set by the runner)


def question_input(question: str, history: list[dict[str, str]], web_budget: int) -> dict[str, Any]:
    """The input of one question: every per-question field reset, the conversation kept."""
    return {
        "question": question,
        "history": list(history),
        "web_budget": web_budget,
        "standalone_question": question,
        "route": "",
        "route_reason": "",
        "sub_questions": [],
        "follow_up_added": False,
        "plan_action": "",
        "plan_reason": "",
        "hops": Overwrite([]),
        "rounds": 0,
        "evidence": Overwrite({}),
        "evaluation": {},
        "web_searches": 0,
        "web_used": False,
        "web_query": "",
        "web_results": [],
        "web_error": "",
        "deadline_hit": False,
        "stop_reason": "",
        "answer": "",
        "answer_evidence": [],
        "citations": [],
        "trace": Overwrite([]),
    }
