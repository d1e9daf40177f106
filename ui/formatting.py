"""Pure helpers that turn a QuestionResult (graph.result) into what the pages display: badges,
source cards, hit tables, the state-machine drawing and the timeline.

No Streamlit here, so every function is unit-testable with a constructed result.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from graph.conversations import chat_title
from graph.result import HitRecord, HopRecord, QuestionResult, TraceEvent, WebResultRecord
from graph.text import PLACEHOLDER_RE
from ui import safe
from ui.quotes import answer_quotes

START, END = "__start__", "__end__"

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
    "plan_next_step": "Deciding what to look up next…",
    "evaluate_evidence": "Checking whether the evidence is enough…",
    "search_web": "Searching the web…",
    "generate_answer": "Writing the answer…",
    "check_claims": "Checking every claim against its sources…",
}
STOP_TEXT: dict[str, str] = {  # graph.state.StopReason in words (the raw value is in the JSON)
    "simple": "answered directly (no search needed)",
    "enough": "the evidence was enough",
    "sub_questions_exhausted": "every sub-question was searched",
    "plan_evaluate": "the plan said the evidence could be judged",
    "web_used": "the web search ran (once, the limit)",
    "deadline": "the time budget ran out",
    "hop_cap": "the hop limit was reached",
    "repeated_query": "the next search would have repeated one already made",
    "no_new_evidence": "the last search found nothing new",
}
MODE_TEXT = {"llm": "LLM", "offline": "offline", "degraded": "degraded"}
MODE_COLOR = {"llm": "green", "offline": "gray", "degraded": "orange"}


# ---------------------------------------------------------------- chat


def badges(result: QuestionResult) -> str:
    """One markdown line of colored badges: route, hops, web, mode, time, LLM calls."""
    mode = result.mode
    web = "used" if result.web_used else "unavailable" if result.web_error else "not used"
    parts = [
        f":violet-badge[route: {safe.escape_inline(result.route or '?')}]",
        f":blue-badge[hops: {len(result.hops)}]",
        f":{'orange' if result.web_used or result.web_error else 'gray'}-badge[web: {web}]",
        f":{MODE_COLOR.get(mode, 'gray')}-badge[mode: {MODE_TEXT.get(mode, mode)}]",
        f":gray-badge[{duration_text(result.total_ms)}]",
        f":gray-badge[LLM calls: {result.llm_calls}]",
    ]
    return " ".join(parts)


def answer_rows(result: QuestionResult) -> list[safe.QuotedRow]:
    """The table rows the answer quotes, for the page to draw as small tables."""
    from graph.offline.units import quoted_rows  # here: graph.offline loads the whole reader

    return [
        safe.QuotedRow(
            shown=unit.shown(),
            key=unit.key,
            header=tuple(h for h, _ in unit.cells),
            cells=tuple(v for _, v in unit.cells),
        )
        for unit in quoted_rows(result.answer, result.evidence)
    ]


def stop_text(reason: str) -> str:
    """A stop reason for people: 'the evidence was enough (enough)'; '—' when there is none."""
    if not reason:
        return "—"
    words = STOP_TEXT.get(reason)
    return f"{words} ({reason})" if words else reason


def duration_text(ms: float) -> str:
    """'850 ms' under a second, '2.4 s' above."""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def location(source: str, section: str = "", page: int | None = None) -> str:
    """'file · section · p. 3'."""
    parts = [source, section, f"p. {page}" if page is not None else ""]
    return " · ".join(part for part in parts if part)


def source_cards(result: QuestionResult) -> list[dict[str, Any]]:
    """One card per citation: number, where it is, the quoted passage and what the answer quotes
    of it, link, and full chunk."""
    evidence = {item.chunk_id or item.url or "": item for item in result.evidence}
    doc_ids = {hit.chunk_id: hit.doc_id for hop in result.hops for hit in hop.hits}
    quoted = answer_quotes(result.answer)  # what each [n] of the answer is attached to
    cards = []
    for citation in result.citations:
        item = evidence.get(citation.chunk_id or citation.url or "")
        where = location(citation.source or citation.title or citation.url or "",
                         citation.section, citation.page)  # fmt: skip
        cards.append(
            {
                "n": citation.n,
                "where": where,
                "quote": citation.quote,
                "cited": quoted.get(citation.n, []),
                "url": citation.url,
                "chunk_id": citation.chunk_id,
                "full_text": item.text if item is not None and item.text else citation.quote,
                # where the viewer opens it (ui.viewer): the document, its section and page
                "doc_id": doc_ids.get(citation.chunk_id or "", ""),
                "section": citation.section,
                "page": citation.page,
                "answer": f"{result.thread_id}:{result.created_at}",
            }
        )
    return cards


STATUS_CLIP = 90  # characters of a sub-question shown in the status line


def _status_question(text: str) -> str:
    """A sub-question for the status line: `#k` placeholders read as "…", clipped, escaped."""
    text = PLACEHOLDER_RE.sub("…", " ".join(str(text).split()))
    return safe.escape_inline(text if len(text) <= STATUS_CLIP else text[: STATUS_CLIP - 1] + "…")


class StatusNarrator:
    """Turns the runner's end-of-node events into "what is happening now" for the chat status.

    Events arrive when a node finishes, so the label names the step the graph goes to next: the
    sub-question about to be searched, in words ("Searching: “Who leads …?”"), never a count
    that grows as follow-ups are planned. Labels are Markdown: question text is escaped.
    """

    def __init__(self, web_allowed: bool = True) -> None:
        self.web_allowed = web_allowed
        self.planned: dict[int, str] = {}  # the decomposition's sub-questions by id, in order
        self.searched: set[int] = set()  # ids of the sub-questions the finished hops searched
        self.web_done = False

    def search_label(self) -> str:
        pending = [text for sid, text in self.planned.items() if sid not in self.searched]
        if pending:
            part = len(self.planned) - len(pending) + 1
            where = f" (part {part} of {len(self.planned)})" if len(self.planned) > 1 else ""
            return f"Searching the documents{where}: “{_status_question(pending[0])}”…"
        return "Searching the documents again, for what is still missing…"

    def after(self, event: TraceEvent) -> str | None:
        """The label for the step after `event`, or None when the event changes nothing."""
        node, details = event.node, event.details
        if node == "route_question":
            simple = details.get("route") == "simple"
            return STATUS_TEXT["answer_directly" if simple else "decompose_question"]
        if node == "decompose_question":
            subs = [s for s in details.get("sub_questions") or [] if isinstance(s, Mapping)]
            self.planned = {
                int(s.get("id") or i): str(s.get("question", "")) for i, s in enumerate(subs, 1)
            }
            return self.search_label()
        if node == "retrieve_hop":
            for hop in details.get("hops") or []:
                if isinstance(hop, Mapping) and hop.get("sub_question_id") is not None:
                    self.searched.add(int(hop["sub_question_id"]))
            return STATUS_TEXT["plan_next_step"]
        if node == "plan_next_step":
            if details.get("action") == "retrieve":
                return self.search_label()
            return STATUS_TEXT["evaluate_evidence"]
        if node == "evaluate_evidence":
            if details.get("enough") or self.web_done or not self.web_allowed:
                return STATUS_TEXT["generate_answer"]
            return STATUS_TEXT["search_web"]
        if node == "search_web":
            self.web_done = True
            return STATUS_TEXT["evaluate_evidence"]
        if node in ("generate_answer", "answer_directly"):  # both are checked
            return STATUS_TEXT["check_claims"]
        return None


def thread_title(thread: Mapping[str, Any]) -> str:
    """A past chat (a ThreadIndex row) as plain text: its title, shortened as titles are."""
    title = str(thread.get("title") or "").strip() or str(thread.get("thread_id") or "chat")
    return chat_title(title)


def thread_label(thread: Mapping[str, Any]) -> str:
    """The same title as a Markdown label (buttons render Markdown): escaped, shown literally."""
    return safe.escape_inline(thread_title(thread))


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


def _dot_id(node: str) -> str:
    return json.dumps(node)


def state_machine_dot(events: Sequence[TraceEvent]) -> str:
    """Graphviz DOT of the state machine with the taken path highlighted, nodes with durations."""
    from graph.builder import EDGES, NODE_NAMES, taken_edges  # the trace page only: langgraph

    edge_count = Counter(taken_edges(events))
    ms: dict[str, float] = {}
    runs: Counter[str] = Counter()
    for event in events:
        ms[event.node] = ms.get(event.node, 0.0) + event.duration_ms
        runs[event.node] += 1
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
    for node in NODE_NAMES:
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


def timeline_rows(events: Sequence[TraceEvent]) -> list[dict[str, Any]]:
    """One row per node run with start/end offsets (ms, the question's one clock)."""
    return [
        {
            "step": f"{i:02d} {e.node}",
            "node": e.node,
            "start_ms": e.started_ms,
            "end_ms": e.started_ms + e.duration_ms,
            "ms": e.duration_ms,
            "llm_calls": e.llm_calls,
            "tokens": e.tokens,
        }
        for i, e in enumerate(events, start=1)
    ]


def step_rows(events: Sequence[TraceEvent]) -> list[dict[str, Any]]:
    """Per node run: who decided (model / code / offline), cost, and why it fell back if it did."""
    rows = []
    for i, event in enumerate(events, start=1):
        details = event.details
        note = "; ".join(str(e) for e in details.get("errors") or [])
        if not note:
            note = str(details.get("reason") or details.get("action") or details.get("error") or "")
        rows.append(
            {
                "step": i,
                "node": event.node,
                "mode": event.mode,
                "decided by": details.get("decided_by", ""),
                "ms": round(event.duration_ms, 1),
                "LLM calls": event.llm_calls,
                "tokens": event.tokens,
                "note": note,
            }
        )
    return rows


def _score(value: object) -> float | None:
    return None if not isinstance(value, (int, float)) else round(float(value), 4)


def bridge_rows(hop: HopRecord) -> tuple[str, list[dict[str, Any]]]:
    """Why the bridge entity won: (winner, one row per candidate with its score from the
    previous hop's passages and, where its own search ran, how well that search confirmed
    it). Dataframe cells are text, never Markdown."""
    details = hop.bridge or {}
    confirmed = {str(b.get("entity")): b.get("confirmed") for b in details.get("beam", [])}
    rows = [
        {
            "candidate": str(c.get("entity", "")),
            "score": _score_text(c.get("score")),
            "found in hits": ", ".join(str(r) for r in c.get("hit_ranks", [])),
            "hit title": "yes" if c.get("title") else "",
            "next to relation word": _score_text(c.get("near")),
            "search confirmed": _score_text(confirmed.get(str(c.get("entity")))),
        }
        for c in details.get("candidates", [])
    ]
    return str(details.get("chosen_entity") or ""), rows


def hit_where(hit: HitRecord) -> str:
    """Where a hit is, for people: 'file · section · p. 3' (never a chunk id or "None")."""
    return location(hit.source or hit.doc or hit.doc_id, hit.section, hit.page)


def cited_chunks(result: QuestionResult) -> dict[str, int]:
    """chunk id → the answer's citation number of it: which passages the answer rests on."""
    return {c.chunk_id: c.n for c in result.citations if c.chunk_id}


def hit_rows(
    hop: HopRecord, notes: Mapping[str, str] | None = None, cited: Mapping[str, int] | None = None
) -> list[dict[str, Any]]:
    """The hits table of one hop, narrow enough for 1400 px and a phone: rank, the answer's
    citation of the hit when it cites it (`cited`: chunk id → n), where it is (file · page), the
    fused score, new or duplicate, then BM25, dense, the section, and a note per document from
    `notes` (doc id → e.g. "hidden text removed (3)"). Where the scores were withheld from the
    reader (QuestionResult.without_scores), the score columns are left out rather than shown
    empty; a missing score is an empty cell, never "None"."""
    rows = []
    for hit in hop.hits:
        row: dict[str, Any] = {"rank": hit.rank}
        if cited is not None:
            row["cited"] = f"[{cited[hit.chunk_id]}]" if hit.chunk_id in cited else ""
        row["where"] = location(hit.source or hit.doc or hit.doc_id, "", hit.page)
        scored = hit.fused is not None
        if scored:
            row["fused"] = _score_text(hit.fused)
        row["status"] = "new" if hit.new else "duplicate"
        if scored:
            row |= {"bm25": _score_text(hit.bm25), "dense": _score_text(hit.dense)}
        row["section"] = hit.section
        if notes:
            row["note"] = notes.get(hit.doc_id, "")
        rows.append(row)
    return rows


def _score_text(value: object) -> str:
    score = _score(value)
    return "" if score is None else f"{score:.4g}"


def hop_evidence(hop: HopRecord) -> list[str]:
    """The evidence sentences a hop kept, as Markdown that shows them literally, each with
    where it is (file · section · page) instead of a chunk id."""
    where = {hit.chunk_id: hit_where(hit) for hit in hop.hits}
    lines = []
    for kept in hop.evidence:
        place = where.get(kept.chunk_id, "")
        suffix = f"  \n_{safe.escape_inline(place)}_" if place else ""
        lines.append(f"{safe.escape_inline(kept.text)}{suffix}")
    return lines


def web_result_line(item: WebResultRecord) -> str:
    """A web result as one Markdown line: title and snippet as text, one link we rebuilt from
    the parsed http(s) URL and labelled with its domain (or the URL as text when it is not one)."""
    web = safe.web_link(item.url)
    where = safe.link_markdown(web) if web is not None else safe.escape_inline(item.url)
    title = safe.escape_inline(item.title or item.url)
    snippet = f" — {safe.escape_inline(item.snippet)}" if item.snippet else ""
    return f"{title} ({where}){snippet}"


def trace_json(result: QuestionResult) -> str:
    """The whole result as pretty JSON for download."""
    return json.dumps(result.to_json(), ensure_ascii=False, indent=2)


WEB_ON_HELP = (
    "When the documents fall short, the question is sent once to a public web search engine."
)


def web_off_reason(setting: bool | None) -> str:
    """Why the chat's web toggle is off, and who can change it."""
    if setting is False:
        return "Web search is turned off for this deployment (HOPWISE_WEB_SEARCH=off)."
    return (
        "Web search is off: it would send your question to a public search engine. An admin "
        "can allow it on the Admin page (or set HOPWISE_WEB_SEARCH=on)."
    )


def trace_file_name(thread_id: str, index: int) -> str:
    return f"hopwise-trace-{re.sub(r'[^A-Za-z0-9_-]', '-', thread_id)}-{index + 1}.json"


_THREAD_ID = re.compile(r"[A-Za-z0-9:_-]{1,128}")
_ANSWER_NUMBER = re.compile(r"[1-9][0-9]{0,5}")  # ASCII digits only: '²'.isdigit() is True


def link_thread(value: object) -> str | None:
    """A `?thread=` value as a thread id, or None when it cannot be one."""
    return value if isinstance(value, str) and _THREAD_ID.fullmatch(value) else None


def answer_number(value: object) -> int | None:
    """A `?answer=` value (1-based) as a number, or None when it is not a plain one."""
    if isinstance(value, str) and _ANSWER_NUMBER.fullmatch(value):
        return int(value)
    return None


def _quoted(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return f"“{safe.escape_inline(text if len(text) <= limit else text[: limit - 1] + '…')}”"


def _names(sources: Sequence[str]) -> str:
    """'a.md', 'a.md and b.md', 'a.md, b.md and 2 more' (escaped)."""
    unique = [safe.escape_inline(s) for s in dict.fromkeys(s for s in sources if s)]
    if len(unique) > 3:
        return f"{', '.join(unique[:2])} and {len(unique) - 2} more"
    return " and ".join(unique) if len(unique) < 3 else f"{unique[0]}, {unique[1]} and {unique[2]}"


def _in_words(sub_question: str, entity: str) -> str:
    """'#1' is engineers' shorthand: the entity it stood for, or which step found it."""

    def said(m: re.Match[str]) -> str:
        return entity or f"what step {m.group(1)} found"

    return PLACEHOLDER_RE.sub(said, sub_question)


def plain_summary(result: QuestionResult) -> str:
    """How the answer was found, in one paragraph for people who do not read the tables below:
    what was searched for at each step, where it was found, whether that was judged enough,
    the web, and what the answer rests on. Every quoted piece is escaped (untrusted)."""
    if result.route != "complex" and not result.hops:
        return "Answered directly: this question did not need the documents."
    said: list[str] = []
    cited = cited_chunks(result)
    parts = len(result.sub_questions)
    if parts > 1:
        said.append(f"The question was split into {parts} parts, searched in order.")
    for number, hop in enumerate(result.hops, start=1):
        step = "First" if number == 1 else "Then"
        bridge = str((hop.bridge or {}).get("chosen_entity") or "")
        using = (
            f", using {_quoted(bridge, 40)} from the step before" if hop.bridged and bridge else ""
        )
        by_chunk = {hit.chunk_id: hit for hit in hop.hits}
        kept = [by_chunk[k.chunk_id].source for k in hop.evidence if k.chunk_id in by_chunk]
        if kept:
            found = f"found it in {_names(kept)}"
        elif hop.hits:
            found = f"the closest passages were in {_names([h.source for h in hop.hits[:2]])}"
        else:
            found = "found nothing"
        asked = _in_words(hop.sub_question, bridge if hop.bridged else "")
        marks = sorted({cited[h.chunk_id] for h in hop.hits if h.chunk_id in cited})
        if marks:
            use = f"; the answer cites {' and '.join(f'[{n}]' for n in marks)} from this step"
        elif cited:
            use = "; the answer does not use what this step found"
        else:
            use = ""
        said.append(f"{step} searched for {_quoted(asked)}{using}; {found}{use}.")
    verdict = result.evaluation
    if verdict.enough:
        said.append("That was judged enough to answer.")
    elif verdict.missing:
        missing = "; ".join(" ".join(m.split()) for m in verdict.missing[:2])
        said.append(f"Still missing: {safe.escape_inline(missing)}.")
    if result.web_used:
        said.append(f"The web was searched once ({len(result.web_results)} results).")
    elif result.web_error:
        said.append("The web search was unavailable.")
    documents = [c.source or c.title for c in result.citations if c.chunk_id]
    web = [c for c in result.citations if c.url]
    if documents or web:
        where = [f"{len(documents)} passage{'s' * (len(documents) != 1)} of {_names(documents)}"]
        if web:
            where.append(f"{len(web)} web result{'s' * (len(web) != 1)}")
        said.append(f"The answer cites {' and '.join(where if documents else where[1:])}.")
    else:
        said.append("The answer cites no passage.")
    said.append(_claims_said(result))
    return " ".join(s for s in said if s)


def _claims_said(result: QuestionResult) -> str:
    """What the claim check did, in words (empty when it did not run)."""
    event = next((e for e in result.trace if e.node == "check_claims"), None)
    details = event.details if event is not None else {}
    checked = details.get("checked")
    if not isinstance(checked, int) or isinstance(checked, bool):
        return ""
    claims = f"{checked} claim{'s' * (checked != 1)}"
    if details.get("fell_back"):
        rerun = details.get("offline_rerun")
        if isinstance(rerun, dict):
            hops = int(rerun.get("hops") or 0)
            then = (
                "offline reasoning asked the whole question again "
                f"({hops} hop{'s' * (hops != 1)}) and its answer is shown"
            )
        else:
            then = "the answer shown is read from the evidence instead"
        if details.get("unwritten"):
            return f"The model could not write the answer; the claim check stood in: {then}."
        return (
            f"The model's answer failed the check of its {claims} against their sources, so {then}."
        )
    removed = int(details.get("removed") or 0)
    if removed:
        return f"Of {claims} checked against their sources, {removed} unsupported were removed."
    failed = [c for c in details.get("claims") or [] if c.get("verdict") != "supported"]
    if failed:
        return f"{len(failed)} of {claims} could not be matched to their sources."
    # what the check does: the values and names a claim states are in the passage it cites; it
    # does not judge whether they answer the question
    if checked == 1:
        return "The values and names of its one claim are in the passage it cites."
    return f"The values and names of all {claims} are in the passages they cite."


def claim_rows(result: QuestionResult) -> list[dict[str, str]]:
    """What the claim check checked, a row per claim: the claim, its citations, the verdict
    and why (dataframe cells are text, never Markdown)."""
    event = next((e for e in result.trace if e.node == "check_claims"), None)
    claims = (event.details.get("claims") if event is not None else None) or []
    return [
        {
            "claim": " ".join(str(c.get("claim", "")).split()),
            "cites": " ".join(f"[{n}]" for n in c.get("cites") or []),
            "verdict": str(c.get("verdict", "")).replace("_", " "),
            "why": str(c.get("why") or ""),
        }
        for c in claims
        if isinstance(c, Mapping)
    ]
