"""The source viewer: the PDF highlight finder on real PDFs (fpdf2), the section view of hostile
text, the server-side access check, and the viewer and Admin rows under AppTest on a real
Milvus Lite knowledge base."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from ingest.models import Chunk
from ingest.originals import OriginalStore
from tests.fakes.docs import make_pdf
from tests.fakes.memory_store import MemoryStore
from tests.ui.apptools import (
    ADMIN_PASSWORD,
    assert_no_exception,
    download_labels,
    download_links,
    fetch_link,
    new_app,
    texts,
)
from tests.ui.markdown_tokens import links, live_parts, shown_text
from ui.auth import User, local_user
from ui.documents import (
    find_passage,
    section_markdown,
    section_text,
)
from ui.files import Reader, Refused
from ui.pdf_page import RenderedPage, cited_page, page_count, render_page
from ui.viewer import original_for

PASSAGE = "The pressure valve must be inspected every ninety days by a certified technician."
DECOY = "The lobby plants are watered on Fridays."
MM = 72 / 25.4  # PDF points per millimetre


def two_page_pdf(passage_y_mm: float = 150.0, width_mm: float = 0.0) -> bytes:
    """Page 1: the decoy; page 2: the decoy at the top and the passage at `passage_y_mm`
    (wrapped at `width_mm` when given, so it spans lines)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.set_xy(20, 30)
    pdf.multi_cell(0, 7, DECOY)
    pdf.add_page()
    pdf.set_xy(20, 30)
    pdf.multi_cell(0, 7, DECOY)
    pdf.set_xy(20, passage_y_mm)
    pdf.multi_cell(width_mm, 7, PASSAGE)
    return bytes(pdf.output())


def yellow_share(png: bytes, box: tuple[float, float, float, float]) -> float:
    """The share of the box's pixels that are highlighted (yellow; glyphs under it are not)."""
    image = Image.open(io.BytesIO(png)).convert("RGB").crop(tuple(int(v) for v in box))
    pixels = list(image.getdata())
    yellow = [p for p in pixels if p[0] > 200 and p[1] > 180 and p[0] - p[2] > 60]
    return len(yellow) / max(len(pixels), 1)


def test_the_highlight_lies_where_the_passage_is_on_its_page() -> None:
    rendered = render_page(two_page_pdf(passage_y_mm=150), 2, PASSAGE)
    assert rendered.page == 2 and rendered.pages == 2 and rendered.coverage == 1.0
    assert len(rendered.boxes) == 1  # one line
    px_per_mm = rendered.height / 297  # A4
    left, top, right, bottom = rendered.boxes[0]
    assert top <= 150 * px_per_mm + 8 * px_per_mm and bottom >= 150 * px_per_mm
    assert abs(left - 20 * px_per_mm) < 3 * px_per_mm  # starts at the text's left margin
    assert bottom < rendered.height and right <= rendered.width
    assert not top < 37 * px_per_mm  # nowhere near the decoy at 30 mm
    assert yellow_share(rendered.png, rendered.boxes[0]) > 0.5
    decoy = (left, 28 * px_per_mm, right, 36 * px_per_mm)
    assert yellow_share(rendered.png, decoy) == 0.0


def test_a_passage_wrapped_over_lines_gets_one_box_per_line() -> None:
    rendered = render_page(two_page_pdf(passage_y_mm=100, width_mm=60), 2, PASSAGE)
    assert len(rendered.boxes) >= 3 and rendered.coverage == 1.0
    tops = [box[1] for box in rendered.boxes]
    assert tops == sorted(tops) and len(set(tops)) == len(tops)  # stacked, not merged


def test_a_passage_that_differs_in_case_breaks_and_a_word_still_highlights_most() -> None:
    changed = PASSAGE.upper().replace("NINETY", "90").replace(" ", "\n", 3)
    rendered = render_page(two_page_pdf(), 2, changed)
    assert rendered.boxes and 0.8 < rendered.coverage < 1.0


def test_a_passage_on_page_two_renders_page_two() -> None:
    data = two_page_pdf()
    assert cited_page(data, PASSAGE, None) == 2
    assert cited_page(data, PASSAGE, 1) == 2  # a wrong page hint is corrected
    assert cited_page(data, DECOY, 2) == 2  # on both pages: the cited one wins
    assert render_page(data, 2, PASSAGE).boxes
    assert render_page(data, 1, PASSAGE).boxes == []
    assert render_page(data, 9, "").page == 2  # clamped, never an error


def test_a_tall_page_is_rendered_within_the_size_cap(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF(format=(2000, 5000))
    pdf.add_page()
    pdf.set_font("helvetica", size=40)
    pdf.text(100, 100, "poster")
    rendered = render_page(bytes(pdf.output()), 1, "poster")
    assert rendered.width * rendered.height <= 4_000_000 and rendered.boxes


def test_find_passage_is_by_words() -> None:
    text = "Intro.\nThe penalty is two per-\ncent of the order value per week. Other text."
    found = find_passage(text, "the penalty is two percent of the order value per week")
    assert found is not None and found.coverage == 1.0
    assert (
        text[found.start : found.end].startswith("The penalty") and "week" in text[found.end - 4 :]
    )
    assert find_passage(text, "nothing like this at all") is None


HOSTILE = (
    "Refunds take ![x](http://127.0.0.1:9/leak) forty five days <img src=x onerror=alert(1)> "
    "see [here](http://127.0.0.1:9/link) or http://127.0.0.1:9/auto.\n\n# Not a heading\n"
    "- not a list :material/warning: :yellow-background[fake mark]"
)


def chunk(n: int, text: str, start: int, section: str = "Refunds") -> Chunk:
    return Chunk(
        chunk_id=f"doc-a-v1-{n:05d}", doc_id="doc-a", text=text, start_char=start,
        end_char=start + len(text), section_path=section,
    )  # fmt: skip


def test_the_section_view_shows_hostile_text_as_text_with_the_passage_marked() -> None:
    cited = chunk(0, HOSTILE, 0)
    markdown = section_markdown(section_text([cited], cited, "forty five days"))
    assert live_parts(markdown, allow=frozenset({"strong"})) == [] and links(markdown) == []
    assert markdown.count(":yellow-background[") == 1  # ours; the document's is escaped
    assert ":yellow-background[**forty five days**]" in markdown
    shown = shown_text(markdown)
    assert "![x](http://127.0.0.1:9/leak)" in shown and "<img src=x onerror=alert(1)>" in shown
    assert "# Not a heading" in shown


def test_the_section_is_rebuilt_from_its_chunks_without_their_overlap() -> None:
    first = chunk(0, "Alpha beta gamma delta.", 0)
    second = chunk(1, "gamma delta. Epsilon zeta.", 11)  # overlaps "gamma delta."
    other = chunk(2, "Elsewhere.", 40, section="Other")
    section = section_text([first, second], second, "")
    assert section.text == "Alpha beta gamma delta. Epsilon zeta."
    assert section.marked == (11, len(section.text))
    assert section_text([first, second, other], None, "").marked is None


def test_only_a_reader_in_the_documents_group_gets_it_or_its_bytes(tmp_path: Path) -> None:
    from graph.offline import OfflineReasoner
    from hopwise.app import Hopwise
    from hopwise.settings import Settings
    from ingest.config import IngestConfig
    from ingest.pipeline import ingest_bytes

    settings = Settings(data_dir=tmp_path, web_search=False)  # type: ignore[call-arg]
    store, originals = MemoryStore(), OriginalStore(settings.originals_root)
    runner = Hopwise(settings, store, OfflineReasoner())
    data = b"# Salaries\n\nSenior engineers earn ninety thousand.\n"
    result = ingest_bytes(
        data, "pay.md", store, groups=["hr"], config=IngestConfig(), originals=originals
    )
    doc_id = result.doc_id or ""
    assert runner.readable_document(doc_id, ["hr"]) is not None
    hr, finance = Reader(User("h", ("all", "hr")), False), Reader(User("f", ("finance",)), False)
    got = original_for(runner, doc_id, False, hr)
    assert got is not None and got.data == data and got.mime == "text/markdown"
    assert runner.readable_document(doc_id, []) is None  # "all" only
    assert runner.readable_document(doc_id, ["finance"]) is None
    assert original_for(runner, doc_id, False, finance) is None
    assert original_for(runner, doc_id, True, finance) is None  # asking is not being
    assert runner.readable_document(doc_id, ["bad group!"]) is None
    assert runner.readable_document("doc-missing", ["hr"]) is None
    assert runner.readable_document(doc_id, [], admin=True) is not None


# ---------------------------------------------------------------- the app

USERS = {
    "hana": {"password": "hana-pw", "groups": ["hr"]},
    "bob": {"password": "bob-pw", "groups": []},
}
PAY = b"# Salary bands\n\n## Engineering\nThe salary band for senior engineers is 90,000 to 120,000 euros per year.\n"
OLD = b"# Canteen\n\n## Hours\nThe canteen opens at half past eleven.\n"


@pytest.fixture(scope="module")
def kb(app_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A PDF (all), a restricted Markdown file (hr) and one ingested before originals were
    kept; doc ids by file name."""
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    settings, store = get_settings(), get_store()
    originals = OriginalStore(settings.originals_root)
    pdf = make_pdf(tmp_path_factory.mktemp("pdf")).read_bytes()
    ids = {}
    for name, data, groups, keep in [
        ("manual.pdf", pdf, ["all"], originals),
        ("pay.md", PAY, ["hr"], originals),
        ("canteen.md", OLD, ["all"], None),
    ]:
        result = ingest_bytes(
            data, name, store, groups=groups, config=settings.ingest, originals=keep
        )
        assert result.status == "ingested", result.reason
        ids[name] = result.doc_id or ""
    return ids


def ask(at, question: str):
    at.chat_input[0].set_value(question).run()
    assert_no_exception(at)
    return at


def sign_in_user(at, name: str, password: str):
    at.sidebar.text_input[0].set_value(name)
    at.sidebar.text_input[1].set_value(password)
    at.sidebar.button[0].click().run()
    assert_no_exception(at)
    return at


def open_original(at):
    [button] = [b for b in at.button if b.label == "Open original"][-1:]
    button.click().run()
    assert_no_exception(at)
    return at


def downloads(at) -> list[str]:
    """The viewer's download links (other features have their own)."""
    return [label for label in download_labels(at) if label.endswith("original")]


def page_images(at) -> list[str]:
    """Pages drawn into the dialog (data: URIs: no /media/ URL exists for them)."""
    return [e.value for e in at.get("html") if 'data-testid="hw-page-image"' in e.value]


def test_open_original_on_a_chat_card_shows_the_cited_pdf_page(kb: dict[str, str]) -> None:
    at = ask(new_app().run(), "What is the penalty per week?")
    assert "Open original" in [b.label for b in at.button]
    open_original(at)
    shown = texts(at)
    assert "Page 2 of 3" in shown and "manual.pdf · version 1 · 3 chunks" in shown
    assert "Download original" in downloads(at)
    before = download_links(at)
    at.run()  # a rerun draws the same link (no ticket race with a click)
    assert download_links(at) == before
    [image] = page_images(at)  # the page, as an image inside the page itself
    assert 'src="data:image/png;base64,' in image and not at.get("image")
    assert fetch_link(at, "Download original", local_user()).data.startswith(b"%PDF")
    next(b for b in at.button if b.label == "Next").click().run()
    assert "Page 3 of 3" in texts(at)


def test_a_page_past_its_deadline_is_its_text_and_the_next_view_draws_it(
    kb: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ui.viewer
    from ui.viewer import TOO_SLOW

    for cached in (ui.viewer._render, ui.viewer._cited_page, ui.viewer._pages):
        cached.clear()
    monkeypatch.setattr(ui.viewer, "_deadline", lambda: 0.001)  # a hostile PDF, in effect
    at = open_original(ask(new_app().run(), "What is the penalty per week?"))
    shown = texts(at)
    assert TOO_SLOW in shown and "two percent of the order value" in shown
    assert not page_images(at) and "Download original" in downloads(at)
    monkeypatch.undo()  # the timeout was not cached, and the killed worker restarts
    at.run()
    assert_no_exception(at)
    assert "Page 2 of 3" in texts(at) and page_images(at)


def test_a_reader_in_the_group_may_download_and_one_without_is_refused(
    kb: dict[str, str],
) -> None:
    from ui.viewer import REFUSED, VIEWER_KEY

    hana = sign_in_user(new_app(users=USERS).run(), "hana", "hana-pw")
    ask(hana, "What is the salary band for senior engineers?")
    open_original(hana)
    assert "Download original" in downloads(hana)
    assert ":yellow-background[" in "\n".join(str(m.value) for m in hana.markdown)
    hana_now = User("hana", ("all", "hr"))
    got = fetch_link(hana, "Download original", hana_now)
    assert got.data == PAY and got.file_name == "pay.md"
    for other in (None, User("bob", ("all",)), User("bob", ("all", "hr"))):  # not hana's link
        with pytest.raises(Refused) as refused:
            fetch_link(hana, "Download original", other)
        assert refused.value.status == 403
    with pytest.raises(Refused):  # hana left the group after the dialog was drawn
        fetch_link(hana, "Download original", User("hana", ("all",)))
    request = dict(hana.session_state[VIEWER_KEY])

    bob = sign_in_user(new_app(users=USERS).run(), "bob", "bob-pw")
    ask(bob, "What is the penalty per week?")
    open_original(bob)  # a card of his own; then the request names hana's document instead
    key = bob.session_state[VIEWER_KEY]["key"]
    bob.session_state[VIEWER_KEY] = {**request, "key": key, "admin": True}  # forged
    bob.run()
    assert_no_exception(bob)
    assert REFUSED in texts(bob)
    assert downloads(bob) == [] and "90,000" not in texts(bob)


def test_an_admin_user_previews_any_document_and_a_lapsed_one_is_refused(
    kb: dict[str, str],
) -> None:
    users = {**USERS, "root": {"password": "root-pw", "groups": [], "admin": True}}
    root = sign_in_user(new_app(users=users).run(), "root", "root-pw")
    root.switch_page("app_pages/admin.py").run()
    root.button(key=f"admin_preview_{kb['pay.md']}").click().run()
    assert_no_exception(root)
    assert "90,000" in texts(root) and "Download original" in downloads(root)
    root_now = User("root", ("all",), admin=True)
    assert fetch_link(root, "Download original", root_now).data == PAY  # admin downloads
    with pytest.raises(Refused):  # and once root is no admin, the same link is refused
        fetch_link(root, "Download original", User("root", ("all",)))
    with pytest.raises(Refused):  # also when no admin user is left (password mode): root's
        # link was drawn for an admin user, not unlocked with the admin password
        fetch_link(root, "Download original", User("root", ("all",)), admin=True)
    # the config drops root's admin flag while the viewer is open: the next run refuses
    root.secrets["users"] = {**users, "root": {"password": "root-pw", "groups": []}}
    root.run()
    assert_no_exception(root)
    assert "90,000" not in texts(root) and downloads(root) == []
    assert [t for t in root.text_input if t.label == "Admin password"]  # password mode now


def test_a_document_without_its_original_says_so_and_shows_its_text(
    kb: dict[str, str],
) -> None:
    at = ask(new_app().run(), "When does the canteen open?")
    open_original(at)
    shown = texts(at)
    assert "original file of this document was not kept" in shown and "re-upload it" in shown
    assert "half past eleven" in shown and downloads(at) == []


def admin_app():
    at = new_app().run()
    at.switch_page("app_pages/admin.py").run()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    assert_no_exception(at)
    return at


def test_admin_rows_preview_download_and_delete(kb: dict[str, str]) -> None:
    from ui.services import get_settings

    at = admin_app()
    shown = texts(at).replace("\u2060", "")
    assert "pay.md · version 1 · 1 chunk · groups: hr" in shown  # singular
    assert "None" not in shown
    pay = kb["pay.md"]
    rows = {name for label, name, _ in download_links(at) if label == "Download original"}
    assert {"pay.md", "manual.pdf"} <= rows
    assert fetch_link(at, "Download original", local_user(), admin=True, name="pay.md").data == PAY
    with pytest.raises(Refused):  # the same link for a tab that has no admin unlock
        fetch_link(at, "Download original", local_user(), name="pay.md")
    assert at.button(key=f"admin_download_{kb['canteen.md']}").disabled  # not kept

    at.button(key=f"admin_preview_{pay}").click().run()
    assert_no_exception(at)
    assert "90,000 to 120,000 euros" in texts(at)  # the admin previews a restricted document
    assert len([n for _, n, _ in download_links(at) if n == "pay.md"]) == 2  # row and dialog

    originals = OriginalStore(get_settings().originals_root)
    checksum = next(d.checksum for d in at_store_documents() if d.doc_id == pay)
    assert originals.has(checksum)
    at.button(key=f"admin_delete_{pay}").click().run()
    assert "and its 1 chunk?" in texts(at)
    at.button(key="admin_delete_confirm").click().run()
    assert_no_exception(at)
    assert "Deleted pay.md (1 chunk)." in texts(at)
    assert not originals.has(checksum)  # the original went with its last document


def at_store_documents():
    from ui.services import get_store

    return get_store().list_documents()


def test_a_citation_of_a_replaced_version_opens_the_current_one_and_says_so(
    kb: dict[str, str], tmp_path: Path
) -> None:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    at = ask(new_app().run(), "When does the canteen open?")
    settings = get_settings()
    newer = OLD.replace(b"half past eleven", b"noon, and the half past eleven")
    result = ingest_bytes(
        newer, "canteen.md", get_store(), config=settings.ingest,
        originals=OriginalStore(settings.originals_root),
    )  # fmt: skip
    assert result.status == "ingested" and result.version == 2
    open_original(at)
    shown = texts(at)
    assert "cited version of this document was replaced" in shown and "(version 2)" in shown
    assert "noon, and the half past eleven" in shown and "Download original" in downloads(at)


def test_the_worker_draws_the_same_page_as_in_process() -> None:
    from ingest.parse import call_in_worker

    data = two_page_pdf(passage_y_mm=100, width_mm=60)
    inline = render_page(data, 2, PASSAGE)
    drawn = call_in_worker(render_page, data, 2, PASSAGE, timeout_s=30)
    assert type(drawn) is RenderedPage and drawn == inline and len(drawn.boxes) >= 2
    assert call_in_worker(cited_page, data, PASSAGE, None, timeout_s=30) == 2
    assert call_in_worker(page_count, data, timeout_s=30) == 2
    with pytest.raises(RuntimeError, match="PdfiumError"):  # an error is said, not a crash
        call_in_worker(page_count, b"%PDF-1.7 not really", timeout_s=30)
    assert call_in_worker(page_count, data, timeout_s=30) == 2


def test_a_render_past_its_deadline_is_killed_and_the_next_one_works() -> None:
    from ingest.parse import call_in_worker

    data = two_page_pdf()
    with pytest.raises(TimeoutError, match="longer than 0.001 s"):
        call_in_worker(render_page, data, 2, PASSAGE, timeout_s=0.001)
    assert call_in_worker(render_page, data, 2, PASSAGE, timeout_s=30) == render_page(
        data, 2, PASSAGE
    )


def test_where_no_worker_starts_pages_are_drawn_in_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from ingest.parse.worker import Worker

    worker, data = Worker(), two_page_pdf()
    monkeypatch.setattr(sys, "executable", "/bin/false")  # e.g. a frozen or embedded Python
    assert worker.call(page_count, (data,), timeout_s=5) == 2
    assert worker.unavailable and worker.call(render_page, (data, 2, PASSAGE), 5).boxes


def test_only_worker_tasks_run_in_the_worker() -> None:
    from ingest.parse import call_in_worker
    from ui.pdf_page import scan_png

    with pytest.raises(ValueError, match="not a worker task"):
        call_in_worker(scan_png, b"", timeout_s=30)


def test_page_rendering_waits_for_any_other_pdfium_user_in_the_process() -> None:
    """PDFium crashes the process when two threads call it (Streamlit runs each session on
    its own thread): a render must wait while the lock is held elsewhere (e.g. a parse)."""
    import threading

    from ingest.parse.pdf_text import PDFIUM_LOCK

    data, done = two_page_pdf(), threading.Event()
    worker = threading.Thread(target=lambda: (render_page(data, 1), done.set()))
    with PDFIUM_LOCK:
        worker.start()
        assert not done.wait(1.0)  # blocked while another PDFium user holds the lock
    assert done.wait(30.0)  # and runs once it is released
    worker.join()


def test_the_render_deadline_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from hopwise.settings import Settings

    monkeypatch.setenv("HOPWISE_RENDER_TIMEOUT_S", "2.5")
    assert Settings().ingest.render_timeout_s == 2.5  # type: ignore[call-arg]
    monkeypatch.setenv("HOPWISE_RENDER_TIMEOUT_S", "0")
    with pytest.raises(ValueError):
        Settings()  # type: ignore[call-arg]
