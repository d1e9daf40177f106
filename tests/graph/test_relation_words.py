"""Words that say the same relation (lexicon relation_words.txt): a sentence that says
'employs' answers 'how many people work at', 'acquired by' answers 'the purchaser of', 'was
born in' answers 'what city is X from'. Documents are invented."""

from __future__ import annotations

from graph import text as tx
from graph.offline import bridge as br
from graph.offline.evidence import relevance
from graph.offline.reader_checks import holds_relation
from graph.protocols import EvidenceItem, HopView
from ingest.models import Hit
from tests.fakes.rules import RuleReader

R = RuleReader()


def _item(n: int, text: str, title: str = "doc") -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=title, source=f"{title}.md", text=text)


def _hit(rank: int, title: str, text: str) -> Hit:
    return Hit(chunk_id=f"c{rank}", doc_id=f"d{rank}", title=title, source=f"{title}.md",
               text=text, score=1.0 / rank)  # fmt: skip


def _first(question: str, *items: EvidenceItem) -> str:
    answer = "".join(p for p in R.answer(question, list(items), []) if isinstance(p, str))
    return answer.strip().splitlines()[0]


def test_a_family_holds_its_words_and_a_cue_asks_for_them() -> None:
    assert {"employ", "work", "staff"} <= tx.kin("work")
    assert tx.kin("employ") == tx.kin("work")  # either word finds the other
    assert tx.kin("harbour") == {"harbour"}  # a word of no family is only itself
    assert "born" in tx.cue_terms("What city is the conductor from?")
    assert not tx.cue_terms("Which city hosts the fair?")
    assert holds_relation("how many people work", "", "The depot employs 45 drivers.")
    assert not holds_relation("how many people work", "", "The depot stores 45 pallets.")
    # the cue is the question's: a passage's 'from' says nothing of birth
    assert not holds_relation("born", "", "She moved from Tarsk in 2001.")
    assert relevance("who bought the ferry line", "", "The ferry line was acquired in 2004.") == 1.0
    assert holds_relation("sibling", "", "She was a half-sister of King Rolf of Tarsk.")
    assert holds_relation("company that made", "", "The drill was manufactured by Orlen Tools.")


def test_a_sentence_in_another_word_of_the_relation_answers() -> None:
    depot = _item(1, "The Harrow depot stores 900 pallets. The Harrow depot employs 45 drivers.")
    assert "**45" in _first("How many people work at the Harrow depot?", depot)
    staff = _item(1, "Vela Pruss was born in Harrow, a district of Tarsk, in 1968. She later "
                     "moved to Orlen.")  # fmt: skip
    assert "**Harrow**" in _first("What city is Vela Pruss from?", staff)


def test_the_bridge_takes_the_name_the_relation_is_said_of_in_another_word() -> None:
    hits = [
        _hit(
            1,
            "Brine Ledger",
            "Brine Ledger was a shipping registry in Tarsk. In 2004 Brine "
            "Ledger was acquired by Orlen Holdings, and its rival Harrow Lines was sold to "
            "Vela Group in 2011.",
        ),  # fmt: skip
    ]
    step = HopView(sub_question="purchaser of Brine Ledger?", query="purchaser of Brine Ledger?")
    best = br.candidates(step, hits)
    assert best[0].text == "Orlen Holdings"
    assert best[0].relation == 1  # 'acquired' holds the relation 'purchaser' asks


SALES = (
    "In 2004 Brine Ledger was acquired by Orlen Holdings, and its rival Harrow Lines was sold "
    "to Vela Group in 2011."
)


def test_who_did_it_is_the_agent_after_by_and_never_the_receiver_after_to() -> None:
    assert "by **Orlen Holdings**" in _first("Who bought Brine Ledger?", _item(1, SALES))
    unsaid = _first("Who sold Harrow Lines?", _item(1, SALES))  # the seller goes unnamed
    assert "**" not in unsaid and not unsaid.startswith("Answer")
    assert _first("Who was Harrow Lines sold to?", _item(1, SALES)) == "Answer: Vela Group [1]"
    said = _item(1, "The Tarsk office was sold by Ivo Lund to Vela Group in 2011.")
    assert _first("Who sold the Tarsk office?", said) == "Answer: Ivo Lund [1]"
