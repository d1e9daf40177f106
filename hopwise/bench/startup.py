"""Startup benchmark: how long a fresh `streamlit run ui/app.py` takes to be usable.

A new process on a free loopback port, with a temp data dir holding one small document
(ingested beforehand, in another process, as an admin would). Measured from the launch:
- `server_s`: `/_stcore/health` answers;
- `first_paint_s`: a browser (Debian's Chromium via Playwright, launched beforehand) shows the
  chat page's title;
- `question_box_s`: the question box is on screen (disabled while the knowledge base opens);
- `ready_s`: the question box is enabled (the knowledge base is open);
- `first_answer_s`: a question typed then is answered (the first answer of the process).

Without Chromium or Playwright only `server_s` is measured (the rest is null, with why).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
DOCUMENT = """# Operations handbook

## Incident response
Severity 1 incidents must be acknowledged within 15 minutes by the on-call engineer.
"""
QUESTION = "How fast must a severity 1 incident be acknowledged?"
APP = Path(__file__).resolve().parents[2] / "ui" / "app.py"


def free_port() -> int:
    """A free loopback port (also the browser test suite's)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    return env | {"HOPWISE_DATA_DIR": str(data), "HOPWISE_WEB_SEARCH": "off"}


def _prepare(data: Path) -> None:
    doc = data.parent / "handbook.md"
    doc.write_text(DOCUMENT, encoding="utf-8")
    cmd = [sys.executable, "-m", "hopwise.cli", "ingest", str(doc)]
    subprocess.run(cmd, env=_env(data), check=True, capture_output=True, timeout=600)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End a server process: politely, then for good after 15 s (also the browser tests')."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def _wait_health(url: str, proc: subprocess.Popen[bytes], start: float) -> float:
    while time.monotonic() - start < 120:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return time.monotonic() - start
        except OSError:
            time.sleep(0.05)
    raise TimeoutError("the server did not answer in 120 s")


def _browser() -> tuple[Any, Any, str]:
    """(playwright, browser, why not) with Chromium launched before the app starts, so its own
    start-up is not counted; (None, None, reason) when there is none."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None, None, "playwright is not installed (pip install -e .[dev])"
    if not Path(CHROMIUM).exists():
        return None, None, f"{CHROMIUM} is missing (apt-get install chromium)"
    pw = sync_playwright().start()
    return pw, pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"]), ""


def _page_times(browser: Any, url: str, start: float) -> dict[str, Any]:
    times: dict[str, Any] = {}
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(180_000)
    page.goto(url)
    page.get_by_role("heading", name="Chat").wait_for()
    times["first_paint_s"] = time.monotonic() - start
    box = page.get_by_placeholder("Ask a question about your documents…")
    box.wait_for()
    times["question_box_s"] = time.monotonic() - start
    page.wait_for_function(
        "() => { const b = document.querySelector('textarea[placeholder^=\"Ask a question\"]');"
        " return b && !b.disabled; }"
    )
    times["ready_s"] = time.monotonic() - start
    box.fill(QUESTION)
    box.press("Enter")
    page.get_by_role("button", name="Open hop trace →").first.wait_for()
    times["first_answer_s"] = time.monotonic() - start
    page.close()
    return times


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="hopwise-startup-"))
    data = root / "data"
    try:
        _prepare(data)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        cmd = [
            sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
            "--server.address", "127.0.0.1", "--server.headless", "true",
            "--browser.gatherUsageStats", "false",
        ]  # fmt: skip
        log = (root / "streamlit.log").open("wb")
        pw, browser, why_not = _browser()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=APP.parents[1], env=_env(data), stdout=log, stderr=log)
        try:
            result: dict[str, Any] = {"server_s": _wait_health(url, proc, start)}
            result |= _page_times(browser, url, start) if browser else {"browser": why_not}
        finally:
            if browser is not None:
                browser.close()
                pw.stop()
            stop(proc)
            log.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rounded = {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}
    return {"target_first_paint_s": 3.0, **rounded}
