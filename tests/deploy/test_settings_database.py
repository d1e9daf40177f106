"""HOPWISE_DATABASE_URL as a user sets it: refused in words when it is not PostgreSQL, its
password never shown; the store's writes take PostgreSQL's locks; files from before the
numbered migrations keep their rows."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from hopwise.app import open_store
from hopwise.database import PostgresDatabase, SqliteDatabase
from hopwise.settings import Settings
from hopwise.state import ThreadIndex
from ingest.locks import LockTimeout
from tests.deploy.postgres import PostgresServer
from ui.auth import SessionStore, User


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, web_search=False, **values)  # type: ignore[call-arg]


def test_a_database_url_that_is_not_postgresql_is_refused_in_words(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="must be a postgresql://"):
        settings(tmp_path, database_url="sqlite:///state.db")
    assert settings(tmp_path, database_url="").database_url is None


def test_the_database_password_is_redacted(tmp_path: Path) -> None:
    given = settings(tmp_path, database_url="postgresql://hopwise:hunter-two-2@db.internal/h")
    assert "hunter-two-2" not in given.redact("connect to hopwise:hunter-two-2@db.internal failed")
    db = PostgresDatabase("postgresql://hopwise:hunter-two-2@127.0.0.1:1/h", pool_size=1)
    try:
        assert "hunter-two-2" not in db.label and "127.0.0.1:1/h" in db.label
    finally:
        db.close()


def test_the_stores_document_writes_wait_for_other_replicas(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.fresh_database("locks")
    store = open_store(settings(tmp_path, database_url=url, embeddings="off"))
    other = PostgresDatabase(url, pool_size=1)  # another replica
    held, release = threading.Event(), threading.Event()

    def write() -> None:
        with store.document_lock("handbook.md"):
            held.set()
            release.wait(10)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert held.wait(10)
        with pytest.raises(LockTimeout), other.document_locks(0.3).hold("handbook.md"):
            pass
    finally:
        release.set()
        writer.join(10)
    with other.document_locks(2).hold("handbook.md"):
        pass  # free again once the store's write ended
    other.close()
    store.close()


def test_files_from_before_numbered_migrations_keep_their_rows(tmp_path: Path) -> None:
    path = tmp_path / "conversations.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE hopwise_threads (thread_id TEXT PRIMARY KEY, title TEXT, "
            "created_at REAL, updated_at REAL, answers INTEGER)"
        )
        conn.execute("INSERT INTO hopwise_threads VALUES ('ana:0123abcd', 'Ärger', 1, 2, 1)")
        conn.execute(
            "CREATE TABLE sessions (token_sha256 TEXT PRIMARY KEY, user TEXT NOT NULL, created "
            "REAL NOT NULL, expires INTEGER NOT NULL, last_seen REAL NOT NULL, revoked REAL)"
        )
        conn.execute("INSERT INTO sessions VALUES ('old', 'ana', 1, 4102444800, 1, NULL)")
    threads = ThreadIndex(SqliteDatabase(path))
    assert threads.owner_of("ana:0123abcd") == "ana"
    assert [t["thread_id"] for t, _ in threads.search("ana", "ärger")] == ["ana:0123abcd"]
    store = SessionStore(path, b"k" * 32, hours=1)
    ana = User("ana", ("all",), "pw")
    assert store.verify(store.issue(ana), {"ana": ana}) == ana
    assert store.db.fetch("SELECT user_name FROM sessions WHERE token_sha256 = 'old'") == [("ana",)]
