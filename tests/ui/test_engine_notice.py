"""The app names the slow pure-Python milvus-lite (3.x) on its pages, with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

import ingest.store.client
from ingest.store import FAST_ENGINE
from tests.ui.apptools import assert_no_exception, new_app


def test_app_shows_the_slow_engine_on_the_page(
    app_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = new_app().run()
    assert_no_exception(at)
    assert not any("milvus-lite" in w.value for w in at.warning)
    monkeypatch.setattr(ingest.store.client, "embedded_engine_version", lambda: "3.2.2")
    at = new_app().run()
    assert_no_exception(at)
    assert any("3.2.2" in w.value and FAST_ENGINE in w.value for w in at.warning)
