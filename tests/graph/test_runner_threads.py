"""The SQLite-backed runner under concurrent questions (Streamlit serves sessions on threads)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from graph.conversations import TITLE_CHARS, ThreadAccessError, chat_title
from graph.runner import AnswerStopped, StopSignal
from hopwise.app import Hopwise, open_checkpointer
from hopwise.settings import Settings
from tests.fakes.reasoner import ScriptedReasoner
from tests.fakes.retriever import KeywordRetriever, sample_chunks


def test_concurrent_questions_and_threads_on_one_sqlite_file(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, web_search=False, llm_economy=False)  # type: ignore[call-arg]
    app = Hopwise(
        settings, KeywordRetriever(sample_chunks()), ScriptedReasoner(),
        None, open_checkpointer(settings.checkpoint_path),
    )  # fmt: skip
    questions = [f"Who directed Inception? ({i})" for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda q: app.ask(q, thread_id=f"user:{q[-2]}"), questions))
    assert all(r.citations for r in results)
    threads = app.list_threads()
    assert len(threads) == 8 and all(t["answers"] == 1 for t in threads)
    follow = app.ask("And where was he born?", thread_id="user:3")
    assert len(app.thread_answers("user:3")) == 2 and follow.thread_id == "user:3"
    app.close()
    reopened = Hopwise(
        settings,
        KeywordRetriever([]),
        ScriptedReasoner(),
        None,
        open_checkpointer(settings.checkpoint_path),
    )
    assert {t["thread_id"] for t in reopened.list_threads()} == {f"user:{i}" for i in range(8)}
    assert reopened.thread_answers("user:3")[1].question == "And where was he born?"
    reopened.close()


# ---------------------------------------------------------------- managing chats


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Hopwise]:
    settings = Settings(data_dir=tmp_path, web_search=False, llm_economy=False)  # type: ignore[call-arg]
    runner = Hopwise(
        settings, KeywordRetriever(sample_chunks()), ScriptedReasoner(),
        None, open_checkpointer(settings.checkpoint_path),
    )  # fmt: skip
    yield runner
    runner.close()


def rows(app: Hopwise, table: str, thread_id: str) -> int:
    found = app.database.fetch(f"SELECT count(*) FROM {table} WHERE thread_id = ?", (thread_id,))
    return int(found[0][0])


def title_of(app: Hopwise, thread_id: str, owner: str = "ana") -> str:
    return next(t["title"] for t in app.list_threads(owner) if t["thread_id"] == thread_id)


def test_chat_title_is_short_and_cut_at_a_word() -> None:
    long = "Which   supplier delivers the turbines for the northern wind park and when is it due?"
    title = chat_title(long)
    assert len(title) <= TITLE_CHARS and title.endswith("…") and "  " not in title
    words = " ".join(long.split())
    assert words.startswith(title[:-1] + " ")  # whole words only, then the ellipsis
    assert chat_title("短" * 60) == "短" * (TITLE_CHARS - 1) + "…"  # no spaces: cut at a char
    assert chat_title("  Who directed it?\n") == "Who directed it?"


def test_a_greeting_names_the_chat_only_until_a_real_question_and_a_rename_sticks(
    app: Hopwise,
) -> None:
    first = app.ask("hello", thread_id="t", owner="ana")
    assert first.route == "simple" and title_of(app, "t") == "hello"
    app.ask("Who directed Inception?", thread_id="t", owner="ana")
    assert title_of(app, "t") == "Who directed Inception?"
    app.ask("Where was the director of Inception born?", thread_id="t", owner="ana")
    assert title_of(app, "t") == "Who directed Inception?"  # the first real question stays

    assert app.rename_thread("t", "ana", "  Nolan   notes ") == "Nolan notes"
    app.ask("thanks", thread_id="t", owner="ana")
    assert title_of(app, "t") == "Nolan notes"
    with pytest.raises(ValueError):
        app.rename_thread("t", "ana", "   ")
    with pytest.raises(ThreadAccessError):
        app.rename_thread("t", "bob", "mine now")
    with pytest.raises(ThreadAccessError):
        app.rename_thread("missing", "ana", "x")
    assert title_of(app, "t") == "Nolan notes"


def test_delete_removes_the_thread_its_checkpoints_writes_and_feedback(app: Hopwise) -> None:
    app.ask("Who directed Inception?", thread_id="gone", owner="ana")
    app.ask("Who directed Inception?", thread_id="kept", owner="ana")
    app.give_feedback("gone", 0, "ana", rating=1)
    assert rows(app, "checkpoints", "gone") and rows(app, "hopwise_feedback", "gone")
    with pytest.raises(ThreadAccessError):
        app.delete_thread("gone", "bob")  # someone else's: refused, nothing removed
    assert rows(app, "checkpoints", "gone")

    app.delete_thread("gone", "ana")
    for table in ("checkpoints", "writes", "hopwise_threads", "hopwise_turns", "hopwise_feedback"):
        assert rows(app, table, "gone") == 0, table
    assert [t["thread_id"] for t in app.list_threads("ana")] == ["kept"]
    assert rows(app, "checkpoints", "kept")
    with pytest.raises(ThreadAccessError):
        app.thread_answers("gone", "ana")
    with pytest.raises(ThreadAccessError):
        app.delete_thread("gone", "ana")  # the same answer as for any missing chat


def test_search_finds_titles_questions_and_answers_of_the_owners_chats_only(
    app: Hopwise,
) -> None:
    app.ask("Who directed Inception?", thread_id="a1", owner="ana")
    app.ask("Where was he born?", thread_id="a1", owner="ana")
    app.ask("What is 100% of nothing_at all?", thread_id="a2", owner="ana")
    app.ask("Who directed Inception?", thread_id="b1", owner="bob")

    def found(text: str, owner: str = "ana") -> list[str]:
        return [t["thread_id"] for t in app.search_threads(owner, text, ("all",))]

    assert found("INCEPTION") == ["a1"]  # the title, any case
    assert found("born") == ["a1"]  # a later question
    assert found("London") == ["a1"]  # an answer's text
    assert found("100%") == ["a2"] and found("g_a") == ["a2"]  # LIKE wildcards are literal
    assert found("0%") == ["a2"] and found("_") == ["a2"]
    assert found("inception", "bob") == ["b1"]
    assert found("nothing here at all") == []
    assert found("  ") == ["a2", "a1"]  # no text: every chat of the owner, newest first


def test_feedback_is_stored_with_the_answer_and_its_trace_for_the_owner_only(
    app: Hopwise,
) -> None:
    result = app.ask("Who directed Inception?", thread_id="t", owner="ana")
    app.give_feedback("t", 0, "ana", rating=0, comment="  too short ")
    [entry] = app.all_feedback()
    assert entry["owner"] == "ana" and entry["rating"] == 0 and entry["comment"] == "too short"
    assert entry["question"] == "Who directed Inception?" and entry["answer"] == result.answer
    assert json.loads(entry["trace"])["trace"] == result.to_json()["trace"]
    app.give_feedback("t", 0, "ana", rating=1)  # changing one's mind replaces the entry
    assert [e["rating"] for e in app.all_feedback()] == [1]
    assert app.thread_feedback("t", "ana")[0]["rating"] == 1

    for bad in (
        lambda: app.give_feedback("t", 0, "bob", rating=1),
        lambda: app.give_feedback("t", 1, "ana", rating=1),  # no such answer
        lambda: app.give_feedback("missing", 0, "ana", rating=1),
        lambda: app.thread_feedback("t", "bob"),
    ):
        with pytest.raises(ThreadAccessError):
            bad()
    with pytest.raises(ValueError):
        app.give_feedback("t", 0, "ana", rating=5)
    assert len(app.all_feedback()) == 1


def test_a_stopped_answer_is_not_saved_and_a_new_chat_leaves_no_trace(app: Hopwise) -> None:
    stop = threading.Event()
    seen: list[str] = []

    def after_step(event: dict[str, object]) -> None:
        seen.append(str(event["node"]))
        stop.set()  # the user presses Stop while the first step is reported

    with pytest.raises(AnswerStopped):
        app.ask(
            "Who directed Inception?",
            thread_id="new",
            owner="ana",
            on_event=after_step,
            cancel=stop,
        )
    assert seen == ["route_question"]  # no step ran after the stop
    assert rows(app, "checkpoints", "new") == 0 and app.list_threads("ana") == []

    app.ask("Who directed Inception?", thread_id="old", owner="ana")
    with pytest.raises(AnswerStopped):
        app.ask("Where was he born?", thread_id="old", owner="ana", cancel=stop)  # set already
    [kept] = app.thread_answers("old", "ana")
    assert kept.question == "Who directed Inception?" and app.list_threads("ana")[0]["answers"] == 1
    follow = app.ask("Where was he born?", thread_id="old", owner="ana")
    assert "London" in follow.answer and len(app.thread_answers("old", "ana")) == 2


def saved_rows(app: Hopwise, thread_id: str) -> tuple[int, int]:
    return rows(app, "checkpoints", thread_id), rows(app, "writes", thread_id)


@pytest.mark.parametrize("stop_after", ["route_question", "generate_answer"])
def test_a_stop_in_an_existing_chat_leaves_its_checkpoints_as_they_were(
    app: Hopwise, stop_after: str
) -> None:
    """Stopped mid-run or after the last step (before the save): the thread is untouched."""
    app.ask("Who directed Inception?", thread_id="old", owner="ana")
    before = saved_rows(app, "old")
    stop = StopSignal()

    def on_event(event: dict[str, object]) -> None:
        if event["node"] == stop_after:
            stop.stop()

    with pytest.raises(AnswerStopped):
        app.ask("Where was he born?", thread_id="old", owner="ana", on_event=on_event, cancel=stop)
    assert saved_rows(app, "old") == before
    assert [r.question for r in app.thread_answers("old", "ana")] == ["Who directed Inception?"]
    assert app.list_threads("ana")[0]["answers"] == 1
    assert app.search_threads("ana", "born", ("all",)) == []


def test_a_stop_after_the_save_began_is_refused_so_the_asker_is_not_told_stopped(
    app: Hopwise,
) -> None:
    stop = StopSignal()
    result = app.ask("Who directed Inception?", thread_id="t", owner="ana", cancel=stop)
    assert stop.stop() is False and not stop.is_set()  # too late: the answer is saved
    assert [r.answer for r in app.thread_answers("t", "ana")] == [result.answer]
    early = StopSignal()
    assert early.stop() is True and early.commit() is False  # a stop first wins over the save


def test_regenerating_leaves_the_replaced_answer_out_of_the_history(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, web_search=False, llm_economy=False)  # type: ignore[call-arg]
    reasoner = ScriptedReasoner()
    app = Hopwise(settings, KeywordRetriever(sample_chunks()), reasoner)
    first = app.ask("Who directed Inception?", thread_id="t", owner="ana")
    second = app.ask("Where was he born?", thread_id="t", owner="ana")

    def history_of_last_route() -> list[str]:
        return [turn["content"] for turn in reasoner.seen["route"][-1][1]]  # type: ignore[index, union-attr]

    app.ask("Where was he born?", thread_id="t", owner="ana", regenerating=True)
    assert history_of_last_route() == ["Who directed Inception?", first.answer]
    app.ask("Where was he born?", thread_id="t", owner="ana")  # a plain follow-up sees it all
    assert second.answer in history_of_last_route()
    app.ask("Who directed Inception?", thread_id="cli", regenerating=True)  # owner None: messages
    app.ask("Who directed Inception?", thread_id="cli", regenerating=True)
    assert history_of_last_route() == []
    app.close()


def test_search_folds_case_beyond_ascii(app: Hopwise) -> None:
    app.ask("Wer hatte Ärger mit dem Regisseur?", thread_id="de", owner="ana")
    app.ask("Was sagt der Mythos von σίσυφος?", thread_id="el", owner="ana")
    app.rename_thread("el", "ana", "Mythen")

    def found(text: str) -> list[str]:
        return [t["thread_id"] for t in app.search_threads("ana", text, ("all",))]

    assert found("ärger") == ["de"] and found("ÄRGER") == ["de"]  # the title
    assert found("ΣΊΣΥΦΟΣ") == ["el"]  # a question (the title was renamed), final sigma too
    assert found("a\u0308rger") == ["de"]  # a decomposed ä
    assert [t["thread_id"] for t, _ in app.threads.search("ana", "ΣΊΣΥΦΟΣ")] == ["el"]
