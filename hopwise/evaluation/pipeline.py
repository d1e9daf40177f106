"""Run one evaluation question in a mode and record what the scoring needs.

adaptive: the product graph (hopwise.app.Hopwise, web off) with the configured reasoner.
single:   one search with the whole question (the single-shot baseline), same answer step.
gold:     the dataset's own decomposition, #k filled with its gold hop answers (the ceiling).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graph.protocols import EvidenceItem, Reasoner, Retriever, Usage
from graph.result import QuestionResult, short_answer_of
from graph.text import PLACEHOLDER_RE
from hopwise.evaluation.data import Question
from hopwise.settings import Settings
from ingest.models import Hit

if TYPE_CHECKING:
    from hopwise.app import Hopwise

MODES = ("adaptive", "single", "gold")
GROUPS = ("all",)


@dataclass
class QuestionRun:
    """What one question produced: ranked evidence ids, the answer and its cost."""

    evidence_ids: list[str]
    answer: str
    enough: bool | None = None
    short_answer: str = ""
    llm_calls: int = 0
    tokens: int = 0
    hops: int = 0
    stop_reason: str = ""
    latency_ms: float = 0.0
    mode_used: str = ""
    queries: list[str] = field(default_factory=list)
    error: str | None = None


def build_reasoner(settings: Settings, similarity: Any = None) -> Reasoner:
    """The product's reasoner for these settings (LLM with offline fallback, or offline)."""
    from hopwise.app import build_reasoner as product_reasoner

    return product_reasoner(settings, similarity)


class Runner:
    """Runs questions in one mode against one index."""

    def __init__(
        self, mode: str, retriever: Retriever, reasoner: Reasoner, settings: Settings, k: int
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        self.mode, self.retriever, self.reasoner, self.settings, self.k = (
            mode, retriever, reasoner, settings, k)  # fmt: skip
        self._graph: Hopwise | None = None
        if mode == "adaptive":
            from hopwise.app import Hopwise

            self._graph = Hopwise(settings, retriever, reasoner, None, None)

    def run(self, question: Question) -> QuestionRun:
        started = time.perf_counter()
        try:
            if self.mode == "adaptive":
                run = self._adaptive(question)
            else:
                queries = (
                    gold_queries(question) if self.mode == "gold" else [question.question]
                ) or [question.question]
                run = self._fixed(question.question, queries)
        except Exception as exc:  # one failing question must not sink the whole evaluation
            run = QuestionRun(evidence_ids=[], answer="", error=f"{type(exc).__name__}: {exc}")
        run.latency_ms = (time.perf_counter() - started) * 1000
        return run

    def _adaptive(self, question: Question) -> QuestionRun:
        assert self._graph is not None
        result = self._graph.ask(question.question, groups=GROUPS, web=False)
        return run_from_result(result)

    def _fixed(self, question: str, queries: Sequence[str]) -> QuestionRun:
        """Search each query once, pool the hits hop by hop in rank order, answer from them."""
        depth = self.k if len(queries) > 1 else max(self.k, self.settings.max_evidence_chunks)
        per_query = [self.retriever.search(q, GROUPS, k=depth) for q in queries]
        hits = interleave_by_hop(per_query)[: self.settings.max_evidence_chunks]
        evidence = [
            EvidenceItem(n=i, chunk_id=h.chunk_id, title=h.title, source=h.source, text=h.text,
                         score=h.score)
            for i, h in enumerate(hits, 1)
        ]  # fmt: skip
        verdict, usage_eval = self.reasoner.evaluate(question, evidence)
        text, usage_answer = collect_answer(
            self.reasoner.answer(question, evidence, verdict.missing)
        )
        usages = [usage_eval, usage_answer]
        return QuestionRun(
            evidence_ids=[h.chunk_id for h in hits], answer=text, enough=verdict.enough,
            short_answer=short_answer_of(text),
            llm_calls=sum(u.llm_calls for u in usages),
            tokens=sum(u.prompt_tokens + u.completion_tokens for u in usages),
            hops=len(queries), stop_reason="fixed", queries=list(queries),
            mode_used=usage_answer.mode,
        )  # fmt: skip


def interleave_by_hop(per_hop: Sequence[Sequence[Hit]]) -> list[Hit]:
    """Round-robin over the hops' ranked lists so every hop's best hits come first."""
    out: list[Hit] = []
    seen: set[str] = set()
    depth = max((len(h) for h in per_hop), default=0)
    for rank in range(depth):
        for hits in per_hop:
            if rank < len(hits) and hits[rank].chunk_id not in seen:
                seen.add(hits[rank].chunk_id)
                out.append(hits[rank])
    return out


def collect_answer(stream: Any) -> tuple[str, Usage]:
    pieces: list[str] = []
    usage = Usage()
    for item in stream:
        if isinstance(item, Usage):
            usage = item
        else:
            pieces.append(str(item))
    return "".join(pieces), usage


def gold_queries(question: Question) -> list[str]:
    """The dataset's decomposition with every #k replaced by the gold answer of hop k."""
    answers = question.decomposition_answers
    queries = []
    for step in question.decomposition:

        def fill(match: re.Match[str]) -> str:
            k = int(match.group(1))
            return answers[k - 1] if 0 < k <= len(answers) else ""

        queries.append(" ".join(PLACEHOLDER_RE.sub(fill, step).replace(">>", " ").split()))
    return queries


def run_from_result(result: QuestionResult) -> QuestionRun:
    """What the evaluation needs of one answered question."""
    return QuestionRun(
        evidence_ids=[item.chunk_id for item in result.evidence if item.chunk_id],
        answer=result.answer,
        short_answer=result.short_answer,
        enough=result.evaluation.enough,
        llm_calls=result.llm_calls,
        tokens=result.tokens,
        hops=len(result.hops),
        stop_reason=result.stop_reason,
        mode_used=result.mode,
        queries=[h.query for h in result.hops],
    )
