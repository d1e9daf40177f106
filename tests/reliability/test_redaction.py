"""Secrets inside URIs and settings never reach an error line, a banner or a log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import streamlit as st

from hopwise.settings import RedactingFilter, Settings
from ingest.store import redact_uri_secrets
from tests.fakes.env import isolate_hopwise_env
from tests.ingest.conftest import free_port
from tests.reliability.conftest import cli_env, run_cli
from tests.ui.apptools import assert_no_exception, new_app, texts

URI_PASSWORD = "Milvus-URIPASS-93b1"


def test_uri_credentials_and_token_parameters_are_redacted() -> None:
    text = redact_uri_secrets(
        f"at http://root:{URI_PASSWORD}@127.0.0.1:19530 and https://h/v1?api_key=k-123&x=1"
    )
    assert URI_PASSWORD not in text and "k-123" not in text
    assert "http://***@127.0.0.1:19530" in text and "x=1" in text


def test_settings_redact_every_configured_secret() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        llm_api_key="sk-LLM-abcdef", milvus_token="root:TOKEN-xyz9",
        milvus_uri=f"http://root:{URI_PASSWORD}@db:19530", admin_password="ADMIN-pw-77",
        users='{"ana": {"password": "ANA-pw-5", "groups": []}}',
    )  # fmt: skip
    line = settings.redact(
        f"sk-LLM-abcdef root:TOKEN-xyz9 {URI_PASSWORD} ADMIN-pw-77 ANA-pw-5 and plain words"
    )
    assert line.count("***") == 5 and "plain words" in line


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(_env_file=None, llm_api_key="sk-LOGGED-123456")  # type: ignore[call-arg]
    record = logging.LogRecord(
        "x", logging.WARNING, __file__, 1, "key %s", ("sk-LOGGED-123456",), None
    )
    assert RedactingFilter(settings).filter(record) and record.getMessage() == "key ***"


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_a_password_in_the_milvus_uri_stays_out_of_cli_errors(tmp_path: Path) -> None:
    uri = f"http://root:{URI_PASSWORD}@127.0.0.1:{free_port()}"  # nothing listens there
    env = cli_env(tmp_path, HOPWISE_MILVUS_URI=uri, HOPWISE_MILVUS_TIMEOUT_S="2")
    for args in (["docs", "list"], ["-v", "docs", "list"], ["search", "anything"]):
        result = run_cli(*args, env=env)
        assert result.returncode != 0
        assert URI_PASSWORD not in result.stdout + result.stderr, args
    assert "not reachable" in result.stderr or "cannot reach" in result.stderr


def test_a_password_in_the_milvus_uri_stays_out_of_the_banner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_hopwise_env(monkeypatch, tmp_path, tmp_path / "data")
    monkeypatch.setenv("HOPWISE_MILVUS_URI", f"http://root:{URI_PASSWORD}@127.0.0.1:{free_port()}")
    monkeypatch.setenv("HOPWISE_MILVUS_TIMEOUT_S", "2")
    st.cache_resource.clear()
    try:
        at = new_app().run()
        assert_no_exception(at)
        assert at.error and URI_PASSWORD not in texts(at)
    finally:
        st.cache_resource.clear()
