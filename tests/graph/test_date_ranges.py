"""A range of two dates ('4 March 1911 – 19 July 1979', '2024年1月1日至2025年6月30日') answers
'when did … die' / '哪天到期' with its end and 'when was … born' / '哪天生效' with its start,
whichever of the two sits nearer the question's words. Documents and names are invented."""

from __future__ import annotations

from graph.offline.values import range_end
from graph.protocols import EvidenceItem
from tests.fakes.rules import RuleReader

R = RuleReader()
LUND = "Ivo Lund (4 March 1911 – 19 July 1979) was a Danish film director and editor."
PERMIT = "该排污许可证有效期为2024年1月1日至2025年6月30日，由市生态环境局核发。"


def _first(question: str, text: str, title: str) -> str:
    item = EvidenceItem(n=1, chunk_id="c1", title=title, source=f"{title}.md", text=text)
    return "".join(p for p in R.answer(question, [item], []) if isinstance(p, str)).splitlines()[0]


def test_the_asked_end_of_a_range_is_the_answer() -> None:
    assert "**19 July 1979**" in _first("When did Ivo Lund die?", LUND, "Ivo Lund")
    assert "**4 March 1911**" in _first("When was Ivo Lund born?", LUND, "Ivo Lund")
    assert "**2025年6月30日**" in _first("排污许可证哪天到期？", PERMIT, "许可证")


def test_a_range_is_two_dates_joined_by_a_dash_or_to_and_the_question_must_ask_one_end() -> None:
    dates = ["4 March 1911", "19 July 1979"]
    assert range_end(LUND, dates, "When was Ivo Lund born?") == "4 March 1911"
    assert range_end(LUND, dates, "What did Ivo Lund direct?") == ""  # asks neither end
    apart = "Ivo Lund was born on 4 March 1911. He retired on 19 July 1979."
    assert range_end(apart, dates, "When did Ivo Lund die?") == ""  # no range: left as read


def test_from_one_date_until_another_is_a_range_too() -> None:
    march = (
        "The Vell Commons was a chartered grazing district that existed from May 2, 1861, "
        "until October 9, 1874, when it was split between two parishes."
    )
    assert "**October 9, 1874**" in _first("Until when did the Vell Commons exist?", march, "Vell")
    dates = ["May 2, 1861", "October 9, 1874"]
    assert range_end(march, dates, "When did the Vell Commons end?") == "October 9, 1874"
