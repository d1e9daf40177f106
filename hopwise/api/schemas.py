"""The typed bodies of the REST API: what a request may carry (unknown fields are refused) and
what a response holds. The answer itself is `graph.result.QuestionResult`, whose JSON is the
`hopwise ask --json` object."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graph.result import QuestionResult
from ingest.models import DocumentInfo

THREAD_ID = r"^[A-Za-z0-9_-]{1,64}$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskRequest(Strict):
    """One question, optionally continuing one of the caller's threads."""

    question: str = Field(description="The question, Chinese or English.")
    thread_id: str | None = Field(
        None,
        pattern=THREAD_ID,
        description="Continue this thread of yours (follow-ups use its conversation); omit it "
        "to start a new thread.",
    )
    stream: bool = Field(
        False,
        description="Server-Sent Events: `step` as the graph runs, `token` as the answer is "
        "written, then `result` (the same object as without streaming) or `error`.",
    )
    web: bool = Field(
        True, description="Allow the web fallback, where the deployment allows it at all."
    )


class ThreadSummary(BaseModel):
    """A thread as lists show it."""

    thread_id: str
    title: str = ""
    updated_at: float = 0.0
    answers: int = 0


class FeedbackEntry(BaseModel):
    """The caller's rating of one answer."""

    answer_index: int
    rating: int = Field(description="1 up, 0 down.")
    comment: str = ""
    created_at: float = 0.0


class ThreadDetail(ThreadSummary):
    """A thread with every answer as the caller may see it today (traces included)."""

    results: list[QuestionResult] = Field(default_factory=list)
    feedback: list[FeedbackEntry] = Field(default_factory=list)


class RenameRequest(Strict):
    title: str = Field(min_length=1, max_length=200, description="The thread's new title.")


class FeedbackRequest(Strict):
    """A rating of answer `answer_index` (0-based) of a thread."""

    rating: Literal["up", "down"] | None = Field(
        description="`up`, `down`, or null to withdraw the rating."
    )
    comment: str = Field("", max_length=2000)


class SearchRequest(Strict):
    """Raw hybrid search within the caller's groups."""

    query: str = Field(description="What to look for.")
    k: int = Field(8, ge=1, le=50, description="How many hits.")


class SearchHit(BaseModel):
    """A passage the search found, with where it is (its scores only for admins)."""

    rank: int
    chunk_id: str
    doc_id: str
    title: str = ""
    source: str = ""
    section: str = ""
    page: int | None = None
    text: str
    score: float | None = Field(None, description="The fused score; null for readers.")


class SearchResponse(BaseModel):
    query: str
    hits: list[SearchHit]


class DocumentList(BaseModel):
    documents: list[DocumentInfo]


class UploadRow(BaseModel):
    """One uploaded file's outcome, as the Admin page's table shows it."""

    file: str
    status: Literal["ingested", "skipped", "failed"]
    doc_id: str = ""
    chunks: int = 0
    version: int = 0
    reason: str = ""
    hidden_text: str = ""
    notes: str = ""


class UploadResponse(BaseModel):
    results: list[UploadRow]
    summary: str


class Deleted(BaseModel):
    deleted: bool
    chunks: int = 0


class EmbeddingStatus(BaseModel):
    """Background embedding: how many chunks have a vector of the current model."""

    documents: int = 0
    chunks: int = 0
    embedded_chunks: int | None = None
    complete: bool = True
    note: str = ""
    problem: str = ""


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    llm: str = Field(
        "off",
        description="The language model: off (none configured), ok, failing (its last "
        "questions failed a step), bypassed (offline reasoning answers until a probe works), "
        "unknown (still opening).",
    )


class Readiness(BaseModel):
    """Whether this process can answer: each part `ok` or why not."""

    ready: bool
    store: str
    database: str
    embedder: str
    llm_health: dict[str, Any] = Field(
        default_factory=dict,
        description="The model's state, failing questions in a row, the threshold and the next "
        "probe (never stops readiness: offline reasoning answers without it).",
    )
