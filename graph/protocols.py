"""The seams of the graph: retriever, web search and reasoner are Protocols.

Production builds them once (LLM or offline reasoner, Milvus store, ddgs); tests pass fakes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from graph.schemas import (
    Decomposition,
    EvidenceSentence,
    EvidenceVerdict,
    PlanDecision,
    RouteDecision,
)
from graph.state import JsonObject
from ingest.models import Hit
from ingest.protocols import Searcher

Retriever = Searcher  # the graph only searches the knowledge base (ingest.protocols)
PhraseLookup = Callable[[Sequence[str]], Mapping[str, int]]  # phrase keys -> chunks naming it


class Similarity(Protocol):
    """Meaning similarity of a question to each text (the built-in embedder's cosine)."""

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]: ...


class WebResult(BaseModel):
    """One web search result. Untrusted data, never instructions."""

    url: str
    title: str = ""
    snippet: str = ""


class WebSearch(Protocol):
    """Searches the web; raises WebSearchError on failure."""

    def search(self, query: str, max_results: int = 5) -> list[WebResult]: ...


class WebSearchError(RuntimeError):
    """The web search failed (offline, timeout, rate limit...)."""


class EvidenceItem(BaseModel):
    """One numbered piece of evidence as the answer step sees it (chunk or web page)."""

    n: int = Field(description="Citation number, 1-based.")
    chunk_id: str | None = None
    url: str | None = None
    source: str = ""
    title: str = ""
    section: str = ""
    page: int | None = None
    text: str = Field(description="The chunk text (or web snippet).")
    table_header: str = Field(
        "", description="The header row of a table the chunk starts inside of."
    )
    sentences: list[str] = Field(default_factory=list, description="Extracted key sentences.")
    score: float = 0.0
    whole_document: bool = Field(
        False, description="Every chunk of its document the reader may see is in the evidence."
    )


class HopView(BaseModel):
    """What a reasoner may know about a finished hop."""

    sub_question: str
    query: str
    new_chunk_ids: list[str] = Field(default_factory=list)
    top_hits: list[Hit] = Field(default_factory=list)
    hit_ids: list[str] = Field(default_factory=list, description="Every hit, in rank order.")
    follow_up: bool = Field(False, description="A follow-up the planner added.")
    final: bool = Field(False, description="It searched the last planned sub-question.")
    entity: str = Field("", description="The entity the bridge filled in, if it chose one.")
    unlinked: bool = Field(
        False, description="The step before found nothing said of what it asked about."
    )


class Usage(BaseModel):
    """LLM usage of one reasoning call; zero for offline steps."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    mode: str = Field("offline", description="llm | offline | fallback (offline stood in)")
    method: str | None = Field(None, description="Structured-output method that worked.")
    error: str | None = Field(None, description="Why the model step fell back, if it did.")
    details: JsonObject = Field(
        default_factory=dict, description="What the step decided and why, for the trace."
    )


class Reasoner(Protocol):
    """Every model-backed step. The offline reasoner implements the same interface.

    Each method returns its result and the Usage of that step, so the trace can show
    LLM calls/tokens per node and whether offline reasoning stood in.
    """

    name: str  # "llm" or "offline"

    def route(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> tuple[RouteDecision, Usage]: ...

    def decompose(
        self,
        question: str,
        phrases: PhraseLookup | None = None,
        documents_language: str | None = None,
    ) -> tuple[Decomposition, Usage]:
        """`phrases` looks up the knowledge base's phrase table (the reader's groups applied);
        `documents_language` is the language most of the readable documents are in."""
        ...

    def bridge(
        self, sub_question: str, earlier: Sequence[HopView], evidence: Sequence[EvidenceItem]
    ) -> tuple[str, Usage]:
        """The query to send for a dependent sub-question, with the earlier hop's entity filled in."""
        ...

    def extract(
        self, sub_question: str, hits: Sequence[Hit]
    ) -> tuple[list[EvidenceSentence], Usage]: ...

    def plan(
        self,
        question: str,
        remaining: Sequence[str],
        hops: Sequence[HopView],
        evidence: Sequence[EvidenceItem],
    ) -> tuple[PlanDecision, Usage]: ...

    def evaluate(
        self, question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView] = ()
    ) -> tuple[EvidenceVerdict, Usage]: ...

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str | Usage]:
        """Streams answer text pieces; the last item yielded is the step's Usage."""
        ...

    def answer_directly(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> Iterator[str | Usage]: ...
