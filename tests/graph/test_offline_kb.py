"""Offline answers on a small contract KB (real Milvus Lite): role -> company -> its record."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hopwise.app import Hopwise
from tests.graph.offline_app import leads_with, offline_app

DOCS = {
    "contract.md": "# 供货合同\n## 第一条 供货方\n本合同的供货方为深圳星河电子有限公司，采购方为北京云帆"
    "科技有限公司。\n## 第五条 违约责任\n供货方逾期交货的，每逾期一日，应按合同总额的千分之三向采购方"
    "支付违约金。违约金总额不超过合同总额的百分之十。\n## 第八条 争议解决\n因本合同引起的争议，提交"
    "深圳国际仲裁院仲裁。\n",
    "company.md": "# 公司档案\n## 深圳星河电子有限公司\n深圳星河电子有限公司成立于2009年，法定代表人为"
    "李明远，总部位于深圳市南山区。\n## 北京云帆科技有限公司\n北京云帆科技有限公司成立于2015年，法定代表人"
    "为王佳。\n",
    "supply-contract.md": "# Supply Contract\n## Article 1 Parties\nThe supplier under this "
    "contract is Starriver Electronics Ltd., and the purchaser is Cloudsail Technology Co.\n"
    "## Article 5 Liability\nIf the supplier delivers late, it shall pay the purchaser 0.3% of "
    "the contract price per day of delay.\n",
    "company-records.md": "# Company records\n## Starriver Electronics Ltd.\nStarriver "
    "Electronics Ltd. was founded in 2009 in Shenzhen. Its legal representative is Li Mingyuan."
    "\n## Cloudsail Technology Co.\nCloudsail Technology Co. was founded in 2015 in Beijing. "
    "Its legal representative is Wang Jia.\n",
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hopwise]:
    with offline_app(tmp_path_factory.mktemp("kb-zh"), DOCS) as opened:
        yield opened


def _lines(result: object) -> list[str]:
    return [line for line in result.answer.splitlines() if line.startswith("- ")]  # type: ignore[attr-defined]


def test_role_bridge_answers_first_then_evidence_in_reasoning_order(app: Hopwise) -> None:
    result = app.ask("供货方的法定代表人是谁？")
    hops = result.hops
    assert hops[0].sub_question == "供货方"
    assert hops[1].query.startswith("深圳星河电子有限公司") and hops[1].bridged
    assert hops[1].bridge["chosen_entity"] == "深圳星河电子有限公司"
    assert "李明远" in result.short_answer and leads_with(result.answer, "李明远"), result.answer
    assert result.evaluation.enough, result.evaluation
    lines = _lines(result)
    assert "供货方为深圳星河电子有限公司" in lines[0], result.answer  # the link, first
    assert "王佳" not in result.answer.splitlines()[0] and "未找到" not in result.answer


def test_follow_up_about_the_other_party(app: Hopwise) -> None:
    first = app.ask("供货方的法定代表人是谁？")
    follow = app.ask("那采购方呢？", thread_id=first.thread_id)
    assert follow.standalone_question == "采购方的法定代表人是谁？"
    assert leads_with(follow.answer, "王佳"), follow.answer
    assert "李明远" not in follow.answer.splitlines()[0]


def test_english_role_bridge_and_follow_up(app: Hopwise) -> None:
    result = app.ask("Who is the legal representative of the supplier?")
    assert result.hops[1].query.startswith("Starriver Electronics Ltd")
    assert leads_with(result.answer, "Li Mingyuan"), result.answer
    assert "supplier under this contract is Starriver" in _lines(result)[0]
    assert "Wang Jia" not in result.answer.splitlines()[0]
    follow = app.ask("What about the purchaser?", thread_id=result.thread_id)
    assert follow.standalone_question == "Who is the legal representative of the purchaser?"
    assert leads_with(follow.answer, "Wang Jia"), follow.answer
    assert "Li Mingyuan" not in follow.answer.splitlines()[0]


def test_a_self_contained_follow_up_passes_through_unchanged(app: Hopwise) -> None:
    first = app.ask("Who is the legal representative of the supplier?")
    question = "When was Cloudsail Technology Co. founded?"
    follow = app.ask(question, thread_id=first.thread_id)
    assert follow.standalone_question == question
    assert leads_with(follow.answer, "2015"), follow.answer


def test_an_unanswerable_question_says_so_first_and_names_what_is_missing(app: Hopwise) -> None:
    result = app.ask("Who is the auditor of the purchaser?")
    assert not result.evaluation.enough
    assert result.short_answer == "", result.answer
    assert result.answer.startswith("The documents do not say directly: Who is the auditor")
    missing = result.answer.split("Looked for: ", 1)[1]
    assert "auditor" in missing and "'" not in missing  # a sub-question in words, no tokens
    assert "Beijing" not in result.answer.splitlines()[0]  # no lead about the name only
