"""The sidebar's past chats: search, open, rename and delete (after a confirmation).

Every change goes through the runner with the signed-in user as owner, so a chat id that is
not theirs is refused there, not only here. Changes run as button callbacks, before the page
is drawn again, so the list and the open chat never show a chat that was just deleted.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from graph.conversations import TITLE_MAX_CHARS, ThreadAccessError
from ui.auth import User
from ui.formatting import thread_label
from ui.services import error_text, new_thread_id, visible_threads

SEARCH_KEY = "chat_search"
CONFIRM_KEY = "hopwise_confirm_delete"  # the chat whose deletion waits for a yes
NOTICE_KEY = "hopwise_chat_notice"
NOT_FOUND = "That chat was not found, or you have no access to it."
SHOWN = 30


def past_chats(runner: Any, user: User, thread_key: str) -> None:
    """The search box and this user's chats, newest first; `thread_key` holds the open one."""
    st.caption("Past chats")
    text = st.text_input(
        "Search chats",
        key=SEARCH_KEY,
        placeholder="Search titles, questions, answers",
        label_visibility="collapsed",
        icon=":material/search:",
    ).strip()
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice:
        (st.error if notice[0] == "error" else st.success)(notice[1])
    try:
        if text:
            threads = runner.search_threads(user.name, text, user.groups)
        else:
            threads = visible_threads(runner, user)
    except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
        st.error(f"Could not list past chats: {error_text(exc)}")
        return
    for thread in threads[:SHOWN]:
        chat_row(runner, user, thread, thread_key)
    if not threads:
        st.caption("_No chat matches your search._" if text else "_No past chats yet._")
    elif len(threads) > SHOWN:
        st.caption(f"{len(threads) - SHOWN} older chats are not listed: search to find them.")


def chat_row(runner: Any, user: User, thread: dict[str, Any], thread_key: str) -> None:
    """One chat: its title opens it; the ⋮ menu beside it renames or deletes it."""
    tid = str(thread["thread_id"])
    # one row that never wraps: the title takes the room the menu leaves (columns would stack
    # on a phone, the menu under its title)
    row = st.container(horizontal=True, wrap=False, vertical_alignment="center", gap="small")
    with row:
        st.button(
            thread_label(thread),
            key=f"thread_{tid}",
            on_click=open_chat,
            args=(thread_key, tid),
            type="primary" if tid == st.session_state.get(thread_key) else "secondary",
            width="stretch",
        )
    with row, st.popover("", icon=":material/more_vert:", help="Rename or delete this chat"):
        with st.form(f"rename_{tid}", border=False):
            st.text_input(  # the title as stored, not as the sidebar clips it
                "Title",
                value=str(thread.get("title") or ""),
                key=f"title_{tid}",
                max_chars=TITLE_MAX_CHARS,
            )
            st.form_submit_button(
                "Rename", on_click=rename_chat, args=(runner, user, tid), icon=":material/edit:"
            )
        st.button(
            "Delete…",
            key=f"delete_{tid}",
            on_click=st.session_state.__setitem__,
            args=(CONFIRM_KEY, tid),
            icon=":material/delete:",
        )
    if st.session_state.get(CONFIRM_KEY) == tid:  # a modal question: never hidden by the menu
        confirm_delete(runner, user, thread, thread_key)


@st.dialog("Delete this chat?", on_dismiss=lambda: st.session_state.pop(CONFIRM_KEY, None))
def confirm_delete(runner: Any, user: User, thread: dict[str, Any], thread_key: str) -> None:
    tid = str(thread["thread_id"])
    st.warning(
        f"Delete “{thread_label(thread)}”? Its answers, traces and feedback are removed for good."
    )
    with st.container(horizontal=True):  # callbacks: a click counts even on a busy server
        st.button(
            "Delete",
            key="confirm_delete",
            type="primary",
            on_click=delete_and_redraw,
            args=(runner, user, tid, thread_key),
        )
        st.button("Cancel", key="cancel_delete", on_click=cancel_delete)


def delete_and_redraw(runner: Any, user: User, thread_id: str, thread_key: str) -> None:
    """The dialog's Delete: runs before anything is drawn (a button callback), so the click
    is not lost if the dialog's own rerun is cut short; then the whole page is drawn again,
    without the chat and without the dialog."""
    delete_chat(runner, user, thread_id, thread_key)
    st.rerun()


def cancel_delete() -> None:
    st.session_state.pop(CONFIRM_KEY, None)
    st.rerun()


def open_chat(thread_key: str, thread_id: str) -> None:
    st.session_state[thread_key] = thread_id
    st.session_state.pop(CONFIRM_KEY, None)


def rename_chat(runner: Any, user: User, thread_id: str) -> None:
    """The rename form's callback: the runner stores the title (and refuses others' chats)."""
    try:
        title = runner.rename_thread(
            thread_id, user.name, st.session_state.get(f"title_{thread_id}", "")
        )
    except ThreadAccessError:
        st.session_state[NOTICE_KEY] = ("error", NOT_FOUND)
    except ValueError:
        st.session_state[NOTICE_KEY] = ("error", "A chat needs a title.")
    except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
        st.session_state[NOTICE_KEY] = ("error", f"Could not rename the chat: {error_text(exc)}")
    else:
        st.session_state[NOTICE_KEY] = (
            "success",
            f"Renamed to “{thread_label({'title': title})}”.",
        )


def delete_chat(runner: Any, user: User, thread_id: str, thread_key: str) -> None:
    """The confirmation's callback: delete everywhere; a deleted open chat becomes a new one."""
    st.session_state.pop(CONFIRM_KEY, None)
    try:
        runner.delete_thread(thread_id, user.name)
    except ThreadAccessError:
        st.session_state[NOTICE_KEY] = ("error", NOT_FOUND)
        return
    except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
        st.session_state[NOTICE_KEY] = ("error", f"Could not delete the chat: {error_text(exc)}")
        return
    if st.session_state.get(thread_key) == thread_id:
        st.session_state[thread_key] = new_thread_id()
    st.session_state[NOTICE_KEY] = ("success", "Chat deleted.")
