"""Markdown is read as its reader sees it: emphasis, code spans, links and images become their
text, so an answer quoting a Markdown file shows words, not '**' and '[..](..)'."""

from __future__ import annotations

from graph.offline import OfflineReasoner
from graph.protocols import EvidenceItem
from ingest.parse import md_inline, parse_bytes


def test_inline_marks_become_text_and_identifiers_stay() -> None:
    assert (
        md_inline("The **fee** is _low_, `cfg.yaml` and ~~old~~")
        == "The fee is low, cfg.yaml and old"
    )
    assert md_inline("see [the portal](https://p.example/x) ![logo](l.png)") == (
        "see the portal (https://p.example/x) logo"
    )
    assert md_inline("snake_case_name and 2*3*4") == "snake_case_name and 2*3*4"


def test_a_parsed_markdown_file_has_no_inline_marks_in_text_headings_or_cells() -> None:
    md = b"# The **Guide**\n\nRefunds take **14 days**.\n\n| Item | Price |\n|---|---|\n| *Pump* | `40` |\n"
    doc = parse_bytes(md, "guide.md")
    assert "**" not in doc.text and "`" not in doc.text and "*" not in doc.text
    assert "Refunds take 14 days." in doc.text and "Pump | 40" in doc.text
    assert doc.title == "The Guide"


def test_an_evidence_line_of_a_list_item_has_one_bullet() -> None:
    item = EvidenceItem(n=1, chunk_id="c", title="t", source="t.md",
                        text="- Restart the pump after 30 minutes.\n- Log the restart.")  # fmt: skip
    text = "".join(
        p for p in OfflineReasoner().answer("When is the pump restarted?", [item], [])
        if isinstance(p, str)
    )  # fmt: skip
    assert "- -" not in text and "“- " not in text
