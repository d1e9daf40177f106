"""What every API request shares: the one `Hopwise` of the process (the same facade the CLI and
the pages use), the key table, the sign-in throttle, the users config, and the per-key rate
limit; and `authenticate`, which turns an Authorization header into a `Caller` or an ApiError.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hopwise.api.errors import ApiError
from hopwise.api_keys import ApiKeys, Caller, caller_of, key_database, key_id_of
from hopwise.database import Database, StoreUnavailable
from hopwise.settings import Settings
from hopwise.users import (
    AuthConfigError,
    SignInGuard,
    User,
    load_users,
    read_secrets_files,
)

if TYPE_CHECKING:
    from hopwise.app import Hopwise

UNKNOWN_KEY = "?unknown-api-key"  # every key id that was never made shares one counter
BEARER = {"WWW-Authenticate": "Bearer"}
BAD_KEY = (
    "invalid API key: send `Authorization: Bearer hwk_…` with a key from `hopwise keys create`"
)


class RateLimit:
    """Requests per minute per key, in this process (a token bucket refilled continuously)."""

    def __init__(self, per_minute: int, *, clock: Any = time.monotonic) -> None:
        self.per_minute, self._clock = per_minute, clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when the request may go now, else the seconds until it may."""
        if self.per_minute <= 0:
            return 0.0
        now, rate = self._clock(), self.per_minute / 60.0
        with self._lock:
            tokens, when = self._buckets.get(key, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - when) * rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / rate


class ApiService:
    """The process's shared parts. `runner` is opened by `open()` (the server's start)."""

    def __init__(
        self,
        settings: Settings,
        runner: Hopwise | None = None,
        *,
        secrets: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self._runner = runner
        self._secrets = secrets
        self._own_runner = runner is None
        self.keys_db: Database = key_database(settings)
        self.keys = ApiKeys(self.keys_db)
        guard_store = (
            self.keys_db if settings.database_url else settings.data_dir / "sign_in.sqlite"
        )
        self.guard = SignInGuard(guard_store)
        self.rate = RateLimit(settings.api_rate_per_minute)
        # questions answered at once by this process (each on a worker thread of its own)
        self.question_slots = threading.BoundedSemaphore(settings.api_concurrent_questions)
        self.started = time.time()

    # ---- the knowledge base

    def open(self) -> None:
        """Open the knowledge base (the embedded file is this process's from now on) and start
        the background embedding, as the app does."""
        if self._runner is None:
            from hopwise.app import Hopwise

            self._runner = Hopwise.from_settings(self.settings)
            self._runner.start_background_work()

    @property
    def runner(self) -> Hopwise:
        if self._runner is None:
            raise ApiError(503, "the knowledge base is still opening; try again in a moment")
        return self._runner

    def llm_health(self) -> dict[str, Any]:
        """The configured model's health for the open health endpoints: its state (ok,
        failing, bypassed), counts and the next probe, never an error text; state `off` without
        a model, `unknown` while the knowledge base is opening."""
        if not self.settings.llm_enabled:
            return {"state": "off"}
        health = self._runner.llm_health if self._runner is not None else None
        if health is None:
            return {"state": "unknown"}
        return {k: v for k, v in health.snapshot().items() if k != "last_error"}

    def close(self) -> None:
        if self._runner is not None and self._own_runner:
            self._runner.close()
            self._runner = None
        self.keys_db.close()

    # ---- who is asking

    def users(self) -> dict[str, User]:
        """The users config as it is now (secrets.toml, else HOPWISE_USERS)."""
        secrets = self._secrets if self._secrets is not None else read_secrets_files()
        return load_users(self.settings, secrets)

    def authenticate(self, authorization: str | None) -> Caller:
        """The caller of a request from its `Authorization: Bearer` header, or ApiError: 401
        (missing, malformed, unknown, revoked, its user gone), 429 (throttled after failures,
        as the sign-in form is, or over the rate limit), 503 (the key store is unreachable)."""
        scheme, _, key = (authorization or "").strip().partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            raise ApiError(401, BAD_KEY, headers=BEARER)
        try:
            users = self.users()
        except AuthConfigError as exc:
            raise ApiError(500, f"the users configuration cannot be read: {exc}") from exc
        key_id = key_id_of(key)
        try:
            found = self.keys.lookup(key_id) if key_id is not None else None
            account = f"api-key:{key_id}" if found is not None else UNKNOWN_KEY
            wait, failures = self.guard.check(account, overall=found is None)
            if wait > 0:
                raise ApiError(
                    429,
                    f"too many failed attempts with this key; try again in {math.ceil(wait)} s",
                    headers={"Retry-After": str(math.ceil(wait))},
                )
            if found is None or not self.keys.matches(found, key):
                self.guard.fail(account)  # a guess: counted, as a wrong password is
                raise ApiError(401, BAD_KEY, headers=BEARER)
            if failures:
                self.guard.succeed(account)
            info = found[0]
            if not info.active:
                raise ApiError(401, f"this key ({info.key_id}) was revoked", headers=BEARER)
            caller = caller_of(info, users)
            if caller is None:
                raise ApiError(
                    401, f"this key's user ({info.user}) is no longer configured", headers=BEARER
                )
        except StoreUnavailable as exc:
            raise ApiError(503, f"keys cannot be checked right now: {exc}") from exc
        wait = self.rate.take(caller.key_id)
        if wait > 0:
            raise ApiError(
                429,
                f"rate limit: {self.settings.api_rate_per_minute} requests a minute per key; "
                f"try again in {math.ceil(wait)} s",
                headers={"Retry-After": str(math.ceil(wait))},
            )
        return caller
