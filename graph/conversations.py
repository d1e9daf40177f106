"""Conversation storage shared by every backend: the SQLite checkpointer (LangGraph's, made
failure-tolerant), chat titles, the folding search compares with, and the access error every
read of someone else's thread gets. The thread index and feedback tables (SQLite or PostgreSQL)
are in hopwise.state."""

from __future__ import annotations

import unicodedata
from pathlib import Path

NOT_SAVED = "This answer was not saved: "  # an answer's notice when its thread was not saved


class ConversationStoreError(RuntimeError):
    """The conversation file cannot be used; the message names it and how to recover."""


def conversation_store_problem(
    path: Path, exc: BaseException, what: str = "the conversation store"
) -> str:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if "locked" in reason or "busy" in reason:
        return (
            f"{what} {path} is locked by another program ({reason}); answers "
            "are not saved until it is free"
        )
    return (
        f"{what} {path} cannot be read ({reason}); move it aside (mv {path} "
        f"{path}.broken) to start a new one; the knowledge base is not affected"
    )


class ThreadAccessError(LookupError):
    """A thread that does not exist or belongs to someone else: the same answer for both."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"chat {thread_id!r}: not found or no access")


TITLE_CHARS = 48  # a past-chat title fits one line of the sidebar
TITLE_MAX_CHARS = 100  # the longest title an owner may give a chat
TITLE_PROVISIONAL, TITLE_QUESTION, TITLE_USER = "provisional", "question", "user"


def chat_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A one-line title from a question: whitespace collapsed, cut at a word boundary (or at
    `limit` characters in a language written without spaces) with an ellipsis."""
    title = " ".join(text.split())
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    if " " in cut and title[limit - 1] != " ":
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-—") + "…"


def fold(text: str) -> str:
    """Text as search compares it: Unicode case folded ("Ärger" ~ "ärger", "ΣΊΣΥΦΟΣ" ~
    "σίσυφος"), composed and decomposed accents alike (Unicode's canonical caseless match)."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).casefold())
