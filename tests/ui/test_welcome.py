"""The first screen: what Hopwise is, and example questions from the titles a reader may read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.models import DocumentInfo
from tests.ui.apptools import assert_no_exception, new_app, texts
from ui.welcome import example_questions, readable_titles


def doc(title: str, groups: list[str], created: float) -> DocumentInfo:
    return DocumentInfo(
        doc_id=title, title=title, source=f"{title}.md", version=1, chunks=1, groups=groups,
        created_at=created,
    )  # fmt: skip


def test_titles_are_the_readers_own_newest_first_and_clipped() -> None:
    docs = [
        doc("Fleet upkeep", ["all"], 1),
        doc("Pay scales", ["hr"], 3),
        doc("Vendor terms " + "x" * 80, ["all"], 2),
    ]
    titles = readable_titles(docs, ["all"])
    assert titles[1] == "Fleet upkeep" and titles[0].startswith("Vendor terms")
    assert len(titles[0]) == 60 and titles[0].endswith("…")
    assert "Pay scales" not in titles  # a group the reader lacks: its title never shows
    assert readable_titles(docs, ["hr"]) == ["Pay scales"]


def test_three_questions_in_the_titles_language() -> None:
    en = example_questions(["Fleet upkeep", "Vendor terms", "Third"])
    assert len(en) == 3 and "“Fleet upkeep”" in en[0] and "“Vendor terms”" in en[1]
    assert "Fleet upkeep" in en[2] and "Vendor terms" in en[2]
    zh = example_questions(["设备维护计划", "供货合同"])
    assert zh[0] == "《设备维护计划》主要讲了什么？" and "《供货合同》" in zh[2]
    single = example_questions(["Only one"])
    assert len(single) == 3 and all("“Only one”" in q for q in single) and len(set(single)) == 3
    assert example_questions([]) == []


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
    examples = [b for b in at.button if b.key and b.key.startswith("example_")]
    assert examples and any("Shipping rules" in b.label for b in examples)
    assert not any("Merger memo" in b.label for b in at.button)  # the local user reads `all`
    examples[0].click().run()
    assert_no_exception(at)
    questions = [m for m in at.chat_message if m.name == "user"]
    assert questions and "Shipping rules" in questions[0].markdown[0].value
    assert [m for m in at.chat_message if m.name == "assistant"]
    assert not [b for b in at.button if b.key and b.key.startswith("example_")]  # screen gone
