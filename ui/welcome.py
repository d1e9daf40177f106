"""The first screen of a chat: what Hopwise is, and three questions to start with, drawn from
the titles of documents the reader may read (or, for an empty knowledge base, where to upload).

`example_questions` is pure (unit-tested); `welcome` draws it and returns the question a reader
picked. Titles are untrusted document text: they reach the page escaped, and only titles of
documents whose groups the reader holds are used (checked here, server side)."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from ingest.lang import language_of
from ingest.models import DocumentInfo
from ui import safe

TITLE_CLIP = 60
PICKED_KEY = "hopwise_example_question"
ADMIN_PAGE = "app_pages/admin.py"

TAGLINE = (
    "Ask questions across your team's documents. Hopwise splits a question into steps, "
    "searches the documents hop by hop, and answers with citations you can open."
)
# One template per example slot, per language of the title; {a} and {b} are document titles.
TEMPLATES = {  # about {a}; facts in {a}; how {a} and {b} relate; who is named in {a}
    "en": (
        "What is “{a}” about?",
        "What are the key facts in “{a}”?",
        "How do “{a}” and “{b}” relate?",
        "Who or what does “{a}” name?",
    ),
    "zh": (
        "《{a}》主要讲了什么？",
        "《{a}》中有哪些关键信息？",
        "《{a}》和《{b}》有什么关系？",
        "《{a}》提到了哪些人或机构？",
    ),
}


def readable_titles(documents: Sequence[DocumentInfo], groups: Sequence[str]) -> list[str]:
    """Distinct titles of the documents the groups may read, newest first, clipped."""
    allowed = set(groups)
    titles: list[str] = []
    for doc in sorted(documents, key=lambda d: -d.created_at):
        if not allowed.intersection(doc.groups):
            continue
        title = " ".join((doc.title or doc.source).split())
        if len(title) > TITLE_CLIP:
            title = title[: TITLE_CLIP - 1] + "…"
        if title and title not in titles:
            titles.append(title)
    return titles


def example_questions(titles: Sequence[str], limit: int = 3) -> list[str]:
    """Up to `limit` questions about the titles: one about the newest document, one about the
    next, and one relating the two (with one document, three about it), in the newest
    title's language."""
    if not titles:
        return []
    first, second = titles[0], titles[1] if len(titles) > 1 else titles[0]
    lang = "zh" if language_of(first) == "zh" else "en"
    about, facts, relate, named = TEMPLATES[lang]
    questions = [about.format(a=first), facts.format(a=second)]
    if len(titles) > 1:
        questions.append(relate.format(a=first, b=titles[1]))
    else:  # one document: three questions about it
        questions.append(named.format(a=first))
    return questions[:limit]


def readable_documents(store: object) -> list[DocumentInfo] | None:
    """The store's documents (filtered by `readable_titles` later), None if it cannot list."""
    lister = getattr(store, "list_documents", None)
    if lister is None:
        return None
    try:
        return list(lister())
    except Exception:  # noqa: BLE001 - a first-screen hint only; store errors surface elsewhere
        return None


def take_picked() -> str | None:
    """The example question clicked in the previous run (asked once, then forgotten)."""
    return st.session_state.pop(PICKED_KEY, None)


def _pick(question: str) -> None:
    st.session_state[PICKED_KEY] = question


def welcome(documents: Sequence[DocumentInfo] | None, groups: Sequence[str]) -> None:
    """Draw the first screen. `documents=None` when the store could not list them (then no
    examples, no claim). A clicked example is asked on the next run (`take_picked`)."""
    st.subheader("Hopwise", anchor=False)
    st.markdown(TAGLINE)
    if documents is None:
        return
    questions = example_questions(readable_titles(documents, groups))
    if not questions:
        st.info(
            "There are no documents you can read yet. An admin uploads them on the Admin page "
            "(PDF, DOCX, Markdown, TXT, HTML or scans).",
            icon=":material/upload_file:",
        )
        st.page_link(ADMIN_PAGE, label="Upload documents", icon=":material/upload_file:")
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
