"""`hopwise serve`: the REST API, the OpenAI-compatible endpoint and MCP over HTTP, on uvicorn.

On the embedded default (Milvus Lite in the data dir) this process owns the knowledge base,
as `streamlit run ui/app.py` does: run one of them per data dir, or give both a Milvus server
(HOPWISE_MILVUS_URI) to run them side by side (docs/api.md, "Beside the app")."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser(
        "serve", help="the REST API, /v1/chat/completions and MCP over HTTP (docs/api.md)"
    )
    serve.add_argument("--host", default=None, help="address to listen on (HOPWISE_API_HOST)")
    serve.add_argument("--port", type=int, default=None, help="port (HOPWISE_API_PORT, 8000)")
    serve.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from hopwise.api.app import create_app
    from hopwise.api.service import ApiService
    from hopwise.settings import load_settings

    settings = load_settings()
    host = args.host or settings.api_host
    port = args.port or settings.api_port
    service = ApiService(settings)
    try:
        service.open()  # before listening: a locked or unreachable store is one line, here
    except BaseException:
        service.close()
        raise
    print(
        f"Hopwise API on http://{host}:{port}/api/v1 (OpenAPI: /api/v1/openapi.json, "
        "OpenAI-compatible: /v1, MCP: /mcp)",
        file=sys.stderr,
        flush=True,
    )
    if not any(key.active for key in service.keys.list()):
        print(
            "Hopwise API: no API key yet; make one with `hopwise keys create` (every request "
            "but /api/v1/health and /api/v1/ready needs one)",
            file=sys.stderr,
            flush=True,
        )
    config = uvicorn.Config(
        create_app(service), host=host, port=port, log_level="warning", server_header=False
    )
    uvicorn.Server(config).run()
    return 0
