"""Running one question for an API caller: `Hopwise.ask` on a worker thread (at most
HOPWISE_API_CONCURRENT_QUESTIONS at once per process), its steps and tokens handed to the
event loop as they happen, and the result as the caller may see it.

The REST route, the OpenAI-compatible route and the MCP tools all go through `ask_events`, so
each carries the caller's groups into every search and saves into the caller's own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from graph.result import QuestionResult
from graph.runner import AnswerStopped, StopSignal
from hopwise.api.errors import ApiError
from hopwise.api.service import ApiService
from hopwise.api_keys import Caller

KEEPALIVE_S = 15.0  # a stream with nothing new sends a comment this often (proxies close idle ones)
ANSWER_RUNNING = "an answer in this thread is still being written; wait for it, then ask again"


def reader_view(result: QuestionResult, caller: Caller) -> QuestionResult:
    """The result as this caller may see it: raw scores and a failed web search's exception
    text only for admins and the local single user, as on the pages."""
    if caller.sees_scores:
        return result
    return result.without_scores().without_web_error_details()


def check_question(service: ApiService, question: str) -> str:
    """The question stripped, or a 422 in words (empty, or longer than the setting)."""
    text = question.strip()
    if not text:
        raise ApiError(422, "question: the question is empty")
    limit = service.settings.api_max_question_chars
    if len(text) > limit:
        raise ApiError(
            422, f"question: the question is longer than {limit} characters ({len(text)})"
        )
    return text


def step_message(event: Mapping[str, Any]) -> str:
    """What a finished step did, in words (no scores, no passages: those are in the result)."""
    node, details = str(event.get("node", "")), event.get("details") or {}
    if node == "route_question":
        return f"Routed the question ({details.get('route') or 'complex'})"
    if node == "decompose_question":
        count = len(details.get("sub_questions") or [])
        return f"Split the question into {count} sub-question{'s' if count != 1 else ''}"
    if node == "retrieve_hop":
        asked = [str(h.get("sub_question", "")) for h in details.get("hops") or []]
        return "Searched the documents: " + "; ".join(f"“{q}”" for q in asked if q)
    if node == "plan_next_step":
        return f"Planned the next step: {details.get('action') or 'evaluate'}"
    if node == "evaluate_evidence":
        return "The evidence is enough" if details.get("enough") else "Evidence is missing"
    return {
        "answer_directly": "Answered directly",
        "search_web": "Searched the web",
        "generate_answer": "Wrote the answer",
        "check_claims": "Checked every claim against its sources",
    }.get(node, node)


def step_payload(event: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "node": str(event.get("node", "")),
        "mode": str(event.get("mode", "")),
        "duration_ms": round(float(event.get("duration_ms") or 0.0), 1),
        "message": step_message(event),
    }


class Running:
    """(owner, thread) pairs whose answer is being written in this process."""

    def __init__(self) -> None:
        self._held: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def claim(self, key: tuple[str, str]) -> bool:
        with self._lock:
            if key in self._held:
                return False
            self._held.add(key)
            return True

    def release(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._held.discard(key)


RUNNING = Running()


def start_thread(service: ApiService, caller: Caller, thread_id: str | None) -> str:
    """The thread to answer in: the caller's own existing one (404 otherwise), or a new id."""
    if thread_id is None:
        return uuid.uuid4().hex
    service.runner.threads.check(thread_id, caller.user.name)  # ThreadAccessError: 404
    return thread_id


async def ask_events(
    service: ApiService,
    caller: Caller,
    question: str,
    *,
    thread_id: str,
    web: bool = True,
    history: Sequence[dict[str, str]] | None = None,
    save: bool = True,
) -> AsyncIterator[tuple[str, Any]]:
    """Yields ("step", payload) and ("token", text) as they happen, ("keepalive", None) when
    nothing happened for KEEPALIVE_S, then once ("result", QuestionResult as the caller may see
    it). Errors are raised (ApiError and the runner's own). Closing the iterator early (the
    client went away) stops the answer at its next step or token; nothing of it is saved."""
    runner = service.runner
    key = (caller.user.name, thread_id)
    if not RUNNING.claim(key):
        raise ApiError(409, ANSWER_RUNNING)
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    cancel = StopSignal()

    def put(kind: str, payload: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the server shut its loop: no one to tell
            loop.call_soon_threadsafe(inbox.put_nowait, (kind, payload))

    def work() -> None:
        try:
            with service.question_slots:
                result = runner.ask(
                    question,
                    groups=caller.user.groups,
                    thread_id=thread_id,
                    history=history,
                    web=web,
                    owner=caller.user.name,
                    cancel=cancel,
                    save=save,
                    on_event=lambda event: put("step", step_payload(event)),
                    on_token=lambda text: put("token", text),
                )
            put("result", result)
        except AnswerStopped:
            put("stopped", None)
        except BaseException as exc:  # noqa: BLE001 - handed to the request, which answers it
            put("error", exc)
        finally:
            RUNNING.release(key)

    worker = threading.Thread(target=work, name="hopwise-api-ask", daemon=True)
    try:
        worker.start()
    except BaseException:
        RUNNING.release(key)
        raise
    finished = False
    try:
        while True:
            try:
                kind, payload = await asyncio.wait_for(inbox.get(), KEEPALIVE_S)
            except TimeoutError:
                yield "keepalive", None
                continue
            if kind == "error":
                finished = True
                raise payload
            if kind == "stopped":
                finished = True
                raise ApiError(499, "the answer was stopped")
            if kind == "result":
                finished = True
                yield "result", reader_view(payload, caller)
                return
            yield kind, payload
    finally:
        if not finished:
            cancel.stop()  # the client left: stop at the next step, save nothing


async def ask_once(
    service: ApiService,
    caller: Caller,
    question: str,
    *,
    thread_id: str,
    web: bool = True,
    history: Sequence[dict[str, str]] | None = None,
    save: bool = True,
) -> QuestionResult:
    """The whole answer, without the steps."""
    async for kind, payload in ask_events(
        service, caller, question, thread_id=thread_id, web=web, history=history, save=save
    ):
        if kind == "result":
            return payload  # type: ignore[no-any-return]
    raise ApiError(500, "the answer ended without a result")
