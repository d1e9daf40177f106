"""Helpers for the app tests (importable, unlike conftest)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "ui" / "app.py")
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
