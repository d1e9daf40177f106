"""Chat: ask, watch the graph work, read the cited answer, continue the conversation."""

from __future__ import annotations

import streamlit as st

from graph.result import QuestionResult, TraceEvent
from ui import safe
from ui.formatting import STATUS_TEXT, StatusNarrator, duration_text, offline_note, thread_label
from ui.services import (
    error_text,
    get_settings,
    new_thread_id,
    page_session,
    user_answers,
    visible_threads,
)
from ui.streaming import stream_ask
from ui.welcome import readable_documents, take_picked, welcome
from ui.widgets import answer_block

THREAD_KEY = "hopwise_thread"

st.title("Chat")
user, runner = page_session("Sign in with the form in the sidebar to chat with the knowledge base.")
settings = get_settings()
if runner.history_problem:
    st.warning(f"Conversations are not being saved: {error_text(runner.history_problem)}")

owner = runner.threads.owner_of(st.session_state.get(THREAD_KEY) or "")
if THREAD_KEY not in st.session_state or owner not in (None, user.name):
    st.session_state[THREAD_KEY] = new_thread_id()  # never continue someone else's chat


def open_chat(thread_id: str) -> None:
    st.session_state[THREAD_KEY] = thread_id


with st.sidebar:
    if st.button("New chat", key="new_chat", icon=":material/add:", width="stretch"):
        st.session_state[THREAD_KEY] = new_thread_id()
    use_web = st.toggle(
        "Search the web when documents fall short",
        value=settings.web_search,
        disabled=not settings.web_search,
        help=None if settings.web_search else "Web search is off (HOPWISE_WEB_SEARCH=off).",
        key="use_web",
    )
    past_chats = st.container()  # filled last, so a chat started in this run is listed


def list_past_chats() -> None:
    """Buttons for this user's past chats, newest first; the open one highlighted."""
    with past_chats:
        st.caption("Past chats")
        try:
            threads = visible_threads(runner, user)
        except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
            st.error(f"Could not list past chats: {error_text(exc)}")
            return
        for thread in threads[:30]:
            tid = str(thread.get("thread_id"))
            st.button(
                thread_label(thread),
                key=f"thread_{tid}",
                on_click=open_chat,
                args=(tid,),
                type="primary" if tid == st.session_state[THREAD_KEY] else "secondary",
                width="stretch",
            )
        if not threads:
            st.caption("_No past chats yet._")


thread_id: str = st.session_state[THREAD_KEY]
try:  # read back every run (a few ms): an answer finished after a rerun is never lost
    answers = user_answers(runner, thread_id, user)
except Exception as exc:  # noqa: BLE001
    st.error(f"Could not load this chat: {error_text(exc)}")
    answers = []

if not settings.llm_enabled:
    st.info(offline_note(), icon=":material/description:")
picked = take_picked()  # an example question clicked on the first screen
if not answers and not picked:
    welcome(readable_documents(runner.retriever), user.groups)

for index, saved in enumerate(answers):
    with st.chat_message("user"):
        st.markdown(safe.escape_text(saved.question or saved.standalone_question))
    with st.chat_message("assistant"):
        answer_block(saved, thread_id=thread_id, index=index)

question = st.chat_input("Ask a question about your documents…") or picked
if question:
    with st.chat_message("user"):
        st.markdown(safe.escape_text(question))
    with st.chat_message("assistant"):
        status = st.status(STATUS_TEXT["route_question"], expanded=False)
        placeholder = st.empty()
        text = ""
        result: QuestionResult | None = None
        narrator = StatusNarrator(web_allowed=use_web)
        for kind, payload in stream_ask(
            runner.ask,
            question,
            groups=user.groups,
            thread_id=thread_id,
            web=use_web,
            owner=user.name,
        ):
            if kind == "event":
                label = narrator.after(TraceEvent.model_validate(payload))
                if label:
                    status.update(label=label)
                    status.write(label)
            elif kind == "token":
                if not text:
                    status.update(label=STATUS_TEXT["generate_answer"])
                text += str(payload)
                placeholder.markdown(safe.escape_text(text) + "▌")  # untrusted as it streams
            elif kind == "result":
                result = payload
            else:
                status.update(label="Failed", state="error")
                placeholder.error(
                    f"The question could not be answered: {safe.escape_inline(error_text(payload))}"
                )
        if result is not None:  # the result's own clock, the same one the badge and trace show
            status.update(
                label=f"Answered in {duration_text(result.total_ms)} ({result.mode})",
                state="complete",
            )
            answers.append(result)
            placeholder.empty()
            answer_block(result, thread_id=thread_id, index=len(answers) - 1)

list_past_chats()
