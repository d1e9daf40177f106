"""'What do A and B have in common?': the words both one's own sentences say of them, stated
with both cited; nothing stated when they share none. Documents and names are invented."""

from __future__ import annotations

from graph.offline import OfflineReasoner
from graph.offline.shared import asks_shared, named_pair
from graph.protocols import EvidenceItem

R = OfflineReasoner()


def _item(n: int, title: str, text: str) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=title, source=f"{title}.md", text=text)


def _first(question: str, items: list[EvidenceItem]) -> str:
    answer = "".join(p for p in R.answer(question, items, [], []) if isinstance(p, str))
    return answer.strip().splitlines()[0]


ORLO = _item(1, "Orlo Fennic", "Orlo Fennic (born 1961) is a Velmarian stage actor and glass "
             "sculptor who lives in Dunmere.")  # fmt: skip
TAMSIN = _item(2, "Tamsin Brack", "Tamsin Brack (born 4 May 1958) is a retired Ostrelian glass "
               "sculptor and painter.")  # fmt: skip


def test_the_words_both_sentences_say_of_their_subject_are_the_answer() -> None:
    question = "What profession do Orlo Fennic and Tamsin Brack have in common?"
    assert asks_shared(question) and named_pair(question) == ["Orlo Fennic", "Tamsin Brack"]
    assert _first(question, [ORLO, TAMSIN]) == "Answer: glass sculptor [1][2]"
    both = "Orlo Fennic and Tamsin Brack: which craft do they both practise?"
    assert _first(both, [TAMSIN, ORLO]) == "Answer: glass sculptor [1][2]"  # as named


def test_nothing_shared_or_a_missing_passage_states_nothing() -> None:
    painter = _item(2, "Tamsin Brack", "Tamsin Brack (born 1958) is a retired Ostrelian painter.")
    question = "What profession do Orlo Fennic and Tamsin Brack have in common?"
    assert not _first(question, [ORLO, painter]).startswith("Answer:")
    assert not _first(question, [ORLO]).startswith("Answer:")
    assert not asks_shared("Are Orlo Fennic and Tamsin Brack both sculptors?")  # a yes/no
