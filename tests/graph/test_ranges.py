"""The ranges a unit states and whether an amount of the question falls in them: a band of a
threshold table is read by its bounds, a phone number or a weight unit is no range."""

from __future__ import annotations

from graph.offline.asked import read_question
from graph.offline.features import UNIT_FEATURES, ranges_in, unit_features
from graph.offline.units import units
from graph.protocols import EvidenceItem


def in_range_of(table: str, question: str, holding: str) -> list[float]:
    """`in_range` of each unit of the table whose row shows `holding`."""
    found = units(EvidenceItem(n=1, chunk_id="c1", source="rules.md", text=table), rank=1)
    scored = unit_features(read_question(question), found)
    return [s.features["in_range"] for s in scored if holding in s.unit.shown()]


def test_bands_are_ranges_and_phone_numbers_or_kilograms_are_not() -> None:
    assert ranges_in("二档 | 8,000元以上至60,000元 | 部门经理") == [(8000.0, 60000.0)]
    assert ranges_in("below 98.5% but at least 97.0%") == [(97.0, 98.5)]
    assert ranges_in("总机：021-6650 3000") == []  # an area code and a number
    assert ranges_in("10-20 kg per carton") == [(10.0, 20.0)]  # 'kg' is no thousand
    assert ranges_in("5k-10k seats") == [(5000.0, 10000.0)]
    assert ranges_in("订单号 2026-0412") == []


def test_the_band_holding_the_amount_is_in_range_and_its_siblings_are_not() -> None:
    table = (
        "| Band | Amount | Approver |\n|---|---|---|\n"
        "| 1 | 0 to 8,000 | Team lead |\n"
        "| 2 | 8,000 to 60,000 | Plant manager |\n"
        "| 3 | 60,000 to 400,000 | Finance director |\n"
    )
    question = "Who approves a purchase of 45,000?"
    holding = in_range_of(table, question, "Plant manager")
    siblings = in_range_of(table, question, "Finance director")
    assert holding and holding[0] == 1.0
    assert siblings and siblings[0] == 0.0
    assert "in_range" in UNIT_FEATURES


def test_an_open_range_counts_by_how_near_its_bound_is() -> None:
    table = "| Rule | Text |\n|---|---|\n| A | over 30,000 |\n| B | more than 2 days |\n"
    near = in_range_of(table, "Who signs a purchase of 40,000?", "30,000")
    far = in_range_of(table, "Who signs a purchase of 40,000?", "2 days")
    assert near and far and near[0] == 0.75 and far[0] < 0.001


def test_the_lowest_band_from_zero_is_a_band() -> None:
    table = "| Band | Amount |\n|---|---|\n| 1 | 0 to 8,000 |\n| 2 | 8,000 to 60,000 |\n"
    lowest = in_range_of(table, "Who approves a purchase of 1,000?", "0 to 8,000")
    assert lowest and lowest[0] == 1.0
    assert ranges_in("order 1999-0415") == []  # a code's digit groups: no bound opens with 0
