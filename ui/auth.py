"""Who is asking and who may administer: users, groups, the admin password, failure throttling.

Pure functions over plain mappings so they are testable without Streamlit; the pages pass in
`st.secrets` (as a dict) and the Settings.
"""

from __future__ import annotations

import hmac
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

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
        raise AuthConfigError('users must map a name to {"password": ..., "groups": [...]}')
    users: dict[str, User] = {}
    for name, spec in raw.items():
        if not isinstance(spec, Mapping) or not spec.get("password"):
            raise AuthConfigError(f"user {name!r} needs a password")
        groups = spec.get("groups") or []
        if isinstance(groups, str):
            groups = [groups]
        users[str(name)] = User(str(name), with_public_group(list(groups)), str(spec["password"]))
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


def admin_password(settings: Settings, secrets: Mapping[str, Any]) -> str | None:
    """HOPWISE_ADMIN_PASSWORD wins over `admin_password` in secrets.toml; None if neither is set."""
    if settings.admin_password and settings.admin_password.get_secret_value():
        return settings.admin_password.get_secret_value()
    value = secrets.get("admin_password")
    return str(value) if value else None


def throttle_delay(failures: int) -> float:
    """Seconds to wait after `failures` consecutive failures: the first is free, then doubling."""
    if failures < 2:
        return 0.0
    return min(THROTTLE_CAP_S, THROTTLE_BASE_S * 2 ** (failures - 2))


class SessionLike(Protocol):
    """What Throttle needs of Streamlit's session_state (or a dict in tests)."""

    def setdefault(self, key: str, default: Any) -> Any: ...

    def __setitem__(self, key: str, value: Any) -> None: ...


class Throttle:
    """Per-session failure counter kept in a mutable mapping (Streamlit's session_state)."""

    def __init__(self, state: SessionLike, key: str, clock=time.monotonic) -> None:
        self._state = state
        self._key = key
        self._clock = clock

    def _record(self) -> dict[str, float]:
        return self._state.setdefault(self._key, {"failures": 0, "locked_until": 0.0})

    def wait_s(self) -> float:
        """How long until the next attempt is allowed (0 when it is allowed now)."""
        return max(0.0, self._record()["locked_until"] - self._clock())

    def failures(self) -> int:
        return int(self._record()["failures"])

    def fail(self) -> float:
        """Count a failure; returns the delay now imposed on the next attempt."""
        record = self._record()
        record["failures"] += 1
        delay = throttle_delay(int(record["failures"]))
        record["locked_until"] = self._clock() + delay
        return delay

    def succeed(self) -> None:
        self._state[self._key] = {"failures": 0, "locked_until": 0.0}


def attempt(throttle: Throttle, check) -> tuple[bool, str | None]:
    """Run `check()` unless the throttle is holding; returns (ok, message for the user)."""
    wait = throttle.wait_s()
    if wait > 0:
        return False, f"Too many failed attempts. Try again in {math.ceil(wait)} s."
    if check():
        throttle.succeed()
        return True, None
    delay = throttle.fail()
    if delay:
        return False, f"Wrong credentials. Next attempt allowed in {math.ceil(delay)} s."
    return False, "Wrong credentials."
