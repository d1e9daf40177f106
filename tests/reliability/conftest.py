"""Reliability and security suite: helpers for CLI subprocesses, a restartable Milvus Lite server
on loopback, and the access-control ledger printed at the end of the run."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.env import isolate_hopwise_env
from tests.ingest.conftest import MilvusLiteServer, free_port
from tests.reliability.leaks import LEDGER

ROOT = Path(__file__).resolve().parents[2]


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a `hopwise` subprocess: no outer HOPWISE_*, web off, this data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env.update(
        PYTHONPATH=str(ROOT), HOPWISE_DATA_DIR=str(data_dir), HOPWISE_WEB_SEARCH="off",
        PYTHONWARNINGS="ignore",
    )  # fmt: skip
    env.update(extra)
    return env


def run_cli(
    *args: str, env: dict[str, str], timeout: float = 120, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m hopwise ARGS` as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "hopwise", *args], env=env, cwd=cwd or ROOT, text=True,
        capture_output=True, timeout=timeout,
    )  # fmt: skip


def server_on(db_file: Path, port: int | None = None) -> MilvusLiteServer:
    """A Milvus Lite gRPC server for db_file on a given (or free) loopback port, not started."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from milvus_lite.server import Server
    server = MilvusLiteServer.__new__(MilvusLiteServer)
    server.port = port or free_port()
    server.uri = f"http://127.0.0.1:{server.port}"
    server._server = Server(str(db_file), address=f"127.0.0.1:{server.port}")
    return server


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Like `data_dir`, for tests that also need the path of the run's tmp folder."""
    return isolate_hopwise_env(monkeypatch, tmp_path, tmp_path / "data")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if LEDGER.attempts:
        terminalreporter.write_line(f"access control: {LEDGER.summary()}")
