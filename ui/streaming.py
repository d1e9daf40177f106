"""Run a blocking `ask` on a worker thread and hand its events and tokens to the page thread.

Streamlit elements may only be touched from the script thread; the runner may call its
callbacks from wherever LangGraph runs a node. A queue keeps the two apart.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from graph.result import QuestionResult

Ask = Callable[..., QuestionResult]


def stream_ask(ask: Ask, question: str, **kwargs: Any) -> Iterator[tuple[str, Any]]:
    """Yields ("event", e) and ("token", text) as they happen, then ("result", result) or
    ("error", exception) exactly once."""
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        try:
            result = ask(
                question,
                on_event=lambda event: inbox.put(("event", event)),
                on_token=lambda text: inbox.put(("token", text)),
                **kwargs,
            )
            inbox.put(("result", result))
        except Exception as exc:  # noqa: BLE001 - handed to the page, which shows it
            inbox.put(("error", exc))

    threading.Thread(target=work, name="hopwise-ask", daemon=True).start()
    while True:
        kind, payload = inbox.get()
        yield kind, payload
        if kind in ("result", "error"):
            return
