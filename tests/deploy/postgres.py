"""A real PostgreSQL server for tests: Debian's binaries, `initdb` and `pg_ctl` in a temporary
directory, listening on a free loopback port (and a Unix socket in that directory only), stopped
afterwards. As root (initdb refuses root) the cluster belongs to the `postgres` user."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from hopwise.bench.servers import (  # noqa: F401 - the suites' names for them
    PostgresServer,
    free_port,
    missing_reason,
    postgres_bin,
)


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A started server, stopped afterwards; the test is skipped, with the reason, where
    Debian's server binaries are absent (`make postgres` installs them)."""
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()
