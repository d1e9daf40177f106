"""Shared resources, built once per process with st.cache_resource, and per-session identity.

The Hopwise runner owns the knowledge-base store and the conversation checkpointer; every page
reaches them through here so there is exactly one Milvus client and one SQLite connection.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import streamlit as st

from hopwise.settings import Settings, load_settings
from ingest.protocols import KnowledgeBase
from ui.auth import AuthConfigError, User, load_users, local_user

if TYPE_CHECKING:
    from hopwise.app import Hopwise

USER_KEY = "hopwise_user"
TRACE_KEY = "hopwise_trace_selection"


@st.cache_resource(show_spinner=False)
def get_settings() -> Settings:
    """Settings from HOPWISE_* env and .env; the data dir is created on first use."""
    settings = load_settings()
    settings.ensure_data_dir()
    return settings


def _close(runner: Hopwise) -> None:
    """Release the Milvus client and SQLite connection when the cache entry is cleared."""
    runner.close()


@st.cache_resource(show_spinner="Opening the knowledge base…", on_release=_close)
def get_runner() -> Hopwise:
    """The graph runner with its store, reasoner, web search and checkpointer."""
    from hopwise.app import Hopwise

    return Hopwise.from_settings(get_settings())


def get_store() -> KnowledgeBase:
    """The runner's knowledge base (a MilvusStore in production) for the Admin page."""
    store = get_runner().retriever
    if not isinstance(store, KnowledgeBase):
        raise TypeError(f"{type(store).__name__} is a search, not a knowledge base")
    return store


def read_secrets() -> dict[str, Any]:
    """st.secrets as a plain dict; {} when no secrets.toml exists."""
    try:
        return st.secrets.to_dict()
    except Exception:  # noqa: BLE001 - a missing or unreadable file means "no secrets"
        return {}


def configured_users() -> dict[str, User]:
    """Users from secrets.toml or HOPWISE_USERS; shows the config error and stops on bad config."""
    try:
        return load_users(get_settings(), read_secrets())
    except AuthConfigError as exc:
        st.error(f"Sign-in is misconfigured: {exc}")
        st.stop()
        raise  # unreachable; keeps type checkers happy


def current_user() -> User | None:
    """The signed-in user, the implicit local user when no users are configured, else None."""
    users = configured_users()
    if not users:
        return local_user()
    signed_in = st.session_state.get(USER_KEY)
    return users.get(signed_in.name) if signed_in else None  # config changes apply at once


def runner_or_error() -> Hopwise | None:
    """The runner, or None after showing why it could not start (e.g. Milvus unreachable)."""
    try:
        return get_runner()
    except Exception as exc:  # noqa: BLE001 - shown to the user instead of a stack trace
        st.error(f"The knowledge base could not be opened: {exc}")
        return None


def page_session(sign_in_hint: str) -> tuple[User, Hopwise]:
    """The signed-in user and the runner for a page, or stop the page after saying why not."""
    user = current_user()
    if user is None:
        st.info(sign_in_hint)
        st.stop()
    runner = runner_or_error()
    if runner is None:
        st.stop()
    return user, runner  # type: ignore[return-value]  # st.stop() never returns


def kb_is_empty(runner: Hopwise) -> bool:
    """True when the store has no chunks at all (a fresh install); False if it cannot tell."""
    try:
        store = runner.retriever
        return isinstance(store, KnowledgeBase) and store.count_chunks() == 0
    except Exception:  # noqa: BLE001 - a hint only; real store errors surface elsewhere
        return False


def new_thread_id(user: User) -> str:
    """A fresh conversation id, prefixed with its owner so chats can be listed per user."""
    return f"{user.name}:{uuid.uuid4().hex[:12]}"


def visible_threads(runner: Hopwise, user: User) -> list[dict[str, Any]]:
    """Past chats this user may open: all of them without sign-in, else only their own."""
    threads = list(runner.list_threads())
    if not configured_users():
        return threads
    prefix = f"{user.name}:"
    return [t for t in threads if str(t.get("thread_id", "")).startswith(prefix)]


def may_open(thread_id: str, user: User) -> bool:
    """Whether a thread id (e.g. from a shared link) belongs to this user."""
    return not configured_users() or thread_id.startswith(f"{user.name}:")
