"""Rows of one table the question names, compared on the column it asks about (the header's
words, or across languages two or more columns that all agree), and nothing stated otherwise."""

from __future__ import annotations

from graph.offline.answer_compare import comparison_direction
from graph.offline.compose import compose
from graph.offline.row_compare import _comparable, compare_named_rows, named_rows, pieces, tables
from graph.offline.units import pool_units
from graph.protocols import EvidenceItem

VENUES = (
    "| Ref | Venue | Host | Deposit terms | Day rate (EUR) | Rating |\n"
    "| --- | --- | --- | --- | --- | --- |\n"
    "| V-11 | Birchwood Hall 白桦会馆 | Mila Korn | Net 14 | 2,400 | 4 |\n"
    "| V-12 | Pinecrest Lodge 松涛山庄 | Mila Korn | Net 21 | 1,800 | 3 |\n"
    "| V-13 | Saltmarsh Barn 盐沼谷仓 | Oren Vale | Net 30 | 3,100 | 5 |\n"
)
ITEM = EvidenceItem(n=1, chunk_id="v1", source="venues.md", title="Venue list", text=VENUES)


def test_a_row_is_named_by_a_piece_of_a_cell_no_other_row_holds() -> None:
    assert "Pinecrest Lodge" in pieces("Pinecrest Lodge 松涛山庄")
    assert "松涛山庄" in pieces("Pinecrest Lodge 松涛山庄")
    assert "2,400" not in pieces("2,400")  # digits name no row
    rows = tables(pool_units([ITEM]))[0]
    named = named_rows("Saltmarsh Barn or Pinecrest Lodge, which is dearer?", rows)
    assert [p for p, _ in named] == ["Saltmarsh Barn", "Pinecrest Lodge"]
    # Mila Korn hosts two venues: she names neither row
    both = named_rows("Does Mila Korn or Oren Vale host the better-rated venue?", rows)
    assert [p for p, _ in both] == ["Oren Vale"]


def test_the_column_the_question_words_picks_the_row_with_every_value_shown() -> None:
    asked = "Pinecrest Lodge or Saltmarsh Barn — which has the lower day rate?"
    found = compare_named_rows(asked, [ITEM])
    assert found is not None and found.text.startswith("Pinecrest Lodge (Day rate (EUR) — ")
    assert "Pinecrest Lodge: 1,800" in found.text and "Saltmarsh Barn: 3,100" in found.text
    assert found.cites == [1] and len(found.shown) == 2
    higher = compare_named_rows("Pinecrest Lodge or Saltmarsh Barn: higher day rate?", [ITEM])
    assert higher is not None and higher.text.startswith("Saltmarsh Barn")
    first = "".join(compose(asked, [ITEM], [])).splitlines()[0]
    assert first.startswith("Answer: Pinecrest Lodge (") and first.endswith("[1]")


def test_a_difference_is_no_pick() -> None:
    asked = "How much more is the day rate of Saltmarsh Barn than Pinecrest Lodge?"
    assert compare_named_rows(asked, [ITEM]) is None
    assert compare_named_rows("Saltmarsh Barn has a higher day rate than Pinecrest Lodge.",
                              [ITEM]) is None  # fmt: skip


def test_headers_in_the_other_language_are_compared_only_when_several_agree() -> None:
    # terms, day rate and rating all put 盐沼谷仓 above 白桦会馆: stated, each shown
    agreed = compare_named_rows("白桦会馆和盐沼谷仓，哪家的日租金贵？", [ITEM])
    assert agreed is not None and agreed.text.startswith("盐沼谷仓 (")
    assert "Day rate (EUR) — 白桦会馆: 2,400, 盐沼谷仓: 3,100" in agreed.text
    assert "Deposit terms — 白桦会馆: Net 14, 盐沼谷仓: Net 30" in agreed.text
    # 松涛山庄 has the longer terms but the lower rate: which one is asked is not told
    assert compare_named_rows("白桦会馆和松涛山庄，哪家的日租金贵？", [ITEM]) is None


def test_a_lone_column_or_one_without_the_question_words_is_not_what_it_asks() -> None:
    table = (
        "| Service | Owner | Tier |\n| --- | --- | --- |\n"
        "| ledger-api | Ada Fenn | 1 |\n| mail-relay | Ivo Lund | 2 |\n"
    )
    item = EvidenceItem(n=1, chunk_id="c2", source="services.md", title="Services", text=table)
    assert (
        compare_named_rows("Which outage lasted longer, ledger-api or mail-relay?", [item]) is None
    )
    assert compare_named_rows("ledger-api 和 mail-relay 哪个故障时间长？", [item]) is None
    tiered = compare_named_rows("Which has the higher tier, ledger-api or mail-relay?", [item])
    assert tiered is not None and tiered.text.startswith("mail-relay (Tier")


def test_phone_numbers_and_ids_are_not_compared() -> None:
    assert not _comparable("0100 555") and not _comparable("021-5550 1000")
    assert not _comparable("V-11") and not _comparable("")
    assert _comparable("1,800") and _comparable("2031-04-02") and _comparable("Net 14")


def test_no_comparison_word_no_comparison() -> None:
    assert compare_named_rows("What are the terms of Birchwood Hall and Saltmarsh Barn?",
                              [ITEM]) is None  # fmt: skip


def test_a_chinese_adjective_compares_only_where_it_ends_a_clause_that_asks_who_or_which() -> None:
    assert comparison_direction("甲店和乙店，谁的租金高？") == 1
    assert comparison_direction("丙和丁哪个便宜一些呢？") == -1
    assert comparison_direction("高级技师的小时费率是多少？") == 0  # inside words
    assert comparison_direction("巡检周期多长？") == 0  # 'how long' asks, compares nothing
    assert comparison_direction("需要提前多久预约？") == 0
    assert comparison_direction("谁是站长？") == 0  # the 长 of a title
    assert comparison_direction("哪个文件大小合适？") == 0  # a pair, no comparison
    assert comparison_direction("为什么这么贵？") == 0  # no who or which
