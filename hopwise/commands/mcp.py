"""`hopwise mcp`: the MCP server over stdio (for a desktop client that starts it) acting as one
configured user, or over streamable HTTP (`--http`) taking API keys."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    mcp = subparsers.add_parser("mcp", help="the MCP server: stdio, or streamable HTTP with keys")
    mcp.add_argument(
        "--user", default=None,
        help="stdio: the configured user whose groups apply (default: local, when no users "
        "are configured)",
    )  # fmt: skip
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    mcp.add_argument("--host", default=None, help="--http: address (HOPWISE_API_HOST)")
    mcp.add_argument("--port", type=int, default=None, help="--http: port (HOPWISE_API_PORT)")
    mcp.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hopwise.api.service import ApiService
    from hopwise.settings import load_settings

    settings = load_settings()
    service = ApiService(settings)
    try:
        if args.http:
            return _http(service, args)
        return _stdio(service, args)
    finally:
        service.close()


def _stdio(service: Any, args: argparse.Namespace) -> int:
    from hopwise.api.mcp_server import build_mcp
    from hopwise.api_keys import Caller
    from hopwise.users import LOCAL_USER, local_user

    users = service.users()
    if users:
        if not args.user:
            raise ValueError("users are configured: name the one whose groups apply, --user NAME")
        user = users.get(args.user)
        if user is None:
            raise ValueError(f"no user named {args.user!r} is configured")
        caller = Caller(user, user.admin, key_id="stdio", configured=True)
    else:
        if args.user not in (None, LOCAL_USER):
            raise ValueError(
                f"no users are configured: the local user applies (--user {LOCAL_USER})"
            )
        caller = Caller(local_user(), False, key_id="stdio", configured=False)
    service.open()
    build_mcp(service, stdio_caller=caller).run("stdio")
    return 0


def _http(service: Any, args: argparse.Namespace) -> int:
    import uvicorn

    from hopwise.api.app import create_app

    settings = service.settings
    service.open()
    config = uvicorn.Config(
        create_app(service), host=args.host or settings.api_host,
        port=args.port or settings.api_port, log_level="warning", server_header=False,
    )  # fmt: skip
    uvicorn.Server(config).run()
    return 0
