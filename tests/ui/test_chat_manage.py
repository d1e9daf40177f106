"""Managing chats under AppTest on a real knowledge base (Milvus Lite, offline reasoning):
rename, delete (traces gone), search, copy, regenerate, stop, feedback (and the Admin list with
its CSV), Markdown export and `?thread=` links."""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.conversations import TITLE_CHARS
from tests.ui.apptools import (
    ADMIN_PASSWORD,
    assert_no_exception,
    download_links,
    fetch_link,
    new_app,
    texts,
)
from ui.auth import User, local_user
from ui.files import Refused

HANDBOOK = b"""# Field handbook

## Beacons
The orange beacon on the Varkel ridge is refilled every nine days by the Tamsin crew.

## Radios
Handheld radios use channel 14 for the ridge and channel 3 for the valley.
"""
USERS = {
    "uma": {"password": "uma-pw", "groups": []},
    "ivo": {"password": "ivo-pw", "groups": []},
}
BEACON = "How often is the orange beacon refilled?"


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    settings, store = get_settings(), get_store()
    done = ingest_bytes(HANDBOOK, "handbook.md", store, groups=["all"], config=settings.ingest)
    assert done.status == "ingested", done.reason
    return app_data


def runner():
    from ui.services import get_runner

    return get_runner()


def ask(at, question: str):
    at.chat_input[0].set_value(question).run()
    assert_no_exception(at)
    return at


def assistant_texts(at) -> list[str]:
    return [
        "\n".join(str(m.value) for m in message.markdown)
        for message in at.chat_message
        if message.name == "assistant"
    ]


def chat_titles(at) -> list[str]:
    return [b.label for b in at.sidebar.button if b.key and b.key.startswith("thread_")]


def sign_in(at, name: str):
    at.sidebar.text_input[0].set_value(name)
    at.sidebar.text_input[1].set_value(f"{name}-pw")
    at.sidebar.button[0].click().run()
    assert_no_exception(at)
    assert f"Signed in as **{name}**" in texts(at)
    return at


def open_thread(at) -> str:
    return str(at.session_state["hopwise_thread"])


def test_rename_sticks_and_delete_removes_the_chat_and_its_traces(kb: Path) -> None:
    at = ask(new_app().run(), BEACON)
    tid = open_thread(at)
    assert "How often is the orange beacon refilled?" in chat_titles(at)
    long = "Beacon upkeep on the Varkel ridge, with the refill rota of the Tamsin crew and radios"
    at.sidebar.text_input(key=f"title_{tid}").set_value(long)
    next(b for b in at.sidebar.button if b.label == "Rename").click().run()
    [shown] = chat_titles(at)
    assert len(shown) <= TITLE_CHARS and shown.endswith("…")  # the sidebar clips it...
    assert at.sidebar.text_input(key=f"title_{tid}").value == long  # ...the rename field does not
    at.sidebar.text_input(key=f"title_{tid}").set_value("Beacon   upkeep")
    next(b for b in at.sidebar.button if b.label == "Rename").click().run()
    assert_no_exception(at)
    assert "Beacon upkeep" in chat_titles(at) and BEACON not in chat_titles(at)
    ask(at, "Which channel do the radios use for the ridge?")
    assert "Beacon upkeep" in chat_titles(at)  # a later answer does not undo the rename
    assert [t["title"] for t in runner().list_threads("local") if t["thread_id"] == tid] == [
        "Beacon upkeep"
    ]

    at.sidebar.button(key=f"delete_{tid}").click().run()
    assert "are removed for good" in texts(at)
    assert len(runner().thread_answers(tid, "local")) == 2  # nothing deleted before the yes
    at.button(key="confirm_delete").click().run()
    assert_no_exception(at)
    assert "Chat deleted." in texts(at)
    assert "Beacon upkeep" not in chat_titles(at) and not at.chat_message
    assert open_thread(at) != tid and "thread" not in at.query_params
    for table in ("checkpoints", "writes", "hopwise_threads"):
        count = runner().database.fetch(f"SELECT count(*) FROM {table} WHERE thread_id = ?", (tid,))
        assert count[0][0] == 0, table


def test_delete_can_be_cancelled(kb: Path) -> None:
    at = ask(new_app().run(), BEACON)
    tid = open_thread(at)
    at.sidebar.button(key=f"delete_{tid}").click().run()
    at.button(key="cancel_delete").click().run()
    assert "are removed for good" not in texts(at)
    assert len(runner().thread_answers(tid, "local")) == 1 and len(assistant_texts(at)) == 1


def test_search_filters_chats_by_title_and_by_answer_text(kb: Path) -> None:
    at = sign_in(new_app(users=USERS).run(), "uma")
    ask(at, BEACON)
    at.sidebar.button(key="new_chat").click().run()
    ask(at, "Which channel do the radios use for the valley?")
    assert len(chat_titles(at)) == 2
    at.sidebar.text_input(key="chat_search").set_value("beacon").run()
    assert chat_titles(at) == [BEACON]
    at.sidebar.text_input(key="chat_search").set_value("Tamsin").run()  # only in the answer
    assert chat_titles(at) == [BEACON]
    at.sidebar.text_input(key="chat_search").set_value("no such words").run()
    assert chat_titles(at) == [] and "No chat matches your search" in texts(at)
    at.sidebar.text_input(key="chat_search").set_value("").run()
    assert len(chat_titles(at)) == 2

    ivo = sign_in(new_app(users=USERS).run(), "ivo")  # another user searches: none of uma's
    ivo.sidebar.text_input(key="chat_search").set_value("beacon").run()
    assert chat_titles(ivo) == []


def spy_on_route(monkeypatch: pytest.MonkeyPatch) -> list[list[dict[str, str]]]:
    """The history of every routing from now on (the app's reasoner, wrapped)."""
    reasoner, seen = runner().reasoner, []
    route = reasoner.route

    def spy(question: str, history: Any) -> Any:
        seen.append(list(history))
        return route(question, history)

    monkeypatch.setattr(reasoner, "route", spy)
    return seen


def test_copy_shows_the_answer_as_plain_text_and_regenerate_follows(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = ask(new_app().run(), BEACON)
    [first] = assistant_texts(at)
    assert "nine days" in first
    saved = runner().thread_answers(open_thread(at), "local")[0].answer
    assert [c.value.strip() for c in at.code] == [
        saved.strip()
    ]  # st.code carries Streamlit's copy button
    histories = spy_on_route(monkeypatch)
    at.button(key=f"regenerate_{open_thread(at)}_0").click().run()
    assert_no_exception(at)
    assert histories == [[]]  # the answer being replaced is not given as history
    answers = runner().thread_answers(open_thread(at), "local")
    assert [a.question for a in answers] == [BEACON, BEACON]
    assert len(assistant_texts(at)) == 2 and "nine days" in assistant_texts(at)[1]
    regenerate = [b.key for b in at.button if b.key and b.key.startswith("regenerate_")]
    assert regenerate == [f"regenerate_{open_thread(at)}_1"]  # only on the last answer


def test_feedback_is_stored_and_listed_for_the_admin_with_a_csv(kb: Path) -> None:
    at = sign_in(new_app(users=USERS).run(), "uma")
    ask(at, BEACON)
    tid = open_thread(at)
    assert BEACON in fetch_link(at, "Export this chat", User("uma", ("all",))).data.decode()
    for other in (None, User("ivo", ("all",))):  # the link is uma's: nobody else's session
        with pytest.raises(Refused):
            fetch_link(at, "Export this chat", other)
    at.feedback[0].set_value(0).run()  # thumbs down
    assert_no_exception(at)
    [entry] = [e for e in runner().all_feedback() if e["thread_id"] == tid]
    assert entry["rating"] == 0 and entry["owner"] == "uma" and entry["question"] == BEACON
    assert "nine days" in entry["answer"] and '"retrieve_hop"' in entry["trace"]
    at.button(key=f"comment_open_feedback_{tid}_0").click().run()
    at.text_area(key=f"comment_feedback_{tid}_0").set_value("=cite the crew's roster too")
    next(b for b in at.button if b.label == "Send").click().run()
    assert_no_exception(at)
    assert "your feedback is saved" in texts(at)
    assert not at.text_area  # the comment dialog closed
    [entry] = [e for e in runner().all_feedback() if e["thread_id"] == tid]
    assert entry["comment"] == "=cite the crew's roster too" and entry["rating"] == 0

    admin = new_app().run()  # the local operator, who has the admin password
    admin.switch_page("app_pages/admin.py").run()
    admin.text_input[0].set_value(ADMIN_PASSWORD)
    admin.button[0].click().run()
    assert_no_exception(admin)
    table = next(d.value for d in admin.dataframe if "comment" in d.value.columns)
    assert list(table["comment"]).count("=cite the crew's roster too") == 1
    assert set(table["user"]) >= {"uma"}
    admin.selectbox(key="feedback_rating").set_value("Up").run()
    table = next(d.value for d in admin.dataframe if "comment" in d.value.columns)
    assert "=cite the crew's roster too" not in list(table["comment"])
    admin.selectbox(key="feedback_rating").set_value("Down").run()
    admin.text_input(key="feedback_text").set_value("ROSTER").run()
    with pytest.raises(Refused):  # the same link for a tab without the admin unlock
        fetch_link(admin, "Export CSV", local_user())
    got = fetch_link(admin, "Export CSV", local_user(), admin=True)
    assert got.file_name == "hopwise-feedback.csv" and got.mime == "text/csv"
    rows = list(csv.DictReader(io.StringIO(got.data.decode())))
    assert [(r["owner"], r["rating"], r["question"]) for r in rows] == [("uma", "down", BEACON)]
    assert rows[0]["comment"] == "'=cite the crew's roster too"  # no formula in a spreadsheet
    assert '"retrieve_hop"' in rows[0]["trace"]


def test_only_the_owner_may_give_feedback(kb: Path) -> None:
    from graph.conversations import ThreadAccessError

    mine = runner().ask(BEACON, owner="uma")
    with pytest.raises(ThreadAccessError):
        runner().give_feedback(mine.thread_id, 0, "ivo", rating=1)


def test_export_is_the_conversation_as_markdown(kb: Path) -> None:
    at = ask(new_app().run(), BEACON)
    ask(at, "Which channel do the radios use for the ridge?")
    name = "hopwise-chat-how-often-is-the-orange-beacon-refilled.md"
    assert ("Export this chat", name) in [(label, n) for label, n, _ in download_links(at)]
    got = fetch_link(at, "Export this chat", local_user())
    assert got.file_name == name and got.mime == "text/markdown"
    text = got.data.decode()
    assert text.startswith("# How often is the orange beacon refilled?")
    assert "## 1. How often is the orange beacon refilled?" in text
    assert "## 2. Which channel do the radios use for the ridge?" in text
    assert "nine days" in text and "channel 14 for the ridge" in text.replace("**", "")
    assert "channel 3 for the valley" not in text.split("## 2.")[0]  # each answer in its place
    assert "- **[1]** handbook.md · Field handbook > Beacons" in text


def test_a_thread_link_opens_the_owners_chat_and_nobody_elses(kb: Path) -> None:
    theirs = runner().ask(BEACON, owner="ivo")
    uma = new_app(users=USERS)
    uma.query_params["thread"] = theirs.thread_id
    sign_in(uma.run(), "uma")
    assert "That chat was not found, or you have no access to it." in texts(uma)
    assert "nine days" not in "\n".join(assistant_texts(uma)) and not uma.chat_message
    assert "thread" not in uma.query_params

    ivo = new_app(users=USERS)
    ivo.query_params["thread"] = theirs.thread_id
    sign_in(ivo.run(), "ivo")
    assert "not found" not in texts(ivo)
    assert len(assistant_texts(ivo)) == 1 and "nine days" in assistant_texts(ivo)[0]
    assert ivo.query_params["thread"] == theirs.thread_id
    ivo.sidebar.button(key="new_chat").click().run()
    assert not ivo.chat_message and "thread" not in ivo.query_params  # a new chat: no link

    at = ask(new_app().run(), BEACON)
    assert at.query_params["thread"] == open_thread(at)  # the URL names the open chat


@pytest.fixture
def held_answer(kb: Path) -> Iterator[tuple[str, threading.Event, list[str]]]:
    """An answer in a saved thread of `local`, held after its first step until released; its
    stream's kinds are collected."""
    from ui.streaming import is_answering, stream_ask

    app = runner()
    tid = app.ask(BEACON, owner="local").thread_id
    release, kinds = threading.Event(), []

    def held_ask(question: str, *, on_event: Any, **kwargs: Any) -> Any:
        def slow(event: Any) -> None:
            on_event(event)
            release.wait(30)

        return app.ask(question, on_event=slow, **kwargs)

    def consume() -> None:
        for kind, _ in stream_ask(held_ask, "Which channel?", thread_id=tid, owner="local"):
            kinds.append(kind)

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    deadline = time.monotonic() + 30
    while not (kinds and is_answering("local", tid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    yield tid, release, kinds
    release.set()
    worker.join(30)


def test_stop_ends_a_running_answer_and_saves_nothing(
    held_answer: tuple[str, threading.Event, list[str]],
) -> None:
    tid, release, kinds = held_answer
    at = new_app()
    at.query_params["thread"] = tid
    at.run()
    assert_no_exception(at)
    assert "Still answering your last question" in texts(at)
    assert not at.chat_input[0].proto.disabled  # another question waits its turn (queued)
    at.button(key="stop_running").click().run()
    assert_no_exception(at)
    assert "that answer was not saved" in texts(at)
    release.set()
    deadline = time.monotonic() + 30
    while kinds[-1:] != ["stopped"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert kinds[-1] == "stopped" and "result" not in kinds
    assert [a.question for a in runner().thread_answers(tid, "local")] == [BEACON]
    at.run()
    assert "Still answering" not in texts(at) and not at.chat_input[0].proto.disabled
    assert len(assistant_texts(at)) == 1


def test_a_second_answer_in_a_running_thread_is_refused_and_the_first_still_stops(
    held_answer: tuple[str, threading.Event, list[str]],
) -> None:
    from ui.streaming import ANSWER_RUNNING, AnswerRunning, stop_answer, stream_ask

    tid, release, kinds = held_answer
    asked: list[str] = []
    second = list(
        stream_ask(lambda q, **_: asked.append(q), "Again?", thread_id=tid, owner="local")
    )
    assert [k for k, _ in second] == ["error"] and isinstance(second[0][1], AnswerRunning)
    assert str(second[0][1]) == ANSWER_RUNNING and asked == []  # refused, never asked
    assert stop_answer("someone else", tid) is False  # another owner's stop reaches nothing
    deadline = time.monotonic() + 5
    while "heartbeat" not in kinds and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "heartbeat" in kinds  # the page thread wakes while the answer is held
    assert stop_answer("local", tid) is True  # the first answer's stop signal is intact
    release.set()
    deadline = time.monotonic() + 30
    while kinds[-1:] != ["stopped"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert kinds[-1] == "stopped"
    assert [a.question for a in runner().thread_answers(tid, "local")] == [BEACON]


def test_a_malformed_event_costs_its_status_label_not_the_answer(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = runner()
    ask_for_real, junk_sent = app.ask, []

    def ask_with_junk(question: str, *, on_event: Any, **kwargs: Any) -> Any:
        junk_sent.append(question)
        on_event({"node": 7, "duration_ms": "slow"})  # not a TraceEvent
        on_event("junk")
        return ask_for_real(question, on_event=on_event, **kwargs)

    monkeypatch.setattr(app, "ask", ask_with_junk)
    at = ask(new_app().run(), BEACON)  # no exception shown
    assert junk_sent == [BEACON]
    assert "nine days" in assistant_texts(at)[0] and "could not be answered" not in texts(at)


def test_a_trace_link_without_an_answer_number_is_checked_too(kb: Path) -> None:
    theirs = runner().ask(BEACON, owner="ivo")
    for name, allowed in (("uma", False), ("ivo", True)):
        at = sign_in(new_app(users=USERS).run(), name)
        at.switch_page("app_pages/trace.py")
        at.query_params["thread"] = theirs.thread_id  # no &answer=
        at.run()
        assert ("That chat was not found, or you have no access to it." in texts(at)) != allowed
        if allowed:
            assert at.selectbox(key="trace_thread").value == theirs.thread_id
        else:
            assert at.query_params.get("thread") != theirs.thread_id  # never carried on
