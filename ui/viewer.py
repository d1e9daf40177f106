"""The source viewer: "Open original" on a source card (and Preview on the Admin page) opens a
dialog with the cited page of a PDF, drawn on the server with the passage highlighted, or the
cited section of any other document as literal text with the passage marked, and the original
file to download.

Who may see what is decided here, on the server, at every run: the open request in the session
names a document, the reader's groups come from the signed-in user (an Admin preview from the
admin unlock), and `Hopwise.readable_document` (hopwise/documents.py) checks them against the
store before a byte of the original is read. The dialog never raises: whatever fails is said in one line.
"""

from __future__ import annotations

import functools
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import streamlit as st

from ingest.models import Chunk, DocumentInfo
from ingest.originals import IMAGE_EXTENSIONS, mime_type
from ui import safe
from ui.documents import (
    chunks_in_order,
    count_text,
    document_parts,
    section_chunks,
    section_markdown,
    section_text,
    table_columns,
    text_blocks,
)
from ui.files import Download, Reader, download_link, inline_png
from ui.services import (
    current_user,
    error_text,
    get_runner,
    get_settings,
    is_admin,
    password_unlocked,
)

if TYPE_CHECKING:  # the pages draw before these load (the chat box first: issue 46)
    from hopwise.app import Hopwise
    from ui.pdf_page import RenderedPage

VIEWER_KEY = "hopwise_viewer"
REFUSED = "You may not open this document, or it no longer exists."
TOO_SLOW = "This page could not be drawn in time; download the original or see its text below."
NOT_KEPT = (
    "The original file of this document was not kept; it was ingested before originals "
    "were stored — re-upload it to view it. Its text as indexed:"
)


def open_button(
    target: dict[str, Any], *, key: str, label: str = "Open original", admin: bool = False
) -> None:
    """A button that opens the viewer on `target` (doc_id, and where the citation points:
    chunk_id, page, quote, section); the dialog is drawn while it is this button's target."""
    request = {**target, "key": key, "admin": admin, "at_page": None}
    st.button(
        label,
        key=key,
        icon=":material/description:",
        on_click=_open,
        args=(request,),
        type="tertiary",
    )
    if (st.session_state.get(VIEWER_KEY) or {}).get("key") == key:
        _viewer()


def _open(request: dict[str, Any]) -> None:
    st.session_state[VIEWER_KEY] = request


def _close() -> None:
    st.session_state.pop(VIEWER_KEY, None)


def _go_to(page: int) -> None:
    request = st.session_state.get(VIEWER_KEY)
    if request:
        st.session_state[VIEWER_KEY] = {**request, "at_page": page}


@st.dialog("Source", width="large", on_dismiss=_close)
def _viewer() -> None:
    request = st.session_state.get(VIEWER_KEY) or {}
    try:
        _draw(request)
    except Exception as exc:  # noqa: BLE001 - the viewer says what failed, never a trace
        st.error(f"This source cannot be shown: {safe.escape_inline(error_text(exc))}")


def reader_of(request: dict[str, Any]) -> tuple[tuple[str, ...], bool] | None:
    """The reader's groups and whether they read as admin, from the session (never from the
    request): None when nobody is signed in."""
    user = current_user()
    if user is None:
        return None
    if request.get("admin") and is_admin(user):  # an admin user, or the password unlock
        return (), True
    return tuple(user.groups), False


def _draw(request: dict[str, Any]) -> None:
    reader = reader_of(request)
    if reader is None:
        st.warning("Sign in to open sources.")
        return
    groups, admin = reader
    runner = get_runner()
    doc = runner.readable_document(str(request.get("doc_id") or ""), groups, admin=admin)
    if doc is None:
        st.error(REFUSED)
        return
    st.markdown(f"**{safe.escape_inline(doc.title or doc.source)}**")
    st.caption(
        f"{safe.escape_inline(doc.source)} · version {doc.version} · "
        f"{count_text(doc.chunks, 'chunk')}"
    )
    chunks = runner.document_chunks(doc)
    chunk_id = str(request.get("chunk_id") or "")
    cited = next((c for c in chunks if c.chunk_id == chunk_id), None)
    if chunk_id and cited is None:
        st.info(
            "The cited version of this document was replaced; this is the current version "
            f"(version {doc.version})."
        )
    passage = str(request.get("quote") or "") or (cited.text if cited is not None else "")
    data = runner.original(doc)
    extension = PurePath(doc.source).suffix.lower()
    whole = bool(request.get("whole"))  # the Admin preview: the whole document as searched
    if data is None:
        st.info(NOT_KEPT)
        if whole:
            _whole(request, chunks)
        else:
            _section(chunks, cited, passage, str(request.get("section") or ""))
    elif extension == ".pdf":
        _pdf(request, doc, data, chunks, cited, passage)
    elif extension in IMAGE_EXTENSIONS:
        inline_png(_scan(doc.checksum, data), alt=f"Scan of {doc.source}")
        with st.expander("Text read from the image", expanded=whole):
            if whole:
                _blocks(section_text(chunks_in_order(chunks), None).text)
            else:
                _section(chunks, cited, passage, "")
    elif whole:
        _whole(request, chunks)
    else:
        _section(chunks, cited, passage, str(request.get("section") or ""))
    if data is not None:
        download_button(runner, doc, admin=admin)


def download_button(runner: Hopwise, doc: DocumentInfo, *, admin: bool) -> None:
    """The original under its own name and type: a link whose file is built only when it is
    fetched, for the reader signed in at that moment with their groups at that moment
    (ui.files); `admin` asks for the admin view, granted only to an admin then."""
    user = current_user()
    if user is None:
        return
    download_link(
        "Download original",
        functools.partial(original_for, runner, doc.doc_id, admin),
        user=user,
        file_name=PurePath(doc.source).name,
        key=f"{doc.doc_id}|{doc.version}|{doc.checksum}|{admin}",
        admin_unlocked=admin and password_unlocked(user),
    )


def original_for(runner: Hopwise, doc_id: str, as_admin: bool, reader: Reader) -> Download | None:
    """The original file for the reader signed in when it is fetched, with their groups then
    (the admin view only for an admin then); None when they may not read it."""
    admin = as_admin and reader.admin
    doc = runner.readable_document(doc_id, () if admin else reader.user.groups, admin=admin)
    data = runner.original(doc) if doc is not None else None
    if doc is None or data is None:
        return None
    return Download(data, PurePath(doc.source).name, mime_type(doc.source))


def _section(chunks: list[Chunk], cited: Chunk | None, passage: str, section: str) -> None:
    """The cited section (or the named one, or the first) as literal text, passage marked."""
    anchor = cited or next((c for c in chunks if c.section_path == section and section), None)
    anchor = anchor or (min(chunks, key=lambda c: c.start_char) if chunks else None)
    if anchor is None:
        st.caption("_This document has no text._")
        return
    if anchor.section_path:
        st.caption(safe.escape_inline(anchor.section_path))
    shown = section_chunks(chunks, anchor)
    with st.container(border=True):
        st.markdown(section_markdown(section_text(shown, cited, passage)))


def _whole(request: dict[str, Any], chunks: list[Chunk]) -> None:
    """Every chunk of the document in order, as it is searched, one part of whole sections at a
    time with Previous / Next; tables drawn as tables."""
    parts = document_parts(chunks)
    if not parts:
        st.caption("_This document has no text._")
        return
    at = request.get("at_page")
    number = min(max(at if isinstance(at, int) else 1, 1), len(parts))
    if len(parts) > 1:
        _pager(request["key"], number, len(parts), "Part")
    for section, text in parts[number - 1].pieces:
        if section:
            st.caption(safe.escape_inline(section))
        _blocks(text)


def _pager(key: str, number: int, count: int, unit: str) -> None:
    """Previous, 'Page 2 of 5', Next: moves the open viewer's `at_page`."""
    back, where, forward = st.columns([1, 2, 1], vertical_alignment="center")
    back.button(
        "Previous",
        key=f"{key}_prev",
        icon=":material/chevron_left:",
        disabled=number <= 1,
        on_click=_go_to,
        args=(number - 1,),
    )
    where.markdown(f"{unit} {number} of {count}")
    forward.button(
        "Next",
        key=f"{key}_next",
        icon=":material/chevron_right:",
        disabled=number >= count,
        on_click=_go_to,
        args=(number + 1,),
    )


def _blocks(text: str) -> None:
    """Paragraphs as literal text, tables as tables (st.dataframe draws cells as plain text)."""
    with st.container(border=True):
        for block in text_blocks(text):
            if isinstance(block, str):
                st.markdown(safe.escape_text(block))
                continue
            columns, rows = table_columns(block)
            st.dataframe(
                _frame(rows, columns),
                hide_index=True,
                width="stretch",
            )


def _pdf(
    request: dict[str, Any],
    doc: DocumentInfo,
    data: bytes,
    chunks: list[Chunk],
    cited: Chunk | None,
    passage: str,
) -> None:
    try:
        pages = _pages(doc.checksum, data)
        at = request.get("at_page")
        if not isinstance(at, int):
            hint = cited.page if cited is not None else None
            at = _cited_page(doc.checksum, passage, hint, data) if passage else 1
        number = min(max(at, 1), max(pages, 1))
        rendered = _render(doc.checksum, number, passage, data)
    except TimeoutError:  # the worker was killed at the deadline; the next view restarts it
        st.warning(TOO_SLOW)
        _section(chunks, cited, passage, str(request.get("section") or ""))
        return
    except Exception as exc:  # noqa: BLE001 - a page PDFium cannot draw: the text instead
        st.warning(f"The page could not be drawn ({safe.escape_inline(error_text(exc))}).")
        _section(chunks, cited, passage, str(request.get("section") or ""))
        return
    _pager(request["key"], number, pages, "Page")
    inline_png(rendered.png, alt=f"Page {number} of {doc.source}")
    if passage and not rendered.boxes:
        st.caption("The cited passage was not found on this page.")
    if request.get("whole"):  # the preview: what is searched of this page, under its picture
        on_page = [c for c in chunks_in_order(chunks) if c.page == number]
        with st.expander(f"Text as searched (page {number})"):
            if on_page:
                _blocks(section_text(on_page, None).text)
            else:
                st.caption("_No text of this page is searched._")


# Rendered pages are cached by content: the checksum names the bytes (passed unhashed).
# PDFium runs in the worker, killed past the deadline (a timeout is not cached: it is retried).
@st.cache_data(max_entries=64, show_spinner=False)
def _render(checksum: str, page: int, passage: str, _data: bytes) -> RenderedPage:
    from ui.pdf_page import render_page

    return _in_worker(render_page, _data, page, passage, timeout_s=_deadline())


@st.cache_data(max_entries=256, show_spinner=False)
def _cited_page(checksum: str, passage: str, hint: int | None, _data: bytes) -> int:
    from ui.pdf_page import cited_page

    return _in_worker(cited_page, _data, passage, hint, timeout_s=_deadline())


@st.cache_data(max_entries=256, show_spinner=False)
def _pages(checksum: str, _data: bytes) -> int:
    from ui.pdf_page import page_count

    return _in_worker(page_count, _data, timeout_s=_deadline())


def _deadline() -> float:
    return get_settings().ingest.render_timeout_s


@st.cache_data(max_entries=32, show_spinner=False)
def _scan(checksum: str, _data: bytes) -> bytes:
    from ui.pdf_page import scan_png

    return scan_png(_data)


def _frame(rows: Any, columns: Any) -> Any:
    import pandas as pd  # here: the chat page draws before pandas is loaded

    return pd.DataFrame(rows, columns=columns)


def _in_worker(*args: Any, **kwargs: Any) -> Any:
    from ingest.parse import call_in_worker  # here: the chat page draws before the parsers load

    return call_in_worker(*args, **kwargs)
