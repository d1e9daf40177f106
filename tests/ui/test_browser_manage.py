"""End to end in Chromium, with users configured: citations that open the original, and a chat
people can manage. One app (`streamlit run ui/app.py` on loopback) with an admin user in group
`lab` and a reader without it:

- sign in once, reload, and stay signed in (the session cookie, HttpOnly: no page script sees it);
- the admin uploads a three-page PDF readable by `lab` only, from the Admin page that opens for
  an admin user without a second password;
- a question cites page 2: `[1]` links to its source card, *Open original* shows page 2 of 3
  drawn with the passage highlighted (yellow pixels in the screenshot), *Download original*
  returns the very bytes uploaded;
- feedback with a comment, then the Admin feedback list shows it and exports it as CSV;
- the chat exported as Markdown with the citation as file · page; renamed; deleted;
- the reader without the group gets no source from the document and is refused the admin's
  chat link;
- at phone width (420 px) the chat and the trace do not overflow sideways;
- every address ada's pages expose (downloads, /media/) gives nothing to a request with no
  cookie or with ben's; a sign-out in one tab refuses a download link open in another;
  /_stcore/metrics is closed;
- the browser asks nothing of any address but the app's (favicon included)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.ui.test_browser import (
    ROOT,
    ask,
    running_app,
    shoot,
    shown,
    wait_idle,
)

pytestmark = pytest.mark.slow

USERS = {
    "ada": {"password": "ada-long-password", "groups": ["lab"], "admin": True},
    "ben": {"password": "ben-long-password", "groups": []},
}
PASSAGE = "The calibration interval of the vacuum gauges is eighteen months."
QUESTION = "What is the calibration interval of the vacuum gauges?"
FILLER = "This page describes the layout of the clean room and its air locks. " * 3


def lab_pdf() -> bytes:
    """Three pages; the passage is on page 2, low on the page."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for number in (1, 2, 3):
        pdf.add_page()
        pdf.set_xy(20, 30)
        pdf.multi_cell(0, 7, f"Lab manual, part {number}. {FILLER}")
        if number == 2:
            pdf.set_xy(20, 160)
            pdf.multi_cell(0, 7, PASSAGE)
    return bytes(pdf.output())


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("browser-manage") / "data"
    with running_app(data, HOPWISE_USERS=json.dumps(USERS)) as url:
        yield url, data


class Session:
    """One browser context (its own cookies) and page, recording every request it sends."""

    def __init__(self, browser, url: str, width: int = 1400) -> None:
        self.context = browser.new_context(
            viewport={"width": width, "height": 1000}, accept_downloads=True
        )
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.url = url
        self.sent: list[str] = []
        self.page.on("request", lambda request: self.sent.append(request.url))

    def sign_in(self, name: str) -> None:
        page = self.page
        page.goto(self.url)
        form = page.locator("[data-testid='stSidebar'] [data-testid='stForm']")
        form.get_by_label("User", exact=True).fill(name)
        form.get_by_label("Password", exact=True).fill(USERS[name]["password"])
        form.get_by_role("button", name="Sign in").click()
        page.get_by_text(f"Signed in as {name}").wait_for()
        wait_idle(page)

    def session_cookie(self) -> list[dict]:
        """The session cookie once the page's script has set it (it runs after the rerun)."""
        for _ in range(50):
            found = [c for c in self.context.cookies() if c["name"] == "hopwise_session"]
            if found and found[0]["value"]:
                return found
            self.page.wait_for_timeout(200)
        return []

    def foreign_requests(self) -> list[str]:
        origin = self.url.split("/", 3)[:3]
        return [u for u in self.sent if u.split("/", 3)[:3] != origin]


def snap(page, data: Path, name: str) -> None:
    """A screenshot at the page's own size (a phone), kept and copied like `shoot`'s."""
    shots = data / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{name}.png"))
    target = os.environ.get("HOPWISE_SCREENSHOTS_DIR")
    if target:
        shutil.copy(shots / f"{name}.png", Path(target) / f"{name}.png")


def download(page, click) -> bytes:
    with page.expect_download() as info:
        click()
    return Path(info.value.path()).read_bytes()


def served_urls(page) -> list[str]:
    """Every absolute address on the page that serves bytes: Streamlit's /media/ store and
    Hopwise's download links (images, links, sources of any element)."""
    found = page.evaluate(
        "() => Array.from(document.querySelectorAll('[src], [href]'), e => e.src || e.href)"
    )
    paths = {u: urllib.parse.urlsplit(u).path for u in found}
    return sorted(u for u, path in paths.items() if path.startswith(("/media/", "/hopwise/file/")))


def http_get(address: str, cookie: str | None) -> tuple[int, bytes]:
    """GET outside the browser, with no cookie or the given session cookie."""
    headers = {"Cookie": f"hopwise_session={cookie}"} if cookie else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(address, headers=headers)) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def yellow_pixels(png: bytes) -> int:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in image.getdata() if r > 200 and g > 180 and r - b > 60)


def no_sideways_overflow(page) -> bool:
    return bool(
        page.evaluate(
            "() => document.scrollingElement.scrollWidth <= window.innerWidth + 2"
            " && Array.from(document.querySelectorAll('[data-testid=stMain] *'))"
            ".every(e => e.getBoundingClientRect().right <= window.innerWidth + 2"
            " || e.closest('[data-testid=stDataFrame], [data-testid=stCode], pre, table'))"
        )
    )


def top_comes_into_view(page, message) -> str:
    """The page brings a finished answer's top on screen once it is idle (the chat page's
    script): poll for it, up to 30 s on a busy machine, and it stays there a second later.
    Empty when it does; else where the top was, for the failure message."""

    def on_screen() -> bool:
        box = message.bounding_box()
        return box is not None and -5 < box["y"] < 400

    for _ in range(120):
        if on_screen():
            page.wait_for_timeout(1000)
            if on_screen():
                return ""
        page.wait_for_timeout(250)
    return f"the answer's top never came into view: {message.bounding_box()}"


def test_sources_open_and_chats_are_managed_in_chromium(browser, app, tmp_path: Path) -> None:
    url, data = app
    pdf = tmp_path / "lab-manual.pdf"
    pdf.write_bytes(lab_pdf())
    ada = Session(browser, url)
    page = ada.page

    # -- one sign-in; a reload keeps it; page scripts cannot read the cookie
    ada.sign_in("ada")
    [cookie] = ada.session_cookie()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert "hopwise_session" not in page.evaluate("document.cookie")
    page.reload()
    page.get_by_text("Signed in as ada").wait_for()
    assert page.get_by_label("Password", exact=True).count() == 0

    # -- the Admin page opens for an admin user; upload the PDF for group `lab` only
    page.get_by_role("link", name="Admin").click()
    page.get_by_text("Upload documents").wait_for()
    assert page.get_by_label("Admin password").count() == 0
    page.get_by_text("Set the readers").click()
    wait_idle(page)
    page.get_by_label("Groups, comma-separated").fill("lab")
    page.get_by_label("Groups, comma-separated").press("Enter")
    wait_idle(page)  # a file chosen during that rerun could be dropped
    page.wait_for_timeout(500)
    page.locator("input[type=file]").set_input_files([str(pdf)])
    page.get_by_text("lab-manual.pdf").first.wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text("Last upload: 1 ingested").wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Preview").first.wait_for()
    assert "1 chunks" not in shown(page) and "None" not in shown(page)

    # -- ask; [1] links to its card; the card opens page 2 with the passage highlighted
    page.get_by_role("link", name="Chat").click()
    answer = ask(page, QUESTION)
    text = answer.inner_text()
    assert "eighteen months" in text and "lab-manual.pdf" in text and "p. 2" in text
    link = answer.locator("a[href^='#src-']").first
    anchor = str(link.get_attribute("href"))
    link.click()
    page.wait_for_timeout(800)
    assert page.locator(f"[id='{anchor[1:]}']").count() == 1
    assert page.locator(f"[id='{anchor[1:]}']").is_visible()
    answer.get_by_role("button", name="Open original").first.click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Page 2 of 3").wait_for()
    wait_idle(page)
    image = dialog.locator("img").first
    image.wait_for()
    page.wait_for_timeout(500)
    shot = image.screenshot()
    assert yellow_pixels(shot) > 500  # the highlight is drawn and visible
    shoot(page, data, "source")
    original = download(page, lambda: dialog.get_by_role("link", name="Download original").click())
    assert original == pdf.read_bytes()
    exposed = served_urls(page)  # every address of the page that serves bytes
    assert [u for u in exposed if "/hopwise/file/" in u] and not page.locator(
        "img[src*='/media/']"
    ).count()
    dialog.get_by_role("button", name="Close").click()
    dialog.wait_for(state="detached")
    wait_idle(page)

    # -- feedback with a comment
    answer = page.locator("[data-testid='stChatMessage']").last
    answer.locator("[data-testid='stFeedback'] button").first.click()  # thumbs up
    wait_idle(page)
    page.set_viewport_size({"width": 1400, "height": 900})  # the comment box fits any screen
    answer.get_by_role("button", name="Comment").click()
    page.get_by_label("What was good or wrong?").fill("Exactly the page I needed")
    send = page.get_by_role("button", name="Send", exact=True)
    box = send.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900, box
    send.click()
    wait_idle(page)
    page.set_viewport_size({"width": 1400, "height": 1000})

    # -- export the chat as Markdown: the citation resolved to file · page
    exported = download(page, lambda: page.get_by_role("link", name="Export this chat").click())
    markdown = exported.decode("utf-8")
    assert QUESTION in markdown and "lab-manual.pdf" in markdown and "p. 2" in markdown
    thread = re.search(r"[?&]thread=([0-9a-f]+)", page.url)
    assert thread, page.url
    chat_link = f"{url}/?thread={thread.group(1)}"

    # -- the Admin feedback list shows it and exports CSV
    page.get_by_role("link", name="Admin").click()
    page.get_by_role("link", name="Export CSV").wait_for()  # the list is a canvas table
    wait_idle(page)
    shoot(page, data, "feedback")
    csv = download(page, lambda: page.get_by_role("link", name="Export CSV").click())
    assert "Exactly the page I needed" in csv.decode("utf-8") and "ada" in csv.decode("utf-8")
    row = page.get_by_role("link", name="Download original").first  # the admin's own row
    assert download(page, row.click) == pdf.read_bytes()
    exposed += served_urls(page)

    # -- the reader without the group: no source from the PDF, and no way into ada's chat
    ben = Session(browser, url)
    try:
        ben.sign_in("ben")
        reply = ask(ben.page, QUESTION)
        assert "lab-manual.pdf" not in reply.inner_text()
        assert reply.get_by_role("button", name="Open original").count() == 0
        ben.page.goto(chat_link)
        ben.page.get_by_text("That chat was not found, or you have no access to it.").wait_for()
        assert "eighteen months" not in shown(ben.page)
        assert ben.foreign_requests() == []
        # -- what ada's pages exposed: nothing for no cookie, nor for ben's; ada still gets it
        ben_cookie = ben.session_cookie()[0]["value"]
        shipped = {f.read_bytes() for f in (ROOT / "ui" / "assets").iterdir()}  # public: the icon
        for address in exposed:
            for cookie in (None, ben_cookie):
                status, body = http_get(address, cookie)
                assert status in (403, 404) or body in shipped, (address, status)
                assert b"eighteen months" not in body and b"%PDF" not in body
        own = [a for a in exposed if "/hopwise/file/" in a][0]
        assert http_get(own, ada.session_cookie()[0]["value"])[0] == 200
        assert http_get(f"{url}/_stcore/metrics", None)[0] == 404
    finally:
        ben.context.close()

    # -- phone width: chat and trace usable, nothing wider than the screen
    phone = Session(browser, url, width=420)
    try:
        phone.context.add_cookies(ada.session_cookie())  # type: ignore[arg-type]
        phone.page.goto(url)  # the first answer of a new chat at phone width: its top in view
        phone.page.get_by_placeholder("Ask a question about your documents…").wait_for()
        wait_idle(phone.page)
        phone.page.set_viewport_size({"width": 420, "height": 800})
        first = ask(phone.page, QUESTION)
        assert not (where := top_comes_into_view(phone.page, first)), where
        phone.page.set_viewport_size({"width": 420, "height": 1000})
        phone.page.goto(chat_link)
        phone.page.get_by_text("eighteen months").first.wait_for()
        wait_idle(phone.page)
        phone.page.wait_for_timeout(1000)
        assert no_sideways_overflow(phone.page)
        snap(phone.page, data, "phone-chat")
        # the next answer of a chat at phone width: its first line is on screen, too
        phone.page.set_viewport_size({"width": 420, "height": 800})
        reply = ask(phone.page, QUESTION)
        assert not (where := top_comes_into_view(phone.page, reply)), where
        phone.page.goto(f"{url}/trace?thread={thread.group(1)}&answer=1")
        phone.page.get_by_text("Query sent:").first.wait_for()
        phone.page.locator("[data-testid='stGraphVizChart'] svg").wait_for()
        wait_idle(phone.page)
        phone.page.wait_for_timeout(1500)  # the timeline chart and selectboxes settle
        assert no_sideways_overflow(phone.page)
        snap(phone.page, data, "phone-trace")
        assert phone.foreign_requests() == []
    finally:
        phone.context.close()

    # -- rename, then delete the chat (its trace goes with it)
    page.goto(chat_link)
    page.get_by_text("eighteen months").first.wait_for()
    wait_idle(page)
    sidebar = page.locator("[data-testid='stSidebar']")
    sidebar.locator("[data-testid='stPopover'] button").first.click()
    title = page.get_by_label("Title")
    title.fill("Gauge calibration")
    page.get_by_role("button", name="Rename").click()
    wait_idle(page)
    sidebar.get_by_role("button", name="Gauge calibration").wait_for()
    title_box = sidebar.get_by_role("button", name="Gauge calibration").bounding_box()
    menu_box = sidebar.locator("[data-testid='stPopover'] button").first.bounding_box()
    assert title_box and menu_box and abs(title_box["y"] - menu_box["y"]) < 12  # side by side
    delete = page.get_by_role("button", name="Delete…")
    if not delete.is_visible():  # the menu stays open after a rename; open it if it closed
        sidebar.locator("[data-testid='stPopover'] button").first.click()
    delete.click()
    confirm = page.get_by_role("button", name="Delete", exact=True)
    page.get_by_role("dialog").get_by_text("are removed for good").wait_for()  # a modal question
    confirm.click()
    sidebar.get_by_role("button", name="Gauge calibration").wait_for(state="detached")
    wait_idle(page)
    page.goto(f"{url}/trace?thread={thread.group(1)}&answer=1")
    wait_idle(page)
    assert "eighteen months" not in shown(page)

    # -- sign out in one tab: a download link still open in another tab is refused at once
    other_tab = ada.context.new_page()
    other_tab.goto(f"{url}/admin")
    row = other_tab.get_by_role("link", name="Download original").first
    row_link = f"{url}{row.get_attribute('href')}"
    assert ada.context.request.get(row_link).body() == pdf.read_bytes()
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Password", exact=True).wait_for()
    assert ada.context.request.get(row_link).status == 403
    other_tab.close()
    page.reload()
    page.get_by_label("Password", exact=True).wait_for()
    assert ada.foreign_requests() == []
    ada.context.close()
