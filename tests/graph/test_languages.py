"""A language is an answer of its own kind, read from a closed list (lexicon languages.txt):
'a Tamil song' answers 'in which language', '以英文版本为准' answers '以哪种语言为准'.
Documents and names are invented."""

from __future__ import annotations

from graph.offline.answer import answer_type
from graph.offline.namelists import LANGUAGES
from graph.protocols import EvidenceItem
from tests.fakes.rules import RuleReader

R = RuleReader()


def _first(question: str, text: str, title: str = "notes") -> str:
    item = EvidenceItem(n=1, chunk_id="c1", title=title, source=f"{title}.md", text=text)
    return "".join(p for p in R.answer(question, [item], []) if isinstance(p, str)).splitlines()[0]


def test_questions_that_ask_a_language_expect_one() -> None:
    assert answer_type("In which language is the song Harbour Lights sung?") == "language"
    assert answer_type("What language is the service manual written in?") == "language"
    assert answer_type("本合同以哪种语言的版本为准？") == "language"
    assert answer_type("哪国语言的说明书最全？") == "language"


def test_language_names_are_found_where_they_stand_alone() -> None:
    assert [k for k, _ in LANGUAGES.find("The letters were translated into Latin.")] == ["la"]
    assert LANGUAGES.find("They crossed the English Channel.") == ()
    assert [k for k, _ in LANGUAGES.find("本合同以中文和英文书就。")] == ["zh", "en"]


def test_the_one_language_a_sentence_names_of_its_subject_is_the_answer() -> None:
    first = _first(
        "In which language is the song Harbour Lights sung?",
        "Harbour Lights is a 1998 Tamil song composed by Ravi Moss for the film Tidewater.",
        "Harbour Lights",
    )
    assert first.startswith("Answer: Tamil") or "**Tamil**" in first
    two = _first(
        "What language is the service manual written in?",
        "The service manual is written in English, with a German summary for the depot.",
        "service manual",
    )
    assert not two.startswith("Answer:")  # two languages: quoted, never stated


def test_a_sentence_naming_no_language_does_not_answer_which_language() -> None:
    """The sentence naming the agreement's code says nothing of its language; the one that
    names a language does, though it does not repeat the code."""
    text = (
        "The service agreement SA-12 with Lomhed Tools runs from 1 May 2024 to 30 April 2025. "
        "It is written in Portuguese only."
    )
    first = _first("What language is service agreement SA-12 written in?", text, "SA-12")
    assert "Portuguese" in first


def test_chinese_language_names_count_only_as_words_of_their_own() -> None:
    assert LANGUAGES.find("其中文件已归档，精英文化另论。") == ()
    assert [k for k, _ in LANGUAGES.find("本合同以中文和英文书就。")] == ["zh", "en"]
