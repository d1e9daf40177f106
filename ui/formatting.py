"""Pure helpers that turn a Hopwise result dict (the `hopwise ask --json` object) into what the
pages display: badges, source cards, hit tables, the state-machine drawing and the timeline.

No Streamlit here, so every function is unit-testable with a plain dict.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from graph.builder import EDGES, NODE_NAMES, taken_edges

START, END = "__start__", "__end__"

NODES = NODE_NAMES
# Condition labels drawn on the designed edges (graph.builder.EDGES lists them all).
EDGE_LABELS: dict[tuple[str, str], str] = {
    ("route_question", "answer_directly"): "simple",
    ("route_question", "decompose_question"): "complex",
    ("plan_next_step", "retrieve_hop"): "retrieve",
    ("plan_next_step", "evaluate_evidence"): "evaluate",
    ("evaluate_evidence", "generate_answer"): "enough / web used",
    ("evaluate_evidence", "search_web"): "gaps",
}
STATUS_TEXT = {
    "route_question": "Routing the question…",
    "answer_directly": "Answering directly…",
    "decompose_question": "Decomposing into sub-questions…",
    "retrieve_hop": "Searching the knowledge base…",
    "plan_next_step": "Planning the next step…",
    "evaluate_evidence": "Checking whether the evidence is enough…",
    "search_web": "Searching the web…",
    "generate_answer": "Writing the answer…",
}
MODE_TEXT = {"llm": "LLM", "offline": "offline", "degraded": "degraded"}
MODE_COLOR = {"llm": "green", "offline": "gray", "degraded": "orange"}


def first(mapping: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """The value of the first key present and not None (result dicts name a few things twice)."""
    for key in keys:
        value = mapping.get(key)
        if value is not None:
            return value
    return default


# ---------------------------------------------------------------- chat


def badges(result: Mapping[str, Any]) -> str:
    """One markdown line of colored badges: route, hops, web, mode, time, LLM calls."""
    mode = str(result.get("mode") or "offline")
    hops = len(result.get("hops") or [])
    total_ms = total_time_ms(result)
    parts = [
        f":violet-badge[route: {result.get('route') or '?'}]",
        f":blue-badge[hops: {hops}]",
        f":{'orange' if result.get('web_used') else 'gray'}-badge[web: "
        f"{'used' if result.get('web_used') else 'not used'}]",
        f":{MODE_COLOR.get(mode, 'gray')}-badge[mode: {MODE_TEXT.get(mode, mode)}]",
        f":gray-badge[{duration_text(total_ms)}]",
        f":gray-badge[LLM calls: {int(result.get('llm_calls') or 0)}]",
    ]
    return " ".join(parts)


def duration_text(ms: float) -> str:
    """'850 ms' under a second, '2.4 s' above."""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def total_time_ms(result: Mapping[str, Any]) -> float:
    """Whole-question time: an explicit total if the runner gave one, else the sum of nodes."""
    explicit = first(result, "total_ms", "elapsed_ms")
    if explicit is not None:
        return float(explicit)
    return sum(float(event["ms"]) for event in trace_events(result))


def location(item: Mapping[str, Any]) -> str:
    """'file · section · p. 3' for a chunk, the URL's title for a web source."""
    parts = [str(first(item, "source", "doc", "title", "url", default=""))]
    section = first(item, "section", "section_path", default="")
    if section:
        parts.append(str(section))
    page = item.get("page")
    if page not in (None, ""):
        parts.append(f"p. {page}")
    return " · ".join(part for part in parts if part)


def source_cards(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One card per citation: number, where it is, the quoted passage, link, and full chunk."""
    evidence = {
        str(first(item, "chunk_id", "url", default="")): item
        for item in result.get("evidence") or []
    }
    cards = []
    for citation in result.get("citations") or []:
        key = str(first(citation, "chunk_id", "url", default=""))
        chunk = evidence.get(key, {})
        quote = first(citation, "quote", "quoted", "text", "snippet", default="")
        cards.append(
            {
                "n": citation.get("n"),
                "where": location({**chunk, **citation}),
                "quote": str(quote),
                "url": citation.get("url"),
                "chunk_id": citation.get("chunk_id"),
                "full_text": str(first(chunk, "text", default="") or quote),
            }
        )
    return cards


class StatusNarrator:
    """Turns the runner's end-of-node events into "what is happening now" for the chat status.

    Events arrive when a node finishes, so the label names the step the graph goes to next.
    """

    def __init__(self, web_allowed: bool = True) -> None:
        self.web_allowed = web_allowed
        self.planned = 0  # sub-questions known so far
        self.hops_done = 0
        self.web_done = False

    def hop_label(self) -> str:
        number = self.hops_done + 1
        return f"Hop {number} of {max(self.planned, number)}: searching the knowledge base…"

    def after(self, event: Mapping[str, Any]) -> str | None:
        """The label for the step after `event`, or None when the event changes nothing."""
        node = str(event.get("node", ""))
        details = event.get("details") or {}
        if node == "route_question":
            simple = details.get("route") == "simple"
            return STATUS_TEXT["answer_directly" if simple else "decompose_question"]
        if node == "decompose_question":
            self.planned = len(details.get("sub_questions") or []) or 1
            return self.hop_label()
        if node == "retrieve_hop":
            self.hops_done += len(details.get("hops") or []) or 1
            return STATUS_TEXT["plan_next_step"]
        if node == "plan_next_step":
            if details.get("action") == "retrieve":
                return self.hop_label()
            return STATUS_TEXT["evaluate_evidence"]
        if node == "evaluate_evidence":
            if details.get("enough") or self.web_done or not self.web_allowed:
                return STATUS_TEXT["generate_answer"]
            return STATUS_TEXT["search_web"]
        if node == "search_web":
            self.web_done = True
            return STATUS_TEXT["evaluate_evidence"]
        return None


def thread_label(thread: Mapping[str, Any]) -> str:
    """Sidebar label of a past chat: its first question, shortened."""
    title = str(first(thread, "title", "first_question", "question", default="")).strip()
    title = title or str(thread.get("thread_id", "chat"))
    return title if len(title) <= 48 else title[:47] + "…"


def offline_note() -> str:
    """Shown when no LLM is configured: what the answers are and how to get a model."""
    return (
        "No language model is configured, so answers are **extracted from your documents** "
        "(offline reasoning) rather than written by a model. To use one, set "
        "`HOPWISE_LLM_BASE_URL` (any OpenAI-compatible endpoint, e.g. "
        "`http://localhost:11434/v1`), `HOPWISE_LLM_MODEL` and, if needed, "
        "`HOPWISE_LLM_API_KEY`, then restart the app."
    )


# ---------------------------------------------------------------- trace


def trace_events(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The node-by-node trace as [{node, ms, llm_calls, tokens, ...}] in execution order."""
    raw = first(result, "trace", "events", default=None)
    events: list[dict[str, Any]] = []
    if raw:
        for event in raw:
            if not isinstance(event, Mapping):
                continue
            node = str(first(event, "node", "name", default="?"))
            tokens = first(event, "tokens", default=0)
            if isinstance(tokens, Mapping):
                tokens = sum(int(v or 0) for v in tokens.values())
            events.append(
                {
                    **event,
                    "node": node,
                    "ms": float(first(event, "duration_ms", "ms", default=0.0)),
                    "llm_calls": int(first(event, "llm_calls", default=0) or 0),
                    "tokens": int(tokens or 0),
                }
            )
        return events
    timings = result.get("timings_ms") or {}
    return [
        {"node": node, "ms": float(ms or 0), "llm_calls": 0, "tokens": 0}
        for node, ms in timings.items()
    ]


def _dot_id(node: str) -> str:
    return json.dumps(node)


def state_machine_dot(events: Sequence[Mapping[str, Any]]) -> str:
    """Graphviz DOT of the state machine with the taken path highlighted, nodes with durations."""
    edge_count = Counter(taken_edges(events))
    ms: dict[str, float] = {}
    runs: Counter[str] = Counter()
    for event in events:
        ms[event["node"]] = ms.get(event["node"], 0.0) + float(event["ms"])
        runs[event["node"]] += 1
    lines = [
        "digraph hopwise {",
        '  rankdir=TB; bgcolor="transparent";',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
        'fillcolor="#f4f4f5", color="#a1a1aa", fontcolor="#52525b"];',
        '  edge [color="#c4c4c8", fontname="Helvetica", fontsize=9, fontcolor="#71717a"];',
        f'  {_dot_id(START)} [label="START", shape=circle, fixedsize=true, width=0.6, '
        'fillcolor="#2b6cb0", fontcolor="white", color="#2b6cb0"];',
        f'  {_dot_id(END)} [label="END", shape=doublecircle, fixedsize=true, width=0.5, '
        'fillcolor="#2b6cb0", fontcolor="white", color="#2b6cb0"];',
    ]
    for node in NODES:
        if runs[node]:
            times = f" ×{runs[node]}" if runs[node] > 1 else ""
            label = f"{node}\\n{ms[node]:.0f} ms{times}"
            style = 'fillcolor="#dbeafe", color="#2b6cb0", fontcolor="#1e3a8a", penwidth=2'
        else:
            label, style = node, ""
        lines.append(f'  {_dot_id(node)} [label="{label}"{", " + style if style else ""}];')
    undesigned = [edge for edge in edge_count if edge not in EDGES]  # drawn anyway, dashed
    for src, dst in [*EDGES, *undesigned]:
        label = EDGE_LABELS.get((src, dst), "")
        count = edge_count.get((src, dst), 0)
        attrs = (
            [f'label="{label}{f" ×{count}" if count > 1 else ""}"'] if label or count > 1 else []
        )
        if count:
            attrs += ['color="#2b6cb0"', "penwidth=2.5", 'fontcolor="#1e3a8a"']
        if (src, dst) not in EDGES:
            attrs.append("style=dashed")
        lines.append(f"  {_dot_id(src)} -> {_dot_id(dst)} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines)


def timeline_rows(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per node run with start/end offsets (ms) for a Gantt-style chart."""
    rows, clock = [], 0.0
    for i, event in enumerate(events, start=1):
        start = float(first(event, "started_ms", default=clock))
        end = start + float(event["ms"])
        rows.append(
            {
                "step": f"{i:02d} {event['node']}",
                "node": event["node"],
                "start_ms": start,
                "end_ms": end,
                "ms": float(event["ms"]),
                "llm_calls": int(event["llm_calls"]),
                "tokens": int(event["tokens"]),
            }
        )
        clock = end
    return rows


def step_rows(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per node run: who decided (model / code / offline), cost, and why it fell back if it did."""
    rows = []
    for i, event in enumerate(events, start=1):
        details = event.get("details") or {}
        note = "; ".join(str(e) for e in details.get("errors") or [])
        if not note:
            note = str(first(details, "reason", "action", "error", default=""))
        rows.append(
            {
                "step": i,
                "node": event["node"],
                "mode": first(event, "mode", default=""),
                "decided by": details.get("decided_by", ""),
                "ms": round(float(event["ms"]), 1),
                "LLM calls": int(event["llm_calls"]),
                "tokens": int(event["tokens"]),
                "note": note,
            }
        )
    return rows


def _score(value: Any) -> float | None:
    return None if value is None else round(float(value), 4)


def hit_rows(hop: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The hits table of one hop: doc, section, page, BM25 / dense / fused, new or duplicate."""
    rows = []
    for hit in hop.get("hits") or []:
        is_new = first(hit, "new", "is_new")
        rows.append(
            {
                "doc": first(hit, "doc", "title", "source", "doc_id", default=""),
                "source": hit.get("source", ""),
                "section": first(hit, "section", "section_path", default=""),
                "page": hit.get("page"),
                "bm25": _score(first(hit, "bm25", "bm25_score")),
                "dense": _score(first(hit, "dense", "dense_score")),
                "fused": _score(first(hit, "fused", "score", "fused_score")),
                "status": "new" if is_new else ("duplicate" if is_new is not None else ""),
                "chunk_id": hit.get("chunk_id", ""),
            }
        )
    return rows


def hop_evidence(hop: Mapping[str, Any]) -> list[str]:
    """The evidence sentences a hop kept, as display strings."""
    kept = first(hop, "evidence", "kept", "sentences", default=[]) or []
    out = []
    for item in kept:
        if isinstance(item, Mapping):
            text = first(item, "text", "sentence", default="")
            chunk = item.get("chunk_id")
            out.append(f"{text}  \n`{chunk}`" if chunk else str(text))
        else:
            out.append(str(item))
    return out


def trace_json(result: Mapping[str, Any]) -> str:
    """The whole result as pretty JSON for download (non-JSON values stringified)."""
    return json.dumps(result, ensure_ascii=False, indent=2, default=str)
