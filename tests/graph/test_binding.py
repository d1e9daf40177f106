"""A stated value is bound to its subject: in the same unit as the name it is said of and, in
a table row, in that name's column group. The claim check fails a value that is in the
source but bound to another name."""

from __future__ import annotations

from graph.binding import bound, unbound_values
from graph.claims import check, split_claims
from graph.offline.compose import about_sibling, compose
from graph.offline.units import Unit, units
from graph.protocols import EvidenceItem

ROSTER = EvidenceItem(
    n=1, chunk_id="roster-1", title="On-call roster",
    text="Service | Primary | Primary phone | Backup | Backup phone\n"
    "queue-relay | Ona Brisk | 0100 111 | Pell Varga | 0100 222\n"
    "ledger-sync | Ivo Mart | 0100 333 | Una Saar | 0100 444",
)  # fmt: skip
NOTES = EvidenceItem(
    n=2, chunk_id="notes-1", title="Team notes",
    text="Ona Brisk moved to the Harbour office in 2030. Pell Varga joined the team in 2031.",
)  # fmt: skip


def test_a_value_is_bound_in_its_names_column_group() -> None:
    found = units(ROSTER)
    assert bound("0100 222", ["Pell Varga"], found)
    assert not bound("0100 111", ["Pell Varga"], found)  # the primary's phone, same row
    assert bound("0100 111", ["queue-relay"], found)  # the row's key binds every cell


def test_a_value_is_bound_in_its_sentence() -> None:
    found = units(NOTES)
    assert bound("2031", ["Pell Varga"], found)
    assert not bound("2030", ["Pell Varga"], found)


def test_the_claim_check_fails_a_value_said_of_another_name() -> None:
    question = "Who is the backup for queue-relay and what is their number?"
    right = check(split_claims("Answer: Pell Varga, 0100 222 [1]"), [ROSTER], question)
    wrong = check(split_claims("Answer: Pell Varga, 0100 111 [1]"), [ROSTER], question)
    assert right[0].verdict == "supported"
    assert wrong[0].verdict == "unsupported" and "another name" in wrong[0].why
    assert unbound_values(["0100 111"], "Pell Varga, 0100 111", question, [ROSTER]) == ["0100 111"]


def test_a_verbatim_quote_is_bound_as_its_passage_binds_it() -> None:
    quote = "The documents say: “Ona Brisk moved to the Harbour office in 2030.” [2]"
    claims = check(split_claims(quote), [NOTES], "When did Pell Varga join?")
    assert claims[0].verdict == "supported"


def test_a_unit_about_a_sibling_code_is_no_answer_for_the_code_asked() -> None:
    log = "Pump PX-301 · last serviced: 2024-03-02 · technician: Ada Fenn"
    unit = Unit(log, "Service log", 1, 0, kind="record")
    assert about_sibling("When was PX-302 last serviced?", unit)  # another pump's record
    assert not about_sibling("When was PX-301 last serviced?", unit)
    assert not about_sibling("When was the pump last serviced?", unit)  # no code asked
    assert not about_sibling("Who services RQ-12?", unit)  # a code of another shape
    item = EvidenceItem(n=1, chunk_id="c3", source="log.txt", title="Service log", text=log)
    first = "".join(compose("When was PX-302 last serviced?", [item], [])).splitlines()[0]
    assert first.startswith("The documents do not say"), first
    asked = "".join(compose("When was PX-301 last serviced?", [item], [])).splitlines()[0]
    assert "2024-03-02" in asked, asked


def test_a_name_under_another_number_is_a_sibling_too() -> None:
    row = Unit("生效日期: 2031年3月2日", "维修规程附录（一） 一、总则", 1, 0)
    assert about_sibling("维修规程附录（3）什么时候生效？", row)
    assert not about_sibling("维修规程附录（1）什么时候生效？", row)  # 1 and 一 are one number
    assert not about_sibling("维修规程什么时候生效？", row)  # no number asked


def test_a_range_or_list_of_codes_and_a_which_question_are_no_siblings() -> None:
    ranged = Unit("Pumps PX-301 to PX-310 were serviced on 2 May.", "Service log", 1, 0)
    assert not about_sibling("When was PX-302 last serviced?", ranged)
    listed = Unit("PX-301/302 were serviced on 2 May.", "Service log", 1, 0)
    assert not about_sibling("When was PX-302 last serviced?", listed)
    # the answer to 'which' may be the sibling itself
    replaced = Unit("Firmware FW-21 replaced it in March.", "Release notes", 1, 0)
    assert not about_sibling("Which firmware replaced FW-20?", replaced)
