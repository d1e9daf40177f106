"""The result of one question: one typed model shared by the runner, the CLI's JSON, the UI and
the evaluation. Its JSON form (`model_dump(mode="json")`) is the `hopwise ask --json` object;
keys are a contract: add freely, rename nothing.

Saved results are validated back into these models, so a field added later needs a default.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graph.protocols import EvidenceItem
from graph.state import JsonObject

Mode = Literal["llm", "offline", "degraded"]


_ANSWER_LEAD_RE = re.compile(
    r"^\s*(?:\*\*)?(?:final answer|short answer|answer|答案|回答)\s*(?:\*\*)?\s*[:：]\s*",
    re.IGNORECASE,
)
_NOT_FOUND_RE = re.compile(r"^(?:not found|no answer|知识库中没有|没有找到|未找到)", re.IGNORECASE)


QUOTE_LEAD = {"en": "The documents say:", "zh": "文档原文："}
NOT_SAID_LEAD = {"en": "The documents do not say", "zh": "文档中没有说明"}
LOOKED_FOR_LEAD = {"en": "Looked for:", "zh": "查找过："}  # what was searched, not a claim


def short_answer_of(answer: str) -> str:
    """The first line of an answer that states one ('Answer: Shenzhen [2]' -> 'Shenzhen'):
    markdown, citations and a lead word removed; for a quote of the documents its key span (in
    bold) or the quote; '' when the line says nothing was found or the answer has no first
    line of its own (a degraded note is skipped)."""
    first = lead_line(answer)
    if not first or first.startswith(tuple(NOT_SAID_LEAD.values())):
        return ""
    if first.startswith(tuple(QUOTE_LEAD.values())):  # the key span in bold, else the quote
        key = re.search(r"\*\*(.+?)\*\*", first)
        return (key.group(1) if key else first.split("“", 1)[-1].rsplit("”", 1)[0]).strip()
    line = _ANSWER_LEAD_RE.sub("", first)
    line = re.sub(r"\s*\[\d+(?:\s*[,，、]\s*\d+)*\]", "", line).replace("**", "").strip()
    line = line.rstrip("。.").strip()
    return "" if not line or _NOT_FOUND_RE.match(line) else line


def answer_kind(answer: str) -> str:
    """What the first line of an answer is: 'short' (a stated answer), 'quote' (the best
    sentence verbatim), 'not_found', or 'other' (a model's prose, a direct reply)."""
    first = lead_line(answer)
    if first.startswith(tuple(QUOTE_LEAD.values())):
        return "quote"
    if first.startswith(tuple(NOT_SAID_LEAD.values())) or _NOT_FOUND_RE.match(first):
        return "not_found"
    return "short" if first and _ANSWER_LEAD_RE.match(first) else "other"


def lead_line(answer: str) -> str:
    """The answer's first line of its own (a degraded note before it is skipped), or ''."""
    lines = [ln.strip() for ln in answer.splitlines() if ln.strip()]
    while lines and lines[0].startswith(("(Note:", "（", "(This answer")):
        lines.pop(0)
    return lines[0] if lines else ""


WITHHELD = "(withheld: it came from a document you can no longer read)"


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SubQuestionRecord(_Record):
    """One planned sub-question."""

    id: int
    question: str
    depends_on: int | None = None
    follow_up: bool = False


class HitRecord(_Record):
    """A search hit as the hop trace shows it: where it is, its scores, new or duplicate."""

    chunk_id: str
    doc_id: str = ""
    doc: str = Field("", description="The document's title, or its file name.")
    source: str = ""
    section: str = ""
    page: int | None = None
    bm25: float | None = None
    dense: float | None = None
    fused: float | None = Field(
        0.0, description="The fused score; None where scores are hidden from the reader."
    )
    rank: int = 0
    new: bool = False
    snippet: str = ""


class KeptSentence(_Record):
    """A verbatim sentence kept from a hit."""

    chunk_id: str
    text: str


class HopRecord(_Record):
    """One sub-question searched."""

    hop: int
    round: int = 1
    sub_question_id: int | None = None
    sub_question: str
    query: str = Field(description="What was actually sent to the search.")
    bridged: bool = False
    bridge: JsonObject = Field(
        default_factory=dict, description="The bridge candidates, their scores, the winner."
    )
    follow_up: bool = False
    search_query: str = Field(
        "", description="Also searched: the query in the documents' language."
    )
    repeated: bool = False
    new_count: int = 0
    hits: list[HitRecord] = Field(default_factory=list)
    evidence: list[KeptSentence] = Field(default_factory=list)


class Citation(_Record):
    """An `[n]` the answer actually uses."""

    n: int
    chunk_id: str | None = None
    url: str | None = None
    source: str = ""
    title: str = ""
    section: str = ""
    page: int | None = None
    quote: str = ""


class Verdict(_Record):
    """The sufficiency check of the evidence against the question."""

    enough: bool = False
    missing: list[str] = Field(default_factory=list)
    web_query: str | None = None


class WebResultRecord(_Record):
    """A web search result (untrusted data), with the domain it came from."""

    url: str
    title: str = ""
    snippet: str = ""
    source: str = Field("", description="The URL's domain.")


WEB_UNAVAILABLE = "web search unavailable"


class TraceEvent(_Record):
    """One node run. Times are milliseconds since the question started (one clock)."""

    node: str
    started_ms: float = 0.0
    ended_ms: float = 0.0
    duration_ms: float = 0.0
    llm_calls: int = 0
    tokens: int = 0
    mode: str = Field(
        "code",
        description="llm | offline | fallback (offline stood in for the model) | bypassed "
        "(offline, the model being bypassed after failing) | code",
    )
    details: JsonObject = Field(default_factory=dict)


class QuestionResult(_Record):
    """Everything one question produced (also what a conversation thread saves per answer)."""

    question: str
    thread_id: str = ""
    answer: str = ""
    short_answer: str = Field("", description="The answer's first line, without its citations.")
    mode: Mode = "offline"
    reasoner: str = "offline"
    route: str = ""
    route_reason: str = ""
    standalone_question: str = ""
    sub_questions: list[SubQuestionRecord] = Field(default_factory=list)
    hops: list[HopRecord] = Field(default_factory=list)
    evidence: list[EvidenceItem] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    evaluation: Verdict = Field(default_factory=Verdict)
    web_used: bool = False
    web_query: str = ""
    web_results: list[WebResultRecord] = Field(default_factory=list)
    web_error: str = ""
    stop_reason: str = ""  # a graph.state.StopReason (str: results saved earlier are read back)
    llm_calls: int = 0
    tokens: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    total_ms: float = 0.0
    trace: list[TraceEvent] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    created_at: float = 0.0
    notices: list[str] = Field(
        default_factory=list, description="What the reader should know beyond the mode."
    )
    llm_health: JsonObject = Field(
        default_factory=dict,
        description="The configured model's health after this question (graph.llm_health): "
        "state ok | failing | bypassed, failing questions in a row, the threshold, what this "
        "question did (use | probe | bypass); {} without a model.",
    )

    def to_json(self) -> JsonObject:
        """The `hopwise ask --json` object."""
        return self.model_dump(mode="json")

    def doc_ids(self) -> set[str]:
        """Every knowledge-base document the result shows anything of."""
        return {hit.doc_id for hop in self.hops for hit in hop.hits if hit.doc_id}

    def without_scores(self) -> QuestionResult:
        """A copy with every hit's BM25, dense and fused score removed; ranks, order and the
        new/duplicate flag stay. BM25 scores depend on statistics over the whole collection,
        documents the reader cannot see included, so raw scores would let a reader count
        restricted documents that contain a word (the IDF side channel)."""
        hidden = {"bm25": None, "dense": None, "fused": None}
        hops = [
            hop.model_copy(update={"hits": [h.model_copy(update=hidden) for h in hop.hits]})
            for hop in self.hops
        ]
        evidence = [e.model_copy(update={"score": 0.0}) for e in self.evidence]  # fused score
        return self.model_copy(update={"hops": hops, "evidence": evidence})

    def without_web_error_details(self) -> QuestionResult:
        """A copy whose failed web search says only WEB_UNAVAILABLE: the exception text (an
        address, a proxy, a library's words) is for admins."""
        if not self.web_error:
            return self
        trace = [
            event.model_copy(update={"details": {**event.details, "error": WEB_UNAVAILABLE}})
            if event.node == "search_web" and event.details.get("error")
            else event
            for event in self.trace
        ]
        return self.model_copy(update={"web_error": WEB_UNAVAILABLE, "trace": trace})

    def without_documents(self, doc_ids: set[str], notice: str) -> QuestionResult:
        """A copy that shows nothing of these documents: their hits, kept sentences, evidence
        and citations are dropped, and the answer, which may quote them, becomes `notice`."""
        if not doc_ids:
            return self
        gone = {hit.chunk_id for hop in self.hops for hit in hop.hits if hit.doc_id in doc_ids}
        if not gone:
            return self
        # What is left is counted and numbered again, so no gap shows what was removed.
        hops = []
        for hop in self.hops:
            hits = [h for h in hop.hits if h.chunk_id not in gone]
            hops.append(
                hop.model_copy(
                    update={
                        "hits": [h.model_copy(update={"rank": i}) for i, h in enumerate(hits, 1)],
                        "new_count": sum(h.new for h in hits),
                        "evidence": [k for k in hop.evidence if k.chunk_id not in gone],
                    }
                )
            )
        # web results go too: they were found with a query that may name what was withdrawn
        kept = [e for e in self.evidence if e.chunk_id not in gone and e.chunk_id is not None]
        number = {e.n: i for i, e in enumerate(kept, 1)}
        evidence = [e.model_copy(update={"n": number[e.n]}) for e in kept]
        citations = [
            c.model_copy(update={"n": number[c.n]})
            for c in self.citations
            if c.chunk_id not in gone and c.n in number
        ]
        # Names found in them travel on: bridged queries, queries in the documents' language,
        # follow-ups, the missing parts and web query, the trace. All of it is withheld.
        hops = [
            hop.model_copy(
                update={
                    "bridge": {},
                    "search_query": "",
                    "query": hop.sub_question if hop.bridged or hop.follow_up else hop.query,
                }
            )  # fmt: skip
            for hop in hops
        ]
        subs = [
            sq.model_copy(update={"question": WITHHELD}) if sq.follow_up else sq
            for sq in self.sub_questions
        ]
        # Every step's details: searches, bridges, verdicts and the answer's counts of
        # evidence and citations all read the withheld documents.
        trace = [e.model_copy(update={"details": {}, "tokens": 0}) for e in self.trace]
        return self.model_copy(
            update={
                "hops": hops,
                "sub_questions": subs,
                "trace": trace,
                "evaluation": Verdict(enough=self.evaluation.enough),
                "web_query": "",
                "short_answer": "",
                "evidence": evidence,
                "citations": citations,
                "web_results": [],
                "tokens": 0,  # how much text the withdrawn documents added
                "answer": notice,
            }
        )
