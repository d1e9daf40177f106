"""Running the graph for a conversation: the result of one question and stopping an answer.
Conversation storage lives in graph.conversations; the application's facade
(hopwise.app.Hopwise) is built on both."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from graph.context import GraphContext
from graph.result import QuestionResult, TraceEvent, short_answer_of
from graph.state import GraphState
from graph.step import bypassed, fell_back


def answer_mode(reasoner_name: str, trace: Sequence[Mapping[str, Any]]) -> str:
    """offline: no model configured; degraded: offline stood in somewhere (the model failed,
    or is bypassed after failing); llm otherwise."""
    if reasoner_name == "offline":
        return "offline"
    return "degraded" if fell_back(trace) or bypassed(trace) else "llm"


def build_result(
    state: GraphState,
    reasoner_name: str,
    thread_id: str,
    ctx: GraphContext,
    groups: list[str],
) -> QuestionResult:
    """The public result of one question (the contract of the CLI's JSON and the UI)."""
    trace = [TraceEvent.model_validate(e) for e in state.get("trace", [])]
    timings: dict[str, float] = {}
    for event in trace:
        timings[event.node] = round(timings.get(event.node, 0.0) + event.duration_ms, 2)
    hops = [
        {k: v for k, v in hop.items() if not k.startswith("_")} for hop in state.get("hops", [])
    ]
    return QuestionResult.model_validate(
        {
            "question": state["question"],
            "thread_id": thread_id,
            "answer": state.get("answer", ""),
            "short_answer": short_answer_of(state.get("answer", "")),
            "mode": answer_mode(reasoner_name, state.get("trace", [])),
            "reasoner": reasoner_name,
            "route": state.get("route", ""),
            "route_reason": state.get("route_reason", ""),
            "standalone_question": state.get("standalone_question", ""),
            "sub_questions": state.get("sub_questions", []),
            "hops": hops,
            "evidence": state.get("answer_evidence", []),
            "citations": state.get("citations", []),
            "evaluation": state.get("evaluation") or {},
            "web_used": state.get("web_used", False),
            "web_query": state.get("web_query", ""),
            "web_results": state.get("web_results", []),
            "web_error": state.get("web_error", ""),
            "stop_reason": state.get("stop_reason", ""),
            "llm_calls": sum(e.llm_calls for e in trace),
            "tokens": sum(e.tokens for e in trace),
            "timings_ms": timings,
            "total_ms": round(ctx.elapsed_ms(), 2),
            "trace": trace,
            "groups": groups,
            "created_at": time.time(),
        }
    )


class AnswerStopped(BaseException):
    """The asker stopped the answer (a BaseException, like asyncio.CancelledError, so that no
    node's or reasoner's `except Exception` fallback can swallow it)."""


class StopSignal(threading.Event):
    """A stop request that loses to the save: once `commit()` has run, `stop()` is refused, so
    an asker told "stopped" is never shown an answer that was saved after all."""

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()
        self._committed = False

    def stop(self) -> bool:
        """Ask the answer to stop; False when it is already being saved."""
        with self._guard:
            if not self._committed:
                self.set()
            return self.is_set()

    def commit(self) -> bool:
        """Called just before saving: False when stopped; else no stop is accepted from now."""
        with self._guard:
            self._committed = not self.is_set()
            return self._committed
