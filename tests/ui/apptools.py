"""Helpers for the app tests (importable, unlike conftest)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.auth import LOCAL_USER, User
from ui.files import Download, Reader, fetch

APP = str(
    Path(__file__).resolve().parents[2] / "ui" / "main.py"
)  # the pages (ui/app.py wraps them)
ADMIN_PASSWORD = "correct horse battery staple"
# Debian's Chromium for the browser suites (`make browser`), never a test tool's own download.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def new_app(**secrets: object) -> AppTest:
    """The whole app (navigation + default Chat page), with optional secrets."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in secrets.items():
        at.secrets[key] = value
    return at


def texts(at: AppTest) -> str:
    """Everything the page printed as markdown, captions, alerts and status, one string."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for kind in (at.info, at.success, at.warning, at.error, at.subheader, at.title):
        parts += [e.value for e in kind]
    return "\n".join(str(p) for p in parts)


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


DOWNLOAD_LINK = re.compile(
    r'href="[^"]*/hopwise/file/(?P<ticket>[A-Za-z0-9_-]+)" download="(?P<name>[^"]*)"'
    r"[^>]*>(?:<span[^>]*>[^<]*</span>)?(?P<label>[^<]*)</a>"
)


def download_links(at: AppTest) -> list[tuple[str, str, str]]:
    """(label, file name, ticket) of every download link on the page (ui.files)."""
    found = []
    for element in at.get("html"):
        for link in DOWNLOAD_LINK.finditer(element.value):
            found.append(
                (html.unescape(link["label"]), html.unescape(link["name"]), link["ticket"])
            )
    return found


def download_labels(at: AppTest) -> list[str]:
    return [label for label, _, _ in download_links(at)]


def fetch_link(
    at: AppTest, label: str, user: User | None, *, admin: bool = False, name: str = ""
) -> Download:
    """Fetch a download link (by label, and file name when several share it) as
    `/hopwise/file/<ticket>` does for `user` as configured now (None: no session; `admin`: the
    admin password is this deployment's unlock). Raises ui.files.Refused."""
    tickets = [t for shown, n, t in download_links(at) if shown == label and name in ("", n)]
    assert tickets, f"no download link {label!r} {name}"
    ticket = tickets[-1]  # the last drawn: a dialog's, over the page's row for the same file
    if user is None:
        return fetch(ticket, None)
    return fetch(ticket, Reader(user, admin, configured=user.name != LOCAL_USER))
