"""Scoring functions of `hopwise eval` on hand-made cases."""

from __future__ import annotations

import pytest

from hopwise.evaluation import scoring as sc

GROUPS = [["p1"], ["p2", "p2b"], ["p3"]]


def test_recall_counts_a_group_once_any_of_its_ids_is_retrieved() -> None:
    assert sc.recall_at(GROUPS, ["x", "p2b", "p1"], 10) == pytest.approx(2 / 3)
    assert sc.recall_at(GROUPS, ["p2", "p2b"], 10) == pytest.approx(1 / 3)


def test_recall_is_capped_at_the_budget_in_rank_order() -> None:
    ranked = ["a", "b", "c", "d", "p1", "p2", "p3"]
    assert sc.recall_at(GROUPS, ranked, 5) == pytest.approx(1 / 3)
    assert sc.recall_at(GROUPS, ranked, 6) == pytest.approx(2 / 3)
    assert sc.recall_at(GROUPS, ranked, 20) == 1.0
    assert sc.all_covered(GROUPS, ranked, 6) is False
    assert sc.all_covered(GROUPS, ranked, 7) is True


def test_first_and_last_hop_recall() -> None:
    assert sc.hop_recall(GROUPS, ["p3"], 10, 0) == 0.0
    assert sc.hop_recall(GROUPS, ["p3"], 10, -1) == 1.0
    assert sc.hop_recall([], ["p3"], 10, 0) is None


def test_exact_match_normalises_case_punctuation_and_articles() -> None:
    assert sc.exact_match("The Yang Xingmi.", ["yang xingmi"]) == 1.0
    assert sc.exact_match("Yang", ["Yang Xingmi"]) == 0.0
    assert sc.exact_match("an apple", ["Apple", "pear"]) == 1.0


def test_token_f1_english_words() -> None:
    assert sc.token_f1("Nottingham Forest F.C.", ["Nottingham Forest"]) == pytest.approx(0.8)
    assert sc.token_f1("", ["x"]) == 0.0
    assert sc.token_f1("completely different", ["Nottingham Forest"]) == 0.0


def test_token_f1_is_character_level_for_chinese() -> None:
    # 3 of 5 predicted characters match the 3-character gold answer: P=0.6, R=1.0.
    assert sc.token_f1("李家超当选", ["李家超"]) == pytest.approx(0.75)
    assert sc.answer_tokens("高亭宇 GOLD 500米") == ["高", "亭", "宇", "gold", "500", "米"]


def test_contains_answer_with_and_without_parts() -> None:
    assert sc.contains_answer("He was born in Buenos Aires.", ["Buenos Aires"]) == 1.0
    parts = [["李家超"], ["5月8日", "五月八日"]]
    assert sc.contains_answer("李家超于五月八日当选。", [], parts) == 1.0
    assert sc.contains_answer("李家超当选。", [], parts) == 0.0


def test_abstention_follows_the_verdict_then_the_wording() -> None:
    assert sc.abstained("Paris [1]", enough=False) is True
    assert sc.abstained("The evidence is not enough; still missing: the date") is True
    assert sc.abstained("证据不足，仍缺少：时间") is True
    assert sc.abstained("Paris is the capital [1].", enough=True) is False


def test_percentile_nearest_rank() -> None:
    values = list(range(1, 11))
    assert sc.percentile(values, 50) == 5
    assert sc.percentile(values, 95) == 10
    assert sc.percentile([], 50) == 0.0
