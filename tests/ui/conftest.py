"""App fixtures: one temp data dir per test module, HOPWISE_* env set before AppTest runs,
and the st.cache_resource runner (Milvus Lite + SQLite) closed when the module ends."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st

from tests.ui.apptools import ADMIN_PASSWORD, CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def app_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh data dir for the module; outer HOPWISE_* variables removed, web search off."""
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.startswith("HOPWISE_"):
                mp.delenv(key, raising=False)
        root = tmp_path_factory.mktemp("ui")
        data = root / "data"
        mp.setenv("HOPWISE_DATA_DIR", str(data))
        mp.setenv("HOPWISE_WEB_SEARCH", "off")
        mp.setenv("HOPWISE_ADMIN_PASSWORD", ADMIN_PASSWORD)
        mp.chdir(root)  # no stray .env or .streamlit/secrets.toml from the checkout
        st.cache_resource.clear()
        yield data
        st.cache_resource.clear()  # closes the runner via on_release


@pytest.fixture(autouse=True)
def forget_failed_sign_ins(request: pytest.FixtureRequest) -> Iterator[None]:
    """Failed sign-ins persist in the data dir by design; each test starts without any."""
    yield
    if "app_data" not in request.fixturenames:
        return
    path = request.getfixturevalue("app_data") / "sign_in.sqlite"
    if path.exists():
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM sign_in_accounts")
            conn.execute("DELETE FROM sign_in_failures")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium for the browser suites, one per module."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
