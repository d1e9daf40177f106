"""Run a blocking `ask` on a worker thread and hand its events and tokens to the page thread.

Streamlit elements may only be touched from the script thread; the runner may call its
callbacks from wherever LangGraph runs a node. A queue keeps the two apart. Every running
answer is registered by thread id with its stop signal, so any later run of the page (after
the user clicked something mid-stream) can still see it is running and stop it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from graph.result import QuestionResult
from graph.runner import AnswerStopped

Ask = Callable[..., QuestionResult]

_running: dict[str, threading.Event] = {}  # thread id -> the stop signal of its answer
_running_lock = threading.Lock()


def stream_ask(
    ask: Ask, question: str, *, thread_id: str, **kwargs: Any
) -> Iterator[tuple[str, Any]]:
    """Yields ("event", e) and ("token", text) as they happen, then ("result", result),
    ("stopped", None) after stop_answer(thread_id), or ("error", exception), exactly once."""
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
    cancel = threading.Event()
    with _running_lock:
        _running[thread_id] = cancel

    def work() -> None:
        try:
            result = ask(
                question,
                thread_id=thread_id,
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
                if _running.get(thread_id) is cancel:
                    del _running[thread_id]

    threading.Thread(target=work, name="hopwise-ask", daemon=True).start()
    while True:
        kind, payload = inbox.get()
        yield kind, payload
        if kind in ("result", "stopped", "error"):
            return


def is_answering(thread_id: str) -> bool:
    """Whether an answer in this thread is still being worked on (and not yet told to stop)."""
    with _running_lock:
        cancel = _running.get(thread_id)
    return cancel is not None and not cancel.is_set()


def stop_answer(thread_id: str) -> bool:
    """Tell the thread's running answer to stop after its current step or token; False when
    none is running. Nothing of a stopped answer is saved."""
    with _running_lock:
        cancel = _running.get(thread_id)
    if cancel is None:
        return False
    cancel.set()
    return True
