"""Fixtures shared by every suite. Suite-specific fixtures live in each folder's conftest."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.postgres import PostgresServer, running_server
from tests.fakes.env import isolate_hopwise_env

# No test may reach the network: keep every library's telemetry and hub access off.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOPWISE_DATA_DIR with every HOPWISE_* variable from the outer env removed."""
    return isolate_hopwise_env(monkeypatch, tmp_path, tmp_path / "hopwise-data")


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the run (Debian's binaries, a temp dir, a loopback port);
    skipped, with the reason, where the binaries are absent (`make postgres` installs them)."""
    with running_server() as server:
        yield server
