"""Hopwise with the real LLMReasoner (ChatOpenAI over HTTP) against the local stub server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from graph.llm import LLMReasoner
from graph.offline import OfflineReasoner
from hopwise.app import Hopwise
from hopwise.settings import Settings
from tests.fakes.openai_stub import Reply, StubOpenAIServer, requested_schema
from tests.fakes.retriever import KeywordRetriever, sample_chunks

QUESTION = "Where was the director of Inception born?"
ANSWER = "Christopher Nolan directed Inception [2] and was born in London [1]."
STRUCTURED: dict[str, dict[str, Any]] = {
    "RouteDecision": {"standalone_question": QUESTION, "route": "complex", "reason": "docs"},
    "Decomposition": {
        "sub_questions": [
            {"id": 1, "question": "Who directed Inception?", "depends_on": None},
            {"id": 2, "question": "Where was #1 born?", "depends_on": 1},
        ]
    },
    "BridgeQuery": {"entity": "Christopher Nolan", "query": "Where was Christopher Nolan born?"},
    "PlanDecision": {"action": "evaluate", "reason": "enough", "follow_up": None},
    "EvidenceVerdict": {"enough": True, "missing": [], "web_query": None},
    "ExtractedEvidence": {"sentences": []},
}


def scripted(fail: str | None = None) -> Callable[[dict[str, Any]], Any]:
    """Replies by requested schema; the `fail` schema gets HTTP 500 every time."""

    def respond(request: dict[str, Any]) -> Any:
        name = requested_schema(request)
        if name is not None and name == fail:
            return Reply(fault="http500")
        return STRUCTURED.get(name or "", ANSWER) if name else ANSWER

    return respond


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as server:
        yield server


def make_app(stub: StubOpenAIServer, *, economy: bool = True) -> Hopwise:
    settings = Settings(
        llm_base_url=stub.url,
        llm_model="stub-model",
        llm_api_key="sk-test-secret",
        llm_max_retries=0,
        llm_timeout_s=5,
        web_search=False,
        llm_economy=economy,
    )  # type: ignore[arg-type]
    reasoner = LLMReasoner(settings.llm, fallback=OfflineReasoner(), backoff_s=0.0)
    return Hopwise(settings, KeywordRetriever(sample_chunks()), reasoner, None)


def test_llm_answer_with_citations_over_http(stub: StubOpenAIServer) -> None:
    stub.responder = scripted()
    tokens: list[str] = []
    result = make_app(stub).ask(QUESTION, on_token=tokens.append)
    # shown once checked (no unchecked claim reaches the page), with the sources numbered in
    # order of first use: [2] came first, so it is [1]
    assert result.mode == "llm" and "".join(tokens) == result.answer != ANSWER
    assert result.answer == "Christopher Nolan directed Inception [1] and was born in London [2]."
    assert [c.n for c in result.citations] == [1, 2]
    assert [h.query for h in result.hops] == [
        "Who directed Inception?",
        "Where was Christopher Nolan born?",
    ]
    assert {c.chunk_id for c in result.citations} == {"inception", "nolan"}
    schemas = [r.schema_name for r in stub.chat_requests]
    assert schemas == ["Decomposition", "BridgeQuery", None]  # route/extract/evaluate by code
    assert result.llm_calls == 3 and result.tokens > 0


def test_every_step_goes_to_the_model_without_economy(stub: StubOpenAIServer) -> None:
    stub.responder = scripted()
    result = make_app(stub, economy=False).ask(QUESTION)
    schemas = [r.schema_name for r in stub.chat_requests]
    assert schemas[:2] == ["RouteDecision", "Decomposition"] and "EvidenceVerdict" in schemas
    assert result.llm_calls == len(schemas)


def test_endpoint_failing_mid_run_gives_a_degraded_answer(stub: StubOpenAIServer) -> None:
    stub.responder = scripted(fail="BridgeQuery")
    result = make_app(stub).ask(QUESTION)
    assert result.mode == "degraded"
    assert result.answer.startswith("(Note: the language model failed")
    hop_event = [e for e in result.trace if e.node == "retrieve_hop"][1]
    assert hop_event.mode == "fallback" and hop_event.details["errors"]
    assert "sk-test-secret" not in str(result)
    assert "nolan" in {c.chunk_id for c in result.citations}  # offline bridge still found it


ZH_CONTRACT = (
    "# 供货合同\n\n## 违约责任\n\n供货方逾期交货的，每逾期一周应支付合同总额百分之五的违约金。\n\n"
    "## 付款\n\n采购方应在收货后三十日内付款。\n"
)


def test_a_question_in_another_language_is_also_searched_in_the_documents_language(
    stub: StubOpenAIServer, tmp_path: Any
) -> None:
    """English question, Chinese documents: the model writes each sub-question's search
    query in Chinese too, and the keyword search finds the clause through it."""
    from hopwise.app import open_store
    from ingest.pipeline import ingest_bytes

    question = "What is the penalty for late delivery?"
    decomposition = {"sub_questions": [
        {"id": 1, "question": question, "depends_on": None, "search_query": "逾期交货的违约金是多少？"},
    ]}  # fmt: skip
    answers = {**STRUCTURED, "Decomposition": decomposition,
               "RouteDecision": {"standalone_question": question, "route": "complex", "reason": "docs"}}  # fmt: skip
    stub.responder = lambda request: answers.get(
        requested_schema(request) or "", "5% per week [1]."
    )
    settings = Settings(data_dir=tmp_path, llm_base_url=stub.url, llm_model="stub-model",
                        llm_max_retries=0, llm_timeout_s=5, web_search=False,
                        embeddings="off", milvus_uri=None)  # type: ignore[call-arg]  # fmt: skip
    store = open_store(settings)
    try:
        ingest_bytes(ZH_CONTRACT.encode(), "合同.md", store, groups=["all"], config=settings.ingest)
        reasoner = LLMReasoner(settings.llm, fallback=OfflineReasoner(), backoff_s=0.0)
        result = Hopwise(settings, store, reasoner, None).ask(question)
    finally:
        store.close()
    decompose = next(r for r in stub.chat_requests if r.schema_name == "Decomposition")
    assert "The documents are written in Chinese" in decompose.prompt_text
    hop = result.hops[0]
    assert hop.query == question and hop.search_query == "逾期交货的违约金是多少？"
    assert any("逾期交货" in h.snippet for h in hop.hits)


def claim_event(result: Any) -> Any:
    return next(e for e in result.trace if e.node == "check_claims")


def test_a_claim_its_passage_does_not_hold_is_cut_with_its_citation(stub: StubOpenAIServer) -> None:
    said = ANSWER + " He was born in 1968 [1]. He studied law at Oxford [2]."
    stub.responder = lambda request: STRUCTURED.get(requested_schema(request) or "", said)
    tokens: list[str] = []
    result = make_app(stub).ask(QUESTION, on_token=tokens.append)
    assert result.mode == "llm" and "".join(tokens) == result.answer
    assert "1968" not in result.answer and "Oxford" not in result.answer
    assert result.answer.startswith("Christopher Nolan directed Inception [1]")
    event = claim_event(result)
    assert event.details["removed"] == 2 and event.details["fell_back"] is False
    whys = [c["why"] for c in event.details["claims"] if c["verdict"] == "unsupported"]
    assert any("1968 not in" in w for w in whys) and any("Oxford" in w for w in whys)


def test_a_wrong_stated_answer_falls_back_to_the_evidence_first_answer(
    stub: StubOpenAIServer,
) -> None:
    stub.responder = lambda request: STRUCTURED.get(
        requested_schema(request) or "", "Christopher Nolan was born in Paris [1]."
    )
    tokens: list[str] = []
    result = make_app(stub).ask(QUESTION, on_token=tokens.append)
    assert result.mode == "degraded" and "Paris" not in "".join(tokens)
    assert (
        result.answer.startswith("(Note: the language model failed") and "London" in result.answer
    )
    event = claim_event(result)
    assert event.mode == "fallback" and event.details["fell_back"] is True
    assert "claim check" in event.details["errors"][0] and "Paris" in event.details["errors"][0]
    assert "nolan" in {c.chunk_id for c in result.citations}


def test_with_the_check_off_the_answer_streams_as_the_model_wrote_it(
    stub: StubOpenAIServer,
) -> None:
    stub.responder = lambda request: STRUCTURED.get(
        requested_schema(request) or "", "Christopher Nolan was born in Paris [1]."
    )
    app = make_app(stub)
    app.settings = app.settings.model_copy(update={"claim_check": False})
    tokens: list[str] = []
    result = app.ask(QUESTION, on_token=tokens.append)
    assert "".join(tokens) == "Christopher Nolan was born in Paris [1]." and result.mode == "llm"
    assert claim_event(result).details == {"checked": False}


def test_a_first_line_that_cites_nothing_is_no_stated_answer(stub: StubOpenAIServer) -> None:
    said = "Here is what the documents say about where he was born.\n\nHe was born in London [1]."
    stub.responder = lambda request: STRUCTURED.get(requested_schema(request) or "", said)
    result = make_app(stub).ask(QUESTION)
    assert (
        result.mode == "degraded" and "cites no passage" in claim_event(result).details["errors"][0]
    )
    assert "Here is what" not in result.answer and "London" in result.answer


def test_a_bridge_entity_the_evidence_does_not_hold_is_read_offline(
    stub: StubOpenAIServer,
) -> None:
    made_up = {"entity": "Jane Doe", "query": "Where was Jane Doe born?"}
    answers = {**STRUCTURED, "BridgeQuery": made_up}
    stub.responder = lambda request: answers.get(requested_schema(request) or "", ANSWER)
    result = make_app(stub).ask(QUESTION)
    hop = result.hops[1]
    assert "Jane Doe" not in hop.query and "Christopher Nolan" in hop.query


def test_a_model_bridge_to_another_entity_of_the_evidence_is_searched_beside_the_codes(
    stub: StubOpenAIServer,
) -> None:
    """The model may pick a name the earlier passages do hold but the question does not lead
    to: the code's reading of the bridge is searched too, so its passage is evidence."""
    other = {"entity": "Leonardo DiCaprio", "query": "Leonardo DiCaprio hometown"}
    answers = {**STRUCTURED, "BridgeQuery": other}
    stub.responder = lambda request: answers.get(requested_schema(request) or "", ANSWER)
    result = make_app(stub).ask(QUESTION)
    hop = result.hops[1]
    assert hop.query == "Leonardo DiCaprio hometown"
    assert "Christopher Nolan" in hop.bridge["also_searched"]
    assert "nolan" in {h.chunk_id for h in hop.hits}  # the model's query alone finds only inception


def test_a_bridge_query_that_drops_what_the_sub_question_gives_is_written_from_it(
    stub: StubOpenAIServer,
) -> None:
    """A small model may fill the placeholder and lose the rest ('<entity> <entity>'): the
    search becomes the sub-question with the entity in place, so its number stays."""
    sub = {"id": 2, "question": "Where was #1 born in 1970?", "depends_on": 1}
    plan = {"sub_questions": [STRUCTURED["Decomposition"]["sub_questions"][0], sub]}
    bare = {"entity": "Christopher Nolan", "query": "Christopher Nolan Christopher Nolan"}
    answers = {**STRUCTURED, "Decomposition": plan, "BridgeQuery": bare}
    stub.responder = lambda request: answers.get(requested_schema(request) or "", ANSWER)
    hop = make_app(stub, economy=False).ask(QUESTION).hops[1]
    assert hop.query == "Where was Christopher Nolan born in 1970?"
    kept = {**bare, "query": "Christopher Nolan birthplace 1970"}  # keeps it: searched as written
    answers["BridgeQuery"] = kept
    hop = make_app(stub, economy=False).ask(QUESTION).hops[1]
    assert hop.query == "Christopher Nolan birthplace 1970"


def test_without_economy_the_models_bridge_is_searched_alone(stub: StubOpenAIServer) -> None:
    """HOPWISE_LLM_ECONOMY=off: every step is the model's, the bridge too."""
    other = {"entity": "Leonardo DiCaprio", "query": "Leonardo DiCaprio hometown"}
    answers = {**STRUCTURED, "BridgeQuery": other}
    said = "Inception stars Leonardo DiCaprio [1]."  # what its own hops hold: the check keeps it
    stub.responder = lambda request: answers.get(requested_schema(request) or "", said)
    result = make_app(stub, economy=False).ask(QUESTION)
    assert not claim_event(result).details["fell_back"]  # the hops shown are the model's
    hop = result.hops[1]
    assert "also_searched" not in hop.bridge and "nolan" not in {h.chunk_id for h in hop.hits}


def test_a_failed_answer_is_replaced_by_offline_reasoning_asking_the_whole_question(
    stub: StubOpenAIServer,
) -> None:
    # the model follows the wrong person from the first hop, so its answer is about him
    astray = {"sub_questions": [
        {"id": 1, "question": "Who stars in Inception?", "depends_on": None},
        {"id": 2, "question": "Where was #1 born?", "depends_on": 1},
    ]}  # fmt: skip
    bridge = {"entity": "Leonardo DiCaprio", "query": "Where was Leonardo DiCaprio born?"}
    answers = {**STRUCTURED, "Decomposition": astray, "BridgeQuery": bridge}
    stub.responder = lambda request: answers.get(
        requested_schema(request) or "", "Leonardo DiCaprio was born in Ohio [1]."
    )
    result = make_app(stub).ask(QUESTION)
    assert result.mode == "degraded" and "Ohio" not in result.answer
    assert "London" in result.answer.split("\n\n", 1)[1].split("\n")[0]  # its stated answer
    assert "nolan" in {c.chunk_id for c in result.citations}
    rerun = claim_event(result).details["offline_rerun"]
    assert rerun["hops"] >= 2 and not any("stars" in q for q in rerun["sub_questions"])
    # the answer's hops are the run that wrote it: every cited passage is in them, so what
    # the answer shows (and withholds from a reader later) is read from the right documents
    hit_ids = {hit.chunk_id for hop in result.hops for hit in hop.hits}
    assert {c.chunk_id for c in result.citations} <= hit_ids
    assert not any("stars" in sq.question for sq in result.sub_questions)
    assert any(doc_id.endswith("nolan") for doc_id in result.doc_ids())


def test_an_answer_the_model_could_not_write_comes_from_the_whole_offline_run(
    stub: StubOpenAIServer,
) -> None:
    stub.responder = lambda request: (
        STRUCTURED[name] if (name := requested_schema(request)) else Reply(fault="http500")
    )
    result = make_app(stub).ask(QUESTION)
    event = claim_event(result)
    assert result.mode == "degraded" and event.details["fell_back"] is True
    assert "could not write it" in event.details["errors"][0]
    assert "offline_rerun" in event.details and "London" in result.answer
