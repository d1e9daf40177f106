"""Arithmetic and unit conversions answered without a model or documents, exactly and with
the rule shown; anything that also names something else goes to the documents."""

from __future__ import annotations

import pytest

from graph.offline import OfflineReasoner
from graph.offline.calc import amount_of, compute
from graph.offline.route import direct_reply, is_simple


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How many seconds are in two and a half minutes?", "150 seconds"),
        ("How many hours are there in 3 days?", "72 hours"),
        ("convert 1.5 km to m", "1500 m"),
        ("按十进制，2 TB 等于多少 GB？", "2000 GB"),
        ("4 GB 等于多少 MB？", "4096 MB"),
        ("一个半小时是多少分钟？", "90 分钟"),
        ("What is (17 + 4) * 3?", "63"),
        ("2^10 =", "1024"),
    ],
)
def test_a_whole_calculation_is_answered_exactly(question: str, answer: str) -> None:
    result = compute(question)
    assert result is not None and result.answer == answer
    assert result.working.endswith(answer) or answer in result.working


@pytest.mark.parametrize(
    "question",
    [
        "How many hours does the warranty last?",  # a fact of the documents
        "按合同，3小时等于多少分钟？",  # names the contract: the documents may say otherwise
        "How many minutes in three and a frog hours?",
        "3 kg 等于多少分钟？",  # no conversion between kinds
        "What is 2^1000?",  # too large to be worth computing
        "1 / 0",
    ],
)
def test_anything_else_is_not_a_calculation(question: str) -> None:
    assert compute(question) is None


def test_number_words_in_either_language() -> None:
    assert amount_of("three and a half") == 3.5
    assert amount_of("two hundred fifty") == 250
    assert amount_of("十二") == 12 and amount_of("二十") == 20 and amount_of("两个半") == 2.5
    assert amount_of("several") is None


def test_a_calculation_is_routed_past_the_documents_and_shows_its_rule() -> None:
    question = "按二进制换算，3 GB 等于多少 MB？"
    assert is_simple(question) is not None
    decision, _ = OfflineReasoner().route(question, [])
    assert decision.route == "simple"
    reply = direct_reply(question)
    assert reply.startswith("答案：3072 MB") and "二进制" in reply
    assert direct_reply("How many days are in 2 weeks?").startswith("Answer: 14 days")
