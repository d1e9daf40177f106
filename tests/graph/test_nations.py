"""A nationality or a country is an answer of its own kind: 'an Norwegian painter' answers
'what nationality', and two things are in the same country when the sentences that have
them as subject name the same one. Documents and names are invented."""

from __future__ import annotations

from graph.offline.answer import answer_type
from graph.offline.nations import as_asked, nation_keys, nations_in
from graph.protocols import EvidenceItem, HopView
from tests.fakes.rules import RuleReader

R = RuleReader()


def _item(n: int, title: str, text: str) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=title, source=f"{title}.md", text=text)


def _answer(question: str, items: list[EvidenceItem], hops: list[HopView] | None = None) -> str:
    return "".join(p for p in R.answer(question, items, [], hops or []) if isinstance(p, str))


BRISK = _item(
    1, "Halvard Brisk", "Halvard Brisk (born 1931) was a Norwegian painter and set designer."
)
OSTERN = _item(
    2, "Ostern Vale", "Ostern Vale is a village in Lomhed District, Ravik County, Norway."
)
TALLOW = _item(3, "Tallow Fen", "Tallow Fen is a hamlet in the canton of Ubrecht in Switzerland.")
KESSING = _item(4, "Kessing", "Kessing is a village in Nordmark District, Solte County, Norway.")
QUILL = _item(5, "Quill Marsh", "Quill Marsh is a wetland near the old mill, fed by two streams.")


def test_names_and_nationalities_are_read_as_countries_only_where_they_stand_alone() -> None:
    assert nation_keys("an American-born British actor") == {"US", "GB"}
    assert nation_keys("a river in the U.S. state of Oregon") == {"US"}
    assert nation_keys("他是美国人，后来移居印度尼西亚。") == {"US", "ID"}
    # inside a longer name, after 'state of', or a capitalised word of another kind: no country
    assert nations_in("Corvin Jordan moved to New Mexico, then to the state of Georgia.") == ()
    assert nations_in("They sailed the Indian Ocean for the American Film Archive.") == ()
    # a label of the name in a language is no statement of a country
    assert nations_in("Vell (Ukrainian: Велл; Russian: Велл) is a hamlet.") == ()


def test_questions_that_ask_a_nationality_or_a_country_expect_one() -> None:
    assert answer_type("What nationality is Halvard Brisk?") == "nation"
    assert answer_type("Which country is the painter from?") == "nation"
    assert answer_type("哈尔瓦的国籍是什么？") == "nation"
    assert answer_type("What county is Ostern Vale in?") != "nation"
    assert as_asked("Which country is he from?", "Norwegian") == "Norway"
    assert as_asked("What nationality is he?", "Norwegian") == "Norwegian"


def test_the_nationality_said_of_the_subject_is_stated() -> None:
    first = _answer("What nationality is Halvard Brisk?", [BRISK]).splitlines()[0]
    assert first == "Answer: Norwegian [1]"
    country = _answer("Which country is Halvard Brisk from?", [BRISK]).splitlines()[0]
    assert country == "Answer: Norway [1]"


def test_a_nationality_said_of_something_else_is_not_stated_as_the_persons() -> None:
    """The film is Danish; the sentence says nothing of its director's nationality."""
    film = _item(
        1, "Grey Harbour", "Grey Harbour is a 1950 Danish drama film directed by Ivo Lund."
    )
    first = _answer("What nationality is Ivo Lund?", [film]).splitlines()[0]
    assert not first.startswith("Answer:")


def test_same_country_is_decided_from_each_subjects_own_sentence() -> None:
    same = _answer("Are Ostern Vale and Kessing located in the same country?", [OSTERN, KESSING])
    assert same.splitlines()[0] == "Answer: yes [2]" or same.splitlines()[0] == "Answer: yes [1]"
    assert "Norway. [2]" in same and "Norway. [4]" in same  # both sentences shown
    other = _answer("Are Ostern Vale and Tallow Fen located in the same country?", [OSTERN, TALLOW])
    assert other.splitlines()[0].startswith("Answer: no")


def test_same_country_is_not_answered_when_one_country_is_not_said() -> None:
    """A passage that names no country gives no 'no': the documents do not say."""
    text = _answer("Are Ostern Vale and Quill Marsh located in the same country?", [OSTERN, QUILL])
    assert not text.splitlines()[0].startswith("Answer:")


def test_same_nationality_through_a_chain_reads_the_people_the_chain_found() -> None:
    films = [
        _item(1, "Low Tide", "Low Tide is a 1961 film directed by Halvard Brisk."),
        _item(2, "Night Ferry", "Night Ferry is a 1958 film directed by Ansel Crane."),
        BRISK,
        _item(4, "Ansel Crane", "Ansel Crane (1920–1990) was a Swiss film director."),
    ]
    hops = [
        HopView(sub_question="director of Low Tide?", query="director of Low Tide?"),
        HopView(sub_question="director of Night Ferry?", query="director of Night Ferry?"),
        HopView(sub_question="#1 nationality?", query="Halvard Brisk nationality",
                entity="Halvard Brisk"),
        HopView(sub_question="#2 nationality?", query="Ansel Crane nationality",
                entity="Ansel Crane"),
    ]  # fmt: skip
    question = "Do the directors of Low Tide and Night Ferry share the same nationality?"
    assert _answer(question, films, hops).splitlines()[0].startswith("Answer: no")
    films[3] = _item(4, "Ansel Crane", "Ansel Crane (1920–1990) was a Norwegian film director.")
    assert _answer(question, films, hops).splitlines()[0].startswith("Answer: yes")


def test_a_choice_by_country_takes_the_one_whose_passage_names_it() -> None:
    """'Which film is from Norway, A or B?': the one whose own sentence says Norwegian."""
    films = [
        _item(1, "Low Tide", "Low Tide is a 1961 Norwegian drama film directed by Halvard Brisk."),
        _item(2, "Night Ferry", "Night Ferry is a 1958 Swiss comedy film directed by Ansel Crane."),
    ]
    question = "Which 1960s film is from Norway, Night Ferry or Low Tide?"
    assert _answer(question, films).splitlines()[0] == "Answer: Low Tide [1]"
    films[1] = _item(2, "Night Ferry", "Night Ferry is a 1958 Norwegian comedy film.")
    assert not _answer(question, films).splitlines()[0].startswith("Answer: Low Tide")


def test_same_country_reads_each_named_thing_under_its_heading_in_one_document() -> None:
    """Two sections of one 'Approved vendors' page: each part is read for the vendor it names,
    past the section heading (a line of only the name)."""
    vendors = [
        _item(1, "Approved vendors", "Kessel Works\n\nKessel Works is a Norwegian foundry."),
        _item(2, "Approved vendors", "Ubrecht Optics\n\nUbrecht Optics is a Swiss lens maker."),
        _item(3, "Approved vendors", "Lomhed Tools\n\nLomhed Tools is a Norwegian toolmaker."),
    ]
    hops = [
        HopView(sub_question="Kessel Works based country?", query="Kessel Works based country?"),
        HopView(sub_question="Lomhed Tools based country?", query="Lomhed Tools based country?"),
    ]
    question = "Are Kessel Works and Lomhed Tools based in the same country?"
    assert _answer(question, vendors, hops).splitlines()[0].startswith("Answer: yes")
    hops[1] = HopView(sub_question="Ubrecht Optics country?", query="Ubrecht Optics country?")
    question = "Are Kessel Works and Ubrecht Optics based in the same country?"
    assert _answer(question, vendors, hops).splitlines()[0].startswith("Answer: no")


def test_same_country_states_nothing_from_one_side_or_from_a_sentence_naming_two() -> None:
    """Only one of the two has a passage; a sentence naming two countries ('a French-Canadian
    co-production', 'Elbert County, Georgia, United States') decides nothing; a question that
    is not about sharing a country ('both country singers') is not compared by country."""
    hops = [
        HopView(sub_question="Ostern Vale country?", query="Ostern Vale country?"),
        HopView(sub_question="Quill Marsh country?", query="Quill Marsh country?"),
    ]
    text = _answer("Are Ostern Vale and Quill Marsh in the same country?", [OSTERN], hops)
    assert not text.splitlines()[0].startswith("Answer:")
    both = _item(6, "Rook Hill", "Rook Hill is a town in Elbert County, Georgia, United States.")
    text = _answer("Are Rook Hill and Kessing located in the same country?", [both, KESSING])
    assert not text.splitlines()[0].startswith("Answer:")
    lang = _item(7, "Pale Shore", "Pale Shore is a 2010 French-language Canadian drama film.")
    other = _item(8, "Grey Sound", "Grey Sound is a 2001 French comedy film.")
    text = _answer("Are Pale Shore and Grey Sound from the same country?", [lang, other])
    assert text.splitlines()[0] == "Answer: no [7]"
    singers = [
        _item(1, "Ada Vell", "Ada Vell is an Australian country singer."),
        _item(2, "Mo Rinn", "Mo Rinn is a Canadian country singer."),
    ]
    text = _answer("Are Ada Vell and Mo Rinn both country singers?", singers)
    assert not text.splitlines()[0].startswith("Answer: no")


def test_chinese_country_names_count_only_as_words_of_their_own() -> None:
    assert nations_in("该供应商位于上海地区，产品销往欧美国家。") == ()
    assert nation_keys("他是中国籍工程师，常驻南非共和国。") == {"CN", "ZA"}
