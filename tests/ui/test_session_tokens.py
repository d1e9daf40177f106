"""Signed sessions without Streamlit: issue, verify, expiry, tampering, revocation, config
changes, the key file, the one-time cookie handoff, and `admin = true` in the users config."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from hopwise.settings import Settings
from ui.auth import (
    HANDOFF_TTL_S,
    AuthConfigError,
    Handoffs,
    SessionStore,
    User,
    handoff_script,
    load_users,
    session_secret,
    signout_script,
)

SECRET = b"k" * 32
ANA = User("ana", ("all", "finance"), "ana-pw")
BO = User("bo", ("all",), "bo-pw")
USERS = {"ana": ANA, "bo": BO}


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", **values)  # type: ignore[call-arg]


@pytest.fixture
def now() -> list[float]:
    return [1_000_000.0]


@pytest.fixture
def store(tmp_path: Path, now: list[float]) -> SessionStore:
    return SessionStore(tmp_path / "sessions.sqlite", SECRET, hours=12, clock=lambda: now[0])


def test_a_token_signs_in_its_user_with_groups_read_from_the_config(store: SessionStore) -> None:
    token = store.issue(ANA)
    assert store.verify(token, USERS) == ANA
    moved = {"ana": User("ana", ("all", "legal"), "ana-pw", admin=True), "bo": BO}
    assert store.verify(token, moved) == User("ana", ("all", "legal"), "ana-pw", admin=True)
    assert store.verify(store.issue(BO), USERS) == BO
    assert store.issue(ANA) != token  # every sign-in is a new session


def test_a_token_expires_after_the_configured_hours(
    store: SessionStore, tmp_path: Path, now: list[float]
) -> None:
    token = store.issue(ANA)
    now[0] += 12 * 3600 - 1
    assert store.verify(token, USERS) == ANA
    now[0] += 1
    assert store.verify(token, USERS) is None
    fresh = store.issue(ANA)
    shorter = SessionStore(tmp_path / "sessions.sqlite", SECRET, hours=1, clock=lambda: now[0])
    now[0] += 3600
    assert store.verify(fresh, USERS) == ANA
    assert shorter.verify(fresh, USERS) is None  # lowering HOPWISE_SESSION_HOURS applies at once


@pytest.mark.parametrize("where", ["id", "signature"])
def test_a_tampered_token_is_refused(store: SessionStore, where: str) -> None:
    token = store.issue(ANA)
    parts = token.split(".")
    i = 0 if where == "id" else 1
    parts[i] = ("B" if parts[i][0] == "A" else "A") + parts[i][1:]
    forged = ".".join(parts)
    assert forged != token and store.verify(forged, USERS) is None
    assert store.verify(token, USERS) == ANA  # the real one still works


@pytest.mark.parametrize("garbage", ["", "x", "a.b", "ana", "." * 76, "é" * 32 + "." + "a" * 43])
def test_anything_that_is_no_token_is_refused(store: SessionStore, garbage: str) -> None:
    assert store.verify(garbage, USERS) is None


def test_a_revoked_token_stays_signed_out(store: SessionStore) -> None:
    token, other = store.issue(ANA), store.issue(ANA)
    store.revoke(token)
    assert store.verify(token, USERS) is None
    assert store.verify(other, USERS) == ANA  # another tab's own session is not touched
    store.revoke("no-such-token")  # harmless


def test_a_user_removed_from_the_config_is_signed_out_for_good(store: SessionStore) -> None:
    token = store.issue(ANA)
    assert store.verify(token, {"bo": BO}) is None
    assert store.verify(token, USERS) is None  # coming back does not revive the old session


def test_a_changed_password_ends_the_users_sessions(store: SessionStore) -> None:
    token = store.issue(ANA)
    assert store.verify(token, {"ana": User("ana", ANA.groups, "new-pw")}) is None
    assert store.verify(token, USERS) is None


def test_a_token_for_one_user_gives_another_nothing(store: SessionStore, tmp_path: Path) -> None:
    token = store.issue(BO)
    assert store.verify(token, {"ana": ANA}) is None  # bo's token while bo is not configured
    token = store.issue(BO)
    with sqlite3.connect(tmp_path / "sessions.sqlite") as conn:  # whoever can write the table
        conn.execute("UPDATE sessions SET user_name = 'ana'")
    assert store.verify(token, USERS) is None  # the signature names bo


def test_only_a_hash_of_the_token_is_stored(store: SessionStore, tmp_path: Path) -> None:
    token = store.issue(ANA)
    raw = (tmp_path / "sessions.sqlite").read_bytes()
    assert token.encode() not in raw and token.split(".")[0].encode() not in raw
    with sqlite3.connect(tmp_path / "sessions.sqlite") as conn:
        [(user, created, expires, last_seen, revoked)] = conn.execute(
            "SELECT user_name, created, expires, last_seen, revoked FROM sessions"
        ).fetchall()
    assert (user, expires - created, revoked) == ("ana", 12 * 3600, None)
    assert last_seen == created


def test_a_token_signed_with_another_key_is_refused(store: SessionStore, tmp_path: Path) -> None:
    token = store.issue(ANA)
    rotated = SessionStore(tmp_path / "sessions.sqlite", b"r" * 32, hours=12)
    assert rotated.verify(token, USERS) is None


def test_the_key_is_generated_once_with_owner_only_permissions(tmp_path: Path) -> None:
    first = session_secret(settings(tmp_path))
    path = tmp_path / "data" / "session_secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) >= 32 and session_secret(settings(tmp_path)) == first
    assert session_secret(settings(tmp_path, session_secret="from-env" * 4)) == b"from-env" * 4
    with pytest.raises(AuthConfigError, match="too short"):
        session_secret(settings(tmp_path, session_secret="x"))  # a guessable key is refused
    path.write_text("short")
    with pytest.raises(AuthConfigError, match="no session key"):
        session_secret(settings(tmp_path))


def test_processes_starting_together_share_one_key(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: session_secret(settings(tmp_path)), range(8)))
    assert len(keys) == 1 and not list((tmp_path / "data").glob(".secret-*"))


def test_the_page_script_carries_a_one_time_code_never_the_token(store: SessionStore) -> None:
    token = store.issue(ANA)
    handoffs = Handoffs()
    code = handoffs.issue(token)
    script = handoff_script(code, base="")
    assert token not in script and code in script and '"/hopwise/session"' in script
    assert "document.cookie" not in script and "document.cookie" not in signout_script(base="")
    assert handoffs.take(code) == token
    assert handoffs.take(code) is None  # once only
    with pytest.raises(ValueError, match="not a handoff code"):
        handoff_script('x"; alert(1); "', base="")
    with pytest.raises(ValueError, match="not a session token"):
        handoffs.issue("not-a-token")


def test_a_handoff_code_expires(store: SessionStore) -> None:
    now = [0.0]
    handoffs = Handoffs(clock=lambda: now[0])
    code = handoffs.issue(store.issue(BO))
    now[0] = HANDOFF_TTL_S + 1
    assert handoffs.take(code) is None
    assert handoffs.take("short") is None


def test_admin_is_a_property_of_a_configured_user(tmp_path: Path) -> None:
    raw = {
        "root": {"password": "pw", "groups": [], "admin": True},
        "ana": {"password": "pw", "groups": ["hr"]},
    }
    users = load_users(settings(tmp_path), {"users": raw})
    assert users["root"].admin and not users["ana"].admin
    raw["ana"]["admin"] = "yes"
    with pytest.raises(AuthConfigError, match="admin must be true or false"):
        load_users(settings(tmp_path), {"users": raw})
