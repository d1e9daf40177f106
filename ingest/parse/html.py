"""HTML into blocks: visible text only, scripts, styles and hidden elements dropped."""

from __future__ import annotations

import logging
import re
import warnings
from typing import Any

from ingest.errors import IngestError
from ingest.models import ParsedDocument
from ingest.parse.builder import Builder
from ingest.parse.text import decode_text, looks_binary

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- HTML

_DROP_TAGS = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object"}
_BLOCK_TAGS = {
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "html",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "section",
    "summary",
    "ul",
}


class _HtmlWalker:
    """Depth-first walk that turns HTML into builder blocks; run it on a tree whose hidden
    elements `strip_hidden_html` has already removed."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.buffer: list[str] = []

    def flush(self) -> None:
        if self.buffer:
            self.builder.text(" ".join("".join(self.buffer).split()))
            self.buffer.clear()

    def visible_text(self, node: Any) -> str:
        from bs4.element import NavigableString, Tag

        out: list[str] = []
        for child in node.children:
            if type(child) is NavigableString:
                out.append(str(child))
            elif isinstance(child, Tag) and child.name not in _DROP_TAGS:
                out.append(" " if child.name in ("br", "td", "th") else "")
                out.append(self.visible_text(child))
        return " ".join("".join(out).split())

    def walk(self, node: Any) -> None:
        from bs4.element import NavigableString, Tag

        for child in node.children:
            if type(child) is NavigableString:
                self.buffer.append(str(child))
                continue
            if not isinstance(child, Tag) or child.name in _DROP_TAGS:
                continue
            name = child.name
            if re.fullmatch(r"h[1-6]", name):
                self.flush()
                self.builder.heading(int(name[1]), self.visible_text(child))
            elif name == "table":
                self.flush()
                self.builder.table(self._rows(child))
            elif name == "pre":
                self.flush()
                self.builder.code(child.get_text())
            elif name == "br":
                self.buffer.append(" ")
            elif name == "li":  # its number or bullet, as Markdown writes it: steps stay steps
                self.flush()
                self.buffer.append(_marker(child))
                self.walk(child)
                self.flush()
            else:
                block = name in _BLOCK_TAGS
                if block:
                    self.flush()
                self.walk(child)
                if block:
                    self.flush()

    def _rows(self, table: Any) -> list[list[str]]:
        rows = []
        for tr in table.find_all("tr"):
            if tr.find_parent("table") is not table:
                continue
            cells = tr.find_all(["td", "th"], recursive=False)
            rows.append([self.visible_text(cell) for cell in cells])
        return rows


def _marker(item: Any) -> str:
    """'3. ' for the third item of an <ol> (counting from its start), '- ' for any other."""
    parent = item.parent
    if parent is None or parent.name != "ol":
        return "- "
    try:
        start = int(str(parent.get("start") or 1))
    except ValueError:
        start = 1
    return f"{start + len(item.find_previous_siblings('li'))}. "


_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_\-]+)", re.IGNORECASE)


def _decode_html(data: bytes) -> str:
    """The declared <meta charset> when there is one, else the same detection as text files."""
    match = _META_CHARSET.search(data[:4096])
    if match and not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        if looks_binary(data):
            raise IngestError("binary file, not text")
        try:
            return data.decode(match.group(1).decode("ascii"), errors="replace")
        except LookupError:
            pass  # an unknown charset name: fall back to detection
    return decode_text(data)


def parse_html(data: bytes, source: str) -> ParsedDocument:
    from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning

    from ingest.hidden.markup import strip_hidden_html

    markup = _decode_html(data)
    try:
        with warnings.catch_warnings():  # a file whose text looks like a URL is still a file
            warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
            soup = BeautifulSoup(markup, "lxml")
    except Exception as exc:
        raise IngestError(f"corrupt HTML ({exc})") from exc
    builder = Builder()
    strip_hidden_html(soup, builder.hidden, skip=_DROP_TAGS)
    walker = _HtmlWalker(builder)
    try:
        walker.walk(soup)
    except RecursionError as exc:
        raise IngestError("HTML is nested too deeply to parse") from exc
    walker.flush()
    title_tag = soup.find("title")
    page_title = title_tag.get_text(" ", strip=True) if title_tag else ""
    return walker.builder.build(source, walker.builder.first_h1 or page_title or None)
