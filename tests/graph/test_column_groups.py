"""A value is bound to its column group: a quoted row leaves out the group the question does
not name (the primary's phone is no answer about the backup)."""

from __future__ import annotations

from graph.offline.column_groups import bound_cells, column_groups, named_heads
from graph.offline.compose import compose
from graph.protocols import EvidenceItem

ROW = (
    ("Line", "north-pier"),
    ("Lead", "Ida Brandt"),
    ("Lead phone", "0161 555 0101"),
    ("Deputy", "Omar Felt"),
    ("Deputy phone", "0161 555 0199"),
)
ZH = (("班组", "甲组"), ("班组长", "杨一"), ("班组长手机", "13700000001"),
      ("副班组长", "马二"), ("副班组长手机", "13700000002"))  # fmt: skip


def test_groups_are_a_name_column_and_the_columns_it_heads() -> None:
    assert column_groups([h for h, _ in ROW]) == {
        "Lead": ["Lead", "Lead phone"],
        "Deputy": ["Deputy", "Deputy phone"],
    }
    # '班组' is a prefix of a family, not a group; '副班组长' is not '班组长'
    assert column_groups([h for h, _ in ZH]) == {
        "班组长": ["班组长", "班组长手机"],
        "副班组长": ["副班组长", "副班组长手机"],
    }
    assert named_heads("那甲组的副班组长呢？", ["班组长", "副班组长"]) == {"副班组长"}


def test_the_group_the_question_does_not_name_is_left_out_its_anchor_kept() -> None:
    about_deputy = bound_cells("and who is Ida Brandt's deputy? their number too", ROW)
    assert ("Deputy phone", "0161 555 0199") in about_deputy
    assert ("Lead phone", "0161 555 0101") not in about_deputy
    assert ("Lead", "Ida Brandt") in about_deputy and ("Line", "north-pier") in about_deputy
    assert bound_cells("who is on the north-pier line?", ROW) == ROW  # no group named: whole
    assert ("副班组长手机", "13700000002") not in bound_cells("甲组班组长是谁？电话多少？", ZH)


def test_the_first_line_quotes_the_row_bound_to_what_is_asked() -> None:
    table = (
        "| Line | Lead | Lead phone | Deputy | Deputy phone |\n|---|---|---|---|---|\n"
        "| north-pier | Ida Brandt | 0161 555 0101 | Omar Felt | 0161 555 0199 |\n"
        "| south-pier | Rui Sato | 0161 555 0202 | Lena Ost | 0161 555 0299 |\n"
    )
    item = EvidenceItem(n=1, chunk_id="c1", source="shifts.md", title="Shift leads", text=table)
    answer = "".join(
        compose("Who is the deputy on the north-pier line, and their phone?", [item], [])
    )
    first = answer.splitlines()[0]
    assert "0161 555 0199" in first and "0161 555 0101" not in first, answer


def test_the_page_draws_the_bound_row_as_a_small_table_of_its_cells() -> None:
    from graph.offline.units import quoted_rows

    table = (
        "| Line | Lead | Lead phone | Deputy | Deputy phone |\n|---|---|---|---|---|\n"
        "| north-pier | Ida Brandt | 0161 555 0101 | Omar Felt | 0161 555 0199 |\n"
    )
    item = EvidenceItem(n=1, chunk_id="c1", source="shifts.md", title="Shift leads", text=table)
    answer = "".join(
        compose("Who is the deputy on the north-pier line, and their phone?", [item], [])
    )
    rows = quoted_rows(answer, [item])
    assert len(rows) == 1
    assert [h for h, _ in rows[0].cells] == ["Line", "Deputy", "Deputy phone"], answer


def test_a_value_the_question_gives_only_inside_a_word_or_number_is_no_anchor() -> None:
    row = (("Shift", "line 2"), ("Lead", "Ida Brandt"), ("Lead phone", "2"),
           ("Deputy", "Omar Felt"), ("Deputy phone", "0161 555 0199"))  # fmt: skip
    bound = bound_cells("who is the deputy on line 2?", row)
    assert ("Lead phone", "2") not in bound and ("Deputy phone", "0161 555 0199") in bound
    # a heading that ends in a bracket is named like any other
    bracketed = (("Site", "Dock 4"), ("Contact (day)", "Ida Brandt"),
                 ("Contact (day) phone", "0161 555 0101"), ("Contact (night)", "Omar Felt"),
                 ("Contact (night) phone", "0161 555 0199"))  # fmt: skip
    night = bound_cells("who is the contact (night) at Dock 4?", bracketed)
    assert ("Contact (day) phone", "0161 555 0101") not in night
    assert ("Contact (night) phone", "0161 555 0199") in night
    # every group named: the row whole
    assert bound_cells("the lead and the deputy on line 2?", row) == row
