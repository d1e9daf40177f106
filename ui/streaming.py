"""Run a blocking `ask` on a worker thread and hand its events and tokens to the page thread.

Streamlit elements may only be touched from the script thread; the runner may call its
callbacks from wherever LangGraph runs a node. A queue keeps the two apart. Every running
answer is registered by (owner, thread id) with its stop signal, so any later run of the page
(after the user clicked something mid-stream) can still see it is running and stop it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from graph.result import QuestionResult
from graph.runner import AnswerStopped, StopSignal

Ask = Callable[..., QuestionResult]
HEARTBEAT_S = 0.25  # how long the page thread waits for news before it may handle a click
ANSWER_RUNNING = (
    "An answer in this chat is still being written: wait for it, or stop it, then ask again."
)

_running: dict[tuple[str, str], StopSignal] = {}  # (owner, thread id) -> its answer's stop
_running_lock = threading.Lock()


class AnswerRunning(RuntimeError):
    """A second answer in a thread whose answer is still running (refused, not started)."""

    def __init__(self) -> None:
        super().__init__(ANSWER_RUNNING)


def stream_ask(
    ask: Ask, question: str, *, thread_id: str, owner: str, **kwargs: Any
) -> Iterator[tuple[str, Any]]:
    """Yields ("event", e) and ("token", text) as they happen, ("heartbeat", None) whenever
    HEARTBEAT_S pass without either (the page touches an element, so Streamlit handles a Stop
    click at once), then exactly once ("result", result), ("stopped", None) after
    stop_answer(owner, thread_id), or ("error", exception) — AnswerRunning, without asking,
    when this thread's answer is still running."""
    key = (owner, thread_id)
    cancel = StopSignal()
    with _running_lock:
        running = _running.get(key)
        refused = running is not None and not running.is_set()
        if not refused:  # a stopped answer still winding down never saves: it holds nothing
            _running[key] = cancel
    if refused:
        yield "error", AnswerRunning()
        return
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        try:
            result = ask(
                question,
                thread_id=thread_id,
                owner=owner,
                cancel=cancel,
                on_event=lambda event: inbox.put(("event", event)),
                on_token=lambda text: inbox.put(("token", text)),
                **kwargs,
            )
            inbox.put(("result", result))
        except AnswerStopped:
            inbox.put(("stopped", None))
        except Exception as exc:  # noqa: BLE001 - handed to the page, which shows it
            inbox.put(("error", exc))
        finally:
            with _running_lock:
                if _running.get(key) is cancel:
                    del _running[key]

    threading.Thread(target=work, name="hopwise-ask", daemon=True).start()
    while True:
        try:
            kind, payload = inbox.get(timeout=HEARTBEAT_S)
        except queue.Empty:
            kind, payload = "heartbeat", None
        yield kind, payload
        if kind in ("result", "stopped", "error"):
            return


def is_answering(owner: str, thread_id: str) -> bool:
    """Whether the owner's answer in this thread is still being worked on (and not yet told to
    stop)."""
    with _running_lock:
        cancel = _running.get((owner, thread_id))
    return cancel is not None and not cancel.is_set()


def stop_answer(owner: str, thread_id: str) -> bool:
    """Tell the owner's running answer in this thread to stop after its current step or token;
    False when none is running or it is already being saved. Nothing of a stopped answer is
    saved."""
    with _running_lock:
        cancel = _running.get((owner, thread_id))
    return cancel is not None and cancel.stop()
