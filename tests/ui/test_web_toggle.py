"""The web fallback's switches as people see them: off by default with the reason and who can
change it on the chat's toggle; the Admin page's switch, stored server side, turns it on for
every reader; HOPWISE_WEB_SEARCH decides when set. A failed search shows readers words only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st

from graph.result import WEB_UNAVAILABLE, QuestionResult
from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app, texts
from ui.auth import User


@pytest.fixture
def unset(app_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv("HOPWISE_WEB_SEARCH", raising=False)
    (app_data / "options.json").unlink(missing_ok=True)
    st.cache_resource.clear()
    yield app_data
    st.cache_resource.clear()


def chat_toggle(at):
    return at.sidebar.toggle(key="use_web")


def test_off_until_an_admin_allows_it_and_then_on_for_readers(unset: Path) -> None:
    at = new_app().run()
    assert_no_exception(at)
    toggle = chat_toggle(at)
    assert toggle.value is False and toggle.proto.disabled
    assert "An admin can allow it on the Admin page" in toggle.proto.help

    admin = new_app().run()
    admin.switch_page("app_pages/admin.py").run()
    admin.text_input[0].set_value(ADMIN_PASSWORD)
    admin.button[0].click().run()
    assert_no_exception(admin)
    assert admin.toggle(key="admin_web_search").value is False
    admin.toggle(key="admin_web_search").set_value(True).run()
    assert_no_exception(admin)
    assert (unset / "options.json").read_text(encoding="utf-8") == '{"web_search": true}'

    reader = new_app().run()
    toggle = chat_toggle(reader)
    assert toggle.value is True and not toggle.proto.disabled
    assert "public web search engine" in toggle.proto.help

    admin.toggle(key="admin_web_search").set_value(False).run()
    assert (unset / "options.json").read_text(encoding="utf-8") == '{"web_search": false}'


def test_the_deployment_setting_decides_when_set(
    unset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOPWISE_WEB_SEARCH", "off")
    st.cache_resource.clear()
    at = new_app().run()
    toggle = chat_toggle(at)
    assert toggle.proto.disabled and "HOPWISE_WEB_SEARCH=off" in toggle.proto.help
    at.switch_page("app_pages/admin.py").run()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    assert "Web search is off for this deployment (HOPWISE_WEB_SEARCH=off)." in texts(at)
    assert not [t for t in at.toggle if t.key == "admin_web_search"]


class OneAnswer:
    """A runner holding one saved answer whose web search failed."""

    def __init__(self) -> None:
        self.result = QuestionResult.model_validate(
            {"question": "q", "answer": "a", "web_error": "ConnectError: proxy 10.0.0.7:3128"}
        )

    def thread_answers(self, thread_id: str, *, owner: str, groups: object) -> list:
        return [self.result]


def test_readers_get_the_failed_search_in_words_and_admins_the_error() -> None:
    from ui.services import readable_answers

    runner = OneAnswer()
    [reader] = readable_answers(runner, "t", User("ana"), scores=False)  # type: ignore[arg-type]
    [admin] = readable_answers(runner, "t", User("root"), scores=True)  # type: ignore[arg-type]
    assert reader.web_error == WEB_UNAVAILABLE and "10.0.0.7" not in reader.model_dump_json()
    assert "10.0.0.7" in admin.web_error
