"""An isolated HOPWISE_* environment for one test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def isolate_hopwise_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: Path) -> Path:
    """Drop every outer HOPWISE_* variable, point the data dir at `data`, turn web search off."""
    for key in list(os.environ):
        if key.startswith("HOPWISE_"):
            monkeypatch.delenv(key, raising=False)
    data.mkdir()
    monkeypatch.setenv("HOPWISE_DATA_DIR", str(data))
    monkeypatch.setenv("HOPWISE_WEB_SEARCH", "off")
    monkeypatch.chdir(tmp_path)
    return data
