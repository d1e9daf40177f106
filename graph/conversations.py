"""Conversation storage shared by every backend: the SQLite checkpointer (LangGraph's, made
failure-tolerant), chat titles, the folding search compares with, and the access error every
read of someone else's thread gets. The thread index and feedback tables (SQLite or PostgreSQL)
are in hopwise.state."""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

NOT_SAVED = "This answer was not saved: "  # an answer's notice when its thread was not saved


class ConversationStoreError(RuntimeError):
    """The conversation file cannot be used; the message names it and how to recover."""


def conversation_store_problem(
    path: Path, exc: BaseException, what: str = "the conversation store"
) -> str:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if "locked" in reason or "busy" in reason:
        return (
            f"{what} {path} is locked by another program ({reason}); answers "
            "are not saved until it is free"
        )
    return (
        f"{what} {path} cannot be read ({reason}); move it aside (mv {path} "
        f"{path}.broken) to start a new one; the knowledge base is not affected"
    )


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


class ThreadAccessError(LookupError):
    """A thread that does not exist or belongs to someone else: the same answer for both."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"chat {thread_id!r}: not found or no access")


TITLE_CHARS = 48  # a past-chat title fits one line of the sidebar
TITLE_MAX_CHARS = 100  # the longest title an owner may give a chat
TITLE_PROVISIONAL, TITLE_QUESTION, TITLE_USER = "provisional", "question", "user"


def chat_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A one-line title from a question: whitespace collapsed, cut at a word boundary (or at
    `limit` characters in a language written without spaces) with an ellipsis."""
    title = " ".join(text.split())
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    if " " in cut and title[limit - 1] != " ":
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-—") + "…"


def fold(text: str) -> str:
    """Text as search compares it: Unicode case folded ("Ärger" ~ "ärger", "ΣΊΣΥΦΟΣ" ~
    "σίσυφος"), composed and decomposed accents alike (Unicode's canonical caseless match)."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).casefold())
