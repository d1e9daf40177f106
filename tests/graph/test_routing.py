"""Routers are pure functions of the state."""

from __future__ import annotations

from graph.routing import route_after_evaluation, route_after_plan, route_after_question


def test_route_after_question() -> None:
    assert route_after_question({"route": "simple"}) == "answer_directly"
    assert route_after_question({"route": "complex"}) == "decompose_question"


def test_route_after_plan() -> None:
    assert route_after_plan({"plan_action": "retrieve"}) == "retrieve_hop"
    assert route_after_plan({"plan_action": "evaluate"}) == "evaluate_evidence"


def test_route_after_evaluation() -> None:
    gaps = {"enough": False, "missing": ["x"]}
    assert route_after_evaluation({"evaluation": {"enough": True}, "web_budget": 1}) == (
        "generate_answer"
    )
    assert route_after_evaluation({"evaluation": gaps, "web_budget": 1}) == "search_web"
    assert (
        route_after_evaluation({"evaluation": gaps, "web_budget": 1, "web_searches": 1})
        == "generate_answer"
    )
    assert route_after_evaluation({"evaluation": gaps, "web_budget": 0}) == "generate_answer"
    assert (
        route_after_evaluation({"evaluation": gaps, "web_budget": 1, "deadline_hit": True})
        == "generate_answer"
    )
