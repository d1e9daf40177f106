"""The offline reasoner: routing, decomposition, bridging, extraction, verdicts and answers."""

from __future__ import annotations

from graph.offline import OfflineReasoner, decompose_question
from graph.protocols import EvidenceItem, HopView, Usage
from ingest.models import Hit

R = OfflineReasoner()


def _hit(chunk_id: str, title: str, text: str, rank: int = 1) -> Hit:
    return Hit(chunk_id=chunk_id, doc_id=chunk_id, title=title, text=text, score=10.0 / rank,
               rank=rank)  # fmt: skip


def _item(n: int, hit: Hit, sentences: list[str] | None = None) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=hit.chunk_id, title=hit.title, text=hit.text,
                        sentences=sentences or [])  # fmt: skip


def _subs(question: str) -> list[tuple[str, int | None]]:
    return [(s.question, s.depends_on) for s in decompose_question(question)]


# ---------------------------------------------------------------- route


def test_route_greetings_are_simple_and_questions_complex() -> None:
    for greeting in ("hi", "Hello there!", "谢谢", "你好！"):
        decision, usage = R.route(greeting, [])
        assert decision.route == "simple", greeting
        assert usage.mode == "offline" and usage.llm_calls == 0
    for question in ("What is the notice period?", "合同的违约金是多少？", "Acme?"):
        assert R.route(question, [])[0].route == "complex", question


def test_route_rewrites_follow_ups_from_history() -> None:
    history = [
        {"role": "user", "content": "What is the payment term of the Acme contract?"},
        {"role": "assistant", "content": "30 days [1]."},
    ]
    decision, _ = R.route("and its penalty?", history)
    assert "Acme" in decision.standalone_question and "penalty" in decision.standalone_question
    zh_history = [{"role": "user", "content": "《星河合同》的付款期限是多久？"}]
    decision, _ = R.route("那它的违约金呢？", zh_history)
    assert decision.standalone_question.startswith("星河合同")
    assert "违约金" in decision.standalone_question
    standalone = R.route("Who signed the Orion lease?", history)[0].standalone_question
    assert standalone == "Who signed the Orion lease?"


# ------------------------------------------------------------ decompose


def test_english_comparison_splits_per_entity() -> None:
    subs = _subs("Which film came out first, The Love Route or Engagement Ring?")
    assert len(subs) == 2 and all(dep is None for _, dep in subs)
    assert "The Love Route" in subs[0][0] and "Engagement Ring" in subs[1][0]
    subs = _subs("Who was born earlier, Ari Vatanen or Henrik Svensen?")
    assert subs == [("Ari Vatanen born", None), ("Henrik Svensen born", None)]


def test_comparison_of_roles_looks_up_each_role_first() -> None:
    subs = _subs("Which film has the director who was born later, Silver Harbor or Night Train?")
    assert subs == [
        ("director of Silver Harbor?", None),
        ("director of Night Train?", None),
        ("#1 born", 1),
        ("#2 born", 2),
    ]


def test_nested_chains_become_ordered_hops_with_placeholders() -> None:
    assert _subs("Who is the father of the director of Silver Harbor?") == [
        ("director of Silver Harbor?", None),
        ("father of #1?", 1),
    ]
    assert _subs("When did the sports team that Craig Westcarr played for win the fa cup?") == [
        ("sports team that Craig Westcarr played for?", None),
        ("When did #1 win the fa cup?", 1),
    ]
    assert _subs("What is the place of birth of Gilberto Hernández Guerrero's wife?") == [
        ("wife of Gilberto Hernández Guerrero?", None),
        ("place of birth of #1?", 1),
    ]
    three = _subs("Who is the mother of the founder of the company that makes the Orion X2?")
    assert [dep for _, dep in three] == [None, 1, 2]
    assert "Orion X2" in three[0][0] and three[2][0].startswith("mother of #2")


def test_a_relative_clause_keeps_its_own_verb() -> None:
    """'the town where the founder of X died': 'died' closes 'town where #1', and each
    relative clause of a longer chain takes the verb group that follows it."""
    assert _subs("When did the town where the founder of Orion Mills died get a railway?") == [
        ("founder of Orion Mills?", None),
        ("town where #1 died?", 1),
        ("When did #2 get a railway?", 2),
    ]
    four = _subs(
        "Which lake lies near the county where the largest town in the province where "
        "Radio KLMX can be found is located?"
    )
    assert four == [
        ("province where Radio KLMX can be found?", None),
        ("largest town in #1?", 1),
        ("county where #2 is located?", 2),
        ("Which lake lies near #3?", 3),
    ]


def test_chinese_comparisons_conjunctions_and_chains() -> None:
    assert _subs("苹果公司和微软哪个成立更早？") == [
        ("苹果公司成立早？", None),
        ("微软成立早？", None),
    ]
    assert _subs("合同A和合同B的违约金分别是多少？") == [
        ("合同A的违约金是多少？", None),
        ("合同B的违约金是多少？", None),
    ]
    assert _subs("谁是《银港》导演的父亲？") == [("《银港》导演", None), ("#1的父亲？", 1)]
    assert _subs("张三的母亲是谁？") == [("张三的母亲是谁？", None)]


def test_single_hop_question_stays_whole() -> None:
    assert _subs("What county is Icknield Walk First School located in?") == [
        ("What county is Icknield Walk First School located in?", None)
    ]


# --------------------------------------------------------------- bridge

SILVER = _hit(
    "c1", "Silver Harbor",
    "Silver Harbor is a 1987 drama film directed by Mara Ellison and starring Tom Reed. "
    "It was shot in Portugal.",
)  # fmt: skip
OTHER = _hit("c2", "Night Train", "Night Train is a 1990 thriller directed by Paul Denk.", 2)
MARA = _hit("c3", "Mara Ellison", "Mara Ellison (born 1950) is the daughter of Tomas Ellison.", 3)


def test_bridge_fills_the_entity_the_best_evidence_names() -> None:
    hop = HopView(sub_question="director of Silver Harbor?", query="director of Silver Harbor?",
                  new_chunk_ids=["c1", "c2"], top_hits=[SILVER, OTHER])  # fmt: skip
    evidence = [_item(1, SILVER), _item(2, OTHER)]
    query, usage = R.bridge("father of #1?", [hop], evidence)
    assert usage.mode == "offline"
    assert query.startswith("father of Mara Ellison")
    assert "#1" not in query and "Paul Denk" not in query


def test_bridge_prefers_a_linked_entity_with_its_own_page() -> None:
    hop = HopView(sub_question="director of Silver Harbor?", query="director of Silver Harbor?",
                  new_chunk_ids=["c1", "c3"], top_hits=[SILVER, MARA])  # fmt: skip
    query, _ = R.bridge("When was #1 born?", [hop], [_item(1, SILVER), _item(2, MARA)])
    assert query.split(" born")[0].startswith("When was Mara Ellison")


def test_a_candidate_named_with_the_relation_word_gets_no_credit_for_it() -> None:
    """'state' inside 'Lakeview State College' is not the hop's relation: the state the
    school is located in wins."""
    from graph.offline import bridge_candidates

    school = _hit("s1", "Brookfield-Oak High School",
                  "Brookfield-Oak High School is a public school located in Brookfield, Ohio. "
                  "Its graduates often go on to Lakeview State College.")  # fmt: skip
    hop = HopView(sub_question="state where Brookfield-Oak High is?",
                  query="state where Brookfield-Oak High is?", top_hits=[school])  # fmt: skip
    assert bridge_candidates(hop, [_item(1, school)])[0] == "Ohio"


def test_a_lowercase_hop_takes_the_page_its_query_spells_out_as_anchor() -> None:
    """'who plays the pilot in skyline rising' names no capitalised entity; the retrieved page
    titled 'Skyline Rising' is what the hop is about, so its cast outranks another page's."""
    from graph.offline import bridge_candidates

    film = _hit("f1", "Skyline Rising (film)",
                "Skyline Rising is a 2015 drama film. Dana Kell plays the pilot.")  # fmt: skip
    other = _hit("f2", "Night Pilots",
                 "Rob Vance plays the pilot in Night Pilots. Rob Vance plays the pilot in its "
                 "sequel. Rob Vance plays the pilot on stage.", 2)  # fmt: skip
    hop = HopView(sub_question="actor who plays the pilot in skyline rising?",
                  query="actor who plays the pilot in skyline rising?",
                  top_hits=[film, other])  # fmt: skip
    assert bridge_candidates(hop, [_item(1, film), _item(2, other)])[0] == "Dana Kell"


def test_bridge_in_chinese_picks_the_named_person() -> None:
    film = _hit(
        "z1", "银港", "《银港》是2019年上映的剧情片，由李安执导，王菲主演。影片在台湾拍摄。"
    )
    other = _hit("z2", "夜车", "《夜车》是一部由张三执导的电影。", 2)
    hop = HopView(sub_question="《银港》导演", query="《银港》导演", top_hits=[film, other])
    query, _ = R.bridge("#1的父亲？", [hop], [_item(1, film), _item(2, other)])
    assert query.startswith("李安") and query.endswith("的父亲？")
    assert "张三" not in query and "剧情片" not in query


# -------------------------------------------------------------- extract


def test_extract_copies_relevant_sentences_verbatim_with_chunk_ids() -> None:
    sentences, usage = R.extract("director of Silver Harbor?", [SILVER, OTHER, MARA])
    assert usage.mode == "offline"
    assert [s.chunk_id for s in sentences] == ["c1"]  # the other hits do not bear on it
    assert sentences[0].text == (
        "Silver Harbor is a 1987 drama film directed by Mara Ellison and starring Tom Reed."
    )


# ------------------------------------------------------ plan / evaluate


def test_plan_retrieves_while_sub_questions_remain() -> None:
    decision, _ = R.plan("q", ["father of #1?"], [], [])
    assert decision.action == "retrieve"
    decision, _ = R.plan("q", [], [], [])
    assert decision.action == "evaluate"


def test_evaluate_judges_term_coverage() -> None:
    question = "Who directed Silver Harbor?"
    verdict, _ = R.evaluate(question, [_item(1, SILVER)])
    assert verdict.enough and not verdict.missing
    verdict, _ = R.evaluate("Who composed the music of Silver Harbor?", [_item(1, OTHER)])
    assert not verdict.enough
    assert verdict.missing and verdict.web_query and "Silver Harbor" in verdict.web_query
    verdict, _ = R.evaluate(question, [])
    assert not verdict.enough


# --------------------------------------------------------------- answer


def _text(pieces: list[object]) -> str:
    assert isinstance(pieces[-1], Usage) and pieces[-1].mode == "offline"
    return "".join(p for p in pieces[:-1] if isinstance(p, str))


def test_answer_is_extractive_and_cites_the_right_chunk() -> None:
    evidence = [_item(1, OTHER), _item(2, SILVER)]
    text = _text(list(R.answer("Who directed Silver Harbor?", evidence, [])))
    assert "Offline mode" in text
    first = text.splitlines()[1]
    assert "directed by Mara Ellison" in first and first.endswith("[2]")


def test_answer_skips_heading_lines() -> None:
    doc = _hit(
        "h1", "Silver Harbor", "Silver Harbor\n\nSilver Harbor was directed by Mara Ellison."
    )
    text = _text(list(R.answer("Who directed Silver Harbor?", [_item(1, doc)], [])))
    assert text.splitlines()[1:] == ["- Silver Harbor was directed by Mara Ellison. [1]"]


def test_answer_says_what_is_missing_in_the_question_language() -> None:
    zh = _hit("z1", "星河合同", "星河合同的付款期限为30天。合同于2023年生效。")
    text = _text(list(R.answer("星河合同的违约金是多少？", [_item(1, zh)], ["违约金"])))
    assert "离线模式" in text and "缺少" in text and "违约金" in text and "[1]" in text
    empty = _text(list(R.answer("Who directed Silver Harbor?", [], ["the director"])))
    assert "no relevant passages" in empty and "the director" in empty


# A Chinese question naming an English product: the rules that once disagreed called it English.
STARFIELD_ZH = "Starfield Cloud Pro 的退款期限？"
STARFIELD_DOC = "Starfield Cloud Pro 提供每日备份，数据保留30天。"


def test_a_chinese_question_with_a_missing_piece_gets_chinese_notes() -> None:
    item = _item(1, _hit("s1", "Starfield Cloud Pro 服务说明", STARFIELD_DOC))
    verdict, _ = R.evaluate(STARFIELD_ZH, [item])
    assert not verdict.enough and verdict.missing
    text = _text(list(R.answer(STARFIELD_ZH, [item], verdict.missing)))
    assert text.startswith("离线模式") and "证据不足，仍缺少：" in text and "[1]" in text
    assert "Offline mode" not in text and "still missing" not in text
    empty = _text(list(R.answer(STARFIELD_ZH, [], verdict.missing)))
    assert "知识库中没有找到" in empty and "缺少：" in empty and "Missing" not in empty


def test_the_graph_answers_a_chinese_question_with_chinese_notes() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from hopwise.app import Hopwise
    from hopwise.settings import Settings
    from tests.fakes.retriever import KeywordRetriever, make_chunk

    kb = KeywordRetriever([make_chunk("s1", STARFIELD_DOC, title="Starfield Cloud Pro 服务说明")])
    app = Hopwise(Settings(web_search=False), kb, OfflineReasoner(), None, InMemorySaver())
    result = app.ask(STARFIELD_ZH)
    assert not result.evaluation.enough and "证据不足，仍缺少：" in result.answer
    assert "Offline mode" not in result.answer and "still missing" not in result.answer
    late = Hopwise(Settings(web_search=False, question_deadline_s=0), kb, OfflineReasoner(),
                   None, InMemorySaver()).ask(STARFIELD_ZH)  # fmt: skip
    assert late.stop_reason == "deadline" and "时间已用完" in late.answer, late.answer
    assert "time ran out" not in late.answer


def test_answer_directly() -> None:
    assert "Hopwise" in _text(list(R.answer_directly("hello", [])))
    note = _text(list(R.answer_directly("What is 2+2?", [])))
    assert "Offline mode" in note and "LLM" in note


# ---------------------------------------------------------------- roles in contracts
CONTRACT = "本合同的供货方为深圳星河电子有限公司，采购方为北京云帆科技有限公司。"
XINGHE = "深圳星河电子有限公司成立于2009年，法定代表人为李明远，总部位于深圳市南山区。"
YUNFAN = "北京云帆科技有限公司成立于2015年，法定代表人为王佳。"


def test_a_role_question_becomes_a_bridge_chain() -> None:
    assert _subs("供货方的法定代表人是谁？") == [
        ("供货方是谁？", None),
        ("#1的法定代表人是谁？", 1),
    ]
    assert _subs("项目负责人的联系电话是多少？")[1] == ("#1的联系电话是多少？", 1)
    assert _subs("Who is the legal representative of the supplier?") == [
        ("Who is the supplier?", None), ("legal representative of #1?", 1)]  # fmt: skip
    # a named company or a plain word before 的 is no role
    assert len(_subs("深圳星河电子有限公司的法定代表人是谁？")) == 1
    assert len(_subs("对方的名称是什么？")) == 1


def test_the_role_is_filled_by_the_name_after_it_not_the_other_party() -> None:
    contract = _hit("c1", "供货合同", CONTRACT)
    hop = HopView(sub_question="供货方是谁？", query="供货方是谁？", top_hits=[contract])
    filled, _ = R.bridge("#1的法定代表人是谁？", [hop], [_item(1, contract)])
    assert filled == "深圳星河电子有限公司的法定代表人是谁？"
    hop = HopView(sub_question="采购方是谁？", query="采购方是谁？", top_hits=[contract])
    assert R.bridge("#1的法定代表人是谁？", [hop], [])[0].startswith("北京云帆科技有限公司")


def test_a_one_character_fragment_is_not_a_missing_term() -> None:
    items = [_item(1, _hit("c1", "供货合同", CONTRACT)), _item(2, _hit("x", "公司档案", XINGHE))]
    verdict, _ = R.evaluate("供货方的法定代表人是谁？", items)
    assert verdict.enough, verdict.missing
    verdict, _ = R.evaluate("供货方的开户银行是哪家？", items)
    assert not verdict.enough and "'开户银行'" in verdict.missing


def test_role_answer_follows_the_chain_and_leaves_out_the_other_party() -> None:
    items = [
        _item(1, _hit("y", "北京云帆科技有限公司", YUNFAN)),
        _item(2, _hit("x", "深圳星河电子有限公司", XINGHE)),
        _item(3, _hit("c1", "第一条 供货方", CONTRACT)),
    ]
    answer = "".join(
        p for p in R.answer("供货方的法定代表人是谁？", items, []) if isinstance(p, str)
    )
    lines = [line for line in answer.splitlines() if line.startswith("- ")]
    assert lines[0].endswith("[3]") and "供货方为深圳星河" in lines[0]
    assert lines[1].endswith("[2]") and "李明远" in lines[1]
    assert "王佳" not in answer


def test_a_follow_up_about_the_other_party_asks_the_same_question() -> None:
    history = [{"role": "user", "content": "供货方的法定代表人是谁？"}]
    assert R.route("那采购方呢？", history)[0].standalone_question == "采购方的法定代表人是谁？"
    history = [{"role": "user", "content": "Who is the legal representative of the supplier?"}]
    decision, _ = R.route("What about the purchaser?", history)
    assert decision.standalone_question == "Who is the legal representative of the purchaser?"


def test_a_follow_up_naming_another_company_or_title_swaps_it_in() -> None:
    cases = {
        ("2022年特斯拉的交付量是多少？", "那比亚迪呢？"): "2022年比亚迪的交付量是多少？",
        ("《星河合同》的付款期限是多久？", "那《云帆合同》呢？"): "《云帆合同》的付款期限是多久？",
        ("供货方的法定代表人是谁？", "那它的违约金呢？"): "供货方的违约金呢？",
    }
    for (previous, question), expected in cases.items():
        history = [{"role": "user", "content": previous}]
        assert R.route(question, history)[0].standalone_question == expected


def test_the_other_partys_record_does_not_make_a_role_answer_enough() -> None:
    contract = _item(1, _hit("c1", "供货合同", CONTRACT))
    verdict, _ = R.evaluate(
        "供货方的法定代表人是谁？", [contract, _item(2, _hit("y", "档案", YUNFAN))]
    )
    assert not verdict.enough
    assert verdict.missing == ["深圳星河电子有限公司的法定代表人是谁？"]
    verdict, _ = R.evaluate(
        "采购方的法定代表人是谁？", [contract, _item(2, _hit("y", "档案", YUNFAN))]
    )
    assert verdict.enough, verdict.missing
