"""A decomposition never garbles a name: a sub-question that cuts, glues or swaps a name is
refused and the question is asked whole; the decomposer keeps every name whole on every
question of the dev sets and knowledge bases (checked when ../shared is there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.garble import garbled_names, keep_names
from graph.offline.decompose import decompose_question
from graph.schemas import SubQuestion

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "eval"


def test_a_cut_chinese_name_is_garbled() -> None:
    assert garbled_names("海川的电话是多少？", "陆海川的电话是多少？") == ["海川"]
    assert garbled_names("陆海川的电话是多少？", "陆海川的电话是多少？") == []


def test_a_code_the_question_never_names_is_garbled() -> None:
    assert garbled_names("What failed on QX-17?", "What failed on QX-71 last week?") == ["QX-17"]
    assert garbled_names("What failed on QX-71?", "What failed on QX-71 last week?") == []


def test_a_sentence_word_made_a_name_is_garbled() -> None:
    question = "compare Tallyhook's v2 and v3 rate limits"
    assert "Compare Tallyhook" in garbled_names("v2 of Compare Tallyhook?", question)
    assert garbled_names("What is the rate limit of Tallyhook v2?", question) == []


def test_placeholders_and_found_entities_are_no_garble() -> None:
    question = "Where was the director of Ferrowind born?"
    assert garbled_names("director of Ferrowind?", question) == []
    assert garbled_names("Where was #1 born?", question) == []
    assert garbled_names("Where was Ilse Marrow born?", question, ["Ilse Marrow"]) == []


def test_a_garbled_split_is_asked_whole() -> None:
    question = "陆海川负责的工单是哪天完成的？"
    subs = [SubQuestion(id=1, question="海川负责的工单？"),
            SubQuestion(id=2, question="#1是哪天完成的？", depends_on=1)]  # fmt: skip
    kept, bad = keep_names(subs, question)
    assert [s.question for s in kept] == [question] and bad == ["海川"]
    fine = [SubQuestion(id=1, question="陆海川负责的工单？")]
    assert keep_names(fine, question) == (fine, [])


def _questions() -> list[str]:
    files = sorted((SHARED / "dev").glob("*.questions.jsonl"))
    files += sorted(SHARED.glob("kb-*/questions.jsonl"))
    return [json.loads(line)["question"] for f in files for line in f.open() if line.strip()]


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/eval is not here")
def test_no_dev_question_is_decomposed_with_a_garbled_name() -> None:
    garbled = []
    for question in _questions():
        subs, _ = keep_names(decompose_question(question), question)
        garbled += [(question, s.question) for s in subs if garbled_names(s.question, question)]
    assert garbled == []
