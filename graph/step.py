"""A node's step: its model usage, its trace event, and the streamed answer text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from graph import text as tx
from graph.context import GraphContext
from graph.protocols import Usage
from graph.state import Event


class Step:
    """Times one node run and folds the Usage of its reasoner calls into one trace event."""

    def __init__(self, ctx: GraphContext, node: str) -> None:
        self.ctx, self.node = ctx, node
        self.started_ms = ctx.elapsed_ms()
        self.usages: list[Usage] = []

    def add(self, usage: Usage, *, by_code: bool = False) -> None:
        if by_code:  # the code reasoner settled it: no model involved
            usage = usage.model_copy(update={"mode": "code", "llm_calls": 0})
        self.usages.append(usage)

    @property
    def mode(self) -> str:
        modes = {u.mode for u in self.usages}
        for mode in ("fallback", "bypassed", "llm", "offline"):
            if mode in modes:
                return mode
        return "code"

    @property
    def decided_by(self) -> str:
        """model: the LLM decided; offline: offline reasoning (configured or standing in)."""
        offline = ("fallback", "bypassed", "offline")
        return "model" if self.mode == "llm" else "offline" if self.mode in offline else "code"

    def finish(self, **details: Any) -> Event:
        """Build the event, hand it to the on_event callback, and return it for the trace."""
        ended = self.ctx.elapsed_ms()
        errors = [u.error for u in self.usages if u.error]
        if errors:
            details["errors"] = errors
        event: Event = {
            "node": self.node,
            "started_ms": round(self.started_ms, 2),
            "ended_ms": round(ended, 2),
            "duration_ms": round(ended - self.started_ms, 2),
            "llm_calls": sum(u.llm_calls for u in self.usages),
            "tokens": sum(u.prompt_tokens + u.completion_tokens for u in self.usages),
            "mode": self.mode,
            "details": details,
        }
        self.ctx.emit_event(event)
        return event


def stream_answer(
    ctx: GraphContext, pieces: Iterable[str | Usage], step: Step, live: bool = True
) -> str:
    """Forward text pieces to on_token as they come (when `live`); the trailing Usage goes to
    the step."""
    parts: list[str] = []
    for piece in pieces:
        if isinstance(piece, Usage) and piece.details.get("retract"):
            parts.clear()  # the reasoner withdrew what it streamed (a runaway reply)
            if live:
                ctx.emit_token("\n\n")
        elif isinstance(piece, Usage):
            step.add(piece)
        else:
            parts.append(piece)
            if live:
                ctx.emit_token(piece)
    return "".join(parts)


def degraded_note(question: str) -> str:
    if tx.language_of(question) == "zh":
        return "（注意：语言模型有步骤失败，已由离线推理代替。）\n\n"
    return (
        "(Note: the language model failed for part of this answer; offline reasoning stood in.)\n\n"
    )


def bypass_note(question: str, failing: int) -> str:
    """Said once, on the first question answered while the model is bypassed."""
    if tx.language_of(question) == "zh":
        return (
            f"（注意：语言模型已连续 {failing} 个问题失败，现由离线推理直接回答，"
            "模型恢复后会自动重新启用。）\n\n"
        )
    return (
        f"(Note: the language model failed {failing} question{'s' * (failing != 1)} in a row, "
        "so offline reasoning answers at once until it works again; it is tried again from "
        "time to time.)\n\n"
    )


def fell_back(trace: Iterable[Mapping[str, Any]]) -> bool:
    return any(event.get("mode") == "fallback" for event in trace)


def bypassed(trace: Iterable[Mapping[str, Any]]) -> bool:
    """A step went offline because the model is bypassed (graph.llm_health), not by failing."""
    return any(event.get("mode") == "bypassed" for event in trace)
