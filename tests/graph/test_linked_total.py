"""A sum over the rows one table names, of amounts another table holds by the code they share
(the devices of a site in a register, their fees in a schedule); and what it rests on: tables
cut between chunks joined again, documents read whole kept whole in the evidence, conditions
that are names, not words of a longer cell, and clause numbers that are no amounts."""

from __future__ import annotations

from types import SimpleNamespace

from graph.config import GraphConfig
from graph.evidence import evidence_items
from graph.hops import read_whole
from graph.offline import OfflineReasoner
from graph.offline import chunks as ch
from graph.offline import records as recs
from graph.offline import totals as tt
from graph.offline.values import spans_of
from graph.protocols import EvidenceItem
from graph.state import PoolEntry
from ingest.models import Hit

REGISTER = (
    "Unit | Kind | Site | Firmware\n"
    "RX-101 | Chiller | North depot | 5.0.1\n"
    "RX-102 | Pump | South depot | 4.2.7\n"
    "RX-103 | Pump | North depot | 5.0.1\n\n"
    "Changes are logged below."
)
FEES = (
    "Unit | Plan | Yearly fee (EUR)\n"
    "RX-101 | Full | 1,200\n"
    "RX-102 | Basic | 800\n"
    "RX-103 | Basic | 450\n\n"
    "Fees are billed quarterly."
)
REGISTER_ZH = (
    "编号 | 类型 | 所在库点 | 固件\n"
    "RX-101 | 冷水机 | 北区总库 | 5.0.1\n"
    "RX-102 | 水泵 | 南区总库 | 4.2.7\n"
    "RX-103 | 水泵 | 北区总库 | 5.0.1\n\n"
    "变更见下文。"
)
FEES_ZH = "编号 | 等级 | 年度维护费（元）\nRX-101 | 全包 | 1,200\nRX-102 | 基础 | 800\nRX-103 | 基础 | 450\n\n按季度结算。"


def _item(n: int, text: str, title: str) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"{title}-v1-00000", title=title, source=f"{title}.md",
                        text=text)  # fmt: skip


def _first(question: str, *items: EvidenceItem) -> str:
    parts = OfflineReasoner().answer(question, list(items), [])
    return "".join(p for p in parts if isinstance(p, str)).splitlines()[0]


def test_the_named_rows_amounts_from_the_other_table_are_summed_with_each_shown() -> None:
    items = [_item(1, REGISTER, "unit register"), _item(2, FEES, "fee schedule")]
    total = tt.linked_total("What do the units at North depot cost per year in total?", items)
    assert total is not None
    assert total.answer == "1650 EUR = 1200 EUR (RX-101) + 450 EUR (RX-103)"
    zh = [_item(1, REGISTER_ZH, "设备清单"), _item(2, FEES_ZH, "维护费明细")]
    first = _first("北区总库那几台设备，一年的维护费加起来是多少？", *zh)
    assert first == "答案：1650元 = 1200元 (RX-101) + 450元 (RX-103) [2]"
    south = tt.linked_total("南区总库的设备，年度维护费一共多少？", zh)  # metamorphic: other site
    assert south is not None and south.answer == "800元 (RX-102)"


def test_no_sum_when_an_amount_is_missing_or_no_row_is_named() -> None:
    cut = FEES.replace("RX-103 | Basic | 450\n", "")
    items = [_item(1, REGISTER, "unit register"), _item(2, cut, "fee schedule")]
    assert (
        tt.linked_total("What do the units at North depot cost per year in total?", items) is None
    )
    full = [_item(1, REGISTER, "unit register"), _item(2, FEES, "fee schedule")]
    assert tt.linked_total("What do the units at West depot cost per year in total?", full) is None
    assert tt.linked_total("How many units are at North depot?", full) is None  # a count


def test_a_version_is_no_amount_to_add() -> None:
    """The register's only number-like column is its firmware: nothing to sum from it."""
    versions = REGISTER.replace("Firmware", "Fee").replace("Unit | Kind", "Code | Kind")
    items = [_item(1, REGISTER, "unit register"),
             _item(2, versions.replace("RX-", "RX-"), "fee list")]  # fmt: skip
    assert tt.linked_total("What do the units at North depot cost in total?", items) is None


def test_a_table_cut_between_two_found_chunks_is_whole_again() -> None:
    head, tail = REGISTER.split("RX-103")
    one = EvidenceItem(n=1, chunk_id="reg-v1-00003", title="r", source="r.md", text=head.strip())
    two = EvidenceItem(n=2, chunk_id="reg-v1-00004", title="r", source="r.md",
                       text="RX-103" + tail, table_header="Unit | Kind | Site | Firmware")  # fmt: skip
    joined = ch.neighbours_joined([two, one])
    assert len(joined) == 1 and "RX-101" in joined[0].text and "RX-103" in joined[0].text
    apart = two.model_copy(update={"chunk_id": "reg-v1-00006"})
    assert ch.neighbours_joined([one, apart]) == []  # a gap: no run


def _entry(doc: str, index: int, rank: int, whole: bool) -> PoolEntry:
    return {"chunk_id": f"{doc}-v1-{index:05d}", "doc_id": doc, "title": doc, "source": doc,
            "section": "", "page": None, "text": f"{doc} {index}", "table_header": "",
            "whole_document": whole, "score": 1.0, "bm25": 0.0, "dense": 0.0, "hop": 1,
            "rank": rank, "sentences": []}  # fmt: skip


def test_a_document_read_whole_comes_whole_into_the_evidence_or_not_at_all() -> None:
    pool = {e["chunk_id"]: e for e in [
        _entry("log", 0, 1, True), _entry("other", 0, 2, False), _entry("log", 1, 5, True),
        _entry("log", 2, 6, True), _entry("third", 0, 3, False),
    ]}  # fmt: skip
    ids = [it.chunk_id for it in evidence_items(pool, [], 2)]
    assert ids == ["log-v1-00000", "log-v1-00001", "log-v1-00002", "other-v1-00000"]
    big = {**pool, **{e["chunk_id"]: e for e in (_entry("log", i, 9, True) for i in range(3, 8))}}
    ids = [it.chunk_id for it in evidence_items(big, [], 2)]  # 7 more chunks than room for
    assert ids == ["other-v1-00000"]  # never half of it


def test_a_condition_is_a_name_not_one_word_of_a_longer_cell() -> None:
    question = "How many thermal alarms were recorded in total?"
    assert not recs.filter_value("Thermal history endpoint", question)
    assert not recs.filter_value("Static key in header", question)
    assert recs.filter_value("E-1001 Ada Moss", "How many orders did Ada Moss close in total?")
    assert recs.filter_value("E-1001 Ada Moss", "How many orders did E-1001 close in total?")
    assert recs.filter_value("E-2073 柯明远", "柯明远负责的设备一共几台？")


def test_a_clause_number_is_no_amount() -> None:
    assert spans_of("number", "其年度服务费按主合同第3.3条另行约定。") == []
    assert spans_of("number", "The fee under Section 4.2 is 40 EUR.") == ["40 EUR"]
    assert spans_of("number", "We shipped 200 items, see page 3.") == ["200 items"]


def _hit(doc: str, index: int, text: str) -> Hit:
    return Hit(chunk_id=f"{doc}-v1-{index:05d}", doc_id=doc, text=text, score=1.0)


class _Docs:
    """A retriever that reads documents whole (as the store's document_hits)."""

    def __init__(self, docs: dict[str, list[str]]) -> None:
        self.docs = docs
        self.read: list[str] = []

    def document_hits(self, doc_id: str, groups: list[str], limit: int) -> list[Hit]:
        self.read.append(doc_id)
        return [_hit(doc_id, i, t) for i, t in enumerate(self.docs[doc_id])]


def test_a_step_of_a_sum_reads_whole_the_document_whose_notes_were_found() -> None:
    """'一年的维护费加起来是多少' found the notes above the fee table, not the table: its
    document is read whole, and so is the register a step that names no sum found."""
    docs = _Docs({"fees": ["Notes: fees are billed quarterly.", FEES],
                  "memo": ["A memo about nothing countable."], "register": [REGISTER]})  # fmt: skip
    ctx = SimpleNamespace(retriever=docs, groups=("all",), config=GraphConfig())
    notes = [_hit("memo", 0, "A memo about nothing countable."), _hit("fees", 0, "Notes: x.")]
    chunks, whole = read_whole(ctx, "What is the yearly fee in total?", notes)  # type: ignore[arg-type]
    assert whole == {"fees"} and [c.chunk_id for c, _ in chunks][-1] == "fees-v1-00001"
    step = [_hit("register", 0, REGISTER)]
    asked = "What do the units at North depot cost per year in total?"
    assert read_whole(ctx, "the units at North depot?", step)[1] == set()  # type: ignore[arg-type]
    assert read_whole(ctx, "the units at North depot?", step, asked)[1] == {"register"}  # type: ignore[arg-type]
