"""Who may ask: the configured users, their groups and admin marks, read from
`.streamlit/secrets.toml` (`[users.NAME]`) or HOPWISE_USERS, and failed-attempt throttling.

Streamlit-free, so the pages (ui/auth.py), the API (hopwise/api/) and the CLI share one
reading of the users config and one throttle.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import math
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopwise.database import Database, SqliteDatabase, Step, StoreUnavailable
from hopwise.settings import Settings

LOCAL_USER = "local"
PUBLIC_GROUP = "all"
THROTTLE_BASE_S = 1.0
THROTTLE_CAP_S = 60.0


@dataclass(frozen=True)
class User:
    """A signed-in (or the implicit local) user and the groups whose documents they may read."""

    name: str
    groups: tuple[str, ...] = (PUBLIC_GROUP,)
    password: str = field(default="", repr=False, compare=False)
    admin: bool = False


class AuthConfigError(ValueError):
    """The users configuration cannot be read; the message says what to fix."""


def with_public_group(groups: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Everyone reads the public group `all`; order kept, duplicates and blanks dropped."""
    seen: dict[str, None] = {PUBLIC_GROUP: None}
    for group in groups:
        name = str(group).strip()
        if name:
            seen[name] = None
    return tuple(seen)


def load_users(settings: Settings, secrets: Mapping[str, Any]) -> dict[str, User]:
    """Users from `[users.NAME]` in secrets.toml, else HOPWISE_USERS JSON; {} when neither is set."""
    raw: Any = secrets.get("users")
    if not raw and settings.users:
        try:
            raw = json.loads(settings.users)
        except json.JSONDecodeError as exc:
            raise AuthConfigError(f"HOPWISE_USERS is not valid JSON: {exc.msg}") from exc
    if not raw:
        return {}
    if not isinstance(raw, Mapping):
        raise AuthConfigError(
            'users must map a name to {"password": ..., "groups": [...], "admin": false}'
        )
    users: dict[str, User] = {}
    for name, spec in raw.items():
        if not isinstance(spec, Mapping) or not spec.get("password"):
            raise AuthConfigError(f"user {name!r} needs a password")
        groups = spec.get("groups") or []
        if isinstance(groups, str):
            groups = [groups]
        if not isinstance(groups, list | tuple) or not all(isinstance(g, str) for g in groups):
            raise AuthConfigError(f"user {name!r}: groups must be a list of group names")
        admin = spec.get("admin", False)
        if not isinstance(admin, bool):
            raise AuthConfigError(f"user {name!r}: admin must be true or false")
        groups = with_public_group(list(groups))
        users[str(name)] = User(str(name), groups, str(spec["password"]), admin)
    return users


def local_user() -> User:
    """The single user of an app with no sign-in configured."""
    return User(LOCAL_USER, (PUBLIC_GROUP,))


def passwords_match(given: str, expected: str) -> bool:
    """Constant-time comparison, so response time does not leak how much of a guess was right."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def authenticate(users: Mapping[str, User], name: str, password: str) -> User | None:
    """The user when name and password match. An unknown name still costs one comparison."""
    user = users.get(name.strip())
    expected = user.password if user else "\0unknown-user"
    ok = passwords_match(password, expected)
    return user if ok and user else None


def admin_by_password(users: Mapping[str, User]) -> bool:
    """Whether the admin password unlocks Admin: no users configured, or none marked admin."""
    return not any(user.admin for user in users.values())


def secrets_files(cwd: Path | None = None) -> list[Path]:
    """Where Streamlit reads secrets.toml, global first (the project's file wins)."""
    home = Path.home() / ".streamlit" / "secrets.toml"
    return [home, (cwd or Path.cwd()) / ".streamlit" / "secrets.toml"]


def read_secrets_files(paths: list[Path] | None = None) -> dict[str, Any]:
    """secrets.toml as Streamlit merges it, for processes without Streamlit (the API, the
    CLI); {} when there is none. A file that cannot be parsed is a configuration error."""
    merged: dict[str, Any] = {}
    for path in paths if paths is not None else secrets_files():
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        try:
            merged.update(tomllib.loads(text))
        except tomllib.TOMLDecodeError as exc:
            raise AuthConfigError(f"{path} is not valid TOML: {exc}") from exc
    return merged


def throttle_delay(failures: int) -> float:
    """Seconds to wait after `failures` consecutive failures: the first is free, then doubling."""
    if failures < 2:
        return 0.0
    return min(THROTTLE_CAP_S, THROTTLE_BASE_S * 2 ** (failures - 2))


GLOBAL_WINDOW_S = 60.0
GLOBAL_FREE_FAILURES = 30  # failed sign-ins per minute, all accounts together, before slowing
# every name that is no account shares one counter (no NUL: PostgreSQL text cannot hold one)
UNKNOWN_ACCOUNT = "?unknown"


SIGN_IN_STEPS: list[Step] = [
    "CREATE TABLE IF NOT EXISTS sign_in_accounts (account TEXT PRIMARY KEY, failures INTEGER "
    "NOT NULL, locked_until DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sign_in_failures (at DOUBLE PRECISION NOT NULL)",
]


def state_database(store: Path | Database, what: str) -> Database:
    """A table file in the data dir (SQLite, short connections), or the shared database."""
    return store if isinstance(store, Database) else SqliteDatabase(Path(store), what=what)


class SignInGuard:
    """Failed sign-ins, counted per account and overall, in the data dir's SQLite file or the
    deployment's shared database (so every replica counts the same failures).

    Reloads, new browser sessions and app restarts do not reset it. Per account: the first
    failure is free, then each costs a doubling wait (1 s, 2 s, ... 60 s at most); a success
    resets that account. Overall: beyond GLOBAL_FREE_FAILURES failures in a minute (password
    spraying across accounts) every sign-in waits until the minute's count drops again. No
    wait is ever longer than 60 s, so an attacker can slow the real admin, not lock them out.
    """

    def __init__(self, store: Path | Database, *, clock: Callable[[], float] = time.time) -> None:
        self.db, self._clock = state_database(store, "the sign-in store"), clock
        with contextlib.suppress(StoreUnavailable):  # unreachable now: on first use instead
            self._ensure()

    def _ensure(self) -> None:
        self.db.ready("sign_in", SIGN_IN_STEPS)

    def wait_s(self, account: str, *, overall: bool = True) -> float:
        """How long until `account` may try again (0 when it may try now). `overall=False`
        leaves out the wait all accounts share (an API key whose id is known is slowed by
        failures against itself only, so guessing random keys cannot stall the real ones)."""
        return self.check(account, overall=overall)[0]

    def check(self, account: str, *, overall: bool = True) -> tuple[float, int]:
        """(seconds until `account` may try again, its consecutive failures), in one read."""
        now = self._clock()
        self._ensure()
        with self.db.transaction() as cur:
            row = cur.fetch(
                "SELECT locked_until, failures FROM sign_in_accounts WHERE account = ?",
                (account,),
            )
            recent = (
                cur.fetch(
                    "SELECT at FROM sign_in_failures WHERE at > ? ORDER BY at DESC",
                    (now - GLOBAL_WINDOW_S,),
                )
                if overall
                else []
            )
        own = max(0.0, float(row[0][0]) - now) if row else 0.0
        shared = 0.0
        if len(recent) >= GLOBAL_FREE_FAILURES:  # wait until enough of them age out
            shared = float(recent[GLOBAL_FREE_FAILURES - 1][0]) + GLOBAL_WINDOW_S - now
        return min(THROTTLE_CAP_S, max(own, shared)), int(row[0][1]) if row else 0

    def failures(self, account: str) -> int:
        self._ensure()
        row = self.db.fetchone(
            "SELECT failures FROM sign_in_accounts WHERE account = ?", (account,)
        )
        return int(row[0]) if row else 0

    def fail(self, account: str) -> float:
        """Count a failure; returns the wait now imposed on the account's next attempt. One
        transaction, the count raised in place: two replicas failing at once count two."""
        now = self._clock()
        self._ensure()
        with self.db.transaction() as cur:
            cur.execute(
                "INSERT INTO sign_in_accounts (account, failures, locked_until) VALUES (?, 1, ?) "
                "ON CONFLICT (account) DO UPDATE SET failures = sign_in_accounts.failures + 1",
                (account, now),
            )
            failures = int(
                cur.fetch("SELECT failures FROM sign_in_accounts WHERE account = ?", (account,))[0][
                    0
                ]
            )
            delay = throttle_delay(failures)
            cur.execute(
                "UPDATE sign_in_accounts SET locked_until = ? WHERE account = ?",
                (now + delay, account),
            )
            cur.execute("INSERT INTO sign_in_failures (at) VALUES (?)", (now,))
            cur.execute("DELETE FROM sign_in_failures WHERE at <= ?", (now - GLOBAL_WINDOW_S,))
        return delay

    def succeed(self, account: str) -> None:
        self._ensure()
        self.db.execute("DELETE FROM sign_in_accounts WHERE account = ?", (account,))


def account_key(users: Mapping[str, User], name: str) -> str:
    """The counter a sign-in attempt is charged to: the account, or one shared counter for
    names that are no account (so guessing names cannot grow the table)."""
    name = name.strip()
    return f"user:{name}" if name in users else UNKNOWN_ACCOUNT


def attempt(guard: SignInGuard, account: str, check: Callable[[], bool]) -> tuple[bool, str | None]:
    """Run `check()` unless the guard is holding; returns (ok, message for the user)."""
    wait = guard.wait_s(account)
    if wait > 0:
        return False, f"Too many failed attempts. Try again in {math.ceil(wait)} s."
    if check():
        guard.succeed(account)
        return True, None
    delay = guard.fail(account)
    if delay:
        return False, f"Wrong credentials. Next attempt allowed in {math.ceil(delay)} s."
    return False, "Wrong credentials."
