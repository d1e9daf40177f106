"""Language detection, tokenising, sentence splitting and entity extraction (zh and en)."""

from __future__ import annotations

from graph import text as tx


def test_detect_language() -> None:
    assert tx.detect_language("Who directed Silver Harbor?") == "en"
    assert tx.detect_language("香港第六任行政长官选举时间及结果") == "zh"
    assert tx.detect_language("What is 苟太后?") == "zh"
    assert tx.detect_language("Hopwise 怎么上传 PDF 文件？") == "zh"


def test_tokenize_english_drops_stopwords_and_stems() -> None:
    assert tx.tokenize("Who is the father of Empress Wang's husband?") == [
        "father", "empress", "wang", "husband",
    ]  # fmt: skip
    assert tx.stem("films") == tx.stem("film")
    assert "director" not in tx.EN_STOPWORDS


def test_tokenize_chinese_uses_jieba() -> None:
    tokens = tx.tokenize("香港第六任行政长官选举时间及结果")
    assert "行政长官" in tokens and "选举" in tokens
    assert "及" not in tokens


def test_split_sentences_chinese_and_english() -> None:
    text = "He served in the U.S. Army. Dr. Smith agreed! 合同于五月生效。违约金为10%；付款30天"
    assert tx.split_sentences(text) == [
        "He served in the U.S. Army.",
        "Dr. Smith agreed!",
        "合同于五月生效。",
        "违约金为10%；",
        "付款30天",
    ]


def test_capitalized_spans_keep_connectors_and_titles() -> None:
    spans = tx.capitalized_spans("Which film came out first, The Love Route or Engagement Ring?")
    assert spans == ["The Love Route", "Engagement Ring"]
    assert tx.capitalized_spans("the state where the Battle of Mine Creek was fought") == [
        "Battle of Mine Creek"
    ]
    assert "Julian P. Kanter" in tx.capitalized_spans("the school that holds the Julian P. Kanter")


def test_extract_entities_quoted_years_and_cjk_terms() -> None:
    ents = tx.extract_entities('In 1987 the song "Hello Again" was a hit for Ann Lee.')
    assert ents[:3] == ["Hello Again", "Ann Lee", "1987"] or set(ents) >= {
        "Hello Again", "Ann Lee", "1987"
    }  # fmt: skip
    zh = tx.extract_entities("西安杂技团在新加坡演出《天鹅湖》")
    assert zh[0] == "天鹅湖" and "新加坡" in zh


def test_with_parenthetical() -> None:
    assert tx.with_parenthetical("Midnight Court", "director of Midnight Court (Film)") == (
        "Midnight Court (Film)"
    )


def test_coverage_terms_glue_one_character_fragments() -> None:
    assert tx.coverage_terms("供货方的法定代表人是谁？") == ["供货方", "法定代表人"]
    assert tx.coverage_terms("供货方是谁？") == ["供货方"]  # jieba: '供货' + '方是'
    assert "首都" in tx.coverage_terms("北京是中国的首都吗")  # a dictionary word stays whole
    assert tx.term_in("法定代表人", "法定代表人为李明远", {"法定代表", "人为"})


def test_cjk_org_names_start_after_the_verb_or_link_word() -> None:
    text = "本合同的供货方为深圳星河电子有限公司，采购方为北京云帆科技有限公司。提交深圳国际仲裁院仲裁。"
    assert tx.cjk_org_names(text) == [
        "深圳星河电子有限公司",
        "北京云帆科技有限公司",
        "深圳国际仲裁院",
    ]


def test_a_heading_ending_in_an_abbreviation_is_not_glued_to_the_next_paragraph() -> None:
    text = "Cloudsail Technology Co.\n\nCloudsail Technology Co. was founded in 2015. It grew."
    assert tx.split_sentences(text) == [
        "Cloudsail Technology Co.",
        "Cloudsail Technology Co. was founded in 2015.",
        "It grew.",
    ]


def test_coverage_terms_drop_a_preposition_jieba_glued_to_a_name() -> None:
    assert tx.coverage_terms("对嘉德鑫科违法加价的处罚")[0] == "嘉德鑫科"
