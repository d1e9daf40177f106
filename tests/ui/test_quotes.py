"""Source cards show the unit the answer quotes, in its context, the quoted words marked
(issue 46, item 3): which text each [n] is attached to, where it is in the passage, and a card
drawn by AppTest with hostile passage text."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.markdown_tokens import links, live_parts, shown_text
from ui.documents import MARK, section_markdown
from ui.quotes import answer_quotes, cited_context, marked_passage, unit_spans

PASSAGE = (
    "The Orrin depot opens at six. Forklifts are charged overnight in bay C. "
    "Every pallet leaving the Orrin depot is weighed twice before loading. "
    "Drivers sign the manifest at the gate."
)
ROWS = "Item | Shelf | Count\nbolts | A4 | 120\nwashers | B1 | 75\nrivets | C9 | 310"


def test_each_marker_gets_the_text_it_is_attached_to() -> None:
    answer = (
        "The documents say: “Every pallet leaving the Orrin depot is **weighed twice** before "
        "loading.” [1]\n"
        "Answer: 75 [2]\n"
        "- Drivers sign the manifest at the gate [1]. Forklifts charge in bay C [3, 1]\n"
        "No marker on this line."
    )
    quotes = answer_quotes(answer)
    assert quotes[1] == [
        "Every pallet leaving the Orrin depot is weighed twice before loading.",
        "Drivers sign the manifest at the gate",
        "Forklifts charge in bay C",
    ]
    assert quotes[2] == ["75"] and quotes[3] == ["Forklifts charge in bay C"]


def test_sentences_and_rows_are_units() -> None:
    units = [PASSAGE[a:b] for a, b in unit_spans(PASSAGE)]
    assert units[0] == "The Orrin depot opens at six." and len(units) == 4
    assert [ROWS[a:b] for a, b in unit_spans(ROWS)][1] == "bolts | A4 | 120"
    assert len(unit_spans("It costs 1.5 euros. Then more.")) == 2  # a decimal ends nothing


@pytest.mark.parametrize("depot", ["Orrin", "Vellan Kai"])  # renamed: the same structure
def test_the_cited_unit_is_shown_in_its_context_and_marked(depot: str) -> None:
    passage = PASSAGE.replace("Orrin", depot)
    quote = f"Every pallet leaving the {depot} depot is weighed twice before loading."
    context = cited_context(passage, ["not in this passage at all", quote])
    assert context is not None and context.marked is not None
    start, end = context.marked
    assert context.text[start:end] == quote.rstrip(".")  # the words, not the full stop
    assert context.text.startswith("… Forklifts are charged")  # one unit before, cut marked
    assert context.text.endswith("at the gate.")  # one unit after, the passage's end
    assert "opens at six" not in context.text
    markdown = section_markdown(context)
    assert f":{MARK}[**Every pallet" in markdown


def test_a_value_is_marked_inside_its_row_under_the_table_header() -> None:
    context = cited_context(ROWS, ["75"])
    assert context is not None and context.marked is not None
    assert context.text == ROWS  # the row, a row either side, and the header row
    assert context.text[slice(*context.marked)] == "75"
    longer = ROWS + "\nnails | D2 | 900\nscrews | E5 | 40"
    context = cited_context(longer, ["nails D2 900"])
    assert context is not None and context.marked is not None
    assert (
        context.text
        == "Item | Shelf | Count\n… rivets | C9 | 310\nnails | D2 | 900\nscrews | E5 | 40"
    )
    assert context.text[slice(*context.marked)] == "nails | D2 | 900"
    assert cited_context(ROWS, ["nothing here matches"]) is None
    assert marked_passage(ROWS, "B1 | 75").marked is not None
    assert marked_passage(ROWS, "").marked is None


HOSTILE = (
    "Intro line. Refunds take ![x](http://127.0.0.1:9/leak) forty five days "
    "<img src=x onerror=alert(1)>. See [here](http://127.0.0.1:9/link) :yellow-background[fake]."
)


def draw_card(card):  # type: ignore[no-untyped-def]  # AppTest runs its source alone
    from ui.cards import source_card

    source_card(card)


def test_a_card_draws_hostile_text_as_text_with_one_mark_and_the_full_passage() -> None:
    card = {
        "n": 1,
        "where": "refunds.md · Refunds",
        "quote": "Intro line.",  # the extracted sentence; the answer quotes another one
        "cited": ["Refunds take forty five days"],
        "url": None,
        "chunk_id": "doc-r-v1-00000",
        "full_text": HOSTILE,
        "doc_id": "",
        "answer": "t:1",
    }
    at = AppTest.from_function(draw_card, args=(card,)).run()
    assert not at.exception
    excerpt = str(at.markdown[1].value)  # after the location line
    assert excerpt.count(f":{MARK}[") == 1 and f":{MARK}[**Refunds take" in excerpt
    assert live_parts(excerpt, allow=frozenset({"strong"})) == [] and links(excerpt) == []
    assert "![x](http://127.0.0.1:9/leak)" in shown_text(excerpt)
    assert [e.label for e in at.expander] == ["Full passage"]
    whole = str(at.expander[0].markdown[0].value)
    assert "Intro line" in whole and whole.count(f":{MARK}[") == 1
    assert live_parts(whole, allow=frozenset({"strong"})) == [] and links(whole) == []


def test_a_row_quoted_as_its_fields_marks_that_row_not_an_evidence_row() -> None:
    """A quoted row reads 'Label: value; …' while the passage holds 'value | value': the card
    finds it by its values, and the lead's row wins over the rows the evidence lists."""
    passage = (
        "Item | Shelf | Keeper | Phone\nbolts | A4 | Ida Renn | 555-0101\n"
        "washers | B1 | Olu Mark | 555-0102\nrivets | C9 | Pia Stol | 555-0103"
    )
    answer = (
        "The documents say: “Item: washers; Shelf: B1; Keeper: Olu Mark; Phone: 555-0102” [1]\n\n"
        "Evidence:\n- Item: rivets; Shelf: C9; Keeper: Pia Stol; Phone: 555-0103 [1]\n"
    )
    quotes = answer_quotes(answer)[1]
    assert quotes == ["washers B1 Olu Mark 555-0102", "rivets C9 Pia Stol 555-0103"]
    shown = cited_context(passage, quotes)
    assert shown is not None and shown.marked is not None
    assert shown.text[shown.marked[0] : shown.marked[1]].startswith("washers | B1")
