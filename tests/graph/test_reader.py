"""The offline reader: units a reader can point at, the span of the expected kind, and the
first line it makes (short answer only when confident, else a quote, else 'do not say')."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from graph.offline import reader as rd
from graph.offline import reader_checks as rc
from graph.offline import reader_rank as rr
from graph.offline import reader_spans as rs
from graph.offline import reader_units as ru
from graph.offline import values as vl
from graph.offline.params import PARAMS
from graph.offline.route import is_simple
from graph.protocols import EvidenceItem
from graph.result import answer_kind, short_answer_of
from ingest.parse import join_lines
from tests.fakes.rules import RuleReader
from tests.graph.offline_app import offline_app

R = RuleReader()


def _item(n: int, text: str, title: str = "doc") -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=title, source=f"{title}.md", text=text)


def _answer(question: str, *items: EvidenceItem) -> str:
    return "".join(p for p in R.answer(question, list(items), []) if isinstance(p, str))


TABLE = "Code | Name | Unit price\nKX-100 | Widget | 40 EUR\nKX-200 | Gadget | 75 EUR"


def test_a_table_row_is_read_with_its_column_headers() -> None:
    units = ru.units(_item(1, TABLE))
    assert [u.shown() for u in units] == [
        "Code: KX-100; Name: Widget; Unit price: 40 EUR",
        "Code: KX-200; Name: Gadget; Unit price: 75 EUR",
    ]


def test_the_cell_under_the_asked_column_of_the_named_row_is_the_answer() -> None:
    text = _answer("What is the unit price of KX-200?", _item(1, TABLE))
    assert text.splitlines()[0] == "Answer: 75 EUR [1]"
    renamed = TABLE.replace("KX-200", "QZ-7").replace("75", "93")  # metamorphic: rename
    assert _answer("What is the unit price of QZ-7?", _item(1, renamed)).startswith(
        "Answer: 93 EUR [1]"
    )


def test_a_field_line_is_read_with_the_tag_of_its_block() -> None:
    log = "[TK-7]\nOpened: 2031-02-03\nFix: replaced the pump seal, added 15 litres of coolant"
    text = _answer("How much coolant was added for TK-7?", _item(1, log))
    assert "15 litres" in text.splitlines()[0] and "[1]" in text.splitlines()[0]


NOTICES = (
    "[GN-51]\nDate: 2031-04-02\nType: DELAY NOTICE\nPart: VB-300 x 3\nStatus: delayed.\n"
    "Expected arrival: 2031-04-20\n\n[GN-52]\nDate: 2031-04-05\nType: PARTIAL SHIPMENT\n"
    "Part: HT-77 x 40\nStatus: 25 units shipped from the depot; the rest follow.\n"
    "Expected arrival: 2031-04-12"
)


def test_the_record_line_the_question_names_by_label_beats_the_line_of_its_code() -> None:
    """'Expected arrival' of part HT-77: that line of HT-77's record, not 'Part: HT-77 x 40',
    whose label only says what the code is (as a column header names a cell)."""
    first = _answer("What is the expected arrival of part HT-77?", _item(1, NOTICES))
    assert "2031-04-12" in first.splitlines()[0] and "HT-77 x 40" not in first.splitlines()[0]
    other = _answer("What is the expected arrival of part VB-300?", _item(1, NOTICES))
    assert "2031-04-20" in other.splitlines()[0]


def test_a_label_that_only_modifies_the_asked_word_names_no_line() -> None:
    """'Repair' of 'repair deadline' and '修复' of '修复截止日期' modify what is asked; a
    record's 'Repair:' line is not what the question names (its deadline is elsewhere)."""
    unit = ru.Unit("Repair: 2031-05-02", "[TK-9]", 1, 0)
    assert not rr.asked_field("What was the repair deadline of TK-9?", unit, ["TK-9"])
    assert rr.asked_field("When was the repair of TK-9?", unit, ["TK-9"])
    zh = ru.Unit("修复: 2031-05-02", "[TK-9]", 1, 0)
    assert not rr.asked_field("TK-9 最终批准的修复截止日期是哪天？", zh, ["TK-9"])
    assert rr.asked_field("TK-9 的修复是哪天？", zh, ["TK-9"])


def test_a_line_that_repeats_the_question_sets_no_bar_for_meaning() -> None:
    """The embedder finds 'Order: PO-88' nearest a question about PO-88 because it says
    nothing new; the line that answers must not lose its place to it (nor fall below the
    reader's floor), as it did with the built-in embedder."""
    log = (
        "[CX-1]\nDate: 2031-06-01\nOrder: PO-88\n"
        "Status: cancelled by the supplier because the model was discontinued.\n\n"
        "[CX-2]\nDate: 2031-06-03\nOrder: PO-91\nStatus: shipped in full."
    )

    def nearest_the_code(query: str, texts: Sequence[str]) -> list[float]:
        return [0.95 if t == "Order: PO-88" else 0.8 if "cancelled" in t else 0.7 for t in texts]

    question = "Why was order PO-88 cancelled?"
    reading = rd.read(question, question, "", [_item(1, log)], similarity=nearest_the_code)
    assert reading is not None and reading.unit.text.startswith("Status: cancelled")
    assert reading.score >= PARAMS.reader_min_score


def test_how_many_of_a_named_part_is_no_count_of_the_entries_naming_it(tmp_path: Path) -> None:
    """The one notice naming HT-77 gives an amount of it: 'how many HT-77' asks that, so the
    answer is never the count of notices ('1'), read from the log whole in a real store."""
    with offline_app(tmp_path, {"notices.txt": NOTICES + "\n"}) as app:
        first = app.ask("How many HT-77 were shipped?", web=False).answer.splitlines()[0]
    assert not first.startswith("Answer: 1 ") and "HT-77" in first
    assert vl.amount_beside("HT-77 x 40", "How many HT-77 were shipped?")
    assert not vl.amount_beside("HT-77", "How many HT-77 were shipped?")
    assert not vl.amount_beside("HT-77 x 40", "How many VB-300 were shipped?")


def test_a_clause_number_a_phone_number_and_a_time_are_not_amounts() -> None:
    assert vl.spans_of("number", "7.2 The fee is capped at 3% of the annual charge.") == ["3%"]
    assert vl.spans_of("number", "Call 400-820-6617 before 17:30.") == []
    assert vl.spans_of("number", "补充液氦 120 升") == ["120 升"]


def test_an_uncertain_reading_quotes_the_sentence_with_its_key_span_in_bold() -> None:
    text = _answer(
        "How many days does the warehouse keep returns?",
        _item(1, "Returns are kept for 30 days, and 10 days more on request."),
    )
    first = text.splitlines()[0]
    assert answer_kind(text) == "quote"
    assert first.startswith("The documents say: “Returns are kept for **30 days**")
    assert short_answer_of(text) == "30 days"


def test_a_sentence_about_the_name_only_is_not_an_answer() -> None:
    text = _answer(
        "Who is the auditor of Norrow Labs?",
        _item(1, "Norrow Labs was founded in 2011 in Ostrel."),
    )
    assert answer_kind(text) == "not_found" and "Ostrel" not in text
    assert text.startswith("The documents do not say: Who is the auditor of Norrow Labs")


def test_a_name_the_evidence_uses_is_no_part_of_what_is_asked() -> None:
    """'东湾站点' is a field label and a table cell of the evidence: the question asks for its
    address, which no unit holds, so the documents do not say (not the site's staff line)."""
    roster = (
        "站点负责人\n\n东湾站点：柯明远（代理）\n\n工号 | 姓名 | 常驻站点\nE-31 | 柯明远 | 东湾站点"
    )
    text = _answer("东湾站点的具体办公地址在哪里？", _item(1, roster))
    assert answer_kind(text) == "not_found", text
    assert (
        rc.relation_of("东湾站点的具体办公地址在哪里？", ["东湾站点"]).strip()
        == "的具体办公地址在哪里？"
    )
    dated = "设备编号 | 计划日期\nKX-201 | 2031-07-26"  # a date beside the code, of another event
    text = _answer("KX-201 上一次更换滤芯是哪天？", _item(1, dated))
    assert answer_kind(text) == "not_found" and "2031-07-26" not in text.splitlines()[0]


def test_a_year_beside_the_name_is_no_sign_of_the_asked_amount() -> None:
    """'年' and a year are no word of 'revenue': a banner naming the company and a year is
    not quoted for its revenue."""
    banner = "星海科技有限公司 客户服务部 往来函件登记簿（2031年）\n登记规则：每份函件一个编号。"
    text = _answer("星海科技有限公司 2030 年的营业收入是多少？", _item(1, banner))
    assert answer_kind(text) == "not_found", text
    assert not rc.holds_relation("2030 年的营业收入是多少", "", banner)
    assert rc.holds_relation("营业收入是多少", "", "2030 年营业收入为 3,200 万元。")


def test_a_header_with_a_version_number_is_still_the_header() -> None:
    table = "Item | v1 | v2\nRate limit | 120 requests per minute | 60 requests per minute"
    row = ru.units(_item(1, table))
    assert [u.shown() for u in row] == [
        "Item: Rate limit; v1: 120 requests per minute; v2: 60 requests per minute"
    ]


def test_tied_table_rows_are_shown_together_rather_than_one_guessed() -> None:
    table = "Shift | Allowance\nWeekday night | 120 per shift\nWeekend | 260 per shift"
    text = _answer("What is the allowance per shift?", _item(1, table))
    first = text.splitlines()[0]
    assert "120" in first and "260" in first and answer_kind(text) == "quote"


def test_chinese_quote_and_not_said_lines() -> None:
    said = _answer("第9号仓库的面积是多少？", _item(1, "第9号仓库面积为1200平方米，位于东区。"))
    assert said.startswith(("答案：", "文档原文：")) and "1200" in said.splitlines()[0]
    none = _answer("第9号仓库的面积是多少？", _item(1, "食堂每天中午开放。"))
    assert none.startswith("文档中没有说明：") and answer_kind(none) == "not_found"


def test_chitchat_needs_no_documents_in_either_language() -> None:
    for message in ("您好，你都会做哪些事情？", "Hey, many thanks for helping me this morning!",
                    "What can you do?", "谢谢！"):  # fmt: skip
        assert is_simple(message), message
    for question in ("Thanks! What is the unit price of KX-200?", "你能帮我查一下合同编号吗？"):
        assert not is_simple(question), question


def test_a_field_line_keeps_its_own_line_when_a_paragraph_is_unwrapped() -> None:
    joined = join_lines("[TK-7]\nLead: Ada Moss\nPhone: 6623\nprose that wraps\nonto a line")
    assert joined == "[TK-7]\nLead: Ada Moss\nPhone: 6623 prose that wraps onto a line"
    assert join_lines("组长：岳\n分机号：6623") == "组长：岳\n分机号：6623"
    several = join_lines("Cause: a bad seal.\nNew due date: 2031-05-02\nthe team agreed: fine")
    assert several == "Cause: a bad seal.\nNew due date: 2031-05-02 the team agreed: fine"


LOG = (
    "[RC-01]\nKind: REQUEST\nOrder: OR-55-0012\nNew due date: 2031-05-02\n\n"
    "[RC-02]\nKind: NOTICE OF DELAY\nOrder: OR-55-0012\nCause: a failed pressure test.\n"
    "New due date: 2031-05-09\n\n"
    "[RC-03]\nKind: NOTICE OF DELAY\nOrder: OR-55-0031\nNew due date: 2031-06-20"
)


def test_a_field_line_is_read_with_the_other_fields_of_its_record() -> None:
    """The date line of the right record wins: its record names the order and the kind, and
    the line that only repeats the order number the question gives is no answer."""
    first = _answer("In the notice of delay for OR-55-0012, what new due date was given?",
                    _item(1, LOG)).splitlines()[0]  # fmt: skip
    assert "2031-05-09" in first and "[1]" in first
    assert "2031-05-02" not in first and "2031-06-20" not in first
    order = next(u for u in ru.units(_item(1, LOG)) if u.text == "Order: OR-55-0012")
    assert rc.echoes(order, "What was the new due date of OR-55-0012?")
    assert not rc.echoes(order, "Which order was delayed?")


def test_what_with_a_noun_of_time_or_amount_asks_for_that_kind() -> None:
    from graph.offline.answer import answer_type

    assert answer_type("In that notice, what new due date did they give?") == "date"
    assert answer_type("Which fee applies to a late return?") == "number"
    assert answer_type("What is the refund window?") == "entity"


def _turns(question: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def test_a_demonstrative_with_its_noun_takes_the_named_thing_of_that_kind() -> None:
    from graph.offline.route import rewrite_followup

    zh = _turns("KX-9 装在哪家医院？", "KX-9 安装在河口市人民医院。")
    assert rewrite_followup("那家医院的联系人是谁？", zh) == "河口市人民医院的联系人是谁？"
    org = _turns("合同的供货方是谁？", "供货方是深圳星河电子有限公司。")
    assert rewrite_followup("这家公司的地址在哪里？", org) == "深圳星河电子有限公司的地址在哪里？"
    en = _turns("Where is KX-9 installed?", "KX-9 is installed at Riverside Hospital.")
    assert rewrite_followup("Who runs that hospital?", en) == "Who runs Riverside Hospital?"


def test_a_personal_pronoun_takes_the_person_the_last_answer_names() -> None:
    from graph.offline.route import rewrite_followup

    turns = _turns("谁负责 KX-9？", "由工程师 E-1001 岳知秋负责。")
    assert rewrite_followup("他的分机号是多少？", turns) == "岳知秋的分机号是多少？"


def test_an_ordinal_takes_the_kth_thing_the_last_answer_listed() -> None:
    from graph.offline.route import rewrite_followup

    en = _turns("Which parts are short?", "KX-9 and QZ-12 are below stock.")
    assert rewrite_followup("When does the second one ship?", en) == "When does QZ-12 ship?"
    zh = _turns("哪些备件缺货？", "KX-9 和 QZ-12 低于安全库存。")
    assert rewrite_followup("第一个什么时候到货？", zh) == "KX-9什么时候到货？"


def test_a_full_question_with_a_pronoun_is_not_taken_for_an_ellipsis() -> None:
    from graph.offline.route import rewrite_followup

    turns = _turns("What changed in the Norrow API?", "Version 1 was removed.")
    assert rewrite_followup("And what is its throughput cap?", turns) == (
        "And what is Norrow API's throughput cap?"
    )
    numbered = _turns("补充协议（三）何时生效？", "自2031年1月1日起生效。")
    assert rewrite_followup("它改了什么？", numbered) == "补充协议（三）改了什么？"


REGISTER = (
    "Unit | Site | Warranty ends\nKX-100 | North | 2031-04-02\nKX-200 | Harbour | 2030-11-15\n"
    "KX-300 | East | 2032-01-21"
)


def test_two_named_rows_are_compared_on_the_asked_column_with_every_value_shown() -> None:
    first = _answer("Of KX-100 and KX-300, whose warranty ends earlier?", _item(1, REGISTER))
    assert first.splitlines()[0] == (
        "Answer: KX-100 (Warranty ends: 2031-04-02; KX-300: 2032-01-21) [1]"
    )
    last = _answer("Of KX-100 and KX-300, whose warranty ends later?", _item(1, REGISTER))
    assert last.startswith("Answer: KX-300 (Warranty ends: 2032-01-21; KX-100: 2031-04-02)")


def test_a_comparison_of_rows_in_two_passages_cites_both_and_shows_each_row() -> None:
    first, second = (
        REGISTER.split("\nKX-200")[0],
        REGISTER.replace("KX-100 | North | 2031-04-02\n", ""),
    )
    text = _answer(
        "Of KX-100 and KX-300, whose warranty ends earlier?", _item(1, first), _item(2, second)
    )
    assert text.splitlines()[0] == (
        "Answer: KX-100 (Warranty ends: 2031-04-02; KX-300: 2032-01-21) [1][2]"
    )
    assert "- Unit: KX-100; Warranty ends: 2031-04-02 [1]" in text
    assert "- Unit: KX-300; Warranty ends: 2032-01-21 [2]" in text


def test_a_row_named_by_a_date_in_another_format_is_the_one_read() -> None:
    text = _answer("Which unit's warranty ends on 21 January 2032?", _item(1, REGISTER))
    assert "KX-300" in text.splitlines()[0] and "KX-100" not in text.splitlines()[0]


def test_a_how_many_question_takes_the_value_in_the_asked_unit() -> None:
    sentence = "The price rose by 4.5% with a notice of 78 days before the change."
    assert rs.read_sentence("How many days of notice?", "How many days of notice?",
                            ru.units(_item(1, sentence))[0], "number")[0] == "78 days"  # fmt: skip
    assert (
        vl.asked_unit("最晚几天内到货？") == "天" and vl.asked_unit("How many laptops?") == "laptop"
    )


def test_a_table_cut_by_the_chunker_keeps_its_header_for_the_rows_after_it() -> None:
    from ingest.chunker import chunk_document
    from ingest.parse import parse_bytes

    rows = "\n".join(f"| KX-{i:03d} | site {i} | 2031-01-{i % 28 + 1:02d} |" for i in range(120))
    md = f"# Register\n\n| Unit | Site | Warranty ends |\n|---|---|---|\n{rows}\n"
    doc = parse_bytes(md.encode(), "register.md")
    chunks = chunk_document(doc, doc_id="d", doc_version=1, groups=["all"], checksum="c",
                            chunk_tokens=200, overlap_tokens=0)  # fmt: skip
    assert len(chunks) > 2 and chunks[0].metadata == {}
    later = chunks[-1]
    assert later.metadata == {"table_header": "Unit | Site | Warranty ends"}
    assert later.text == doc.text[later.start_char : later.end_char]  # offsets still exact
    item = EvidenceItem(
        n=1, chunk_id="x", text=later.text, table_header="Unit | Site | Warranty ends"
    )
    assert ru.units(item)[0].shown().startswith("Unit: KX-")


def test_a_link_or_address_in_a_question_is_no_part_of_it() -> None:
    decomposition, _ = R.decompose(
        "How long is the warranty? ![q](http://127.0.0.1:9/x) www.a.example"
    )
    assert [s.question for s in decomposition.sub_questions] == ["How long is the warranty?"]
    text = _answer(
        "How long is the warranty? [see](http://127.0.0.1:9/x)",
        _item(1, "The warranty lasts two years from delivery."),
    )
    assert text.startswith("The documents say: “The warranty lasts **two years**")


ORDERS = (
    "[TK-31]\n开单：2031-03-02\n设备：PX-7\n备注：超时，已提交减免申请，见函件登记。\n\n"
    "[TK-32]\n开单：2031-03-05\n设备：PX-9\n备注：按时完成。"
)
LETTERS = (
    "[#21] 2031-03-10 发文\n事由：申请减免 TK-31 的超时费用\n处理：等待回复。\n\n"
    "[#22] 2031-03-18 收文\n事由：对 [#21] 的回复\n内容：同意减免，减免截止日期为 2031-04-01。"
)


def test_a_record_leads_by_its_tag_to_the_record_that_answers() -> None:
    """The question names a device; its work order holds no such date, but its tag is named
    by a letter, and that letter (or the reply naming it) holds the asked date."""
    items = (_item(1, ORDERS, "orders"), _item(2, LETTERS, "letters"))
    filed = _answer("PX-7 那次超时，我们是哪天提交减免申请的？", *items)
    assert filed.splitlines()[0] == "答案：2031-03-10 [2]"
    assert "TK-31" in filed and "#21" in filed  # the path is shown
    replied = _answer("PX-7 的减免申请，对方回复的减免截止日期是哪天？", *items)
    assert replied.splitlines()[0] == "答案：2031-04-01 [2]"
    other = _answer("PX-9 那次超时，我们是哪天提交减免申请的？", *items)  # no letter names TK-32
    assert "2031-03-10" not in other.splitlines()[0]


def test_a_difference_of_two_rows_or_two_columns_is_computed_with_both_values() -> None:
    shifts = _item(1, "班次 | 补贴\n白班 | 80 元/班\n夜班（含周末） | 135 元/班\n值守 | 60 元/班")
    first = _answer("夜班和白班相比，每班补贴相差多少？", shifts).splitlines()[0]
    assert first == "答案：相差 55元/班：夜班（含周末） 135 元/班，白班 80 元/班 [1]"
    limits = _item(
        1, "Level | Reply (site A) | Reply (site B)\nK1 urgent | 2 h | 6 h\nK2 | 4 h | 12 h"
    )
    first = _answer("For K2, how much longer is the reply at site B than at site A?",
                    limits).splitlines()[0]  # fmt: skip
    assert first == "Answer: A difference of 8 h: Reply (site B) 12 h, Reply (site A) 4 h [1]"
    mixed = _item(
        1, "班次 | 补贴\n白班 | 80 元/班\n夜班 | 2 天调休"
    )  # no common unit: no difference
    assert "相差" not in _answer("夜班和白班相比，补贴相差多少？", mixed).splitlines()[0]


def _chunk(n: int, doc: str, index: int, text: str, whole: bool = True) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"{doc}-v1-{index:05d}", title=doc, source=f"{doc}.md",
                        text=text, whole_document=whole)  # fmt: skip


PLAN = [
    "维护计划\n\n设备 | 工程师 | 停机（小时）\nPX-1 | 柯明远 | 4\nPX-2 | 章若 | 3\nPX-3 | 柯明远 | 5",
    "PX-3 | 柯明远 | 5\nPX-4 | 章若 | 2\nPX-5 | 柯明远 | 6\n\n备注：以上为计划值。",  # overlaps
]


def test_a_sum_over_a_table_read_whole_takes_the_named_rows_once_each() -> None:
    whole = [_chunk(1, "plan", i, t) for i, t in enumerate(PLAN)]
    first = _answer("柯明远负责的设备预计一共停机多少小时？", *whole).splitlines()[0]
    assert first == "答案：15 = 4 + 5 + 6 [1]"
    cut = [_chunk(1, "plan", i, t, whole=False) for i, t in enumerate(PLAN)]  # may go on
    assert "15" not in _answer("柯明远负责的设备预计一共停机多少小时？", *cut).splitlines()[0]
    nobody = _answer("王五负责的设备预计一共停机多少小时？", *whole).splitlines()[0]
    assert "答案" not in nobody  # never the sum of every row for a filter that names none


def test_a_count_over_a_log_read_whole_counts_its_matching_entries() -> None:
    log = [
        "服务工单日志\n\n[TK-1]\n开单：2031-01-02 09:00　等级：K1\n设备：PX-1\n\n"
        "[TK-2]\n开单：2031-01-05 10:00 等级：K2\n设备：PX-2",
        "[TK-3]\n开单：2031-02-01 08:30 等级：K1\n设备：PX-3\n\n[TK-4]\n开单：2031-02-03 11:00 等级：K3",
    ]
    whole = [_chunk(1, "orders", i, t) for i, t in enumerate(log)]
    text = _answer("K1 级别的工单一共有几张？", *whole)
    assert text.splitlines()[0] == "答案：2张 [1]"
    assert "TK-1" in text and "TK-3" in text and "TK-2" not in text  # the entries counted
    measures = [_chunk(1, "actions", 0, "编号 | 措施 | 责任人\nCA-1 | 督促 Norrow 提高质量 | 柯明远\n"
                                         "CA-2 | 复核库存 | 章若\n\n完。")]  # fmt: skip
    other = _answer("Norrow 一共有多少个订单行没有按时发货？", *measures).splitlines()[0]
    assert "答案" not in other  # a table of something else that names the supplier


ROSTER = (  # a roster in Chinese; the questions below ask in English too
    "工号 | 姓名 | 常驻站点 | 职级 | 上岗证有效期至\n"
    "E-2001 | 王一 | 北区 | L3 | 2026-03-31\n"
    "E-2002 | 李二 | 南区 | L2 | 2025-09-30\n"
    "E-2003 | 张三 | 东区 | L4 | 2027-01-15"
)


def test_a_date_the_question_gives_is_never_its_answer() -> None:
    """The question names the row by its date, written another way: the answer is the row's
    engineer, never that date back ('答案：2025-09-30' was a confident wrong first line)."""
    first = _answer(
        "上岗证有效期至 2025 年 9 月 30 日的是哪位工程师？", _item(1, ROSTER, "工程师名单")
    )
    first = first.splitlines()[0]
    assert not first.startswith("答案：2025-09-30") and "E-2002" in first


def test_the_one_row_holding_the_date_asked_is_read_in_either_language() -> None:
    """An English question about a Chinese roster shares no word with it, only the date:
    the one row that holds it is quoted, its key in bold (read, not stated)."""
    first = _answer(
        "Whose work permit is valid until 30 September 2025? Give the staff ID.",
        _item(1, ROSTER, "工程师名单"),
    ).splitlines()[0]
    assert first.startswith("The documents say:") and "**E-2002**" in first
    two = ROSTER + "\nE-2004 | 赵四 | 西区 | L1 | 2025-09-30"  # two rows hold it: none is named
    assert "E-2002" not in _answer("Whose permit is valid until 30 September 2025?", _item(1, two))


def test_a_sentence_that_merely_holds_the_date_asked_is_not_read_as_the_answer() -> None:
    """Only a row is named by its date: 'paid on 2025-09-30' says nothing of a review held
    that day, so the documents do not say who chaired it."""
    paid = _item(1, "Invoice 4471 was paid on 2025-09-30 by the finance office.")
    text = _answer("Who chaired the safety review held on 30 September 2025?", paid)
    assert text.startswith("The documents do not say"), text


def test_a_chinese_word_not_tagged_as_a_name_is_never_stated_for_who() -> None:
    from tests.graph.offline_app import evidence, offline_answer

    plant = evidence(1, "宁安工厂负责生产“甜橙汽”系列饮料，该系列使用高山泉水。", "工厂.md")
    first = offline_answer("宁安工厂的负责人是谁？", plant).splitlines()[0]
    assert not first.startswith("答案："), first  # a product, not a person
    lead = evidence(2, "宁安工厂的厂长是周子墨。", "工厂.md")
    first = offline_answer("宁安工厂的厂长是谁？", lead).splitlines()[0]
    assert "周子墨" in first and first.endswith("[2]"), first  # stated, or quoted whole


def test_steps_that_each_came_as_a_block_are_quoted_as_one_list() -> None:
    from tests.graph.offline_app import evidence, offline_answer

    steps = evidence(
        1,
        "Returns\n\n1. Open a request and enter the serial number.\n\n2. Attach two photos.\n\n"
        "3. Pack the part and ship it to the depot.\n\nQuestions go to the help desk.",
        "returns.md",
    )
    first = offline_answer("What are the steps to return a part?", steps).splitlines()[0]
    assert "1. Open a request" in first and "3. Pack the part" in first, first
    assert "help desk" not in first


def test_a_row_with_no_value_of_the_asked_kind_has_no_answer_span() -> None:
    """'When …?' over a row whose only cell the question does not give is a label: no date
    is bolded as if it were one."""
    [row] = ru.units(_item(1, "Field | Value\nParent contract | QK-77-9"))
    assert rs.read_row("When does QK-77-9 end?", "When does QK-77-9 end?", row, "date") == (
        "",
        False,
        "",
    )
    [dated] = ru.units(_item(1, "Field | Value\nEnds on | 2033-02-28"))
    assert rs.read_row("When does it end?", "When does it end?", dated, "date")[0] == "2033-02-28"


def test_a_number_word_takes_a_lower_case_noun_not_the_name_after_it() -> None:
    text = "Orlmark has three Coastal League clubs, two river ferries and Two Bridges Road."
    assert vl.spans_of("number", text) == ["three", "two river", "Two"]


def test_what_year_takes_the_year_of_the_date_read_in_either_language() -> None:
    en = _answer(
        "In what year was Tova Brandt born?",
        _item(1, "Tova Brandt (born 12 May 1931) is a Danish navigator and writer.", "Tova Brandt"),
    )
    assert "1931" in en.splitlines()[0] and "12 May" not in en.splitlines()[0]
    zh = _answer(
        "韩思远是哪一年入职的？", _item(1, "韩思远于2019年3月5日入职北辰测绘公司。", "人事")
    )
    assert "2019年" in zh.splitlines()[0] and "3月5日" not in zh.splitlines()[0]
    day = _answer(
        "When was Tova Brandt born?",
        _item(1, "Tova Brandt (born 12 May 1931) is a Danish navigator and writer.", "Tova Brandt"),
    )
    assert "12 May 1931" in day.splitlines()[0]  # 'when' asks for the date as written
    assert rd.year_of("April 12, 1981") == "1981" and rd.year_of("1981") == ""


def test_a_number_takes_the_named_things_it_counts_with_their_plural_noun() -> None:
    text = "Delegates of all 30 Coastal League clubs and 12 Vask Awards met for 4 days."
    assert vl.spans_of("number", text) == ["30 Coastal League clubs", "12 Vask Awards", "4 days"]
    assert vl.spans_of("number", "It runs at 40 Hz on 2 GB of memory.") == [
        "40 Hz",
        "2 GB of memory",
    ]


def test_a_sentence_that_refers_back_is_compared_in_meaning_with_its_passage_title() -> None:
    passage = _item(
        1,
        "Harrow Deep is a rowing club on the northern bank of the river in Ostrel. "
        "The club was formed in 1993.",
        "Harrow Deep",
    )
    assert [u.meant() for u in ru.units(passage)] == [
        "Harrow Deep is a rowing club on the northern bank of the river in Ostrel.",
        "Harrow Deep: The club was formed in 1993.",
    ]
    seen: list[str] = []

    def similarity(query: str, texts: Sequence[str]) -> list[float]:
        seen.extend(texts)
        return [1.0 if "Harrow Deep" in t and "formed" in t else 0.0 for t in texts]

    question = "When was Harrow Deep formed?"
    reading = rd.read(question, question, "date", [passage], similarity=similarity)
    assert "Harrow Deep: The club was formed in 1993." in seen
    assert reading is not None and reading.span == "1993"


def test_a_year_that_ends_a_sentence_is_a_year_and_a_decimal_is_not() -> None:
    assert vl.spans_of("date", "The club was formed in 1993.") == ["1993"]
    assert vl.spans_of("date", "The ratio was 1993.5 to one.") == []


def test_a_quoted_title_keeps_no_comma_the_quotes_closed_over() -> None:
    names = vl.names_of_kind("entity", 'She starred in "Harrow Deep," a 1981 film, and "Vask".')
    assert "Harrow Deep" in names and not any(n.endswith(",") for n in names)


def test_a_year_that_names_one_of_a_kind_passes_over_another_year_of_that_kind() -> None:
    """'the 2004 album that featured X': the sentence calling its album 'a 1999 … album' is
    about another album, however well it names X and the relation."""
    older = _item(
        1,
        "Harrow Deep is a 1999 Danish folk album produced by Ona Vikander that featured Tova Brandt.",
        "Harrow Deep",
    )
    asked = _item(
        2,
        "Glass Tide is a 2004 Danish jazz album produced by Oren Maas, with Tova Brandt on the "
        "cello throughout.",
        "Glass Tide",
    )
    text = _answer("Who produced the 2004 album that featured Tova Brandt?", older, asked)
    assert "Oren Maas" in text.splitlines()[0] and "[2]" in text.splitlines()[0]


def test_an_event_named_with_its_year_keeps_the_year() -> None:
    text = _answer(
        "Mira Kolt raced in which Vask Regatta held in Ostrel?",
        _item(
            1,
            "Mira Kolt (born 1970) is a Velmarian rower who raced at the 1996 Vask Regatta "
            "in Ostrel.",
            "Mira Kolt",
        ),  # fmt: skip
    )
    assert "**1996 Vask Regatta**" in text.splitlines()[0]
    assert vl.names_of_kind("person", "Mira Kolt rowed at the 1996 Vask Regatta.") == [
        "Mira Kolt",
        "Vask Regatta",
    ]  # a person or place is never read with a year


def test_a_sentence_that_refers_back_answers_a_value_asked_of_the_one_before() -> None:
    """'He was hired on …' after 'Tova Brandt (born 1979) is a surveyor …': the hiring date is
    Tova Brandt's, though the sentence never names her; the birth year beside her name is not
    what is asked."""
    staff = _item(
        1,
        "Tova Brandt (born 1979) is a hydrographic surveyor and drone pilot who leads the "
        "coastal team. He was hired on 12 March 2011.",
        "Field staff",
    )
    assert _answer("In what year was Tova Brandt hired?", staff).splitlines()[0] == (
        "Answer: 2011 [1]"
    )  # stated: the sentence is hers; read alone it was only quoted


def test_what_time_reads_a_time_of_day_and_the_asked_end_of_its_range() -> None:
    hours = [_clock_item("The Harrow depot is open to couriers from 7 a.m. to 6 p.m. on "
                         "weekdays; it holds 40 pallets.")]  # fmt: skip
    assert "**6 p.m.**" in _clock_first("What time does the Harrow depot close?", hours)
    assert "**7 a.m.**" in _clock_first("What time does the Harrow depot open?", hours)
    said = [_clock_item("The Tarsk office opens at 08:30 and closes at 17:00, 5 days a week.")]
    assert "**17:00**" in _clock_first("At what time does the Tarsk office close?", said)
    zh = [_clock_item("东坡仓营业时间：早上8点至下午6点，可存放40个托盘。")]
    assert "**下午6点**" in _clock_first("东坡仓几点关门？", zh)


def _clock_item(text: str) -> EvidenceItem:
    return EvidenceItem(n=1, chunk_id="c1", title="hours", source="hours.md", text=text)


def _clock_first(question: str, items: list[EvidenceItem]) -> str:
    answer = "".join(p for p in RuleReader().answer(question, items, [], []) if isinstance(p, str))
    return answer.strip().splitlines()[0]


def test_when_reads_a_time_of_day_where_no_date_is_stated() -> None:
    said = [_clock_item("The Tarsk office opens at 08:30 and closes at 17:00, 5 days a week.")]
    assert "**17:00**" in _clock_first("When does the Tarsk office close?", said)
    dated = [_clock_item("The Tarsk office closed on 3 May 2021 at 17:00 for good.")]
    assert "3 May 2021" in _clock_first("When did the Tarsk office close?", dated)  # its date


GUILD = (
    "Vela Pruss was a weaver of Orlen. She became head of the Tarsk guild when she married in "
    "1702, but died suddenly in 1709."
)


def test_a_value_is_read_in_the_clause_that_says_what_is_asked() -> None:
    guild = [_item(1, GUILD, "Vela Pruss")]
    assert "in **1709**" in _answer("When did Vela Pruss die?", *guild)  # 1702 is nearer
    assert "in **1702**" in _answer("When did Vela Pruss marry?", *guild)


def test_two_dates_of_one_event_are_both_the_answer_and_a_range_is_not() -> None:
    cup = _item(1, "Harrow Rovers joined the league in 1892. Harrow Rovers won the Orlen Cup in "
                   "1903 and 1961.", "Harrow Rovers")  # fmt: skip
    assert "**1903 and 1961**" in _answer("When did Harrow Rovers win the Orlen Cup?", cup)
    span = _item(1, "Harrow Rovers played in the Orlen Cup between 1903 and 1961.", "Rovers")
    assert "between **1903** and 1961" in _answer(
        "When did Harrow Rovers first play in the Orlen Cup?", span
    )


def test_a_passage_naming_the_subject_is_read_though_it_ranks_below_the_first_ones() -> None:
    noise = [_item(n, f"The Orlen archive holds ledger {n} of the river trade.", f"ledger {n}")
             for n in range(1, 10)]  # fmt: skip
    later = _item(10, "Rolf Aske (1611–1680), a miller of Tarsk, built the first mill in Orlen.",
                  "Mills of Orlen")  # fmt: skip
    assert "**1680**" in _answer("What year did Rolf Aske die?", *noise, later)
    far = [*noise, *[_item(n, f"Ledger {n} lists grain.", f"grain {n}") for n in range(10, 17)]]
    assert "**1680**" not in _answer("What year did Rolf Aske die?", *far, replace_n(later, 17))


def replace_n(item: EvidenceItem, n: int) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=item.title, source=item.source, text=item.text)


def test_a_fuller_writing_of_the_asked_name_is_not_its_answer() -> None:
    weaver = _item(1, "Vela Anna Maria Pruss (born 26 August 1970, in Tarsk) is an Orlen "
                      "weaver and guild master.", "Vela Pruss")  # fmt: skip
    first = _answer("What is the place of birth of Vela Pruss?", weaver).splitlines()[0]
    assert "Tarsk" in first and "Anna Maria" not in first.split("“")[0]
    wed = _item(1, "Vela Anna Maria Pruss married Ivo Lund in 1990.", "Vela Pruss")
    assert _answer("Who did Vela Pruss marry?", wed).splitlines()[0] == "Answer: Ivo Lund [1]"


def test_what_city_asks_a_place_read_after_in_with_its_particle() -> None:
    from graph.offline.answer import answer_type

    assert answer_type("What city is the conductor from?") == "place"
    assert answer_type("In what town was the depot built?") == "place"
    assert answer_type("What is the city tax?") == "entity"  # a noun before another noun
    born = _item(1, "Vela Pruss was born Velma Ann Pruss in La Versane, a quarter of Tarsk, "
                    "in 1968.", "Vela Pruss")  # fmt: skip
    assert "**La Versane**" in _answer("What city is Vela Pruss from?", born)


def test_who_read_in_a_sentence_opening_he_or_she_is_whom_its_page_is_about() -> None:
    said = ("Odile Marsh (born 1971) is a broadcaster from Tarsk. She has also served as the "
            "host of the Orlen Quiz Hour since 2019.")  # fmt: skip
    first = _answer("Who is the host of the Orlen Quiz Hour?", _item(1, said, "Odile Marsh"))
    assert first.splitlines()[0].endswith("“[**Odile Marsh**] has also served as the host of "
                                          "the Orlen Quiz Hour since 2019.” [1]")  # fmt: skip
    other = _answer("Who is the host of the Orlen Quiz Hour?", _item(1, said, "Quiz shows"))
    assert "[**" not in other  # a page about no one: the pronoun stays as written


def test_a_unit_naming_no_place_gives_way_to_the_next_that_names_one() -> None:
    page = [
        _item(1, "Ivo Lund Jr. (born March 3, 1951) is an Orlen filmmaker, writer and actor. "
                 "Born and raised in Tarsk, Lund rose to prominence in the 1970s.", "Ivo Lund"),
    ]  # fmt: skip
    first = _answer("What is the place of birth of Ivo Lund?", *page).splitlines()[0]
    assert "Tarsk" in first and "March 3" not in first.split("“")[0]  # a day is no place
    assert "**March 3**" not in first and "**Ivo Lund Jr" not in first


def test_he_or_she_under_a_person_s_heading_is_that_person() -> None:
    said = ("Odile Marsh (born 1971) joined the Tarsk office from Orlen. She has also served as "
            "the host of the monthly Harrow Forum since 2019.")  # fmt: skip
    item = EvidenceItem(n=1, chunk_id="c1", title="Staff notes", section="Staff notes > Odile "
                        "Marsh", source="staff.md", text=said)  # fmt: skip
    assert "“[**Odile Marsh**] has also served" in _answer("Who is the host of the Harrow Forum?",
                                                          item)  # fmt: skip


def test_a_short_line_of_two_sentences_is_two_units_but_a_field_line_stays_one() -> None:
    """The quote is the sentence that answers, not its neighbour on the same line; a field's
    value ('Reason: …') is one value whatever its full stops."""
    prose = ru.units(_item(1, "The Fenwick depot holds 640 crates. It employs 38 porters."))
    assert [u.text for u in prose] == [
        "The Fenwick depot holds 640 crates.",
        "It employs 38 porters.",
    ]
    field = ru.units(_item(1, "Reason: Not agreed. The audit is due in May."))
    assert [u.text for u in field] == ["Reason: Not agreed. The audit is due in May."]


def test_an_amount_is_read_with_the_whole_noun_the_question_counts() -> None:
    item = _item(1, "Summary: A relay fault sent 214 stale reminder letters to members.")
    first = _answer("How many stale reminder letters did the relay fault send?", item)
    assert "214 stale reminder letters" in first.splitlines()[0], first
    per = _answer("How many crates does the depot ship per week?",
                  _item(1, "The depot ships 90 crates per week to the coast."))  # fmt: skip
    assert per.splitlines()[0] == "Answer: 90 crates [1]", per


def test_which_country_is_never_stated_as_a_continent() -> None:
    item = _item(1, "The Republic of Velmar, commonly known as Velmar, is a sovereign country "
                    "in Europe, off the north-western coast of the continent.", "Velmar")  # fmt: skip
    question = "In which country is the office of the firm that hired Ana?"
    reading = rd.read("In which country is Velmar?", question, "place", [item], PARAMS, frozenset())
    assert reading is not None and not reading.confident, reading
    named = _item(1, item.text.replace("Europe", "Portugal"), "Velmar")  # a country is stated
    sure = rd.read("In which country is Velmar?", question, "place", [named], PARAMS, frozenset())
    assert sure is not None and sure.span == "Portugal" and sure.confident, sure
