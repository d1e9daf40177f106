"""What the graph needs to know of the application's configuration, and nothing more.

The composition root (hopwise.app) builds these from the HOPWISE_* settings; the graph never
imports the application's Settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StructuredMethod = Literal["auto", "json_schema", "function_calling", "json_mode"]


@dataclass(frozen=True)
class GraphConfig:
    """Budgets of one question."""

    max_hops: int = 4
    top_k: int = 8
    max_evidence_chunks: int = 12
    whole_documents: int = (
        3  # a count or sum reads the table or log of this many best documents whole
    )
    whole_document_chunks: int = 40  # ... when its document has at most this many chunks
    max_web_searches: int = 1
    question_deadline_s: float = 120.0
    web_timeout_s: float = 8.0
    web_max_results: int = 5
    llm_economy: bool = True  # code settles the steps it can instead of the model
    claim_check: bool = True  # every claim checked against the passages it cites
    # A model's answer that failed the check is asked again by offline reasoning (seconds, no
    # model) even when the deadline has just passed: it has until the deadline, or this long.
    offline_rerun_grace_s: float = 10.0


@dataclass(frozen=True)
class LLMConfig:
    """One OpenAI-compatible chat endpoint (the router role may use a cheaper model)."""

    base_url: str
    model: str
    api_key: str | None = None
    router_model: str | None = None
    structured_method: StructuredMethod = "auto"
    timeout_s: float = 30.0
    max_retries: int = 1
    temperature: float = 0.0
    max_tokens: int = 1024
    repair: bool = False  # ask again once after a malformed reply (else offline settles it)
    failing_questions: int = 3  # failing questions in a row before the model is bypassed
    probe_interval_s: float = 300.0  # while bypassed, the model is tried this often...
    probe_questions: int = 20  # ... or after this many questions (0: by time only)

    def __repr__(self) -> str:  # never print the key
        return f"LLMConfig(base_url={self.base_url!r}, model={self.model!r}, api_key=***)"
