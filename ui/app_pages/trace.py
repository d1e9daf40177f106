"""Hop trace: how any past answer was found — path, timings, hops, hits, verdict, web."""

from __future__ import annotations

import functools

import altair as alt
import pandas as pd
import streamlit as st

from graph.result import WEB_UNAVAILABLE
from ui import safe
from ui.export import trace_download
from ui.files import download_link
from ui.formatting import (
    answer_number,
    badges,
    bridge_rows,
    cited_chunks,
    claim_rows,
    duration_text,
    hit_rows,
    hop_evidence,
    link_thread,
    plain_summary,
    state_machine_dot,
    step_rows,
    stop_text,
    thread_title,
    timeline_rows,
    trace_file_name,
    web_result_line,
)
from ui.services import (
    TRACE_KEY,
    document_notes,
    error_text,
    may_open,
    page_session,
    user_answers,
    visible_threads,
)

HIT_COLUMNS = {  # narrow numbers, the location takes the rest (fits 1400 px and a phone)
    "rank": st.column_config.NumberColumn("#", width=40),
    "cited": st.column_config.TextColumn("cited", width=50),
    "where": st.column_config.TextColumn("where", width="medium"),
    "fused": st.column_config.TextColumn("fused", width=70),
    "status": st.column_config.TextColumn("status", width=80),
    "bm25": st.column_config.TextColumn("BM25", width=70),
    "dense": st.column_config.TextColumn("dense", width=70),
    "section": st.column_config.TextColumn("section", width="large"),
}

st.title("Hop trace")
user, runner = page_session("Sign in with the form in the sidebar to see your answers' traces.")


URL_KEY = "hopwise_trace_url"  # the (?thread=, &answer=) this page last wrote


def wanted_answer() -> tuple[str | None, int | None]:
    """The answer asked for by the chat page (session) or a link (query params). The URL is
    applied only when it is not the one this page wrote itself: picking another chat or answer
    rewrites it, and must not be undone by it on the next run."""
    chosen = st.session_state.pop(TRACE_KEY, None)
    if chosen:
        return chosen["thread_id"], int(chosen["index"])
    raw = (st.query_params.get("thread"), st.query_params.get("answer"))
    if raw == st.session_state.get(URL_KEY):
        return None, None
    thread = link_thread(raw[0])
    number = answer_number(raw[1])
    if thread:  # `?thread=` alone opens the chat's last answer
        return thread, number - 1 if number else None
    return None, None


try:
    threads = visible_threads(runner, user)
except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
    st.error(f"Could not list past chats: {error_text(exc)}")
    st.stop()
want_thread, want_index = wanted_answer()
thread_ids = [str(t.get("thread_id")) for t in threads]
labels = {str(t.get("thread_id")): thread_title(t) for t in threads}  # selectbox: plain text
if want_thread and want_thread not in thread_ids:
    if may_open(runner, want_thread, user):
        thread_ids.insert(0, want_thread)
        labels[want_thread] = want_thread
    else:  # someone else's chat, or none: the same words for both
        st.warning("That chat was not found, or you have no access to it.")
        want_thread, want_index = None, None
        st.query_params.clear()  # the link was refused: do not carry it on to another chat
if not thread_ids:
    st.info("No answers yet. Ask something on the Chat page, then come back here.")
    st.stop()
if want_thread in thread_ids:
    st.session_state["trace_thread"] = want_thread

left, right = st.columns([3, 2])
thread_id = left.selectbox(
    "Chat", thread_ids, format_func=lambda t: labels.get(t, t), key="trace_thread"
)
answers = user_answers(runner, thread_id, user)
if not answers:
    st.info("This chat has no answers yet.")
    st.stop()
questions = [r.question or r.standalone_question or "?" for r in answers]
if want_index is not None and want_thread == thread_id and 0 <= want_index < len(answers):
    st.session_state["trace_answer"] = want_index
elif st.session_state.get("trace_answer_of") != thread_id or not (
    0 <= st.session_state.get("trace_answer", -1) < len(answers)
):
    st.session_state["trace_answer"] = len(answers) - 1  # a newly picked chat: its last answer
st.session_state["trace_answer_of"] = thread_id
index = right.selectbox(
    "Answer",
    range(len(answers)),
    format_func=lambda i: f"#{i + 1} {questions[i][:80]}",
    key="trace_answer",
)
st.query_params.update({"thread": thread_id, "answer": str(index + 1)})
st.session_state[URL_KEY] = (thread_id, str(index + 1))
result = answers[index]
events = result.trace

st.subheader(safe.escape_inline(questions[index]))
st.markdown(badges(result))
st.markdown(plain_summary(result))  # for people; the tables below are for engineers
if result.standalone_question and result.standalone_question != questions[index]:
    st.caption(f"Standalone question: {safe.escape_inline(result.standalone_question)}")

graph_col, time_col = st.columns([1, 1])
with graph_col:
    st.markdown("**Path through the state machine**")
    st.graphviz_chart(state_machine_dot(events))
with time_col:
    st.markdown("**Timeline**")
    rows = pd.DataFrame(timeline_rows(events))
    if rows.empty:
        st.caption("No timings recorded.")
    else:
        bars = (
            alt.Chart(rows)
            .mark_bar(cornerRadius=3)
            .encode(
                x=alt.X("start_ms:Q", title="ms since the question"),
                x2="end_ms:Q",
                y=alt.Y("step:N", sort=None, title=None, axis=alt.Axis(labelLimit=0)),
                color=alt.Color("llm_calls:O", title="LLM calls", scale=alt.Scale(scheme="blues")),
                tooltip=["node", "ms", "llm_calls", "tokens"],
            )
        )
        st.altair_chart(bars, width="stretch")
        st.caption(  # the question's one clock: the same total as the badge and the chat
            f"{len(rows)} steps · {duration_text(result.total_ms)} in all · "
            f"{int(rows['llm_calls'].sum())} LLM calls · {int(rows['tokens'].sum())} tokens"
        )

with st.expander("Steps: mode, cost and notes per node"):
    st.dataframe(
        pd.DataFrame(step_rows(events)),
        hide_index=True,
        width="stretch",
        column_config={"note": st.column_config.TextColumn("note", width="large")},
    )
if result.route_reason:
    st.caption(
        f"Route: {safe.escape_inline(result.route)} — {safe.escape_inline(result.route_reason)}"
    )

if result.sub_questions:
    st.markdown("**Sub-questions**")
    for i, sub in enumerate(result.sub_questions, start=1):
        dep = sub.depends_on
        uses = f"  _(uses #{int(dep)})_" if dep else ""
        st.markdown(f"{i}. {safe.escape_inline(sub.question)}{uses}")

hops = result.hops
notes = document_notes(runner, result)
cited = cited_chunks(result)
st.markdown(f"**Hops ({len(hops)})**")
for number, hop in enumerate(hops, start=1):
    label = f"Hop {number}: {safe.escape_inline(hop.sub_question)}"  # labels render Markdown
    with st.expander(label, expanded=number == 1):
        st.markdown(f"Query sent: “{safe.escape_inline(hop.query)}”")
        if hop.search_query:
            st.markdown(
                f"Also searched, in the documents' language: “{safe.escape_inline(hop.search_query)}”"
            )
        also = str((hop.bridge or {}).get("also_searched") or "")
        if also:  # the model's bridge and the code's reading differed: both were searched
            st.markdown(
                f"Also searched, the bridge as read without the model: “{safe.escape_inline(also)}”"
            )
        winner, candidates = bridge_rows(hop)
        candidates = [c for c in candidates if c["candidate"]]
        if candidates:
            st.markdown(
                f"Bridge entity: **{safe.escape_inline(winner or '—')}** — candidates weighed:"
            )
            st.dataframe(pd.DataFrame(candidates), hide_index=True, width="stretch")
        elif winner:  # named by the model or by the sub-question: nothing was weighed
            st.markdown(f"Bridge entity: **{safe.escape_inline(winner)}** (no other candidate)")
        table = hit_rows(hop, notes, cited)
        if table:
            st.dataframe(
                pd.DataFrame(table),
                hide_index=True,
                width="stretch",
                column_config=HIT_COLUMNS,
            )
        else:
            st.caption("No hits.")
        kept = hop_evidence(hop)
        if kept:
            st.markdown("Evidence kept:")
            for sentence in kept:
                st.markdown(f"- {sentence}")

evaluation = result.evaluation
if result.route == "complex":
    verdict = "enough evidence" if evaluation.enough else "evidence incomplete"
    (st.success if evaluation.enough else st.warning)(f"Evaluation: {verdict}")
    for point in evaluation.missing:
        st.markdown(f"- missing: {safe.escape_inline(point)}")
checked = claim_rows(result)
if checked:
    with st.expander(f"Claim check: {len(checked)} checked against the passages they cite"):
        st.caption(
            "Each claim's values and names must be in a passage it cites; the check does not "
            "judge whether they answer the question."
        )
        st.dataframe(pd.DataFrame(checked), hide_index=True, width="stretch")
st.markdown(f"**Stop reason:** {safe.escape_inline(stop_text(result.stop_reason))}")

if result.web_query:
    st.markdown(f"**Web search:** “{safe.escape_inline(result.web_query)}”")
    for item in result.web_results:
        st.markdown(f"- {web_result_line(item)}")
    if result.web_error:
        st.warning("Web search unavailable: the answer uses the documents only.")
        if result.web_error != WEB_UNAVAILABLE:  # the raw error reaches admins only
            st.caption(f"Error: {safe.escape_inline(result.web_error)}")
    elif not result.web_results:
        st.caption("The web search returned nothing.")
elif evaluation.web_query and not evaluation.enough:
    st.caption(
        f"Web search not run (disabled or budget used); it would have asked: "
        f"“{safe.escape_inline(evaluation.web_query)}”"
    )

download_link(
    "Download trace JSON",
    functools.partial(trace_download, runner, thread_id, index),
    user=user,
    file_name=trace_file_name(thread_id, index),
    key=f"{thread_id}|{index}",
)
