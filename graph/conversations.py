"""Conversation storage: the LangGraph checkpointer (SQLite), the thread index (owner, title,
turns for search) and readers' feedback. Every read and write names its owner; the graph
runner and the application facade (hopwise.app.Hopwise) are built on these."""

from __future__ import annotations

import builtins
import sqlite3
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver


class ConversationStoreError(RuntimeError):
    """The conversation file cannot be used; the message names it and how to recover."""


def conversation_store_problem(path: Path, exc: BaseException) -> str:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if "locked" in reason or "busy" in reason:
        return (
            f"the conversation store {path} is locked by another program ({reason}); answers "
            "are not saved until it is free"
        )
    return (
        f"the conversation store {path} cannot be read ({reason}); move it aside (mv {path} "
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


def _sql_fold(text: object) -> str | None:
    return None if text is None else fold(str(text))


class ThreadIndex:
    """A small table of threads (owner, title, last update, answer count) beside the checkpoints,
    and the text of each turn (for search).

    Every thread belongs to one user by exact name. `owner=None` in the methods below means an
    unrestricted caller (the local CLI operator); the app always passes the signed-in user.
    A title follows the conversation: the first question that needed the documents names the
    chat (a greeting before it only names it provisionally) until the owner renames it.
    """

    COLUMNS = ("thread_id", "owner", "title", "updated_at", "answers")

    def __init__(self, conn: sqlite3.Connection, lock: Any) -> None:
        self.conn, self.lock = conn, lock
        with self.lock:  # SQL's LIKE and lower() fold ASCII only; search folds like Python
            self.conn.create_function("hopwise_fold", 1, _sql_fold, deterministic=True)
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS hopwise_threads (thread_id TEXT PRIMARY KEY, "
                "title TEXT, created_at REAL, updated_at REAL, answers INTEGER, owner TEXT)"
            )
            columns = {r[1] for r in self.conn.execute("PRAGMA table_info(hopwise_threads)")}
            if "owner" not in columns:  # an index written before owners were recorded
                self.conn.execute("ALTER TABLE hopwise_threads ADD COLUMN owner TEXT")
            if "title_kind" not in columns:  # written before titles followed the conversation
                self.conn.execute(
                    "ALTER TABLE hopwise_threads ADD COLUMN title_kind TEXT "
                    f"DEFAULT '{TITLE_QUESTION}'"
                )
            # Old ids were '<user>:<12 hex>'; the owner is everything before the last colon.
            self.conn.execute(
                "UPDATE hopwise_threads SET owner = CASE WHEN instr(thread_id, ':') > 0 THEN "
                "rtrim(thread_id, '0123456789abcdef') ELSE '' END WHERE owner IS NULL"
            )
            self.conn.execute(
                "UPDATE hopwise_threads SET owner = substr(owner, 1, length(owner) - 1) "
                "WHERE owner LIKE '%:'"
            )
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS hopwise_turns (thread_id TEXT, created_at REAL, "
                "question TEXT, answer TEXT)"
            )
            self.conn.execute(
                "CREATE INDEX IF NOT EXISTS hopwise_turns_thread ON hopwise_turns (thread_id)"
            )
            self.conn.commit()

    @classmethod
    def for_checkpointer(cls, checkpointer: Any) -> ThreadIndex:
        """Share the SQLite saver's connection and lock; otherwise keep the index in memory."""
        if isinstance(checkpointer, SqliteSaver):
            return cls(checkpointer.conn, checkpointer.lock)
        return cls(sqlite3.connect(":memory:", check_same_thread=False), threading.Lock())

    def owner_of(self, thread_id: str) -> str | None:
        """The thread's owner, or None when no such thread exists."""
        with self.lock:
            row = self.conn.execute(
                "SELECT owner FROM hopwise_threads WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        return None if row is None else str(row[0] or "")

    def check(self, thread_id: str, owner: str | None, *, may_create: bool = False) -> None:
        """Raise ThreadAccessError unless `owner` may use the thread (or create it, if new)."""
        found = self.owner_of(thread_id)
        if found is None:
            if may_create:
                return
            raise ThreadAccessError(thread_id)
        if owner is not None and found != owner:
            raise ThreadAccessError(thread_id)

    def touch(
        self,
        thread_id: str,
        question: str,
        owner: str | None,
        *,
        answer: str = "",
        names_the_chat: bool = True,
    ) -> None:
        """Record one answered turn. A question that `names_the_chat` (it needed the documents)
        replaces a provisional title; a renamed chat keeps its name."""
        now = time.time()
        kind = TITLE_QUESTION if names_the_chat else TITLE_PROVISIONAL
        with self.lock:
            self.conn.execute(
                "INSERT INTO hopwise_threads (thread_id, title, created_at, updated_at, answers, "
                "owner, title_kind) VALUES (?, ?, ?, ?, 1, ?, ?) ON CONFLICT(thread_id) DO "
                "UPDATE SET updated_at = excluded.updated_at, answers = answers + 1, "
                f"title = CASE WHEN title_kind = '{TITLE_PROVISIONAL}' THEN excluded.title "
                "ELSE title END, "
                f"title_kind = CASE WHEN title_kind = '{TITLE_PROVISIONAL}' THEN "
                "excluded.title_kind ELSE title_kind END",
                (thread_id, chat_title(question), now, now, owner or "", kind),
            )
            self.conn.execute(
                "INSERT INTO hopwise_turns (thread_id, created_at, question, answer) "
                "VALUES (?, ?, ?, ?)",
                (thread_id, now, question, answer),
            )
            self.conn.commit()

    def rename(self, thread_id: str, owner: str | None, title: str) -> str:
        """Give the thread the owner's own title (kept from now on); returns it as stored."""
        self.check(thread_id, owner)
        name = chat_title(title, limit=TITLE_MAX_CHARS)
        if not name:
            raise ValueError("a chat needs a title")
        with self.lock:
            self.conn.execute(
                "UPDATE hopwise_threads SET title = ?, title_kind = ? WHERE thread_id = ?",
                (name, TITLE_USER, thread_id),
            )
            self.conn.commit()
        return name

    def delete(self, thread_id: str, owner: str | None) -> None:
        """Forget the thread's row and turns (the caller deletes its checkpoints)."""
        self.check(thread_id, owner)
        with self.lock:
            self.conn.execute("DELETE FROM hopwise_turns WHERE thread_id = ?", (thread_id,))
            self.conn.execute("DELETE FROM hopwise_threads WHERE thread_id = ?", (thread_id,))
            self.conn.commit()

    def list(self, owner: str | None = None) -> list[dict[str, Any]]:
        """Newest first; only `owner`'s threads when given."""
        query = f"SELECT {', '.join(self.COLUMNS)} FROM hopwise_threads"
        args: tuple[str, ...] = ()
        if owner is not None:
            query, args = query + " WHERE owner = ?", (owner,)
        with self.lock:
            rows = self.conn.execute(query + " ORDER BY updated_at DESC", args).fetchall()
        return [dict(zip(self.COLUMNS, r, strict=True)) for r in rows]

    def search(self, owner: str | None, text: str) -> builtins.list[tuple[dict[str, Any], bool]]:
        """Threads whose title or turns contain `text` (case folded, see `fold`), newest first,
        each with whether the title itself matched."""
        needle = fold(text.strip())
        cols = ", ".join(f"t.{c}" for c in self.COLUMNS)
        query = (
            f"SELECT {cols}, instr(hopwise_fold(t.title), ?) > 0 FROM hopwise_threads t WHERE "
            "(instr(hopwise_fold(t.title), ?) > 0 OR EXISTS (SELECT 1 FROM hopwise_turns u "
            "WHERE u.thread_id = t.thread_id AND (instr(hopwise_fold(u.question), ?) > 0 OR "
            "instr(hopwise_fold(u.answer), ?) > 0)))"
        )
        args: tuple[str, ...] = (needle,) * 4
        if owner is not None:
            query, args = query + " AND t.owner = ?", (*args, owner)
        with self.lock:
            rows = self.conn.execute(query + " ORDER BY t.updated_at DESC", args).fetchall()
        n = len(self.COLUMNS)
        return [(dict(zip(self.COLUMNS, r[:n], strict=True)), bool(r[n])) for r in rows]


class FeedbackLog:
    """Readers' ratings of answers, one per (thread, answer index), beside the threads: who,
    thumbs up or down, an optional comment, when, and the question, answer and trace JSON as
    the reader saw them (so a later change to the thread cannot rewrite what was rated)."""

    COLUMNS = (
        "thread_id", "answer_index", "owner", "rating", "comment", "created_at", "question",
        "answer", "trace",
    )  # fmt: skip

    def __init__(self, conn: sqlite3.Connection, lock: Any) -> None:
        self.conn, self.lock = conn, lock
        with self.lock:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS hopwise_feedback (thread_id TEXT, answer_index "
                "INTEGER, owner TEXT, rating INTEGER, comment TEXT, created_at REAL, question "
                "TEXT, answer TEXT, trace TEXT, PRIMARY KEY (thread_id, answer_index))"
            )
            self.conn.commit()

    def put(self, entry: dict[str, Any]) -> None:
        """Store (or replace) the feedback on one answer; `created_at` is now."""
        row = {**entry, "created_at": time.time()}
        with self.lock:
            self.conn.execute(
                f"INSERT OR REPLACE INTO hopwise_feedback ({', '.join(self.COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in self.COLUMNS)})",
                tuple(row[c] for c in self.COLUMNS),
            )
            self.conn.commit()

    def of_thread(self, thread_id: str) -> dict[int, dict[str, Any]]:
        """The thread's feedback by answer index."""
        return {int(r["answer_index"]): r for r in self._select("WHERE thread_id = ?", thread_id)}

    def entries(self) -> list[dict[str, Any]]:
        """Every feedback entry, newest first."""
        return self._select("")

    def withdraw(self, thread_id: str, answer_index: int) -> None:
        with self.lock:
            self.conn.execute(
                "DELETE FROM hopwise_feedback WHERE thread_id = ? AND answer_index = ?",
                (thread_id, answer_index),
            )
            self.conn.commit()

    def delete_thread(self, thread_id: str) -> None:
        with self.lock:
            self.conn.execute("DELETE FROM hopwise_feedback WHERE thread_id = ?", (thread_id,))
            self.conn.commit()

    def _select(self, where: str, *args: str) -> list[dict[str, Any]]:
        query = f"SELECT {', '.join(self.COLUMNS)} FROM hopwise_feedback {where}"
        with self.lock:
            rows = self.conn.execute(query + " ORDER BY created_at DESC", args).fetchall()
        return [dict(zip(self.COLUMNS, r, strict=True)) for r in rows]
