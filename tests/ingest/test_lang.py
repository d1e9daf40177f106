"""The one CJK class and zh/en rule (ingest.lang), and that every module uses the same ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graph import text as tx
from hopwise.evaluation.scoring import answer_tokens
from ingest import lang
from ingest.chunker import count_tokens
from ingest.parse import join_lines

ROOT = Path(__file__).resolve().parents[2]

EXT_A, UNIFIED, COMPAT, EXT_B, ZERO = "㐀", "中", "豈", "\U00020000", "〇"
NOT_HAN = ["あ", "ア", "한", "。", "，", "A", "é", "䷀", "1", "·"]  # ䷀: a hexagram, not Han


def test_the_cjk_class_covers_every_han_block_and_nothing_else() -> None:
    for ch in (EXT_A, "䶵", UNIFIED, "鿿", COMPAT, EXT_B, "\U0002a6d6", ZERO):
        assert lang.CJK_RE.fullmatch(ch) and lang.has_cjk(f"x{ch}y"), hex(ord(ch))
    for ch in NOT_HAN:
        assert not lang.has_cjk(ch), hex(ord(ch))
    assert tx.CJK is lang.CJK and tx.language_of is lang.language_of


@pytest.mark.parametrize("ch", [EXT_A, UNIFIED, COMPAT, EXT_B])
def test_tokens_line_joins_and_answer_scoring_treat_every_han_block_alike(ch: str) -> None:
    assert count_tokens(ch * 3) == 3  # one token per character
    assert join_lines(f"甲{ch}\n{ch}乙") == f"甲{ch}{ch}乙"  # no space between CJK lines
    assert answer_tokens(f"{ch}{ch} x1") == [ch, ch, "x1"]
    assert "".join(tx.words(f"the {ch}{ch} file")) == f"the{ch}{ch}file"  # Han goes to jieba


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # pure Chinese, simplified or traditional, with or without punctuation
        ("合同的违约金是多少？", "zh"),
        ("違約金是多少？", "zh"),
        ("这份合同什么时候生效", "zh"),
        # pure English, and text with no letters at all
        ("When does the contract take effect?", "en"),
        ("", "en"),
        ("12345 67", "en"),
        # a Chinese question naming English products: names and codes weigh little
        ("Starfield Cloud Pro 的退款期限？", "zh"),
        ("Nimbus-7 和 Nimbus-9 哪个更贵", "zh"),
        ("X100 和 X200 的价格差多少？", "zh"),
        ("Acme 的 penalty 是多少？", "zh"),
        ("Hopwise 怎么上传 PDF 文件？", "zh"),
        # an English question naming a Chinese company or term stays English
        ("When was 华为 founded?", "en"),
        ("Who is the legal representative of 深圳蓝鲸数据有限公司?", "en"),
        ("What does 违约金 mean in the Acme contract?", "en"),
        ("What is 苟太后?", "zh"),  # a third of the letters: mostly the Chinese name
        # kana mean Japanese, unless they are inside a quoted title
        ("違約金はいくらですか？", "en"),
        ("《ひかりのまち》的作者是谁？", "zh"),
        # URLs and e-mail addresses are not words
        ("文档地址：https://docs.example.com/hopwise/getting-started/upload", "zh"),
        ("请发邮件到 helpdesk.team@example.com 询问", "zh"),
        # Extension A and compatibility ideographs count like any Han character
        (f"{EXT_A}{COMPAT}{EXT_B}是什么", "zh"),
    ],
)
def test_language_rule(text: str, expected: str) -> None:
    assert lang.language_of(text) == expected


def test_no_module_keeps_its_own_cjk_range_or_placeholder_pattern() -> None:
    """ingest.lang owns the Han ranges, graph.text the #k pattern; a copy would drift."""
    copies = re.compile(r"\\u4e00|\\u3400|\\u9fff|\\uf900|#\(\\d\+\)|#\\d\+")
    allowed = {"ingest/lang.py", "graph/text.py"}
    found = [
        str(path.relative_to(ROOT))
        for package in ("graph", "ingest", "hopwise", "ui")
        for path in sorted((ROOT / package).rglob("*.py"))
        if str(path.relative_to(ROOT)) not in allowed and copies.search(path.read_text())
    ]
    assert found == []
