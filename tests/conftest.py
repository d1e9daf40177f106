"""Fixtures shared by every suite. Suite-specific fixtures live in each folder's conftest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# No test may reach the network: keep every library's telemetry and hub access off.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOPWISE_DATA_DIR with every HOPWISE_* variable from the outer env removed."""
    for key in list(os.environ):
        if key.startswith("HOPWISE_"):
            monkeypatch.delenv(key, raising=False)
    path = tmp_path / "hopwise-data"
    path.mkdir()
    monkeypatch.setenv("HOPWISE_DATA_DIR", str(path))
    monkeypatch.setenv("HOPWISE_WEB_SEARCH", "off")
    monkeypatch.chdir(tmp_path)
    return path
