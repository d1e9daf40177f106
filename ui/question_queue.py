"""Questions asked while an answer in the same chat is still being written: kept in the
session, in order, and asked one after the other (never dropped, never asked twice at once).

Pure functions over the session state mapping, so they are tested without Streamlit."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

State = MutableMapping[Any, Any]  # st.session_state, or a dict in tests
QUEUE_KEY = "hopwise_queue"  # [{"thread_id", "question"}], oldest first


def _queue(state: State) -> list[dict[str, str]]:
    items = state.get(QUEUE_KEY)
    if not isinstance(items, list):
        items = state[QUEUE_KEY] = []
    return items


def enqueue(state: State, thread_id: str, question: str) -> None:
    """Keep a question for `thread_id`, after those already waiting."""
    if question.strip():
        _queue(state).append({"thread_id": thread_id, "question": question})


def requeue(state: State, thread_id: str, question: str) -> None:
    """Put a question that could not start yet back at the head of its chat's queue."""
    if question.strip():
        _queue(state).insert(0, {"thread_id": thread_id, "question": question})


def waiting(state: State, thread_id: str) -> list[str]:
    """The questions waiting in this chat, oldest first."""
    return [item["question"] for item in _queue(state) if item["thread_id"] == thread_id]


def take_next(state: State, thread_id: str) -> str | None:
    """Remove and return the oldest question waiting in this chat, or None."""
    items = _queue(state)
    for position, item in enumerate(items):
        if item["thread_id"] == thread_id:
            del items[position]
            return item["question"]
    return None


def drop(state: State, thread_id: str, number: int) -> None:
    """Forget the `number`-th (0-based) question waiting in this chat (the user removed it)."""
    items = _queue(state)
    mine = [i for i, item in enumerate(items) if item["thread_id"] == thread_id]
    if 0 <= number < len(mine):
        del items[mine[number]]
