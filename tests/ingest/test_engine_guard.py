"""The slow pure-Python milvus-lite (3.x) is named in one line with the fix, never silently used."""

from __future__ import annotations

from pathlib import Path

import pytest

import ingest.store.client
from hopwise.cli import main
from ingest.store import FAST_ENGINE, embedded_engine_version, slow_engine_warning


def test_only_milvus_lite_3_and_newer_is_flagged() -> None:
    for fast in ("2.5.1", "2.5.2rc1", ""):
        assert slow_engine_warning(fast) is None
    for slow in ("3.0.0", "3.2.2", "10.1"):
        line = slow_engine_warning(slow)
        assert line and slow in line and f"milvus-lite=={FAST_ENGINE}" in line
        assert "\n" not in line
    assert slow_engine_warning() is None  # the pinned engine is the C++ one
    assert embedded_engine_version() == FAST_ENGINE


@pytest.fixture
def slow_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As if a user had upgraded milvus-lite by hand (the installed version is what is read)."""
    for key in ("HOPWISE_MILVUS_URI", "HOPWISE_DATA_DIR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOPWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(ingest.store.client, "embedded_engine_version", lambda: "3.2.2")


def test_cli_says_so_in_one_line(slow_engine: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "list"]) == 0
    warning = [line for line in capsys.readouterr().err.splitlines() if "milvus-lite" in line]
    assert len(warning) == 1 and "3.2.2" in warning[0] and FAST_ENGINE in warning[0]


def test_cli_is_silent_against_a_server(
    slow_engine: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hopwise.cli import warn_slow_engine

    monkeypatch.setenv("HOPWISE_MILVUS_URI", "http://127.0.0.1:1")  # not the embedded engine
    warn_slow_engine()
    assert capsys.readouterr().err == ""
