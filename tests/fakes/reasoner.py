"""A scripted Reasoner: deterministic replies per step, counted calls, chosen steps failing.

`fail` names steps whose Usage says offline reasoning stood in (mode "fallback"), as the
LLM reasoner reports when the endpoint fails mid-run.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence

from graph.protocols import EvidenceItem, HopView, Usage
from graph.schemas import (
    Decomposition,
    EvidenceSentence,
    EvidenceVerdict,
    PlanDecision,
    RouteDecision,
    SubQuestion,
)
from ingest.models import Hit

GREETING = re.compile(r"^\s*(hi|hello|hey|thanks|你好)\b", re.I)


class ScriptedReasoner:
    def __init__(
        self,
        *,
        name: str = "llm",
        rewrites: dict[str, str] | None = None,
        decompositions: dict[str, list[tuple[str, int | None]]] | None = None,
        bridges: dict[str, str] | None = None,
        plans: Sequence[PlanDecision] = (),
        verdicts: Sequence[EvidenceVerdict] = (),
        answer: Callable[[str, Sequence[EvidenceItem]], str] | None = None,
        fail: Sequence[str] = (),
        free_steps: Sequence[str] = ("extract",),
        delay_s: float = 0.0,
    ) -> None:
        self.name = name
        self.rewrites = rewrites or {}
        self.decompositions = decompositions or {}
        self.bridges = bridges or {}
        self.plans, self.verdicts = list(plans), list(verdicts)
        self.answer_fn = answer or default_answer
        self.fail, self.free_steps, self.delay_s = set(fail), set(free_steps), delay_s
        self.calls: list[str] = []
        self.seen: dict[str, list[object]] = {}

    def _usage(self, step: str, *args: object) -> Usage:
        self.calls.append(step)
        self.seen.setdefault(step, []).append(args)
        if self.delay_s:
            time.sleep(self.delay_s)
        if step in self.fail:
            return Usage(mode="fallback", error="stub endpoint failed")
        mode = "offline" if self.name == "offline" else "llm"
        if step in self.free_steps or mode == "offline":
            return Usage(mode=mode)
        return Usage(llm_calls=1, prompt_tokens=20, completion_tokens=5, mode=mode)

    def route(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> tuple[RouteDecision, Usage]:
        usage = self._usage("route", question, list(history))
        standalone = self.rewrites.get(question, question) if history else question
        route = "simple" if GREETING.match(question) else "complex"
        return RouteDecision(standalone_question=standalone, route=route, reason="scripted"), usage

    def decompose(
        self, question: str, phrases: object = None, documents_language: str | None = None
    ) -> tuple[Decomposition, Usage]:
        usage = self._usage("decompose", question)
        parts = self.decompositions.get(question, [(question, None)])
        subs = [SubQuestion(id=i, question=q, depends_on=d) for i, (q, d) in enumerate(parts, 1)]
        return Decomposition(sub_questions=subs), usage

    def bridge(
        self, sub_question: str, earlier: Sequence[HopView], evidence: Sequence[EvidenceItem]
    ) -> tuple[str, Usage]:
        usage = self._usage("bridge", sub_question, list(earlier), list(evidence))
        if sub_question in self.bridges:
            return self.bridges[sub_question], usage
        entity = evidence[0].title if evidence else ""
        return re.sub(r"#\d+", entity, sub_question), usage

    def extract(
        self, sub_question: str, hits: Sequence[Hit]
    ) -> tuple[list[EvidenceSentence], Usage]:
        usage = self._usage("extract", sub_question, list(hits))
        out = [
            EvidenceSentence(chunk_id=h.chunk_id, text=re.split(r"(?<=[.。])\s*", h.text)[0])
            for h in hits
        ]
        return out, usage

    def plan(
        self,
        question: str,
        remaining: Sequence[str],
        hops: Sequence[HopView],
        evidence: Sequence[EvidenceItem],
    ) -> tuple[PlanDecision, Usage]:
        usage = self._usage("plan", question, list(remaining))
        if self.plans:
            return self.plans.pop(0), usage
        return PlanDecision(action="retrieve", reason="scripted: keep going"), usage

    def evaluate(
        self, question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView] = ()
    ) -> tuple[EvidenceVerdict, Usage]:
        usage = self._usage("evaluate", question, list(evidence))
        if self.verdicts:
            return self.verdicts.pop(0), usage
        return EvidenceVerdict(enough=True), usage

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str | Usage]:
        usage = self._usage("answer", question, list(evidence), list(missing))
        yield from re.findall(r"\S+\s*", self.answer_fn(question, evidence))
        yield usage

    def answer_directly(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> Iterator[str | Usage]:
        usage = self._usage("answer_directly", question)
        yield "Hello! "
        yield "Ask me about your documents."
        yield usage


def default_answer(question: str, evidence: Sequence[EvidenceItem]) -> str:
    """Cites every evidence item by its first sentence."""
    if not evidence:
        return "I could not find this in the documents."
    return " ".join(f"{(e.sentences or [e.text])[0]} [{e.n}]" for e in evidence)
