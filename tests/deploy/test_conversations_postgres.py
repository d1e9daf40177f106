"""Conversations on PostgreSQL through the application facade: two runners (two replicas) share
one database, a chat started on one continues on the other, and a database that goes away
mid-conversation costs only the saving, never the answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from graph.conversations import ThreadAccessError
from hopwise.app import Hopwise
from hopwise.database import RETRY_AFTER_FAILURE_S, PostgresDatabase
from hopwise.settings import Settings
from hopwise.state import open_postgres_checkpointer
from tests.deploy.postgres import PostgresServer, running_server
from tests.fakes.reasoner import ScriptedReasoner
from tests.fakes.retriever import KeywordRetriever, sample_chunks

QUESTION = "Who directed Inception?"
FOLLOW_UP = "And where was he born?"


def replica(tmp_path: Path, url: str, name: str) -> Hopwise:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path / name, web_search=False, llm_economy=False, database_url=url
    )
    db = PostgresDatabase(url, what="the conversation store", pool_size=4)
    return Hopwise(
        settings,
        KeywordRetriever(sample_chunks()),
        ScriptedReasoner(),
        None,
        open_postgres_checkpointer(db),
        database=db,
    )


@pytest.fixture
def pair(tmp_path: Path, postgres: PostgresServer) -> Iterator[tuple[Hopwise, Hopwise]]:
    url = postgres.fresh_database(f"pair_{tmp_path.name[-20:].replace('-', '_')}")
    one, two = replica(tmp_path, url, "one"), replica(tmp_path, url, "two")
    yield one, two
    one.close()
    two.close()


def test_a_chat_started_on_one_replica_continues_on_the_other(
    pair: tuple[Hopwise, Hopwise],
) -> None:
    one, two = pair
    first = one.ask(QUESTION, owner="ana")
    assert first.citations
    second = two.ask(FOLLOW_UP, thread_id=first.thread_id, owner="ana")
    saved = one.thread_answers(first.thread_id, "ana")
    assert [r.question for r in saved] == [QUESTION, FOLLOW_UP]
    assert saved[1].trace and second.answer == saved[1].answer
    assert [t["answers"] for t in two.list_threads("ana")] == [2]
    with pytest.raises(ThreadAccessError):
        two.thread_answers(first.thread_id, "bo")
    with pytest.raises(ThreadAccessError):
        one.ask("Mine now?", thread_id=first.thread_id, owner="bo")
    two.give_feedback(first.thread_id, 1, "ana", rating=0, comment="too short")
    assert [f["comment"] for f in one.all_feedback()] == ["too short"]
    one.delete_thread(first.thread_id, "ana")
    assert two.list_threads("ana") == [] and two.all_feedback() == []


def test_concurrent_questions_on_two_replicas_lose_nothing(
    pair: tuple[Hopwise, Hopwise],
) -> None:
    one, two = pair
    jobs = [(app, f"user{i}", f"{QUESTION} ({i})") for i in range(8) for app in (one, two)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda j: j[0].ask(j[2], owner=j[1]), jobs))
    assert all(r.citations and not r.notices for r in results)
    for i in range(8):
        mine = one.list_threads(f"user{i}")
        assert len(mine) == 2 and all(t["answers"] == 1 for t in mine)


@pytest.fixture
def alone(tmp_path: Path) -> Iterator[tuple[PostgresServer, Hopwise]]:
    """A server of the test's own (these tests stop and start it) and a replica on it."""
    with running_server() as server:
        app = replica(tmp_path, server.url, "one")
        try:
            yield server, app
        finally:
            app.close()


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_postgres_going_away_costs_the_saving_not_the_answer(
    alone: tuple[PostgresServer, Hopwise],
) -> None:
    server, app = alone
    first = app.ask(QUESTION, owner="ana")
    assert not first.notices and app.history_problem == ""
    server.pause()
    during = app.ask(FOLLOW_UP, thread_id=first.thread_id, owner="ana")
    assert during.citations  # answered from the documents, history off
    assert any("not saved" in n and "unavailable" in n for n in during.notices)
    assert "unavailable" in app.history_problem
    assert app.list_threads("ana") == []  # nothing readable, nothing raised
    server.resume()
    time.sleep(RETRY_AFTER_FAILURE_S)  # the fast-fail window after the last failure
    after = app.ask(FOLLOW_UP, thread_id=first.thread_id, owner="ana")
    assert not after.notices and app.history_problem == ""
    assert [r.question for r in app.thread_answers(first.thread_id, "ana")] == [
        QUESTION,
        FOLLOW_UP,
    ]


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_a_replica_started_while_postgres_is_down_catches_up(tmp_path: Path) -> None:
    with running_server() as server:
        server.pause()
        app = replica(tmp_path, server.url, "one")
        try:
            down = app.ask(QUESTION, owner="ana")
            assert down.citations and any("not saved" in n for n in down.notices)
            server.resume()
            time.sleep(RETRY_AFTER_FAILURE_S)
            up = app.ask(QUESTION, owner="ana")
            assert not up.notices
            assert len(app.thread_answers(up.thread_id, "ana")) == 1
        finally:
            app.close()


@pytest.mark.slow  # ~9 s: a PostgreSQL outage and its recovery: in .ci/run's slow suite
def test_a_thread_whose_owner_cannot_be_read_is_neither_read_nor_written(
    alone: tuple[PostgresServer, Hopwise],
) -> None:
    server, app = alone
    anas = app.ask(QUESTION, owner="ana")
    server.pause()
    eves = app.ask(FOLLOW_UP, thread_id=anas.thread_id, owner="eve")
    assert eves.citations and any("not saved" in n for n in eves.notices)
    server.resume()
    time.sleep(RETRY_AFTER_FAILURE_S)
    assert [r.question for r in app.thread_answers(anas.thread_id, "ana")] == [QUESTION]
    with pytest.raises(ThreadAccessError):
        app.ask(FOLLOW_UP, thread_id=anas.thread_id, owner="eve")
    assert [t["answers"] for t in app.list_threads("ana")] == [1]
