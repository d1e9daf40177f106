"""The caller's own threads: list (or search), read with every answer's trace, rename, delete,
and feedback on an answer. Every call names the key's user as the owner, so another user's
thread, like one that does not exist, is a 404."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Query, Response

from graph.conversations import ThreadAccessError
from hopwise.api.errors import ApiError
from hopwise.api.gate import Svc, Who
from hopwise.api.questions import reader_view
from hopwise.api.schemas import (
    THREAD_ID,
    FeedbackEntry,
    FeedbackRequest,
    RenameRequest,
    ThreadDetail,
    ThreadSummary,
)

router = APIRouter(prefix="/api/v1/threads", tags=["threads"])


def checked_id(thread_id: str) -> str:
    """A thread id of the allowed form (anything else is no thread of anyone's: 404)."""
    if not re.fullmatch(THREAD_ID, thread_id):
        raise ThreadAccessError(thread_id)
    return thread_id


def summary(row: dict[str, Any]) -> ThreadSummary:
    return ThreadSummary(
        thread_id=str(row["thread_id"]),
        title=str(row.get("title") or ""),
        updated_at=float(row.get("updated_at") or 0.0),
        answers=int(row.get("answers") or 0),
    )


@router.get("", response_model=list[ThreadSummary], summary="Your threads, newest first")
def list_threads(
    who: Who,
    service: Svc,
    search: str = Query("", max_length=200, description="Only threads whose text holds this."),
) -> list[ThreadSummary]:
    """With `search`, the threads whose title, questions or answers contain it (an answer
    withdrawn since, because you may no longer read its document, is not a match)."""
    runner = service.runner
    if search.strip():
        rows = runner.search_threads(who.user.name, search, groups=who.user.groups)
    else:
        rows = runner.list_threads(owner=who.user.name)
    return [summary(r) for r in rows]


@router.get("/{thread_id}", response_model=ThreadDetail, summary="One thread with its traces")
def read_thread(thread_id: str, who: Who, service: Svc) -> ThreadDetail:
    """Every answer as `hopwise ask --json` shows it (trace included), minus what you may no
    longer read; and your feedback on them."""
    runner = service.runner
    thread_id = checked_id(thread_id)
    answers = runner.thread_answers(thread_id, owner=who.user.name, groups=who.user.groups)
    row = next((r for r in runner.list_threads(who.user.name) if r["thread_id"] == thread_id), {})
    feedback = runner.thread_feedback(thread_id, who.user.name)
    return ThreadDetail(
        **summary({"thread_id": thread_id, **row}).model_dump(),
        results=[reader_view(a, who) for a in answers],
        feedback=[
            FeedbackEntry(
                answer_index=index,
                rating=int(entry.get("rating") or 0),
                comment=str(entry.get("comment") or ""),
                created_at=float(entry.get("created_at") or 0.0),
            )
            for index, entry in sorted(feedback.items())
        ],
    )


@router.patch("/{thread_id}", response_model=ThreadSummary, summary="Rename a thread")
def rename_thread(
    thread_id: str,
    body: RenameRequest,
    who: Who,
    service: Svc,
) -> ThreadSummary:
    runner = service.runner
    try:
        title = runner.rename_thread(checked_id(thread_id), who.user.name, body.title)
    except ValueError as exc:
        raise ApiError(422, f"title: {exc}") from exc
    row = next((r for r in runner.list_threads(who.user.name) if r["thread_id"] == thread_id), {})
    return summary({**row, "thread_id": thread_id, "title": title})


@router.delete("/{thread_id}", status_code=204, summary="Delete a thread everywhere")
def delete_thread(thread_id: str, who: Who, service: Svc) -> Response:
    """Its answers, traces, feedback and index row."""
    service.runner.delete_thread(checked_id(thread_id), who.user.name)
    return Response(status_code=204)


@router.put(
    "/{thread_id}/answers/{index}/feedback",
    status_code=204,
    summary="Rate an answer (up / down, a comment), or withdraw the rating",
)
def give_feedback(
    thread_id: str,
    index: int,
    body: FeedbackRequest,
    who: Who,
    service: Svc,
) -> Response:
    """`index` is 0-based; the answer, question and trace are stored with the rating as you
    saw them, for the Admin page's feedback list."""
    rating = None if body.rating is None else int(body.rating == "up")
    service.runner.give_feedback(
        checked_id(thread_id),
        index,
        who.user.name,
        rating=rating,
        comment=body.comment,
        groups=who.user.groups,
    )
    return Response(status_code=204)
