"""The Admin page's API keys: make a key for a configured user (shown once), list the keys,
revoke one. The page is gated (require_admin) before this is drawn; the key table and its rules
are hopwise.api_keys, the same as `hopwise keys`."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from hopwise.api_keys import ApiKeyError, ApiKeys, KeyInfo, key_database
from hopwise.database import StoreUnavailable
from hopwise.users import LOCAL_USER
from ui import safe
from ui.services import (
    admin_by_password,
    configured_users,
    error_text,
    get_settings,
    shared_database,
)

NEW_KEY = "hopwise_new_api_key"  # (key id, key): shown once, on the run after it was made


@st.cache_resource(show_spinner=False)
def key_store() -> ApiKeys:
    """The deployment's key table: the shared PostgreSQL database, else a file in the data dir."""
    db = shared_database()
    return ApiKeys(db if db is not None else key_database(get_settings()))


def key_rows(keys: list[KeyInfo]) -> list[dict[str, str]]:
    """The key list as plain text cells (never the key or its hash)."""

    def when(ts: float | None) -> str:
        return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "—"

    return [
        {
            "id": k.key_id,
            "user": k.user,
            "admin key": "yes" if k.admin else "",
            "label": k.label,
            "created": when(k.created_at),
            "last used": when(k.last_used),
            "state": "revoked " + when(k.revoked_at) if k.revoked_at else "active",
        }
        for k in keys
    ]


def api_keys_section() -> None:
    """Make, list and revoke keys for `hopwise serve` and `hopwise mcp --http`."""
    users = configured_users()
    store = key_store()
    made = st.session_state.pop(NEW_KEY, None)
    if made:
        st.success(
            f"Key {made[0]} made. Copy it now: it is shown only this once (only its hash is kept)."
        )
        st.code(made[1], language=None)
    names = sorted(users) if users else [LOCAL_USER]
    with st.form("admin_new_key", clear_on_submit=True):
        user = st.selectbox("Acts as user", names, key="admin_key_user")
        label = st.text_input("What it is for", max_chars=200, key="admin_key_label")
        admin = (
            st.checkbox("Admin key (may upload and delete documents)", key="admin_key_admin")
            if admin_by_password(users)
            else False
        )
        submitted = st.form_submit_button("Make key")
    if submitted:
        try:
            info, key = store.create(str(user), users, admin=bool(admin), label=label)
        except (ApiKeyError, StoreUnavailable) as exc:
            st.error(safe.escape_inline(error_text(exc)))
        else:
            st.session_state[NEW_KEY] = (info.key_id, key)
            st.rerun()
    try:
        keys = store.list()
    except StoreUnavailable as exc:
        st.error(f"The keys cannot be read: {safe.escape_inline(error_text(exc))}")
        return
    if not keys:
        st.caption("_No keys yet._")
        return
    st.dataframe(pd.DataFrame(key_rows(keys)), hide_index=True, width="stretch")
    active = [k.key_id for k in keys if k.active]
    if active:
        cols = st.columns([2, 1], vertical_alignment="bottom")
        chosen = cols[0].selectbox("Key to revoke", active, key="admin_key_revoke")
        if cols[1].button("Revoke", key="admin_key_revoke_button"):
            try:
                store.revoke(str(chosen))
            except StoreUnavailable as exc:
                st.error(safe.escape_inline(error_text(exc)))
            else:
                st.rerun()
