"""A stated answer is of the kind asked: 'who' is answered by a person, not by an
organisation's name or a date; 'which county' not by a country. Such a span is quoted in its
sentence instead. Documents and names are invented."""

from __future__ import annotations

from graph.protocols import EvidenceItem
from tests.fakes.rules import RuleReader

R = RuleReader()


def _first(question: str, text: str) -> str:
    item = EvidenceItem(n=1, chunk_id="c1", title="Orvell", source="orvell.md", text=text)
    answer = "".join(p for p in R.answer(question, [item], [], []) if isinstance(p, str))
    return answer.strip().splitlines()[0]


def test_who_is_answered_by_a_person_not_by_an_organisation() -> None:
    both = "The Orvell Trust is chaired by Mara Quist of the Tessel Party since 2019."
    first = _first("Who chairs the Orvell Trust?", both)
    assert "Mara Quist" in first and "Tessel Party" not in first.split("“")[0]
    only = "The Orvell Trust is chaired by the Tessel Party since 2019."
    first = _first("Who chairs the Orvell Trust?", only)
    assert not first.startswith("Answer:"), first  # quoted, never stated


def test_a_span_of_another_kind_is_never_stated() -> None:
    from graph.offline.reader_spans import of_asked_kind

    assert not of_asked_kind("person", "Who is the CEO of Orvell?", "Bank of Tessel")
    assert not of_asked_kind("person", "Who chairs the trust?", "May 27")
    assert of_asked_kind("person", "Who chairs the trust?", "Mara Quist")
    # the part asks for the organisation itself, though 'who' stands in it
    assert of_asked_kind("person", "What party backed the man who chairs it?", "Tessel Party")
    assert not of_asked_kind("entity", "Which county is Pellby in?", "Norway")
    assert of_asked_kind("entity", "Which county is Pellby in?", "Cranshire")
    assert of_asked_kind("nation", "Which country is Pellby in?", "Norway")


def test_both_says_yes_when_each_sentence_says_it_and_no_only_for_another_country() -> None:
    from graph.offline.answer import short_answer

    def both(question: str, one: str, two: str) -> str | None:
        items = [
            EvidenceItem(n=1, chunk_id="c1", title="Vellum Run", source="a.md", text=one),
            EvidenceItem(n=2, chunk_id="c2", title="Tarrow Ring", source="b.md", text=two),
        ]
        parts = [f"{name} {question.split('both')[-1]}" for name in ("Vellum Run", "Tarrow Ring")]
        from graph.protocols import HopView

        hops = [HopView(sub_question=p, query=p) for p in parts]
        short = short_answer(question, items, hops)
        return short.text if short else None

    games = "Are Vellum Run and Tarrow Ring both board games?"
    vellum = "Vellum Run is a board game for two players, published in 1994."
    tarrow = "Tarrow Ring is a board game of chance from the Orm valley."
    assert both(games, vellum, tarrow) == "yes"
    # a word of what is asked missing from one sentence: no 'no' by absence, nothing stated
    assert both(games, vellum, "Tarrow Ring is a game of chance from the Orm valley.") is None
    makers = "Are Vellum Run and Tarrow Ring both American board games?"
    american = "Vellum Run is an American board game for two players."
    assert both(makers, american, "Tarrow Ring is a Danish board game of chance.") == "no"
    assert both(makers, american, "Tarrow Ring is an American board game of chance.") == "yes"
