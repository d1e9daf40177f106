"""Untrusted text (answers, passages, titles, file names, web results, trace fields) as Markdown
that Streamlit renders literally: no image, link, autolink, HTML, heading, list, table or code
comes out of it. Pure functions, no Streamlit; the pages pass every untrusted string through here.

Rules (CommonMark + GFM + Streamlit's extensions, checked against Streamlit's renderer):
- Every character that can open an inline construct anywhere is backslash-escaped
  (`\\ ` * _ { } [ ] ( ) # + ! | < ~ $ &`); CommonMark makes an escaped ASCII punctuation
  character a literal, so no emphasis, code, link, image, HTML, autolink, entity, math, table
  cell or footnote can start.
- Block markers only count at the start of a line: there `- = >` and the `.` of `1.` are
  escaped too, and leading spaces/tabs are dropped (no indented code block).
- GFM literal autolinks (http://, https://, www., e-mail) and Streamlit's `:emoji:` /
  `:material/...:` codes are matched on the *unescaped* text, so escaping cannot stop them:
  a WORD JOINER (U+2060, zero width, not shown) goes before every `:` and `@` and between
  `www` and `.`.
- Line breaks stay line breaks (hard breaks); blank lines separate paragraphs.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

WORD_JOINER = "\u2060"
_ESCAPE_ALWAYS = frozenset("\\`*_{}[]()#+!|<~$&")
_ESCAPE_AT_LINE_START = frozenset("-=>")
_JOIN_BEFORE = frozenset(":@")
_WWW = re.compile(r"(?i)www(?=\.)")
_ORDERED_MARKER = re.compile(r"^([0-9]+)\.")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # CommonMark's line endings, nothing else
_CITATION = re.compile(r"\[([0-9]{1,4})\]")


def _escape_span(span: str, *, line_start: bool) -> str:
    """One piece of one line; `line_start` when it begins the line (block markers count)."""
    span = _WWW.sub(lambda m: m.group() + WORD_JOINER, span)
    out = []
    for i, ch in enumerate(span):
        if ch in _ESCAPE_ALWAYS or (line_start and i == 0 and ch in _ESCAPE_AT_LINE_START):
            out.append("\\" + ch)
        elif ch in _JOIN_BEFORE:
            out.append(WORD_JOINER + ch)
        else:
            out.append(ch)
    escaped = "".join(out)
    return _ORDERED_MARKER.sub(r"\1\\.", escaped) if line_start else escaped


_ANCHOR = re.compile(r"[a-z0-9][a-z0-9-]{0,80}")


def _citation_marker(n: int, anchors: Mapping[int, str]) -> str:
    """`[n]` as bold text, or as a bold in-page link to its source card when `anchors` has n
    (an anchor we made: lower-case letters, digits and dashes only, checked here)."""
    anchor = anchors.get(n, "")
    if anchor and _ANCHOR.fullmatch(anchor):
        return f"\\[[**{n}**](#{anchor})\\]"
    return f"\\[**{n}**\\]"  # bold number: no flanking trap


_BOLD = re.compile(r"\*\*([^*\n]{1,300}?)\*\*")


def _escape_marked(span: str, *, line_start: bool, bold: bool) -> str:
    """Like _escape_span; with `bold`, a `**…**` pair stays bold with its inside escaped (the
    answer's key span: emphasis is the one mark an answer may carry, never a link)."""
    if not bold:
        return _escape_span(span, line_start=line_start)
    out, at = [], 0
    for match in _BOLD.finditer(span):
        out.append(_escape_span(span[at : match.start()], line_start=line_start and at == 0))
        out.append("**" + _escape_span(match.group(1), line_start=False) + "**")
        at = match.end()
    out.append(_escape_span(span[at:], line_start=line_start and at == 0))
    return "".join(out)


def _escape_line(
    line: str, citations: Collection[int], anchors: Mapping[int, str], *, bold: bool = False
) -> str:
    line = line.strip(" \t")
    if not citations:
        return _escape_marked(line, line_start=True, bold=bold)
    parts, start = [], 0
    for match in _CITATION.finditer(line):
        if int(match.group(1)) in citations:
            piece = line[start : match.start()]
            parts.append(_escape_marked(piece, line_start=start == 0, bold=bold))
            parts.append(_citation_marker(int(match.group(1)), anchors))
            start = match.end()
    parts.append(_escape_marked(line[start:], line_start=start == 0, bold=bold))
    return "".join(parts)


def _blocks(
    value: str,
    citations: Collection[int] = (),
    anchors: Mapping[int, str] | None = None,
    *,
    bold: bool = False,
) -> str:
    paragraphs: list[list[str]] = [[]]
    for line in _LINE_BREAK.split(value):
        if line.strip(" \t"):
            paragraphs[-1].append(_escape_line(line, citations, anchors or {}, bold=bold))
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join("  \n".join(lines) for lines in paragraphs if lines)


def escape_text(value: object) -> str:
    """Untrusted text as literal Markdown, keeping its line breaks and paragraphs."""
    return _blocks(str(value))


def escape_inline(value: object) -> str:
    """Untrusted text as literal Markdown on one line (labels, locations, table-like rows)."""
    return _escape_span(" ".join(str(value).split()), line_start=True)


def quote_block(value: object) -> str:
    """Untrusted text as a literal Markdown block quote."""
    body = escape_text(value)
    return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))


@dataclass(frozen=True)
class QuotedRow:
    """A table row an answer quotes, as the answer has it and as a small table shows it."""

    shown: str  # the row in the answer's text ('Header: value; Header: value')
    key: str  # what the row is about (its first cell): the label of an evidence bullet
    header: tuple[str, ...]
    cells: tuple[str, ...]


def answer_markdown(
    value: str,
    citations: Collection[int],
    anchors: Mapping[int, str] | None = None,
    rows: Sequence[QuotedRow] = (),
) -> str:
    """An answer (model or offline text) as literal Markdown; `[n]` markers whose n is one of
    the answer's citations get a bold number (`[**n**]`: bold inside the brackets opens and closes
    whatever is next to it, `**[n]**` does not after a letter), every other bracket stays text.
    With `anchors` (n → the id of its source card's heading) the number is an in-page link to
    the card: the only link an answer can hold, to an id we made (`#...`, never a URL). A
    `**key span**` stays bold, its inside escaped like the rest. A line quoting one of `rows`
    loses the run-on quote and is followed by the row as a small table (its header and that
    row, every cell escaped like the rest: a table of literal text)."""
    cited = frozenset(citations)
    if not rows:
        return _blocks(value, cited, anchors, bold=True)
    out: list[str] = []
    pending: list[str] = []
    for line in _LINE_BREAK.split(value):
        plain = line.replace("**", "")
        row = next((r for r in rows if r.shown and r.shown in plain), None)
        if row is None:
            pending.append(line)
            continue
        rest = " ".join(plain.replace(f"“{row.shown}”", "").replace(row.shown, "").split())
        if rest.startswith(("- ", "-[")) or rest == "-":
            label = f"{row.header[0]} {row.key}" if row.header and row.header[0] else row.key
            rest = f"- {label} {rest[1:].strip()}".rstrip()
        pending.append(rest)
        out.append(_blocks("\n".join(pending), cited, anchors, bold=True))
        pending = []
        out.append(table_markdown(row.header, row.cells, marked=_BOLD.findall(line)))
    out.append(_blocks("\n".join(pending), cited, anchors, bold=True))
    return "\n\n".join(part for part in out if part)


def table_markdown(
    header: Sequence[str], cells: Sequence[str], marked: Collection[str] = ()
) -> str:
    """One row under its header as a GFM table; every cell is literal text (escaped like the
    rest, a `|` in a cell is `\\|`), a cell equal to one of `marked` in bold."""
    width = max(len(header), len(cells), 1)
    head = [*header, *[""] * (width - len(header))]
    row = [*cells, *[""] * (width - len(cells))]
    wanted = {" ".join(m.split()) for m in marked}

    def cell(value: str, bold: bool) -> str:
        text = " ".join(value.split())
        escaped = _escape_span(text, line_start=False)
        return f"**{escaped}**" if bold and text in wanted and escaped else escaped or " "

    lines = [
        "| " + " | ".join(cell(h, False) for h in head) + " |",
        "|" + " --- |" * width,
        "| " + " | ".join(cell(v, True) for v in row) + " |",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- web links

_PATH_SAFE = "/?#:@!$&'*+,;=%-._~"  # no ( ) [ ] < > " \ ` { } | ^ space: percent-encoded


@dataclass(frozen=True)
class WebLink:
    """An http(s) URL we parsed and rebuilt ourselves: its host and a Markdown-safe href."""

    domain: str
    href: str


def web_link(url: object) -> WebLink | None:
    """The link for an untrusted URL, or None unless it is a well-formed http(s) URL.

    User info is dropped (`https://bank.example@evil.example/` goes to evil.example and says so),
    the host is shown in its ASCII (IDNA) form, everything unusual in the rest is %-encoded.
    """
    raw = str(url or "").strip()
    try:
        parts = urlsplit(raw)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in {"http", "https"} or not host:
        return None
    try:
        ip = ipaddress.ip_address(host)
        domain = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    except ValueError:
        try:
            domain = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None
        if not re.fullmatch(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?", domain):
            return None
    netloc = domain + (f":{port}" if port is not None else "")
    rest = parts.path or "/"
    rest += f"?{parts.query}" if parts.query else ""
    rest += f"#{parts.fragment}" if parts.fragment else ""
    href = f"{parts.scheme.lower()}://{netloc}{quote(rest, safe=_PATH_SAFE)}"
    return WebLink(domain=domain, href=href)


def link_markdown(target: WebLink, label: str | None = None) -> str:
    """The one kind of link we emit: text we escape, pointing at a URL we rebuilt."""
    return f"[{escape_inline(label or target.domain)}]({target.href})"
