"""A real PostgreSQL for the deployment suites (skipped, with the reason, where Debian's server
binaries are absent; `.ci/run` installs them), and the state database of every contract test:
SQLite files and PostgreSQL, each test on a fresh one."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopwise.database import Database, PostgresDatabase, SqliteDatabase
from tests.deploy.postgres import PostgresServer

_NAMES = itertools.count()


class Databases:
    """Opens databases of one engine for a test: `open()` twice is two replicas of one."""

    def __init__(self, kind: str, tmp_path: Path, postgres: PostgresServer | None) -> None:
        self.kind, self.tmp_path = kind, tmp_path
        self.url = postgres.fresh_database(f"t{next(_NAMES)}") if postgres else ""
        self.opened: list[Database] = []

    def open(self, what: str = "the store") -> Database:
        db: Database
        if self.kind == "postgresql":
            db = PostgresDatabase(self.url, what=what, pool_size=4)
        else:
            db = SqliteDatabase(self.tmp_path / "state.sqlite", what=what)
        self.opened.append(db)
        return db

    def close(self) -> None:
        for db in self.opened:
            db.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Databases]:
    server = request.getfixturevalue("postgres") if request.param == "postgresql" else None
    dbs = Databases(request.param, tmp_path, server)
    yield dbs
    dbs.close()


@pytest.fixture
def db(databases: Databases) -> Database:
    return databases.open()
