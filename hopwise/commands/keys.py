"""`hopwise keys create|list|revoke`: API keys in the deployment's database (only a hash)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any


def register(subparsers: Any) -> None:
    keys = subparsers.add_parser("keys", help="API keys for `hopwise serve` and `hopwise mcp`")
    keys.set_defaults(light=True)  # keys live in the database: the knowledge base stays shut
    sub = keys.add_subparsers(dest="keys_command", required=True)
    create = sub.add_parser("create", help="make a key acting as one user (shown once)")
    create.add_argument(
        "--user", default=None, help="the configured user it acts as (default: local, when no "
        "users are configured)",
    )  # fmt: skip
    create.add_argument(
        "--admin", action="store_true",
        help="an admin key (only where no user is marked admin, as the admin password)",
    )  # fmt: skip
    create.add_argument("--label", default="", help="what the key is for")
    create.add_argument("--json", action="store_true", help="print one JSON object")
    create.set_defaults(handler=run_create)
    listing = sub.add_parser("list", help="every key: id, user, admin, label, used, revoked")
    listing.add_argument("--json", action="store_true", help="print a JSON list")
    listing.set_defaults(handler=run_list)
    revoke = sub.add_parser("revoke", help="revoke a key at once, everywhere")
    revoke.add_argument("key_id", metavar="KEY_ID", help="the id (12 hex characters)")
    revoke.set_defaults(handler=run_revoke)


def _keys() -> Any:
    from hopwise.api_keys import ApiKeys, key_database
    from hopwise.settings import load_settings

    return ApiKeys(key_database(load_settings()))


def _users() -> Any:
    from hopwise.settings import load_settings
    from hopwise.users import load_users, read_secrets_files

    return load_users(load_settings(), read_secrets_files())


def run_create(args: argparse.Namespace) -> int:
    from hopwise.users import LOCAL_USER

    users = _users()
    keys = _keys()
    try:
        info, key = keys.create(
            args.user or ("" if users else LOCAL_USER), users, admin=args.admin, label=args.label
        )
    finally:
        keys.db.close()
    if args.json:
        print(json.dumps({**info.model_dump(), "key": key}, indent=2))
        return 0
    print(key)
    print(
        f"key {info.key_id} acts as {info.user}{' (admin)' if info.admin else ''}; it is shown "
        "only now: keep it somewhere safe",
        file=sys.stderr,
    )
    return 0


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "-"


def run_list(args: argparse.Namespace) -> int:
    keys = _keys()
    try:
        found = keys.list()
    finally:
        keys.db.close()
    if args.json:
        print(json.dumps([k.model_dump() for k in found], indent=2))
        return 0
    if not found:
        print("no keys")
        return 0
    print(
        f"{'KEY_ID':<12}  {'USER':<16}  {'ADMIN':<5}  {'CREATED':<16}  {'LAST USED':<16}  STATE  LABEL"
    )
    for k in found:
        state = "revoked" if k.revoked_at else "active"
        print(
            f"{k.key_id:<12}  {k.user:<16}  {'yes' if k.admin else 'no':<5}  "
            f"{_when(k.created_at):<16}  {_when(k.last_used):<16}  {state:<7}  {k.label}"
        )
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    keys = _keys()
    try:
        revoked = keys.revoke(args.key_id)
    finally:
        keys.db.close()
    if not revoked:
        print(f"hopwise: error: no active key with id {args.key_id!r}", file=sys.stderr)
        return 1
    print(f"revoked  {args.key_id}")
    return 0
