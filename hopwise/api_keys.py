"""API keys: each acts as one configured user (their groups, or an admin), and only its SHA-256
is stored, in the deployment's database (a SQLite file in the data dir, or PostgreSQL for
replicas), so a copy of the table signs in nobody.

A key reads `hwk_<id>_<secret>`: the id (12 hex characters) names the key in lists, logs and
`hopwise keys revoke`; the secret (32 URL-safe characters, 192 bits) is shown once, when made.
Who the key acts as is read from the users config at every request, never from the key: a user
who leaves the config, or loses a group, loses it through their keys at once.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import hmac
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from secrets import token_hex, token_urlsafe
from typing import Any

from pydantic import BaseModel, Field

from hopwise.database import Database, PostgresDatabase, SqliteDatabase, Step, StoreUnavailable
from hopwise.settings import Settings
from hopwise.state import Tables
from hopwise.users import LOCAL_USER, User, admin_by_password, local_user

KEY_PATTERN = re.compile(r"hwk_([0-9a-f]{12})_[A-Za-z0-9_-]{32}")
KEYS_FILE = "api_keys.sqlite"
LAST_USED_EVERY_S = 60.0  # last_used is written at most this often per key
MAX_LABEL_CHARS = 200

API_KEY_STEPS: list[Step] = [
    "CREATE TABLE IF NOT EXISTS hopwise_api_keys (key_id TEXT PRIMARY KEY, key_sha256 TEXT NOT "
    "NULL, user_name TEXT NOT NULL, admin INTEGER NOT NULL, label TEXT NOT NULL, created_at "
    "DOUBLE PRECISION NOT NULL, last_used DOUBLE PRECISION, revoked_at DOUBLE PRECISION)",
]


class KeyInfo(BaseModel):
    """One API key as lists show it (never its secret or hash)."""

    key_id: str = Field(description="The key's public id (the 12 hex characters after hwk_).")
    user: str = Field(description="The user the key acts as.")
    admin: bool = Field(False, description="Made as an admin key (see docs/api.md).")
    label: str = Field("", description="What the key is for, as its maker wrote it.")
    created_at: float = 0.0
    last_used: float | None = None
    revoked_at: float | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class ApiKeyError(ValueError):
    """A key cannot be made as asked (an unknown user, a bad label); the message says why."""


@dataclass(frozen=True)
class Caller:
    """Who a request acts as: the key's user as the config knows them now."""

    user: User
    admin: bool
    key_id: str
    configured: bool  # users are configured (False: the implicit local user)

    @property
    def sees_scores(self) -> bool:
        """Raw retrieval scores go to admins and the local single user only (the IDF side
        channel, docs/security.md), exactly as on the pages."""
        return self.admin or not self.configured


def key_database(settings: Settings) -> Database:
    """The deployment's database for keys: PostgreSQL (HOPWISE_DATABASE_URL), else a SQLite
    file in the data dir (opened per call, so the CLI can use it while the app runs)."""
    if settings.database_url:
        return PostgresDatabase(settings.database_url, what="the API key store", pool_size=4)
    return SqliteDatabase(settings.ensure_data_dir() / KEYS_FILE, what="the API key store")


def key_id_of(key: str) -> str | None:
    """The id of a well-formed key, else None."""
    found = KEY_PATTERN.fullmatch(key.strip())
    return found.group(1) if found else None


def _sha256(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class ApiKeys(Tables):
    """The key table: make, list, revoke, and look a presented key up."""

    component = "api_keys"
    steps = API_KEY_STEPS
    COLUMNS = ("key_id", "user_name", "admin", "label", "created_at", "last_used", "revoked_at")

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self._used: dict[str, float] = {}  # key id -> when this process last wrote last_used
        self._used_lock = threading.Lock()

    def create(
        self, user: str, users: dict[str, User], *, admin: bool = False, label: str = ""
    ) -> tuple[KeyInfo, str]:
        """A new key for `user` (a configured user, or `local` when none are configured);
        returns its info and the key itself, which is never stored and cannot be shown again."""
        user = user.strip()
        if users and user not in users:
            raise ApiKeyError(
                f"no user named {user!r} is configured (HOPWISE_USERS or secrets.toml)"
            )
        if not users and user != LOCAL_USER:
            raise ApiKeyError(
                f"no users are configured, so a key acts as the local user: --user {LOCAL_USER}"
            )
        if users and admin and not admin_by_password(users):
            raise ApiKeyError(
                "admin users are configured: a key is an admin's when its user is marked "
                "admin = true, not by --admin"
            )
        label = " ".join(label.split())
        if len(label) > MAX_LABEL_CHARS:
            raise ApiKeyError(f"the label is longer than {MAX_LABEL_CHARS} characters")
        key_id = token_hex(6)
        key = f"hwk_{key_id}_{token_urlsafe(24)}"
        info = KeyInfo(key_id=key_id, user=user, admin=admin, label=label, created_at=time.time())
        with self.transaction() as cur:
            cur.execute(
                "INSERT INTO hopwise_api_keys (key_id, key_sha256, user_name, admin, label, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (key_id, _sha256(key), user, int(admin), label, info.created_at),
            )
        return info, key

    def list(self) -> builtins.list[KeyInfo]:
        """Every key, newest first, revoked ones included (marked)."""
        rows = self.fetch(
            f"SELECT {', '.join(self.COLUMNS)} FROM hopwise_api_keys ORDER BY created_at DESC"
        )
        return [self._info(r) for r in rows]

    def revoke(self, key_id: str) -> bool:
        """Revoke a key for good; False when no active key has this id."""
        key_id = key_id.strip().removeprefix("hwk_")[:12]
        with self.transaction() as cur:
            found = cur.fetch(
                "SELECT key_id FROM hopwise_api_keys WHERE key_id = ? AND revoked_at IS NULL",
                (key_id,),
            )
            if not found:
                return False
            cur.execute(
                "UPDATE hopwise_api_keys SET revoked_at = ? WHERE key_id = ?",
                (time.time(), key_id),
            )
        return True

    def lookup(self, key_id: str) -> tuple[KeyInfo, str] | None:
        """The key with this id and its stored hash (None: never made). Read from the database
        at every call, so a revocation anywhere holds at once."""
        rows = self.fetch(
            f"SELECT {', '.join(self.COLUMNS)}, key_sha256 FROM hopwise_api_keys WHERE key_id = ?",
            (key_id,),
        )
        return (self._info(rows[0][:-1]), str(rows[0][-1])) if rows else None

    def matches(self, found: tuple[KeyInfo, str], key: str) -> bool:
        """Whether `key` is this key's secret (revoked or not); a match is noted as a use."""
        info, digest = found
        if not hmac.compare_digest(digest, _sha256(key.strip())):
            return False
        if info.active:
            self._note_use(info.key_id)
        return True

    def verify(self, key: str) -> KeyInfo | None:
        """The active key this is, or None (malformed, unknown, wrong secret, revoked)."""
        key_id = key_id_of(key)
        found = self.lookup(key_id) if key_id is not None else None
        if found is None or not self.matches(found, key) or not found[0].active:
            return None
        return found[0]

    def _note_use(self, key_id: str) -> None:
        now = time.time()
        with self._used_lock:
            if now - self._used.get(key_id, 0.0) < LAST_USED_EVERY_S:
                return
            self._used[key_id] = now
        with contextlib.suppress(StoreUnavailable):  # a note only
            self.db.execute(
                "UPDATE hopwise_api_keys SET last_used = ? WHERE key_id = ?", (now, key_id)
            )

    @staticmethod
    def _info(row: tuple[Any, ...]) -> KeyInfo:
        key_id, user, admin, label, created, used, revoked = row
        return KeyInfo(
            key_id=str(key_id), user=str(user), admin=bool(admin), label=str(label or ""),
            created_at=float(created or 0), last_used=None if used is None else float(used),
            revoked_at=None if revoked is None else float(revoked),
        )  # fmt: skip


def caller_of(info: KeyInfo, users: dict[str, User]) -> Caller | None:
    """Who a verified key acts as today, or None when its user is no longer configured.
    Groups come from the config; admin is the user's mark, or (no admin user configured) the
    key's own admin flag, the way the admin password unlocks the Admin page."""
    if not users:
        if info.user != LOCAL_USER:
            return None
        return Caller(local_user(), info.admin, info.key_id, configured=False)
    user = users.get(info.user)
    if user is None:
        return None
    admin = user.admin or (info.admin and admin_by_password(users))
    return Caller(user, admin, info.key_id, configured=True)


def keys_path(settings: Settings) -> Path | str:
    """Where the keys are kept, for messages."""
    if settings.database_url:
        return "the deployment's PostgreSQL database (table hopwise_api_keys)"
    return settings.data_dir / KEYS_FILE
