"""Sign-in and admin-password rules: users config, public group, constant-time check, throttle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopwise.settings import Settings
from ui.auth import (
    GLOBAL_FREE_FAILURES,
    UNKNOWN_ACCOUNT,
    AuthConfigError,
    SignInGuard,
    account_key,
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


def test_with_no_admin_password_set_one_is_made_once_and_kept_private(tmp_path: Path) -> None:
    made = admin_password(settings(data_dir=tmp_path), {})
    assert made and len(made) >= 20
    kept = tmp_path / "admin-password"
    assert kept.read_text(encoding="utf-8").strip() == made
    assert kept.stat().st_mode & 0o777 == 0o600  # the server's own user only
    assert admin_password(settings(data_dir=tmp_path), {}) == made  # the same after a restart
    assert admin_password(settings(data_dir=tmp_path, admin_password="env"), {}) == "env"
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    assert admin_password(settings(data_dir=blocked / "data"), {}) is None  # cannot be made


def test_throttle_doubles_after_the_first_failure_and_is_capped() -> None:
    assert [throttle_delay(n) for n in range(5)] == [0, 0, 1, 2, 4]
    assert throttle_delay(50) == 60


def test_attempts_are_held_back_until_the_delay_passes(tmp_path) -> None:
    now = [100.0]
    guard = SignInGuard(tmp_path / "sign_in.sqlite", clock=lambda: now[0])
    assert attempt(guard, "user:ann", lambda: False) == (False, "Wrong credentials.")
    ok, message = attempt(guard, "user:ann", lambda: False)
    assert not ok and "1 s" in message
    checked = []
    ok, message = attempt(guard, "user:ann", lambda: checked.append(1) or True)
    assert not ok and "Too many failed attempts" in message and not checked
    assert attempt(guard, "user:bob", lambda: True) == (True, None)  # other accounts unaffected
    now[0] += 1.01
    assert attempt(guard, "user:ann", lambda: True) == (True, None)
    assert guard.failures("user:ann") == 0


def test_the_count_survives_a_new_session_and_a_restart(tmp_path) -> None:
    now = [100.0]
    path = tmp_path / "sign_in.sqlite"
    for _ in range(8):
        SignInGuard(path, clock=lambda: now[0]).fail("admin")  # a new guard per "reload"
    again = SignInGuard(path, clock=lambda: now[0])
    assert again.failures("admin") == 8 and again.wait_s("admin") == 60  # capped, not locked
    now[0] += 60.5
    assert again.wait_s("admin") == 0


def test_spraying_many_accounts_slows_every_sign_in(tmp_path) -> None:
    now = [100.0]
    guard = SignInGuard(tmp_path / "sign_in.sqlite", clock=lambda: now[0])
    for i in range(GLOBAL_FREE_FAILURES):
        now[0] += 0.5
        guard.fail(f"user:u{i}")  # one guess each: no account is held back by itself
    assert 0 < guard.wait_s("user:fresh") <= 60
    now[0] += 61
    assert guard.wait_s("user:fresh") == 0


def test_unknown_names_share_one_counter() -> None:
    users = {"ann": object()}
    assert account_key(users, " ann ") == "user:ann"  # type: ignore[arg-type]
    assert account_key(users, "x1") == account_key(users, "x2") == UNKNOWN_ACCOUNT  # type: ignore[arg-type]


def test_groups_must_be_a_list_of_names() -> None:
    with pytest.raises(AuthConfigError, match="groups must be a list"):
        load_users(settings(users='{"zed": {"password": "x", "groups": 5}}'), {})
