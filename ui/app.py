"""Hopwise app entry point: `streamlit run ui/app.py`. Navigation and sign-in only."""

from __future__ import annotations

import streamlit as st

from ui.auth import account_key, attempt, authenticate
from ui.services import (
    USER_KEY,
    configured_users,
    current_user,
    get_settings,
    sign_in_guard,
    sign_out,
)

st.set_page_config(page_title="Hopwise", page_icon=":material/hub:", layout="wide")


def sidebar_identity() -> None:
    """Sign-in form when users are configured; otherwise name the implicit local user."""
    users = configured_users()
    with st.sidebar:
        user = current_user()
        if user is not None:
            st.caption(f"Signed in as **{user.name}** · groups: {', '.join(user.groups)}")
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
            found: dict[str, object] = {}

            def check() -> bool:
                found["user"] = authenticate(users, name, password)
                return found["user"] is not None

            ok, message = attempt(sign_in_guard(), account_key(users, name), check)
            if ok:
                st.session_state[USER_KEY] = found["user"]
                st.rerun()
            st.error(message)


def engine_notice() -> None:
    """One line on every page when the embedded engine is the ~1000x slower milvus-lite 3.x."""
    from hopwise.app import engine_warning

    line = engine_warning(get_settings())
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
page.run()
