"""Chunking: sizes, overlap, sentence and table-row integrity, sections, records."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ingest.chunker import chunk_document, count_tokens
from ingest.models import CHUNKER_VERSION, PARSER_VERSION, Chunk, ParsedDocument
from ingest.parse import parse_bytes, parse_file, parser_lineage
from tests.fakes import docs

ZH_SENTENCES = [
    "甲方应在三十日内交付全部货物。",
    "逾期交付的，乙方有权要求支付违约金！",
    "违约金按每周合同金额的百分之二计算；",
    "累计违约金不超过合同总额的百分之十。",
    "双方发生争议时应当友好协商解决？",
    "协商不成的，提交上海仲裁委员会仲裁……",
]
EN_SENTENCES = [
    "The supplier shall deliver all goods within thirty days.",
    "Late delivery entitles the buyer to a penalty!",
    "Is the penalty capped at ten percent of the order value?",
    "Disputes go to arbitration in Shanghai.",
]
ZH_ENDS = tuple("。！？；…")
EN_ENDS = tuple(".!?")


def _doc(markdown: str, name: str = "doc.md") -> ParsedDocument:
    return parse_bytes(markdown.encode("utf-8"), name)


def _chunks(doc: ParsedDocument, **kw) -> list[Chunk]:
    args = {"doc_id": "doc-x", "doc_version": 3, "groups": ["all"], "checksum": "abc"} | kw
    return chunk_document(doc, **args)


def _zh_text(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(ZH_SENTENCES) for _ in range(n))


def _en_text(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(EN_SENTENCES) for _ in range(n))


def test_count_tokens_cjk_per_char_and_words() -> None:
    assert count_tokens("违约金") == 3
    assert count_tokens("late delivery penalty") == 3
    assert count_tokens("合同abc, 10%") == 2 + 1 + 1 + 1 + 1
    assert count_tokens("") == 0
    assert count_tokens("x" * 160) == 10  # a blob without spaces still has a bounded size


def test_chinese_chunks_end_on_sentence_boundaries_near_target_with_overlap() -> None:
    doc = _doc("# 合同条款\n\n" + _zh_text(400))
    chunks = _chunks(doc, chunk_tokens=300, overlap_tokens=40)
    assert len(chunks) >= 8
    for chunk in chunks:
        assert doc.text[chunk.start_char : chunk.end_char] == chunk.text
        assert chunk.text.endswith(ZH_ENDS), chunk.text[-10:]
        assert count_tokens(chunk.text) <= 300 + 8  # the glued heading may add a few tokens
    for chunk in chunks[:-1]:
        assert count_tokens(chunk.text) >= 0.8 * 300
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert nxt.start_char < prev.end_char, "neighbours should overlap"
        overlap = doc.text[nxt.start_char : prev.end_char]
        assert 0 < count_tokens(overlap) <= 40
        # the overlap starts on a sentence boundary too
        assert doc.text[nxt.start_char - 1] in "。！？；…\n"


def test_english_chunks_end_on_sentence_boundaries() -> None:
    doc = _doc("# Terms\n\n" + _en_text(300))
    chunks = _chunks(doc, chunk_tokens=200, overlap_tokens=20)
    assert len(chunks) >= 5
    for chunk in chunks:
        assert chunk.text.endswith(EN_ENDS)
        assert count_tokens(chunk.text) <= 205
        assert chunk.text[0].isupper() or chunk.text.startswith("Terms")


def test_table_rows_are_never_cut() -> None:
    rows = [f"| 产品{i} | 单价 {i}.5 元。 | note {i}. ok |" for i in range(300)]
    markdown = "# 价格表\n\n| 产品 | 单价 | 备注 |\n|---|---|---|\n" + "\n".join(rows)
    doc = _doc(markdown)
    whole_rows = {b.text for b in doc.blocks if b.kind == "table"}
    chunks = _chunks(doc, chunk_tokens=120, overlap_tokens=15)
    assert len(chunks) > 5
    for chunk in chunks:
        lines = chunk.text.split("\n")
        body = lines[2:] if chunk.text.startswith("价格表") else lines
        for line in body:
            assert line in whole_rows, line


def test_sections_split_first_and_headings_never_stand_alone() -> None:
    markdown = (
        "# Guide\n\n## Install\n\n"
        + _en_text(5, seed=1)
        + "\n\n## Upgrade\n\n"
        + _en_text(120, seed=2)
        + "\n\n## 卸载\n\n"
        + _zh_text(3, seed=3)
    )
    doc = _doc(markdown)
    chunks = _chunks(doc, chunk_tokens=150, overlap_tokens=10)
    paths = [c.section_path for c in chunks]
    assert paths[0] == "Guide > Install"
    assert chunks[0].text.startswith("Guide\n\nInstall\n\n")
    assert paths[-1] == "Guide > 卸载"
    assert chunks[-1].text.startswith("卸载\n\n")
    assert paths.count("Guide > Install") == 1 and paths.count("Guide > Upgrade") > 2
    headings = {b.text for b in doc.blocks if b.kind == "heading"}
    assert not any(c.text in headings for c in chunks)
    # no chunk mixes two sections: each lies inside its section's span
    for chunk in chunks:
        inside = [b for b in doc.blocks if chunk.start_char <= b.start_char < chunk.end_char]
        assert {" > ".join(b.section_path) for b in inside if b.kind != "heading"} <= {
            chunk.section_path
        }


def test_records_carry_the_full_lineage(tmp_path: Path) -> None:
    doc = parse_file(docs.make_pdf(tmp_path))
    chunks = _chunks(doc, chunk_tokens=30, overlap_tokens=5, groups=["hr", "legal"])
    assert [c.chunk_id for c in chunks] == [f"doc-x-v3-{i:05d}" for i in range(len(chunks))]
    first = chunks[0]
    assert (first.doc_id, first.doc_version, first.checksum) == ("doc-x", 3, "abc")
    assert (first.title, first.source) == ("Supply Manual", "manual.pdf")
    assert first.groups == ["hr", "legal"]
    assert first.created_at > 0
    assert (first.parser_version, first.chunker_version) == (
        parser_lineage("manual.pdf"),
        CHUNKER_VERSION,
    )
    assert first.parser_version.startswith(PARSER_VERSION) and "pypdfium2-" in first.parser_version
    pages = [c.page for c in chunks]
    assert pages == sorted(pages) and pages[0] == 1 and pages[-1] == 3
    warranty = next(c for c in chunks if "warranty lasts" in c.text)
    assert warranty.page == 3


def test_pdf_chunks_follow_pages_and_bookmarks(tmp_path: Path) -> None:
    doc = parse_file(docs.make_pdf_with_bookmarks(tmp_path))
    chunks = _chunks(doc)
    assert [(c.page, c.section_path) for c in chunks] == [
        (1, "1 Delivery"),
        (2, "1 Delivery"),
        (2, "2 Penalties"),
        (2, "2 Penalties > 2.1 Caps"),
        (3, "Annex"),
    ]
    assert chunks[2].text.startswith("2 Penalties\n\nPenalties apply")


def test_chunking_is_deterministic_apart_from_timestamp() -> None:
    doc = _doc("# A\n\n" + _zh_text(100))
    first = [c.model_dump(exclude={"created_at"}) for c in _chunks(doc, chunk_tokens=100)]
    again = [c.model_dump(exclude={"created_at"}) for c in _chunks(doc, chunk_tokens=100)]
    assert first == again


def test_overlong_sentence_is_cut_to_a_bounded_size() -> None:
    doc = _doc("没有标点的长句" * 400 + "。")
    chunks = _chunks(doc, chunk_tokens=100, overlap_tokens=0)
    assert all(count_tokens(c.text) <= 100 for c in chunks)
    assert "".join(c.text for c in chunks) == doc.text


def test_small_document_is_one_chunk() -> None:
    doc = _doc("# 标题\n\n一句话。")
    chunks = _chunks(doc)
    assert len(chunks) == 1
    assert chunks[0].text == "标题\n\n一句话。"
    assert chunks[0].section_path == "标题"


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(ZH_SENTENCES + EN_SENTENCES),
            st.sampled_from(["\n\n## 小节\n\n", "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n", "\n"]),
            st.text(min_size=1, max_size=30),
        ),
        min_size=1,
        max_size=60,
    ),
    st.integers(min_value=10, max_value=80),
)
@example(parts=[":0:;", "0:0:;", "0:0:;"], size=10)  # periodic text: pieces must be located
def test_chunks_are_verbatim_spans_covering_the_text(parts: list[str], size: int) -> None:
    text = "".join(parts)
    if not text.strip():
        return
    try:
        doc = _doc(text)
    except Exception:  # empty after parsing (e.g. only control characters)
        return
    chunks = _chunks(doc, chunk_tokens=size, overlap_tokens=size // 5)
    covered = 0
    for chunk in chunks:
        assert doc.text[chunk.start_char : chunk.end_char] == chunk.text
        assert chunk.text.strip() == chunk.text != ""
    # every non-space character of the document is in some chunk
    spans = sorted((c.start_char, c.end_char) for c in chunks)
    for start, end in spans:
        assert not doc.text[covered:start].strip()
        covered = max(covered, end)
    assert not doc.text[covered:].strip()
