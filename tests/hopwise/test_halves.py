"""The fixed two-way split of eval questions: stable per id, about even, scored per half."""

from __future__ import annotations

from hopwise.evaluation.halves import half_of, score_halves


def test_the_split_is_fixed_and_about_even() -> None:
    ids = [f"q-{i}" for i in range(400)]
    halves = [half_of(i) for i in ids]
    assert halves == [half_of(i) for i in reversed(ids)][::-1]  # order does not matter
    assert 160 < halves.count("A") < 240


def test_each_half_is_scored_from_its_own_rows() -> None:
    rows = [
        {"id": f"q-{i}", "recall_at": {"5": float(half_of(f"q-{i}") == "A"), "10": 1.0, "20": 1.0}}
        for i in range(40)
    ]
    scores = score_halves({"questions": rows + [{"id": "bad", "error": "boom"}]})
    assert scores["A"]["R@5"] == 1.0 and scores["B"]["R@5"] == 0.0
    assert scores["all"]["n"] == 40 and scores["all"]["R@10"] == 1.0
