"""`hopwise bench llm` against the local stub: per-question latency, how often offline reasoning
stood in, and a model failing its structured steps bypassed after the threshold (graph.llm_health);
the endpoint comes from the flags or, without them, from the configured HOPWISE_LLM_* settings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopwise.cli import main
from tests.fakes.env import isolate_hopwise_env
from tests.fakes.openai_stub import Reply, StubOpenAIServer, requested_schema


def invalid_structured(request: dict[str, Any]) -> Any:
    return Reply(fault="malformed") if requested_schema(request) else "No idea [1]."


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[StubOpenAIServer]:
    isolate_hopwise_env(monkeypatch, tmp_path, tmp_path / "data")
    monkeypatch.setenv("HOPWISE_EMBEDDINGS", "off")
    with StubOpenAIServer(responder=invalid_structured) as server:
        yield server


def test_bench_llm_uses_the_configured_endpoint_and_reports_the_bypass(
    stub: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOPWISE_LLM_BASE_URL", stub.url)
    monkeypatch.setenv("HOPWISE_LLM_MODEL", "stub-model")
    monkeypatch.setenv("HOPWISE_LLM_FAILING_QUESTIONS", "2")
    assert main(["bench", "llm", "--limit", "2", "--repeat", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["model"] == "stub-model" and result["questions"] == 4
    assert [row["model"] for row in result["rows"]] == ["use", "use", "bypass", "bypass"]
    assert [row["calls"] > 0 for row in result["rows"]] == [True, True, False, False]
    assert result["offline_stood_in"] == "4/4" and result["model_bypassed"] == "2/4"
    assert result["llm_health"]["state"] == "bypassed"
    assert 0 < result["seconds_median"] <= result["seconds_p95"] <= result["seconds_max"]


def test_bench_llm_prints_latency_and_stand_ins(
    stub: StubOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "llm", "--base-url", stub.url, "--model", "stub-model", "--limit", "2"]
    assert main([*args, "--pause", "0.5"]) == 0
    shown = capsys.readouterr().out
    assert "seconds_median" in shown and "offline_stood_in     2/2" in shown
    asked = [r.at for r in stub.chat_requests]
    assert asked and asked[-1] - asked[0] >= 0.5  # the second question came after the pause


def test_bench_llm_without_a_model_is_one_error_line(
    stub: StubOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "llm"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hopwise: error: no model to benchmark") and "Traceback" not in err
