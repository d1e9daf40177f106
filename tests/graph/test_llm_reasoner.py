"""LLMReasoner against the stub server: the real ChatOpenAI over HTTP, no patched client."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator

import pytest

from graph import prompts as P
from graph.config import LLMConfig
from graph.llm import LLMReasoner, build_chat_model
from graph.offline import OfflineReasoner
from graph.protocols import Usage
from graph.schemas import EvidenceVerdict, RouteDecision
from hopwise.settings import Settings
from tests.fakes.openai_stub import Reply, StubOpenAIServer
from tests.graph.llm_script import (
    EVIDENCE,
    HITS,
    HOPS,
    KEY,
    SCRIPT,
    STEPS,
    TIMEOUT_S,
    as_plain,
    by_schema,
    drain,
    make,
)


@pytest.fixture(scope="module")
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(slow_s=TIMEOUT_S * 3) as server:
        yield server


@pytest.fixture(autouse=True)
def _reset(stub: StubOpenAIServer) -> None:
    stub.clear()
    stub.fault, stub.reject_json_schema, stub.responder = None, False, by_schema


# ---------------------------------------------------------------- every method, every step


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
@pytest.mark.parametrize("step", list(STEPS))
def test_each_structured_step_through_each_method(stub, step, method):
    reasoner = make(stub.url, llm_structured_method=method)
    call, expected = STEPS[step]
    result, usage = call(reasoner)
    assert as_plain(result) == expected
    assert usage.mode == "llm" and usage.method == method and usage.error is None
    assert usage.llm_calls == 1 and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    (request,) = stub.chat_requests
    assert request.structured_method == method
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "user"]
    if method == "json_mode":  # the schema travels in the (self-sufficient) user message
        assert "schema named" in request.messages[1]["content"]


def test_router_role_uses_the_router_model(stub):
    reasoner = make(stub.url, llm_router_model="router-model")
    reasoner.route("hi", [])
    reasoner.decompose("Who founded Acme?")
    assert [r.json["model"] for r in stub.chat_requests] == ["router-model", "main-model"]


def test_no_api_key_sends_a_dummy_key(stub):
    settings = Settings(llm_base_url=stub.url, llm_model="m")
    build_chat_model(settings.llm).invoke("hello")
    assert stub.chat_requests[0].headers["authorization"] == "Bearer not-needed"


def test_build_chat_model_requires_configuration():
    assert Settings(llm_base_url=None, llm_model=None).llm is None  # offline reasoning
    with pytest.raises(ValueError, match="HOPWISE_LLM_BASE_URL"):
        build_chat_model(LLMConfig(base_url="", model=""))


# ---------------------------------------------------------------- method discovery


def test_auto_falls_back_from_rejected_json_schema_and_remembers(stub):
    stub.reject_json_schema = True
    reasoner = make(stub.url)
    assert reasoner.structured_method is None
    result, usage = reasoner.route("Who makes the X100?", [])
    assert result.route == "complex" and usage.mode == "llm"
    assert usage.method == "function_calling" and usage.llm_calls == 2
    assert [r.structured_method for r in stub.chat_requests] == ["json_schema", "function_calling"]
    assert reasoner.structured_method == "function_calling"

    stub.clear()
    reasoner.decompose("Who founded the maker of the X100?")
    assert [r.structured_method for r in stub.chat_requests] == ["function_calling"]


def test_auto_reaches_json_mode_with_schema_in_prompt(stub):
    stub.reject_json_schema = True
    stub.push(Reply(status=400))  # the endpoint also refuses forced tool calls
    reasoner = make(stub.url)
    result, usage = reasoner.evaluate("Where was the founder born?", EVIDENCE)
    assert result.missing == ["birthplace"]
    assert usage.method == "json_mode" and reasoner.structured_method == "json_mode"
    methods = [r.structured_method for r in stub.chat_requests]
    assert methods == ["json_schema", "function_calling", "json_mode"]
    assert "schema named EvidenceVerdict" in stub.chat_requests[-1].prompt_text


def test_fixed_method_is_never_switched(stub):
    stub.reject_json_schema = True
    reasoner = make(stub.url, llm_structured_method="json_schema")
    result, usage = reasoner.route("Who makes the X100?", [])
    assert usage.mode == "fallback" and "HTTP 500" in usage.error
    assert {r.structured_method for r in stub.chat_requests} == {"json_schema"}
    assert isinstance(result, RouteDecision)  # the offline router answered


# ---------------------------------------------------------------- malformed replies


@pytest.mark.parametrize("fault", ["malformed", "truncated", "empty"])
def test_broken_reply_is_retried_once_then_succeeds(stub, fault):
    stub.push(Reply(data=SCRIPT["PlanDecision"], fault=fault))
    reasoner = make(stub.url, llm_structured_method="function_calling", llm_repair=True)
    result, usage = reasoner.plan("q", [], HOPS, EVIDENCE)
    assert result.action == "evaluate" and usage.mode == "llm" and usage.llm_calls == 2
    assert P.REPAIR_NOTE in stub.chat_requests[1].prompt_text


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_malformed_twice_falls_back_to_offline(stub, method):
    stub.fault = "malformed"
    reasoner = make(stub.url, llm_structured_method=method, llm_repair=True)
    result, usage = reasoner.decompose("Compare the X100 and the X200 routers")
    assert usage.mode == "fallback" and usage.llm_calls == 2
    assert "malformed" in usage.error
    assert 1 <= len(result.sub_questions) <= 8


def test_auto_mode_tries_next_method_after_two_malformed_replies(stub):
    stub.push(Reply(fault="malformed"), Reply(fault="truncated"))
    reasoner = make(stub.url, llm_repair=True)
    _, usage = reasoner.route("Who makes the X100?", [])
    assert usage.mode == "llm" and usage.method == "function_calling" and usage.llm_calls == 3


def test_without_repair_a_malformed_reply_is_settled_offline_at_once(stub):
    stub.fault = "malformed"
    reasoner = make(stub.url, llm_structured_method="json_schema")
    result, usage = reasoner.decompose("Compare the X100 and the X200 routers")
    assert usage.mode == "fallback" and usage.llm_calls == 1 and "malformed" in usage.error
    assert P.REPAIR_NOTE not in stub.chat_requests[0].prompt_text and result.sub_questions


def test_reasoning_model_think_block_and_code_fence_are_tolerated(stub):
    stub.push(Reply(content='<think>let me see</think>\n```json\n{"enough": true}\n```'))
    reasoner = make(stub.url, llm_structured_method="json_mode")
    result, usage = reasoner.evaluate("q", EVIDENCE)
    assert result.enough is True and usage.mode == "llm" and usage.llm_calls == 1


def test_extract_refuses_paraphrase_and_keeps_verbatim_sentences(stub):
    reasoner = make(stub.url, llm_structured_method="function_calling")
    stub.push(
        {
            "sentences": [
                {"chunk_id": "c1", "text": "It  was founded in 1999\nby Jane Roe."},  # spacing only
                {"chunk_id": "zz", "text": "Jane Roe was born in Lyon."},  # unknown chunk id
            ]
        }
    )
    kept, usage = reasoner.extract("Who founded Acme?", HITS)
    assert [(s.chunk_id, s.text) for s in kept] == [("c1", "It  was founded in 1999\nby Jane Roe.")]
    assert usage.mode == "llm"

    stub.fault = None
    stub.push(*[{"sentences": [{"chunk_id": "c1", "text": "Acme was started by Roe."}]}] * 2)
    kept, usage = reasoner.extract("Who founded Acme?", HITS)
    assert usage.mode == "fallback"  # a summary is not evidence: offline extraction stood in
    assert all(s.text in HITS[0].text or s.text in HITS[1].text for s in kept)


def test_decomposition_is_normalised(stub):
    subs = [{"id": i + 10, "question": f"Part {i} of the plan?", "depends_on": None}
            for i in range(10)]  # fmt: skip
    subs[1]["depends_on"] = 10
    subs[1]["question"] = "Who runs #10?"
    subs[2]["depends_on"] = 15  # forward reference: dropped
    stub.push({"sub_questions": subs})
    reasoner = make(stub.url, llm_structured_method="json_schema")
    result, _ = reasoner.decompose("Which parts does the plan have?")
    assert [s.id for s in result.sub_questions] == list(range(1, 9))
    assert result.sub_questions[1].depends_on == 1
    assert result.sub_questions[1].question == "Who runs #1?"
    assert result.sub_questions[2].depends_on is None


def test_no_hits_means_no_extract_call(stub):
    kept, usage = make(stub.url).extract("q", [])
    assert kept == [] and usage.llm_calls == 0 and stub.chat_requests == []


# ---------------------------------------------------------------- transport faults


def test_a_timeout_is_not_waited_out_twice_then_falls_back(stub):
    stub.fault = "slow"
    reasoner = make(stub.url, llm_structured_method="function_calling")
    start = time.perf_counter()
    result, usage = reasoner.route("hello", [])
    elapsed = time.perf_counter() - start
    assert usage.mode == "fallback" and usage.error == "function_calling: timeout"
    assert usage.llm_calls == 1 and len(stub.chat_requests) == 1  # a slow model: one timeout
    assert elapsed < TIMEOUT_S + 1.0
    assert result.route == "simple"  # the offline router handled the greeting


def test_a_dropped_connection_is_retried(stub):
    stub.push(Reply(fault="drop"))
    reasoner = make(stub.url, llm_structured_method="json_schema")
    _, usage = reasoner.route("Who makes the X100?", [])
    assert usage.mode == "llm" and usage.llm_calls == 2 and len(stub.chat_requests) == 2


def test_server_error_is_retried_with_backoff_up_to_the_limit(stub):
    stub.fault = "http500"
    reasoner = make(stub.url, llm_structured_method="json_mode", llm_max_retries=2)
    result, usage = reasoner.evaluate("q", EVIDENCE)
    assert usage.mode == "fallback" and "HTTP 500" in usage.error
    assert len(stub.chat_requests) == 3 == usage.llm_calls
    assert isinstance(result, EvidenceVerdict)


def test_429_honours_retry_after(stub):
    stub.push(Reply(fault="http429", retry_after=0.3))
    reasoner = make(stub.url, llm_structured_method="function_calling")
    _, usage = reasoner.plan("q", [], HOPS, EVIDENCE)
    assert usage.mode == "llm" and usage.llm_calls == 2
    first, second = stub.chat_requests
    assert second.at - first.at >= 0.3


def test_429_retry_after_is_capped(stub):
    stub.fault = "http429"
    stub.retry_after = 3600
    try:
        reasoner = make(stub.url, llm_structured_method="function_calling")
        start = time.perf_counter()
        _, usage = reasoner.plan("q", [], HOPS, EVIDENCE)
        assert time.perf_counter() - start < 2.0
        assert usage.mode == "fallback" and "429" in usage.error
    finally:
        stub.retry_after = 1.0


@pytest.mark.parametrize("fault", ["drop", "empty"])
def test_dropped_connection_or_empty_reply_falls_back(stub, fault):
    stub.fault = fault
    reasoner = make(stub.url, llm_structured_method="json_schema")
    result, usage = reasoner.bridge("Who founded #1?", HOPS, EVIDENCE)
    assert usage.mode == "fallback" and usage.error
    assert isinstance(result, str) and result


def test_connection_refused_falls_back():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    reasoner = make(f"http://127.0.0.1:{port}/v1")
    result, usage = reasoner.route("Who makes the X100?", [])
    assert usage.mode == "fallback" and "connection failed" in usage.error
    assert result.route == "complex"
    text, usage = drain(reasoner.answer("Who makes the X100?", EVIDENCE, []))
    assert usage.mode == "fallback" and "connection failed" in usage.error
    assert "[1]" in text or "X100" in text


class _Broken:
    """A fallback that itself fails: the reasoner must still return something sane."""

    name = "offline"

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise RuntimeError("offline exploded")

        return fail


def test_a_failing_fallback_still_never_raises(stub):
    stub.fault = "http500"
    settings = Settings(
        llm_base_url=stub.url, llm_model="m", llm_max_retries=0, llm_structured_method="json_mode"
    )
    reasoner = LLMReasoner(settings.llm, _Broken(), backoff_s=0.01, circuit_cooldown_s=0)
    route, usage = reasoner.route("Who makes the X100?", [])
    assert route.route == "complex" and usage.mode == "fallback"
    assert reasoner.bridge("Who founded #1?", HOPS, EVIDENCE)[0] == "Who founded #1?"
    assert reasoner.extract("q", HITS)[0] == []
    assert reasoner.plan("q", [], HOPS, EVIDENCE)[0].action == "evaluate"
    assert reasoner.evaluate("q", EVIDENCE)[0].enough is False
    assert drain(reasoner.answer("q", EVIDENCE, []))[1].mode == "fallback"


# ---------------------------------------------------------------- streaming


def test_answer_streams_tokens_and_usage(stub):
    reasoner = make(stub.url)
    items = list(reasoner.answer("Who makes the X100?", EVIDENCE, []))
    pieces, usage = items[:-1], items[-1]
    assert len(pieces) > 3
    assert "".join(pieces) == "Acme Corp makes the X100 [1]; Jane Roe founded it [1]."
    assert usage.mode == "llm" and usage.llm_calls == 1
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    request = stub.chat_requests[0]
    assert request.json["stream"] is True
    assert request.json["stream_options"] == {"include_usage": True}
    # a bounded reply (a small model that loops stops there); langchain-openai names it so
    assert request.json["max_completion_tokens"] == Settings().llm_max_tokens


def test_answer_directly_streams(stub):
    stub.push("Hello! How can I help?")
    text, usage = drain(make(stub.url).answer_directly("hi", []))
    assert text == "Hello! How can I help?" and usage.mode == "llm"


def test_think_block_is_not_streamed_to_the_user(stub):
    stub.push("<think>The user wants the maker.</think>Acme Corp [1].")
    text, usage = drain(make(stub.url).answer("Who makes the X100?", EVIDENCE, []))
    assert text == "Acme Corp [1]." and usage.mode == "llm"


def test_stream_failing_before_any_token_retries_then_answers_offline(stub):
    stub.fault = "http500"
    text, usage = drain(make(stub.url).answer("Who makes the X100?", EVIDENCE, []))
    assert usage.mode == "fallback" and "HTTP 500" in usage.error and usage.llm_calls == 2
    assert "[1]" in text  # the offline answer cites the evidence


def test_stream_failing_midway_says_so_and_finishes_offline(stub):
    stub.push(
        Reply(
            content="Acme Corp makes the X100 and was founded by Jane Roe.", fault="drop_midstream"
        )
    )
    text, usage = drain(make(stub.url).answer("Who makes the X100?", EVIDENCE, []))
    assert text.startswith("Acme")
    assert P.STREAM_BROKEN.strip() in text
    assert usage.mode == "fallback" and usage.error.startswith("stream interrupted")


def test_chinese_question_asks_for_a_chinese_answer(stub):
    stub.push("甲公司生产X100 [1]。")
    text, _ = drain(make(stub.url).answer("X100 是哪家公司生产的？", EVIDENCE, []))
    assert text == "甲公司生产X100 [1]。"
    assert P.LANGUAGE_ZH in stub.chat_requests[0].prompt_text


# ---------------------------------------------------------------- secrets


def test_api_key_never_appears_in_errors_or_logs(stub, caplog):
    caplog.set_level(logging.DEBUG)
    reasoner = make(stub.url, llm_structured_method="function_calling")
    outputs: list[object] = []
    for fault in ["http500", "http429", "malformed", "drop", "empty", "slow"]:
        stub.fault = fault
        stub.retry_after = 0
        outputs.append(reasoner.route("Who makes the X100?", []))
        if fault != "malformed":  # garbage text is still a streamed answer
            outputs.append(list(reasoner.answer("Who makes the X100?", EVIDENCE, [])))
    stub.retry_after = 1.0
    assert stub.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was used
    errors = [u.error for out in outputs for u in _usages(out)]
    assert errors and all(errors)
    assert KEY not in repr(outputs) and KEY not in caplog.text
    assert KEY[6:] not in repr(outputs) and KEY[6:] not in caplog.text


def _usages(out) -> list[Usage]:
    items = out if isinstance(out, list) else list(out)
    return [i for i in items if isinstance(i, Usage)]


# ---------------------------------------------------------------- circuit breaker


def test_endpoint_outage_skips_the_model_for_the_cooldown(stub):
    stub.fault = "slow"
    settings = Settings(
        llm_base_url=stub.url, llm_model="m", llm_timeout_s=TIMEOUT_S, llm_max_retries=0
    )
    reasoner = LLMReasoner(settings.llm, OfflineReasoner(), circuit_cooldown_s=0.8)
    _, first = reasoner.route("Who makes the X100?", [])
    assert first.mode == "fallback" and "timeout" in first.error
    start = time.perf_counter()
    _, second = reasoner.decompose("Who founded the maker of the X100?")
    text, third = drain(reasoner.answer("Who makes the X100?", EVIDENCE, []))
    assert time.perf_counter() - start < 0.2  # no waiting for more timeouts
    assert second.llm_calls == 0 == third.llm_calls
    assert "skipped" in second.error and "timeout" in second.error and text
    assert len(stub.chat_requests) == 1

    stub.fault = None
    time.sleep(0.85)
    _, fourth = reasoner.decompose("Who founded the maker of the X100?")
    assert fourth.mode == "llm"


def test_malformed_replies_do_not_open_the_circuit(stub):
    stub.push(Reply(fault="malformed"))  # without repair, one call per step
    settings = Settings(llm_base_url=stub.url, llm_model="m", llm_structured_method="json_mode")
    reasoner = LLMReasoner(settings.llm, OfflineReasoner())
    assert reasoner.route("Who makes the X100?", [])[1].mode == "fallback"
    assert reasoner.route("Who makes the X100?", [])[1].mode == "llm"


# ---------------------------------------------------------------- benchmark stub


def test_plausible_responder_drives_every_step_without_fallback():
    with StubOpenAIServer.zero_latency() as server:
        reasoner = make(server.url)
        route, u1 = reasoner.route("Who makes the X100?", [])
        plan, u2 = reasoner.decompose("Who makes the X100?")
        query, u3 = reasoner.bridge("Who founded Acme Corp?", HOPS, EVIDENCE)
        kept, u4 = reasoner.extract("Who makes the X100?", HITS)
        step, u5 = reasoner.plan("Who makes the X100?", [], HOPS, EVIDENCE)
        verdict, u6 = reasoner.evaluate("Who makes the X100?", EVIDENCE)
        text, u7 = drain(reasoner.answer("Who makes the X100?", EVIDENCE, []))
    assert {u.mode for u in (u1, u2, u3, u4, u5, u6, u7)} == {"llm"}
    assert route.route == "complex" and route.standalone_question == "Who makes the X100?"
    assert plan.sub_questions[0].question == "Who makes the X100?"
    assert query == "Who founded Acme Corp?"
    assert [s.chunk_id for s in kept] == ["c1", "c2"]
    assert step.action == "evaluate" and verdict.enough
    assert text == "Acme Corp makes the X100 router. [1]"


def test_runaway_answer_is_cut_off_because_token_limits_may_be_ignored(stub):
    stub.push(" ".join(f"word{i}" for i in range(400)))
    settings = Settings(llm_base_url=stub.url, llm_model="m")
    reasoner = LLMReasoner(settings.llm, OfflineReasoner(), max_answer_chars=100)
    text, usage = drain(reasoner.answer("Who makes the X100?", EVIDENCE, []))
    assert len(text) <= 102 and text.endswith(" …") and usage.mode == "llm"


@pytest.mark.parametrize(
    "reply",
    [
        "Acme Corp makes the X100 [1]. " + "Acme Corp makes the X100 and more. " * 8,
        "Acme Corp [1]\nAcme Corp [1]\nAcme Corp [1]\nAcme Corp [1]\n",
        'Acme Corp [1].\n<<<EVIDENCE n="9" source="made-up.md">>>\nThe X100 is free.',
    ],
)
def test_a_looping_or_markup_imitating_answer_is_withdrawn_and_offline_stands_in(stub, reply):
    stub.push(reply)
    items = list(make(stub.url).answer("Who makes the X100?", EVIDENCE, []))
    retract = next(i for i, x in enumerate(items) if isinstance(x, Usage) and x.details)
    assert items[retract].details == {"retract": True}
    after = "".join(x for x in items[retract:] if isinstance(x, str))
    assert "<<<" not in after and "made-up" not in after and after.count("Acme Corp") <= 3
    assert items[-1].mode == "fallback" and "reply" in (items[-1].error or "")


def test_runaway_check_spares_ordinary_answers():
    from graph.llm_wire import runaway

    assert (
        runaway("Acme Corp makes the X100 [1].\n- founded by Jane Roe [1]\n- in Lyon [2]") is None
    )
    assert runaway("a-b-c-d " * 3) is None  # three is not a loop
    assert runaway("the same thing again; " * 5) == "the reply repeated itself"


@pytest.mark.parametrize(
    ("question", "chinese"),
    [
        ("违约金是多少？", True),
        ("違約金是多少？", True),
        ("Acme 的 penalty 是多少？", True),
        ("What does 违约金 mean in the Acme contract?", False),
        ("違約金はいくらですか？", False),
        ("What is the penalty?", False),
    ],
)
def test_answer_language_follows_the_question(question, chinese):
    assert (P.language_rule(question) == P.LANGUAGE_ZH) is chinese


def test_one_reasoner_serves_concurrent_questions(stub):
    from concurrent.futures import ThreadPoolExecutor

    reasoner = make(stub.url)

    def ask(i: int) -> tuple[str, str, str]:
        route, usage = reasoner.route(f"Who makes router X{i}?", [])
        text, answer_usage = drain(reasoner.answer(f"Who makes router X{i}?", EVIDENCE, []))
        return usage.mode, answer_usage.mode, text

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(ask, range(16)))
    assert {(a, b) for a, b, _ in results} == {("llm", "llm")}
    assert all(text.startswith("Acme Corp makes the X100") for _, _, text in results)
    assert len(stub.chat_requests) == 32


def test_a_decomposition_about_other_things_is_refused_and_repeats_are_dropped(stub):
    question = "Who leads the team that owns the billing system?"
    stub.push({"sub_questions": [{"id": 1, "question": "3"}, {"id": 2, "question": "4"}]})
    result, usage = make(stub.url).decompose(question)
    assert usage.mode == "fallback" and "3" not in [s.question for s in result.sub_questions]
    same = {"id": 1, "question": "Which team owns the billing system?"}
    stub.push({"sub_questions": [same, {**same, "id": 2}, {"id": 3, "question": "Who leads #1?"}]})
    result, usage = make(stub.url).decompose(question)
    assert usage.mode == "llm"
    assert [s.question for s in result.sub_questions] == [same["question"], "Who leads #1?"]


def test_a_decomposition_that_loses_the_questions_code_or_name_is_refused(stub):
    question = "Which engineer fixed QX-204 for the Harbor Clinic in 2024?"
    lost = {"sub_questions": [{"id": 1, "question": "Which engineer fixed the device in 2024?"}]}
    stub.push(lost)
    _, usage = make(stub.url).decompose(question)
    assert usage.mode == "fallback"
    kept = {"sub_questions": [
        {"id": 1, "question": "Which device is QX-204 at the Harbor Clinic?"},
        {"id": 2, "question": "Which engineer fixed #1 in 2024?"},
    ]}  # fmt: skip
    stub.push(kept)
    result, usage = make(stub.url).decompose(question)
    assert usage.mode == "llm" and len(result.sub_questions) == 2
