"""The offline decomposition on invented questions: metamorphic tests (renaming an entity,
paraphrasing the wh-word or reordering compared items keeps the structure, only the names in
it change), and the spans a question's names are read from."""

from __future__ import annotations

import pytest

from graph.offline import OfflineReasoner, decompose_question
from graph.offline.spans import mask, question_spans
from tests.graph.decompositions import shape_of, subs_of

R = OfflineReasoner()


# ----------------------------------------------------------------- spans and decomposition


def test_a_corpus_phrase_stays_whole_even_in_lower_case_or_with_and_in_it() -> None:
    table = {"orvieto sul mare dei lupi": 3, "brant and fellows": 2}
    spans = question_spans("Who composed orvieto sul mare dei lupi?", lambda k: table)
    assert [s.text for s in spans] == ["orvieto sul mare dei lupi"]
    subs = subs_of("Which opened first, Brant and Fellows or Kessler Mills?", table)
    assert subs == ["Brant and Fellows opened?", "Kessler Mills opened?"]
    assert "⟨0⟩" in mask(
        "the Brant and Fellows office",
        question_spans("the Brant and Fellows office", lambda k: table),
    )


@pytest.mark.parametrize(
    "question",
    [
        "Which novel has the author who was born earlier, Quorra Nights or Velmar?",
        "Which novel has the author who was born earlier, Velmar or Quorra Nights?",
        "Which album has the author who died first, Ostrel Bay or The Iron Tamsin?",
        "Which album whose author is younger, Ostrel Bay or The Iron Tamsin?",
    ],
)
def test_a_comparison_of_roles_looks_up_each_role_then_compares(question: str) -> None:
    assert shape_of(question) == [None, None, 1, 2]
    subs = subs_of(question)
    assert subs[0].startswith("author of ") and subs[2].startswith("#1")


@pytest.mark.parametrize(
    ("original", "renamed"),
    [
        (
            "Who was born first, Ilse Varga or Tomas Brell?",
            "Who was born first, Noor Akande or Pieter Vos?",
        ),
        (
            "Are Ilse Varga and Tomas Brell of the same nationality?",
            "Are Mina Soto and Ruben Kask of the same nationality?",
        ),
        (
            "When was the director of Quorra Nights born?",
            "When was the director of The Pale Orchard born?",
        ),
        (
            "What county is Ilse Varga's birthplace in?",
            "What county is Noor Akande's birthplace in?",
        ),
        (
            "Who founded the company that makes the Zephyr 9?",
            "Who founded the company that makes the Kestrel X?",
        ),
        (
            "Who is the spouse of the Orlen performer?",
            "Who is the spouse of the Tavi Sun performer?",
        ),
    ],
)
def test_renaming_an_entity_keeps_the_structure(original: str, renamed: str) -> None:
    assert shape_of(original) == shape_of(renamed)
    assert len(shape_of(original)) >= 2  # each of these needs more than one search


def test_a_possessive_takes_the_whole_noun_phrase_after_it() -> None:
    """'⟨E⟩'s rate limit' is one attribute of one entity, not 'rate of ⟨E⟩' then 'limit'."""
    subs = decompose_question("And what is Quorra Nights's rate limit?", None)
    assert [s.question for s in subs] == ["And what is Quorra Nights's rate limit?"]
    chained = decompose_question("What county is Ilse Varga's home town in?", None)
    assert chained[0].question == "home town of Ilse Varga?"
    # right after "'s" a word in -ing is a noun, as 'brother' is
    sibling = decompose_question("Where was Ilse Varga's sibling educated?", None)
    assert [s.question for s in sibling] == ["sibling of Ilse Varga?", "Where was #1 educated?"]


def test_a_chinese_statement_clause_sets_the_scene_and_is_not_asked() -> None:
    subs = decompose_question("夜里收到一个K9告警，远程处理不了，按规定要怎么逐级上报？", None)
    assert len(subs) == 1 and "怎么逐级上报" in subs[0].question
    both = decompose_question("仓库的电话是多少，地址在哪里？", None)
    assert any("电话" in s.question for s in both) and any("地址" in s.question for s in both)


def test_how_long_asks_and_a_full_stop_ends_the_scene() -> None:
    """'多久' asks like '多少'; a sentence ended by '。' is a clause of its own: the
    statements before the question set its scene, they are no parts to answer."""
    subs = decompose_question("南岭仓库的叉车突然坏了，整条线停了。维修组最晚多久要到？", None)
    assert len(subs) == 1 and subs[0].question.endswith("维修组最晚多久要到")
    assert "坏了" not in subs[0].question and "停了" not in subs[0].question
    long = decompose_question("北溪仓库的货到了。卸货一般要多长时间？", None)
    assert len(long) == 1 and long[0].question.endswith("卸货一般要多长时间")
    assert "到了" not in long[0].question


def test_paraphrasing_the_wh_word_keeps_the_structure() -> None:
    assert shape_of("When was the director of Quorra Nights born?") == shape_of(
        "Where was the director of Quorra Nights born?"
    ) == [None, 1]  # fmt: skip
    assert (
        subs_of("When was the director of Quorra Nights born?")[0] == "director of Quorra Nights?"
    )


def test_two_questions_joined_by_and_are_decomposed_apart_with_the_pronoun_filled() -> None:
    subs = subs_of("What is the Halvard accord and when was it signed?", {"halvard accord": 2})
    assert subs == ["What is the Halvard accord?", "when was Halvard accord signed?"]
    assert shape_of("What is the Halvard accord and when was it signed?") == [None, None]


def test_a_role_question_resolves_the_role_first() -> None:
    assert subs_of("Who is the legal representative of the lessor?") == [
        "Who is the lessor?",
        "legal representative of #1?",
    ]
    assert subs_of("出租方的法定代表人是谁？") == ["出租方", "#1的法定代表人是谁？"]
    # an attribute of a named thing is one question
    assert subs_of("《长河》的作者是谁？") == ["《长河》的作者是谁？"]
    assert subs_of("《长河》导演的父亲是谁？") == ["《长河》导演", "#1的父亲是谁？"]


def test_chinese_coordination_splits_per_item() -> None:
    subs = subs_of("《长河》和《远山》的导演分别是谁？")
    assert subs == ["《长河》的导演是谁？", "《远山》的导演是谁？"]


def test_an_each_clause_stays_with_the_comparison_it_follows() -> None:
    """'各多少次' asks the compared items each: read alone it names nothing to look up."""
    subs = subs_of("KX-100 和 KX-300 哪台的故障更多？各多少次？")
    assert len(subs) == 1 and "各多少次" in subs[0] and "KX-300" in subs[0]
    # a clause with a name of its own is still a question of its own
    assert len(subs_of("KX-100 和 KX-300 哪台的故障更多？KX-200 有几次？")) == 2


def test_a_leading_possessive_topic_is_kept_whole_by_the_question_after_it() -> None:
    """'⟨A⟩的 v2 版接口，每小时最多调用多少次': the limit of A's v2 interface, not of A."""
    subs = subs_of("Nimbus Relay 的 v2 版接口，每小时最多能调用多少次？")
    assert len(subs) == 1 and "v2版接口" in subs[0] and "Nimbus Relay" in subs[0]
    # a leading statement about the name still lends only the name
    said = subs_of("Nimbus Relay 不同意延期，给出的理由是什么？")
    assert len(said) == 1 and "同意" not in said[0] and "Nimbus Relay" in said[0]


def test_a_leading_clause_pointing_at_one_thing_is_the_subject_whole() -> None:
    """'⟨A⟩用的那只零件，预计哪天运抵⟨B⟩': the one part A used, even though the asking clause
    names a place of its own; before, the code fell away and only the place was searched."""
    subs = subs_of("TK-4471 用的那只备用滤芯，预计哪天运抵白鹭港？")
    assert len(subs) == 1 and "TK-4471" in subs[0] and "备用滤芯" in subs[0]
    assert "白鹭港" in subs[0]
    person = subs_of("周文静负责的那张漏水工单，物业是哪天同意返修的？")
    assert len(person) == 1 and "周文静负责的那张漏水工单" in person[0] and "同意返修" in person[0]
    # a scene-setting statement does not lend itself to a clause that names its own subject
    scene = subs_of("远程处理不了，周文静的电话是多少？")
    assert scene == ["周文静的电话是多少"]


def test_a_request_after_the_question_stays_with_its_last_step() -> None:
    """'… ? Give the staff ID.' says what the answer should hold: no step of its own."""
    subs = decompose_question("Whose forklift licence expires on 3 March 2026? Give the ID.", None)
    assert [s.question for s in subs] == [
        "Whose forklift licence expires on 3 March 2026? Give the ID."
    ]
    chained = decompose_question("When was the director of Quorra Nights born? Give the year.")
    assert [s.depends_on for s in chained] == [None, 1]
    assert chained[1].question.endswith("Give the year.")


def test_two_questions_asked_one_after_the_other_are_two_parts() -> None:
    subs = decompose_question("Should visitors still call Orrin Labs, or has the office closed? "
                              "When does lease KX-77 end?")  # fmt: skip
    assert [s.question for s in subs] == [
        "Should visitors still call Orrin Labs, or has the office closed?",
        "When does lease KX-77 end?",
    ]
    assert [s.question for s in decompose_question("Who founded Orrin Labs? When was it founded?")
            ] == ["Who founded Orrin Labs?", "When was Orrin Labs founded?"]  # fmt: skip


@pytest.mark.parametrize(
    "question",
    [
        "Who repaired pump KX-7? Thanks!",
        "Who repaired pump KX-7? I need it for the audit.",
        "Who repaired pump KX-7? Also give the staff ID.",
        "Which pump failed more often? KX-7 or KX-9?",
    ],
)
def test_a_sentence_after_the_question_that_asks_nothing_is_no_step(question: str) -> None:
    subs = decompose_question(question)
    assert len(subs) == 1 and "#" not in subs[0].question


def test_that_noun_is_the_first_questions_answer_even_after_a_second() -> None:
    """'…, and when was it repaired, and what is that engineer's grade?': the engineer is
    what the first question finds, not the second's date; 'what is … that is' names no noun."""
    subs = decompose_question(
        "Which engineer repaired pump KX-7, and when was it repaired, and what is that "
        "engineer's grade?"
    )
    assert subs[-1].depends_on == 1 and "#1" in subs[-1].question
    period = decompose_question(
        "What is the notice period of KX-77, and what happens if that is missed?"
    )
    assert all("#" not in s.question and s.depends_on is None for s in period)


def test_a_date_is_no_name_to_chain_on() -> None:
    """'the September audit' is an audit in September, not the audit of someone named so."""
    subs = decompose_question("For the September audit of plant KX-7, who signed the waiver?")
    assert len(subs) == 1 and subs[0].depends_on is None


def test_that_noun_in_a_second_question_is_the_first_ones_answer() -> None:
    """'which engineer …, and what is that engineer's grade?': the grade of whoever the first
    part finds, a chain, not a question about an engineer named nowhere."""
    subs = decompose_question(
        "Which engineer repaired pump KX-7 in May, and what is that engineer's grade?"
    )
    assert [s.depends_on for s in subs] == [None, 1]
    assert "#1" in subs[1].question and "that engineer" not in subs[1].question


def test_a_plain_question_stays_whole() -> None:
    for question in (
        "What is the notice period?",
        "What is the boiling point of water?",
        "违约金是多少？",
    ):
        assert subs_of(question) == [question]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "Mira Kolt is a minor figure in a Danish radio serial written by whom?",
            ["Mira Kolt is a minor figure in which Danish radio serial?", "#1 written by whom?"],
        ),
        (
            "Oren Vask beat the boxer who was the first to defeat which champion of the league?",
            ["Oren Vask beat which boxer?",
             "#1 was the first to defeat which champion of the league?"],
        ),
        (
            "The Ostrel Chess League admits the Vask club that was founded in which year?",
            ["The Ostrel Chess League admits which Vask club?", "#1 was founded in which year?"],
        ),
        (  # a subject the masks do not cover ('The Harbour Survey' opens the question)
            "The Harbour Survey is a mapping project led by a surveyor hired in what year?",
            ["The Harbour Survey is a mapping project led by which surveyor?",
             "#1 hired in what year?"],
        ),
        (  # read as a chain inside out, its last step would ask nothing
            "Harrow Deep cast the singer who voiced which role in The Vask Hour?",
            ["Harrow Deep cast which singer?", "#1 voiced which role in The Vask Hour?"],
        ),
    ],
)  # fmt: skip
def test_a_statement_asking_in_the_modifier_of_an_unnamed_thing_finds_the_thing_first(
    question: str, expected: list[str]
) -> None:
    """The slot sits in a clause about 'a radio serial' / 'the boxer' the question never names:
    the named subject leads to it first, then the clause is asked of it."""
    assert subs_of(question) == expected
    assert shape_of(question) == [None, 1]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "When was the clerk who stepped down as treasurer of Ostrel after the 1998 audit born?",
            ["clerk who stepped down as treasurer of Ostrel after the 1998 audit?",
             "When was #1 born?"],
        ),
        (
            "In what year was the conference where the Vask Cup is awarded first held?",
            ["conference where the Vask Cup is awarded?", "In what year was #1 first held?"],
        ),
        (
            "What was the stadium, at which the Ostrel Cup finals took place, renamed for the 2004 "
            "season?",
            ["stadium at which the Ostrel Cup finals took place?",
             "What was #1 renamed for the 2004 season?"],
        ),
    ],
)  # fmt: skip
def test_a_relative_clause_runs_to_the_questions_closing_participle(
    question: str, expected: list[str]
) -> None:
    """The clause names the one asked about as a whole; it is not cut at the first name in
    it ('treasurer of Ostrel' is part of who stepped down, not a step of its own)."""
    assert subs_of(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "Mira Kolt was born in which city?",
        "Mira Kolt wrote a novel about which city?",
        "Mira Kolt and Oren Vask met in what year?",
    ],
)
def test_a_statement_whose_slot_modifies_no_unnamed_thing_stays_one_question(
    question: str,
) -> None:
    assert subs_of(question) == [question]


def test_a_fronted_name_owns_the_unnamed_subject_of_the_question() -> None:
    """'In ⟨E⟩, who did the star play?': the star of ⟨E⟩ first, then whom #1 played in ⟨E⟩."""
    subs = [
        s.question for s in decompose_question("In Quorra Nights, who did the star play?", None)
    ]
    assert subs == ["star of Quorra Nights?", "Who did #1 play in Quorra Nights?"]
    kept = decompose_question("In 2019, who did the board appoint?", None)  # a year owns nothing
    assert len(kept) == 1


def test_a_person_pronoun_after_a_who_question_is_whom_it_finds() -> None:
    subs = decompose_question("Who is the backup for queue-relay, and what is their extension?")
    assert [(s.question, s.depends_on) for s in subs] == [
        ("Who is the backup for queue-relay?", None),
        ("what is #1's extension?", 1),
    ]
    leads = decompose_question("Which engineer closed WO-7 and what is his grade?")
    assert leads[1].question == "what is #1's grade?" and leads[1].depends_on == 1


def test_a_place_the_question_names_is_no_step_of_a_chain() -> None:
    # 'from the Pellham depot' names where the worker is from: nothing to find first
    question = "What's the meal allowance per day for a driver from the Pellham depot?"
    assert subs_of(question) == [question]
    # a thing found through another still is: the performer first, then the birthplace
    assert subs_of("What is the birthplace of the Ostrava Nights performer?") == [
        "Ostrava Nights performer?",
        "birthplace of #1?",
    ]


def test_a_later_part_about_whom_an_earlier_part_asks_for_waits_for_its_answer() -> None:
    # the pronoun or the subjectless clause stands for the person found, not a name given
    assert subs_of(
        "Tova Lind is away - who approves refunds instead, and what's their mobile?"
    ) == [
        "Tova Lind is away - who approves refunds instead?",
        "what's #1's mobile?",
    ]
    parts = subs_of("北仓夜班的班组长是谁？他分机多少？")  # asked of the step before's answer
    assert parts[-1] == f"#{len(parts) - 1}的分机多少", parts
    # '其他' and a clause of its own are no pronoun for the person found
    assert not any(
        "#" in p and "他费用" in p for p in subs_of("北仓的审批人是谁？其他费用怎么报销？")
    )
    assert not subs_of("北仓的审批人是谁？需要提前几天申请？")[-1].startswith("#")
    # a relative 'who' inside the first part is not the part asking who
    relative = subs_of(
        "What is the office of the engineer who wrote the runbook, and what is her grade?"
    )
    assert not any(p.startswith("what is #") and "grade" in p for p in relative), relative
    # a clause that names its own subject, or asks who again, is its own question
    assert "#1" not in subs_of("北仓夜班的班组长是谁？南仓夜班的班组长是谁？")[-1]
