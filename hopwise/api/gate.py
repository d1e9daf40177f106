"""The key check in front of every protected route, before the request body is read: an
unknown, revoked or throttled key, or a reader on an admin route, is answered at once and its
body (a large upload, say) is never taken in. The check's `Caller` rides in the request's
state; the routes read it with the `caller` dependency."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Scope, Send

from hopwise.api.errors import ApiError, error_response
from hopwise.api.service import ApiService
from hopwise.api_keys import Caller

OPEN_PATHS = frozenset({"/api/v1/health", "/api/v1/ready", "/api/v1/openapi.json", "/api/v1/docs"})
PROTECTED = ("/api/v1/", "/v1/", "/mcp")
ADMIN_ONLY = {  # (method, path prefix) only an admin key may use
    ("POST", "/api/v1/documents"),
    ("DELETE", "/api/v1/documents/"),
    ("GET", "/api/v1/documents/status"),
}
CALLER = "hopwise_caller"
SERVICE = "hopwise_service"
ADMIN_REQUIRED = "this needs an admin key (a key of an admin user)"

bearer = HTTPBearer(auto_error=False, description="An API key: `hopwise keys create`.")


def protected(path: str) -> bool:
    return path not in OPEN_PATHS and (path == "/mcp" or path.startswith(PROTECTED))


def admin_only(method: str, path: str) -> bool:
    return any(method == m and path.startswith(prefix) for m, prefix in ADMIN_ONLY)


class KeyGate:
    """ASGI middleware: authenticate protected paths, hand the caller on in the scope."""

    def __init__(self, app: ASGIApp, service: ApiService) -> None:
        self.app, self.service = app, service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state[SERVICE] = self.service
        path = str(scope.get("path", ""))
        if scope.get("method") == "OPTIONS" or not protected(path):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            who = await anyio.to_thread.run_sync(
                self.service.authenticate, headers.get("authorization")
            )
            if admin_only(str(scope.get("method")), path) and not who.admin:
                raise ApiError(403, ADMIN_REQUIRED)
        except ApiError as exc:
            message = self.service.settings.redact(exc.message)
            await error_response(exc.status, message, path, exc.headers)(scope, receive, send)
            return
        state[CALLER] = who
        await self.app(scope, receive, send)


def caller(
    request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Caller:
    """The request's caller, as the gate checked it (401 if the gate did not run)."""
    who = getattr(request.state, CALLER, None)
    if not isinstance(who, Caller):
        raise ApiError(401, "an API key is required")
    return who


def service_of(request: Request) -> ApiService:
    service = getattr(request.state, SERVICE, None)
    if not isinstance(service, ApiService):
        raise ApiError(500, "the API is not set up")
    return service


def require_admin(who: Caller) -> None:
    if not who.admin:
        raise ApiError(403, ADMIN_REQUIRED)


Who = Annotated[Caller, Depends(caller)]
Svc = Annotated[ApiService, Depends(service_of)]
