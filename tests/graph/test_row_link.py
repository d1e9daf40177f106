"""A chain's link read from a table: the cell under the column the step names, in the one row
that holds what the step names; no link when a row, a column or a value is not one."""

from __future__ import annotations

from graph.offline import OfflineReasoner
from graph.offline.row_link import row_link
from graph.protocols import EvidenceItem, HopView

ROSTER = (
    "| Shift | Lead | Lead phone | Deputy | Deputy phone |\n| --- | --- | --- | --- | --- |\n"
    "| dawn-dock | Ona Brisk | 0100 111 | Pell Varga | 0100 222 |\n"
    "| noon-gate | Ivo Mart | 0100 333 | Una Saar | 0100 444 |\n"
    "| dusk-yard | Ivo Mart | 0100 333 | Rae Quist | 0100 555 |\n"
    "| night-pier | Lia Dorn | 0100 666 | TBD | — |\n"
)
ZH = (
    "| 门店 | 店长 | 店长电话 | 副店长 | 副店长电话 |\n| --- | --- | --- | --- | --- |\n"
    "| 东湖店 | 杨一帆 | 13700000001 | 马二林 | 13700000002 |\n"
    "| 西岭店 | 吴三水 | 13700000003 | 邓四海 | 13700000004 |\n"
)
ITEM = EvidenceItem(n=1, chunk_id="r1", source="roster.md", title="On-call roster", text=ROSTER)
ZH_ITEM = EvidenceItem(n=1, chunk_id="z1", source="stores.md", title="门店值班表", text=ZH)


def hop(sub_question: str) -> HopView:
    return HopView(sub_question=sub_question, query=sub_question)


def test_the_named_row_and_the_asked_column_give_the_link() -> None:
    found = row_link(hop("deputy of Ona Brisk?"), [ITEM])
    assert found is not None and found.text == "Pell Varga"
    primary = row_link(hop("Who is the lead for noon-gate?"), [ITEM])
    assert primary is not None and primary.text == "Ivo Mart"
    zh = row_link(hop("东湖店的副店长是谁？"), [ZH_ITEM])
    assert zh is not None and zh.text == "马二林"


def test_no_link_when_rows_columns_or_values_are_not_one() -> None:
    assert row_link(hop("deputy of Ivo Mart?"), [ITEM]) is None  # two rows, two deputies
    assert row_link(hop("Who is Ona Brisk?"), [ITEM]) is None  # no column asked
    assert row_link(hop("deputy phone of Ona Brisk?"), [ITEM]) is None  # a number names none
    assert row_link(hop("deputy of Kai Wren?"), [ITEM]) is None  # no row holds him
    assert row_link(hop("deputy of Lia Dorn?"), [ITEM]) is None  # 'TBD' names no one


def test_the_offline_chain_asks_its_next_step_about_the_link() -> None:
    reasoner = OfflineReasoner()
    first = hop("deputy of Ona Brisk?").model_copy(update={"hit_ids": ["r1"]})
    query, _ = reasoner.bridge("What is #1's phone?", [first], [ITEM])
    assert "Pell Varga" in query and "Ona Brisk" not in query


def test_a_sentence_that_says_it_of_the_thing_decides_instead_of_the_table() -> None:
    note = EvidenceItem(n=2, chunk_id="r2", source="roster.md", title="Changes",
                        text="From 3 May, Una Saar is deputy for dawn-dock while Pell Varga "
                             "is away.")  # fmt: skip
    assert row_link(hop("deputy for dawn-dock?"), [ITEM]) is not None
    assert row_link(hop("deputy for dawn-dock?"), [ITEM, note]) is None
