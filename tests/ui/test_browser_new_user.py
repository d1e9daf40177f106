"""What a new user met (issue 46), in Chromium at 1400 px and 420 px: the Admin preview of an
HTML page with a table, three questions asked back to back (all answered, in order), source
cards showing the quoted sentence marked, and the hop trace's address that opens the same
trace when pasted into a new tab. Screenshots under the data dir (and $HOPWISE_SCREENSHOTS_DIR)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.apptools import ADMIN_PASSWORD
from tests.ui.test_browser import new_page, running_app, wait_idle

pytestmark = pytest.mark.slow

DEPOT = """<html><head><title>Ferry depot</title></head><body>
<p>Home / Sites / Ferry depot</p>
<h1>Ferry depot</h1>
<p>The ferry depot at Quillon moors four boats overnight.</p>
<h2>Boats</h2>
<table>
<tr><th>Boat</th><th>Seats</th><th>Skipper</th></tr>
<tr><td>Marrow</td><td>40</td><td>Tova Renn</td></tr>
<tr><td>Pellin</td><td>65</td><td>Ash Oduya</td></tr>
</table>
<h2>Tickets</h2>
<p>Tickets for the early crossing are sold from six o'clock. The depot cafe opens at seven.
Lost property is kept at the harbour office for thirty days.</p>
</body></html>"""
QUESTIONS = [
    "How long is lost property kept at the harbour office?",
    "When are tickets for the early crossing sold from?",
    "When does the depot cafe open?",
]
EXPECTED = ["thirty days", "six o'clock", "seven"]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("newuser") / "data"
    with running_app(data) as url:
        yield url, data


def snap(page, data: Path, name: str, width: int = 1400, show: str = "") -> None:
    """A screenshot of what the window shows at `width` px (scrolled to the text `show`)."""
    page.set_viewport_size({"width": width, "height": 1000 if width > 500 else 900})
    if show:
        page.get_by_text(show).scroll_into_view_if_needed()
    page.wait_for_timeout(700)
    shots = data / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    path = shots / f"{name}-{width}.png"
    page.screenshot(path=str(path))
    target = os.environ.get("HOPWISE_SCREENSHOTS_DIR")
    if target:
        shutil.copy(path, Path(target) / path.name)
    page.set_viewport_size({"width": 1400, "height": 1000})


def chat_box(page):  # noqa: ANN201 - a Playwright locator
    return page.locator("[data-testid='stChatInput'] textarea")


def upload(page, url: str, path: Path, text: str) -> None:
    """Sign in on the Admin page and ingest one file written with `text`."""
    path.write_text(text, encoding="utf-8")
    page.goto(f"{url}/admin")
    page.get_by_label("Admin password").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.locator("input[type=file]").set_input_files([str(path)])
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text("Last upload: 1 ingested").wait_for()
    wait_idle(page)


def test_preview_queue_cards_and_trace_link(browser, app, tmp_path: Path) -> None:
    url, data = app
    page = new_page(browser)
    upload(page, url, tmp_path / "depot.html", DEPOT)
    page.get_by_role("button", name="Preview").first.click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Lost property is kept").wait_for()  # the last section, not the first
    dialog.get_by_text("Home / Sites / Ferry depot").wait_for()
    dialog.locator("[data-testid='stDataFrame']").wait_for()  # the boats table, as a table
    snap(page, data, "preview")
    snap(page, data, "preview", width=420)
    page.keyboard.press("Escape")

    page.get_by_role("link", name="Chat").click()
    page.get_by_text("extracted from your documents").wait_for()
    for question in QUESTIONS:  # back to back: each sent while the one before is answered
        chat_box(page).fill(question)
        chat_box(page).press("Enter")
        page.wait_for_timeout(300)
    snap(page, data, "queued")  # the later questions wait, marked queued (if not yet asked)
    snap(page, data, "queued", width=420)
    messages = page.locator("[data-testid='stChatMessage']")
    page.wait_for_function(
        "() => document.querySelectorAll(\"[data-testid='stChatMessage'] "
        "button\").length && [...document.querySelectorAll('button')].filter("
        "b => b.innerText.includes('Open hop trace')).length === 3",
        timeout=240_000,
    )
    snap(page, data, "answered")
    wait_idle(page)
    page.get_by_text("Queued:").first.wait_for(state="detached")
    texts = [messages.nth(i).inner_text() for i in range(messages.count())]
    assert len(texts) == 6, texts
    for n, (question, value) in enumerate(zip(QUESTIONS, EXPECTED, strict=True)):
        assert question in texts[2 * n]  # asked in order …
        assert value in texts[2 * n + 1], texts[2 * n + 1]  # … each answered in its place
    first = messages.nth(1)
    mark = first.locator("span", has_text="thirty days").first  # the quoted words, marked
    assert mark.count() == 1
    snap(page, data, "cards")
    snap(page, data, "cards", width=420)

    messages.nth(3).get_by_role("button", name="Open hop trace →").click()
    page.get_by_role("heading", name="Hop trace").wait_for()
    page.get_by_text("Query sent:").first.wait_for()
    wait_idle(page)
    assert "/trace?" in page.url and "answer=2" in page.url and "thread=" in page.url, page.url
    link = page.url
    snap(page, data, "trace")

    other = new_page(browser)  # a new tab (the local user: no sign-in configured)
    other.goto(link)
    other.get_by_role("heading", name="Hop trace").wait_for()
    other.get_by_text("Query sent:").first.wait_for()
    wait_idle(other)
    assert QUESTIONS[1] in other.locator("h3").first.inner_text()
    snap(other, data, "trace-link", width=420)
    other.context.close()
    page.context.close()


ROSTER = """# On-call roster

| Week | Primary | Primary phone | Backup | Backup phone |
|---|---|---|---|---|
| 31 | Ona Brisk | 0100 111 | Pell Varga | 0100 222 |
| 32 | Ivo Mart | 0100 333 | Una Saar | 0100 444 |
| 33 | Rea Tull | 0100 555 | Kip Dorn | 0100 666 |
"""


@pytest.fixture(scope="module")
def roster_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("roster") / "data"
    with running_app(data) as url:
        yield url, data


def test_a_quoted_row_is_a_small_table_and_the_trace_says_what_was_checked(
    browser, roster_app, tmp_path: Path
) -> None:
    url, data = roster_app
    page = new_page(browser)
    upload(page, url, tmp_path / "roster.md", ROSTER)

    page.get_by_role("link", name="Chat").click()
    page.get_by_text("extracted from your documents").wait_for()
    chat_box(page).fill("What is the backup phone in week 33?")
    chat_box(page).press("Enter")
    page.get_by_role("button", name="Open hop trace →").first.wait_for(timeout=240_000)
    wait_idle(page)
    answer = page.locator("[data-testid='stChatMessage']").nth(1)
    table = answer.locator("table").first  # the row under its header, not 'Week: 33; …'
    assert "Backup phone" in table.locator("th").all_inner_texts()
    assert any("0100 666" in cell for cell in table.locator("td").all_inner_texts())
    assert len(table.locator("tbody tr").all()) == 1
    body = answer.locator("[data-testid='stMarkdownContainer']").first.inner_text()
    assert "Week: 33;" not in body
    snap(page, data, "answer-table")
    snap(page, data, "answer-table", width=420)

    answer.get_by_role("button", name="Open hop trace →").click()
    page.get_by_role("heading", name="Hop trace").wait_for()
    page.get_by_text("the answer cites [1] from this step").first.wait_for()
    page.get_by_text("Claim check:").first.click()
    page.get_by_text("the check does not judge whether they answer").wait_for()
    wait_idle(page)
    for width in (1400, 420):
        snap(page, data, "trace-claims", width, show="the check does not judge whether they answer")
    page.context.close()


GEAR = """# Field kit

| Kit | Depot | Custodian | Phone | Last inspected |
| --- | --- | --- | --- | --- |
| Survey drone Kestrel-4 | North annex | Oriel Manfred-Ashby | 555-0188-2201 | 2031-02-14 |
| Tide gauge TG-9 | Harbour shed | Sunniva Okonkwo-Lind | 555-0188-2202 | 2031-03-02 |
| Rope kit R-2 | North annex | Bram Achterberg | 555-0188-2203 | 2031-01-20 |
"""


def test_a_quoted_row_stays_inside_its_message_on_a_phone(browser, app, tmp_path: Path) -> None:
    """The Admin page's reading check follows the upload's background check to its score; an
    answer's table (a quoted row with its header) scrolls inside its message at 420 px instead
    of running past the screen's edge."""
    url, data = app
    page = new_page(browser)
    upload(page, url, tmp_path / "gear.md", GEAR)
    page.get_by_text("Reading check", exact=True).wait_for()
    # the background check of the upload: the page follows it to the document's score
    page.wait_for_function(  # this upload's card (the module's other documents have theirs)
        "() => document.body.innerText.includes('found 1 table (3 rows)')", timeout=240_000
    )
    wait_idle(page)
    snap(page, data, "reading-check", show="Reading check")
    snap(page, data, "reading-check", width=420, show="Reading check")
    page.get_by_role("link", name="Chat").click()
    chat_box(page).fill("Who is the custodian of the Tide gauge TG-9, and what is the phone?")
    chat_box(page).press("Enter")
    page.get_by_role("button", name="Open hop trace →").first.wait_for(timeout=240_000)
    wait_idle(page)
    page.set_viewport_size({"width": 420, "height": 900})
    page.wait_for_timeout(800)
    edges = page.evaluate(
        "() => [...document.querySelectorAll(\"[data-testid='stChatMessage'] table\")].map("
        "t => [t.getBoundingClientRect().right, t.closest(\"[data-testid='stChatMessage']\")"
        ".getBoundingClientRect().right])"
    )
    assert edges, "the answer quotes no row as a table"
    assert all(right <= message + 1 for right, message in edges), edges
    page.locator("[data-testid='stChatMessage'] table").first.scroll_into_view_if_needed()
    snap(page, data, "row-table", width=420)
    page.context.close()
