"""The first screen: what Hopwise is, and example questions from the titles a reader may read."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.result import QuestionResult
from ingest.models import Chunk, DocumentInfo
from tests.ui.apptools import assert_no_exception, new_app, texts
from ui.welcome import EXAMPLES, checked_examples, heading_questions, readable_docs


def doc(title: str, groups: list[str], created: float) -> DocumentInfo:
    return DocumentInfo(
        doc_id=title, title=title, source=f"{title}.md", version=1, chunks=1, groups=groups,
        created_at=created,
    )  # fmt: skip


def test_documents_are_the_readers_own_newest_first() -> None:
    docs = [
        doc("Fleet upkeep", ["all"], 1),
        doc("Pay scales", ["hr"], 3),
        doc("Vendor", ["all"], 2),
    ]
    assert [d.title for d in readable_docs(docs, ["all"])] == ["Vendor", "Fleet upkeep"]
    assert [d.title for d in readable_docs(docs, ["hr"])] == ["Pay scales"]


def test_questions_go_section_by_section_across_documents_in_their_language() -> None:
    docs = [
        ("Operations handbook", ["Operations handbook", "Operations handbook > Incident response",
                                 "Operations handbook > Incident response", "Operations handbook > Offices"]),
        ("供货合同", ["供货合同 > 违约责任"]),
        ("Notes", ["Notes", "", "Notes > x"]),  # nothing but the title and a one-letter heading
    ]  # fmt: skip
    assert heading_questions(docs) == [
        (0, "What does “Operations handbook” say about “Incident response”?"),
        (1, "《供货合同》中关于“违约责任”是怎么说的？"),
        (0, "What does “Operations handbook” say about “Offices”?"),
    ]


class Answers:
    """A runner whose offline answers are scripted: question -> (answer, cited doc id)."""

    def __init__(self, chunks: dict[str, list[str]], answers: dict[str, tuple[str, str]]) -> None:
        self.chunks, self.answers, self.asked = chunks, answers, []

    def document_chunks(self, doc: DocumentInfo) -> list[Chunk]:
        return [
            Chunk(
                chunk_id=f"{doc.doc_id}{i}",
                doc_id=doc.doc_id,
                text="t",
                section_path=p,
                start_char=i,
            )  # fmt: skip
            for i, p in enumerate(self.chunks[doc.doc_id])
        ]

    def try_offline(self, question: str, groups: object) -> QuestionResult:
        self.asked.append(question)
        answer, cited = self.answers.get(question, ("The documents do not say: x", ""))
        hits = [{"chunk_id": f"{cited}0", "doc_id": cited}] if cited else []
        return QuestionResult.model_validate(
            {
                "question": question,
                "answer": answer,
                "hops": [{"hop": 1, "sub_question": question, "query": question, "hits": hits}],
            }  # fmt: skip
        )


def test_only_questions_answered_from_their_own_document_are_offered() -> None:
    docs = [doc("Fleet upkeep", ["all"], 2), doc("Vendor terms", ["all"], 1)]
    fleet, vendor = (
        "What does “Fleet upkeep” say about “Tyres”?",
        "What does “Vendor terms” say about “Payment”?",
    )
    runner = Answers(
        {"Fleet upkeep": ["Fleet upkeep > Tyres", "Fleet upkeep > Brakes"],
         "Vendor terms": ["Vendor terms > Payment"]},
        {fleet: ("Answer: every 20,000 km [1]", "Fleet upkeep"),
         vendor: ("The documents say: “Invoices are paid in 30 days.” [1]", "Fleet upkeep")},
    )  # fmt: skip
    assert checked_examples(runner, docs, ["all"]) == [fleet]  # vendor's cites another document
    assert runner.asked[2] == "What does “Fleet upkeep” say about “Brakes”?"  # not found: dropped
    nothing = Answers({"Fleet upkeep": ["Fleet upkeep > Tyres"], "Vendor terms": []}, {})
    assert checked_examples(nothing, docs, ["all"]) == []


SHIPPING = b"# Shipping rules\n\n## Parcels\nParcels over twenty kilograms travel by freight.\n"
SECRET = b"# Merger memo\n\n## Terms\nThe merger closes in the spring.\n"


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    for name, data, groups in (("ship.md", SHIPPING, ["all"]), ("memo.md", SECRET, ["board"])):
        result = ingest_bytes(data, name, get_store(), groups=groups, config=get_settings().ingest)
        assert result.status == "ingested", result.reason
    return app_data


def test_first_screen_offers_questions_about_readable_documents_and_asks_one(kb: Path) -> None:
    at = new_app().run()
    assert_no_exception(at)
    assert "Hopwise splits a question into steps" in texts(at)
    assert "Ask about your documents, e.g. “Shipping rules”." in texts(at)  # while checking
    assert "Merger memo" not in texts(at)
    EXAMPLES.wait()
    at.run()
    examples = [b for b in at.button if b.key and b.key.startswith("example_")]
    assert [b.label for b in examples] == ["What does “Shipping rules” say about “Parcels”?"]
    assert not any("Merger memo" in b.label for b in at.button)  # the local user reads `all`
    examples[0].click().run()
    assert_no_exception(at)
    assert "Try one of these" not in texts(at)  # not above the question being answered
    questions = [m for m in at.chat_message if m.name == "user"]
    assert questions and "Shipping rules" in questions[0].markdown[0].value
    [answer] = [m for m in at.chat_message if m.name == "assistant"]
    shown = " ".join(str(m.value) for m in answer.markdown)
    assert "twenty kilograms" in shown  # the check's promise holds
    assert not [b for b in at.button if b.key and b.key.startswith("example_")]  # screen gone


def test_the_first_screen_goes_as_soon_as_a_question_is_typed(kb: Path) -> None:
    at = new_app().run()
    EXAMPLES.wait()
    at.run()
    assert "Try one of these" in texts(at)
    at.chat_input[0].set_value("How heavy must a parcel be to travel by freight?").run()
    assert_no_exception(at)
    assert "Try one of these" not in texts(at)  # the run that answers draws no first screen
    assert [m for m in at.chat_message if m.name == "assistant"]


def test_a_heading_that_repeats_the_title_is_no_topic_and_long_titles_cut_between_words() -> None:
    title = "QX-7 valve - Datasheet, Pressure ratings, Materials and Standards of the range"
    docs = [(title, [f"{title} > QX-7 valve pressure ratings", f"{title} > Installation"])]
    [(index, question)] = heading_questions(docs)
    assert index == 0 and question.endswith("say about “Installation”?")
    assert "“QX-7 valve - Datasheet, Pressure ratings, Materials and…”" in question
    zh = [("设备保养手册", ["设备保养手册 > 保养手册", "设备保养手册 > 季度检查"])]
    assert [q for _, q in heading_questions(zh)] == ["《设备保养手册》中关于“季度检查”是怎么说的？"]


def test_documents_without_a_heading_to_ask_about_leave_room_for_older_ones() -> None:
    flat = [doc(f"scan-{i}", ["all"], 10 + i) for i in range(5)]  # newest: no headings
    docs = [*flat, doc("Fleet upkeep", ["all"], 1)]
    runner = Answers(
        {**{d.doc_id: [""] for d in flat}, "Fleet upkeep": ["Fleet upkeep > Tyres"]},
        {"What does “Fleet upkeep” say about “Tyres”?": ("Answer: 20,000 km [1]", "Fleet upkeep")},
    )
    assert checked_examples(runner, docs, ["all"]) == [
        "What does “Fleet upkeep” say about “Tyres”?"
    ]
