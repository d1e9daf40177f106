"""Chains through a directory of records and a log (real Milvus Lite, no model): 'Lead: X' is
the lead of the record it sits in, a field's label is never the entity a chain goes on with,
a chain whose next link the documents do not give says so instead of reading any value of the
asked kind, and log entries that name the asked thing are counted. Documents are invented."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hopwise.app import Hopwise
from tests.graph.offline_app import leads_with, offline_app

DIRECTORY = (
    "Group directory (revised 9 May 2031)\n\n"
    "Group: Parsnip\nLead: Ilse Varga\nPhone: 7301\nRuns: the payroll engine Coinwick\n\n"
    "Group: Marlin\nLead: Teodor Brask\nPhone: 7309\nRuns: the mail relay Postvane\n\n"
    "Group: Thistle\nLead: Noor Adeyemi\nPhone: 7315\nRuns: the print queue Inkfold\n"
)
OUTAGES = (
    "# Outage register, spring 2031\n\n"
    "## OUT-14\nDate: 2031-04-02\nService: Postvane\nImpact: major\n"
    "Notes: Mail was held for two hours while a certificate was renewed.\n\n"
    "## OUT-15\nDate: 2031-04-09\nService: Coinwick\nImpact: minor\n"
    "Notes: One payslip batch ran late.\n\n"
    "## OUT-16\nDate: 2031-04-23\nService: Postvane\nImpact: moderate\n"
    "Notes: A disk filled up on one relay node.\n"
)
DEPOT = (
    "# Fenwick depot notes\n\n"
    "The Fenwick depot holds 640 crates. The Fenwick depot employs 38 porters.\n\n"
    "In 2030 the depot canteen moved to the east hall.\n"
)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hopwise]:
    docs = {"groups.txt": DIRECTORY, "outages.md": OUTAGES, "depot.md": DEPOT}
    with offline_app(tmp_path_factory.mktemp("kb-directory"), docs) as opened:
        yield opened


def _first(result: object) -> str:
    return result.answer.splitlines()[0]  # type: ignore[attr-defined]


def test_a_record_line_answers_for_its_own_record(app: Hopwise) -> None:
    result = app.ask("What is the phone of the lead of the group that runs Coinwick?", web=False)
    first = _first(result)
    assert "7301" in first, result.answer
    assert "7309" not in first and "7315" not in first
    entities = [h.bridge.get("chosen_entity") for h in result.hops if h.bridge]
    assert entities[:2] == ["Parsnip", "Ilse Varga"], entities  # never 'Group' or 'Lead'


def test_a_chain_whose_next_link_is_missing_says_so(app: Hopwise) -> None:
    """Inkfold (run by Thistle) had no outage: no outage's impact is its answer."""
    result = app.ask("What impact did the outage of the service run by group Thistle have?")
    first = _first(result)
    assert first.startswith("The documents do not say"), result.answer
    assert "Looked for: outage of Inkfold" in result.answer  # the link it followed, in words
    for impact in ("major", "minor", "moderate"):
        assert impact not in result.answer
    assert not result.evaluation.enough


def test_log_entries_that_name_the_asked_thing_are_counted(app: Hopwise) -> None:
    result = app.ask("How many outages did Postvane have?", web=False)
    assert _first(result).startswith("Answer: 2 ["), result.answer
    assert "OUT-15" not in result.answer and "Coinwick" not in result.answer


def test_a_quoted_answer_is_the_depot_s_own_sentence(app: Hopwise) -> None:
    """The first line is the asked depot's sentence, not another depot's number (the next
    best units follow it as evidence, each cited)."""
    result = app.ask("How many people work at the Fenwick depot?", web=False)
    first = _first(result)
    assert "38" in first and "640" not in first, result.answer


def test_which_field_of_the_record_that_holds_the_question_words(app: Hopwise) -> None:
    """'Which group runs Postvane?': the record whose other fields say it gives its Group."""
    result = app.ask("Which group runs the mail relay?", web=False)
    assert leads_with(_first(result), "Marlin"), result.answer
    assert "Runs: the mail relay Postvane" in result.answer
    phone = app.ask("What is the phone of Noor Adeyemi?", web=False)
    assert "7315" in _first(phone) and "7301" not in _first(phone), phone.answer
