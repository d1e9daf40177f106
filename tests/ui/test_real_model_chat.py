"""The chat page with a real local model (slow; skipped until `make real-model`): a question
about an invented document ends in a cited answer, with the claim check in its trace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st

from hopwise.bench.llm import KB_DIR
from tests.realmodel.server import MODEL, real_model_server
from tests.ui.apptools import assert_no_exception, new_app, texts
from tests.ui.markdown_tokens import message_text

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model_app(app_data: Path) -> Iterator[Path]:
    with real_model_server() as url, pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOPWISE_LLM_BASE_URL", url)
        mp.setenv("HOPWISE_LLM_MODEL", MODEL)
        st.cache_resource.clear()
        from ingest.pipeline import ingest_bytes
        from ui.services import get_settings, get_store

        doc = KB_DIR / "travel.md"
        result = ingest_bytes(
            doc.read_bytes(), doc.name, get_store(), groups=["all"], config=get_settings().ingest
        )
        assert result.status == "ingested", result.reason
        yield app_data
        st.cache_resource.clear()


def test_a_question_in_chat_ends_in_a_cited_answer_with_a_real_model(model_app: Path) -> None:
    at = new_app()
    at.default_timeout = 180
    at.run()
    at.chat_input[0].set_value("How much hotel cost is refunded per night in capital cities?").run()
    assert_no_exception(at)
    answer = message_text([m for m in at.chat_message if m.name == "assistant"][-1])
    assert "[1]" in answer and "travel.md" in answer  # cited, with its source card
    assert "mode: LLM" in answer or "mode: degraded" in answer
    next(b for b in at.button if b.label.startswith("Open hop trace")).click().run()
    assert_no_exception(at)
    assert "claim" in texts(at)  # the plain summary says what the claim check did
