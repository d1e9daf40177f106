"""Sign-in and admin-password rules: users config, public group, constant-time check, throttle."""

from __future__ import annotations

import json

import pytest

from hopwise.settings import Settings
from ui.auth import (
    AuthConfigError,
    Throttle,
    admin_password,
    attempt,
    authenticate,
    load_users,
    throttle_delay,
)


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_users_from_secrets_win_and_always_read_the_public_group() -> None:
    secrets = {"users": {"ann": {"password": "pw", "groups": ["legal", "all", "legal"]}}}
    env_users = json.dumps({"zed": {"password": "x", "groups": ["hr"]}})
    users = load_users(settings(users=env_users), secrets)
    assert list(users) == ["ann"]
    assert users["ann"].groups == ("all", "legal")


def test_users_from_env_json_and_nothing_configured() -> None:
    users = load_users(settings(users='{"zed": {"password": "x", "groups": "hr"}}'), {})
    assert users["zed"].groups == ("all", "hr")
    assert load_users(settings(), {}) == {}


@pytest.mark.parametrize(
    "raw",
    ['{"zed": {"groups": ["hr"]}}', "not json", '["zed"]'],
    ids=["no-password", "bad-json", "list"],
)
def test_bad_users_config_is_a_clear_error(raw: str) -> None:
    with pytest.raises(AuthConfigError):
        load_users(settings(users=raw), {})


def test_authenticate_checks_name_and_password() -> None:
    users = load_users(settings(), {"users": {"ann": {"password": "pw", "groups": []}}})
    assert authenticate(users, "ann", "pw") == users["ann"]
    assert authenticate(users, "ann", "PW") is None
    assert authenticate(users, "bob", "pw") is None
    assert "pw" not in repr(users["ann"])


def test_admin_password_env_wins_over_secrets() -> None:
    assert admin_password(settings(admin_password="env"), {"admin_password": "file"}) == "env"
    assert admin_password(settings(), {"admin_password": "file"}) == "file"
    assert admin_password(settings(), {}) is None


def test_throttle_doubles_after_the_first_failure_and_is_capped() -> None:
    assert [throttle_delay(n) for n in range(5)] == [0, 0, 1, 2, 4]
    assert throttle_delay(50) == 60


def test_attempts_are_held_back_until_the_delay_passes() -> None:
    now = [100.0]
    state: dict = {}
    throttle = Throttle(state, "t", clock=lambda: now[0])
    assert attempt(throttle, lambda: False) == (False, "Wrong credentials.")
    ok, message = attempt(throttle, lambda: False)
    assert not ok and "1 s" in message
    checked = []
    ok, message = attempt(throttle, lambda: checked.append(1) or True)
    assert not ok and "Too many failed attempts" in message and not checked
    now[0] += 1.01
    assert attempt(throttle, lambda: True) == (True, None)
    assert throttle.failures() == 0
