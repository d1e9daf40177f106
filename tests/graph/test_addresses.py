"""'What county' asks for a level of an address written small to large, not for the town
next to 'located in'. Documents and names are invented."""

from __future__ import annotations

from graph.offline.addresses import address_level, asked_level
from graph.protocols import EvidenceItem
from tests.fakes.rules import RuleReader

R = RuleReader()


def _answer(question: str, text: str) -> str:
    item = EvidenceItem(n=1, chunk_id="c1", title="Orrell Mill", source="mill.md", text=text)
    return "".join(p for p in R.answer(question, [item], [], []) if isinstance(p, str))


MILL = "Orrell Mill is a restored water mill located in Pellby, Cranshire, Wessland."
FERRY = "The Tolvar ferry runs from Ambry, Dunsel County, Norland to the islands."


def test_the_asked_level_of_an_address() -> None:
    assert asked_level("What county is Orrell Mill located in?") == "county"
    assert asked_level("In which province was she born?") == "province"
    assert asked_level("Where is Orrell Mill?") == ""  # a place, no level: the town stands
    assert address_level(MILL, "Pellby", "county") == "Cranshire"  # the level after the town
    assert address_level(FERRY, "Ambry", "county") == "Dunsel County"  # the level it names
    assert address_level(FERRY, "Ambry", "state") == "Dunsel County"  # the one after the town
    assert address_level("It stands in Pellby.", "Pellby", "county") == ""  # no address


def test_what_county_reads_the_county_of_the_address() -> None:
    first = _answer("What county is Orrell Mill located in?", MILL).splitlines()[0]
    assert "**Cranshire**" in first and "**Pellby**" not in first
    first = _answer("Where is Orrell Mill located?", MILL).splitlines()[0]
    assert "**Cranshire**" not in first
