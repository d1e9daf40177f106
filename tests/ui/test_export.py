"""A conversation exported as Markdown: questions, answers, resolved citations, nothing of the
untrusted text turned into a link, image, HTML or heading."""

from __future__ import annotations

from datetime import UTC, datetime

from graph.result import QuestionResult
from tests.ui.markdown_tokens import live_parts, shown_text, tokens
from ui.export import conversation_markdown, export_file_name

NOW = datetime(2025, 3, 4, 5, 6, tzinfo=UTC)


def result(question: str, answer: str, citations: list[dict[str, object]]) -> QuestionResult:
    return QuestionResult.model_validate(
        {"question": question, "answer": answer, "citations": citations}
    )


def test_each_question_and_answer_with_its_sources_resolved() -> None:
    chat = [
        result(
            "Who supplies the turbines?",
            "Northwind Ltd supplies them [1].\n\nThey deliver within thirty days [2].",
            [
                {"n": 1, "source": "supply.md", "section": "Contract > Parties", "page": 3},
                {"n": 2, "source": "terms.pdf", "section": "Delivery"},
            ],
        ),
        result(
            "And in the news?",
            "A report confirms it [1].",
            [{"n": 1, "title": "Wind weekly", "url": "https://news.example/turbines?id=7"}],
        ),
    ]
    text = conversation_markdown("Turbine supply", chat, now=NOW)
    assert text.startswith("# Turbine supply\n")
    assert "2025-03-04 05:06 UTC" in text
    assert "## 1. Who supplies the turbines?" in text and "## 2. And in the news?" in text
    shown = shown_text(text)
    assert "Northwind Ltd supplies them [1]." in shown  # citations stay readable (in bold)
    assert "supplies them [1].\n\nThey deliver" in shown  # paragraphs kept
    assert "- **[1]** supply.md · Contract > Parties · p. 3" in text
    assert "- **[2]** terms.pdf · Delivery\n" in text
    assert "- **[1]** Wind weekly — <https://news.example/turbines?id=7>" in text
    assert text.index("supply.md") < text.index("## 2.") < text.index("Wind weekly")


def test_untrusted_text_stays_literal() -> None:
    hostile = result(
        "# Title? <b>x</b>",
        "![pixel](https://evil.example/p.png) [click](javascript:alert(1))\n"
        "<script>alert(1)</script>\n[1]: https://evil.example\n- item\n1. first",
        [{"n": 1, "title": "odd", "url": "javascript:alert(1)"}],
    )
    text = conversation_markdown("[x](https://evil.example)", [hostile], now=NOW)
    kinds = [t.type for t in tokens(text)]
    for kind in ("link_open", "image", "html_inline", "html_block", "ordered_list_open"):
        assert kind not in kinds, kind
    assert kinds.count("heading_open") == 2 and kinds.count("bullet_list_open") == 1  # ours
    shown = shown_text(text)
    assert "<script>alert(1)</script>" in shown and "<b>x</b>" in shown  # as text
    assert "https://evil.example" in shown  # a bare URL stays text, never an autolink
    ours = frozenset({"heading", "bullet_list", "list_item", "strong", "em", "link"})
    assert live_parts(text, allow=ours) == []  # (the only link: our rebuilt web URL)
    assert "\n[1]:" not in text  # no link reference definition
    assert "\n- item" not in text and "\n1. first" not in text  # no list of its own
    assert "## 1. \\# Title?" in text
    assert "— javascript:alert(1)" in shown  # a non-web URL is shown as text, not linked


def test_file_name_is_safe() -> None:
    assert (
        export_file_name("Who supplies the turbines?")
        == "hopwise-chat-who-supplies-the-turbines.md"
    )
    assert export_file_name("../../etc/passwd") == "hopwise-chat-etc-passwd.md"
    assert export_file_name("供货合同") == "hopwise-chat-供货合同.md"
    assert export_file_name("???") == "hopwise-chat-export.md"
