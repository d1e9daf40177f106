"""The Streamlit script behind `streamlit run ui/app.py`: navigation and sign-in only.

`ui/app.py` wraps it in an st.App with Hopwise's own HTTP routes (ui.routes); AppTest runs this
file directly. A page that fails shows one line with a log reference, never a traceback."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from hopwise.database import StoreUnavailable
from ui import safe
from ui.auth import User, account_key, attempt, authenticate
from ui.routes import script_error
from ui.services import (
    configured_users,
    current_user,
    error_text,
    get_settings,
    is_admin,
    session_cookie_script,
    sign_in,
    sign_in_guard,
    sign_out,
)

# The favicon is a file we ship: a :material/...: icon would be fetched from fonts.gstatic.com.
ICON = str(Path(__file__).resolve().parent / "assets" / "hopwise.png")
st.set_page_config(page_title="Hopwise", page_icon=ICON, layout="wide")
# A table in an answer (a quoted row, a model's table) scrolls inside its message on a narrow
# screen instead of running past its right edge.
TABLE_STYLE = (
    "<style>[data-testid='stChatMessage'] [data-testid='stMarkdownContainer'] table"
    "{display:block;max-width:100%;overflow-x:auto}</style>"
)
st.html(TABLE_STYLE)


def sidebar_identity() -> None:
    """The one sign-in form when users are configured (a valid session cookie skips it);
    otherwise name the implicit local user. Keeps the browser's cookie in step."""
    users = configured_users()
    with st.sidebar:
        user = current_user()
        script = session_cookie_script()
        if script:
            st.html(script, unsafe_allow_javascript=True)
        if user is not None:
            admin = " · admin" if is_admin(user) else ""
            groups = safe.escape_inline(", ".join(user.groups))
            st.caption(
                f"Signed in as **{safe.escape_inline(user.name)}** · groups: {groups}{admin}"
            )
            if users and st.button("Sign out", key="sign_out"):
                sign_out()
                st.rerun()
            return
        with st.form("sign_in"):
            st.markdown("**Sign in**")
            name = st.text_input("User")
            password = st.text_input("Password", type="password")
            submitted = st.form_submit_button("Sign in")
        if submitted:
            found: dict[str, User | None] = {}

            def check() -> bool:
                found["user"] = authenticate(users, name, password)
                return found["user"] is not None

            try:
                ok, message = attempt(sign_in_guard(), account_key(users, name), check)
                user = found.get("user")
                if ok and user is not None:
                    sign_in(user)
                    st.rerun()  # same page, same query params (a shared link opens after sign-in)
            except StoreUnavailable as exc:
                ok, message = False, f"Signing in is not possible right now: {error_text(exc)}"
            st.error(message)


def engine_notice() -> None:
    """One line on every page when the embedded engine is the ~1000x slower milvus-lite 3.x."""
    from ingest.store import slow_engine_warning  # not hopwise.app: the first page draws sooner

    line = slow_engine_warning() if get_settings().is_embedded else None
    if line:
        st.warning(line, icon=":material/speed:")


sidebar_identity()
engine_notice()
page = st.navigation(
    [
        st.Page("app_pages/chat.py", title="Chat", icon=":material/chat:", default=True),
        st.Page("app_pages/trace.py", title="Hop trace", icon=":material/account_tree:"),
        st.Page("app_pages/admin.py", title="Admin", icon=":material/admin_panel_settings:"),
    ]
)
try:
    page.run()
except Exception as exc:  # noqa: BLE001 - one line with a reference instead of a traceback
    script_error(exc)  # st.stop / st.rerun are no Exception: they pass through
