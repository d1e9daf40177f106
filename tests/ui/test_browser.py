"""End to end in a real browser: `streamlit run ui/app.py` on a loopback port, Debian's Chromium
driven by Playwright. Sign in as admin, upload a document, ask in chat, see the cited answer,
open its trace. Screenshots of the three pages are saved under the data dir (and copied to
$HOPWISE_SCREENSHOTS_DIR when set, which is how docs/*.png are refreshed)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.apptools import ADMIN_PASSWORD

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
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
HANDBOOK = """# Operations handbook

## Project Falcon
Project Falcon migrates the billing system to the new ledger. The project is led by Mei Lin,
who reports to the chief operating officer.

## Offices
Mei Lin is based in the Shenzhen office. The Shenzhen office opened in 2019 and hosts the
payments and ledger teams.

## Incident response
Severity 1 incidents must be acknowledged within 15 minutes. The on-call engineer pages the
incident commander, who opens a bridge call and posts updates every 30 minutes.
"""
QUESTION = "How fast must a severity 1 incident be acknowledged?"
MULTI_HOP = "Which office is the leader of Project Falcon based in?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError("streamlit did not become healthy")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app as users start it, with a temp data dir and an admin password."""
    data = tmp_path_factory.mktemp("browser") / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {
        "HOPWISE_DATA_DIR": str(data),
        "HOPWISE_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "HOPWISE_WEB_SEARCH": "off",
    }
    port = free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", "ui/app.py",
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "viewer",
    ]  # fmt: skip
    log = (data.parent / "streamlit.log").open("w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url, data
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def page(server: tuple[str, Path]):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def shoot(page, data: Path, name: str) -> None:
    """Save a full-page screenshot as a test artifact (and to the docs when asked)."""
    page.wait_for_timeout(800)  # let charts and fonts settle
    height = page.evaluate(
        "() => Math.max(...Array.from(document.querySelectorAll('*'), e => e.scrollHeight))"
    )
    page.set_viewport_size({"width": 1400, "height": max(900, min(int(height), 2600))})
    page.wait_for_timeout(500)
    shots = data / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    path = shots / f"{name}.png"
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": 1400, "height": 1000})
    target = os.environ.get("HOPWISE_SCREENSHOTS_DIR")
    if target:
        shutil.copy(path, Path(target) / f"{name}.png")


def wait_idle(page) -> None:
    """Streamlit shows a running indicator while the script runs; wait until it is gone."""
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=120_000)


def test_admin_upload_chat_and_trace_in_chromium(page, server, tmp_path: Path) -> None:
    url, data = server
    doc = tmp_path / "handbook.md"
    doc.write_text(HANDBOOK, encoding="utf-8")
    bad = tmp_path / "scan.pdf"
    bad.write_bytes(b"%PDF-1.4 not really a pdf")

    page.goto(f"{url}/admin")
    page.get_by_label("Admin password").fill("not it")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Wrong credentials.").wait_for()
    page.get_by_label("Admin password").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.locator("input[type=file]").set_input_files([str(doc), str(bad)])
    page.get_by_text("scan.pdf").first.wait_for()
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text("Last upload: 1 ingested, 0 skipped, 1 failed").wait_for()
    wait_idle(page)
    page.get_by_text("2 of 2 files").wait_for()
    page.get_by_text("scan.pdf: failed").wait_for()
    page.get_by_text("Document to delete").wait_for()
    shoot(page, data, "admin")

    page.get_by_role("link", name="Chat").click()
    page.get_by_text("extracted from your documents").wait_for()
    box = page.get_by_placeholder("Ask a question about your documents…")
    box.fill(QUESTION)
    box.press("Enter")
    assistant = page.locator("[data-testid='stChatMessage']").last
    assistant.get_by_role("button", name="Open hop trace →").wait_for(timeout=120_000)
    wait_idle(page)
    assert "Answered in" in assistant.inner_text()
    assert "15 minutes" in assistant.inner_text()
    assert "[1]" in assistant.inner_text()
    assert "handbook.md · Operations handbook > Incident response" in assistant.inner_text()
    assistant.get_by_text("Full passage").first.click()
    assistant.get_by_text("opens a bridge call").first.wait_for()

    box.fill(MULTI_HOP)  # a second question in the same chat: two hops, two sources
    box.press("Enter")
    second = page.locator("[data-testid='stChatMessage']").nth(3)
    second.get_by_role("button", name="Open hop trace →").wait_for(timeout=120_000)
    wait_idle(page)
    assert "[1]" in second.inner_text() and "Shenzhen" in second.inner_text()
    shoot(page, data, "chat")

    page.get_by_role("button", name="Open hop trace →").last.click()
    page.get_by_role("heading", name="Hop trace").wait_for()
    page.get_by_text("Path through the state machine").wait_for()
    page.locator("[data-testid='stGraphVizChart'] svg").wait_for()
    page.get_by_text("Query sent:").first.wait_for()
    wait_idle(page)
    assert "retrieve_hop" in page.locator("[data-testid='stGraphVizChart']").inner_text()
    assert "answer=2" in page.url and "thread=" in page.url
    shoot(page, data, "trace")
    for name in ("admin", "chat", "trace"):
        assert (data / "screenshots" / f"{name}.png").stat().st_size > 20_000
