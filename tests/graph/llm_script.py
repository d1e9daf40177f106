"""The scripted replies, evidence and reasoner factory the LLMReasoner tests share."""

from __future__ import annotations

from graph.llm import LLMReasoner
from graph.offline import OfflineReasoner
from graph.protocols import EvidenceItem, HopView, Usage
from graph.schemas import Decomposition, EvidenceVerdict, PlanDecision, RouteDecision
from hopwise.settings import Settings
from ingest.models import Hit
from tests.fakes.openai_stub import requested_schema

KEY = "sk-LEAKCHECK-4f9a2b7c"


TIMEOUT_S = 0.4


HITS = [
    Hit(
        chunk_id="c1",
        doc_id="d1",
        source="acme.md",
        text="Acme Corp makes the X100 router. It was founded in 1999 by Jane Roe.",
        score=1.0,
    ),
    Hit(chunk_id="c2", doc_id="d2", source="roe.md", text="Jane Roe was born in Lyon.", score=0.5),
]


EVIDENCE = [
    EvidenceItem(
        n=1,
        chunk_id="c1",
        source="acme.md",
        text=HITS[0].text,
        sentences=["Acme Corp makes the X100 router."],
    ),
    EvidenceItem(n=2, chunk_id="c2", source="roe.md", text=HITS[1].text),
]


HOPS = [
    HopView(
        sub_question="Who makes the X100?",
        query="Who makes the X100?",
        new_chunk_ids=["c1"],
        top_hits=HITS[:1],
    )
]


SCRIPT = {
    "RouteDecision": {
        "standalone_question": "Who makes the X100?",
        "route": "complex",
        "reason": "Needs documents.",
    },
    "Decomposition": {
        "sub_questions": [
            {"id": 1, "question": "Which company makes the X100?", "depends_on": None},
            {"id": 2, "question": "Who founded #1?", "depends_on": 1},
        ]
    },
    "BridgeQuery": {"entity": "Acme Corp", "query": "Who founded Acme Corp?"},
    "ExtractedEvidence": {
        "sentences": [
            {"chunk_id": "c1", "text": "It was founded in 1999 by Jane Roe."},
        ]
    },
    "PlanDecision": {"action": "evaluate", "reason": "All found.", "follow_up": None},
    "EvidenceVerdict": {"enough": False, "missing": ["birthplace"], "web_query": "Jane Roe born"},
}


def by_schema(request: dict) -> dict | str | None:
    """Answer each structured request with the scripted object for the schema it asks for."""
    name = requested_schema(request)
    if name:
        return SCRIPT[name]
    return "Acme Corp makes the X100 [1]; Jane Roe founded it [1]."


STEPS = {
    "route": (
        lambda r: r.route("Who makes it?", [{"role": "user", "content": "the X100"}]),
        RouteDecision(**SCRIPT["RouteDecision"]),
    ),
    "decompose": (
        lambda r: r.decompose("Who founded the maker of the X100?"),
        Decomposition(**SCRIPT["Decomposition"]),
    ),
    "bridge": (lambda r: r.bridge("Who founded #1?", HOPS, EVIDENCE), "Who founded Acme Corp?"),
    "extract": (
        lambda r: r.extract("Who founded Acme Corp?", HITS),
        [{"chunk_id": "c1", "text": "It was founded in 1999 by Jane Roe."}],
    ),
    "plan": (
        lambda r: r.plan("Who founded the maker?", ["Who founded #1?"], HOPS, EVIDENCE),
        PlanDecision(**SCRIPT["PlanDecision"]),
    ),
    "evaluate": (
        lambda r: r.evaluate("Where was the founder born?", EVIDENCE),
        EvidenceVerdict(**SCRIPT["EvidenceVerdict"]),
    ),
}


def make(url: str, **overrides) -> LLMReasoner:
    fields = {
        "llm_base_url": url,
        "llm_model": "main-model",
        "llm_api_key": KEY,
        "llm_timeout_s": TIMEOUT_S,
        "llm_max_retries": 1,
        **overrides,
    }
    settings = Settings(**fields)
    return LLMReasoner(
        settings.llm, OfflineReasoner(), backoff_s=0.01, max_wait_s=0.5, circuit_cooldown_s=0
    )


def as_plain(result):
    if isinstance(result, list):
        return [r.model_dump() for r in result]
    return result


def drain(stream) -> tuple[str, Usage]:
    items = list(stream)
    assert isinstance(items[-1], Usage)
    assert all(isinstance(i, str) for i in items[:-1])
    return "".join(items[:-1]), items[-1]
