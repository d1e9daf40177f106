"""The whole-question deadline is a hard wall: a model that never finishes (empty pieces forever,
an unclosed <think>, one byte at a time) is cut, and the user gets a degraded answer from the
evidence within the deadline plus a few seconds."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.llm import LLMReasoner
from graph.offline import OfflineReasoner
from hopwise.app import Hopwise
from hopwise.settings import Settings
from tests.fakes.openai_stub import (
    Reply,
    StubOpenAIServer,
    plausible_responder,
    requested_schema,
)
from tests.fakes.retriever import KeywordRetriever, sample_chunks

DEADLINE_S, TIMEOUT_S, SLACK_S = 4.0, 2.0, 4.0
QUESTION = "Where was the director of Inception born?"


def hang_on(fault: str, *, structured: bool) -> Any:
    """Plausible replies, except that the answer stream (or every structured step) hangs."""

    def respond(request: dict[str, Any]) -> Reply:
        is_structured = requested_schema(request) is not None
        if is_structured == structured:
            return Reply(fault=fault)
        return plausible_responder(request)

    return respond


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(trickle_s=1.0) as server:
        yield server


def app_for(stub: StubOpenAIServer) -> Hopwise:
    settings = Settings(
        _env_file=None, llm_base_url=stub.url, llm_model="stub", llm_timeout_s=TIMEOUT_S,
        llm_max_retries=1, question_deadline_s=DEADLINE_S, web_search=False, llm_economy=False,
    )  # type: ignore[call-arg]  # fmt: skip
    assert settings.llm is not None
    reasoner = LLMReasoner(settings.llm, OfflineReasoner(), backoff_s=0.0)
    return Hopwise(settings, KeywordRetriever(sample_chunks()), reasoner, None)


@pytest.mark.parametrize("fault", ["endless", "think_forever", "trickle"])
@pytest.mark.parametrize(
    "structured",
    [False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["answer-stream", "every-step"],
)
def test_a_model_that_never_finishes_is_cut_at_the_deadline(
    stub: StubOpenAIServer, fault: str, structured: bool
) -> None:
    stub.responder = hang_on(fault, structured=structured)
    started = time.monotonic()
    result = app_for(stub).ask(QUESTION)
    elapsed = time.monotonic() - started
    assert elapsed < DEADLINE_S + SLACK_S, elapsed
    assert result.mode == "degraded" and result.answer.strip()
    assert "still thinking" not in result.answer and "<think>" not in result.answer
    assert result.citations  # the answer comes from the evidence found
    assert any(e.mode == "fallback" for e in result.trace)


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_the_cli_answers_within_the_deadline(stub: StubOpenAIServer, tmp_path: Path) -> None:
    from tests.reliability.conftest import cli_env, run_cli

    stub.responder = hang_on("trickle", structured=False)
    env = cli_env(
        tmp_path / "data", HOPWISE_LLM_BASE_URL=stub.url, HOPWISE_LLM_MODEL="stub",
        HOPWISE_LLM_TIMEOUT_S=str(TIMEOUT_S), HOPWISE_QUESTION_DEADLINE_S=str(DEADLINE_S),
    )  # fmt: skip
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "inception.md").write_text(
        "# Inception\n\nInception was directed by Christopher Nolan.\n\n"
        "# Christopher Nolan\n\nChristopher Nolan was born in London.\n",
        encoding="utf-8",
    )
    assert run_cli("ingest", str(docs), env=env).returncode == 0
    started = time.monotonic()  # the CLI's own start-up on this machine now (it opens the store)
    assert run_cli("docs", "list", env=env).returncode == 0
    startup = time.monotonic() - started
    started = time.monotonic()
    result = run_cli("ask", QUESTION, "--json", "--no-web", env=env, timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["mode"] == "degraded" and "London" in answer["answer"]
    assert elapsed < DEADLINE_S + SLACK_S + startup + 2, (elapsed, startup)  # + the start-up


def _inflate(value: Any, size: int) -> Any:
    """Every string of a reply padded to `size` characters, every list repeated 10 times."""
    if isinstance(value, str):
        return value + " pad" * (size // 4)
    if isinstance(value, list):
        return [_inflate(v, size) for v in value] * 10
    if isinstance(value, dict):
        return {k: v if k in ("id", "depends_on", "route", "action", "enough") else
                _inflate(v, size) for k, v in value.items()}  # fmt: skip
    return value


@pytest.mark.slow  # ~20 s: megabytes through the real client
def test_a_hostile_ten_megabyte_reply_stores_under_a_megabyte(
    stub: StubOpenAIServer, tmp_path: Path
) -> None:
    from hopwise.app import open_checkpointer

    size = 1024 * 1024  # ~10 MB per structured reply once lists are repeated; 10 MB answers

    def huge(request: dict[str, Any]) -> Reply:
        reply = plausible_responder(request)
        if reply.data is not None:
            return Reply(data=_inflate(reply.data, size))
        return Reply(content=(reply.content or "") + " more" * (10 * size // 5))

    stub.responder = huge
    settings = Settings(
        _env_file=None, llm_base_url=stub.url, llm_model="stub", llm_timeout_s=20,
        question_deadline_s=60, web_search=False, llm_economy=False, data_dir=tmp_path,
    )  # type: ignore[call-arg]  # fmt: skip
    assert settings.llm is not None
    db = tmp_path / "conversations.sqlite"
    app = Hopwise(
        settings, KeywordRetriever(sample_chunks()),
        LLMReasoner(settings.llm, OfflineReasoner(), backoff_s=0.0), None, open_checkpointer(db),
    )  # fmt: skip
    before = db.stat().st_size
    result = app.ask(QUESTION)
    app.close()
    assert len(json.dumps(result.to_json())) < 1_000_000
    assert all(len(s.question) <= 1_000 for s in result.sub_questions)
    assert len(result.sub_questions) <= 8 and len(result.evaluation.missing) <= 8
    assert db.stat().st_size - before < 1_000_000
