"""A conversation as Markdown: each question and answer, then the sources it cited (plain
functions over results, tested without a page); `chat_export` builds it when its link is
fetched (ui.files)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graph.result import QuestionResult
from ui import safe
from ui.files import Download, Reader
from ui.formatting import location, trace_file_name, trace_json
from ui.services import readable_answers

if TYPE_CHECKING:
    from hopwise.app import Hopwise


def _inline(text: str) -> str:
    """Untrusted text on one line, every Markdown construct (and autolink) taken literally."""
    return safe.escape_inline(text)


def _block(result: QuestionResult) -> str:
    """An answer with its paragraphs and line breaks but no link, image, HTML or heading of its
    own; its `[n]` citations in bold (ui.safe, the one escaper of the app)."""
    return safe.answer_markdown(result.answer, {c.n for c in result.citations})


def conversation_markdown(
    title: str, answers: Sequence[QuestionResult], *, now: datetime | None = None
) -> str:
    """The chat as a Markdown document; citations resolved to `file · section · p. N`, web
    sources with their URL."""
    when = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# {_inline(title) or 'Chat'}", "", f"_Exported from Hopwise on {when}._"]
    for number, result in enumerate(answers, start=1):
        question = result.question or result.standalone_question
        lines += [
            "",
            f"## {number}. {_inline(question)}",
            "",
            _block(result) or "_(no answer)_",
        ]
        if result.citations:
            lines += ["", "**Sources**", ""]
        for citation in result.citations:
            where = location(
                citation.source or citation.title or citation.url or "",
                citation.section,
                citation.page,
            )
            line = f"- **[{citation.n}]** {_inline(where)}"
            link = safe.web_link(citation.url) if citation.url else None
            if link is not None:
                line += f" — <{link.href}>"
            elif citation.url:
                line += f" — {_inline(citation.url)}"
            lines.append(line)
    return "\n".join(lines) + "\n"


def export_file_name(title: str) -> str:
    """A safe file name from the chat title: `hopwise-chat-<words>.md`."""
    words = re.sub(r"[^\w]+", "-", title.casefold(), flags=re.UNICODE).strip("-")[:40]
    return f"hopwise-chat-{words or 'export'}.md"


def chat_export(runner: Hopwise, thread_id: str, title: str, reader: Reader) -> Download | None:
    """The chat as Markdown for the reader fetching it (ui.files): their own thread only, with
    what their groups allow at the fetch; None (refused) for anyone else's or an empty one."""
    answers = readable_answers(runner, thread_id, reader.user, scores=reader.sees_scores)
    if not answers:
        return None
    text = conversation_markdown(title, answers)
    return Download(text.encode("utf-8"), export_file_name(title), "text/markdown")


def trace_download(runner: Hopwise, thread_id: str, index: int, reader: Reader) -> Download | None:
    """One answer's trace as JSON for the reader fetching it; scores only for those who see
    them (ui.services.sees_scores); None (refused) for a chat that is not theirs."""
    answers = readable_answers(runner, thread_id, reader.user, scores=reader.sees_scores)
    if not 0 <= index < len(answers):
        return None
    data = trace_json(answers[index]).encode("utf-8")
    return Download(data, trace_file_name(thread_id, index), "application/json")
