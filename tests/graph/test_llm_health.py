"""A model that cannot do the job is bypassed quickly (graph.llm_health): at most one retry per
failed structured step, offline for the rest of that question's structured steps, no model
call at all after several failing questions in a row (said once), and back in use once a
probe works. Real LLMReasoner over HTTP to the local stub; small invented documents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from graph.llm import LLMReasoner
from graph.llm_health import ModelHealth, QuestionWatch
from graph.offline import OfflineReasoner
from hopwise.app import Hopwise
from hopwise.settings import Settings
from tests.fakes.openai_stub import Reply, StubOpenAIServer, requested_schema
from tests.fakes.retriever import KeywordRetriever, make_chunk

QUESTION = "Which city hosts the depot that stores the Vorlan pumps?"
CHUNKS = [
    make_chunk("pumps", "The Vorlan pumps are stored at the Kestrel depot.", title="Pump register"),
    make_chunk("kestrel", "The Kestrel depot is located in the city of Marrowby.", title="Depots"),
]
GOOD: dict[str, dict[str, Any]] = {
    "RouteDecision": {"standalone_question": QUESTION, "route": "complex", "reason": "docs"},
    "Decomposition": {
        "sub_questions": [
            {"id": 1, "question": "Which depot stores the Vorlan pumps?", "depends_on": None},
            {"id": 2, "question": "Which city hosts #1?", "depends_on": 1},
        ]
    },
    "BridgeQuery": {"entity": "Kestrel depot", "query": "Which city hosts the Kestrel depot?"},
    "PlanDecision": {"action": "evaluate", "reason": "enough", "follow_up": None},
    "EvidenceVerdict": {"enough": True, "missing": [], "web_query": None},
    "ExtractedEvidence": {"sentences": []},
}
ANSWER = "The Vorlan pumps are stored at the Kestrel depot [1], in the city of Marrowby [2]."


def working(request: dict[str, Any]) -> Any:
    name = requested_schema(request)
    return GOOD.get(name, ANSWER) if name else ANSWER


def invalid_structured(request: dict[str, Any]) -> Any:
    """Every structured step gets unparsable JSON; the answer itself is fine."""
    return Reply(fault="malformed") if requested_schema(request) else ANSWER


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as server:
        yield server


def make_app(
    stub: StubOpenAIServer, clock: Callable[[], float] | None = None, **overrides: Any
) -> Hopwise:
    options: dict[str, Any] = {"llm_timeout_s": 2, "web_search": False, **overrides}
    settings = Settings(_env_file=None, llm_base_url=stub.url, llm_model="stub-model", **options)  # type: ignore[call-arg]
    assert settings.llm is not None
    health = ModelHealth(
        settings.llm_failing_questions,
        settings.llm_probe_interval_s,
        settings.llm_probe_questions,
        clock=clock or Clock(),
    )
    reasoner = LLMReasoner(
        settings.llm, fallback=OfflineReasoner(), backoff_s=0.0, circuit_cooldown_s=0,
        health=health,
    )  # fmt: skip
    return Hopwise(settings, KeywordRetriever(CHUNKS), reasoner, None)


def structured_counts(stub: StubOpenAIServer) -> Counter[str]:
    return Counter(r.schema_name for r in stub.chat_requests if r.schema_name)


def test_a_failed_structured_step_is_retried_once_then_the_question_goes_offline(
    stub: StubOpenAIServer,
) -> None:
    stub.responder = invalid_structured
    result = make_app(stub, llm_economy=False).ask(QUESTION)
    counts = structured_counts(stub)
    # the first structured step (routing) gets one try and one retry; every later structured
    # step of the question is settled offline without asking
    assert counts == Counter({"RouteDecision": 2})
    assert result.mode == "degraded" and "Marrowby" in result.answer
    assert result.llm_health["state"] == "failing"
    assert result.llm_health["failing_questions"] == 1
    assert result.llm_health["failed_steps"][0].startswith("route:")
    skipped = [e for e in result.trace if e.mode == "fallback" and e.llm_calls == 0]
    assert skipped and all("this question" in e.details["errors"][0] for e in skipped)


@pytest.mark.parametrize("method", ["json_schema", "json_mode", "auto"])
def test_each_structured_step_kind_is_asked_at_most_twice_in_a_question(
    stub: StubOpenAIServer, method: str
) -> None:
    stub.responder = invalid_structured
    make_app(stub, llm_structured_method=method).ask(QUESTION)
    counts = structured_counts(stub)
    assert counts and all(n <= 2 for n in counts.values())
    assert len(counts) == 1  # after the failed kind, no other structured kind was asked


def test_a_slow_model_costs_a_question_one_timeout(stub: StubOpenAIServer) -> None:
    stub.slow_s = 3.0
    stub.responder = lambda request: Reply(fault="slow") if requested_schema(request) else ANSWER
    result = make_app(stub, llm_timeout_s=0.3).ask(QUESTION)
    assert sum(structured_counts(stub).values()) == 1  # not waited for twice, nor per step
    assert result.mode == "degraded" and "Marrowby" in result.answer
    assert result.total_ms < 10_000


def test_after_the_threshold_the_model_is_bypassed_and_it_is_said_once(
    stub: StubOpenAIServer,
) -> None:
    stub.responder = invalid_structured
    app = make_app(stub, llm_failing_questions=2)
    first, second = app.ask(QUESTION), app.ask(QUESTION)
    assert first.llm_health["state"] == "failing" and second.llm_health["state"] == "bypassed"
    asked = stub.request_count
    tokens: list[str] = []
    third = app.ask(QUESTION, on_token=tokens.append)
    fourth = app.ask(QUESTION)
    assert stub.request_count == asked  # zero model calls
    assert third.llm_calls == fourth.llm_calls == 0
    assert third.answer.startswith("(Note: the language model failed 2 questions in a row")
    assert "".join(tokens) == third.answer
    assert "(Note:" not in fourth.answer  # said once, not at every question
    for result in (third, fourth):
        assert result.mode == "degraded" and "Marrowby" in result.answer
        assert result.llm_health["state"] == "bypassed"
        assert result.llm_health["this_question"] == "bypass"
        assert {e.mode for e in result.trace} <= {"bypassed", "code", "offline"}
    offline = Hopwise(app.settings, KeywordRetriever(CHUNKS), OfflineReasoner(), None)
    assert fourth.answer == offline.ask(QUESTION).answer  # no worse than offline


def test_after_the_probe_interval_a_recovered_model_is_used_again(
    stub: StubOpenAIServer,
) -> None:
    clock = Clock()
    stub.responder = invalid_structured
    app = make_app(stub, clock, llm_failing_questions=1, llm_probe_interval_s=60)
    app.ask(QUESTION)
    asked = stub.request_count
    assert app.ask(QUESTION).llm_calls == 0 and stub.request_count == asked

    clock.now += 61  # still broken: the probe is one call, quiet, and the model stays bypassed
    probe = app.ask(QUESTION)
    assert stub.request_count == asked + 1 and probe.llm_calls == 1
    assert probe.llm_health["state"] == "bypassed" and probe.llm_health["probe"] == "failed"
    assert "(Note:" not in probe.answer
    assert app.ask(QUESTION).llm_calls == 0  # the interval starts again

    stub.responder = working
    clock.now += 61
    recovered = app.ask(QUESTION)
    assert recovered.llm_calls > 1 and recovered.mode == "llm"
    assert recovered.llm_health["state"] == "ok" and recovered.llm_health["probe"] == "worked"
    assert "Marrowby" in recovered.answer
    assert app.ask(QUESTION).llm_calls > 0


def test_a_probe_also_comes_after_so_many_bypassed_questions(stub: StubOpenAIServer) -> None:
    stub.responder = invalid_structured
    app = make_app(stub, llm_failing_questions=1, llm_probe_questions=2)
    app.ask(QUESTION)
    assert [app.ask(QUESTION).llm_calls for _ in range(3)] == [0, 0, 1]


def test_health_counts_questions_in_a_row() -> None:
    clock = Clock()
    health = ModelHealth(failing_questions=2, probe_interval_s=30, probe_questions=0, clock=clock)

    def question(*, fails: bool) -> QuestionWatch:
        watch = health.begin()
        if watch.plan != "bypass":
            if fails:
                watch.failed("decompose", "malformed reply", structured=True)
            else:
                watch.succeeded()
        health.end(watch)
        return watch

    question(fails=True)
    question(fails=False)  # a question that worked breaks the run
    question(fails=True)
    assert health.snapshot()["state"] == "failing"
    question(fails=True)
    assert health.snapshot()["state"] == "bypassed"
    assert question(fails=False).plan == "bypass"  # nothing asked: nothing learnt
    clock.now += 31
    assert question(fails=False).began == "probe"
    assert health.snapshot() == {"state": "ok", "failing_questions": 0, "threshold": 2,
                                 "last_error": "decompose: malformed reply"}  # fmt: skip


def test_never_bypassed_when_the_threshold_is_zero() -> None:
    health = ModelHealth(failing_questions=0)
    for _ in range(5):
        watch = health.begin()
        watch.failed("plan", "timeout", structured=True)
        health.end(watch)
    assert health.begin().plan == "use" and health.snapshot()["failing_questions"] == 5


def test_the_open_health_endpoints_say_how_the_model_is_doing(
    stub: StubOpenAIServer, tmp_path: Any
) -> None:
    from fastapi.testclient import TestClient

    from hopwise.api.app import create_app
    from hopwise.api.service import ApiService

    stub.responder = invalid_structured
    app = make_app(stub, llm_failing_questions=1, data_dir=tmp_path, embeddings="off")
    service = ApiService(app.settings, runner=app, secrets={})
    client = TestClient(create_app(service))  # no lifespan: the runner is already open
    assert client.get("/api/v1/health").json() == {"status": "ok", "llm": "ok"}
    app.ask(QUESTION)
    assert client.get("/api/v1/health").json() == {"status": "ok", "llm": "bypassed"}
    health = client.get("/api/v1/ready").json()["llm_health"]
    assert health["state"] == "bypassed" and health["failing_questions"] == 1
    assert "last_error" not in health  # what failed stays in the answer's trace
    service.keys_db.close()
