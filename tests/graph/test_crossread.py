"""A question asking a date or an amount about a passage in the other language: the unit
nearest in meaning is quoted verbatim when it clearly leads and shares a language-free token
with the question; otherwise the answer still says the documents do not say it."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from graph.offline import crossread as xr
from graph.protocols import Similarity
from tests.fakes.rules import RuleReader
from tests.graph.offline_app import evidence

PLANS = (  # its document's title names the product (the table itself does not)
    "Item | Basic | Premium\n"
    "Storage | 50 GB | 200 GB\n"
    "Upload limit | 20 files per hour | 80 files per hour\n"
    "Support hours | 9:00-18:00 | 24 hours\n"
    "Available from | 2031-01-10 | 2031-03-01"
)


def scripted(scores: dict[str, float]) -> Similarity:
    """Similarity that gives each text the score of the first key it contains (0.5 if none)."""

    def similarity(query: str, texts: Sequence[str]) -> list[float]:
        return [next((s for k, s in scores.items() if k in t), 0.5) for t in texts]

    return similarity


def first_line(question: str, similarity: Similarity | None, *texts: str) -> str:
    items = [evidence(i + 1, t, f"lumo-{i + 1}.md") for i, t in enumerate(texts)]
    parts = RuleReader(similarity=similarity).answer(question, items, [])
    return "".join(p for p in parts if isinstance(p, str)).splitlines()[0]


def test_the_row_nearest_in_meaning_is_quoted_never_stated() -> None:
    near = scripted({"Upload limit": 0.9, "Storage": 0.86, "Support": 0.85})
    line = first_line("Lumo 高级版每小时最多能上传多少个文件？", near, PLANS)
    assert (
        line
        == "文档原文：“Item: Upload limit; Basic: 20 files per hour; Premium: 80 files per hour” [1]"
    )


def test_no_quote_when_the_lead_is_too_small_or_there_is_no_meaning_to_go_by() -> None:
    close = scripted({"Upload limit": 0.9, "Storage": 0.89, "Support": 0.85})
    question = "Lumo 高级版每小时最多能上传多少个文件？"
    assert first_line(question, close, PLANS).startswith("文档中没有说明")
    assert first_line(question, None, PLANS).startswith("文档中没有说明")


def test_only_dates_and_amounts_and_only_with_a_shared_token() -> None:
    near = scripted({"Upload limit": 0.9})
    items = [evidence(1, PLANS, "lumo-plans.md")]
    assert xr.read_across("Lumo 高级版由谁负责？", items, "person", near) is None  # not typed
    # nothing language-free in common: no code, number or Latin word of the question
    assert xr.read_across("高级版每小时最多能上传多少个文件？", items, "number", near) is None
    found = xr.read_across("Lumo 高级版每小时最多能上传多少个文件？", items, "number", near)
    assert found is not None and found.shown().startswith("Item: Upload limit")


def test_the_question_s_own_language_is_left_to_the_reader() -> None:
    zh = "Lumo 套餐\n\n项目 | 基础版 | 高级版\n上传上限 | 每小时 20 个 | 每小时 80 个"
    items = [evidence(1, zh, "套餐.md"), evidence(2, PLANS, "lumo-plans.md")]
    found = xr.candidates("Lumo 高级版每小时最多能上传多少个文件？", items, "number")
    assert {u.n for u in found} == {2}  # the Chinese rows are the reader's to judge


def test_a_value_the_question_gives_is_no_answer() -> None:
    items = [evidence(1, "Item | Premium\nUpload limit | 80 files per hour", "lumo.md")]
    near = scripted({"Upload limit": 0.9})
    assert xr.read_across("Lumo 高级版每小时能上传 80 个文件吗？", items, "number", near) is None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Lumo 高级版每小时最多能上传多少个文件？", "Upload limit"),
        ("Lumo 基础版的存储空间有多大？", "Storage"),
    ],
)
def test_with_the_built_in_embedder(question: str, expected: str) -> None:
    from hopwise.app import meaning_similarity
    from ingest.builtin_embedder import load_builtin_embedder

    similarity = meaning_similarity(SimpleNamespace(embedder=load_builtin_embedder(threads=1)))
    line = first_line(question, similarity, PLANS)
    assert line.startswith("文档原文：“Item: " + expected), line


def test_a_line_in_the_question_s_language_without_the_asked_value_gives_way() -> None:
    intro = "Lumo 简介\n\nLumo 高级版将在明年春季开始提供。"
    near = scripted({"Available from": 0.9, "Storage": 0.86, "Support": 0.85})
    question = "Lumo 高级版从哪天开始提供？"
    assert first_line(question, None, intro, PLANS).startswith("文档原文：“Lumo 高级版将在")
    line = first_line(question, near, intro, PLANS)
    assert line.startswith("文档原文：“Item: Available from;") and line.endswith("[2]")
