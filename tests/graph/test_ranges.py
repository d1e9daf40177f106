"""The ranges a unit states and whether an amount of the question falls in them: a band of a
threshold table is read by its bounds, a phone number or a weight unit is no range."""

from __future__ import annotations

from graph.offline.asked import read_question
from graph.offline.features import UNIT_FEATURES, ranges_in, unit_features
from graph.offline.units import units
from graph.protocols import EvidenceItem


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
    item = EvidenceItem(n=1, chunk_id="c1", source="approvals.md", text=table)
    found = units(item, rank=1)
    rows = {u.shown(): s.features for u, s in zip(found, unit_features(
        read_question("Who approves a purchase of 45,000?"), found), strict=True)}  # fmt: skip
    band = {name: f for name, f in rows.items() if "Approver" in name or "|" in name}
    holding = [f for text, f in band.items() if "Plant manager" in text]
    siblings = [f for text, f in band.items() if "Finance director" in text]
    assert holding and holding[0]["in_range"] == 1.0
    assert siblings and siblings[0]["in_range"] == 0.0
    assert "in_range" in UNIT_FEATURES


def test_an_open_range_counts_by_how_near_its_bound_is() -> None:
    table = "| Rule | Text |\n|---|---|\n| A | over 30,000 |\n| B | more than 2 days |\n"
    item = EvidenceItem(n=1, chunk_id="c1", source="rules.md", text=table)
    found = units(item, rank=1)
    scored = unit_features(read_question("Who signs a purchase of 40,000?"), found)
    near = [s.features["in_range"] for s in scored if "30,000" in s.unit.shown()]
    far = [s.features["in_range"] for s in scored if "2 days" in s.unit.shown()]
    assert near and far and near[0] == 0.75 and far[0] < 0.001


def test_the_lowest_band_from_zero_is_a_band() -> None:
    table = "| Band | Amount |\n|---|---|\n| 1 | 0 to 8,000 |\n| 2 | 8,000 to 60,000 |\n"
    item = EvidenceItem(n=1, chunk_id="c1", source="bands.md", text=table)
    found = units(item, rank=1)
    scored = unit_features(read_question("Who approves a purchase of 1,000?"), found)
    lowest = [s.features["in_range"] for s in scored if "0 to 8,000" in s.unit.shown()]
    assert lowest and lowest[0] == 1.0
    assert ranges_in("order 1999-0415") == []  # a code's digit groups: no bound opens with 0
