"""The Reasoner contract, run against every implementation (Haystack's pattern).

Offline reasoning, the LLM reasoner over the real langchain-openai client to the local stub (a
plausible model, a model that returns placeholder junk, and a dead endpoint where offline
reasoning stands in), and the scripted fake the graph tests use. Whatever the implementation,
every step returns its typed result plus a Usage, extraction quotes only the given chunks
verbatim, and an answer stream ends with exactly one Usage.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graph.offline import OfflineReasoner
from graph.protocols import EvidenceItem, HopView, Reasoner, Usage
from graph.schemas import Decomposition, EvidenceVerdict, PlanDecision, RouteDecision
from hopwise.settings import Settings
from ingest.models import Hit
from tests.fakes.openai_stub import StubOpenAIServer, default_responder, plausible_responder
from tests.fakes.reasoner import ScriptedReasoner

MODES = {"llm", "offline", "fallback", "code"}
HITS = [
    Hit(chunk_id="c1", doc_id="d1", title="Orion Supply Agreement", source="orion.md",
        text="The supplier of the Orion turbines is Kestrel Works. Deliveries start in May.",
        score=1.0, rank=1),
    Hit(chunk_id="c2", doc_id="d2", title="Kestrel Works", source="kestrel.md",
        text="Kestrel Works is based in Tampere. It was founded in 1987.", score=0.8, rank=2),
]  # fmt: skip
EVIDENCE = [
    EvidenceItem(n=i, chunk_id=h.chunk_id, source=h.source, title=h.title, text=h.text,
                 sentences=[h.text.split(". ")[0] + "."], score=h.score)
    for i, h in enumerate(HITS, start=1)
]  # fmt: skip
QUESTION = "Where is the supplier of the Orion turbines based?"


def _llm(stub: StubOpenAIServer, **overrides: Any) -> Reasoner:
    from graph.llm import LLMReasoner

    settings = Settings(
        llm_base_url=stub.url, llm_model="stub", llm_max_retries=0, llm_timeout_s=3, **overrides
    )  # type: ignore[arg-type]
    assert settings.llm is not None
    return LLMReasoner(settings.llm, OfflineReasoner(), backoff_s=0.0, circuit_cooldown_s=0)


@pytest.fixture(params=["offline", "llm-plausible", "llm-placeholder", "llm-dead", "scripted"])
def reasoner(request: pytest.FixtureRequest) -> Iterator[Reasoner]:
    kind: str = request.param
    if kind == "offline":
        yield OfflineReasoner()
    elif kind == "scripted":
        yield ScriptedReasoner()
    elif kind == "llm-dead":
        stub = StubOpenAIServer()
        stub.start()
        url = stub.url
        stub.stop()  # nothing listens there any more: every call is refused
        settings = Settings(llm_base_url=url, llm_model="stub", llm_max_retries=0,
                            llm_timeout_s=2)  # fmt: skip
        from graph.llm import LLMReasoner

        assert settings.llm is not None
        yield LLMReasoner(settings.llm, OfflineReasoner(), backoff_s=0.0, circuit_cooldown_s=0)
    else:
        with StubOpenAIServer() as stub:
            stub.responder = plausible_responder if kind == "llm-plausible" else default_responder
            yield _llm(stub)


def _usage(value: object) -> Usage:
    assert isinstance(value, Usage)
    assert value.mode in MODES and value.llm_calls >= 0
    assert value.prompt_tokens >= 0 and value.completion_tokens >= 0
    return value


def test_route_returns_a_decision(reasoner: Reasoner) -> None:
    decision, usage = reasoner.route(QUESTION, [])
    assert isinstance(decision, RouteDecision) and decision.route in {"simple", "complex"}
    assert decision.standalone_question.strip()
    _usage(usage)


def test_decompose_gives_ordered_sub_questions(reasoner: Reasoner) -> None:
    plan, usage = reasoner.decompose(QUESTION)
    assert isinstance(plan, Decomposition) and 1 <= len(plan.sub_questions) <= 8
    for position, sub in enumerate(plan.sub_questions, start=1):
        assert sub.question.strip()
        assert sub.depends_on is None or 0 < sub.depends_on < sub.id
        assert sub.id == position
    _usage(usage)


def test_bridge_returns_a_query(reasoner: Reasoner) -> None:
    view = HopView(sub_question="Who supplies the Orion turbines?", query="Orion turbines",
                   new_chunk_ids=["c1"], top_hits=HITS[:1])  # fmt: skip
    query, usage = reasoner.bridge("Where is #1 based?", [view], EVIDENCE[:1])
    assert isinstance(query, str) and query.strip()
    _usage(usage)


def test_extract_quotes_only_given_chunks_verbatim(reasoner: Reasoner) -> None:
    sentences, usage = reasoner.extract("Who supplies the Orion turbines?", HITS)
    texts = {h.chunk_id: h.text for h in HITS}
    for sentence in sentences:
        assert sentence.chunk_id in texts and sentence.text.strip()
        assert sentence.text in texts[sentence.chunk_id], sentence
    _usage(usage)


def test_plan_and_evaluate_return_their_types(reasoner: Reasoner) -> None:
    view = HopView(sub_question=QUESTION, query=QUESTION, new_chunk_ids=["c1", "c2"],
                   top_hits=HITS)  # fmt: skip
    decision, usage = reasoner.plan(QUESTION, [], [view], EVIDENCE)
    assert isinstance(decision, PlanDecision) and decision.action in {"retrieve", "evaluate"}
    _usage(usage)
    verdict, usage = reasoner.evaluate(QUESTION, EVIDENCE)
    assert isinstance(verdict, EvidenceVerdict) and isinstance(verdict.missing, list)
    _usage(usage)


@pytest.mark.parametrize("step", ["answer", "answer_directly"])
def test_answer_streams_text_then_exactly_one_usage(reasoner: Reasoner, step: str) -> None:
    if step == "answer":
        stream = reasoner.answer(QUESTION, EVIDENCE, [])
    else:
        stream = reasoner.answer_directly("Hello!", [])
    items = list(stream)
    assert items and isinstance(items[-1], Usage)
    assert all(isinstance(piece, str) for piece in items[:-1])
    assert "".join(items[:-1]).strip()  # type: ignore[arg-type]
    _usage(items[-1])
