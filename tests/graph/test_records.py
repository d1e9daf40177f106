"""Records and joins: a row or a block of field lines names a thing; the asked field of another
record that shares a value with it answers a two-step question, in either language."""

from __future__ import annotations

from graph.offline import columns as cols
from graph.offline import records as recs
from graph.offline import totals as tt
from graph.protocols import EvidenceItem
from tests.graph.offline_app import evidence, leads_with, offline_answer

UNITS = "Unit | Kind | Site\nKX-100 | pump | Harbour yard\nKX-200 | crane | North yard"
SITES = "Site | Contact | Phone\nHarbour yard | Ada Moss | 6623\nNorth yard | Ben Ruiz | 7781"
LOG = "[TK-7]\nOpened: 2031-02-03\nUnit: KX-200\nEngineer: Ben Ruiz\nClosed: 2031-02-05"


def test_rows_and_field_blocks_are_records() -> None:
    found = recs.records([evidence(1, UNITS, "units.md"), evidence(2, LOG, "log.txt")])
    assert [r.values() for r in found] == [
        ["KX-100", "pump", "Harbour yard"],
        ["KX-200", "crane", "North yard"],
        ["TK-7", "2031-02-03", "KX-200", "Ben Ruiz", "2031-02-05"],
    ]


def test_the_asked_field_is_followed_through_the_value_two_records_share() -> None:
    items = [evidence(1, UNITS, "units.md"), evidence(2, SITES, "sites.md")]
    text = offline_answer("Who is the contact for the site of KX-200?", *items)
    first = text.splitlines()[0]
    assert leads_with(text, "Ben Ruiz") and first.endswith("[2]"), text
    assert "Site: North yard; Contact: Ben Ruiz" in first or "Unit: KX-200" in text
    renamed = [evidence(1, UNITS.replace("North yard", "Quay 9"), "u.md"),
               evidence(2, SITES.replace("North yard", "Quay 9"), "s.md")]  # fmt: skip
    again = offline_answer("Who is the contact for the site of KX-200?", *renamed)
    assert leads_with(again, "Ben Ruiz"), again


def test_a_join_in_chinese_from_a_log_entry_to_a_roster() -> None:
    log = "[GD-9]\n设备：KX-200\n派单：E-1001 岳知秋\n到场：2031-02-03 23:10"
    roster = "工号 | 姓名 | 职级\nE-1001 | 岳知秋 | L4\nE-1002 | 程远 | L2"
    text = offline_answer(
        "GD-9 的派单工程师是什么职级？",
        evidence(1, log, "工单.txt"),
        evidence(2, roster, "名册.md"),
    )
    assert leads_with(text, "L4") and text.splitlines()[0].endswith("[2]"), text


def test_a_field_named_only_where_the_subject_is_described_is_not_the_asked_one() -> None:
    log = "[TK-7]\nClosed: 2031-02-05\nUnit: KX-200"
    other = "Unit | Closed\nKX-200 | 2031-03-01"
    found = recs.join(
        "After TK-7 closed late, when did we file the claim?",
        [evidence(1, log, "log.txt"), evidence(2, other, "units.md")],
    )
    assert found is None
    assert cols.asked_clause("KX-9 那次修复超时，我们是哪天递交申请的？") == "我们是哪天递交申请的"


def test_two_different_answers_make_no_join() -> None:
    twice = SITES + "\nNorth yard | Cy Park | 9000"
    items = [evidence(1, UNITS, "units.md"), evidence(2, twice, "sites.md")]
    assert recs.join("Who is the contact for the site of KX-200?", items) is None


PLAN = (
    "Unit | Engineer | Downtime (h)\nKX-1 | Ada Moss | 6\nKX-2 | Ben Ruiz | 8\nKX-3 | Ada Moss | 5"
    "\n\nDates may move by agreement."
)


def test_a_total_sums_the_asked_column_over_the_rows_the_question_names() -> None:
    text = offline_answer(
        "How many hours of downtime in total for the units of Ada Moss?",
        EvidenceItem(n=1, chunk_id="p", source="plan.md", text=PLAN),
    )
    lines = text.splitlines()
    assert lines[0] == "Answer: 11 = 6 + 5 [1]"
    assert "Unit: KX-1" in text and "Unit: KX-3" in text and "KX-2" not in text
    zh = PLAN.replace("Downtime (h)", "预计停机（小时）")
    found = tt.total(
        "Ada Moss 负责的设备一共停机多少小时？", [EvidenceItem(n=1, chunk_id="p", text=zh)]
    )
    assert found is not None and found.answer == "11 = 6 + 5"


def test_rows_are_counted_when_the_question_asks_how_many_of_them() -> None:
    found = tt.total(
        "Ada Moss 负责的设备一共有几台？", [EvidenceItem(n=1, chunk_id="p", text=PLAN)]
    )
    assert found is not None and found.answer == "2台"  # in the unit the question counts in


def test_no_total_from_a_table_the_passage_may_not_hold_whole() -> None:
    cut = PLAN.split("\n\n", 1)[0]  # the passage ends inside the table
    assert (
        tt.total(
            "How many hours in total for Ada Moss?", [EvidenceItem(n=1, chunk_id="p", text=cut)]
        )
        is None
    )
    carried = EvidenceItem(
        n=1, chunk_id="p", text=PLAN, table_header="Unit | Engineer | Downtime (h)"
    )
    assert tt.total("How many hours in total for Ada Moss?", [carried]) is None


def test_a_record_is_quoted_briefly_by_its_key_and_what_was_read_from_it() -> None:
    from graph.offline.records import brief

    row = (("Part", "QT-7"), ("Name", "Fan unit"), ("Cost", "480"), ("List price", "620"))
    assert brief(row, ["480"]) == "Part: QT-7; Cost: 480"
    assert brief(row, ["480", "Fan unit"]) == "Part: QT-7; Name: Fan unit; Cost: 480"
    assert brief(row, ["999"]) == ""  # nothing read from it: the caller shows it whole


def test_a_row_the_question_describes_leads_to_the_asked_column_of_another_table() -> None:
    """'北岭县医院…那台DR按计划应该哪天做保养': no row is named by a code; the register row
    holding both the hospital and 'DR' is the one described (not every row of that hospital),
    its device code leads to the plan table, and '按计划哪天' asks its '计划日期'."""
    question = "北岭县医院拒绝了推迟保养的申请，那台DR按计划应该哪天做保养？"
    register = EvidenceItem(n=1, chunk_id="r", title="设备台账",
                            text="设备编号 | 设备类型 | 所属医院\nKQ-DR-7 | DR | 北岭县医院\n"
                            "KQ-CT-4 | CT | 北岭县医院\nKQ-CT-9 | CT | 南湖医院")  # fmt: skip
    plan = EvidenceItem(n=2, chunk_id="p", title="保养计划",
                        text="设备编号 | 计划日期 | 负责工程师\nKQ-DR-7 | 2031-08-20 | 严青\n"
                        "KQ-CT-4 | 2031-07-18 | 许木\nKQ-CT-9 | 2031-07-02 | 许木")  # fmt: skip
    joined = recs.join(question, [register, plan])
    assert joined is not None
    assert (joined.answer, joined.field, joined.via) == ("2031-08-20", "计划日期", "KQ-DR-7")


def test_a_kind_noun_makes_a_column_asked_only_with_a_whole_word_before_it() -> None:
    # 'Account' is no 'count' column: 'Ac' is not a word of the question
    assert cols.asked_head("How many units does the contract cover?", ["Account", "Customer"]) == ""
    assert cols.asked_head("When will the pump ship?", ["Item", "Ship date"]) == "Ship date"


def test_those_few_points_at_rows_and_asks_no_count() -> None:
    """'那几台设备' (those devices), '哪几张' (which ones), '好几次' (several times) name rows;
    only '几台' or '多少台' on its own asks how many of them."""
    assert tt.counts("Ada Moss 负责的设备一共有几台？")
    for pointing in ("Ada Moss 负责的那几台设备", "哪几张工单超时了？", "好几次停机是谁处理的？"):
        assert not tt.counts(pointing), pointing
    item = EvidenceItem(n=1, chunk_id="p", text=PLAN)
    assert tt.total("Ada Moss 负责的那几台设备一共有几台？", [item]) is not None
    assert tt.total("Ada Moss 负责的那几台设备，是谁负责的？", [item]) is None


def test_a_joined_field_must_be_of_the_asked_kind() -> None:
    """'多久到场' (how long) is not answered with the arrival's date and time of one log entry
    the named row leads to; '哪天到场' (which day) is."""
    register = evidence(1, "设备 | 医院\nKX-1 | 北溪医院\nKX-2 | 南岭医院", "台账.md")
    log = evidence(2, "[GD-1]\n设备：KX-1\n到场：2031-02-03 23:10", "工单.txt")
    assert recs.join("北溪医院的设备报修后多久到场？", [register, log]) is None
    found = recs.join("北溪医院的设备是哪天到场的？", [register, log])
    assert found is not None and found.answer == "2031-02-03 23:10"
    first = offline_answer("北溪医院的设备报修后多久到场？", register, log).splitlines()[0]
    assert not first.startswith("答案：2031")


RATES = (
    "## Allowances\n\n| Site band | Night rate | Daily meals |\n|---|---|---|\n"
    "| A | 210 EUR | 55 EUR |\n| B | 150 EUR | 45 EUR |\n| C | 110 EUR | 35 EUR |\n\n"
    "Sites are banded in the annex: Varnholm and Tessel are band A, Orrin and Kelda are band B, "
    "and every other site is band C."
)


def test_a_sentence_that_puts_the_named_thing_in_a_row_leads_to_that_row() -> None:
    """The question names a site no row names; a sentence says which row it belongs to (its
    band, after the key column's word): that row's asked cell answers, both cited."""
    answer = offline_answer("What is the night rate in Orrin?", evidence(1, RATES, "travel.md"))
    first = answer.splitlines()[0]
    assert leads_with(answer, "150 EUR"), answer
    assert "210 EUR" not in first
    meals = offline_answer("What are the daily meals in Tessel?", evidence(1, RATES, "t.md"))
    assert leads_with(meals, "55 EUR"), meals


def test_a_sentence_naming_no_band_for_the_site_leads_nowhere() -> None:
    text = RATES.replace("Orrin and Kelda are band B, ", "")
    answer = offline_answer("What is the night rate in Orrin?", evidence(1, text, "travel.md"))
    assert not answer.startswith("Answer:"), answer  # no band said of it: nothing stated
