"""Flow tests: the compiled graph end to end, with fakes and an in-memory checkpointer."""

from __future__ import annotations

import json
import time

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.protocols import WebResult
from graph.result import QuestionResult, TraceEvent
from graph.schemas import EvidenceVerdict, PlanDecision
from hopwise.app import Hopwise
from hopwise.settings import Settings
from tests.fakes.reasoner import ScriptedReasoner
from tests.fakes.retriever import KeywordRetriever, sample_chunks
from tests.fakes.web import FakeWebSearch

DIRECTOR = "Where was the director of Inception born?"
CHAIN = [("Who directed Inception?", None), ("Where was #1 born?", 1)]
BRIDGE = {"Where was #1 born?": "Where was Christopher Nolan born?"}
NOT_ENOUGH = EvidenceVerdict(enough=False, missing=["birth year"], web_query="Nolan birth year")


def make_app(
    reasoner: ScriptedReasoner, *, web: FakeWebSearch | None = None, **settings: object
) -> Hopwise:
    settings.setdefault("llm_economy", False)  # every step to the scripted "model"
    cfg = Settings(web_search=web is not None, **settings)  # type: ignore[arg-type]
    return Hopwise(cfg, KeywordRetriever(sample_chunks()), reasoner, web, InMemorySaver())


def director_reasoner(**kwargs: object) -> ScriptedReasoner:
    return ScriptedReasoner(decompositions={DIRECTOR: CHAIN}, bridges=BRIDGE, **kwargs)


def nodes(result: QuestionResult) -> list[str]:
    return [event.node for event in result.trace]


def test_simple_question_answers_directly_and_streams() -> None:
    tokens: list[str] = []
    events: list[dict] = []
    app = make_app(ScriptedReasoner())
    result = app.ask("hello there", on_token=tokens.append, on_event=events.append)
    assert nodes(result) == ["route_question", "answer_directly", "check_claims"]
    assert result.trace[-1].details["fell_back"] is False  # a greeting states no fact
    assert app.retriever.calls == []  # type: ignore[attr-defined]
    assert result.route == "simple" and result.stop_reason == "simple"
    assert "".join(tokens) == result.answer == "Hello! Ask me about your documents."
    assert [TraceEvent.model_validate(e) for e in events] == result.trace
    assert result.mode == "llm" and result.llm_calls == 2 and result.hops == []


def test_complex_question_is_answered_from_the_knowledge_base() -> None:
    reasoner = director_reasoner()
    tokens: list[str] = []
    result = make_app(reasoner).ask(DIRECTOR, on_token=tokens.append)
    assert nodes(result) == [
        "route_question",
        "decompose_question",
        "retrieve_hop",
        "plan_next_step",
        "retrieve_hop",
        "plan_next_step",
        "evaluate_evidence",
        "generate_answer",
        "check_claims",
    ]
    assert [h.query for h in result.hops] == [
        "Who directed Inception?",
        BRIDGE["Where was #1 born?"],
    ]
    assert result.hops[1].bridged and result.hops[0].hits[0].chunk_id == "inception"
    cited = {c.chunk_id for c in result.citations}
    assert {"inception", "nolan"} <= cited
    assert "".join(tokens) == result.answer
    assert result.stop_reason == "enough" and result.evaluation.enough is True
    # code decided both plan steps; calls: route, decompose, bridge, evaluate, answer
    assert "plan" not in reasoner.calls and result.llm_calls == 5
    assert result.mode == "llm" and set(result.timings_ms) >= {"retrieve_hop"}
    hop2 = result.hops[1]
    assert any(h.new for h in hop2.hits) and any(not h.new for h in hop2.hits)
    assert QuestionResult.model_validate(json.loads(json.dumps(result.to_json()))) == result


def test_gaps_go_to_the_web_once_then_answer() -> None:
    web = FakeWebSearch(
        [
            WebResult(
                url="https://example.org/nolan",
                title="Nolan",
                snippet="Nolan was born on 30 July 1970.",
            )
        ]
    )
    reasoner = director_reasoner(verdicts=[NOT_ENOUGH, NOT_ENOUGH])
    result = make_app(reasoner, web=web).ask(DIRECTOR)
    assert nodes(result)[-5:] == [
        "evaluate_evidence",
        "search_web",
        "evaluate_evidence",
        "generate_answer",
        "check_claims",
    ]
    assert web.queries == ["Nolan birth year"] and result.web_used is True
    assert result.stop_reason == "web_used"
    assert result.evidence[-1].url == "https://example.org/nolan"
    assert any(c.url == "https://example.org/nolan" for c in result.citations)


def test_web_disabled_per_call_skips_the_web() -> None:
    web = FakeWebSearch([WebResult(url="https://example.org/x")])
    result = make_app(director_reasoner(verdicts=[NOT_ENOUGH]), web=web).ask(DIRECTOR, web=False)
    assert "search_web" not in nodes(result) and web.queries == []
    assert result.evaluation.missing == ["birth year"]


@pytest.mark.parametrize("mode", ["fail", "slow"])
def test_failing_web_is_recorded_and_the_answer_continues(mode: str) -> None:
    web = FakeWebSearch(mode=mode, delay_s=3)
    reasoner = director_reasoner(verdicts=[NOT_ENOUGH, NOT_ENOUGH])
    start = time.monotonic()
    result = make_app(reasoner, web=web, web_timeout_s=0.2).ask(DIRECTOR)
    assert time.monotonic() - start < 2
    assert result.web_used is False and result.web_error
    web_event = next(e for e in result.trace if e.node == "search_web")
    assert web_event.details["error"] == result.web_error
    assert nodes(result)[-2:] == ["generate_answer", "check_claims"] and {"inception", "nolan"} <= {
        c.chunk_id for c in result.citations
    }


def test_hop_cap_stops_retrieval() -> None:
    question = "Which river runs through the city Inception's director was born in?"
    chain = [
        ("Who directed Inception?", None),
        ("Where was #1 born?", 1),
        ("What is #2 the capital of?", 2),
        ("What river is in #3?", 3),
    ]
    reasoner = ScriptedReasoner(
        decompositions={question: chain},
        verdicts=[NOT_ENOUGH],
        bridges={**BRIDGE, "What is #2 the capital of?": "London capital"},
    )
    result = make_app(reasoner, max_hops=2).ask(question)
    assert len(result.hops) == 2 and result.stop_reason == "hop_cap"
    assert "plan" not in reasoner.calls  # each next hop continued the chain: code decided


def test_repeated_query_is_not_searched_again() -> None:
    question = "Who directed Inception, and who made it?"
    chain = [("Who directed Inception?", None), ("Who made #1?", 1), ("Extra #2?", 2)]
    reasoner = ScriptedReasoner(
        decompositions={question: chain}, bridges={"Who made #1?": "who directed  inception?"}
    )
    app = make_app(reasoner)
    result = app.ask(question)
    assert result.stop_reason == "repeated_query" and result.hops[1].repeated
    assert [q for q, _ in app.retriever.calls] == ["Who directed Inception?"]


def test_no_new_evidence_stops_retrieval() -> None:
    question = "What year is the director of Inception from?"
    chain = [("Who directed Inception?", None), ("What year is #1 from?", 1), ("Extra #2?", 2)]
    reasoner = ScriptedReasoner(
        decompositions={question: chain}, bridges={"What year is #1 from?": "Inception 2010 film"}
    )
    result = make_app(reasoner).ask(question)
    assert result.hops[1].new_count == 0 and result.stop_reason == "no_new_evidence"


def test_planner_is_asked_off_the_chain_and_its_follow_up_is_added_once() -> None:
    question = "Where was the director of Inception born, and what river is in London?"
    chain = [
        ("Who directed Inception?", None),
        ("Where was #1 born?", 1),
        ("What is London?", None),
        ("What river is in #3?", 3),
    ]
    follow = PlanDecision(action="retrieve", reason="gap", follow_up="Acme supplier Ohio")
    reasoner = ScriptedReasoner(
        decompositions={question: chain}, bridges=BRIDGE, plans=[follow, follow]
    )
    result = make_app(reasoner, max_hops=8).ask(question)
    assert reasoner.calls.count("plan") == 1  # only after hop 2, where the chain broke
    assert [s.question for s in result.sub_questions].count("Acme supplier Ohio") == 1
    assert result.sub_questions[-1].follow_up is True
    assert len(result.hops) == 4 and result.stop_reason == "no_new_evidence"


@pytest.mark.parametrize("step", ["decompose", "answer"])
def test_a_step_falling_back_makes_the_answer_degraded(step: str) -> None:
    tokens: list[str] = []
    result = make_app(director_reasoner(fail=[step])).ask(DIRECTOR, on_token=tokens.append)
    assert result.mode == "degraded"
    assert result.answer.startswith("(Note: the language model failed")
    assert any(e.mode == "fallback" and e.details["errors"] for e in result.trace)
    if step == "decompose":  # known before the answer: the note is streamed too
        assert "".join(tokens) == result.answer


def test_offline_reasoner_name_means_offline_mode() -> None:
    result = make_app(director_reasoner(name="offline")).ask(DIRECTOR)
    assert result.mode == "offline" and result.llm_calls == 0


def test_follow_up_is_rewritten_within_a_thread() -> None:
    follow = "Where was he born?"
    reasoner = ScriptedReasoner(rewrites={follow: "Where was Christopher Nolan born?"})
    app = make_app(reasoner)
    first = app.ask("Who directed Inception?")
    second = app.ask(follow, thread_id=first.thread_id)
    history = reasoner.seen["route"][1][1]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[0]["content"] == "Who directed Inception?"
    assert second.standalone_question == "Where was Christopher Nolan born?"
    assert second.citations[0].chunk_id == "nolan"
    assert second.hops[0].hits[0].new is True  # evidence pool reset per question
    assert [r.question for r in app.thread_answers(first.thread_id)] == [
        "Who directed Inception?",
        follow,
    ]
    threads = app.list_threads()
    assert threads[0]["thread_id"] == first.thread_id and threads[0]["answers"] == 2
    assert threads[0]["title"] == "Who directed Inception?"
    assert app.ask(follow).standalone_question == follow  # a new thread has no history


def test_deadline_skips_remaining_hops_and_web() -> None:
    web = FakeWebSearch([WebResult(url="https://example.org")])
    reasoner = director_reasoner(delay_s=0.05, verdicts=[NOT_ENOUGH])
    result = make_app(reasoner, web=web, question_deadline_s=0.08).ask(DIRECTOR)
    assert result.stop_reason == "deadline" and len(result.hops) == 1
    assert web.queries == [] and "evaluate" not in reasoner.calls
    assert nodes(result)[-2:] == ["generate_answer", "check_claims"]


def test_a_reader_never_sees_chunks_of_a_group_they_lack() -> None:
    question = "What is the Acme contract penalty?"
    app = make_app(ScriptedReasoner(), web=FakeWebSearch())
    outsider = json.dumps(app.ask(question, groups=["all"]).to_json(), ensure_ascii=False)
    assert "acme-penalty" not in outsider and "ZEBRA-SECRET" not in outsider
    assert "acme-public" in outsider
    insider = json.dumps(app.ask(question, groups=["legal"]).to_json(), ensure_ascii=False)
    assert "acme-penalty" in insider and "ZEBRA-SECRET" in insider
    assert all(groups == ["all"] for _, groups in app.retriever.calls[:1])


def test_chinese_question_cites_the_chinese_chunk() -> None:
    result = make_app(ScriptedReasoner()).ask("供货合同的违约金是多少？")
    assert result.citations[0].chunk_id == "zh-contract"


def test_economy_lets_code_settle_what_it_can() -> None:
    reasoner, code = director_reasoner(), ScriptedReasoner(name="offline")
    cfg = Settings(web_search=False)
    app = Hopwise(cfg, KeywordRetriever(sample_chunks()), reasoner, None, code=code)
    assert Hopwise(cfg, app.retriever, reasoner).code is not None  # built by default
    off = Settings(llm_economy=False)  # type: ignore[call-arg]
    assert Hopwise(off, app.retriever, reasoner).code is None
    result = app.ask(DIRECTOR)
    assert reasoner.calls == ["decompose", "bridge", "answer"] and result.llm_calls == 3
    # the code reads the bridge too (searched beside the model's when they differ); plan: follow-up?
    assert code.calls == ["route", "extract", "bridge", "extract", "plan", "evaluate"]
    assert result.mode == "llm" and {"inception", "nolan"} <= {c.chunk_id for c in result.citations}
    route_event = result.trace[0]
    assert route_event.mode == "code" and route_event.details["decided_by"] == "code"
    app.ask("Where was he born?", thread_id=result.thread_id)
    assert reasoner.calls[3] == "route"  # a follow-up needs the model to rewrite it


def test_the_model_judges_sufficiency_unless_code_proves_the_answer_is_there() -> None:
    web = FakeWebSearch([WebResult(url="https://example.org/nolan", snippet="born 1970")])
    reasoner = director_reasoner(verdicts=[NOT_ENOUGH])
    unsure = ScriptedReasoner(name="offline", verdicts=[NOT_ENOUGH])  # cannot prove it
    app = Hopwise(
        Settings(web_search=True), KeywordRetriever(sample_chunks()), reasoner, web, code=unsure
    )
    result = app.ask(DIRECTOR)
    assert reasoner.calls.count("evaluate") >= 1 and unsure.calls.count("evaluate") >= 1
    assert result.web_used and web.queries == ["Nolan birth year"]
    judged = [e for e in result.trace if e.node == "evaluate_evidence"]
    assert judged[0].details["decided_by"] == "model"


def test_code_settles_sufficiency_when_it_proves_the_answer_is_there() -> None:
    reasoner = director_reasoner(verdicts=[NOT_ENOUGH])
    sure = ScriptedReasoner(name="offline")  # its verdict: enough
    app = Hopwise(Settings(web_search=True), KeywordRetriever(sample_chunks()), reasoner,
                  FakeWebSearch([]), code=sure)  # fmt: skip
    result = app.ask(DIRECTOR)
    assert "evaluate" not in reasoner.calls and not result.web_used
    judged = [e for e in result.trace if e.node == "evaluate_evidence"]
    assert judged[0].details["decided_by"] == "code" and judged[0].details["enough"] is True


def test_taken_edges_follow_the_trace_and_exist_in_the_graph() -> None:
    from graph.builder import EDGES, compile_graph, taken_edges

    result = make_app(director_reasoner()).ask(DIRECTOR)
    path = taken_edges(result.trace)
    assert path[0] == ("__start__", "route_question") and path[-1][1] == "__end__"
    assert set(path) <= set(EDGES)
    drawn = {(e.source, e.target) for e in compile_graph().get_graph().edges}
    assert drawn == set(EDGES)
