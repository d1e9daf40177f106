"""One contract for the server state on both engines (SQLite files and PostgreSQL): threads,
feedback, options, sign-in throttling, sessions, migrations, locks, leases and shared secrets.
`databases.open()` twice stands for two replicas sharing one database."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from hopwise.database import Database, StoreUnavailable
from hopwise.state import DatabaseOptions, FeedbackLog, ThreadIndex
from ingest.locks import LockTimeout
from tests.deploy.conftest import Databases
from ui.auth import SessionStore, SignInGuard, User, throttle_delay

ANA = User("ana", ("all",), "pw-ana")
BO = User("bo", ("all",), "pw-bo")
SECRET = b"s" * 32


# ---- threads and feedback ----------------------------------------------------------------


def test_a_thread_belongs_to_its_owner_and_keeps_its_turns(db: Database) -> None:
    threads = ThreadIndex(db)
    threads.touch("t1", "Who maintains the pumps?", "ana", answer="The field crew.")
    threads.touch("t1", "Since when?", "ana", answer="Since 2021.")
    threads.touch("t2", "Where is the depot?", "bo", answer="North yard.")
    assert threads.owner_of("t1") == "ana" and threads.owner_of("nope") is None
    [row] = threads.list("ana")
    assert row["thread_id"] == "t1" and row["answers"] == 2
    assert row["title"] == "Who maintains the pumps?"
    assert {t["thread_id"] for t in threads.list()} == {"t1", "t2"}
    threads.check("t1", "ana")
    with pytest.raises(LookupError):
        threads.check("t1", "bo")
    with pytest.raises(LookupError):
        threads.rename("t1", "bo", "mine now")
    threads.check("t3", "bo", may_create=True)


def test_titles_follow_the_conversation_until_renamed(db: Database) -> None:
    threads = ThreadIndex(db)
    threads.touch("t", "hello", "ana", names_the_chat=False)
    assert threads.list("ana")[0]["title"] == "hello"
    threads.touch("t", "Which supplier ships valves?", "ana")
    assert threads.list("ana")[0]["title"] == "Which supplier ships valves?"
    assert threads.rename("t", "ana", "  Valves  ") == "Valves"
    threads.touch("t", "And gaskets?", "ana")
    assert threads.list("ana")[0]["title"] == "Valves"


def test_search_folds_case_and_accents_and_takes_wildcards_literally(db: Database) -> None:
    threads = ThreadIndex(db)
    threads.touch("a", "Ärger mit der Pumpe", "ana", answer="Siehe Wartungsplan.")
    threads.touch("b", "Budget 100% spent?", "ana", answer="No, 80 % so far.")
    threads.touch("c", "ΣΊΣΥΦΟΣ project", "bo", answer="Owned by the lab.")
    hits = {t["thread_id"]: title for t, title in threads.search("ana", "ärger")}
    assert hits == {"a": True}
    assert [t["thread_id"] for t, _ in threads.search("ana", "WARTUNGSPLAN")] == ["a"]
    assert [t["thread_id"] for t, _ in threads.search("ana", "100%")] == ["b"]
    assert threads.search("ana", "1_0") == []  # _ is a character, not "any one"
    assert threads.search("ana", "σίσυφος") == []  # bo's chat is not ana's
    assert [t["thread_id"] for t, _ in threads.search("bo", "σίσυφος")] == ["c"]


def test_delete_forgets_the_thread_and_its_turns(db: Database) -> None:
    threads = ThreadIndex(db)
    threads.touch("t", "Question one", "ana", answer="Answer one")
    with pytest.raises(LookupError):
        threads.delete("t", "bo")
    threads.delete("t", "ana")
    assert threads.owner_of("t") is None and threads.search("ana", "answer") == []


def test_feedback_is_one_entry_per_answer_and_seen_by_every_replica(
    databases: Databases,
) -> None:
    mine, theirs = FeedbackLog(databases.open()), FeedbackLog(databases.open())
    entry = {
        "thread_id": "t", "answer_index": 0, "owner": "ana", "rating": 0, "comment": "wrong",
        "question": "q", "answer": "a", "trace": "{}",
    }  # fmt: skip
    mine.put(entry)
    mine.put({**entry, "rating": 1, "comment": "fixed"})
    mine.put({**entry, "answer_index": 1})
    [latest, first] = theirs.entries()
    assert (latest["answer_index"], first["rating"], first["comment"]) == (1, 1, "fixed")
    assert set(theirs.of_thread("t")) == {0, 1}
    theirs.withdraw("t", 1)
    assert set(mine.of_thread("t")) == {0}
    mine.delete_thread("t")
    assert theirs.entries() == []


def test_an_option_set_on_one_replica_holds_on_the_other(databases: Databases) -> None:
    one, two = DatabaseOptions(databases.open()), DatabaseOptions(databases.open())
    assert not two.web_search
    one.set_web_search(True)
    assert two.web_search
    two.set_web_search(False)
    assert not one.web_search


# ---- sign-in state -----------------------------------------------------------------------


def test_failures_count_across_replicas_and_at_once(databases: Databases) -> None:
    now = [1000.0]
    guards = [SignInGuard(databases.open(), clock=lambda: now[0]) for _ in range(2)]
    workers = [
        threading.Thread(target=lambda g=g: [g.fail("user:ana") for _ in range(5)]) for g in guards
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert guards[0].failures("user:ana") == 10  # none lost to a race
    assert guards[1].wait_s("user:ana") == pytest.approx(throttle_delay(10))
    guards[1].succeed("user:ana")
    assert guards[0].failures("user:ana") == 0 and guards[0].wait_s("user:ana") == 0


def test_a_session_issued_on_one_replica_is_valid_and_revoked_on_the_other(
    databases: Databases,
) -> None:
    one = SessionStore(databases.open(), SECRET, hours=12)
    two = SessionStore(databases.open(), SECRET, hours=12)
    token = one.issue(ANA)
    assert two.verify(token, {"ana": ANA}) == ANA
    assert two.verify(token, {"bo": BO}) is None  # ana left the config
    token = one.issue(ANA)
    two.revoke(token)
    assert one.verify(token, {"ana": ANA}) is None


# ---- the database's own primitives -------------------------------------------------------


def test_migrations_run_once_even_when_replicas_start_together(databases: Databases) -> None:
    runs: list[int] = []

    def step(cur: object, kind: str) -> None:
        runs.append(1)
        time.sleep(0.2)  # a slow step: the other replica must wait, not repeat it

    steps = ["CREATE TABLE IF NOT EXISTS contract_t (x INTEGER)", step]
    dbs = [databases.open() for _ in range(3)]
    versions: list[int] = []
    workers = [
        threading.Thread(target=lambda d=d: versions.append(d.migrate("contract", steps)))
        for d in dbs
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert versions == [2, 2, 2] and runs == [1]
    assert dbs[0].fetch("SELECT version FROM hopwise_schema WHERE component = 'contract'") == [(2,)]
    assert dbs[1].migrate("contract", [*steps, "ALTER TABLE contract_t ADD COLUMN y TEXT"]) == 3
    dbs[2].execute("INSERT INTO contract_t (x, y) VALUES (?, ?)", (1, "one"))


def test_a_lock_is_held_by_one_replica_at_a_time(databases: Databases) -> None:
    one, two, three = databases.open(), databases.open(), databases.open()
    order: list[str] = []
    timed_out: list[bool] = []

    def impatient() -> None:
        try:
            with three.lock("doc-a", timeout_s=0.2):
                timed_out.append(False)
        except LockTimeout:
            timed_out.append(True)

    def patient() -> None:
        with two.lock("doc-a", timeout_s=5):
            order.append("two")

    with one.lock("doc-a", timeout_s=5):
        first = threading.Thread(target=impatient)
        first.start()
        first.join(5)
        waiter = threading.Thread(target=patient)
        waiter.start()
        time.sleep(0.3)
        order.append("one done")
    waiter.join(5)
    assert timed_out == [True] and order == ["one done", "two"]


def test_document_locks_of_two_replicas_serialise_writes(databases: Databases) -> None:
    one, two = databases.open().document_locks(5), databases.open().document_locks(5)
    inside: list[int] = []
    peak = [0]

    def write(locks: object) -> None:
        with locks.hold("report.pdf"):  # type: ignore[attr-defined]
            inside.append(1)
            peak[0] = max(peak[0], len(inside))
            time.sleep(0.05)
            inside.pop()

    workers = [threading.Thread(target=write, args=(locks,)) for locks in (one, two) * 3]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert peak == [1]


def test_one_replica_holds_a_lease_until_it_lets_go(databases: Databases) -> None:
    one, two = databases.open(), databases.open()
    lease = one.try_lease("worker")
    assert lease is not None and lease.alive()
    assert two.try_lease("worker") is None
    lease.release()
    assert not lease.alive()
    taken = two.try_lease("worker")
    assert taken is not None
    taken.release()


def test_a_secret_is_made_once_for_every_replica(databases: Databases) -> None:
    made = iter(["first", "second"])
    assert databases.open().secret("key", lambda: next(made)) == "first"
    assert databases.open().secret("key", lambda: next(made)) == "first"


def test_a_failed_statement_changes_nothing(db: Database) -> None:
    threads = ThreadIndex(db)
    threads.touch("t", "Question", "ana")
    with pytest.raises(Exception), db.transaction() as cur:  # noqa: B017 - the engine's own
        cur.execute("DELETE FROM hopwise_threads")
        cur.execute("SELECT no_such_column FROM hopwise_threads")
    assert threads.owner_of("t") == "ana"


def test_an_unreachable_store_reads_as_empty_and_refuses_writes(databases: Databases) -> None:
    db = databases.open()
    threads = ThreadIndex(db)
    threads.touch("t", "Question", "ana")
    broken = databases.open()
    if databases.kind == "postgresql":
        broken.close()  # its pool is gone: every call fails as if the server were down
    else:
        (databases.tmp_path / "state.sqlite").write_bytes(b"not a database " * 500)
    index = ThreadIndex(broken)
    assert index.owner_of("t") is None and index.list("ana") == []
    with pytest.raises(StoreUnavailable):
        index.touch("t", "Another", "ana")
    assert broken.health()


def test_a_turn_never_lands_in_someone_elses_thread(db: Database) -> None:
    threads = ThreadIndex(db)
    threads.touch("t", "Ana's question", "ana", answer="Ana's answer")
    with pytest.raises(LookupError):
        threads.touch("t", "Eve's question", "eve", answer="Eve's answer")
    [row] = threads.list()
    assert (row["owner"], row["answers"]) == ("ana", 1)
    assert threads.search("ana", "eve") == [] and threads.search("eve", "question") == []
    threads.touch("t", "Operator's note", None)  # the local operator (CLI) is unrestricted
    assert threads.list("ana")[0]["answers"] == 2


def test_many_locks_held_at_once_need_no_pool(databases: Databases) -> None:
    locks = databases.open().document_locks(5)
    with contextlib.ExitStack() as stack:
        for name in ("a", "b", "c", "d", "e", "f"):  # more than a replica's pool holds
            stack.enter_context(locks.hold(f"doc-{name}"))
        other = databases.open().document_locks(0.2)
        refused: list[bool] = []

        def try_c() -> None:
            try:
                with other.hold("doc-c"):
                    refused.append(False)
            except LockTimeout:
                refused.append(True)

        worker = threading.Thread(target=try_c)  # another replica's writer
        worker.start()
        worker.join(5)
        assert refused == [True]


def test_a_revoked_session_stays_revoked_while_the_store_is_away(
    databases: Databases,
) -> None:
    store = SessionStore(databases.open(), SECRET, hours=12)
    kept, ended = store.issue(ANA), store.issue(ANA)
    assert store.verify(kept, {"ana": ANA}) == ANA and store.verify(ended, {"ana": ANA}) == ANA
    SessionStore(databases.open(), SECRET, hours=12).revoke(ended)  # on another replica
    assert store.verify(ended, {"ana": ANA}) is None
    real = store.db
    store.db = broken_database(databases)  # the store goes away
    assert store.verify(kept, {"ana": ANA}) == ANA  # verified here a moment ago
    assert store.verify(ended, {"ana": ANA}) is None  # revoked before: still refused
    assert store.verify(store_token_never_seen(), {"ana": ANA}) is None
    with pytest.raises(StoreUnavailable):
        store.revoke(kept)  # a sign-out now cannot be written yet ...
    assert store.verify(kept, {"ana": ANA}) is None  # ... but this replica refuses it at once
    store.db = real  # back: the sign-out is written, and every replica sees it
    assert store.verify(kept, {"ana": ANA}) is None
    assert SessionStore(databases.open(), SECRET, hours=12).verify(kept, {"ana": ANA}) is None


def store_token_never_seen() -> str:
    return "x" * 32 + "." + "y" * 43  # well formed, never issued


def broken_database(databases: Databases) -> Database:
    db = databases.open()
    if databases.kind == "postgresql":
        db.close()
    else:
        db.path = databases.tmp_path / "missing" / "dir" / "x.sqlite"  # type: ignore[attr-defined]
        (databases.tmp_path / "missing").write_text("a file, not a directory")
    return db
