"""`streamlit run ui/app.py` as users start it, spoken to over HTTP on loopback (no browser):
Hopwise's routes are mounted beside Streamlit's, the metrics endpoint is closed, the cookie
route takes nothing but a live one-time code from the app's own origin, and an unknown
download link says so without a byte of anything. The browser suite (test_browser_manage)
signs in and fetches what a reader's pages expose."""

from __future__ import annotations

import base64
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest

from tests.ui.test_browser import running_app


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("served") / "data"
    with running_app(data, HOPWISE_USERS='{"ana": {"password": "ana-pw", "groups": ["x"]}}') as at:
        yield at


def call(address: str, *, data: bytes | None = None, headers: dict[str, str] | None = None):
    request = urllib.request.Request(address, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), refused.read()


def websocket_status(address: str, origin: str | None) -> int:
    """The HTTP status of a websocket handshake to Streamlit's stream, from a page at
    `origin` (None: a client that is no browser): 101 opens it."""
    parts = urllib.parse.urlsplit(address)
    lines = [
        "GET /_stcore/stream HTTP/1.1",
        f"Host: {parts.netloc}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Protocol: streamlit",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status_line = conn.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_only_the_apps_own_pages_open_its_websocket(url: str) -> None:
    """Another web app on the same host (another port) would get the user's cookie with the
    handshake and could ask as them: Streamlit lets localhost on any port in, Hopwise not."""
    port = urllib.parse.urlsplit(url).port
    assert websocket_status(url, url) == 101  # the app's own page
    assert websocket_status(url, None) == 101  # no browser, so no ambient cookie
    for other in (
        f"http://127.0.0.1:{port + 1}",
        f"http://localhost:{port}",
        "http://evil.example",
    ):
        assert websocket_status(url, other) == 403, other


def test_the_app_serves_its_page_and_health(url: str) -> None:
    assert call(f"{url}/_stcore/health")[0] == 200
    status, _, body = call(url)
    assert status == 200 and b"<html" in body.lower()


def test_metrics_are_closed(url: str) -> None:
    status, _, body = call(f"{url}/_stcore/metrics")
    assert status == 404 and b"session" not in body.lower()


def test_the_cookie_route_wants_the_apps_origin_and_a_live_code(url: str) -> None:
    body = b'{"code": "' + b"A" * 32 + b'"}'
    json_type = {"Content-Type": "application/json"}
    for headers in (json_type, {**json_type, "Origin": "http://evil.example"}):
        status, reply_headers, _ = call(f"{url}/hopwise/session", data=body, headers=headers)
        assert status == 403 and "set-cookie" not in {k.lower() for k in reply_headers}
    origin = {**json_type, "Origin": url}
    status, reply_headers, _ = call(f"{url}/hopwise/session", data=body, headers=origin)
    assert status == 403 and "set-cookie" not in {k.lower() for k in reply_headers}
    status, _, _ = call(f"{url}/hopwise/session", data=b"not json", headers=origin)
    assert status == 403


def test_an_unknown_download_link_is_refused_and_not_cached(url: str) -> None:
    status, headers, body = call(f"{url}/hopwise/file/{'x' * 32}")
    assert status == 404 and b"expired" in body
    assert {k.lower(): v for k, v in headers.items()}["cache-control"] == "no-store"


def test_with_no_admin_password_set_the_server_prints_the_one_it_made(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Zero configuration: the server's console (and only it) shows the Admin page's password,
    the one kept in the data dir."""
    data = tmp_path_factory.mktemp("zero") / "data"
    with running_app(data, HOPWISE_ADMIN_PASSWORD="") as address:
        assert call(f"{address}/_stcore/health")[0] == 200
        made = (data / "admin-password").read_text(encoding="utf-8").strip()
        console = (data.parent / "streamlit.log").read_text(encoding="utf-8")
    assert f"The Admin page's password is: {made}" in console
    assert made.encode() not in files_besides_the_password(data)


def files_besides_the_password(data) -> bytes:  # noqa: ANN001 - a Path
    """Everything the server wrote under its data dir except the password file itself: the
    password lives in one file only."""
    return b"".join(
        p.read_bytes() for p in data.rglob("*") if p.is_file() and p.name != "admin-password"
    )
