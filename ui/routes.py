"""The HTTP side of Hopwise beside Streamlit's own routes (mounted by `ui/app.py`'s st.App).

- `POST /hopwise/session` turns a sign-in's one-time code into the session cookie, set here
  with HttpOnly, SameSite=Strict and (over HTTPS) Secure: page scripts never see it.
- `POST /hopwise/signout` revokes the cookie's session and drops the cookie.
- `GET /hopwise/file/<ticket>` serves a download drawn on a page (`ui.files`): the request is
  signed in again from its cookie, must be the ticket's user, and the file is built for the user
  as the configuration knows them now.
- A gate in front of everything closes `/_stcore/metrics` unless HOPWISE_METRICS=on.
- `script_error` turns an exception in a page into one line with a reference that matches a log
  line, never a traceback.

Every handler answers in a few words; none of them ever shows an exception's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from secrets import token_hex
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from hopwise.database import StoreUnavailable
from ui.auth import HANDOFFS, SESSION_COOKIE, admin_by_password, load_users, local_user
from ui.files import FILE_ROUTE, Download, Reader, Refused, base_path, fetch

LOG = logging.getLogger("hopwise.web")
NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
CLOSED_PATHS = ("/_stcore/metrics",)
START_AFTER_S = (
    6.0  # the knowledge base opens this long after the server, or once a first page has drawn
)


def _text(message: str, status: int) -> Response:
    return PlainTextResponse(message, status_code=status, headers=NO_STORE)


def request_reader(request: Request) -> Reader | None:
    """Who sent this request: the local user when no users are configured, else the user whose
    valid session the HttpOnly cookie carries (None: not signed in, expired, revoked)."""
    from ui.services import cached_session_store, get_settings, read_secrets

    settings = get_settings()
    users = load_users(settings, read_secrets())
    if not users:
        return Reader(local_user(), admin=True, configured=False)  # the ticket says if unlocked
    token = request.cookies.get(SESSION_COOKIE) or ""
    try:
        user = cached_session_store().verify(token, users) if token else None
    except StoreUnavailable:  # the session store cannot be opened: nobody is signed in
        user = None
    if user is None:
        return None
    return Reader(user, admin=admin_by_password(users))


def same_origin(request: Request) -> bool:
    """A POST from a page of this server: its Origin names the host the request was sent to."""
    return origin_allowed(request.headers.get("origin") or "", request.headers)


def origin_allowed(origin: str, headers: Mapping[str, str]) -> bool:
    """Whether a page at `origin` is one of this app's: the origin's host and port are those
    the request was sent to (Host, or X-Forwarded-Host from a proxy), or it is listed in
    HOPWISE_ALLOWED_ORIGINS. A browser cannot set either header on a page's behalf, and
    cookies are not separated by port, so another app on the same host fails this."""
    if not origin:
        return False
    netloc = urlsplit(origin).netloc.lower()
    hosts = {
        (headers.get("host") or "").strip().lower(),
        (headers.get("x-forwarded-host") or "").split(",")[0].strip().lower(),
    } - {""}
    return (bool(netloc) and netloc in hosts) or origin.rstrip("/").lower() in _listed_origins()


def _listed_origins() -> set[str]:
    from ui.services import get_settings

    listed = get_settings().allowed_origins.split(",")
    return {o.strip().rstrip("/").lower() for o in listed if o.strip()}


def _cookie(request: Request) -> dict[str, Any]:
    """The session cookie's attributes: HttpOnly, Strict, the app's path, Secure over HTTPS."""
    return {
        "path": base_path() or "/",
        "secure": request.url.scheme == "https",
        "httponly": True,
        "samesite": "strict",
    }


async def session(request: Request) -> Response:
    if not same_origin(request):
        return _text("Sign in from the app's own page.", 403)
    try:
        code = (await request.json()).get("code", "")
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        code = ""
    token = HANDOFFS.take(code) if isinstance(code, str) else None
    if token is None:
        return _text("This sign-in has expired; sign in again.", 403)
    from ui.services import cached_session_store

    response = Response(status_code=204, headers=NO_STORE)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=cached_session_store().max_age_s,
        **_cookie(request),
    )
    return response


async def signout(request: Request) -> Response:
    if not same_origin(request):
        return _text("Sign out from the app's own page.", 403)
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        from ui.services import cached_session_store

        with contextlib.suppress(StoreUnavailable):  # the cookie goes all the same
            await asyncio.to_thread(cached_session_store().revoke, token)
    response = Response(status_code=204, headers=NO_STORE)
    response.delete_cookie(SESSION_COOKIE, **_cookie(request))
    return response


def _disposition(file_name: str) -> str:
    return f"attachment; filename*=utf-8''{quote(file_name, safe='')}"


async def file(request: Request) -> Response:
    ticket = str(request.path_params.get("ticket", ""))
    try:
        download: Download = await asyncio.to_thread(_fetch, request, ticket)
    except Refused as refused:
        return _text(str(refused), refused.status)
    except Exception:  # noqa: BLE001 - logged with a reference, never shown
        ref = token_hex(4)
        LOG.exception("download failed [ref %s]", ref)
        return _text(f"The file could not be prepared (reference {ref}).", 500)
    headers = {
        **NO_STORE,
        "Content-Disposition": _disposition(download.file_name),
        "Content-Security-Policy": "sandbox; default-src 'none'",
    }
    return Response(download.data, media_type=download.mime, headers=headers)


def _fetch(request: Request, ticket: str) -> Download:
    return fetch(ticket, request_reader(request))


def routes() -> list[Route]:
    base = base_path()
    return [
        Route(f"{base}/hopwise/session", session, methods=["POST"]),
        Route(f"{base}/hopwise/signout", signout, methods=["POST"]),
        Route(f"{base}/{FILE_ROUTE}/{{ticket}}", file, methods=["GET"]),
    ]


class Gate:
    """ASGI middleware in front of Streamlit: closed paths answer 404, and a websocket opened
    by a page of another origin is refused (403) before Streamlit sees it.

    Streamlit's own check lets any page on localhost or the server's addresses open its
    websocket, whatever the port, and the session cookie goes with it (cookies are not
    separated by port): another web app on the same host could then ask questions as the
    signed-in user and read the answers. Browsers always send Origin on a websocket; a
    client without one is no browser and carries no cookie it was not given."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _closed(str(scope.get("path", ""))):
            await _text("Not found", 404)(scope, receive, send)
            return
        if scope["type"] == "websocket" and not _websocket_allowed(scope):
            await receive()  # the client's connect
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return
        await self.app(scope, receive, send)


def _websocket_allowed(scope: Scope) -> bool:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    origin = headers.get("origin")
    if origin is None:
        return True
    if origin_allowed(origin, headers):
        return True
    LOG.warning("refused a websocket from another origin: %s", origin[:200])
    return False


def _closed(path: str) -> bool:
    from ui.services import get_settings

    return path.endswith(CLOSED_PATHS) and not get_settings().metrics


@asynccontextmanager
async def warm_up(_app: Any) -> AsyncIterator[None]:
    """At server start, open the knowledge base (store, models, graph) in a background thread:
    the first page finds it ready, or being built, instead of starting it (ui.services); and
    print the admin password Hopwise made, when none is set."""
    from ui.services import WARMUP, announce_admin_password

    announce_admin_password()
    WARMUP.enable(after_s=START_AFTER_S)
    preload = threading.Thread(target=_preload_pages, name="hopwise-preload", daemon=True)
    preload.start()
    yield


# what the chat page imports (ui/main.py itself runs the page, so it is not imported here)
PAGE_MODULES = ("ui.widgets", "ui.chat_list", "ui.streaming", "ui.welcome", "ui.export",
                "ui.question_queue")  # fmt: skip


def _preload_pages() -> None:
    """Import what the first page runs while the browser is still loading Streamlit's scripts
    (a second or two), so the page's first run only draws."""
    import importlib

    for name in PAGE_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page imports it again and shows any error
            LOG.debug("preloading %s failed", name, exc_info=True)


def middleware() -> list[Middleware]:
    return [Middleware(Gate)]


def script_error(exc: Exception) -> bool:
    """An exception a page did not handle: logged with a reference; the page shows one line."""
    import streamlit as st

    ref = log_reference(exc)
    st.error(
        f"Something went wrong on this page (reference {ref}). Reload the page; if it happens "
        "again, give the reference to your administrator."
    )
    return True


def log_reference(exc: BaseException) -> str:
    """Log an exception under a new short reference and return it (for the page guard)."""
    ref = token_hex(4)
    LOG.error("page failed [ref %s]", ref, exc_info=exc)
    return ref
