"""Where the server-side state lives: SQLite files in the data dir (the default, one machine) or
one PostgreSQL database (HOPWISE_DATABASE_URL, several replicas). One small interface over both:

- `fetch`/`execute`/`transaction` run SQL written once, with `?` placeholders, in the subset
  both engines speak (the PostgreSQL side turns `?` into `%s`);
- `migrate(component, steps)` applies a component's numbered schema steps once, recorded in
  `hopwise_schema`, serialised so that two replicas starting at once neither race nor repeat;
- `lock(name)` is held by one thread of one process of the whole deployment at a time
  (a PostgreSQL advisory lock, or a file lock for SQLite), and `try_lease(name)` elects one
  holder for as long as it lives (the embedding worker);
- `secret(name, make)` is a value made once and shared by every replica (the session key).

A failure to reach the engine raises `StoreUnavailable`, whose message names the store and
the way out; PostgreSQL fails fast for a few seconds after a failure instead of making every
call of a page wait out the connection timeout.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from graph.conversations import conversation_store_problem
from ingest.locks import DocumentLocks, LockTimeout

Row = tuple[Any, ...]
POLL_S = 0.05
RETRY_AFTER_FAILURE_S = 3.0  # PostgreSQL: how long calls fail fast after a failed one
CONNECT_TIMEOUT_S = 3  # seconds to reach PostgreSQL before calling it unavailable
POOL_SIZE = 8  # connections per process (checkpointer and tables together)
MIGRATION_LOCK = "hopwise-migrations"
KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT = 10, 5, 3  # lock and lease connections
KEEPALIVE_GIVE_UP_S = 30  # unacknowledged data this long: the peer is gone


class StoreUnavailable(RuntimeError):
    """The database cannot be read or written now; the message names it and what to do."""


class Cursor(Protocol):
    def fetch(self, sql: str, args: Sequence[Any] = ()) -> list[Row]: ...
    def execute(self, sql: str, args: Sequence[Any] = ()) -> None: ...


Step = str | Callable[[Cursor, str], None]  # SQL, or a function of (cursor, engine kind)


def advisory_key(name: str) -> int:
    """A stable signed 64-bit key for a lock name (PostgreSQL's advisory lock space)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big", signed=True)


class Database:
    """The interface; see the module docstring. `kind` is 'sqlite' or 'postgresql'."""

    kind = ""
    label = ""  # what the store is called in messages (a file path, or host/database)
    what = "the store"  # its role, for messages ("the conversation store")

    def transaction(self) -> contextlib.AbstractContextManager[Cursor]:
        raise NotImplementedError

    def fetch(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        with self.transaction() as cur:
            return cur.fetch(sql, args)

    def fetchone(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        rows = self.fetch(sql, args)
        return rows[0] if rows else None

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        with self.transaction() as cur:
            cur.execute(sql, args)

    def migrate(self, component: str, steps: Sequence[Step]) -> int:
        """Apply the steps of `component` not applied yet; returns its schema version."""
        with self.exclusive(MIGRATION_LOCK) as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS hopwise_schema (component TEXT PRIMARY KEY, "
                "version INTEGER NOT NULL)"
            )
            rows = cur.fetch("SELECT version FROM hopwise_schema WHERE component = ?", (component,))
            version = int(rows[0][0]) if rows else 0
            for number, step in enumerate(steps[version:], start=version + 1):
                if callable(step):
                    step(cur, self.kind)
                else:
                    cur.execute(step)
                cur.execute(
                    "INSERT INTO hopwise_schema (component, version) VALUES (?, ?) ON CONFLICT "
                    "(component) DO UPDATE SET version = excluded.version",
                    (component, number),
                )
            return max(version, len(steps))

    def ready(self, component: str, steps: Sequence[Step]) -> None:
        """`migrate` once per component for this object: later calls cost nothing, and a
        failed one (the database unreachable) is tried again on the next use."""
        done: set[str] = self.__dict__.setdefault("_migrated", set())
        if component not in done:
            self.migrate(component, steps)
            done.add(component)

    def exclusive(self, name: str) -> contextlib.AbstractContextManager[Cursor]:
        """A transaction that holds `name` until it ends (no other writer of the deployment
        runs one at the same time)."""
        raise NotImplementedError

    def lock(self, name: str, timeout_s: float) -> contextlib.AbstractContextManager[None]:
        """Held by one thread of the whole deployment at a time; LockTimeout after timeout_s."""
        raise NotImplementedError

    def try_lease(self, name: str) -> Lease | None:
        """The lease `name` if no other process holds it (None otherwise); it is held until
        `release()` or until this process dies."""
        raise NotImplementedError

    def secret(self, name: str, make: Callable[[], str]) -> str:
        """The shared value `name`, made with `make()` by the first process to ask."""
        self.ready("secrets", SECRET_STEPS)
        with self.transaction() as cur:
            cur.execute(
                "INSERT INTO hopwise_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) "
                "DO NOTHING",
                (name, make()),
            )
            return str(cur.fetch("SELECT value FROM hopwise_secrets WHERE name = ?", (name,))[0][0])

    def health(self) -> str:
        """'' when the database answers now, else why not (StoreUnavailable's message)."""
        try:
            self.fetch("SELECT 1")
        except StoreUnavailable as exc:
            return str(exc)
        return ""

    def document_locks(self, timeout_s: float = 600.0) -> DocumentLocks:
        """Per-document write locks that every replica of the deployment respects."""
        return DocumentLocks(shared=SharedLocks(self), timeout_s=timeout_s)

    def close(self) -> None:
        pass


SECRET_STEPS: list[Step] = [
    "CREATE TABLE IF NOT EXISTS hopwise_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
]


class Lease:
    """An elected role (see Database.try_lease); `release()` gives it up, `alive()` says
    whether it is still held (a lost database connection loses it)."""

    def __init__(
        self, release: Callable[[], None], alive: Callable[[], bool] | None = None
    ) -> None:
        self._release: Callable[[], None] | None = release
        self._alive = alive

    def alive(self) -> bool:
        return self._release is not None and (self._alive is None or self._alive())

    @property
    def held(self) -> bool:
        return self._release is not None

    def release(self) -> None:
        if self._release is not None:
            self._release()
            self._release = None


class SharedLocks:
    """The cross-replica half of DocumentLocks: a database lock per document."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.scope = f"{db.kind}:{db.label}"

    def hold(self, name: str, timeout_s: float) -> contextlib.AbstractContextManager[None]:
        return self.db.lock(name, timeout_s)

    def close(self) -> None:
        self.db.close()


# ---- SQLite ---------------------------------------------------------------------------------


class SqliteDatabase(Database):
    """A SQLite file. With `conn` and `lock` it shares an open connection (the conversation
    file, shared with LangGraph's SqliteSaver); otherwise each transaction opens and closes a
    short connection (sign-ins and sessions are rare next to everything else)."""

    kind = "sqlite"

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection | None = None,
        lock: Any = None,
        *,
        what: str = "the store",
        timeout_s: float = 10.0,
    ) -> None:
        self.path, self.conn, self.what, self.timeout_s = Path(path), conn, what, timeout_s
        self.label = str(path)
        self._lock = lock if lock is not None else threading.RLock()
        self._files = DocumentLocks(self.path.parent / "locks")

    def problem(self, exc: BaseException) -> str:
        return conversation_store_problem(self.path, exc, self.what)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Cursor]:
        with self._lock, self._connection() as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield _SqliteCursor(conn)
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise StoreUnavailable(self.problem(exc)) from exc
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        if self.conn is not None:
            if self.conn.in_transaction:  # left open by another user of the connection
                self.conn.commit()
            yield self.conn
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), timeout=self.timeout_s, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(self.problem(exc)) from exc
        try:
            yield conn
        finally:
            conn.close()

    def exclusive(self, name: str) -> contextlib.AbstractContextManager[Cursor]:
        return self.transaction()  # BEGIN IMMEDIATE: one writer of the file at a time

    @contextlib.contextmanager
    def lock(self, name: str, timeout_s: float) -> Iterator[None]:
        locks = DocumentLocks(self._files.directory, timeout_s=timeout_s)
        with locks.hold(name):
            yield

    def try_lease(self, name: str) -> Lease | None:
        return _file_lease(self._files.path_for(f"lease-{name}"))


class _SqliteCursor:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def fetch(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return [tuple(r) for r in self.conn.execute(sql, tuple(args)).fetchall()]

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.conn.execute(sql, tuple(args))


def _file_lease(path: Path) -> Lease | None:
    import fcntl
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None

    def release() -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    return Lease(release)


# ---- PostgreSQL -----------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\?")


def postgres_sql(sql: str) -> str:
    """`?` placeholders as psycopg's `%s` (a literal % doubled first)."""
    return _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))


def safe_location(url: str) -> str:
    """host:port/database of a PostgreSQL URL, without user or password (for messages)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - a message only
        return "PostgreSQL"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"PostgreSQL {host}{port}/{parts.get('dbname') or ''}".rstrip("/")


class PostgresDatabase(Database):
    """A PostgreSQL database through a psycopg 3 connection pool (autocommit connections with
    dict rows, the form LangGraph's PostgresSaver needs, shared with it)."""

    kind = "postgresql"

    def __init__(self, url: str, *, what: str = "the store", pool_size: int = POOL_SIZE) -> None:
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        self.url, self.what = url, what
        self.label = safe_location(url)
        self._down_until = 0.0
        self._last_problem = ""  # set by a lost connection until the server answers again
        self._recovering = threading.Lock()
        self.pool: Any = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            timeout=CONNECT_TIMEOUT_S * 2,
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                "row_factory": dict_row,
                "connect_timeout": CONNECT_TIMEOUT_S,
            },
            check=ConnectionPool.check_connection,
            open=False,
            name="hopwise",
        )
        self.pool.open(wait=False)

    def problem(self, exc: BaseException) -> str:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return (
            f"{self.what} ({self.label}) is unavailable ({reason}); answers are not saved "
            "until it is back"
        )

    def available(self) -> None:
        """Raise StoreUnavailable at once while the last failure is recent."""
        if time.monotonic() < self._down_until:
            raise StoreUnavailable(self._last_problem)

    def _recover(self) -> None:
        """The first call after a failure: reach the server directly, and when it answers
        renew the pool's connections at once (instead of waiting out the pool's own reconnect
        backoff, which grows while the server is down)."""
        import psycopg

        with self._recovering:
            if not self._last_problem:
                return
            try:
                psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S).close()
                self.pool.check()
            except psycopg.Error as exc:
                raise self.failed(exc) from exc
            self._last_problem = ""

    def failed(self, exc: BaseException) -> StoreUnavailable:
        self._last_problem = self.problem(exc)
        self._down_until = time.monotonic() + RETRY_AFTER_FAILURE_S
        return StoreUnavailable(self._last_problem)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection, or StoreUnavailable (fast while the database is down). Every
        driver or pool error is StoreUnavailable (the caller degrades, never a traceback); only
        a lost connection starts the fail-fast window."""
        import psycopg
        from psycopg_pool import PoolTimeout

        self.available()
        if self._last_problem:
            self._recover()
        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            if connection_lost(exc):
                raise self.failed(exc) from exc
            raise StoreUnavailable(self.problem(exc)) from exc
        except psycopg.Error as exc:  # the pool's errors are psycopg's too
            raise StoreUnavailable(self.problem(exc)) from exc

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Cursor]:
        with self.connection() as conn, conn.transaction():
            yield _PostgresCursor(conn)

    @contextlib.contextmanager
    def exclusive(self, name: str) -> Iterator[Cursor]:
        with self.transaction() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(?)", (advisory_key(name),))
            yield cur

    def dedicated(self) -> Any:
        """A connection of its own, outside the pool, for a lock or lease held a long time:
        keepalives both ways, so if this machine dies the server drops the connection (and
        its advisory locks) within about half a minute, and a dead server is noticed as fast."""
        import psycopg

        self.available()
        try:
            return psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                keepalives=1,
                keepalives_idle=KEEPALIVE_IDLE_S,
                keepalives_interval=KEEPALIVE_INTERVAL_S,
                keepalives_count=KEEPALIVE_COUNT,
                tcp_user_timeout=KEEPALIVE_GIVE_UP_S * 1000,
                options=(
                    f"-c tcp_keepalives_idle={KEEPALIVE_IDLE_S} "
                    f"-c tcp_keepalives_interval={KEEPALIVE_INTERVAL_S} "
                    f"-c tcp_keepalives_count={KEEPALIVE_COUNT} "
                    f"-c tcp_user_timeout={KEEPALIVE_GIVE_UP_S * 1000}"
                ),
            )
        except psycopg.Error as exc:
            raise self.failed(exc) from exc

    @contextlib.contextmanager
    def lock(self, name: str, timeout_s: float) -> Iterator[None]:
        """A session advisory lock on a dedicated connection (never one of the pool's: a
        write may hold a document's lock and its original's for minutes)."""
        import psycopg

        key, deadline = advisory_key(name), time.monotonic() + timeout_s
        conn = self.dedicated()
        try:
            try:
                while not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(f"{name} is held by another replica")
                    time.sleep(POLL_S)
            except psycopg.Error as exc:
                raise self.failed(exc) from exc
            yield
        finally:
            conn.close()  # ends the session: the lock goes with it

    def try_lease(self, name: str) -> Lease | None:
        """A session advisory lock on a dedicated connection: held while that connection
        lives, so a replica that dies gives the role up (see `dedicated`)."""
        import psycopg

        conn = self.dedicated()
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (advisory_key(name),)).fetchone()
        except psycopg.Error as exc:
            conn.close()
            raise self.failed(exc) from exc
        if not (row and row[0]):
            conn.close()
            return None

        def alive() -> bool:
            try:
                conn.execute("SELECT 1")
            except psycopg.Error:
                return False
            return True

        return Lease(conn.close, alive)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.pool.close(timeout=2)


def connection_lost(exc: BaseException) -> bool:
    """Whether an error means the server cannot be reached (not a deadlock, a serialization
    failure or another statement-level error that an OperationalError also covers)."""
    import psycopg
    from psycopg_pool import PoolTimeout

    if isinstance(exc, PoolTimeout | psycopg.InterfaceError):
        return True
    state = getattr(exc, "sqlstate", None)
    return state is None or str(state).startswith(("08", "57P"))  # connection, shutdown


class _PostgresCursor:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def fetch(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        cur = self.conn.execute(postgres_sql(sql), tuple(args))
        return [tuple(r.values()) for r in cur.fetchall()] if cur.description else []

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.conn.execute(postgres_sql(sql), tuple(args))
