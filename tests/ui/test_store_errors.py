"""When the knowledge base cannot be opened (here: another process holds Milvus Lite's lock on
the database, as a running `hopwise ingest` would), every page says so with st.error and no
stack trace."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app, texts

HOLD_LOCK = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.lockf(handle, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(120)
"""


@pytest.fixture(scope="module")
def locked(app_data: Path) -> Iterator[Path]:
    app_data.mkdir(parents=True, exist_ok=True)
    lock = app_data / ".milvus.db.lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield app_data
    finally:
        proc.kill()
        proc.wait()


def test_chat_and_trace_show_the_store_error(locked: Path) -> None:
    at = new_app().run()
    assert_no_exception(at)
    assert "The knowledge base could not be opened" in texts(at)
    assert not at.chat_input
    at.switch_page("app_pages/trace.py").run()
    assert_no_exception(at)
    assert "The knowledge base could not be opened" in texts(at)


def test_admin_shows_the_store_error_after_sign_in(locked: Path) -> None:
    at = new_app().run()
    at.switch_page("app_pages/admin.py").run()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    assert_no_exception(at)
    assert "The knowledge base could not be opened" in texts(at)
    assert not at.get("file_uploader")
