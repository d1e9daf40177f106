"""Conversation store faults are named as such, with the file and the way out; the question is
still answered (history off, said so), and a failed open leaks nothing."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
import streamlit as st

from hopwise.app import Hopwise
from hopwise.settings import Settings
from tests.fakes.env import isolate_hopwise_env
from tests.reliability.conftest import cli_env, run_cli
from tests.ui.apptools import assert_no_exception, new_app, texts

DOC = "# Warranty\n\nThe turbine warranty lasts two years from delivery.\n"


def corrupt(path: Path) -> None:
    path.write_bytes(b"this is not an sqlite database " * 200)


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_a_corrupt_file_is_named_and_the_question_still_answered(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = cli_env(data)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "warranty.md").write_text(DOC, encoding="utf-8")
    assert run_cli("ingest", str(docs), env=env).returncode == 0
    corrupt(data / "conversations.sqlite")
    result = run_cli("ask", "How long is the turbine warranty?", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert "two years" in json.loads(result.stdout)["answer"]
    assert "conversation store" in result.stderr and "conversations.sqlite" in result.stderr
    assert "move it aside" in result.stderr and "knowledge base" not in result.stderr.split(
        "move it aside"
    )[0].replace("the knowledge base is not affected", "")


def test_failed_opens_leak_no_thread_or_store(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, web_search=False)  # type: ignore[call-arg]
    settings.ensure_data_dir()
    corrupt(settings.checkpoint_path)
    before = threading.active_count()
    for _ in range(5):
        app = Hopwise.from_settings(settings)
        assert "cannot be read" in app.history_problem
        app.close()
    assert threading.active_count() <= before + 1


def test_a_locked_file_answers_and_says_it_was_not_saved(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, web_search=False)  # type: ignore[call-arg]
    app = Hopwise.from_settings(settings)
    blocker = sqlite3.connect(settings.checkpoint_path, timeout=1)
    blocker.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
    try:
        result = app.ask("How long is the turbine warranty?")
        assert result.answer and any("not saved" in n and "locked" in n for n in result.notices)
    finally:
        blocker.rollback()
        blocker.close()
        app.close()


def test_the_chat_page_says_history_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = isolate_hopwise_env(monkeypatch, tmp_path, tmp_path / "data")
    corrupt(data / "conversations.sqlite")
    st.cache_resource.clear()
    try:
        at = new_app().run()
        assert_no_exception(at)
        assert "Conversations are not being saved" in texts(at)
        assert "could not be opened" not in texts(at)
        at.chat_input[0].set_value("How long is the turbine warranty?").run()
        assert_no_exception(at)
    finally:
        st.cache_resource.clear()
