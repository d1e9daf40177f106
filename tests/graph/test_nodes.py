"""Node functions and helpers called directly with fakes."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graph import citations, evidence, nodes, planning
from graph.context import GraphContext
from graph.protocols import EvidenceItem
from graph.schemas import PlanDecision
from graph.state import append_messages, merge_evidence
from hopwise.settings import Settings
from tests.fakes.reasoner import ScriptedReasoner
from tests.fakes.retriever import KeywordRetriever, sample_chunks


def runtime(reasoner: ScriptedReasoner | None = None, **settings: object) -> Runtime:
    ctx = GraphContext(
        retriever=KeywordRetriever(sample_chunks()),
        reasoner=reasoner or ScriptedReasoner(),
        config=Settings(web_search=False, **settings).graph,  # type: ignore[arg-type]
    )
    return Runtime(context=ctx)


def hop(n: int, sq_id: int, query: str, new: int, rnd: int | None = None) -> dict:
    return {
        "hop": n,
        "round": rnd or n,
        "sub_question_id": sq_id,
        "sub_question": query,
        "query": query,
        "repeated": False,
        "hits": [],
        "new_count": new,
    }


def test_merge_evidence_keeps_the_higher_score_and_all_sentences() -> None:
    left = {"a": {"chunk_id": "a", "score": 1.0, "sentences": ["s1"], "hop": 1, "rank": 2}}
    right = {
        "a": {"chunk_id": "a", "score": 2.0, "sentences": ["s2"], "hop": 2, "rank": 1},
        "b": {"chunk_id": "b", "score": 0.5, "sentences": []},
    }
    merged = merge_evidence(left, right)
    assert merged["a"]["score"] == 2.0 and merged["a"]["sentences"] == ["s1", "s2"]
    assert merged["a"]["hop"] == 1 and set(merged) == {"a", "b"}
    lower = merge_evidence(merged, {"a": {"chunk_id": "a", "score": 0.1, "sentences": []}})
    assert lower["a"]["score"] == 2.0


def test_messages_are_bounded() -> None:
    msgs = [{"role": "user", "content": str(i)} for i in range(30)]
    assert append_messages([], msgs)[-1]["content"] == "29" and len(append_messages([], msgs)) == 20


def test_route_question_records_one_event() -> None:
    update = nodes.route_question({"question": "hello", "history": []}, runtime())
    assert update["route"] == "simple" and len(update["trace"]) == 1
    event = update["trace"][0]
    assert event["node"] == "route_question" and event["llm_calls"] == 1 and event["mode"] == "llm"
    assert event["ended_ms"] >= event["started_ms"]


def test_decompose_renumbers_and_drops_bad_links() -> None:
    reasoner = ScriptedReasoner(decompositions={"q": [("a", 3), ("b", 1), ("", None), ("c", 2)]})
    update = nodes.decompose_question({"standalone_question": "q"}, runtime(reasoner))
    subs = update["sub_questions"]
    assert [s["question"] for s in subs] == ["a", "b", "c"]
    assert [s["depends_on"] for s in subs] == [None, 1, 2]


def test_independent_sub_questions_are_retrieved_together() -> None:
    subs = [
        {"id": 1, "question": "Who directed Inception?", "depends_on": None},
        {"id": 2, "question": "What is London?", "depends_on": None},
        {"id": 3, "question": "Where was #1 born?", "depends_on": 1},
    ]
    rt = runtime()
    update = nodes.retrieve_hop({"sub_questions": subs, "hops": [], "evidence": {}}, rt)
    assert [h["sub_question_id"] for h in update["hops"]] == [1, 2]
    assert {h["round"] for h in update["hops"]} == {1} and update["rounds"] == 1
    assert len(update["trace"]) == 1 and "inception" in update["evidence"]
    assert update["evidence"]["inception"]["sentences"]  # verbatim sentence kept
    assert update["hops"][0]["evidence"][0]["chunk_id"] == "inception"
    assert "_items" not in update["hops"][0]


def test_batch_respects_the_hop_cap() -> None:
    subs = [{"id": i, "question": f"q{i}", "depends_on": None} for i in range(1, 6)]
    assert len(planning.next_batch({"sub_questions": subs, "hops": []}, 3)) == 3


def test_plan_code_decisions() -> None:
    subs = [{"id": i, "question": f"q{i}", "depends_on": None} for i in (1, 2, 3)]
    reasoner = ScriptedReasoner()
    rt = runtime(reasoner, max_hops=2)
    base = {"standalone_question": "q", "sub_questions": subs, "evidence": {}}
    capped = nodes.plan_next_step(
        {**base, "hops": [hop(1, 1, "a", 2), hop(2, 2, "b", 1)], "rounds": 2}, rt
    )
    assert capped["plan_action"] == "evaluate" and capped["stop_reason"] == "hop_cap"
    rt = runtime(reasoner, max_hops=4)
    nothing = nodes.plan_next_step({**base, "hops": [hop(1, 1, "a", 0)], "rounds": 1}, rt)
    assert nothing["stop_reason"] == "no_new_evidence"
    one_left = nodes.plan_next_step(
        {**base, "hops": [hop(1, 1, "a", 1), hop(2, 2, "b", 1)], "rounds": 2}, rt
    )
    assert one_left["plan_action"] == "retrieve" and one_left["trace"][0]["llm_calls"] == 0
    done = nodes.plan_next_step(
        {**base, "hops": [hop(i, i, f"x{i}", 1) for i in (1, 2, 3)], "rounds": 3}, rt
    )
    assert done["stop_reason"] == "sub_questions_exhausted"
    assert reasoner.calls == []


def test_plan_asks_the_model_only_when_code_cannot_decide() -> None:
    subs = [{"id": i, "question": f"q{i}", "depends_on": None} for i in (1, 2, 3)]
    reasoner = ScriptedReasoner(plans=[PlanDecision(action="evaluate", reason="enough")])
    state = {
        "standalone_question": "q",
        "sub_questions": subs,
        "evidence": {},
        "hops": [hop(1, 1, "a", 1)],
        "rounds": 1,
    }
    update = nodes.plan_next_step(state, runtime(reasoner))
    assert reasoner.calls == ["plan"] and update["plan_action"] == "evaluate"
    assert update["stop_reason"] == "plan_evaluate"
    assert update["trace"][0]["details"]["decided_by"] == "model"


def test_evaluate_without_evidence_needs_no_model() -> None:
    reasoner = ScriptedReasoner()
    update = nodes.evaluate_evidence(
        {"standalone_question": "q", "evidence": {}}, runtime(reasoner)
    )
    assert update["evaluation"] == {"enough": False, "missing": ["q"], "web_query": "q"}
    assert reasoner.calls == []


def test_evidence_is_capped_and_keeps_each_hops_best() -> None:
    pool = {
        f"c{h}{r}": {
            "chunk_id": f"c{h}{r}",
            "score": 10.0 * h - r,
            "hop": h,
            "rank": r,
            "text": "t",
            "sentences": [],
        }
        for h in (1, 2)
        for r in (1, 2, 3)
    }
    items = evidence.evidence_items(pool, [{"url": "https://x.org", "snippet": "s"}], 2)
    assert [i.chunk_id for i in items[:2]] == ["c21", "c11"]
    assert items[2].url == "https://x.org" and [i.n for i in items] == [1, 2, 3]


def test_citations_are_the_numbers_the_answer_uses() -> None:
    items = [EvidenceItem(n=i, chunk_id=f"c{i}", text=f"text {i}") for i in (1, 2, 3)]
    cites = citations.find_citations("A [3]. B [1, 3]. C [7]. D [2，1]", items)
    assert [c["n"] for c in cites] == [1, 2, 3] and cites[2]["chunk_id"] == "c3"
    assert citations.find_citations("no markers", items) == []


def test_sources_are_renumbered_in_order_of_first_use_without_gaps() -> None:
    items = [EvidenceItem(n=i, chunk_id=f"c{i}", text=f"text {i}") for i in range(1, 7)]
    text, renumbered, cites = citations.renumber_citations(
        "A [5]. B [2, 5]. C [9]. D [4，2]", items
    )
    assert text == "A [1]. B [2, 1]. C [9]. D [3，2]"  # [9] names no source: left as written
    assert [c["n"] for c in cites] == [1, 2, 3]
    assert [c["chunk_id"] for c in cites] == ["c5", "c2", "c4"]
    assert [(i.n, i.chunk_id) for i in renumbered] == [
        (4, "c1"), (2, "c2"), (5, "c3"), (3, "c4"), (1, "c5"), (6, "c6")
    ]  # fmt: skip  # ranked order kept: recall is measured on it
    assert citations.renumber_citations("none", items)[0] == "none"


def test_follow_up_is_added_once_and_never_twice_the_same() -> None:
    subs = [{"id": 1, "question": "Who directed Inception?", "depends_on": None}]
    added = planning.add_follow_up({"sub_questions": subs}, "Nolan birthplace")
    assert added["sub_questions"][-1] == {
        "id": 2,
        "question": "Nolan birthplace",
        "depends_on": None,
        "follow_up": True,
    }
    assert planning.add_follow_up({"sub_questions": subs, "follow_up_added": True}, "x") == {}
    assert planning.add_follow_up({"sub_questions": subs}, "who directed  INCEPTION?") == {}


def test_chain_continuation_is_decided_by_code() -> None:
    subs = [
        {"id": 1, "question": "a", "depends_on": None},
        {"id": 2, "question": "b #1", "depends_on": 1},
        {"id": 3, "question": "c #2", "depends_on": 2},
    ]
    reasoner = ScriptedReasoner()
    state = {
        "standalone_question": "q",
        "sub_questions": subs,
        "evidence": {},
        "hops": [hop(1, 1, "a", 2)],
        "rounds": 1,
    }
    update = nodes.plan_next_step(state, runtime(reasoner))
    assert update["plan_action"] == "retrieve" and reasoner.calls == []


def test_a_named_placeholder_implies_the_dependency() -> None:
    reasoner = ScriptedReasoner(decompositions={"q": [("a", None), ("b of #1", None)]})
    update = nodes.decompose_question({"standalone_question": "q"}, runtime(reasoner))
    assert [s["depends_on"] for s in update["sub_questions"]] == [None, 1]


def test_an_unfilled_placeholder_is_not_sent_to_the_search() -> None:
    subs = [{"id": 1, "question": "Where was #1 born?", "depends_on": None}]
    rt = runtime()
    update = nodes.retrieve_hop({"sub_questions": subs, "hops": [], "evidence": {}}, rt)
    assert update["hops"][0]["query"] == "Where was born?"
    assert "#" not in rt.context.retriever.calls[0][0]


def test_a_fan_out_of_dependents_asks_the_model() -> None:
    subs = [
        {"id": 1, "question": "a", "depends_on": None},
        {"id": 2, "question": "b #1", "depends_on": 1},
        {"id": 3, "question": "c #1", "depends_on": 1},
    ]
    reasoner = ScriptedReasoner()
    state = {
        "standalone_question": "q",
        "sub_questions": subs,
        "evidence": {},
        "hops": [hop(1, 1, "a", 2)],
        "rounds": 1,
    }
    nodes.plan_next_step(state, runtime(reasoner))
    assert reasoner.calls == ["plan"]
