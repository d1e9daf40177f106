"""The name in the question's slot: a sentence that says the answer the way the question asks
('for his role in which play' / 'for his role in "Marrowby"'; 'which … violinist' / 'X is a
… violinist') is read for that name, not for another one nearer the question's words; and a
part that names one country reads a sentence about someone of another country last. Documents
and names are invented."""

from __future__ import annotations

from graph.offline.slots import fills_slot
from graph.protocols import EvidenceItem
from tests.fakes.rules import RuleReader

R = RuleReader()


def _item(n: int, title: str, text: str) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=title, source=f"{title}.md", text=text)


def _answer(question: str, items: list[EvidenceItem]) -> str:
    return "".join(p for p in R.answer(question, items, [], []) if isinstance(p, str))


def _first(answer: str) -> str:
    return answer.strip().splitlines()[0]


ROLES = (
    'Dace Orrin won the Pellam Prize for his role in "Marrowby" and was also nominated for '
    'his role as Tibbet in "Quern Lane".'
)
PLAYER = (
    "Ysolde Varga (born 3 May 1970) is a Danish violinist known for her role as Mira Stole in "
    'the stage show "Lanterns".'
)


def test_the_slot_is_read_from_the_words_before_it_and_from_the_kind_it_asks() -> None:
    asked = "Dace Orrin won the Pellam Prize for his role in which play?"
    assert fills_slot(asked, ROLES, "Marrowby")
    assert not fills_slot(asked, ROLES, "Tibbet")  # 'role as', not 'role in'
    kind = "Lanterns featured which Danish violinist?"
    assert fills_slot(kind, PLAYER, "Ysolde Varga")  # the subject that is one
    assert not fills_slot(kind, PLAYER, "Mira Stole")
    # no slot of either shape: nothing fills it
    assert not fills_slot("Who won the Pellam Prize?", ROLES, "Dace Orrin")
    assert not fills_slot("What is Marrowby?", ROLES, "Marrowby")


def test_the_name_in_the_slot_is_the_one_in_bold() -> None:
    answer = _answer(
        "Dace Orrin won the Pellam Prize for his role in which play?",
        [_item(1, "Dace Orrin", ROLES)],
    )
    assert "**Marrowby**" in _first(answer) and "**Tibbet**" not in answer
    answer = _answer(
        "The stage show Lanterns starred which Danish violinist?",
        [_item(1, "Ysolde Varga", PLAYER)],
    )
    assert "Ysolde Varga" in _first(answer) and "**Mira Stole**" not in answer


def test_a_sentence_about_someone_of_another_country_is_read_last() -> None:
    fennic = _item(
        1,
        "Orlo Fennic",
        "Orlo Fennic (born 1961 in Dunmere) is a Scottish radio actor who starred in Tidewell.",
    )
    brack = _item(
        2,
        "Tamsin Brack",
        "Tamsin Brack (born 1958) is an American radio actor who starred in Tidewell.",
    )
    answer = _answer("Tidewell starred which radio actor from the United States?", [fennic, brack])
    assert "Tamsin Brack" in _first(answer) and "Orlo Fennic" not in _first(answer)


def test_the_noun_asked_with_labels_a_value_in_the_sentence() -> None:
    from graph.offline.slots import labelled_values

    relay = (
        "Granted to Pellby, the relay sends a steady signal on VHF channel 31 (or shared "
        "channel 5 at night) from a mast on Orm Hill."
    )
    asked = "On what VHF channel does the Pellby relay send?"
    assert labelled_values(asked, relay) == ["31", "5"]
    assert fills_slot(asked, relay, "31") and not fills_slot(asked, relay, "Granted")
    first = _first(_answer(asked, [_item(1, "Pellby relay", relay)]))
    assert "**31**" in first and "**Granted**" not in first


def test_a_subject_in_the_slot_wins_over_a_name_beside_more_of_the_questions_words() -> None:
    """'which Danish violinist, remembered for her part on ⟨show⟩': the part's name sits next
    to 'part', yet the sentence says the subject is the violinist asked for."""
    player = _item(
        1,
        "Ysolde Varga",
        "Ysolde Varga (born 3 May 1970) is a Danish violinist known for her part as Mira Stole "
        'on "Quern Lane".',
    )
    answer = _answer(
        'Lanterns cast which Danish violinist, remembered for her part on "Quern Lane", as its '
        "pilot?",
        [player],
    )
    assert "**Ysolde Varga**" in _first(answer) and "**Mira Stole**" not in answer


def test_a_subject_question_reads_the_subject_that_does_what_is_asked() -> None:
    """'Which minor character made her debut in ⟨episode⟩?': the sentence's subject 'debuted
    in' it; the other episode named later is no character."""
    text = (
        'Tibbet debuted in the episode "Marrowby", although her voice could be heard in the '
        'premiere "Quern Lane".'
    )
    asked = "Which minor character made her debut in Marrowby?"
    assert fills_slot(asked, text, "Tibbet") and not fills_slot(asked, text, "Quern Lane")
    assert not fills_slot("What county is Tibbet in?", "Tibbet first appeared in 1990.", "Tibbet")
    page = f"Tibbet is a minor character of the animated series Quern Lane. {text}"
    answer = _answer(asked, [_item(1, "Tibbet", page)])
    assert "**Tibbet**" in _first(answer)
