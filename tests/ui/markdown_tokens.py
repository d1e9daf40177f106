"""What a Markdown string turns into, for asserting that untrusted text stays text.

markdown-it-py (CommonMark + GFM tables and strikethrough) parses the string; Streamlit's own
GFM literal-autolink and shortcode patterns (copied from its frontend bundle, which applies them
to text nodes after parsing) are run over the text, since markdown-it does not have them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# Streamlit's renderer: /(https?:\/\/|www(?=\.))([-.\w]+)/gi and /([-.\w+]+)@([-\w]+(\.[-\w]+)+)/
_AUTOLINK = re.compile(r"(?i)(https?://|www(?=\.))[-.\w]+|[-.\w+]+@[-\w]+(?:\.[-\w]+)+")
_SHORTCODE = re.compile(r":[\w+/-]+:")  # :emoji: and :material/icon:
_CITATION_LINK = re.compile(r"\\\[\[\*\*(\d+)\*\*\]\(#src-[a-z0-9-]+\)\\\]")


def without_citation_links(markdown: str) -> str:
    """Our own `[n]` links to source cards (ui.safe.answer_markdown with anchors) as the bold
    `[n]` they show, so checks for anything else live stay strict."""
    return _CITATION_LINK.sub(r"\\[**\1**\\]", markdown)


TEXT_ONLY = {"text", "softbreak", "hardbreak"}


def tokens(markdown: str) -> Iterator[Token]:
    """Every block and inline token, depth first."""
    for token in _MD.parse(markdown):
        yield token
        yield from token.children or []


def live_parts(markdown: str, *, allow: frozenset[str] = frozenset()) -> list[str]:
    """What in `markdown` would render as more than text: token types other than paragraphs,
    text and line breaks (plus the `allow`ed ones), autolinks and shortcodes in the text."""
    found = []
    for token in tokens(markdown):
        kind = token.type.removesuffix("_open").removesuffix("_close")
        if kind in {"paragraph", "inline", *TEXT_ONLY, *allow}:
            if token.type == "text" and (hit := _AUTOLINK.search(token.content)):
                found.append(f"autolink {hit.group()!r}")
            if token.type == "text" and (hit := _SHORTCODE.search(token.content)):
                found.append(f"shortcode {hit.group()!r}")
            continue
        found.append(f"{token.type} {token.attrs or token.content!r}")
    return found


def links(markdown: str) -> list[str]:
    """The href of every link in `markdown`."""
    return [str(t.attrs["href"]) for t in tokens(markdown) if t.type == "link_open"]


def shown_text(markdown: str) -> str:
    """The text a reader sees (line breaks as newlines, paragraphs as blank lines), zero-width
    word joiners dropped."""
    out = []
    for token in _MD.parse(markdown):
        if token.type == "paragraph_open" and out:
            out.append("\n\n")
        for child in token.children or []:
            if child.type in {"softbreak", "hardbreak"}:
                out.append("\n")
            elif child.type in {"text", "code_inline"}:
                out.append(child.content)
    return "".join(out).replace("\u2060", "")


def message_text(message: object) -> str:
    """An AppTest chat message as a reader reads it: its Markdown and headings (source cards),
    our citation links and Markdown escapes of brackets and bold undone."""
    parts = [str(e.value) for e in getattr(message, "markdown", [])]
    parts += [str(e.value) for e in getattr(message, "subheader", [])]
    text = without_citation_links("\n".join(parts))
    return text.replace("\\[", "[").replace("\\]", "]").replace("**", "")
