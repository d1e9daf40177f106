"""Markdown into blocks: headings, lists, tables and fenced code, inline marks removed."""

from __future__ import annotations

import logging
import re

from ingest.hidden import Tally
from ingest.models import ParsedDocument
from ingest.parse.builder import Builder
from ingest.parse.text import decode_text

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- Markdown

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


_MD_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # an image: its alt text
    (re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)[^)]*\)"), r"\1 (\2)"),  # a link: text (url)
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
    (re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)"), r"\2"),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
]


def md_inline(text: str) -> str:
    """Markdown's inline marks read as a reader sees them: '**fee**' is 'fee', a link its text
    (and address), an image its alt text, a code span its code."""
    for pattern, replacement in _MD_INLINE:
        text = pattern.sub(replacement, text)
    return text


def _md_cells(line: str) -> list[str]:
    line = line.strip()
    line = line.removeprefix("|")
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [md_inline(cell.strip().replace("\\|", "|")) for cell in re.split(r"(?<!\\)\|", line)]


_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_STYLE_BLOCK = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.IGNORECASE | re.DOTALL)


def _md_pieces(lines: list[str]) -> list[tuple[bool, str]]:
    """The file as (is_code, text) pieces in order: fenced blocks and code spans are code."""
    pieces: list[tuple[bool, str]] = []
    marker: str | None = None
    for number, line in enumerate(lines):
        end = "\n" if number < len(lines) - 1 else ""
        fence = _FENCE.match(line)
        if marker is not None or fence:
            if marker is not None and line.strip().startswith(marker):
                marker = None
            elif marker is None and fence:
                marker = fence.group(1)
            pieces.append((True, line + end))
            continue
        pos = 0
        for span in _CODE_SPAN.finditer(line):
            pieces += [(False, line[pos : span.start()]), (True, span.group())]
            pos = span.end()
        pieces.append((False, line[pos:] + end))
    return pieces


def _md_visible(lines: list[str], tally: Tally) -> list[str]:
    """What a Markdown viewer shows: raw HTML comments, <script>/<style> bodies and elements
    hidden by the HTML rules (ingest.hidden.markup, with css.py) are dropped; code stays as written."""
    pieces = _md_pieces(lines)
    if not any("<" in text for code, text in pieces if not code):
        return lines
    from ingest.hidden.markup import MarkupFilter

    markup = "".join(text for code, text in pieces if not code)
    shown = MarkupFilter("\n".join(_STYLE_BLOCK.findall(markup)), tally)
    text = "".join(shown.literal(t) if code else shown.markup(t) for code, t in pieces)
    return text.split("\n")


def parse_markdown(data: bytes, source: str) -> ParsedDocument:
    lines = decode_text(data).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines, front_title = _front_matter(lines)
    builder = Builder()
    lines = _md_visible(lines, builder.hidden)
    para: list[str] = []

    def flush() -> None:
        if para:
            builder.text(md_inline("\n".join(para)))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            marker = fence.group(1)
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                body.append(lines[i])
                i += 1
            builder.code("\n".join(body))
            i += 1
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            builder.heading(len(atx.group(1)), md_inline(atx.group(2) or ""))
            i += 1
            continue
        setext = _SETEXT.match(line)
        if setext and para:
            text = "\n".join(para)
            para.clear()
            builder.heading(1 if setext.group(1)[0] == "=" else 2, md_inline(text))
            i += 1
            continue
        if (
            "|" in line
            and i + 1 < len(lines)
            and _TABLE_SEP.match(lines[i + 1])
            and "-" in lines[i + 1]
        ):
            flush()
            rows = [_md_cells(line)]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(_md_cells(lines[i]))
                i += 1
            builder.table(rows)
            continue
        if not line.strip() or (setext and not para):
            flush()
        elif _LIST_ITEM.match(line):
            flush()
            para.append(line)
        else:
            para.append(line)
        i += 1
    flush()
    return builder.build(source, builder.first_h1 or front_title)


def _front_matter(lines: list[str]) -> tuple[list[str], str | None]:
    """Drop a leading YAML front-matter block, keeping its `title:` if it has one."""
    if not lines or lines[0].strip() != "---":
        return lines, None
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() in ("---", "..."):
            title = None
            for line in lines[1:end]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "title" and value.strip():
                    title = value.strip().strip("'\"")
            return lines[end + 1 :], title
    return lines, None
