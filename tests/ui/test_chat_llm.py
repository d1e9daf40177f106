"""Chat with a language model configured: the real ChatOpenAI client talks to the local stub
server; the answer streams in, the badges say `llm`, and a failing endpoint shows `degraded`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_stub import StubOpenAIServer, plausible_responder
from tests.ui.apptools import assert_no_exception, new_app, texts
from tests.ui.markdown_tokens import message_text

DOC = b"# Warranty\n\nThe turbine warranty lasts two years from delivery.\n"


@pytest.fixture(scope="module")
def stub(app_data: Path) -> Iterator[StubOpenAIServer]:
    with (
        StubOpenAIServer(responder=plausible_responder) as server,
        pytest.MonkeyPatch.context() as mp,
    ):
        mp.setenv("HOPWISE_LLM_BASE_URL", server.url)
        mp.setenv("HOPWISE_LLM_MODEL", "stub-model")
        mp.setenv("HOPWISE_LLM_API_KEY", "test-key")
        mp.setenv("HOPWISE_LLM_MAX_RETRIES", "0")
        from ingest.pipeline import ingest_bytes
        from ui.services import get_settings, get_store

        result = ingest_bytes(
            DOC, "warranty.md", get_store(), groups=["all"], config=get_settings().ingest
        )
        assert result.status == "ingested"
        yield server


def answer_of(at) -> str:
    assistant = [m for m in at.chat_message if m.name == "assistant"][-1]
    return message_text(assistant)


def test_llm_answer_streams_with_llm_badges(stub: StubOpenAIServer) -> None:
    at = new_app().run()
    assert_no_exception(at)
    assert "extracted from your documents" not in texts(at)
    at.chat_input[0].set_value("How long is the turbine warranty?").run()
    assert_no_exception(at)
    answer = answer_of(at)
    assert "two years" in answer and "[1]" in answer and "warranty.md" in answer
    assert "mode: LLM" in answer
    assert any(r.json.get("stream") for r in stub.chat_requests)  # the answer step streamed
    calls = len(stub.chat_requests)
    assert f"LLM calls: {calls}" in answer


def test_failing_endpoint_shows_degraded(stub: StubOpenAIServer) -> None:
    stub.fault = "http500"
    try:
        at = new_app().run()
        at.chat_input[0].set_value("How long is the turbine warranty?").run()
        assert_no_exception(at)
        answer = answer_of(at)
        assert "mode: degraded" in answer and "two years" in answer
    finally:
        stub.fault = None


def test_a_model_that_never_finishes_still_gives_an_answer(
    stub: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import streamlit as st

    monkeypatch.setenv("HOPWISE_QUESTION_DEADLINE_S", "4")
    monkeypatch.setenv("HOPWISE_LLM_TIMEOUT_S", "2")
    st.cache_resource.clear()  # the runner picks up the deadline
    stub.fault = "think_forever"
    try:
        at = new_app().run()
        started = time.monotonic()
        at.chat_input[0].set_value("How long is the turbine warranty?").run(timeout=30)
        assert time.monotonic() - started < 10
        assert_no_exception(at)
        answer = answer_of(at)
        assert "mode: degraded" in answer and "two years" in answer
        assert "<think>" not in answer
    finally:
        stub.fault = None
        st.cache_resource.clear()
