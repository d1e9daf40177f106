"""The conversations' SQLite checkpointer: LangGraph's SqliteSaver made resilient (a failed read
is an empty history, a failed write a named problem), opened with WAL. Its own module, so the
pages that only read conversation helpers (graph.conversations) load no LangGraph at start."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from graph.conversations import ConversationStoreError, conversation_store_problem


class ResilientSqliteSaver(SqliteSaver):
    """A SqliteSaver whose failures never cost the answer: a failed read is an empty history,
    a failed write is reported in `problem` (named, with the file) instead of raised."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        super().__init__(conn)
        self.path = path
        self.problem = ""

    def _failed(self, exc: sqlite3.Error) -> None:
        self.problem = conversation_store_problem(self.path, exc)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.problem:  # already failed for this question: do not wait out the lock again
            return config
        try:
            return super().put(config, checkpoint, metadata, new_versions)
        except sqlite3.Error as exc:
            self._failed(exc)
            return config

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if self.problem:
            return
        try:
            super().put_writes(config, writes, task_id, task_path)
        except sqlite3.Error as exc:
            self._failed(exc)

    def get_tuple(self, config: Any) -> Any:
        try:
            return super().get_tuple(config)
        except sqlite3.Error as exc:
            self._failed(exc)
            return None


def open_checkpointer(path: Path, *, busy_timeout_s: float = 5.0) -> ResilientSqliteSaver:
    """SQLite conversations shared by Streamlit's threads (the saver serialises with a lock).

    WAL lets the CLI and the app use one file at once; synchronous=NORMAL skips an fsync per
    commit (a power cut may lose the last answer, never corrupt the file). An unreadable file
    raises ConversationStoreError (the connection is closed: nothing leaks).
    """
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=busy_timeout_s)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA quick_check(1)").fetchone()
        saver = ResilientSqliteSaver(conn, path)
        saver.setup()
    except sqlite3.Error as exc:
        conn.close()
        raise ConversationStoreError(conversation_store_problem(path, exc)) from None
    return saver
