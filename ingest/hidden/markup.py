"""Hidden text in markup: an HTML page's elements that CSS hides (the cascade is css.py), and
the raw HTML inside Markdown, filtered tag by tag as the text streams past.
"""

from __future__ import annotations

import html
import re
from typing import Any, NamedTuple

from ingest.hidden import (
    COMMENTS,
    HIDDEN_MARKUP,
    Tally,
    visible_len,
)
from ingest.hidden.css import RAW_TEXT, VOID, Context, Element, Node, StyleSheet, enter, text_hidden


def _element(tag: Any) -> Element:
    attrs = {
        str(name).lower(): " ".join(value) if isinstance(value, list) else str(value)
        for name, value in (tag.attrs or {}).items()
    }
    return Element(str(tag.name).lower(), attrs)


def strip_hidden_html(soup: Any, tally: Tally, skip: set[str]) -> None:
    """Remove from a BeautifulSoup tree every element and text run a browser would not show,
    counting what was removed. Elements named in `skip` (script, style, head, ...) are left
    to the caller, which never reads their text."""
    from bs4.element import NavigableString, Tag

    sheet = StyleSheet("\n".join(style.get_text() for style in soup.find_all("style")))
    stack: list[tuple[Any, Context, Node | None]] = [(soup, Context(), None)]
    while stack:
        parent, ctx, node = stack.pop()
        for child in list(parent.children):
            if type(child) is NavigableString:
                kind = text_hidden(ctx)
                if kind:
                    if n := visible_len(str(child)):
                        tally[kind] += n
                    child.extract()
            elif isinstance(child, Tag) and child.name not in skip:
                el = _element(child)
                inner_node = Node(el, node)
                decls = sheet.declarations(inner_node, el.attrs.get("style", ""))
                inner, kind = enter(ctx, el, decls)
                if kind:
                    if n := _subtree_len(child, skip):
                        tally[kind] += n
                    child.decompose()
                else:
                    stack.append((child, inner, inner_node))


def _subtree_len(tag: Any, skip: set[str]) -> int:
    from bs4.element import NavigableString

    return sum(
        visible_len(str(s))
        for s in tag.find_all(string=True)
        if type(s) is NavigableString and s.parent is not None and s.parent.name not in skip
    )


_TAG = re.compile(
    r"<!--|<(/?)([A-Za-z][\w:-]*)"
    r"((?:\s+[^\s\"'<>/=]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*)\s*(/?)>"
)


_ATTR = re.compile(r"([^\s\"'<>/=]+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?")


_MAX_CLOSE_SCAN = 256  # how far up the open elements a closing tag looks for its match


class _Open(NamedTuple):
    node: Node
    ctx: Context
    hiding: str | None  # why everything inside is hidden (this element or one above it)


def _newlines(text: str) -> str:
    return "\n" * text.count("\n")


class MarkupFilter:
    """Raw HTML inside a Markdown file, as a renderer shows it.

    Comments, <script>/<style> bodies and hidden elements are dropped (their line breaks
    kept, so paragraphs stay apart); every other character, tags included, stays as
    written. Feed the file in order: `markup` for text, `literal` for code.
    """

    def __init__(self, css: str, tally: Tally) -> None:
        self.sheet = StyleSheet(css)
        self.tally = tally
        self.stack: list[_Open] = []
        self.mode = ""  # "comment", or the raw-text element being skipped

    def literal(self, text: str) -> str:
        """Code: kept as written unless a comment or a hidden element encloses it."""
        return self._text(text)

    def markup(self, text: str) -> str:
        out: list[str] = []
        pos = 0
        while pos < len(text):
            if self.mode:
                end = (
                    re.compile(r"-->")
                    if self.mode == "comment"
                    else re.compile(rf"</{self.mode}\s*>", re.IGNORECASE)
                ).search(text, pos)
                stop = len(text) if end is None else end.start()
                out.append(self._text(text[pos:stop]))
                if end is None:
                    break
                self.mode, pos = "", end.end()
                continue
            match = _TAG.search(text, pos)
            stop = len(text) if match is None else match.start()
            out.append(self._text(text[pos:stop]))
            if match is None:
                break
            out.append(self._tag(match))
            pos = match.end()
        return "".join(out)

    def _text(self, text: str) -> str:
        if self.mode:
            kind: str | None = COMMENTS if self.mode == "comment" else HIDDEN_MARKUP
        elif self.stack:
            kind = self.stack[-1].hiding or text_hidden(self.stack[-1].ctx)
        else:
            kind = None
        if kind is None:
            return text
        if n := visible_len(text):
            self.tally[kind] += n
        return _newlines(text)

    def _tag(self, match: re.Match[str]) -> str:
        if match.group(0) == "<!--":
            self.mode = "comment"
            return ""
        closing, name, raw_attrs, self_closing = match.groups()
        name = name.lower()
        top = self.stack[-1] if self.stack else None
        if closing:
            for depth in range(len(self.stack) - 1, max(-1, len(self.stack) - _MAX_CLOSE_SCAN), -1):
                if self.stack[depth].node.element.name == name:
                    hidden = self.stack[depth].hiding
                    del self.stack[depth:]
                    return "" if hidden else match.group(0)
            return "" if top and top.hiding else match.group(0)
        if name in RAW_TEXT:
            self.mode = name
            return ""
        attrs = {
            key.lower(): html.unescape(value.strip("\"'")) if value else ""
            for key, value in _ATTR.findall(raw_attrs)
        }
        node = Node(Element(name, attrs), top.node if top else None)
        ctx, kind = enter(top.ctx if top else Context(), node.element,
                          self.sheet.declarations(node, attrs.get("style", "")))  # fmt: skip
        hiding = (top.hiding if top else None) or kind
        if name not in VOID and not self_closing:
            self.stack.append(_Open(node, ctx, hiding))
        return "" if hiding else match.group(0)
