"""The row under an answer: copy it, ask it again (the last answer), rate it with a comment.

Regenerating asks the same question again in the same thread and the new answer *follows*
the old one: answers are the thread's append-only history, so earlier answers keep their
index (trace links `?answer=n` and feedback stay attached to the answer they were about) and
the reader can compare the two.
"""

from __future__ import annotations

import streamlit as st

from graph.conversations import ThreadAccessError
from graph.result import QuestionResult
from ui.services import current_user, error_text, get_runner

REGENERATE_KEY = "hopwise_regenerate"  # {"thread_id", "question"}: asked by the chat page
FEEDBACK_NOTICE_KEY = "hopwise_feedback_notice"
COMMENT_KEY = "hopwise_comment_open"  # the feedback key whose comment dialog is open


def answer_actions(result: QuestionResult, *, thread_id: str, index: int, last: bool) -> None:
    """Copy, regenerate (on the last answer only) and thumbs feedback with a comment."""
    with st.popover("Copy", icon=":material/content_copy:", help="The answer as plain text"):
        st.caption("The copy button is at the top right of the box.")
        st.code(result.answer, language=None, wrap_lines=True)  # literal text, never Markdown
    if last:
        st.button(
            "Regenerate",
            key=f"regenerate_{thread_id}_{index}",
            icon=":material/refresh:",
            help="Ask this question again; the new answer follows this one",
            on_click=st.session_state.__setitem__,
            args=(REGENERATE_KEY, {"thread_id": thread_id, "question": result.question}),
        )
    feedback(thread_id, index)


def feedback(thread_id: str, index: int) -> None:
    """Thumbs up or down, stored at once; then an optional comment. Only the owner's saved
    chats take feedback (the runner checks)."""
    user = current_user()
    if user is None:
        return
    try:
        saved = get_runner().thread_feedback(thread_id, user.name).get(index)
    except ThreadAccessError:
        return  # not saved (e.g. the store is read-only): nothing to rate
    except Exception:  # noqa: BLE001 - feedback is optional; the answer still shows
        return
    key = f"feedback_{thread_id}_{index}"
    rating = st.feedback(
        "thumbs",
        key=key,
        default=saved["rating"] if saved else None,
        on_change=rate,
        args=(thread_id, index, key),
    )
    notice = st.session_state.pop(FEEDBACK_NOTICE_KEY, None)
    if notice and notice[0] == key:
        (st.error if notice[1].startswith("Could not") else st.caption)(notice[1])
    if rating is None:
        return
    # A dialog, not a popover: it is drawn in the middle of the screen, so its Send button is
    # reachable at any window height (a popover under the last answer opened off the page).
    if st.button("Comment", key=f"comment_open_{key}", icon=":material/rate_review:",
                 help="Tell us more (optional)"):  # fmt: skip
        st.session_state[COMMENT_KEY] = key
    if st.session_state.get(COMMENT_KEY) == key:
        comment_dialog(thread_id, index, key, saved["comment"] if saved else "")


def _close_comment() -> None:
    st.session_state.pop(COMMENT_KEY, None)


@st.dialog("Your feedback", on_dismiss=_close_comment)
def comment_dialog(thread_id: str, index: int, key: str, before: str) -> None:
    st.text_area("What was good or wrong?", value=before, key=f"comment_{key}", max_chars=2000)
    st.button(  # a callback: the click counts even if the dialog's own rerun is cut short
        "Send",
        type="primary",
        key=f"comment_send_{key}",
        on_click=_send_comment,
        args=(thread_id, index, key),
    )


def _send_comment(thread_id: str, index: int, key: str) -> None:
    rate(thread_id, index, key)
    _close_comment()
    st.rerun()  # the whole page again: the dialog closes, the notice shows


def rate(thread_id: str, index: int, key: str) -> None:
    """The callback of the thumbs and of the comment form: store both with the answer."""
    user = current_user()
    if user is None:
        return
    try:
        get_runner().give_feedback(
            thread_id,
            index,
            user.name,
            rating=st.session_state.get(key),
            comment=str(st.session_state.get(f"comment_{key}") or ""),
            groups=user.groups,
        )
    except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
        message = f"Could not save your feedback: {error_text(exc)}"
    else:
        message = "Thanks, your feedback is saved."
    st.session_state[FEEDBACK_NOTICE_KEY] = (key, message)
    st.toast(message)  # seen even while the comment box still covers the notice
