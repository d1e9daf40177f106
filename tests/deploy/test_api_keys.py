"""API keys on both engines of the deployment's database (SQLite file, PostgreSQL): made with
only a hash kept, found by id, revoked at once for every replica, migrated once; who a key acts
as is read from the users config at each use; the rate limit and the key throttle."""

from __future__ import annotations

import pytest

from hopwise.api.service import UNKNOWN_KEY, RateLimit
from hopwise.api_keys import ApiKeyError, ApiKeys, caller_of, key_id_of
from hopwise.database import Database
from hopwise.users import UNKNOWN_ACCOUNT, SignInGuard, User, local_user
from tests.deploy.conftest import Databases

USERS = {
    "ann": User("ann", ("all", "finance"), "pw-ann", admin=True),
    "bob": User("bob", ("all",), "pw-bob"),
}


def test_a_key_is_kept_as_a_hash_and_revoked_for_every_replica(databases: Databases) -> None:
    one, two = ApiKeys(databases.open()), ApiKeys(databases.open())  # two replicas
    info, key = one.create("bob", USERS, label="  slack   bot ")
    assert key_id_of(key) == info.key_id and info.label == "slack bot"
    rows = one.db.fetch("SELECT * FROM hopwise_api_keys")
    assert key not in repr(rows) and key.split("_", 2)[2] not in repr(rows)
    found = two.verify(key)
    assert found is not None and (found.key_id, found.user) == (info.key_id, "bob")
    assert two.verify(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert two.verify("hwk_short") is None and two.verify("") is None
    assert [k.key_id for k in two.list()] == [info.key_id]
    assert one.revoke(info.key_id) and not one.revoke(info.key_id)
    assert two.verify(key) is None  # at once, on the other replica too
    assert two.list()[0].revoked_at is not None
    version = one.db.fetchone("SELECT version FROM hopwise_schema WHERE component = 'api_keys'")
    assert version == (1,)


def test_who_a_key_acts_as_comes_from_the_config_at_each_use(db: Database) -> None:
    keys = ApiKeys(db)
    info, _ = keys.create("bob", USERS)
    assert caller_of(info, USERS).user.groups == ("all",)  # type: ignore[union-attr]
    moved = {**USERS, "bob": User("bob", ("all", "ops"), "pw-bob")}
    assert caller_of(info, moved).user.groups == ("all", "ops")  # type: ignore[union-attr]
    assert caller_of(info, {"ann": USERS["ann"]}) is None  # bob left the config
    assert caller_of(keys.create("ann", USERS)[0], USERS).admin  # type: ignore[union-attr]
    with pytest.raises(ApiKeyError, match="no user named 'nobody'"):
        keys.create("nobody", USERS)
    with pytest.raises(ApiKeyError, match="admin = true"):
        keys.create("bob", USERS, admin=True)  # admins are users marked admin here
    with pytest.raises(ApiKeyError, match="--user local"):
        keys.create("bob", {})
    local, _ = keys.create("local", {}, admin=True)  # no users: the admin password's way
    caller = caller_of(local, {})
    assert caller is not None and caller.admin and caller.user == local_user()
    assert not caller.configured and caller.sees_scores


def test_the_rate_limit_refills_over_the_minute() -> None:
    now = [0.0]
    limit = RateLimit(3, clock=lambda: now[0])
    assert [limit.take("k") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limit.take("k") == pytest.approx(20.0)  # a token every 20 s
    assert limit.take("other") == 0.0  # per key
    now[0] = 20.0
    assert limit.take("k") == 0.0
    assert RateLimit(0).take("k") == 0.0  # 0: no limit


def test_a_known_keys_failures_are_its_own(db: Database) -> None:
    guard = SignInGuard(db)
    for _ in range(40):  # guessing random keys: the shared counter (kept on both engines)
        guard.fail(UNKNOWN_KEY)
    assert guard.failures(UNKNOWN_KEY) == 40
    guard.fail(UNKNOWN_ACCOUNT)  # the sign-in form's shared counter, too
    assert guard.failures(UNKNOWN_ACCOUNT) == 1
    assert guard.wait_s("api-key:abc") > 0  # as a sign-in would wait
    assert guard.check("api-key:abc", overall=False) == (0.0, 0)  # a known key does not
