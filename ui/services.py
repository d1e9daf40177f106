"""Shared resources, built once per process with st.cache_resource, and per-session identity.

The Hopwise runner owns the knowledge-base store and the conversation checkpointer; every page
reaches them through here so there is exactly one Milvus client and one SQLite connection.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import streamlit as st

from graph.result import QuestionResult
from graph.runner import ThreadAccessError
from hopwise.settings import Settings, load_settings
from ingest.protocols import KnowledgeBase
from ui.auth import AuthConfigError, SignInGuard, User, load_users, local_user

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


@st.cache_resource(show_spinner=False)
def sign_in_guard() -> SignInGuard:
    """Failed sign-ins per account and overall, kept in the data dir (survives reloads)."""
    return SignInGuard(get_settings().data_dir / "sign_in.sqlite")


def read_secrets() -> dict[str, Any]:
    """st.secrets as a plain dict; {} when no secrets.toml exists."""
    try:
        return st.secrets.to_dict()
    except Exception:  # noqa: BLE001 - a missing or unreadable file means "no secrets"
        return {}


def error_text(exc: BaseException | str) -> str:
    """An error for a banner: one line, every configured secret and URI credential redacted."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    try:
        return get_settings().redact(text)
    except Exception:  # noqa: BLE001 - settings unreadable: still strip URI credentials
        from ingest.store import redact_uri_secrets

        return redact_uri_secrets(text)


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
        st.error(f"The knowledge base could not be opened: {error_text(exc)}")
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


def new_thread_id() -> str:
    """A fresh, unguessable conversation id; its owner is recorded server side (ThreadIndex)."""
    return uuid.uuid4().hex


def visible_threads(runner: Hopwise, user: User) -> list[dict[str, Any]]:
    """Past chats this user may open: exactly their own (the owner is checked by the runner)."""
    return runner.list_threads(owner=user.name)


def may_open(runner: Hopwise, thread_id: str, user: User) -> bool:
    """Whether a thread id (e.g. from a shared link) exists and belongs to this user."""
    return runner.threads.owner_of(thread_id) == user.name


def user_answers(runner: Hopwise, thread_id: str, user: User) -> list[QuestionResult]:
    """The saved answers of the user's own thread; [] for a new thread or anyone else's."""
    try:
        return runner.thread_answers(thread_id, owner=user.name, groups=user.groups)
    except ThreadAccessError:
        return []


def sign_out() -> None:
    """Forget everything this browser session held for the signed-in user: identity, admin
    unlock, open chat, answers, trace selection, widget values."""
    st.session_state.clear()
