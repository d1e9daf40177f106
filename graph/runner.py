"""The API the CLI and the UI use: `Hopwise.ask` runs one question in a conversation thread.

Conversations live in a LangGraph checkpointer (SQLite in the data dir by default): the
thread's messages feed follow-up rewriting, and every answer's full result (trace included)
is saved as an `update` checkpoint so any past answer can be reopened.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graph.builder import compile_graph
from graph.context import EventCallback, GraphContext, TokenCallback
from graph.nodes import fell_back
from graph.protocols import Reasoner, Retriever, WebSearch
from graph.state import question_input
from graph.web import build_web_search
from hopwise.settings import Settings, load_settings


class Hopwise:
    """One knowledge base, one reasoner, one web search, many conversation threads."""

    def __init__(
        self,
        settings: Settings,
        retriever: Retriever,
        reasoner: Reasoner,
        web: WebSearch | None = None,
        checkpointer: Any = None,
        *,
        code: Reasoner | None = None,
    ) -> None:
        self.settings = settings
        self.retriever = retriever
        self.reasoner = reasoner
        self.web = web
        # settles steps without the model (Settings.llm_economy); built unless passed in
        self.code = code if code is not None else build_code_reasoner(settings, reasoner)
        self.checkpointer = checkpointer if checkpointer is not None else InMemorySaver()
        self.graph = compile_graph(self.checkpointer)
        self.threads = ThreadIndex.for_checkpointer(self.checkpointer)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Hopwise:
        """Production wiring: Milvus store, LLM (or offline) reasoner, ddgs, SQLite threads."""
        from ingest.store import MilvusStore

        settings = settings or load_settings()
        settings.ensure_data_dir()
        return cls(
            settings,
            MilvusStore.from_settings(settings),
            build_reasoner(settings),
            build_web_search(settings),
            open_checkpointer(settings.checkpoint_path),
        )

    def ask(
        self,
        question: str,
        *,
        groups: Sequence[str] = ("all",),
        thread_id: str | None = None,
        history: Sequence[dict[str, str]] | None = None,
        web: bool = True,
        on_event: EventCallback | None = None,
        on_token: TokenCallback | None = None,
    ) -> dict[str, Any]:
        """Answer one question; the returned dict is the `hopwise ask --json` object."""
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        thread_id = thread_id or uuid.uuid4().hex
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        if history is None:
            history = self.graph.get_state(config).values.get("messages", [])
        allowed = web and self.settings.web_search and self.web is not None
        ctx = GraphContext(
            retriever=self.retriever,
            reasoner=self.reasoner,
            settings=self.settings,
            web=self.web,
            code=self.code,
            groups=tuple(groups),
            on_event=on_event,
            on_token=on_token,
        )
        inputs = question_input(
            question, [dict(m) for m in history], self.settings.max_web_searches if allowed else 0
        )
        final = self.graph.invoke(inputs, config, context=ctx, durability="exit")
        result = build_result(final, self.reasoner.name, thread_id, ctx, list(groups))
        turns = [
            {"role": "user", "content": question},
            {"role": "assistant", "content": result["answer"]},
        ]
        self.graph.update_state(
            config, {"messages": turns, "result": result}, as_node=result["trace"][-1]["node"]
        )
        self.threads.touch(thread_id, question)
        return result

    def list_threads(self) -> list[dict[str, Any]]:
        """Newest first: thread_id, title (first question), updated_at, answers."""
        return self.threads.list()

    def thread_answers(self, thread_id: str) -> list[dict[str, Any]]:
        """Every saved result of a thread, oldest first."""
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        saved = self.checkpointer.list(config, filter={"source": "update"})
        results = [c.checkpoint["channel_values"].get("result") for c in saved]
        return [r for r in reversed(results) if r]

    def close(self) -> None:
        for thing in (self.retriever, getattr(self.checkpointer, "conn", None)):
            closer = getattr(thing, "close", None)
            if callable(closer):
                closer()


def open_checkpointer(path: Path) -> SqliteSaver:
    """SQLite conversations shared by Streamlit's threads (the saver serialises with a lock).

    WAL lets the CLI and the app use one file at once; synchronous=NORMAL skips an fsync per
    commit (a power cut may lose the last answer, never corrupt the file).
    """
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return SqliteSaver(conn)


def build_reasoner(settings: Settings) -> Reasoner:
    """The LLM reasoner with offline fallback when an endpoint is configured, else offline."""
    from graph.offline import OfflineReasoner

    if not settings.llm_enabled:
        return OfflineReasoner()
    from graph.llm import LLMReasoner

    return LLMReasoner(settings, fallback=OfflineReasoner())


def build_code_reasoner(settings: Settings, reasoner: Reasoner) -> Reasoner | None:
    """The offline reasoner settles code-decidable steps of a model-backed run (llm_economy)."""
    if not settings.llm_economy or reasoner.name == "offline":
        return None
    from graph.offline import OfflineReasoner

    return OfflineReasoner()


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
) -> dict[str, Any]:
    """The public result of one question (JSON-serialisable; a contract for CLI and UI)."""
    trace = state.get("trace", [])
    timings: dict[str, float] = {}
    for event in trace:
        timings[event["node"]] = round(timings.get(event["node"], 0.0) + event["duration_ms"], 2)
    hops = [
        {k: v for k, v in hop.items() if not k.startswith("_")} for hop in state.get("hops", [])
    ]
    return {
        "question": state["question"],
        "thread_id": thread_id,
        "answer": state.get("answer", ""),
        "mode": answer_mode(reasoner_name, trace),
        "reasoner": reasoner_name,
        "route": state.get("route", ""),
        "route_reason": state.get("route_reason", ""),
        "standalone_question": state.get("standalone_question", ""),
        "sub_questions": state.get("sub_questions", []),
        "hops": hops,
        "evidence": state.get("answer_evidence", []),
        "citations": state.get("citations", []),
        "evaluation": state.get("evaluation", {}),
        "web_used": state.get("web_used", False),
        "web_query": state.get("web_query", ""),
        "web_results": state.get("web_results", []),
        "web_error": state.get("web_error", ""),
        "stop_reason": state.get("stop_reason", ""),
        "llm_calls": sum(e["llm_calls"] for e in trace),
        "tokens": sum(e["tokens"] for e in trace),
        "timings_ms": timings,
        "total_ms": round(ctx.elapsed_ms(), 2),
        "trace": trace,
        "groups": groups,
        "created_at": time.time(),
    }


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
