"""The first screen of a chat: what Hopwise is, and up to three questions the knowledge base
can answer (or, for an empty knowledge base, where to upload).

Examples are built from the headings of documents the reader may read ("What does “Handbook”
say about “Incident response”?") and each is asked once, offline, in the background: only a
question whose answer is stated or quoted from that very document is offered. Until the check
is done, and when no heading passes, the first screen names the documents to ask about.
Titles and headings are untrusted document text: they reach the page escaped, and only
documents whose groups the reader holds are used (checked here, server side)."""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from graph.result import answer_kind
from ingest.lang import language_of
from ingest.models import DocumentInfo
from ui import safe

if TYPE_CHECKING:
    from hopwise.app import Hopwise

log = logging.getLogger(__name__)

TITLE_CLIP = 60
PICKED_KEY = "hopwise_example_question"
ADMIN_PAGE = "app_pages/admin.py"

TAGLINE = (
    "Ask questions across your team's documents. Hopwise splits a question into steps, "
    "searches the documents hop by hop, and answers with citations you can open."
)
# A question about one section of a document, by the language of its heading.
HEADING_TEMPLATES = {
    "en": "What does “{title}” say about “{heading}”?",
    "zh": "《{title}》中关于“{heading}”是怎么说的？",
}
EXAMPLE_DOCS = 4  # the newest readable documents with headings whose headings are tried
EXAMPLE_SCAN = 12  # documents looked at for those
CANDIDATES = 6  # questions checked at most (each is one offline run, ~1 s)
MAX_KEPT = 256  # knowledge-base states x group sets remembered
REPEATED_SHARE = 0.6  # a heading with this share of its words in the title repeats it
CONFIDENT = ("short", "quote")  # graph.result.answer_kind values that count as an answer


def readable_docs(documents: Sequence[DocumentInfo], groups: Sequence[str]) -> list[DocumentInfo]:
    """The documents the groups may read, newest first."""
    allowed = set(groups)
    return [
        d for d in sorted(documents, key=lambda d: -d.created_at) if allowed.intersection(d.groups)
    ]


def heading_questions(docs: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[int, str]]:
    """(document index, question) about the sections of each (title, section paths) in turn:
    the first section of every document, then the second, ... A heading that only repeats
    the title, or is too short or too long to be a topic, is skipped."""
    per_doc: list[list[str]] = []
    for title, paths in docs:
        headings: list[str] = []
        for path in paths:
            heading = " ".join(re.split(r"\s*>\s*", path)[-1].split())
            topic = 2 <= len(heading) <= TITLE_CLIP and not _repeats(heading, title)
            if topic and heading not in headings:
                headings.append(heading)
        per_doc.append(headings)
    out: list[tuple[int, str]] = []
    for depth in range(max((len(h) for h in per_doc), default=0)):
        for index, headings in enumerate(per_doc):
            if depth < len(headings):
                title, heading = _clip(docs[index][0]), headings[depth]
                lang = "zh" if language_of(heading + title) == "zh" else "en"
                out.append((index, HEADING_TEMPLATES[lang].format(title=title, heading=heading)))
    return out


def _repeats(heading: str, title: str) -> bool:
    """The heading mostly says the title again ('SNB22 chemical composition' under 'SNB22 -
    Datasheet, chemical composition'): no topic of its own to ask about."""
    said = set(re.findall(r"\w+", title.casefold()))
    words = re.findall(r"\w+", heading.casefold())
    if language_of(heading) == "zh":  # Chinese runs are one \w+ token: compare characters
        said, words = set("".join(said)), list("".join(words))
    return not words or sum(w in said for w in words) >= REPEATED_SHARE * len(words)


def _clip(title: str) -> str:
    """At most TITLE_CLIP characters, cut between words when a space is near the end."""
    title = " ".join(title.split())
    if len(title) <= TITLE_CLIP:
        return title
    cut = title[: TITLE_CLIP - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= TITLE_CLIP // 2 else cut).rstrip(" ,;:-–—") + "…"


def checked_examples(runner: Any, docs: Sequence[DocumentInfo], groups: Sequence[str]) -> list[str]:
    """Up to three heading questions that offline reasoning answers (stated or quoted) from the
    document they are about; [] when none does. Runs CANDIDATES offline questions at most."""
    picked: list[DocumentInfo] = []
    sections: list[tuple[str, list[str]]] = []
    for doc in docs[:EXAMPLE_SCAN]:  # the newest with a heading to ask about (a batch of
        chunks = sorted(runner.document_chunks(doc), key=lambda c: c.start_char)  # uploads is
        titled = (doc.title or doc.source, [c.section_path for c in chunks])  # all 'newest')
        if heading_questions([titled]):
            picked.append(doc)
            sections.append(titled)
        if len(picked) == EXAMPLE_DOCS:
            break
    found: list[str] = []
    for index, question in heading_questions(sections)[:CANDIDATES]:
        result = runner.try_offline(question, groups)
        cites_it = any(hit_doc == picked[index].doc_id for hit_doc in result.doc_ids())
        if answer_kind(result.answer) in CONFIDENT and cites_it:
            found.append(question)
        if len(found) == 3:
            break
    return found


class ExampleChecks:
    """Checked examples per (knowledge-base state, groups), computed once in a background thread
    so the first screen never waits for them (process-wide; a new document version is a new key)."""

    def __init__(self) -> None:
        self._done: dict[tuple[Any, ...], list[str]] = {}
        self._running: dict[tuple[Any, ...], threading.Thread] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], compute: Callable[[], list[str]]) -> list[str] | None:
        """The examples, or None while they are being checked (the check starts on first ask)."""
        with self._lock:
            if key in self._done:
                return self._done[key]
            if key not in self._running:
                thread = threading.Thread(target=self._run, args=(key, compute), daemon=True)
                self._running[key] = thread
                thread.start()
        return None

    def _run(self, key: tuple[Any, ...], compute: Callable[[], list[str]]) -> None:
        try:
            found = compute()
        except Exception:  # noqa: BLE001 - examples are a hint: the titles stand in
            log.warning("example questions could not be checked", exc_info=True)
            found = []
        with self._lock:
            while len(self._done) >= MAX_KEPT:
                del self._done[next(iter(self._done))]  # the oldest knowledge-base state
            self._done[key] = found
            self._running.pop(key, None)

    def wait(self, timeout_s: float = 120.0) -> None:
        """Until every running check is done (tests; the page polls instead)."""
        for thread in list(self._running.values()):
            thread.join(timeout_s)


EXAMPLES = ExampleChecks()


def readable_documents(runner: Hopwise) -> list[DocumentInfo] | None:
    """The knowledge base's documents (filtered by `readable_docs` later), None if it cannot
    list them."""
    try:
        return runner.list_documents()
    except Exception:  # noqa: BLE001 - a first-screen hint only; store errors surface elsewhere
        return None


def take_picked() -> str | None:
    """The example question clicked in the previous run (asked once, then forgotten)."""
    return st.session_state.pop(PICKED_KEY, None)


def _pick(question: str) -> None:
    st.session_state[PICKED_KEY] = question


def welcome(runner: Any, documents: Sequence[DocumentInfo] | None, groups: Sequence[str]) -> None:
    """Draw the first screen. `documents=None` when the store could not list them (then no
    examples, no claim). A clicked example is asked on the next run (`take_picked`)."""
    st.subheader("Hopwise", anchor=False)
    st.markdown(TAGLINE)
    if documents is None:
        return
    docs = readable_docs(documents, groups)
    if not docs:
        st.info(
            "There are no documents you can read yet. An admin uploads them on the Admin page "
            "(PDF, DOCX, Markdown, TXT, HTML or scans).",
            icon=":material/upload_file:",
        )
        st.page_link(ADMIN_PAGE, label="Upload documents", icon=":material/upload_file:")
        return
    state = tuple((d.doc_id, d.version, d.checksum) for d in docs[:EXAMPLE_DOCS])
    key = (id(runner), state, tuple(sorted(groups)))
    questions = EXAMPLES.get(key, functools.partial(checked_examples, runner, docs, groups))
    if questions is None:
        _titles(docs)
        _poll(key)
        return
    if not questions:
        _titles(docs)
        return
    st.caption("Try one of these, or ask your own below:")
    for i, question in enumerate(questions):
        # Button labels render Markdown: the title inside is escaped.
        st.button(
            safe.escape_inline(question),
            key=f"example_{i}",
            on_click=_pick,
            args=(question,),
            width="stretch",
        )


def _titles(docs: Sequence[DocumentInfo]) -> None:
    """The newest readable documents' titles, to ask about in one's own words."""
    names = list(dict.fromkeys(_clip(d.title or d.source) for d in docs))[:5]
    st.caption("Ask about your documents, e.g. " + " · ".join(
        f"“{safe.escape_inline(name)}”" for name in names) + ".")  # fmt: skip


@st.fragment(run_every=1.5)
def _poll(key: tuple[Any, ...]) -> None:
    """While the examples are checked: a quiet line, then the whole page again once they are."""
    if EXAMPLES.get(key, lambda: []) is None:
        st.caption("Finding questions your documents answer…")
        return
    st.rerun(scope="app")
