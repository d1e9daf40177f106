"""The ASGI app of `hopwise serve`: the REST API under /api/v1 (OpenAPI at
/api/v1/openapi.json), the OpenAI-compatible /v1, and MCP over streamable HTTP at /mcp, all
over one `ApiService` (one `Hopwise`, the same settings, database and knowledge base as the
pages). Every protected request passes the body-size gate, then the key gate."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastapi import FastAPI
from starlette.responses import JSONResponse
from starlette.types import Scope

from hopwise.api import ask, documents, openai_compat, threads
from hopwise.api.errors import NO_STORE, BodyLimit, install
from hopwise.api.gate import KeyGate, Svc
from hopwise.api.mcp_server import build_mcp, http_routes
from hopwise.api.schemas import Health, Readiness
from hopwise.api.service import ApiService

DESCRIPTION = """Cited answers from your team's documents, for scripts, bots and tools.

Every request but health and readiness carries an API key (`Authorization: Bearer hwk_…`,
made with `hopwise keys create` or on the Admin page). A key acts as one user: their groups
are inside every search, their threads are theirs alone. Errors are JSON
`{"status", "message"}`. The full guide: docs/api.md."""


def create_app(service: ApiService) -> FastAPI:
    """The app over `service`; its lifespan opens the knowledge base and runs MCP sessions."""
    mcp = build_mcp(service)
    mcp_routes = http_routes(mcp)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(service.open)
        async with mcp.session_manager.run():
            try:
                yield
            finally:
                await anyio.to_thread.run_sync(service.close)

    app = FastAPI(
        title="Hopwise API",
        version="1",
        description=DESCRIPTION,
        openapi_url="/api/v1/openapi.json",
        docs_url="/api/v1/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    install(app, service.settings.redact)
    for module in (ask, threads, documents, openai_compat):
        app.include_router(module.router)
    app.router.routes.extend(mcp_routes)

    @app.get("/api/v1/health", response_model=Health, tags=["health"], summary="Liveness")
    def health() -> Health:
        """200 while the process serves requests (no key needed), and the model's state."""
        return Health(llm=str(service.llm_health().get("state", "off")))

    @app.get(
        "/api/v1/ready",
        response_model=Readiness,
        tags=["health"],
        responses={503: {"model": Readiness}},
        summary="Readiness for a load balancer",
    )
    def ready(svc: Svc) -> Any:
        """Store, database and embedder, each `ok` or why not; 503 until the store and the
        database answer (a missing embedder leaves keyword search: still ready)."""
        report = readiness(svc)
        return JSONResponse(
            report.model_dump(), status_code=200 if report.ready else 503, headers=NO_STORE
        )

    def body_limit(scope: Scope) -> int:
        settings = service.settings
        if scope.get("method") == "POST" and scope.get("path") == "/api/v1/documents":
            return int(settings.api_max_upload_request_mb * 1024 * 1024)
        return settings.api_max_request_kb * 1024

    app.add_middleware(KeyGate, service=service)
    app.add_middleware(BodyLimit, limit_for=body_limit)
    return app


def readiness(service: ApiService) -> Readiness:
    """What `/api/v1/ready` reports, part by part."""
    try:
        runner = service.runner
    except Exception as exc:  # noqa: BLE001 - still opening
        why = getattr(exc, "message", str(exc))
        return Readiness(ready=False, store=why, database=why, embedder=why)
    try:
        runner.count_chunks()
        store = "ok"
    except Exception as exc:  # noqa: BLE001 - reported, in words
        store = service.settings.redact(" ".join(str(exc).split()) or type(exc).__name__)
    database = runner.history_problem or "ok"
    try:
        _, _, problem = runner.kb_health()
    except Exception as exc:  # noqa: BLE001
        problem = " ".join(str(exc).split())
    embedder = service.settings.redact(problem) if problem else "ok"
    return Readiness(
        ready=store == "ok" and database == "ok",
        store=store,
        database=database,
        embedder=embedder,
        llm_health=service.llm_health(),
    )
