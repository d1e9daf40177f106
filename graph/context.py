"""What every node needs but the state must not hold: the run's dependencies and callbacks.

Passed per run as LangGraph's `context` (context_schema); production builds it once per
question in hopwise.app, tests pass fakes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graph.config import GraphConfig
from graph.protocols import Reasoner, Retriever, WebSearch

DOMINANT_LANGUAGE_SHARE = 0.6
Similarity = Callable[[str, Sequence[str]], list[float]]
EventCallback = Callable[[Mapping[str, Any]], None]  # a trace event (graph.state.Event)
TokenCallback = Callable[[str], None]
# A whole run of one question (and its history) by offline reasoning alone, its final state:
# what a model's answer that fails the claim check is replaced by (hopwise.app provides it).
# Called with the question, its history and the run's start (the same deadline holds).
OfflineRun = Callable[[str, Sequence[Mapping[str, str]], float], Mapping[str, Any]]


@dataclass
class GraphContext:
    """Run-scoped dependencies: the reader's groups are here, never in persisted state."""

    retriever: Retriever
    reasoner: Reasoner
    config: GraphConfig
    web: WebSearch | None = None
    code: Reasoner | None = None  # settles steps without the model (config.llm_economy)
    offline: Reasoner | None = None  # writes the evidence-first answer a failed check falls to
    similarity: Similarity | None = None  # meaning by the built-in embedder, for the claim check
    offline_run: OfflineRun | None = None  # the whole question again, offline (a failed check)
    groups: tuple[str, ...] = ("all",)
    on_event: EventCallback | None = None
    on_token: TokenCallback | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def deadline(self) -> float:
        return self.started + self.config.question_deadline_s

    def deadline_passed(self) -> bool:
        return time.monotonic() >= self.deadline

    def seconds_left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000

    def reasoner_for(self, code_can_settle: bool) -> tuple[Reasoner, bool]:
        """The code reasoner when it may settle this step, else the main one; and which."""
        if code_can_settle and self.code is not None:
            return self.code, True
        return self.reasoner, False

    def phrase_counts(self, keys: Sequence[str]) -> Mapping[str, int]:
        """The knowledge base's phrase table, as this reader may see it ({} without one)."""
        lookup = getattr(self.retriever, "phrase_counts", None)
        if lookup is None or not keys:
            return {}
        try:
            counts: Mapping[str, int] = lookup(list(keys), list(self.groups))
            return counts
        except Exception:  # noqa: BLE001 - no phrase table only costs whole names
            return {}

    def documents_language(self) -> str | None:
        """The language most chunks this reader may see are in (at least 60 % of a sample),
        else None (mixed, empty, or a retriever that cannot tell)."""
        mix_of = getattr(self.retriever, "language_mix", None)
        if mix_of is None:
            return None
        try:
            mix = mix_of(list(self.groups))
        except Exception:  # noqa: BLE001 - not knowing only skips the translated query
            return None
        lang, share = max(mix.items(), key=lambda kv: kv[1], default=(None, 0.0))
        return lang if share >= DOMINANT_LANGUAGE_SHARE else None

    def emit_event(self, event: Mapping[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def emit_token(self, text: str) -> None:
        if self.on_token is not None and text:
            self.on_token(text)
