"""Who may use the Admin page: the gate at its top (stops the page unless unlocked)."""

from __future__ import annotations

import streamlit as st

from ui.auth import admin_password, attempt, passwords_match
from ui.services import ADMIN_KEY, get_settings, read_secrets, sign_in_guard


def require_admin() -> None:
    """Stop the page with the reason or the sign-in form unless this session is an admin."""
    settings = get_settings()
    expected = admin_password(settings, read_secrets())
    if not expected:
        st.warning(
            "No admin password is configured, so uploading and deleting are disabled.\n\n"
            "Set one and restart the app, either as an environment variable:\n\n"
            "`HOPWISE_ADMIN_PASSWORD='a long secret' streamlit run ui/app.py`\n\n"
            'or in `.streamlit/secrets.toml`:\n\n`admin_password = "a long secret"`'
        )
        st.stop()

    if not st.session_state.get(ADMIN_KEY):
        with st.form("admin_sign_in"):
            password = st.text_input("Admin password", type="password")
            submitted = st.form_submit_button("Sign in")
        if submitted:
            secret = str(expected)
            ok, message = attempt(
                sign_in_guard(), "admin", lambda: passwords_match(password, secret)
            )
            if ok:
                st.session_state[ADMIN_KEY] = True
                st.rerun()
            st.error(message)
        st.stop()

    if st.sidebar.button("Admin sign out", key="admin_sign_out"):
        st.session_state.pop(ADMIN_KEY, None)
        st.rerun()
