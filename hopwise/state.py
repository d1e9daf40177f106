"""The conversation side of the server state, on a `Database` (SQLite or PostgreSQL): the thread
index (owner, title, turns for search), readers' feedback, the admin's deployment options, and
LangGraph's PostgreSQL checkpointer made failure-tolerant like the SQLite one.

Every read and write of a thread names its owner. Reads degrade to "nothing saved" while the
database is unreachable (the caller says history is off); writes raise StoreUnavailable, which
the answer path turns into "this answer was not saved". Tables are created by numbered
migrations on first use, so a replica started while PostgreSQL is down catches up when it is
back.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from graph.conversations import (
    TITLE_MAX_CHARS,
    TITLE_PROVISIONAL,
    TITLE_QUESTION,
    TITLE_USER,
    ThreadAccessError,
    chat_title,
    fold,
)
from hopwise.database import Cursor, Database, PostgresDatabase, Step, StoreUnavailable

log = logging.getLogger(__name__)


def _threads_v1(cur: Cursor, kind: str) -> None:
    """The index as it was before migrations were numbered (SQLite files of that time are
    brought up to it: owners and title kinds added, owners read from old '<user>:<hex>' ids)."""
    cur.execute(
        "CREATE TABLE IF NOT EXISTS hopwise_threads (thread_id TEXT PRIMARY KEY, title TEXT, "
        "created_at DOUBLE PRECISION, updated_at DOUBLE PRECISION, answers INTEGER, "
        f"owner TEXT, title_kind TEXT DEFAULT '{TITLE_QUESTION}')"
    )
    if kind == "sqlite":
        columns = {str(r[1]) for r in cur.fetch("PRAGMA table_info(hopwise_threads)")}
        if "owner" not in columns:
            cur.execute("ALTER TABLE hopwise_threads ADD COLUMN owner TEXT")
        if "title_kind" not in columns:
            cur.execute(
                f"ALTER TABLE hopwise_threads ADD COLUMN title_kind TEXT DEFAULT '{TITLE_QUESTION}'"
            )
        cur.execute(
            "UPDATE hopwise_threads SET owner = CASE WHEN instr(thread_id, ':') > 0 THEN "
            "rtrim(thread_id, '0123456789abcdef') ELSE '' END WHERE owner IS NULL"
        )
        cur.execute(
            "UPDATE hopwise_threads SET owner = substr(owner, 1, length(owner) - 1) "
            "WHERE owner LIKE '%:'"
        )
    cur.execute(
        "CREATE TABLE IF NOT EXISTS hopwise_turns (thread_id TEXT, created_at DOUBLE PRECISION, "
        "question TEXT, answer TEXT)"
    )
    cur.execute("CREATE INDEX IF NOT EXISTS hopwise_turns_thread ON hopwise_turns (thread_id)")


def _threads_v2(cur: Cursor, kind: str) -> None:
    """Folded copies for search, written with the text (SQL folds ASCII only; see `fold`)."""
    cur.execute("ALTER TABLE hopwise_threads ADD COLUMN title_fold TEXT")
    cur.execute("ALTER TABLE hopwise_turns ADD COLUMN folded TEXT")
    for thread_id, title in cur.fetch("SELECT thread_id, title FROM hopwise_threads"):
        cur.execute(
            "UPDATE hopwise_threads SET title_fold = ? WHERE thread_id = ?",
            (fold(str(title or "")), thread_id),
        )
    turns = cur.fetch("SELECT thread_id, created_at, question, answer FROM hopwise_turns")
    for thread_id, created_at, question, answer in turns:
        cur.execute(
            "UPDATE hopwise_turns SET folded = ? WHERE thread_id = ? AND created_at = ?",
            (_turn_fold(question, answer), thread_id, created_at),
        )
    cur.execute("CREATE INDEX IF NOT EXISTS hopwise_threads_owner ON hopwise_threads (owner)")


THREAD_STEPS: list[Step] = [_threads_v1, _threads_v2]
FEEDBACK_STEPS: list[Step] = [
    "CREATE TABLE IF NOT EXISTS hopwise_feedback (thread_id TEXT, answer_index INTEGER, owner "
    "TEXT, rating INTEGER, comment TEXT, created_at DOUBLE PRECISION, question TEXT, answer "
    "TEXT, trace TEXT, PRIMARY KEY (thread_id, answer_index))"
]
OPTION_STEPS: list[Step] = [
    "CREATE TABLE IF NOT EXISTS hopwise_options (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
]


def _turn_fold(question: object, answer: object) -> str:
    return fold(f"{question or ''}\n{answer or ''}")


def like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere (its %, _ and \\ taken literally)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Tables:
    """Tables of one component, migrated on first use (and again after a failed try)."""

    component = ""
    steps: list[Step] = []

    def __init__(self, db: Database) -> None:
        self.db = db
        with contextlib.suppress(StoreUnavailable):  # unreachable now: on first use instead
            self.ready()

    def ready(self) -> None:
        self.db.ready(self.component, self.steps)

    def fetch(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.ready()
        return self.db.fetch(sql, args)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Cursor]:
        self.ready()
        with self.db.transaction() as cur:
            yield cur


class ThreadIndex(Tables):
    """A small table of threads (owner, title, last update, answer count) beside the
    checkpoints, and the text of each turn (for search).

    Every thread belongs to one user by exact name. `owner=None` in the methods below means an
    unrestricted caller (the local CLI operator); the app always passes the signed-in user.
    A title follows the conversation: the first question that needed the documents names the
    chat (a greeting before it only names it provisionally) until the owner renames it.
    """

    component = "threads"
    steps = THREAD_STEPS
    COLUMNS = ("thread_id", "owner", "title", "updated_at", "answers")

    def owner_of(self, thread_id: str) -> str | None:
        """The thread's owner, or None when no such thread exists (or none can be read now:
        callers compare it with the reader, so an unreadable owner opens nothing)."""
        try:
            return self.stored_owner(thread_id)
        except StoreUnavailable:
            return None

    def stored_owner(self, thread_id: str) -> str | None:
        """The thread's owner, None when no such thread exists; StoreUnavailable when it
        cannot be told."""
        rows = self.fetch("SELECT owner FROM hopwise_threads WHERE thread_id = ?", (thread_id,))
        return str(rows[0][0] or "") if rows else None

    def check(self, thread_id: str, owner: str | None, *, may_create: bool = False) -> None:
        """Raise ThreadAccessError unless `owner` may use the thread (or create it, if new);
        StoreUnavailable when the owner cannot be read (never taken as "a new thread")."""
        found = self.stored_owner(thread_id)
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
        replaces a provisional title; a renamed chat keeps its name. The thread is claimed for
        `owner` in the same transaction: a thread someone else owns raises ThreadAccessError
        and nothing changes (None: the unrestricted local operator)."""
        now = time.time()
        kind = TITLE_QUESTION if names_the_chat else TITLE_PROVISIONAL
        title = chat_title(question)
        provisional = f"title_kind = '{TITLE_PROVISIONAL}'"
        with self.transaction() as cur:
            cur.execute(
                "INSERT INTO hopwise_threads (thread_id, title, created_at, updated_at, answers, "
                "owner, title_kind, title_fold) VALUES (?, ?, ?, ?, 1, ?, ?, ?) ON CONFLICT "
                "(thread_id) DO UPDATE SET updated_at = excluded.updated_at, "
                "answers = hopwise_threads.answers + 1, "
                f"title = CASE WHEN hopwise_threads.{provisional} THEN excluded.title "
                "ELSE hopwise_threads.title END, "
                f"title_fold = CASE WHEN hopwise_threads.{provisional} THEN excluded.title_fold "
                "ELSE hopwise_threads.title_fold END, "
                f"title_kind = CASE WHEN hopwise_threads.{provisional} THEN excluded.title_kind "
                "ELSE hopwise_threads.title_kind END",
                (thread_id, title, now, now, owner or "", kind, fold(title)),
            )
            found = cur.fetch("SELECT owner FROM hopwise_threads WHERE thread_id = ?", (thread_id,))
            if owner is not None and str(found[0][0] or "") != owner:
                raise ThreadAccessError(thread_id)  # the transaction is rolled back
            cur.execute(
                "INSERT INTO hopwise_turns (thread_id, created_at, question, answer, folded) "
                "VALUES (?, ?, ?, ?, ?)",
                (thread_id, now, question, answer, _turn_fold(question, answer)),
            )

    def rename(self, thread_id: str, owner: str | None, title: str) -> str:
        """Give the thread the owner's own title (kept from now on); returns it as stored."""
        self.check(thread_id, owner)
        name = chat_title(title, limit=TITLE_MAX_CHARS)
        if not name:
            raise ValueError("a chat needs a title")
        with self.transaction() as cur:
            cur.execute(
                "UPDATE hopwise_threads SET title = ?, title_fold = ?, title_kind = ? "
                "WHERE thread_id = ?",
                (name, fold(name), TITLE_USER, thread_id),
            )
        return name

    def delete(self, thread_id: str, owner: str | None) -> None:
        """Forget the thread's row and turns (the caller deletes its checkpoints)."""
        self.check(thread_id, owner)
        with self.transaction() as cur:
            cur.execute("DELETE FROM hopwise_turns WHERE thread_id = ?", (thread_id,))
            cur.execute("DELETE FROM hopwise_threads WHERE thread_id = ?", (thread_id,))

    def list(self, owner: str | None = None) -> builtins.list[dict[str, Any]]:
        """Newest first; only `owner`'s threads when given ([] while none can be read)."""
        query = f"SELECT {', '.join(self.COLUMNS)} FROM hopwise_threads"
        args: tuple[str, ...] = ()
        if owner is not None:
            query, args = query + " WHERE owner = ?", (owner,)
        try:
            rows = self.fetch(query + " ORDER BY updated_at DESC", args)
        except StoreUnavailable:
            return []
        return [dict(zip(self.COLUMNS, r, strict=True)) for r in rows]

    def search(self, owner: str | None, text: str) -> builtins.list[tuple[dict[str, Any], bool]]:
        """Threads whose title or turns contain `text` (case folded, see `fold`), newest first,
        each with whether the title itself matched."""
        pattern = like_pattern(fold(text.strip()))
        cols = ", ".join(f"t.{c}" for c in self.COLUMNS)
        query = (
            f"SELECT {cols}, t.title_fold LIKE ? ESCAPE '\\' FROM hopwise_threads t WHERE "
            "(t.title_fold LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM hopwise_turns u "
            "WHERE u.thread_id = t.thread_id AND u.folded LIKE ? ESCAPE '\\'))"
        )
        args: tuple[str, ...] = (pattern,) * 3
        if owner is not None:
            query, args = query + " AND t.owner = ?", (*args, owner)
        try:
            rows = self.fetch(query + " ORDER BY t.updated_at DESC", args)
        except StoreUnavailable:
            return []
        n = len(self.COLUMNS)
        return [(dict(zip(self.COLUMNS, r[:n], strict=True)), bool(r[n])) for r in rows]


class FeedbackLog(Tables):
    """Readers' ratings of answers, one per (thread, answer index), beside the threads: who,
    thumbs up or down, an optional comment, when, and the question, answer and trace JSON as
    the reader saw them (so a later change to the thread cannot rewrite what was rated)."""

    component = "feedback"
    steps = FEEDBACK_STEPS
    COLUMNS = (
        "thread_id", "answer_index", "owner", "rating", "comment", "created_at", "question",
        "answer", "trace",
    )  # fmt: skip

    def put(self, entry: dict[str, Any]) -> None:
        """Store (or replace) the feedback on one answer; `created_at` is now."""
        row = {**entry, "created_at": time.time()}
        updates = ", ".join(f"{c} = excluded.{c}" for c in self.COLUMNS[2:])
        with self.transaction() as cur:
            cur.execute(
                f"INSERT INTO hopwise_feedback ({', '.join(self.COLUMNS)}) VALUES "
                f"({', '.join('?' for _ in self.COLUMNS)}) ON CONFLICT (thread_id, "
                f"answer_index) DO UPDATE SET {updates}",
                tuple(row[c] for c in self.COLUMNS),
            )

    def of_thread(self, thread_id: str) -> dict[int, dict[str, Any]]:
        """The thread's feedback by answer index."""
        return {int(r["answer_index"]): r for r in self._select("WHERE thread_id = ?", thread_id)}

    def entries(self) -> list[dict[str, Any]]:
        """Every feedback entry, newest first."""
        return self._select("")

    def withdraw(self, thread_id: str, answer_index: int) -> None:
        with self.transaction() as cur:
            cur.execute(
                "DELETE FROM hopwise_feedback WHERE thread_id = ? AND answer_index = ?",
                (thread_id, answer_index),
            )

    def delete_thread(self, thread_id: str) -> None:
        with self.transaction() as cur:
            cur.execute("DELETE FROM hopwise_feedback WHERE thread_id = ?", (thread_id,))

    def _select(self, where: str, *args: str) -> list[dict[str, Any]]:
        query = f"SELECT {', '.join(self.COLUMNS)} FROM hopwise_feedback {where}"
        try:
            rows = self.fetch(query + " ORDER BY created_at DESC", args)
        except StoreUnavailable:
            return []
        return [dict(zip(self.COLUMNS, r, strict=True)) for r in rows]


class DatabaseOptions(Tables):
    """The admin's deployment options (see hopwise.options) in the shared database, so every
    replica sees a change at once."""

    component = "options"
    steps = OPTION_STEPS

    @property
    def web_search(self) -> bool:
        """Whether an admin allowed the web fallback (off until one does, and while the
        database cannot be read)."""
        try:
            rows = self.fetch("SELECT value FROM hopwise_options WHERE name = 'web_search'")
        except StoreUnavailable:
            return False
        return bool(rows) and rows[0][0] == "true"

    def set_web_search(self, allowed: bool) -> None:
        with self.transaction() as cur:
            cur.execute(
                "INSERT INTO hopwise_options (name, value) VALUES ('web_search', ?) ON CONFLICT "
                "(name) DO UPDATE SET value = excluded.value",
                ("true" if allowed else "false",),
            )


# ---- LangGraph's PostgreSQL checkpointer, failure-tolerant --------------------------------


def open_postgres_checkpointer(db: PostgresDatabase) -> Any:
    """LangGraph's PostgresSaver on the database's pool. Its tables are set up on first use,
    once per deployment at a time (an advisory lock: its migrations are not safe to race)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    class ResilientPostgresSaver(PostgresSaver):
        """A PostgresSaver whose failures never cost the answer: a failed read is an empty
        history, a failed write is reported in `problem` instead of raised."""

        def __init__(self) -> None:
            super().__init__(db.pool)
            self.db, self._ready = db, False
            self._setup_lock = threading.Lock()
            self._local = threading.local()  # one question's failure is that question's only

        @property
        def problem(self) -> str:
            """Why this thread's last read or write failed ('' when none did): a failed read
            of a thread's history also skips the write that would follow it."""
            return str(getattr(self._local, "problem", ""))

        @problem.setter
        def problem(self, value: str) -> None:
            self._local.problem = value

        def _failed(self, exc: Exception) -> None:
            self.problem = str(exc) if isinstance(exc, StoreUnavailable) else db.problem(exc)

        def _usable(self) -> None:
            db.available()
            if not self._ready:
                with self._setup_lock:
                    if not self._ready:
                        with db.lock("langgraph-checkpoint-setup", 60.0):
                            self.setup()
                        self._ready = True

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            if self.problem:
                return config
            try:
                self._usable()
                return super().put(config, checkpoint, metadata, new_versions)
            except Exception as exc:  # noqa: BLE001 - reported with the answer
                self._failed(_unavailable(db, exc))
                return config

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            if self.problem:
                return
            try:
                self._usable()
                super().put_writes(config, writes, task_id, task_path)
            except Exception as exc:  # noqa: BLE001
                self._failed(_unavailable(db, exc))

        def get_tuple(self, config: Any) -> Any:
            try:
                self._usable()
                return super().get_tuple(config)
            except Exception as exc:  # noqa: BLE001
                self._failed(_unavailable(db, exc))
                return None

        def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                self._usable()
                found = builtins.list(super().list(config, **kwargs))
            except Exception as exc:  # noqa: BLE001
                self._failed(_unavailable(db, exc))
                return iter(())
            return iter(found)

        def delete_thread(self, thread_id: str) -> None:
            try:
                self._usable()
                super().delete_thread(thread_id)
            except Exception as exc:
                raise _unavailable(db, exc) from exc

    return ResilientPostgresSaver()


def _unavailable(db: PostgresDatabase, exc: Exception) -> StoreUnavailable:
    """The exception as StoreUnavailable (a driver or pool error counts as the database down)."""
    if isinstance(exc, StoreUnavailable):
        return exc
    import psycopg

    from hopwise.database import connection_lost

    if isinstance(exc, psycopg.Error):  # the pool's errors are psycopg's too
        return db.failed(exc) if connection_lost(exc) else StoreUnavailable(db.problem(exc))
    raise exc
