"""Shared resources, built once per process with st.cache_resource, and per-session identity.

The Hopwise runner owns the knowledge-base store and the conversation checkpointer; every page
reaches them through here so there is exactly one Milvus client and one SQLite connection.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from typing import TYPE_CHECKING, Any

import streamlit as st

from graph.conversations import ThreadAccessError
from graph.result import QuestionResult
from hopwise.database import Database, PostgresDatabase, StoreUnavailable
from hopwise.settings import Settings, load_settings
from ingest.hidden import hidden_note
from ingest.protocols import KnowledgeBase
from ui.auth import (
    HANDOFFS,
    SESSION_COOKIE,
    AuthConfigError,
    SessionStore,
    SignInGuard,
    User,
    admin_by_password,
    configured_admin_password,
    generated_admin_password,
    generated_password_place,
    handoff_script,
    load_users,
    local_user,
    session_secret,
    signout_script,
)

if TYPE_CHECKING:
    from hopwise.app import Hopwise

USER_KEY = "hopwise_user"  # this tab's session token; the browser keeps it in SESSION_COOKIE
TRACE_KEY = "hopwise_trace_selection"
ADMIN_KEY = "hopwise_admin"  # who gave the admin password in this tab (password mode only)


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

    server_log(get_settings())
    runner = Hopwise.from_settings(get_settings())
    runner.start_background_work()  # vectors of the documents that lack them, off the request path
    return runner


def server_log(settings: Settings) -> None:
    """Hopwise's own INFO lines on the server's console, once per process (secrets
    redacted): which replica is the embedding worker and what it embedded."""
    from hopwise.settings import RedactingFilter

    log = logging.getLogger("hopwise")
    if any(isinstance(h, ServerLogHandler) for h in log.handlers):
        return
    handler = ServerLogHandler()
    handler.setFormatter(logging.Formatter("hopwise: %(message)s"))
    handler.addFilter(RedactingFilter(settings))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


class ServerLogHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler `server_log` adds (recognised so it is added once)."""


class OwnThreadsQuiet(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext" warning for Hopwise's own threads: the
    warm-up fills the st.cache_resource runner outside any page run on purpose, so the warning
    (which read like an error on a fresh install) says nothing; other threads still get it."""

    def filter(self, record: logging.LogRecord) -> bool:
        own = record.threadName is not None and record.threadName.startswith("hopwise-")
        return not (own and "missing ScriptRunContext" in record.getMessage())


def quiet_own_threads() -> None:
    """Install OwnThreadsQuiet on Streamlit's context logger, once per process."""
    log = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    if not any(isinstance(f, OwnThreadsQuiet) for f in log.filters):
        log.addFilter(OwnThreadsQuiet())


class WarmUp:
    """The knowledge base opened in a background thread after a server start (ui/app.py's
    lifespan), so pages draw at once and redraw when it is open instead of blocking on it.

    It starts a little after the server (START_AFTER_S), so the first browser's page loads
    first (the build holds Python's lock for seconds), or as soon as a page asks for it."""

    def __init__(self) -> None:
        self.enabled = False  # only a served app opens in the background (AppTest blocks)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def enable(self, after_s: float = 0.0) -> None:
        quiet_own_threads()
        self.enabled = True
        timer = threading.Timer(after_s, self.start)
        timer.daemon = True
        timer.start()

    def start(self, after_s: float = 0.0) -> None:
        if after_s > 0:
            timer = threading.Timer(after_s, self.start)
            timer.daemon = True
            timer.start()
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._open, name="hopwise-warm-up", daemon=True
                )
                self._thread.start()

    def pending(self) -> bool:
        """True from the server start until the knowledge base is open (or failed to)."""
        return self.enabled and (self._thread is None or self._thread.is_alive())

    @staticmethod
    def _open() -> None:
        try:
            get_runner()
        except Exception:  # noqa: BLE001 - the first page shows why, in words
            logging.getLogger("hopwise.web").warning(
                "the knowledge base could not be opened at start", exc_info=True
            )


WARMUP = WarmUp()
PAGE_FIRST_S = 0.5  # a first page's drawing reaches the browser before the opening starts


def get_store() -> KnowledgeBase:
    """The runner's knowledge base (a MilvusStore in production) for the Admin page."""
    return get_runner().knowledge_base()


def _close_database(db: Database | None) -> None:
    if db is not None:
        db.close()


@st.cache_resource(show_spinner=False, on_release=_close_database)
def shared_database() -> Database | None:
    """The deployment's PostgreSQL database for sign-in state (HOPWISE_DATABASE_URL), shared by
    every replica; None: SQLite files in the data dir."""
    settings = get_settings()
    if not settings.database_url:
        return None
    return PostgresDatabase(settings.database_url, what="the sign-in store", pool_size=4)


@st.cache_resource(show_spinner=False)
def sign_in_guard() -> SignInGuard:
    """Failed sign-ins per account and overall, kept in the data dir or the shared database
    (survives reloads; every replica counts the same failures)."""
    return SignInGuard(shared_database() or get_settings().data_dir / "sign_in.sqlite")


@st.cache_resource(show_spinner=False)
def cached_session_store() -> SessionStore:
    """The one SessionStore of this process (raises AuthConfigError on a bad session key)."""
    settings, db = get_settings(), shared_database()
    secret = session_secret(settings, db)
    return SessionStore(
        db or settings.data_dir / "sessions.sqlite", secret, hours=settings.session_hours
    )


def session_store() -> SessionStore:
    """Signed sign-in sessions in the data dir, valid HOPWISE_SESSION_HOURS; a bad session key
    is shown as a configuration error and stops the page (never a stack trace)."""
    try:
        return cached_session_store()
    except AuthConfigError as exc:
        st.error(f"Sign-in is misconfigured: {exc}")
        st.stop()
        raise  # unreachable; keeps type checkers happy
    except StoreUnavailable as exc:  # the shared session key cannot be read yet
        st.error(f"Signing in is not possible right now: {error_text(exc)}")
        st.stop()
        raise


def sent_session_cookie() -> str | None:
    """The session cookie the browser sent when this tab connected (a reload, a shared link).
    AppTest sends no cookies, so its tests replace this function."""
    value = st.context.cookies.get(SESSION_COOKIE)
    return value if isinstance(value, str) and value else None


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


def announce_admin_password() -> None:
    """At server start: where the Admin page takes a password and none is set, print the one
    Hopwise made (kept in the data dir) on the server's console, the only place it is shown."""
    import sys

    try:
        settings, secrets = get_settings(), read_secrets()
        if not admin_by_password(load_users(settings, secrets)):
            return
        if configured_admin_password(settings, secrets) is not None:
            return
        password = generated_admin_password(settings.data_dir, shared_database())
    except Exception:  # noqa: BLE001 - a bad config is reported on the pages themselves
        return
    if password:
        print(
            f"Hopwise: no admin password is set. The Admin page's password is: {password}\n"
            f"  (kept in {generated_password_place(settings.data_dir, shared_database())}; set "
            "HOPWISE_ADMIN_PASSWORD "
            "to choose your own)",
            file=sys.stderr,
            flush=True,
        )


def configured_users() -> dict[str, User]:
    """Users from secrets.toml or HOPWISE_USERS; shows the config error and stops on bad config."""
    try:
        return load_users(get_settings(), read_secrets())
    except AuthConfigError as exc:
        st.error(f"Sign-in is misconfigured: {exc}")
        st.stop()
        raise  # unreachable; keeps type checkers happy


def current_user() -> User | None:
    """The signed-in user, the implicit local user when no users are configured, else None.

    The session is this tab's token, else the cookie the browser sent (a reload, a shared
    link), checked against the server on every run: expiry, sign-out and config changes apply
    at once, and groups and admin rights are read from the config, never from the token."""
    users = configured_users()
    if not users:
        return local_user()
    token = st.session_state.get(USER_KEY) or sent_session_cookie()
    user = session_store().verify(token, users) if token else None
    if user is None:
        st.session_state.pop(USER_KEY, None)
    else:
        st.session_state[USER_KEY] = token
    return user


def sign_in(user: User) -> None:
    """Start a new server-side session for `user` in this tab; the cookie follows on the next run."""
    st.session_state.pop(ADMIN_KEY, None)
    st.session_state.pop(SIGNED_OUT_KEY, None)
    st.session_state[USER_KEY] = session_store().issue(user)


COOKIE_SYNC_KEY = "hopwise_cookie_sync"  # (token, one-time code) this tab has posted
SIGNED_OUT_KEY = "hopwise_signed_out"  # this tab signed out: the browser's cookie must go too


def session_cookie_script() -> str | None:
    """The script that brings the browser's HttpOnly cookie in step with this tab's session:
    after a sign-in it posts a one-time code (the route sets the cookie), after a sign-out it
    asks the route to drop it. A tab signed in by the cookie it sent posts once too, so a cookie
    written by an older release (readable by scripts) is replaced by an HttpOnly one.

    The browser's cookie as seen here is the one it sent when the tab connected, so the same
    code is posted again on later runs of this tab (a used code is simply refused)."""
    sent = sent_session_cookie()
    token = st.session_state.get(USER_KEY)
    if token is None and sent is None and not st.session_state.get(SIGNED_OUT_KEY):
        return None
    from ui.files import base_path

    if token is None:
        return signout_script(base=base_path())
    synced = st.session_state.get(COOKIE_SYNC_KEY)
    if not synced or synced[0] != token:
        synced = (token, HANDOFFS.issue(token))
        st.session_state[COOKIE_SYNC_KEY] = synced
    return handoff_script(synced[1], base=base_path())


def is_admin(user: User | None) -> bool:
    """An admin user, or (password mode) the user who gave the admin password in this tab."""
    return user is not None and (user.admin or password_unlocked(user))


def password_unlocked(user: User | None) -> bool:
    """Password mode (no admin user configured) and this tab unlocked Admin for `user` with
    the admin password. A download link drawn for an admin *user* is not unlocked: at the
    fetch it is an admin's only while the user is still marked admin."""
    return (
        user is not None
        and admin_by_password(configured_users())
        and st.session_state.get(ADMIN_KEY) == user.name
    )


def runner_or_error() -> Hopwise | None:
    """The runner, or None after showing why it could not start (e.g. Milvus unreachable)."""
    try:
        return get_runner()
    except Exception as exc:  # noqa: BLE001 - shown to the user instead of a stack trace
        st.error(f"The knowledge base could not be opened: {error_text(exc)}")
        return None


def page_session(sign_in_hint: str, *, box: str = "") -> tuple[User, Hopwise]:
    """The signed-in user and the runner for a page, or stop the page after saying why not.
    While the knowledge base is still opening after a server start, the page says so (with
    its question `box`, disabled) and redraws itself once it is open."""
    user = current_user()
    if user is None:
        st.info(sign_in_hint)
        st.stop()
    wait_while_opening(box)
    runner = runner_or_error()
    if runner is None:
        st.stop()
    return user, runner  # type: ignore[return-value]  # st.stop() never returns


def wait_while_opening(box: str = "") -> None:
    """While the knowledge base is still opening after a server start: say so (with the page's
    question `box`, disabled), redraw the page once it is open, and stop here."""
    if not WARMUP.pending():
        return
    st.info("Opening the knowledge base…", icon=":material/hourglass_top:")
    if box:
        st.chat_input(box, disabled=True)
    # then the opening starts (a page that comes first need not wait for the server's timer):
    # its imports hold Python's locks for seconds, so it starts once this page has reached the
    # browser
    WARMUP.start(after_s=PAGE_FIRST_S)
    _until_open()
    st.stop()


@st.fragment(run_every=0.5)
def _until_open() -> None:
    if not WARMUP.pending():
        st.rerun(scope="app")


def kb_is_empty(runner: Hopwise) -> bool:
    """True when the store has no chunks at all (a fresh install); False if it cannot tell."""
    try:
        return runner.count_chunks() == 0
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


def sees_scores() -> bool:
    """Raw BM25 / dense / fused scores are shown to the local single user and to admins only.
    Other readers get ranks: BM25 statistics span the whole collection, restricted documents
    included, so a score would let a reader count documents they cannot see."""
    return not configured_users() or is_admin(current_user())


def user_answers(runner: Hopwise, thread_id: str, user: User) -> list[QuestionResult]:
    """The saved answers of the user's own thread; [] for a new thread or anyone else's. What
    the reader may not see (documents, raw scores) is removed here, before any page gets it."""
    return readable_answers(runner, thread_id, user, scores=sees_scores())


def readable_answers(
    runner: Hopwise, thread_id: str, user: User, *, scores: bool
) -> list[QuestionResult]:
    """`user_answers` for a caller that knows who reads (a download fetched later). Readers
    who do not see scores get a failed web search in words, without its exception text."""
    try:
        answers = runner.thread_answers(thread_id, owner=user.name, groups=user.groups)
    except (ThreadAccessError, StoreUnavailable):  # not theirs, or not readable now (said above)
        return []
    if scores:  # the local operator and admins: everything, raw errors included
        return answers
    return [answer.without_scores().without_web_error_details() for answer in answers]


def document_notes(runner: Hopwise, result: QuestionResult) -> dict[str, str]:
    """Doc id → what the trace should flag about a cited document ("hidden text removed (n)"),
    for the documents of a result the reader was already allowed to see; {} if unknown."""
    notes: dict[str, str] = {}
    try:
        for doc_id in result.doc_ids():
            doc = runner.get_document(doc_id)
            note = hidden_note(doc.hidden_removed) if doc is not None else ""
            if note:
                notes[doc_id] = note
    except Exception:  # noqa: BLE001 - a flag only; the trace stays readable without it
        return {}
    return notes


def sign_out() -> None:
    """End the session on the server (every tab and reload of it), then forget everything this
    browser session held: identity, admin unlock, open chat, answers, trace selection, widget
    values. The next run clears the cookie."""
    token = st.session_state.get(USER_KEY) or sent_session_cookie()
    if token:
        with contextlib.suppress(StoreUnavailable):  # this browser forgets it all the same
            session_store().revoke(token)
    st.session_state.clear()
    st.session_state[SIGNED_OUT_KEY] = True  # a tab that signed in by the form sent no cookie
