"""Admin: sign in, upload documents with groups, manage the document list, see KB stats."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import safe
from ui.admin_gate import require_admin
from ui.documents import count_text
from ui.services import error_text, get_runner, get_settings, wait_while_opening
from ui.uploads import (
    UPLOAD_TYPES,
    access_changes,
    document_row,
    parse_groups,
    result_rows,
)
from ui.viewer import download_button, open_button

RESULTS_KEY = "hopwise_ingest_results"
PENDING_DELETE_KEY = "hopwise_pending_delete"
FLASH_KEY = "hopwise_admin_flash"
FAILED_KEY = "hopwise_admin_failed"  # a change a callback could not make
UPLOAD_ROUND_KEY = "hopwise_upload_round"  # which uploader: each batch gets a fresh, empty one

st.title("Admin")
settings = get_settings()
require_admin()
wait_while_opening()

try:
    runner = get_runner()
    repairs, low_disk, problem = runner.kb_health()
except Exception as exc:  # noqa: BLE001 - e.g. Milvus server unreachable: a message, no trace
    st.error(f"The knowledge base could not be opened: {error_text(exc)}")
    st.stop()

flash = st.session_state.pop(FLASH_KEY, None)
if flash:
    st.success(flash)
failed = st.session_state.pop(FAILED_KEY, None)
if failed:
    st.error(safe.escape_inline(failed))
for note in repairs:  # the consistency check when the store was opened
    st.warning(f"Repaired when the knowledge base was opened: {safe.escape_inline(note)}")
if low_disk:
    st.error(safe.escape_inline(low_disk))

# ---------------------------------------------------------------- upload
st.subheader("Upload documents")
files = st.file_uploader(
    f"PDF, DOCX, Markdown, TXT, HTML or a scan (PNG, JPEG) — up to {settings.max_upload_mb:g} MB each",
    type=list(UPLOAD_TYPES),
    accept_multiple_files=True,
    max_upload_size=max(1, int(settings.max_upload_mb)),
    key=f"admin_uploader_{st.session_state.get(UPLOAD_ROUND_KEY, 0)}",  # a new one per batch
)
keep = st.radio(
    "Who may read them",
    ["keep", "set"],
    format_func=lambda o: {
        "keep": "Keep each document's current readers (new files: everyone)",
        "set": "Set the readers",
    }[o],
    key="admin_readers",
)
groups: list[str] | None = None
groups_error = None
if keep == "set":
    groups_text = st.text_input(
        "Groups, comma-separated (`all` is everyone)", value="", key="admin_groups"
    )
    try:
        groups = parse_groups(groups_text)
    except ValueError as exc:
        groups_error = str(exc)
        st.error(groups_error)
changes = access_changes([f.name for f in files], runner.document_named, groups) if files else []
for change in changes:
    if change.before:
        st.caption(
            f"{safe.escape_inline(change.name)}: readable by {', '.join(change.before)} now"
            + ("" if change.after == change.before else f" → {', '.join(change.after)}")
        )
widening = [c for c in changes if c.widens]
confirmed = not widening or st.checkbox(
    "Yes, let more people read: "
    + "; ".join(
        safe.escape_inline(f"{c.name} ({', '.join(c.before)} → {', '.join(c.after)})")
        for c in widening
    ),
    key="admin_confirm_widen",
)
ready = bool(files) and groups_error is None and confirmed
if st.button("Ingest", type="primary", disabled=not ready, key="admin_ingest"):
    names = [f.name for f in files]
    working = st.empty()  # while it runs: the batch and the file at hand; then the table
    with working.container():
        overall = st.progress(0.0, text=f"0 of {len(names)} files")
        current = st.progress(0.0, text="Starting…")

    def on_progress(index: int, name: str, phase: str) -> None:
        shown = safe.escape_inline(name)
        if phase == "start":
            current.progress(0.3, text=f"{shown}: parsing, chunking, indexing…")
        elif phase.startswith("ocr "):  # "ocr 3/12": a scan, read page by page
            done, _, total = phase.removeprefix("ocr ").partition("/")
            share = int(done) / max(1, int(total))
            text = f"{shown}: reading scanned page {done} of {total} (OCR)"
            current.progress(0.1 + 0.8 * share, text=text)
        elif phase in ("ingested", "skipped", "failed"):
            current.progress(1.0, text=f"{shown}: {phase}")
            overall.progress((index + 1) / len(names), text=f"{index + 1} of {len(names)} files")

    results = get_runner().ingest_uploads(
        [(f.name, f.getvalue()) for f in files], groups=groups, on_progress=on_progress
    )
    working.empty()
    st.session_state[RESULTS_KEY] = result_rows(results)
    st.session_state[UPLOAD_ROUND_KEY] = st.session_state.get(UPLOAD_ROUND_KEY, 0) + 1
    st.session_state.pop("admin_confirm_widen", None)  # a new batch asks again
    st.rerun()  # the uploader comes back empty; the batch's one table is below it

if st.session_state.get(RESULTS_KEY):
    rows = st.session_state[RESULTS_KEY]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ingested", "skipped", "failed")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    (st.warning if counts["failed"] else st.success)(f"Last upload: {summary}")
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={"reason": st.column_config.TextColumn(width="large")},
    )

# ---------------------------------------------------------------- documents
st.subheader("Documents")
try:
    documents = runner.list_documents()
    stats = runner.kb_stats()
except Exception as exc:  # noqa: BLE001
    st.error(f"The knowledge base is not reachable: {error_text(exc)}")
    st.stop()

engine = str(stats.get("engine") or ("embedded" if settings.is_embedded else "server"))
dense = bool(stats.get("dense", settings.dense_enabled))
cols = st.columns(4)
cols[0].metric("Documents", stats.get("documents", len(documents)))
cols[1].metric("Chunks", stats.get("chunks", sum(d.chunks for d in documents)))
cols[2].metric("Engine", "Milvus Lite" if "lite" in engine or "embedded" in engine else "Milvus")
cols[3].metric("Dense vectors", "on" if dense else "off")
st.caption(
    f"Engine: {engine} · collection `{stats.get('collection', settings.collection)}` · "
    + (f"hybrid BM25 + dense ({stats.get('embedding_model')})" if dense else "BM25 only")
)
if problem:  # the built-in model could not load here: keyword search only, said once
    st.warning(safe.escape_inline(problem))
if "embedded_chunks" in stats:  # background embedding (built-in model)
    total = max(int(stats.get("chunks") or 0), 1)
    done = int(stats["embedded_chunks"])
    st.progress(min(done / total, 1.0), text=safe.escape_inline(str(stats["embedding_note"])))
    if not stats.get("embedding_complete"):
        st.caption(
            "Vectors are added in the background, a few chunks a second; questions are "
            "answered meanwhile, by keywords for the chunks not yet embedded. Reload to update."
        )

if not documents:
    st.caption("_No documents yet. Upload some above._")
else:
    for doc in documents:
        with st.container(border=True):
            about, actions = st.columns([3, 2], vertical_alignment="center")
            about.markdown(f"**{safe.escape_inline(doc.title or doc.source)}**")
            about.caption(" · ".join(safe.escape_inline(part) for part in document_row(doc)))
            # one row of buttons that wraps instead of cutting labels ("Downl…") when narrow
            with actions.container(horizontal=True, gap="small", horizontal_alignment="right"):
                open_button({"doc_id": doc.doc_id, "whole": True}, key=f"admin_preview_{doc.doc_id}",
                            label="Preview", admin=True)  # fmt: skip
                if runner.has_original(doc):
                    download_button(runner, doc, admin=True)
                else:
                    st.button("Download", key=f"admin_download_{doc.doc_id}", disabled=True,
                              help="The original was not kept (ingested before originals were "
                              "stored); upload the file again to keep it.")  # fmt: skip
                if st.button("Delete…", key=f"admin_delete_{doc.doc_id}"):
                    st.session_state[PENDING_DELETE_KEY] = doc.doc_id
    by_id = {d.doc_id: d for d in documents}
    pending = st.session_state.get(PENDING_DELETE_KEY)
    if pending in by_id:
        doc = by_id[pending]
        st.warning(
            f"Delete **{safe.escape_inline(doc.source)}** and its {count_text(doc.chunks, 'chunk')}? "
            "This cannot be undone. "
            "Past answers that used it are hidden from their readers from then on (the "
            "conversation file keeps them until the chat itself is deleted)."
        )
        yes, no = st.columns(2)
        if yes.button("Yes, delete", type="primary", key="admin_delete_confirm"):
            st.session_state.pop(PENDING_DELETE_KEY, None)
            try:
                removed = get_runner().delete_document(pending)
            except Exception as exc:  # noqa: BLE001
                st.error(f"Delete failed: {error_text(exc)}")
            else:
                st.session_state[FLASH_KEY] = (
                    f"Deleted {safe.escape_inline(doc.source)} ({count_text(removed, 'chunk')})."
                    if removed
                    else f"{safe.escape_inline(doc.source)} was already deleted (by another admin)."
                )
                st.rerun()
        if no.button("Cancel", key="admin_delete_cancel"):
            st.session_state.pop(PENDING_DELETE_KEY, None)
            st.rerun()

from ui.selfcheck_admin import selfcheck_section  # noqa: E402 - how well it reads (issue 47)

st.subheader("Reading check")
selfcheck_section()

from ui.feedback_admin import feedback_section  # noqa: E402 - readers' feedback (issue 15)

st.subheader("Feedback")
feedback_section()

from ui.api_keys import api_keys_section  # noqa: E402 - keys for the API (issue 45)

st.subheader("API keys")
st.caption(
    "A key lets a script, a chat front end or an MCP client ask as one user, with that user's "
    "groups (`hopwise serve`; see docs/api.md)."
)
api_keys_section()

# ---------------------------------------------------------------- web search
st.subheader("Web search")
runner = get_runner()
if settings.web_search is not None:  # the deployment's setting wins over this page
    state = "on" if settings.web_search else "off"
    st.caption(f"Web search is {state} for this deployment (HOPWISE_WEB_SEARCH={state}).")
else:

    def set_web_search() -> None:
        """The toggle's callback; a store that cannot be written leaves the choice as it was."""
        try:
            runner.options.set_web_search(st.session_state["admin_web_search"])
        except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
            st.session_state[FAILED_KEY] = f"Could not change web search: {error_text(exc)}"

    st.session_state["admin_web_search"] = runner.options.web_search  # as stored, not as drawn
    st.toggle(
        "Allow web search when the documents fall short",
        help="Sends a reader's question once to a public search engine (DuckDuckGo via ddgs). "
        "Leave it off for private questions about internal documents.",
        key="admin_web_search",
        on_change=set_web_search,
    )
    st.caption(
        "On: readers may let a question that the documents do not answer go to the web once. "
        "Off: questions never leave this machine through web search."
    )
