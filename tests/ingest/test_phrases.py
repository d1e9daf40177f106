"""The phrase keys of a chunk are read at ingest with rjieba's words and jieba's dictionary
tags: the same pairs, and so the same names, as jieba.posseg without its HMM (the extractor's
version, PHRASER, is part of the index lineage and did not change)."""

from __future__ import annotations

import re

import jieba.posseg as posseg
import pytest

from ingest import phrases
from ingest.lang import CJK

TEXT = (
    "华东精密仪器有限公司的采购经理王建国于2027年3月在杭州签署了编号HX2027-15的补充协议。"
    "週報與協調會議由李娜主持，记录交给张伟。上海交通大学和北京协和医院的代表参加了会议，"
    "会后双方在苏州工业园区管理委员会办理了备案。abc123 型号的设备由宁波港务局验收。"
)


def reference_pairs(segment: str) -> tuple[tuple[str, str], ...]:
    return tuple((p.word, p.flag) for p in posseg.cut(segment, HMM=False))


def reference_kinds(text: str) -> dict[str, str]:
    """The name reading over jieba.posseg's pairs, as it was before the fast path."""
    seen: dict[str, str] = {}
    for segment in re.findall(f"[{CJK}]+", text):
        pairs = reference_pairs(segment)
        for i, (word, flag) in enumerate(pairs):
            nxt = pairs[i + 1] if i + 1 < len(pairs) else ("", "x")
            if flag == "nr" and len(word) == 1 and 1 <= len(nxt[0]) <= 2 and nxt[1][:1] in "nav":
                seen.setdefault(word + nxt[0], "person")
            elif flag in phrases._NAME_FLAGS and len(word) >= 2:
                seen.setdefault(word, phrases._KINDS.get(flag, "name"))
    return seen


@pytest.mark.parametrize("segment", re.findall(f"[{CJK}A-Za-z0-9]+", TEXT))
def test_ingest_tagging_is_jieba_posseg_without_the_hmm(segment: str) -> None:
    assert phrases._tagged(segment, False) == reference_pairs(segment)


def test_names_read_at_ingest_are_the_ones_jieba_posseg_gives() -> None:
    kinds = phrases.cjk_name_kinds(TEXT, hmm=False)
    assert kinds == reference_kinds(TEXT)
    assert kinds.get("杭州") == "place" and kinds.get("李娜") == "person"


def test_a_chunks_phrases_keep_organisations_and_people_whole() -> None:
    keys = phrases.chunk_phrases("采购记录", "第一章 > 合同", TEXT)
    assert "华东精密仪器有限公司" in keys
    assert "王建国" in keys or "李娜" in keys
    assert "苏州工业园区管理委员会" in keys


def test_an_initials_full_stop_does_not_cut_a_name_in_two() -> None:
    """'Ansel T. Marrow' is one name, not 'Ansel T.' and 'Marrow'; 'U.S.' still ends a sentence."""
    names = phrases.text_phrases(
        "The Salt Road is a 1931 film directed by Ansel T. Marrow, with Ida Lorne."
    )
    assert "Ansel T. Marrow" in names and "Ansel T." not in names
    assert phrases.text_phrases("She moved to the U.S. The Harbour Board hired her.") == [
        "The Harbour Board"
    ]
    # a sentence's first word after an initial still starts a sentence; a leading initial too
    assert phrases.text_phrases("He served in Unit K. He later moved to Lomhed.") == [
        "Unit K.",
        "Lomhed",
    ]
    assert "J. R. Marrow" in phrases.text_phrases("J. R. Marrow wrote the Salt Road survey.")
