"""Who may use the Admin page: the gate at its top (stops the page unless this user is admin).

With users configured and at least one marked `admin = true`, admin is a property of the
signed-in user: no second password. Otherwise (no users, or none marked admin) the admin
password unlocks this tab, and its form shows only where no sign-in form is shown: for the
local user, or for a user already signed in through the sidebar.
"""

from __future__ import annotations

import streamlit as st

from hopwise.database import StoreUnavailable
from ui.auth import (
    admin_password,
    attempt,
    configured_admin_password,
    generated_password_place,
    passwords_match,
)
from ui.services import (
    ADMIN_KEY,
    admin_by_password,
    configured_users,
    current_user,
    error_text,
    get_settings,
    is_admin,
    read_secrets,
    shared_database,
    sign_in_guard,
)


def require_admin() -> None:
    """Stop the page with the reason or the admin password form unless this user is an admin."""
    user = current_user()
    if user is None:
        st.info("Sign in with the form in the sidebar; the Admin page opens for admin users.")
        st.stop()
    if is_admin(user):
        if not user.admin and st.sidebar.button("Admin sign out", key="admin_sign_out"):
            st.session_state.pop(ADMIN_KEY, None)
            st.rerun()
        return
    if not admin_by_password(configured_users()):
        st.warning(
            f"Your account has no admin rights. Signed in as {user.name}; an administrator "
            "can mark an account `admin = true` in the users config."
        )
        st.stop()

    settings, secrets = get_settings(), read_secrets()
    expected = admin_password(settings, secrets, shared_database())  # configured, else made
    if not expected and shared_database() is not None:
        st.warning(
            "The shared database is unavailable, so the admin password Hopwise made cannot be "
            "read. Try again when it is back, or set `HOPWISE_ADMIN_PASSWORD` on every replica."
        )
        st.stop()
    if not expected:
        st.warning(
            "No admin password is configured and none could be made in the data directory, "
            "so uploading and deleting are disabled.\n\n"
            "Set one and restart the app, either as an environment variable:\n\n"
            "`HOPWISE_ADMIN_PASSWORD='a long secret' streamlit run ui/app.py`\n\n"
            'or in `.streamlit/secrets.toml`:\n\n`admin_password = "a long secret"`\n\n'
            "Where users are configured, mark one `admin = true` instead."
        )
        st.stop()

    if configured_admin_password(settings, secrets) is None:
        st.caption(
            "No admin password was set, so Hopwise made one at its first start: it is printed in "
            "the terminal where the server was started, and kept in "
            f"`{generated_password_place(settings.data_dir, shared_database())}` on the server. "
            "Set "
            "`HOPWISE_ADMIN_PASSWORD` to choose your own."
        )
    with st.form("admin_sign_in"):
        password = st.text_input("Admin password", type="password")
        submitted = st.form_submit_button("Sign in")
    if submitted:
        secret = str(expected)
        try:
            ok, message = attempt(
                sign_in_guard(), "admin", lambda: passwords_match(password, secret)
            )
        except StoreUnavailable as exc:
            ok, message = False, f"Signing in is not possible right now: {error_text(exc)}"
        if ok:
            st.session_state[ADMIN_KEY] = user.name
            st.rerun()
        st.error(message)
    st.stop()
