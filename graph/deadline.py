"""The whole-question deadline as a hard wall for model calls.

The runner sets it for one question (a context variable, so concurrent questions each see
their own); the LLM reasoner bounds every call by it. Waiting happens on a queue or a join
with a timeout, never inside a read that a trickling server could keep alive forever.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")
_DEADLINE: ContextVar[float | None] = ContextVar("hopwise_question_deadline", default=None)
_DONE = object()


class WallClockTimeout(TimeoutError):
    """A call or a stream ran past its wall-clock limit."""


@contextlib.contextmanager
def question_deadline(at: float) -> Iterator[None]:
    """Within the block, model calls end by `at` (time.monotonic())."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current_deadline() -> float | None:
    return _DEADLINE.get()


def deadline_passed() -> bool:
    deadline = _DEADLINE.get()
    return deadline is not None and time.monotonic() >= deadline


def stop_at(limit_s: float) -> float:
    """When a call that may take `limit_s` must end: that, or the question's deadline."""
    end = time.monotonic() + limit_s
    deadline = _DEADLINE.get()
    return end if deadline is None else min(end, deadline)


def run_bounded(fn: Callable[[], T], until: float, name: str = "hopwise-call") -> T:
    """fn() in a daemon thread; WallClockTimeout when it is not done by `until`."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread below
            box["error"] = exc

    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    worker.join(max(0.0, until - time.monotonic()))
    if worker.is_alive():
        raise WallClockTimeout("no reply before the deadline")
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def iterate_bounded(items: Callable[[], Iterable[T]], until: float) -> Iterator[T]:
    """The items of a (streaming) iterable, pulled in a daemon thread; WallClockTimeout as soon
    as `until` passes, even while the producer is blocked mid-item."""
    inbox: queue.Queue[Any] = queue.Queue()  # unbounded: the producer never blocks on it
    stop = threading.Event()

    def pull() -> None:
        try:
            for item in items():
                if stop.is_set():
                    return
                inbox.put(item)
            inbox.put(_DONE)
        except BaseException as exc:  # handed to the consumer
            inbox.put(exc)

    threading.Thread(target=pull, name="hopwise-stream", daemon=True).start()
    try:
        while True:
            left = until - time.monotonic()
            if left <= 0:
                raise WallClockTimeout("the reply did not finish before the deadline")
            try:
                item = inbox.get(timeout=left)
            except queue.Empty:
                continue
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
