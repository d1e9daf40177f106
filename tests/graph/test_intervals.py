"""'How many days …' from two dates the documents state: the calendar days between them,
shown with both dates; never when a sentence states the duration itself, when the days are
working days, or when the dates are not exactly two."""

from __future__ import annotations

from pathlib import Path

from graph.offline import intervals as iv
from graph.offline import totals as tt
from graph.protocols import EvidenceItem
from tests.graph.offline_app import evidence, offline_answer, offline_app

MEETING = (
    "Harlow Metals announced a surcharge of 3% on copper rods, effective 1 March 2032. "
    "The written notice was handed over at the review on 2 January 2032. "
    "Buyers asked to keep the old rate for orders placed before 20 January 2032."
)
LOG = (
    "[N-1]\nDate: 2031-11-02\nType: NOTICE\nOrder: PO-5\n\n"
    "[N-2]\nDate: 2031-11-09\nType: NOTICE\nOrder: PO-6"
)


def test_the_days_between_the_two_dates_of_the_answering_sentences() -> None:
    items = [evidence(1, MEETING, "review.md")]
    found = iv.gap("How many days' notice did Harlow Metals give for the copper surcharge?", items)
    assert found is not None and found.answer == "59 days: 2032-03-01 − 2032-01-02"
    assert found.n == 1 and "2 January 2032" in found.shown and "20 January" not in found.shown
    answer = offline_answer(
        "How many days' notice did Harlow Metals give for the copper surcharge?", *items
    )
    assert answer.splitlines()[0] == "Answer: 59 days: 2032-03-01 − 2032-01-02 [1]"


def test_chinese_dates_and_a_chinese_answer() -> None:
    text = "北溪仓库于2031年6月14日前应交付货物。货物实际于2031年6月19日送达北溪仓库。"
    found = iv.gap("北溪仓库的货物比约定晚了多少天送达？", [evidence(1, text, "交付.md")])
    assert found is not None and found.answer == "5 天：2031-06-19 − 2031-06-14"
    english = iv.gap(
        "How many days late did 北溪仓库 get the goods?", [evidence(1, text, "交付.md")]
    )
    assert english is not None and english.answer == "5 days: 2031-06-19 − 2031-06-14"


def test_a_stated_duration_working_days_or_other_than_two_dates_give_no_gap() -> None:
    stated = (
        "The supplier gave 45 days' notice on 2 January 2032 before the change of 1 March 2032."
    )
    question = "How many days' notice did the supplier give?"
    assert iv.gap(question, [evidence(1, stated, "a.md")]) is None  # it says 45 days itself
    two = "The notice was sent on 2 January 2032 for the change of 1 March 2032."
    assert iv.gap(question, [evidence(1, two, "b.md")]) is not None
    assert iv.gap("How many working days' notice was given?", [evidence(1, two, "b.md")]) is None
    three = "The notice was sent on 2 January 2032, resent on 9 January 2032, for 1 March 2032."
    assert iv.gap(question, [evidence(1, three, "c.md")]) is None
    assert iv.gap("How many orders were noticed?", [evidence(1, two, "b.md")]) is None


def test_how_many_days_is_no_count_of_log_entries() -> None:
    """'How many days' notice' over a log of NOTICE entries is not '2' (the entries)."""
    assert not tt.counts("How many days' notice did the supplier give?")
    assert tt.counts("How many notices did the supplier send?")
    assert tt.counts("一共有几张工单？") and not tt.counts("晚了多少天？")
    plan = (
        "Unit | Engineer | Notice\nKX-1 | Ada Moss | by phone\nKX-3 | Ada Moss | by mail"
        "\n\nNotices may move by agreement."
    )
    item = EvidenceItem(n=1, chunk_id="p", text=plan)
    counted = tt.total("How many units of Ada Moss are there?", [item])
    assert counted is not None and counted.answer == "2"
    assert tt.total("How many days' notice for the units of Ada Moss?", [item]) is None


def test_in_a_real_knowledge_base(tmp_path: Path) -> None:
    docs = {"review.md": f"# Supplier review\n\n{MEETING}\n", "notices.txt": LOG + "\n"}
    with offline_app(tmp_path, docs) as app:
        result = app.ask("How many days' notice did Harlow Metals give for the copper surcharge?")
    assert result.answer.splitlines()[0] == "Answer: 59 days: 2032-03-01 − 2032-01-02 [1]"
    assert result.citations[0].source == "review.md"
