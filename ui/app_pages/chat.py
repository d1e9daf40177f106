"""Chat: ask, watch the graph work, read the cited answer, continue the conversation."""

from __future__ import annotations

import functools

import streamlit as st

from graph.conversations import NOT_SAVED, chat_title
from graph.result import QuestionResult, TraceEvent
from ui import chat_list, question_queue, safe
from ui.answer_actions import REGENERATE_KEY
from ui.export import chat_export, export_file_name
from ui.files import download_link
from ui.formatting import (
    STATUS_TEXT,
    WEB_ON_HELP,
    StatusNarrator,
    duration_text,
    offline_note,
    thread_title,
    web_off_reason,
)
from ui.services import (
    error_text,
    get_settings,
    may_open,
    new_thread_id,
    page_session,
    user_answers,
    visible_threads,
)
from ui.streaming import AnswerRunning, is_answering, stop_answer, stream_ask
from ui.welcome import readable_documents, take_picked, welcome
from ui.widgets import answer_block

THREAD_KEY = "hopwise_thread"
URL_THREAD_KEY = "hopwise_url_thread"  # the ?thread= this page last wrote (None: none)
# Once an answer is complete, its first line is what the reader needs to see, not the source
# cards the page scrolled down to while it streamed: bring the answer's top into view, below the
# fixed header. Each time the page turns idle (no running indicator for 0.6 s; a rerun after this
# one makes it busy again), and for 5 s after while a redraw moves it out of view; never after
# the user scrolls, and never past a minute.
SHOW_ANSWER_TOP = (
    "<script>(() => { let calm = 0, shownAt = 0, own = false; const began = Date.now();"
    " const last = () => { const all = document.querySelectorAll('[data-testid=\"stChatMessage\"]');"
    " return all[all.length - 1]; };"
    " const show = () => { const m = last(); if (!m) return;"
    " m.style.scrollMarginTop = '4rem'; m.scrollIntoView({block: 'start'});"
    " shownAt = Date.now(); };"
    " const mine = () => { own = true; };"
    " for (const e of ['wheel', 'touchmove', 'keydown', 'mousedown'])"
    " window.addEventListener(e, mine, {once: true, passive: true});"
    " const tick = () => { if (own || Date.now() - began > 60000) return;"
    " const busy = document.querySelector('[data-testid=\"stStatusWidget\"]');"
    " calm = busy ? 0 : calm + 1;"
    " if (calm === 3) show();"
    " else if (calm > 3) { if (Date.now() - shownAt > 5000) return;"
    " const m = last(); if (m && m.getBoundingClientRect().top < 0) show(); }"
    " setTimeout(tick, 200); };"
    " setTimeout(tick, 200); })();</script>"
)
QUESTION_BOX = "Ask a question about your documents…"
QUEUED_NOTE = "Queued: asked when the answer before it is written."
STOPPED_KEY = "hopwise_stopped"  # {"thread_id", "question"} of an answer the user stopped
ASKING_KEY = "hopwise_asking"  # {"thread_id", "question"} of the answer this tab is writing

st.title("Chat")
user, runner = page_session(
    "Sign in with the form in the sidebar to chat with the knowledge base.", box=QUESTION_BOX
)
settings = get_settings()
if runner.history_problem:
    st.warning(f"Conversations are not being saved: {error_text(runner.history_problem)}")

owner = runner.threads.owner_of(st.session_state.get(THREAD_KEY) or "")
if THREAD_KEY not in st.session_state or owner not in (None, user.name):
    st.session_state[THREAD_KEY] = new_thread_id()  # never continue someone else's chat

wanted = st.query_params.get("thread")  # a shared or reloaded link, not one this page wrote
if wanted and wanted != st.session_state.get(URL_THREAD_KEY, ""):
    if may_open(runner, wanted, user):
        st.session_state[THREAD_KEY] = wanted
    else:  # someone else's chat, or none: the same words for both
        st.warning(chat_list.NOT_FOUND)
        del st.query_params["thread"]


with st.sidebar:
    if st.button("New chat", key="new_chat", icon=":material/add:", width="stretch"):
        st.session_state[THREAD_KEY] = new_thread_id()
    web_allowed = runner.web_allowed()
    use_web = st.toggle(
        "Search the web when documents fall short",
        value=web_allowed,
        disabled=not web_allowed,
        help=WEB_ON_HELP if web_allowed else web_off_reason(settings.web_search),
        key="use_web",
    )
    past_chats = st.container()  # filled last, so a chat started in this run is listed


def stop_clicked(thread_id: str, question: str) -> None:
    """The Stop button's callback: the running answer stops after its current step."""
    if stop_answer(user.name, thread_id):
        st.session_state[STOPPED_KEY] = {"thread_id": thread_id, "question": question}


def show_queued(thread_id: str) -> None:
    """The questions waiting in this chat, each marked queued, with a button to remove it."""
    for number, waiting in enumerate(question_queue.waiting(st.session_state, thread_id)):
        with st.chat_message("user"):
            st.markdown(safe.escape_text(waiting))
            st.caption(QUEUED_NOTE)
            st.button(
                "Remove",
                key=f"unqueue_{thread_id}_{number}",
                icon=":material/close:",
                type="tertiary",
                on_click=question_queue.drop,
                args=(st.session_state, thread_id, number),
            )


@st.fragment(run_every=1.0)
def still_answering(thread_id: str) -> None:
    """An answer started before a rerun (the user clicked elsewhere) is still running: say
    so, offer Stop, and show the page again once it is saved."""
    if not is_answering(user.name, thread_id):
        st.rerun(scope="app")
    with st.chat_message("assistant"):
        st.info(
            "Still answering your last question… A question you ask now is queued and asked next.",
            icon=":material/hourglass_top:",
        )
        st.button(
            "Stop",
            key="stop_running",
            icon=":material/stop_circle:",
            on_click=stop_clicked,
            args=(thread_id, ""),
        )


def list_past_chats(answers: list[QuestionResult]) -> None:
    """The open chat's export, then the past chats (search, open, rename, delete)."""
    thread_id = st.session_state[THREAD_KEY]
    with past_chats:
        if answers:
            mine = visible_threads(runner, user)
            row = next((t for t in mine if t["thread_id"] == thread_id), None)
            title = thread_title(row) if row else chat_title(answers[0].question)
            download_link(
                "Export this chat",
                functools.partial(chat_export, runner, thread_id, title),
                user=user,
                file_name=export_file_name(title),
                key=f"{thread_id}|{title}",
                wide=True,
            )
        chat_list.past_chats(runner, user, THREAD_KEY)


thread_id: str = st.session_state[THREAD_KEY]
try:  # read back every run (a few ms): an answer finished after a rerun is never lost
    answers = user_answers(runner, thread_id, user)
except Exception as exc:  # noqa: BLE001
    st.error(f"Could not load this chat: {error_text(exc)}")
    answers = []

if not settings.llm_enabled:
    st.info(offline_note(), icon=":material/description:")
picked = take_picked()  # an example question clicked on the first screen
busy = is_answering(user.name, thread_id)
# A question asked while an answer is being written waits its turn in the session (never lost):
# the box stays open, and each question is asked once the one before it is written.
# (one placeholder always: another one would make it another widget, and lose what was typed)
typed = st.chat_input(QUESTION_BOX) or picked  # drawn at the bottom anyway
if typed:
    question_queue.enqueue(st.session_state, thread_id, typed)
question = None if busy else question_queue.take_next(st.session_state, thread_id)
again = st.session_state.pop(REGENERATE_KEY, None)
regenerating = bool(not question and not busy and again and again["thread_id"] == thread_id)
if regenerating:
    question = again["question"]  # Regenerate: the same question again, the answer follows
pending = busy or bool(question_queue.waiting(st.session_state, thread_id))
if not answers and not question and not pending:  # the first screen, never above a question
    welcome(runner, readable_documents(runner), user.groups)

for index, saved in enumerate(answers):
    with st.chat_message("user"):
        st.markdown(safe.escape_text(saved.question or saved.standalone_question))
    with st.chat_message("assistant"):
        last = index == len(answers) - 1 and not question  # a new answer is coming
        answer_block(saved, thread_id=thread_id, index=index, last=last)

stopped = st.session_state.pop(STOPPED_KEY, None)
if stopped and stopped["thread_id"] == thread_id:
    asked = f" “{safe.escape_inline(stopped['question'])}”" if stopped["question"] else ""
    st.info(f"Stopped{asked}: that answer was not saved.", icon=":material/stop_circle:")
if busy:
    asking = st.session_state.get(ASKING_KEY) or {}
    if asking.get("thread_id") == thread_id:  # the question being answered, above its answer
        with st.chat_message("user"):
            st.markdown(safe.escape_text(asking["question"]))
    still_answering(thread_id)
current = st.container()  # the answer being written, above the questions still waiting
show_queued(thread_id)
if question:
    st.session_state[ASKING_KEY] = {"thread_id": thread_id, "question": question}
    with current, st.chat_message("user"):
        st.markdown(safe.escape_text(question))
    with current, st.chat_message("assistant"):
        stop_slot = st.empty()
        stop_slot.button(
            "Stop",
            key="stop_answer",
            icon=":material/stop_circle:",
            on_click=stop_clicked,
            args=(thread_id, question),
        )
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
            regenerating=regenerating,  # the answer it replaces is not history
        ):
            if kind == "heartbeat":
                status.update()  # an element touched: a Stop click is handled now
            elif kind == "event":
                try:
                    label = narrator.after(TraceEvent.model_validate(payload))
                except Exception:  # noqa: BLE001 - a malformed event costs its label only
                    label = None
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
            elif kind == "stopped":
                status.update(label="Stopped", state="error")
                placeholder.info(
                    "Stopped: this answer was not saved.", icon=":material/stop_circle:"
                )
            elif isinstance(payload, AnswerRunning):  # another tab's answer in this chat
                question_queue.requeue(st.session_state, thread_id, question)
                status.update(label="Queued", state="error")
                placeholder.warning(str(payload), icon=":material/hourglass_top:")
            else:
                status.update(label="Failed", state="error")
                placeholder.error(
                    f"The question could not be answered: {safe.escape_inline(error_text(payload))}"
                )
        stop_slot.empty()
        st.session_state.pop(ASKING_KEY, None)
        if result is not None:  # the result's own clock, the same one the badge and trace show
            status.update(
                label=f"Answered in {duration_text(result.total_ms)} ({result.mode})",
                state="complete",
            )
            answers.append(result)
            placeholder.empty()
            answer_block(result, thread_id=thread_id, index=len(answers) - 1, last=True)
            for note in result.notices:
                if note.startswith(NOT_SAVED):  # the store failed during this answer
                    st.warning(error_text(note), icon=":material/history_toggle_off:")
            st.html(SHOW_ANSWER_TOP, unsafe_allow_javascript=True)  # not the cards below it
    if result is not None and question_queue.waiting(st.session_state, thread_id):
        st.rerun()  # the next question waiting in this chat is asked now

if answers and runner.threads.owner_of(thread_id) == user.name:  # a link to the open chat
    st.query_params["thread"] = st.session_state[URL_THREAD_KEY] = thread_id
else:  # a new chat, not yet saved: no link to it
    st.session_state[URL_THREAD_KEY] = None
    st.query_params.pop("thread", None)
list_past_chats(answers)
