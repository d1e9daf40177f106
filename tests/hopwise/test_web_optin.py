"""The web fallback is opt-in: a question leaves the machine through web search only when the
deployment says so (HOPWISE_WEB_SEARCH=on) or, with the setting unset, an admin allowed it on
the Admin page (stored server side). A failed search reaches readers in words only."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.protocols import WebResult
from graph.result import WEB_UNAVAILABLE
from graph.schemas import EvidenceVerdict
from hopwise.app import Hopwise
from hopwise.options import DeploymentOptions
from hopwise.settings import Settings
from tests.fakes.reasoner import ScriptedReasoner
from tests.fakes.retriever import KeywordRetriever, sample_chunks
from tests.fakes.web import FakeWebSearch

QUESTION = "Where was the director of Inception born?"
NOT_ENOUGH = EvidenceVerdict(enough=False, missing=["year"], web_query="Nolan birth year")


def app(tmp_path: Path, web: FakeWebSearch, setting: str | None) -> Hopwise:
    values: dict[str, object] = {"data_dir": tmp_path, "llm_economy": False}
    if setting is not None:
        values["web_search"] = setting
    settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
    reasoner = ScriptedReasoner(
        decompositions={QUESTION: [("Who directed Inception?", None), ("Where was #1 born?", 1)]},
        bridges={"Where was #1 born?": "Where was Christopher Nolan born?"},
        verdicts=[NOT_ENOUGH] * 10,
    )
    return Hopwise(settings, KeywordRetriever(sample_chunks()), reasoner, web, InMemorySaver())


def test_unset_means_off_until_an_admin_allows_it(tmp_path: Path) -> None:
    assert Settings(_env_file=None).web_search is None  # type: ignore[call-arg]
    web = FakeWebSearch([WebResult(url="https://example.org/n", snippet="born 1970")])
    hopwise = app(tmp_path, web, None)
    assert not hopwise.web_allowed()
    assert not hopwise.ask(QUESTION).web_used and web.queries == []  # nothing left the machine
    DeploymentOptions(tmp_path / "options.json").set_web_search(True)  # the Admin page
    assert hopwise.web_allowed()
    assert hopwise.ask(QUESTION).web_used and web.queries == ["Nolan birth year"]
    assert not hopwise.ask(QUESTION, web=False).web_used  # the reader's own toggle still holds


@pytest.mark.parametrize(("setting", "admin", "allowed"), [
    ("off", True, False), ("on", False, True), ("on", True, True), ("off", False, False),
])  # fmt: skip
def test_the_deployment_setting_wins_over_the_admin(
    tmp_path: Path, setting: str, admin: bool, allowed: bool
) -> None:
    DeploymentOptions(tmp_path / "options.json").set_web_search(admin)
    web = FakeWebSearch([WebResult(url="https://example.org/n", snippet="born 1970")])
    hopwise = app(tmp_path, web, setting)
    assert hopwise.web_allowed() is allowed
    assert hopwise.ask(QUESTION).web_used is allowed


def test_options_survive_a_restart_and_a_broken_file_means_off(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    DeploymentOptions(path).set_web_search(True)
    assert DeploymentOptions(path).web_search
    path.write_text("{not json", encoding="utf-8")
    assert not DeploymentOptions(path).web_search
    DeploymentOptions(path).set_web_search(False)
    assert path.read_text(encoding="utf-8") == '{"web_search": false}'


def test_a_failed_search_reaches_readers_in_words_only(tmp_path: Path) -> None:
    web = FakeWebSearch(mode="fail")
    result = app(tmp_path, web, "on").ask(QUESTION)
    assert result.web_error == "network unreachable" and not result.web_used
    shown = result.without_web_error_details()
    assert shown.web_error == WEB_UNAVAILABLE
    assert "network unreachable" not in shown.model_dump_json()
    assert "network unreachable" in result.model_dump_json()  # the admin's copy keeps it
