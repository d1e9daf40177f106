"""Questions asked while an answer is still being written are queued, shown as queued, and
asked in order once it is written (issue 46, item 6): AppTest on a real knowledge base."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.apptools import assert_no_exception, new_app, texts
from ui import question_queue

NOTES = b"""# Harbour notes

## Cranes
The north crane at Pier Olm lifts at most 40 tonnes and is serviced every Tuesday.

## Tugs
The tug Merrow answers on channel 11; the tug Kestle answers on channel 16.
"""
FIRST = "What does the north crane lift at most?"
HELD = "Which channel does the tug Merrow answer on?"
SECOND = "When is the north crane serviced?"
THIRD = "Which channel does the tug Kestle answer on?"


def queued(at: AppTest, thread_id: str) -> list[str]:
    """The questions the page's session holds for this chat."""
    return question_queue.waiting(cast(question_queue.State, at.session_state), thread_id)


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    done = ingest_bytes(NOTES, "harbour.md", get_store(), groups=["all"],
                        config=get_settings().ingest)  # fmt: skip
    assert done.status == "ingested", done.reason
    return app_data


@pytest.fixture
def held(kb: Path) -> Iterator[tuple[str, threading.Event]]:
    """A saved chat of `local` whose second answer is held after its first step."""
    from ui.services import get_runner
    from ui.streaming import is_answering, stream_ask

    app = get_runner()
    tid = app.ask(FIRST, owner="local").thread_id
    release, kinds = threading.Event(), []

    def held_ask(question: str, *, on_event: Any, **kwargs: Any) -> Any:
        def slow(event: Any) -> None:
            on_event(event)
            release.wait(30)

        return app.ask(question, on_event=slow, **kwargs)

    def consume() -> None:
        for kind, _ in stream_ask(held_ask, HELD, thread_id=tid, owner="local"):
            kinds.append(kind)

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    deadline = time.monotonic() + 30
    while not (kinds and is_answering("local", tid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    yield tid, release
    release.set()
    worker.join(30)


def test_questions_asked_while_answering_are_queued_then_asked_in_order(
    held: tuple[str, threading.Event],
) -> None:
    from ui.services import get_runner
    from ui.streaming import is_answering

    tid, release = held
    at = new_app()
    at.query_params["thread"] = tid
    at.run()
    assert_no_exception(at)
    box = at.chat_input[0]
    assert not box.proto.disabled and "A question you ask now is queued" in texts(at)
    box.set_value(SECOND).run()
    at.chat_input[0].set_value(THIRD).run()
    assert_no_exception(at)
    page = texts(at)
    assert page.count("Queued: asked when the answer before it is written.") == 2
    assert page.index(SECOND) < page.index(THIRD)  # shown in the order asked
    assert queued(at, tid) == [SECOND, THIRD]

    release.set()
    deadline = time.monotonic() + 30
    while is_answering("local", tid) and time.monotonic() < deadline:
        time.sleep(0.05)
    at.run(timeout=120)  # the held answer is saved: the queue is asked, one after the other
    assert_no_exception(at)
    asked = [a.question for a in get_runner().thread_answers(tid, "local")]
    assert asked == [FIRST, HELD, SECOND, THIRD]
    assert queued(at, tid) == []
    assert "Queued:" not in texts(at)


def test_a_queued_question_can_be_removed(held: tuple[str, threading.Event]) -> None:
    tid, _release = held
    at = new_app()
    at.query_params["thread"] = tid
    at.run()
    at.chat_input[0].set_value(SECOND).run()
    at.chat_input[0].set_value(THIRD).run()
    at.button(key=f"unqueue_{tid}_0").click().run()
    assert_no_exception(at)
    assert queued(at, tid) == [THIRD]
    assert SECOND not in texts(at)


def test_the_queue_keeps_each_chat_in_order() -> None:
    state: dict[str, Any] = {}
    question_queue.enqueue(state, "a", "one")
    question_queue.enqueue(state, "b", "other chat")
    question_queue.enqueue(state, "a", "two")
    question_queue.enqueue(state, "a", "  ")  # blank: nothing to ask
    assert question_queue.waiting(state, "a") == ["one", "two"]
    assert question_queue.take_next(state, "a") == "one"
    question_queue.requeue(state, "a", "one")  # could not start yet: first again
    assert question_queue.waiting(state, "a") == ["one", "two"]
    question_queue.drop(state, "a", 1)
    assert question_queue.take_next(state, "a") == "one"
    assert question_queue.take_next(state, "a") is None
    assert question_queue.waiting(state, "b") == ["other chat"]
