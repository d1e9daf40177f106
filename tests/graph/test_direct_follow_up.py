"""A direct answer never skips the documents for a fact (issue 46, item 13): a follow-up that
asks for a fact is searched even when the model routes it simple, and a direct reply goes
through the claim check like every answer that states facts. Greetings stay direct. Real
LLMReasoner over HTTP to the local stub; small invented documents."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from graph.llm import LLMReasoner
from graph.offline import OfflineReasoner
from graph.routing import must_search, standalone_follow_up
from hopwise.app import Hopwise
from hopwise.settings import Settings
from tests.fakes.openai_stub import StubOpenAIServer, requested_schema
from tests.fakes.retriever import KeywordRetriever, make_chunk

CHUNKS = [
    make_chunk(
        "lab",
        "Imogen Tarrant leads the Harbour lab. Imogen Tarrant can be reached on extension 4471.",
        title="Lab directory",
    ),
    make_chunk("canteen", "The canteen opens at eight and closes at three.", title="Canteen"),
]
HISTORY = [
    {"role": "user", "content": "Who leads the Harbour lab?"},
    {"role": "assistant", "content": "Answer: Imogen Tarrant [1]"},
]
FOLLOW_UP = "What is her extension?"


def model(route: str, direct_reply: str, answer: str = "") -> Callable[[dict[str, Any]], Any]:
    """A stub model that routes every question `route` (copying it unchanged as the standalone
    question), replies `direct_reply` when asked directly and `answer` from evidence."""

    def respond(request: dict[str, Any]) -> Any:
        name = requested_schema(request)
        prompt = "\n".join(str(m.get("content")) for m in request.get("messages", []))
        if name == "RouteDecision":
            asked = prompt.rsplit("Latest user question:", 1)[-1].strip()
            return {"standalone_question": asked, "route": route, "reason": "stub"}
        if name == "Decomposition":
            sub = {"id": 1, "question": "What is Imogen Tarrant's extension?", "depends_on": None}
            return {"sub_questions": [sub]}
        if name == "EvidenceVerdict":
            return {"enough": True, "missing": [], "web_query": None}
        if name == "PlanDecision":
            return {"action": "evaluate", "reason": "enough", "follow_up": None}
        if name:
            return None  # the stub's placeholder for any other schema
        return answer if "needs no documents" not in prompt else direct_reply

    return respond


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as server:
        yield server


def make_app(stub: StubOpenAIServer, **overrides: Any) -> Hopwise:
    settings = Settings(
        _env_file=None, llm_base_url=stub.url, llm_model="stub-model", llm_max_retries=0,
        llm_timeout_s=5, web_search=False, **overrides,
    )  # type: ignore[call-arg]  # fmt: skip
    assert settings.llm is not None
    reasoner = LLMReasoner(settings.llm, fallback=OfflineReasoner(), backoff_s=0.0)
    return Hopwise(settings, KeywordRetriever(CHUNKS), reasoner, None)


def nodes(result: Any) -> list[str]:
    return [e.node for e in result.trace]


def test_a_fact_follow_up_routed_simple_is_still_searched_and_cited(
    stub: StubOpenAIServer,
) -> None:
    stub.responder = model(
        "simple",
        direct_reply="Her extension is 4471, as I said.",
        answer="Imogen Tarrant can be reached on extension 4471 [1].",
    )
    app = make_app(stub)
    result = app.ask(FOLLOW_UP, history=HISTORY)
    assert "answer_directly" not in nodes(result)
    assert nodes(result)[-2:] == ["generate_answer", "check_claims"]
    assert result.route == "complex"
    route = result.trace[0]
    assert route.details["overruled"] == "simple" and route.details["route"] == "complex"
    # the conversation's referent is put into the question that is searched
    assert "Imogen Tarrant" in result.standalone_question
    assert app.retriever.calls  # type: ignore[attr-defined]
    assert "4471" in result.answer and [c.chunk_id for c in result.citations] == ["lab"]
    assert result.trace[-1].details["checked"] >= 1


def test_a_direct_reply_stating_a_fact_no_source_holds_is_caught(
    stub: StubOpenAIServer,
) -> None:
    stub.responder = model("simple", direct_reply="The Harbour lab opened in 1987 with 12 staff.")
    tokens: list[str] = []
    result = make_app(stub, llm_economy=False).ask(
        "When did the Harbour lab open?", on_token=tokens.append
    )
    assert "1987" not in result.answer and "1987" not in "".join(tokens)  # never shown
    assert result.mode == "degraded" and result.answer.startswith("(Note:")
    check = result.trace[-1]
    assert check.node == "check_claims" and check.details["fell_back"] is True
    assert "direct reply" in check.details["errors"][0]
    assert [c["verdict"] for c in check.details["claims"]] == ["uncited"]
    assert "1987" in check.details["claims"][0]["why"]
    # asked again offline, through the documents
    assert result.trace[1].node == "answer_directly" and result.hops


@pytest.mark.parametrize(
    ("message", "history"),
    [("Hello there!", []), ("Thanks a lot!", HISTORY), ("Good morning", HISTORY)],
)
def test_greetings_and_thanks_still_answer_directly_without_retrieval(
    stub: StubOpenAIServer, message: str, history: list[dict[str, str]]
) -> None:
    reply = "Hello! I'm Hopwise. What would you like to know about your documents?"
    stub.responder = model("simple", direct_reply=reply)
    app = make_app(stub, llm_economy=False)
    result = app.ask(message, history=history)
    assert nodes(result) == ["route_question", "answer_directly", "check_claims"]
    assert app.retriever.calls == []  # type: ignore[attr-defined]
    assert result.answer == reply and result.mode == "llm" and result.route == "simple"
    assert result.trace[-1].details["fell_back"] is False


def test_a_follow_up_must_be_searched_when_it_asks_for_something() -> None:
    for asked in (
        "What is her extension?",
        "and his email?",
        "When does it close?",
        "它几点关门？",
    ):
        assert must_search(asked, HISTORY), asked
        assert not must_search(asked, [])  # a first question: the claim check guards it
    for chat in ("thanks!", "Goodbye", "谢谢", "what is 12 * 3?"):
        assert not must_search(chat, HISTORY), chat


def test_the_model_rewrite_is_kept_else_code_puts_in_the_referent() -> None:
    own = "What is Imogen Tarrant's direct line?"
    assert standalone_follow_up(FOLLOW_UP, own, HISTORY) == own
    assert "Imogen Tarrant" in standalone_follow_up(FOLLOW_UP, FOLLOW_UP, HISTORY)
