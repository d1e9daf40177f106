"""Who is asking and who may administer: users, groups, the admin password, failure throttling,
and the signed sessions that keep a sign-in across reloads.

Pure functions over plain mappings so they are testable without Streamlit; the pages pass in
`st.secrets` (as a dict) and the Settings.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from secrets import token_hex, token_urlsafe
from typing import Any

from hopwise.database import Cursor, Database, Step, StoreUnavailable
from hopwise.settings import Settings
from hopwise.users import (  # noqa: F401 - the pages' names for them, kept
    GLOBAL_FREE_FAILURES,
    LOCAL_USER,
    PUBLIC_GROUP,
    UNKNOWN_ACCOUNT,
    AuthConfigError,
    SignInGuard,
    User,
    account_key,
    admin_by_password,
    attempt,
    authenticate,
    load_users,
    local_user,
    passwords_match,
    state_database,
    throttle_delay,
    with_public_group,
)

SESSION_COOKIE = "hopwise_session"


def configured_admin_password(settings: Settings, secrets: Mapping[str, Any]) -> str | None:
    """HOPWISE_ADMIN_PASSWORD wins over `admin_password` in secrets.toml; None if neither is set."""
    if settings.admin_password and settings.admin_password.get_secret_value():
        return settings.admin_password.get_secret_value()
    value = secrets.get("admin_password")
    return str(value) if value else None


def admin_password(
    settings: Settings, secrets: Mapping[str, Any], db: Database | None = None
) -> str | None:
    """The configured admin password, else the one Hopwise made at its first start (so a fresh
    install can upload with zero configuration; replicas share one through `db`); None only
    when neither exists nor can be made (a read-only data dir, an unreachable database)."""
    return configured_admin_password(settings, secrets) or generated_admin_password(
        settings.data_dir, db
    )


GENERATED_PASSWORD_FILE = "admin-password"


def generated_password_path(data_dir: Path) -> Path:
    return Path(data_dir).expanduser() / GENERATED_PASSWORD_FILE


def generated_password_place(data_dir: Path, db: Database | None = None) -> str:
    """Where the made admin password is kept, for the people who look for it."""
    if db is not None:
        return f"the hopwise_secrets table of {db.label}"
    return str(generated_password_path(data_dir))


def generated_admin_password(data_dir: Path, db: Database | None = None) -> str | None:
    """The admin password made when none is set: random, created once in
    DATA_DIR/admin-password readable by the server's own user only (or, for replicas, in the
    shared database `db`), and the same after every restart; None when it cannot be kept."""
    if db is not None:
        try:
            return db.secret(GENERATED_PASSWORD_FILE, lambda: token_urlsafe(15))
        except StoreUnavailable:
            return None
    path = generated_password_path(data_dir)
    try:
        kept = path.read_text(encoding="utf-8").strip()
        if kept:
            return kept
    except FileNotFoundError:
        pass
    except OSError:
        return None
    secret = token_urlsafe(15)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    return secret


SESSION_TOKEN = re.compile(r"[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]{43}")  # id.signature, base64url
SECRET_FILE = "session_secret"
LAST_SEEN_EVERY_S = 60.0  # last_seen is refreshed at most this often (one write a minute)
OUTAGE_GRACE_S = 600.0  # a session verified this recently survives a session-store outage


MIN_SECRET_CHARS = 32


def session_secret(settings: Settings, db: Database | None = None) -> bytes:
    """HOPWISE_SESSION_SECRET, else a random key generated once into the data dir (mode 0600),
    or into the shared database `db` (every replica signs with the same key). Either must
    hold at least MIN_SECRET_CHARS characters."""
    if settings.session_secret and settings.session_secret.get_secret_value():
        given = settings.session_secret.get_secret_value()
        if len(given) < MIN_SECRET_CHARS:
            raise AuthConfigError(
                f"HOPWISE_SESSION_SECRET is too short: use at least {MIN_SECRET_CHARS} random "
                "characters (e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)"
            )
        return given.encode("utf-8")
    if db is not None:
        return db.secret(SECRET_FILE, lambda: token_hex(32)).encode("utf-8")
    path = settings.ensure_data_dir() / SECRET_FILE
    if not path.exists():
        _create_secret_file(path)
    with contextlib.suppress(OSError):  # a file system without modes (FAT, SMB) keeps its own
        os.chmod(path, 0o600)
    key = path.read_text(encoding="utf-8").strip()
    for _ in range(50):  # another process may have created it and be writing it right now
        if len(key) >= MIN_SECRET_CHARS:
            break
        time.sleep(0.02)
        key = path.read_text(encoding="utf-8").strip()
    if len(key) < MIN_SECRET_CHARS:
        raise AuthConfigError(f"{path} holds no session key; delete it to generate a new one")
    return key.encode("utf-8")


def _create_secret_file(path: Path) -> None:
    """Write a new key so that two processes starting together end up with the same one: the
    first to create the file wins (exclusive create, which works where hard links do not)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another process made it first: use theirs
    with os.fdopen(fd, "w") as out:
        out.write(token_hex(32))
        out.flush()
        os.fsync(out.fileno())


class SessionStore:
    """Signed sign-in sessions: the browser holds `id.signature`, the server only its SHA-256.

    The signature is HMAC(secret, id, user, expiry, the user's password), so a token is good for
    one user only, cannot be forged from a copy of the table, and dies when that user's password
    changes or the user leaves the config. Rows: user, created, expires, last seen, revoked.
    """

    def __init__(
        self,
        store: Path | Database,
        secret: bytes,
        *,
        hours: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = state_database(store, "the session store")
        self._secret, self._clock = secret, clock
        self.max_age_s = int(hours * 3600)
        # sha256 -> (user, expires, created, when this process last verified it)
        self._seen: dict[str, tuple[str, int, float, float]] = {}
        self._pending: set[str] = set()  # sign-outs not yet written (the store was down)
        self._seen_lock = threading.Lock()
        with contextlib.suppress(StoreUnavailable):  # unreachable now: created on first use
            self._ensure()

    def _ensure(self) -> None:
        self.db.ready("sessions", SESSION_STEPS)

    def _signature(self, session_id: str, user: User, expires: int) -> str:
        message = json.dumps([session_id, user.name, expires, user.password]).encode("utf-8")
        digest = hmac.new(self._secret, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def issue(self, user: User) -> str:
        """A new token for `user`, valid for the configured hours; expired rows are dropped."""
        now = self._clock()
        expires = int(now) + self.max_age_s
        session_id = token_urlsafe(24)
        token = f"{session_id}.{self._signature(session_id, user, expires)}"
        self._ensure()
        with self.db.transaction() as cur:
            cur.execute("DELETE FROM sessions WHERE expires <= ?", (now,))
            cur.execute(
                "INSERT INTO sessions (token_sha256, user_name, created, expires, last_seen, "
                "revoked) VALUES (?, ?, ?, ?, ?, NULL)",
                (_sha256(token), user.name, now, expires, now),
            )
        return token

    def verify(self, token: str, users: Mapping[str, User]) -> User | None:
        """The configured user this token signs in, or None: malformed, unknown, expired,
        revoked, tampered, or its user left the config or changed password (then revoked)."""
        if not SESSION_TOKEN.fullmatch(token):
            return None
        now, key = self._clock(), _sha256(token)
        try:
            self._ensure()
            self._revoke_pending()  # sign-outs made while the store was away, first
            row = self.db.fetchone(
                "SELECT user_name, created, expires, last_seen, revoked FROM sessions "
                "WHERE token_sha256 = ?",
                (key,),
            )
        except StoreUnavailable:
            return self._during_outage(token, key, users)
        with self._seen_lock:  # refused below: never again during an outage either
            self._seen.pop(key, None)
        if row is None or row[4] is not None or key in self._pending:
            return None
        name, created, expires, last_seen = str(row[0]), float(row[1]), int(row[2]), float(row[3])
        if now >= expires or now >= created + self.max_age_s:  # a shorter setting applies too
            return None
        user = users.get(name)
        session_id, signature = token.split(".")
        if user is None or not hmac.compare_digest(
            signature, self._signature(session_id, user, expires)
        ):
            with contextlib.suppress(StoreUnavailable):
                self.revoke(token)
            return None
        if now - last_seen >= LAST_SEEN_EVERY_S:
            with contextlib.suppress(StoreUnavailable):
                self.db.execute(
                    "UPDATE sessions SET last_seen = ? WHERE token_sha256 = ?", (now, key)
                )
        with self._seen_lock:
            for old in [k for k, v in self._seen.items() if now - v[3] > OUTAGE_GRACE_S]:
                del self._seen[old]
            self._seen[key] = (user.name, expires, created, now)
        return user

    def _during_outage(self, token: str, key: str, users: Mapping[str, User]) -> User | None:
        """While the session table cannot be read: a session this process verified within
        OUTAGE_GRACE_S stays signed in (still unexpired, its user and password unchanged);
        any other token is refused. A sign-out elsewhere meanwhile takes effect when the
        store is back."""
        now = self._clock()
        with self._seen_lock:
            seen = self._seen.get(key)
        if seen is None or key in self._pending or now - seen[3] > OUTAGE_GRACE_S:
            return None
        if now >= seen[1] or now >= seen[2] + self.max_age_s:
            return None
        user = users.get(seen[0])
        session_id, signature = token.split(".")
        if user is None or not hmac.compare_digest(
            signature, self._signature(session_id, user, seen[1])
        ):
            return None
        return user

    def revoke(self, token: str) -> None:
        """End the session for good (sign out); unknown tokens are ignored. When the table
        cannot be written, this process refuses the token from now on and revokes it when the
        store is back (StoreUnavailable tells the caller it is not yet revoked elsewhere)."""
        key = _sha256(token)
        with self._seen_lock:
            self._seen.pop(key, None)
            self._pending.add(key)
        self._revoke_pending()
        if key in self._pending:
            raise StoreUnavailable(f"{self.db.what} cannot record the sign-out yet")

    def _revoke_pending(self) -> None:
        """Write the sign-outs made while the store was unreachable (and this one)."""
        with self._seen_lock:
            pending = list(self._pending)
        for key in pending:
            try:
                self.db.execute(
                    "UPDATE sessions SET revoked = ? WHERE token_sha256 = ? AND revoked IS NULL",
                    (self._clock(), key),
                )
            except StoreUnavailable:
                return
            with self._seen_lock:
                self._pending.discard(key)


def _sessions_v2(cur: Cursor, kind: str) -> None:
    """`user` is a reserved word in PostgreSQL: the column is `user_name` (SQLite files made
    before keep their rows)."""
    if kind == "sqlite":
        columns = {str(r[1]) for r in cur.fetch("PRAGMA table_info(sessions)")}
        if "user" in columns:
            cur.execute("ALTER TABLE sessions RENAME COLUMN user TO user_name")


SESSION_STEPS: list[Step] = [
    "CREATE TABLE IF NOT EXISTS sessions (token_sha256 TEXT PRIMARY KEY, user_name TEXT NOT "
    "NULL, created DOUBLE PRECISION NOT NULL, expires BIGINT NOT NULL, last_seen DOUBLE "
    "PRECISION NOT NULL, revoked DOUBLE PRECISION)",
    _sessions_v2,
]


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


HANDOFF_TTL_S = 120.0  # a sign-in's cookie code is good this long, once
HANDOFF_CODE = re.compile(r"[A-Za-z0-9_-]{32}")


class Handoffs:
    """One-time codes that turn into the session cookie (in this process).

    A page cannot set an HttpOnly cookie, and a script that could read the token could also
    leak it. So after a sign-in the server keeps the token under a random code, the page posts
    the code to `/hopwise/session` (same origin), and that route answers with `Set-Cookie:
    HttpOnly; SameSite=Strict` (and `Secure` over HTTPS). A code works once, for two minutes."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._codes: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def issue(self, token: str) -> str:
        if not SESSION_TOKEN.fullmatch(token):
            raise ValueError("not a session token")
        now, code = self._clock(), token_urlsafe(24)
        with self._lock:
            for key in [k for k, (_, until) in self._codes.items() if until <= now]:
                del self._codes[key]
            self._codes[code] = (token, now + HANDOFF_TTL_S)
        return code

    def take(self, code: str) -> str | None:
        """The token the code stands for, once; None if unknown, used or expired."""
        if not HANDOFF_CODE.fullmatch(code):
            return None
        with self._lock:
            found = self._codes.pop(code, None)
        if found is None or found[1] <= self._clock():
            return None
        return found[0]


HANDOFFS = Handoffs()


def handoff_script(code: str, *, base: str) -> str:
    """A <script> that posts a sign-in's one-time code to the session route, which sets the
    HttpOnly cookie. Only a code of the fixed alphabet is ever written into the script."""
    if not HANDOFF_CODE.fullmatch(code):
        raise ValueError("not a handoff code")
    body = json.dumps({"code": code})
    return _post_script(f"{base}/hopwise/session", body)


def signout_script(*, base: str) -> str:
    """A <script> that asks the server to drop the session cookie (scripts cannot touch it)."""
    return _post_script(f"{base}/hopwise/signout", "{}")


def _post_script(path: str, body: str) -> str:
    return (
        f"<script>fetch({json.dumps(path)}, {{method: 'POST', credentials: 'same-origin', "
        f"headers: {{'Content-Type': 'application/json'}}, body: {json.dumps(body)}}});</script>"
    )
