"""Numbered classes ('Tier 2', '二类') name one member among its like, and a sentence that
changes a value says what holds now: both decide which unit answers."""

from __future__ import annotations

from graph.offline import reader_checks as rc
from graph.offline import reader_classes as rcl
from graph.offline.decompose import decompose_question
from graph.offline.values import class_anchors
from graph.protocols import EvidenceItem
from tests.fakes.rules import RuleReader

R = RuleReader()

SLA = (
    "Priority | Meaning | Visit time (Tier 1 site) | Visit time (Tier 2 site)\n"
    "P1 | Unit down | 5 hours | 9 hours\n"
    "P2 | Unit degraded | 10 hours | 30 hours"
)
SLA_ZH = (
    "等级 | 含义 | 上门时限（一类网点） | 上门时限（二类网点）\n"
    "P1 | 整机不可用 | 5小时 | 9小时\n"
    "P2 | 部分功能不可用 | 10小时 | 30小时"
)
TIER_NOTE = "Tier 2 sites saw the P1 visit time rise last year after the depot moved to Orlin."


def _item(n: int, text: str, title: str = "service terms") -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=title, source=f"{title}.md", text=text)


def _first(question: str, *items: EvidenceItem) -> str:
    parts = R.answer(question, list(items), [])
    return "".join(p for p in parts if isinstance(p, str)).splitlines()[0]


def test_numbered_classes_are_found_in_both_languages_but_not_same_kind_phrases() -> None:
    assert class_anchors("What is the visit time at a Tier 2 site?") == ["tier 2"]
    assert class_anchors("一类站点和二级仓库") == ["一类", "二级"]
    assert class_anchors("同一类设备每一级都一样") == []
    assert class_anchors("first class service at every level") == []


def test_the_column_of_the_asked_class_is_read_not_the_first_of_its_kind() -> None:
    first = _first("What is the P1 visit time at a Tier 2 site?", _item(1, SLA))
    assert "**9 hours**" in first or first.startswith("Answer: 9 hours")
    zh = _first("二类网点P1故障的上门时限是多少？", _item(1, SLA_ZH))
    assert "**9小时**" in zh or zh.startswith("答案：9小时")
    one = _first("一类网点P1故障的上门时限是多少？", _item(1, SLA_ZH))
    assert "**5小时**" in one or one.startswith("答案：5小时")


def test_a_sentence_about_another_class_does_not_answer_for_the_asked_one() -> None:
    """The note names Tier 2 and the P1 visit time; asked about Tier 1, it is not the answer."""
    first = _first(
        "What is the P1 visit time at a Tier 1 site?",
        _item(1, TIER_NOTE.replace("rise last year", "change to 7 hours")),
        _item(2, SLA),
    )
    assert "7 hours" not in first and ("**5 hours**" in first or "5 hours" in first)


def test_a_question_about_a_numbered_class_is_one_question_not_a_chain() -> None:
    parts = [p.question for p in decompose_question("一类网点的上门时限是多少？")]
    assert len(parts) == 1
    chained = [p.question for p in decompose_question("供货方的联系人是谁？")]
    assert len(chained) == 2  # a role to resolve first still makes a chain


def test_a_sentence_that_changes_the_asked_value_answers_over_the_original_table() -> None:
    amended = (
        "By this supplement the parties agree that the P1 visit time for Tier 2 sites in the "
        "table of the main terms is amended to 7 hours."
    )
    first = _first(
        "What is the P1 visit time at a Tier 2 site?", _item(1, SLA),
        _item(2, amended, "supplement one"),
    )  # fmt: skip
    assert "7 hours" in first and "9 hours" not in first
    amended_zh = "经双方协商，主合同表格中二类网点P1故障的上门时限修改为7小时。"
    zh = _first(
        "二类网点P1故障的上门时限是多少？", _item(1, SLA_ZH),
        _item(2, amended_zh, "补充协议"),
    )  # fmt: skip
    assert "7小时" in zh and "9小时" not in zh
    # the amendment names Tier 2 only: Tier 1 still reads the table
    one = _first(
        "What is the P1 visit time at a Tier 1 site?", _item(1, SLA),
        _item(2, amended, "supplement one"),
    )  # fmt: skip
    assert "5 hours" in one and "7 hours" not in one


def test_a_change_needs_a_new_value_of_the_asked_kind_after_the_change_phrase() -> None:
    assert rc.states_change("The fee was increased to 40 EUR per visit.", "number")
    assert rc.states_change("到场时限调整为6小时。", "number")
    assert not rc.states_change("The fee was increased to cover travel.", "number")
    assert not rc.states_change("The fee is 40 EUR per visit.", "number")


def test_a_change_only_asked_for_holds_nothing() -> None:
    assert not rc.states_change("We request that the deadline be extended to 2031-05-20.", "date")
    assert not rc.states_change("我司申请将该工单的修复期限延长至 2031-05-20。", "date")
    assert rc.states_change("同意延期，但修复截止日期调整为 2031-05-18。", "date")


SITES = "Sites are grouped by distance. Tier 1 sites: Orlin General, Bay Clinic. Tier 2 sites: Hollow Creek."


def test_a_subject_of_no_stated_class_reads_the_column_of_the_class_a_passage_puts_it_in() -> None:
    """'Visit time' comes once per tier; the question names a site, and another passage puts
    that site in Tier 2: the Tier 2 cell is read, and that passage shows as evidence."""
    text = "".join(
        p for p in R.answer(
            "What is the P1 visit time for Hollow Creek?",
            [_item(1, SLA), _item(2, "Tier 2 sites: Hollow Creek, Marl Farm.", "site list")], [],
        ) if isinstance(p, str)
    )  # fmt: skip
    first = text.splitlines()[0]
    assert "**9 hours**" in first or first.startswith("Answer: 9 hours")
    assert "Hollow Creek, Marl Farm" in text
    renamed = text.replace("Hollow Creek", "Dune Rock")  # metamorphic: the site list decides
    other = _first(
        "What is the P1 visit time for Dune Rock?", _item(1, SLA),
        _item(2, "Tier 1 sites: Dune Rock, Marl Farm.", "site list"),
    )  # fmt: skip
    assert "**5 hours**" in other or other.startswith("Answer: 5 hours")
    assert renamed


def test_a_sentence_naming_both_classes_with_the_subject_decides_nothing() -> None:
    asked = "What is the P1 visit time for Hollow Creek?"
    both = "Orlin General counts as Tier 1 and Hollow Creek as Tier 2 for visits."
    assert rcl.implied_class(asked, [_item(1, SLA), _item(2, both)]) is None
    implied = rcl.implied_class(asked, [_item(1, SLA), _item(2, SITES)])
    assert implied is not None and implied[0] == "tier 2"  # its own sentence per tier
    named = asked.replace("Hollow Creek", "Tier 1 sites")
    assert rcl.implied_class(named, [_item(1, SLA), _item(2, SITES)]) is None  # named: no guess
    alone = [_item(2, "Hollow Creek is a Tier 2 site.")]  # no other tier to tell apart
    assert rcl.implied_class(asked, alone) is None


def test_a_change_for_another_class_than_the_subjects_does_not_answer() -> None:
    """The amendment changes Tier 2's time; the asked site is Tier 1 by the site list."""
    amended = "The P1 visit time for Tier 2 sites is amended to 7 hours."
    first = _first(
        "What is the P1 visit time for Bay Clinic?", _item(1, SLA), _item(2, amended, "supplement"),
        _item(3, "Tier 1 sites: Orlin General, Bay Clinic.", "site list"),
    )  # fmt: skip
    assert "7 hours" not in first and "5 hours" in first


def test_a_requested_change_is_not_the_value_that_holds() -> None:
    request = (
        "The provider requests that the P2 visit time for Tier 2 sites be extended to 36 hours."
    )
    first = _first("What is the P2 visit time at a Tier 2 site?", _item(1, SLA),
                   _item(2, request, "supplement"))  # fmt: skip
    assert "30 hours" in first and "36 hours" not in first
    asked = _first("What did the provider request for the P2 visit time at Tier 2 sites?",
                   _item(1, SLA), _item(2, request, "supplement"))  # fmt: skip
    assert "36 hours" in asked  # asked about the request: the request answers
    assert rc.requests_change(request, "number")
    assert not rc.requests_change("The P2 visit time is amended to 36 hours.", "number")


def test_the_span_of_a_change_is_the_value_it_sets() -> None:
    amended = (
        "Since the new depot opened, the P1 visit time for Tier 2 sites is amended to 7 hours."
    )
    first = _first("What is the P1 visit time at a Tier 2 site?", _item(1, SLA),
                   _item(2, amended, "supplement"))  # fmt: skip
    assert first.startswith("Answer: 7 hours") or "**7 hours**" in first
    assert "**2 sites**" not in first


def test_a_request_is_told_by_its_own_clause() -> None:
    """'同意延期，但…调整为 D，不同意延至申请的日期': the request named after the change is
    another clause; the change holds."""
    agreed = "同意延期，但修复截止日期调整为 2031-05-18，不同意延至申请的日期。"
    assert rc.states_change(agreed, "date") and not rc.requests_change(agreed, "date")
    asked = "我司申请将修复期限延长至 2031-05-20。"
    assert rc.requests_change(asked, "date") and not rc.states_change(asked, "date")


def test_a_change_answers_only_a_question_about_what_it_changes() -> None:
    agreed = "同意延期，但修复截止日期调整为 2031-05-18。"
    assert rc.changed_value(agreed, "date", about="修复截止日期是哪天") == "2031-05-18"
    assert rc.changed_value(agreed, "date", about="医院是哪天同意延期的") == ""
    amended = "The P1 visit time for Tier 2 sites is amended to 7 hours."
    assert rc.changed_value(amended, "number", about="visit time") == "7 hours"
    assert rc.changed_value(amended, "number", about="warranty end") == ""


SITE_LIST = "Tier 1 sites: Orlin General, Bay Clinic."
AMENDED = "The parties agree that the P1 visit time for Tier 2 sites is amended to 7 hours."


def test_a_priority_code_names_one_row_and_a_sentence_of_another_priority_is_no_answer() -> None:
    """'P2' is asked; the amendment changes P1's time: the P2 row answers."""
    first = _first("What is the P2 visit time at a Tier 2 site?", _item(1, SLA),
                   _item(2, AMENDED, "supplement"))  # fmt: skip
    assert "30 hours" in first and "7 hours" not in first
    assert class_anchors("a P1-level fault, grade L3") == ["p1", "l3"]
    assert class_anchors("the B2B portal, KX-200, version 5.0.2") == []


def test_a_value_said_of_one_class_is_quoted_not_stated_when_the_question_leaves_it_open() -> None:
    """No tier named and none known for the subject: the amended time is shown with its tier."""
    first = _first("What is the P1 visit time for Dune Rock?", _item(1, AMENDED, "supplement"))
    assert not first.startswith("Answer:") and "Tier 2" in first
    told = _first("What is the P1 visit time at a Tier 2 site?", _item(1, AMENDED, "supplement"))
    assert told.startswith("Answer: 7 hours")


def test_a_rows_own_grade_is_what_is_asked_not_read_in_as_its_class() -> None:
    roster = "Staff | Name | Grade\nE-1 | Ada Moss | L4\nE-2 | Ben Ort | L2"
    assert rcl.implied_class("What grade is Ada Moss?", [_item(1, roster, "roster")]) is None
    first = _first("What grade is Ada Moss?", _item(1, roster, "roster"))
    assert "L4" in first and "**E-1**" not in first
