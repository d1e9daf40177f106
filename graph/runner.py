"""Running the graph for a conversation: the result of one question, the thread index, the
SQLite checkpointer. The application's facade (hopwise.app.Hopwise) is built on these."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from graph.context import GraphContext
from graph.nodes import fell_back
from graph.result import QuestionResult, TraceEvent


def open_checkpointer(path: Path) -> SqliteSaver:
    """SQLite conversations shared by Streamlit's threads (the saver serialises with a lock).

    WAL lets the CLI and the app use one file at once; synchronous=NORMAL skips an fsync per
    commit (a power cut may lose the last answer, never corrupt the file).
    """
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return SqliteSaver(conn)


def answer_mode(reasoner_name: str, trace: Sequence[dict[str, Any]]) -> str:
    """offline: no model configured; degraded: offline stood in somewhere; llm otherwise."""
    if reasoner_name == "offline":
        return "offline"
    return "degraded" if fell_back(trace) else "llm"


def build_result(
    state: dict[str, Any],
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


class ThreadIndex:
    """A small table of threads (title, last update, answer count) beside the checkpoints."""

    def __init__(self, conn: sqlite3.Connection, lock: Any) -> None:
        self.conn, self.lock = conn, lock
        with self.lock:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS hopwise_threads (thread_id TEXT PRIMARY KEY, "
                "title TEXT, created_at REAL, updated_at REAL, answers INTEGER)"
            )
            self.conn.commit()

    @classmethod
    def for_checkpointer(cls, checkpointer: Any) -> ThreadIndex:
        """Share the SQLite saver's connection and lock; otherwise keep the index in memory."""
        if isinstance(checkpointer, SqliteSaver):
            return cls(checkpointer.conn, checkpointer.lock)
        return cls(sqlite3.connect(":memory:", check_same_thread=False), threading.Lock())

    def touch(self, thread_id: str, question: str) -> None:
        now = time.time()
        with self.lock:
            self.conn.execute(
                "INSERT INTO hopwise_threads VALUES (?, ?, ?, ?, 1) ON CONFLICT(thread_id) DO "
                "UPDATE SET updated_at = excluded.updated_at, answers = answers + 1",
                (thread_id, question[:200], now, now),
            )
            self.conn.commit()

    def list(self) -> list[dict[str, Any]]:
        with self.lock:
            rows = self.conn.execute(
                "SELECT thread_id, title, updated_at, answers FROM hopwise_threads "
                "ORDER BY updated_at DESC"
            ).fetchall()
        return [
            dict(zip(("thread_id", "title", "updated_at", "answers"), r, strict=True)) for r in rows
        ]
