"""Rows of one table the question names, compared on the column it asks about (the header's
words, or across languages the columns that all agree), and nothing stated otherwise."""

from __future__ import annotations

from graph.offline.answer_compare import comparison_direction
from graph.offline.compose import compose
from graph.offline.row_compare import compare_named_rows, named_rows, pieces, tables
from graph.offline.units import pool_units
from graph.protocols import EvidenceItem

TABLE = (
    "| Code | Supplier | Buyer | Payment terms | Credit cap (CNY) | Grade |\n"
    "| --- | --- | --- | --- | --- | --- |\n"
    "| S-201 | Qingmu Textiles Ltd. 青木纺织 | Ada Fenn | Net 30 | 800,000 | A |\n"
    "| S-202 | Harbor Glassworks Co. 港湾玻璃 | Ada Fenn | Net 60 | 650,000 | B |\n"
    "| S-203 | Ridgeview Metals 岭景金属 | Ivo Lund | Net 45 | 1,100,000 | A |\n"
)
ITEM = EvidenceItem(n=1, chunk_id="c1", source="suppliers.md", title="Supplier register",
                    text=TABLE)  # fmt: skip


def test_a_row_is_named_by_a_piece_of_a_cell_no_other_row_holds() -> None:
    assert "Harbor Glassworks" in pieces("Harbor Glassworks Co. 港湾玻璃")
    assert "港湾玻璃" in pieces("Harbor Glassworks Co. 港湾玻璃")
    assert "800,000" not in pieces("800,000")  # digits name no row
    rows = tables(pool_units([ITEM]))[0]
    named = named_rows("Ridgeview Metals or Harbor Glassworks, which is cheaper?", rows)
    assert [p for p, _ in named] == ["Ridgeview Metals", "Harbor Glassworks"]
    # 'Ada Fenn' buys for two suppliers: she names neither row
    both = named_rows("Is Ada Fenn or Ivo Lund the buyer with more credit?", rows)
    assert [p for p, _ in both] == ["Ivo Lund"]


def test_the_column_the_question_words_picks_the_row_with_every_value_shown() -> None:
    found = compare_named_rows(
        "Harbor Glassworks or Ridgeview Metals — which has the lower credit cap?", [ITEM]
    )
    assert found is not None
    assert found.text.startswith("Harbor Glassworks (Credit cap (CNY) — ")
    assert (
        "Harbor Glassworks: 650,000" in found.text and "Ridgeview Metals: 1,100,000" in found.text
    )
    assert found.cites == [1] and len(found.shown) == 2
    higher = compare_named_rows("Harbor Glassworks or Ridgeview Metals: higher credit cap?", [ITEM])
    assert higher is not None and higher.text.startswith("Ridgeview Metals")
    first = "".join(compose("Harbor Glassworks or Ridgeview Metals — which has the lower credit "
                            "cap?", [ITEM], [])).splitlines()[0]  # fmt: skip
    assert first.startswith("Answer: Harbor Glassworks (") and first.endswith("[1]")


def test_headers_in_the_other_language_are_compared_only_when_they_agree() -> None:
    # credit cap and payment terms both put 岭景金属 above 青木纺织: stated, both shown
    agreed = compare_named_rows("青木纺织和岭景金属，谁的信用额度高？", [ITEM])
    assert agreed is not None and agreed.text.startswith("岭景金属 (")
    assert "Credit cap (CNY) — 青木纺织: 800,000, 岭景金属: 1,100,000" in agreed.text
    assert "Payment terms — 青木纺织: Net 30, 岭景金属: Net 45" in agreed.text
    # 港湾玻璃 has the longer terms but the smaller cap: which one is asked is not told
    assert compare_named_rows("青木纺织和港湾玻璃，谁的信用额度高？", [ITEM]) is None


def test_a_header_in_the_question_language_without_its_words_is_not_what_it_asks() -> None:
    table = (
        "| Service | Owner | Tier |\n| --- | --- | --- |\n"
        "| ledger-api | Ada Fenn | 1 |\n| mail-relay | Ivo Lund | 2 |\n"
    )
    item = EvidenceItem(n=1, chunk_id="c2", source="services.md", title="Services", text=table)
    assert (
        compare_named_rows("Which outage lasted longer, ledger-api or mail-relay?", [item]) is None
    )
    tiered = compare_named_rows("Which has the higher tier, ledger-api or mail-relay?", [item])
    assert tiered is not None and tiered.text.startswith("mail-relay (Tier")


def test_no_comparison_word_no_comparison() -> None:
    assert compare_named_rows("What are the terms of Qingmu Textiles and Ridgeview Metals?",
                              [ITEM]) is None  # fmt: skip


def test_a_chinese_adjective_compares_only_where_it_ends_a_clause() -> None:
    assert comparison_direction("甲和乙，谁的额度高？") == 1
    assert comparison_direction("甲和乙哪个便宜一些呢？") == -1
    assert comparison_direction("高级工程师的小时工资是多少？") == 0  # inside words
    assert comparison_direction("处理时限多长？") == 0  # 'how long' asks, compares nothing
    assert comparison_direction("要提前多久？") == 0
