"""The unit builder keeps a document's structure: a table row with its headers and key, a
record's fields with its key line, a log line whole, a list whole and item by item."""

from __future__ import annotations

from graph.offline import OfflineReasoner
from graph.offline.units import pool_units, quoted_rows, units
from graph.protocols import EvidenceItem


def _item(text: str, **extra: object) -> EvidenceItem:
    return EvidenceItem(n=1, chunk_id="doc-1", source="notes.md", title="Team notes", text=text,
                        **extra)  # type: ignore[arg-type]  # fmt: skip


def test_a_table_row_keeps_its_headers_and_key() -> None:
    text = "Service | Primary | Primary phone | Backup | Backup phone\n" \
        "queue-relay | Ona Brisk | 0100 111 | Pell Varga | 0100 222\n" \
        "ledger-sync | Ivo Mart | 0100 333 | Una Saar | 0100 444"  # fmt: skip
    rows = [u for u in units(_item(text)) if u.kind == "row"]
    assert [u.key for u in rows] == ["queue-relay", "ledger-sync"]
    assert rows[0].cells[4] == ("Backup phone", "0100 222")
    assert rows[0].shown().startswith("Service: queue-relay; Primary: Ona Brisk")


def test_a_table_cut_by_the_chunker_reads_its_carried_header() -> None:
    item = _item("ledger-sync | Ivo Mart | 0100 333\nfeed-hub | Rea Tull | 0100 555",
                 table_header="Service | Lead | Phone")  # fmt: skip
    rows = [u for u in units(item) if u.kind == "row"]
    assert dict(rows[1].cells)["Lead"] == "Rea Tull"


def test_a_records_fields_carry_its_key_line_and_the_record_is_one_unit_too() -> None:
    text = "[#31] 2031-04-02 inbound\nFrom: Harbour Clinic\nSubject: reply to [#29]\n" \
        "Content: extension agreed until 2031-04-20."  # fmt: skip
    found = units(_item(text))
    whole = [u for u in found if u.kind == "record"]
    fields = [u for u in found if u.kind == "field"]
    assert len(whole) == 1 and "Harbour Clinic" in whole[0].shown()
    assert all(u.shown().startswith("[#31] 2031-04-02 inbound · ") for u in fields)
    assert not any(u.shown() == "[#31] 2031-04-02 inbound" for u in found)


def test_a_log_line_is_one_unit_however_many_sentences() -> None:
    line = "2031-05-02 09:12 OPS-88 system=feed-hub sev=P2 owner=Rea Tull Feed stalled. Restarted."
    found = units(_item(line))
    assert [u.kind for u in found] == ["record"] and found[0].text == line


def test_a_list_is_one_unit_whole_and_one_per_item() -> None:
    text = "How to restart the feed\n\n1. Freeze the queue.\n2. Restart feed-hub.\n3. Unfreeze."
    found = units(_item(text))
    whole = [u for u in found if u.kind == "list"]
    items = [u for u in found if u.kind == "item"]
    assert len(whole) == 1 and "Restart feed-hub" in whole[0].shown()
    assert [u.text for u in items] == ["1. Freeze the queue.", "2. Restart feed-hub.",
                                       "3. Unfreeze."]  # fmt: skip


def test_fields_run_together_on_one_line_are_pieces_and_headings_are_no_units() -> None:
    found = units(_item("Team notes\n\nIssued 3 May 2031 · Effective 1 June 2031 · Replaces v1"))
    assert [u.text for u in found] == ["Issued 3 May 2031", "Effective 1 June 2031",
                                       "Replaces v1"]  # fmt: skip


def test_every_unit_knows_where_it_sits() -> None:
    first = _item("Ona Brisk leads the team. She joined in 2029.")
    second = EvidenceItem(n=2, chunk_id="doc-2", source="roster.docx", text="团队负责人是陆海川。")
    found = pool_units([first, second])
    assert [(u.n, u.rank, u.source) for u in found] == [
        (1, 0, "notes.md"), (1, 0, "notes.md"), (2, 1, "roster.docx")]  # fmt: skip
    assert found[1].referent == "Ona Brisk" and found[2].lang == "zh" and found[0].lang == "en"


def _spans(question: str, text: str) -> set[str]:
    from graph.offline.asked import read_question
    from graph.offline.candidates import candidates

    [unit] = [u for u in units(EvidenceItem(n=1, chunk_id="c", text=text), 0)][:1]
    return {s.text for s in candidates(read_question(question, []), unit)}


def test_no_span_is_a_list_number_or_a_piece_of_a_time_of_day() -> None:
    assert "1" not in _spans("What is the first step?", "1. Open a ticket and add the serial.")
    times = _spans("When is the desk open?", "The desk is open from 08:00 to 17:00.")
    assert "08:00" in times and not any(t in times for t in ("00 to 17", "00", "17"))


def test_a_clause_less_the_words_the_question_gives_is_a_span() -> None:
    found = _spans("青松仓库的负责人是谁？", "青松仓库成立于2011年，负责人为欧阳白，位于河西。")
    assert "欧阳白" in found


ROSTER = (
    "| Week | Primary | Primary phone | Backup | Backup phone |\n|---|---|---|---|---|\n"
    "| 31 | Ona Brisk | 0100 111 | Pell Varga | 0100 222 |\n"
    "| 32 | Ivo Mart | 0100 333 | Una Saar | 0100 444 |\n"
    "| 33 | Rea Tull | 0100 555 | Kip Dorn | 0100 666 |\n"
    "| 34 | Ada Vell | 0100 777 | Sol Wynn | 0100 888 |\n"
    "| 35 | Tam Oaks | 0100 999 | Lio Prell | 0100 000 |"
)


def test_the_rows_an_answer_quotes_are_found_in_its_order_bold_or_not() -> None:
    item = _item(ROSTER)
    rows = [u for u in units(item) if u.kind == "row"]
    answer = (
        f"The documents say: “{rows[2].shown().replace('0100 666', '**0100 666**')}” [1]\n\n"
        f"Evidence:\n- {rows[0].shown()} [1]\n- {rows[4].shown()} [2]\n"
    )
    found = quoted_rows(answer, [item])
    assert [u.key for u in found] == ["33", "31"]  # [2] is not this passage's citation


def test_a_first_line_never_holds_more_than_one_row() -> None:
    item = _item(ROSTER)
    rows = [u for u in units(item) if u.kind == "row"]
    for question in ("Who is the backup in week 33?", "What is the on-call roster?",
                     "Which phone numbers are listed?", "Who is on call?"):  # fmt: skip
        answer = "".join(p for p in OfflineReasoner().answer(question, [item], [])
                         if isinstance(p, str))  # fmt: skip
        first = answer.splitlines()[0]
        assert sum(1 for row in rows if f"Week: {row.key};" in first) <= 1, first
        assert sum(1 for row in rows if row.cells[1][1] in first) <= 1, first
