"""The stub server speaks enough OpenAI for the real langchain-openai clients, over HTTP."""

from __future__ import annotations

import math
import time

import httpx
import openai
import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings

from graph.schemas import Decomposition, RouteDecision
from tests.fakes.openai_replies import placeholder_instance
from tests.fakes.openai_stub import (
    Reply,
    StubOpenAIServer,
    requested_schema,
)

ROUTE = {"standalone_question": "What is X?", "route": "complex", "reason": "needs docs"}


@pytest.fixture(scope="module")
def stub():
    with StubOpenAIServer(slow_s=1.0) as server:
        yield server


@pytest.fixture(autouse=True)
def _reset(stub):
    stub.clear()
    stub.fault, stub.reject_json_schema, stub.responder = None, False, None


def _chat(stub: StubOpenAIServer, timeout: float = 5.0) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=stub.url,
        api_key="sk-test",
        model="stub-model",
        max_retries=0,
        timeout=timeout,
        use_responses_api=False,
    )


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_structured_reply_in_every_method(stub, method):
    stub.push(ROUTE)
    out = (
        _chat(stub)
        .with_structured_output(RouteDecision, method=method, include_raw=True)
        .invoke("Return the schema named RouteDecision for: what is X?")
    )
    assert out["parsed"] == RouteDecision(**ROUTE)
    assert out["raw"].usage_metadata["input_tokens"] > 0
    assert out["raw"].usage_metadata["output_tokens"] > 0
    (request,) = stub.chat_requests
    assert request.structured_method == method
    assert request.schema_name == "RouteDecision"
    assert request.headers["authorization"] == "Bearer sk-test"


def test_schema_recognised_from_json_mode_prompt_title():
    body = {
        "response_format": {"type": "json_object"},
        "messages": [{"role": "user", "content": '{"title": "Decomposition", "type": "object"}'}],
    }
    assert requested_schema(body) == "Decomposition"
    assert requested_schema({"messages": [{"role": "user", "content": "hi"}]}) is None


def test_default_reply_fills_the_requested_schema(stub):
    out = _chat(stub).with_structured_output(Decomposition, method="function_calling").invoke("q")
    assert isinstance(out, Decomposition) and len(out.sub_questions) == 1
    assert Decomposition.model_validate(placeholder_instance(Decomposition.model_json_schema()))


def test_responder_answers_by_schema(stub):
    stub.responder = lambda req: ROUTE if requested_schema(req) == "RouteDecision" else "plain"
    chat = _chat(stub)
    assert chat.with_structured_output(RouteDecision).invoke("q").route == "complex"
    assert chat.invoke("hello").content == "plain"


def test_streaming_sends_pieces_and_a_usage_chunk(stub):
    stub.push("Acme makes X [1]. 甲公司生产X。")
    chunks = list(_chat(stub).stream("who makes X?", stream_usage=True))
    texts = [c.text for c in chunks if c.text]
    assert len(texts) > 5 and "".join(texts) == "Acme makes X [1]. 甲公司生产X。"
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage and usage[0]["output_tokens"] > 0
    assert stub.chat_requests[0].json["stream_options"] == {"include_usage": True}


def test_reject_json_schema_answers_500_like_llama_cpp(stub):
    stub.reject_json_schema = True
    chat = _chat(stub)
    with pytest.raises(openai.InternalServerError):
        chat.with_structured_output(RouteDecision, method="json_schema").invoke("q")
    stub.push(ROUTE)
    assert chat.with_structured_output(RouteDecision, method="function_calling").invoke("q")


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("http500", openai.InternalServerError),
        ("http429", openai.RateLimitError),
        ("drop", openai.APIConnectionError),
        ("slow", openai.APITimeoutError),
    ],
)
def test_fault_modes_surface_as_client_errors(stub, fault, error):
    stub.push(Reply(content="x", fault=fault, retry_after=7))
    with pytest.raises(error) as info:
        _chat(stub, timeout=0.3).invoke("q")
    if fault == "http429":
        assert info.value.response.headers["retry-after"] == "7"


@pytest.mark.parametrize("fault", ["malformed", "truncated", "empty"])
def test_broken_content_faults(stub, fault):
    stub.push(Reply(data=ROUTE, fault=fault))
    out = (
        _chat(stub)
        .with_structured_output(RouteDecision, method="json_mode", include_raw=True)
        .invoke("q")
    )
    assert out["parsed"] is None and out["parsing_error"] is not None


def test_sticky_fault_applies_to_every_request(stub):
    stub.fault = "http500"
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            _chat(stub).invoke("q")
    assert len(stub.chat_requests) == 2


def test_embeddings_are_deterministic_normalised_and_similar_for_similar_text(stub):
    emb = OpenAIEmbeddings(
        base_url=stub.url,
        api_key="x",
        model="stub-embed",
        check_embedding_ctx_length=False,
        dimensions=64,
    )
    a, b, c, d = emb.embed_documents(
        ["penalty clause of the supply contract", "supply contract penalty", "违约金条款", "违约金"]
    )
    assert len(a) == 64 and math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-5)
    assert emb.embed_query("penalty clause of the supply contract") == pytest.approx(a, abs=1e-6)

    def cos(u, v):
        return sum(x * y for x, y in zip(u, v, strict=True))

    assert cos(a, b) > 0.4 > abs(cos(a, c))
    assert cos(c, d) > 0.4
    assert stub.requests[-1].json["dimensions"] == 64


def test_models_list_and_raw_http(stub):
    response = httpx.get(stub.url + "/models")
    assert response.json()["data"][0]["id"] == "stub-model"
    assert httpx.post(stub.url + "/nowhere", json={}).status_code == 404


def test_zero_latency_mode_is_fast_and_does_not_record():
    with StubOpenAIServer.zero_latency() as server:
        chat = _chat(server).with_structured_output(RouteDecision, method="function_calling")
        chat.invoke("warm up")
        times = []
        for _ in range(10):
            start = time.perf_counter()
            chat.invoke("q")
            times.append(time.perf_counter() - start)
        assert server.requests == [] and server.request_count == 11
    assert min(times) < 0.03, times  # a delayed-ACK stall would make every call >= 40 ms
