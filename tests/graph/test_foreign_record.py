"""A question in one language about a record in the other, named by its code: the answer
quotes the record's values of the asked kind verbatim, never states one, and leaves records
in the question's own language to the reader."""

from __future__ import annotations

from pathlib import Path

from graph.offline import foreign as fq
from graph.protocols import EvidenceItem
from tests.fakes.rules import RuleReader
from tests.graph.offline_app import evidence, offline_answer, offline_app
from tests.graph.test_crossread import scripted

NOTICE = (
    "[RX-31]\nDate: 2031-03-02\nType: DELAY NOTICE\nOrder: PO-88\nPart: QZ-778 x 2\n"
    "Status: delayed; the carrier changed.\nExpected arrival: 2031-03-20"
)
OTHER = "[RX-32]\nDate: 2031-03-05\nType: ACKNOWLEDGEMENT\nOrder: PO-91\nPart: QZ-900 x 1"
STOCK_ZH = "备件号 | 名称 | 库存\nQZ-778 | 冷却泵 | 0"


def test_the_named_record_is_quoted_by_its_dates_with_gaps_marked() -> None:
    items = [evidence(1, NOTICE + "\n\n" + OTHER, "notices.txt"), evidence(2, STOCK_ZH, "库存.md")]
    found = fq.quote("QZ-778 预计什么时候到货？", items, "date")
    assert found is not None and found.n == 1
    assert found.text == (
        "[RX-31] Date: 2031-03-02 … Part: QZ-778 x 2 … Expected arrival: 2031-03-20"
    )
    first = offline_answer("QZ-778 预计什么时候到货？", *items).splitlines()[0]
    assert first.startswith("文档原文：“[RX-31]") and first.endswith("[1]"), first  # quoted
    assert "2031-03-20" in first and "RX-32" not in first  # the named record's date


def test_amounts_for_how_much() -> None:
    invoice = "[INV-5]\nIssued: 2031-04-01\nItem: QZ-778\nNet amount: 1,200 CNY\nTax: 156 CNY"
    found = fq.quote("QZ-778 的发票金额是多少？", [evidence(1, invoice, "inv.txt")], "number")
    assert (
        found is not None and "Net amount: 1,200 CNY" in found.text and "Tax: 156 CNY" in found.text
    )
    assert "Issued" not in found.text


def test_no_quote_when_the_reader_has_words_to_judge_by_or_the_code_is_ambiguous() -> None:
    notice = evidence(1, NOTICE, "notices.txt")
    assert fq.quote("When is QZ-778 expected to arrive?", [notice], "date") is None  # same language
    twice = evidence(
        2, NOTICE.replace("RX-31", "RX-40").replace("2031-03-20", "2031-04-09"), "b.txt"
    )
    assert fq.quote("QZ-778 预计什么时候到货？", [notice, twice], "date") is None  # two records
    assert fq.quote("预计什么时候到货？", [notice], "date") is None  # no code named
    assert fq.quote("QZ-778 是谁负责的？", [notice], "person") is None  # not a date or amount
    dated_zh = evidence(3, "备件号 | 预计到货\nQZ-778 | 2031-03-22", "到货.md")
    assert fq.quote("QZ-778 预计什么时候到货？", [notice, dated_zh], "date") is None


def test_a_chinese_question_about_an_english_log_in_a_real_knowledge_base(tmp_path: Path) -> None:
    docs = {"notices.txt": NOTICE + "\n\n" + OTHER + "\n", "库存.md": f"# 库存\n\n{STOCK_ZH}\n"}
    with offline_app(tmp_path, docs) as app:
        result = app.ask("QZ-778 预计什么时候到货？", web=False)
    first = result.answer.splitlines()[0]
    assert first.startswith("文档原文：“") and "2031-03-20" in first, result.answer
    assert result.citations and result.citations[0].source == "notices.txt"


CONTRACT_ZH = (
    "合同编号：QK-77-9\n甲方：北溪仓储有限公司\n乙方：南岭物流有限公司\n签订日期：2031年2月3日\n\n"
    "第一条 合同期限 本合同服务期自2031年3月1日起至2033年2月28日止。"
)


def test_a_document_titled_by_the_code_is_read_as_a_whole_not_by_its_header_record() -> None:
    """The header of a contract named by its number holds the number and the signing date;
    a question about when the contract runs is not a question about that record."""
    titled = EvidenceItem(n=1, chunk_id="c1", title="QK-77-9", source="qk.pdf", text=CONTRACT_ZH)
    assert fq.quote("Until when does contract QK-77-9 run?", [titled], "date") is None
    untitled = evidence(1, CONTRACT_ZH, "contracts.pdf")  # one contract of several: a record
    found = fq.quote("Until when does contract QK-77-9 run?", [untitled], "date")
    assert found is not None and "签订日期: 2031年2月3日" in found.text


def test_a_period_sentence_answers_until_when_across_languages() -> None:
    titled = EvidenceItem(n=1, chunk_id="c1", title="QK-77-9", source="qk.pdf", text=CONTRACT_ZH)
    near = scripted({"服务期": 0.84, "签订日期": 0.78})
    parts = RuleReader(similarity=near).answer(
        "Until when does contract QK-77-9 run?", [titled], []
    )
    first = "".join(p for p in parts if isinstance(p, str)).splitlines()[0]
    assert (
        first
        == "The documents say: “第一条 合同期限 本合同服务期自2031年3月1日起至2033年2月28日止。” [1]"
    )
