"""Every API error is JSON `{"status": N, "message": "in words"}`, never a traceback: the
exception handlers, and a body-size gate that refuses an oversize request before reading it.

The OpenAI-compatible routes (/v1/...) also carry OpenAI's `{"error": {...}}` object, so the
official clients show the same words.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from secrets import token_hex
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graph.conversations import ThreadAccessError
from hopwise.database import StoreUnavailable

LOG = logging.getLogger("hopwise.api")
NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


class ApiError(Exception):
    """An error the caller is told about: its HTTP status and a message in words."""

    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


NOT_FOUND_THREAD = "no such thread, or it is not yours"


def error_body(status: int, message: str, path: str = "", **extra: Any) -> dict[str, Any]:
    """The JSON of an error; /v1 paths add OpenAI's error object."""
    body: dict[str, Any] = {"status": status, "message": message, **extra}
    if path.startswith("/v1/"):
        body["error"] = {
            "message": message,
            "type": OPENAI_TYPES.get(
                status, "server_error" if status >= 500 else "invalid_request_error"
            ),
            "code": status,
        }
    return body


def error_response(
    status: int, message: str, path: str = "", headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(
        error_body(status, message, path, **extra),
        status_code=status,
        headers={**NO_STORE, **(headers or {})},
    )


def field_message(error: dict[str, Any]) -> str:
    """One validation error in words: 'question: the field is required'."""
    where = ".".join(str(p) for p in error.get("loc", ()) if p not in ("body",)) or "the body"
    kind = str(error.get("type", ""))
    if kind == "extra_forbidden":
        return f"{where}: unknown field (see /api/v1/openapi.json for the fields this takes)"
    if kind == "missing":
        return f"{where}: this field is required"
    if kind == "json_invalid":
        return "the body is not valid JSON"
    return f"{where}: {error.get('msg', 'invalid value')}"


def install(app: FastAPI, redact: Callable[[str], str]) -> None:
    """Attach the handlers: words for the caller, a reference in the log for a 500."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, redact(exc.message), request.url.path, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [field_message(dict(e)) for e in exc.errors()]
        status = 400 if any("not valid JSON" in e for e in errors) else 422
        return error_response(status, "; ".join(errors[:5]), request.url.path, errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        words = {
            400: "the body cannot be read: send UTF-8 JSON",
            404: "no such endpoint (see /api/v1/openapi.json)",
            405: "method not allowed",
        }
        message = words.get(exc.status_code) or str(exc.detail)
        return error_response(exc.status_code, message, request.url.path)

    @app.exception_handler(ThreadAccessError)
    async def no_thread(request: Request, exc: ThreadAccessError) -> JSONResponse:
        return error_response(404, NOT_FOUND_THREAD, request.url.path)

    @app.exception_handler(StoreUnavailable)
    async def unavailable(request: Request, exc: StoreUnavailable) -> JSONResponse:
        message = redact(" ".join(str(exc).split()))
        return error_response(503, message, request.url.path, {"Retry-After": "5"})

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return internal_error(request.url.path, exc)


def internal_error(path: str, exc: BaseException) -> JSONResponse:
    """A 500 that names a reference found in the server log, never the exception."""
    reference = token_hex(4)
    LOG.error("API error %s on %s", reference, path, exc_info=exc)
    message = f"internal error (reference {reference}; the server log has the details)"
    return error_response(500, message, path)


class BodyLimit:
    """Refuses a request body over its limit with 413, from Content-Length before anything is
    read, or as soon as a streamed body passes it: then the 413 is sent at once, the app is told
    the client left, and nothing it sends afterwards goes out. `limit_for(scope)` gives the
    limit in bytes for a request."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[Scope], int]) -> None:
        self.app, self.limit_for = app, limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await too_large(scope, send, limit)
            return
        seen, refused, started = 0, False, False

        async def counted() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    refused = True
                    if not started:
                        await too_large(scope, send, limit)
                    return {"type": "http.disconnect"}
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 went out; the app's own answer does not
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except Exception:
            if not refused:
                raise


async def too_large(scope: Scope, send: Send, limit: int) -> None:
    size = f"{limit / 1024 / 1024:.0f} MB" if limit >= 1024 * 1024 else f"{limit // 1024} KB"
    body = json.dumps(
        error_body(413, f"the request body is larger than {size}", str(scope.get("path", "")))
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
