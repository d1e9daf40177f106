"""The graph state and its reducers.

Everything in the state is plain JSON-like data (dicts, lists, strings) so the SQLite
checkpointer stores it without custom types. Per-question fields are reset at the start
of every question (see `question_input`); `messages` lives for the whole conversation.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

MAX_MESSAGES = 20  # conversation turns kept for follow-up rewriting (user + assistant)

# Free-form JSON objects: a step's details for the trace, a model dump kept as data. Everything
# with a fixed shape has its own type below.
JsonObject = dict[str, Any]

Route = Literal["", "simple", "complex"]
PlanAction = Literal["", "retrieve", "evaluate"]
# Why the hops stopped (the trace and the UI show it; `NATURAL_STOPS` may become "enough").
StopReason = Literal[
    "",
    "simple",  # answered directly, without the documents
    "plan_evaluate",  # the planner judged the evidence ready
    "sub_questions_exhausted",
    "hop_cap",
    "repeated_query",
    "no_new_evidence",
    "deadline",
    "web_used",
    "enough",
]
NATURAL_STOPS: frozenset[str] = frozenset(
    {"", "sub_questions_exhausted", "plan_evaluate", "web_used"}
)


class SubQuestion(TypedDict, total=False):
    """One planned sub-question; `depends_on` names an earlier one whose answer it needs."""

    id: int
    question: str
    depends_on: int | None
    follow_up: bool  # added by the planner after the first plan
    search_query: str | None  # the same question in the documents' language (a model's)


class PoolEntry(TypedDict, total=False):
    """A retrieved chunk as the evidence pool keeps it, by chunk id (merge_evidence)."""

    chunk_id: str
    doc_id: str
    title: str
    source: str
    section: str
    page: int | None
    text: str
    table_header: str
    whole_document: bool  # its document was read whole (a count or a sum)
    score: float
    bm25: float | None
    dense: float | None
    hop: int  # the first hop that found it
    rank: int  # its best rank within a hop
    sentences: list[str]  # verbatim sentences kept from it


class HitTrace(TypedDict, total=False):
    """A search hit as the hop trace shows it: where it is, its scores, new or duplicate."""

    chunk_id: str
    doc_id: str
    doc: str
    source: str
    section: str
    page: int | None
    bm25: float | None
    dense: float | None
    fused: float
    rank: int
    new: bool
    snippet: str


class KeptSentence(TypedDict):
    chunk_id: str
    text: str


class Hop(TypedDict, total=False):
    """One sub-question searched."""

    hop: int
    round: int
    sub_question_id: int
    sub_question: str
    query: str  # what was sent to the search
    bridged: bool
    bridge: JsonObject  # the bridge's candidates, scores and winner
    search_query: str  # also searched: the query in the documents' language
    follow_up: bool
    repeated: bool
    hits: list[HitTrace]
    new_count: int
    evidence: list[KeptSentence]


class Verdict(TypedDict, total=False):
    """The sufficiency check of the evidence against the question."""

    enough: bool
    missing: list[str]
    web_query: str | None


class WebHit(TypedDict, total=False):
    """A web search result (untrusted data), with the domain it came from."""

    url: str
    title: str
    snippet: str
    source: str


class Citation(TypedDict, total=False):
    """An [n] the answer uses, resolved to its chunk or URL."""

    n: int
    chunk_id: str | None
    url: str | None
    source: str
    title: str
    section: str
    page: int | None
    quote: str


class Event(TypedDict):
    """One node run in the trace (times in ms since the question started)."""

    node: str
    started_ms: float
    ended_ms: float
    duration_ms: float
    llm_calls: int
    tokens: int
    mode: str  # llm | offline | fallback | code
    details: JsonObject


Turn = dict[str, str]  # {"role": "user" | "assistant", "content": ...}


def merge_evidence(
    left: dict[str, PoolEntry] | None, right: dict[str, PoolEntry] | None
) -> dict[str, PoolEntry]:
    """Merge pools by chunk id: keep the higher-scored entry, union the extracted sentences."""
    merged = dict(left or {})
    for chunk_id, item in (right or {}).items():
        old = merged.get(chunk_id)
        if old is None:
            merged[chunk_id] = item
            continue
        best = (item if item.get("score", 0.0) > old.get("score", 0.0) else old).copy()
        sentences = list(old.get("sentences", []))
        sentences += [s for s in item.get("sentences", []) if s not in sentences]
        best["sentences"] = sentences
        best["hop"] = min(old.get("hop", 0), item.get("hop", 0))
        best["rank"] = min(old.get("rank", 0), item.get("rank", 0))
        if old.get("whole_document") or item.get("whole_document"):
            best["whole_document"] = True  # its document was read whole by either hop
        merged[chunk_id] = best
    return merged


def append_items(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Append-only lists: trace events, hop records."""
    return list(left or []) + list(right or [])


def append_messages(left: list[Turn] | None, right: list[Turn] | None) -> list[Turn]:
    """Conversation turns, bounded so old threads stay cheap to checkpoint."""
    return (list(left or []) + list(right or []))[-MAX_MESSAGES:]


class GraphState(TypedDict, total=False):
    """One question's working state plus the conversation it belongs to. A node returns the
    part it changes (the same type: every key is optional)."""

    # input
    question: str
    history: list[Turn]
    web_budget: int  # web searches allowed for this question (0 when off)
    # route_question
    standalone_question: str
    route: Route
    route_reason: str
    # decompose_question / plan_next_step
    sub_questions: list[SubQuestion]
    follow_up_added: bool
    plan_action: PlanAction
    plan_reason: str
    # retrieve_hop
    hops: Annotated[list[Hop], append_items]
    rounds: int
    evidence: Annotated[dict[str, PoolEntry], merge_evidence]
    # evaluate_evidence / search_web
    evaluation: Verdict
    web_searches: int
    web_used: bool
    web_query: str
    web_results: list[WebHit]
    web_error: str
    deadline_hit: bool
    stop_reason: StopReason
    # generate_answer / answer_directly / check_claims
    answer: str
    answer_evidence: list[
        JsonObject
    ]  # EvidenceItem.model_dump() of what the answer was written from
    citations: list[Citation]
    # whole run
    trace: Annotated[list[Event], append_items]
    # conversation (kept across questions of a thread)
    messages: Annotated[list[Turn], append_messages]
    result: JsonObject  # the last answer's full result (set by the runner)


def question_input(question: str, history: list[Turn], web_budget: int) -> JsonObject:
    """The input of one question: every per-question field reset, the conversation kept
    (Overwrite replaces what the reducers would otherwise append to)."""
    from langgraph.types import Overwrite  # here: the pages read results without langgraph

    return {
        "question": question,
        "history": list(history),
        "web_budget": web_budget,
        "standalone_question": question,
        "route": "",
        "route_reason": "",
        "sub_questions": [],
        "follow_up_added": False,
        "plan_action": "",
        "plan_reason": "",
        "hops": Overwrite([]),
        "rounds": 0,
        "evidence": Overwrite({}),
        "evaluation": {},
        "web_searches": 0,
        "web_used": False,
        "web_query": "",
        "web_results": [],
        "web_error": "",
        "deadline_hit": False,
        "stop_reason": "",
        "answer": "",
        "answer_evidence": [],
        "citations": [],
        "trace": Overwrite([]),
    }
