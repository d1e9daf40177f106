"""The offline reasoner on invented entities and small synthetic corpora.

No question here comes from a dataset. The decomposition tests are metamorphic: renaming
an entity, paraphrasing the wh-word or reordering compared items must not change the
structure (how many hops, which depends on which), only the names in it.
"""

from __future__ import annotations

import pytest

from graph.offline import OfflineReasoner, decompose_question, judge
from graph.offline import answer as ans
from graph.offline import bridge as br
from graph.offline.route import rewrite_followup
from graph.protocols import EvidenceItem, HopView
from ingest.models import Hit
from tests.graph.decompositions import subs_of
from tests.graph.offline_app import leads_with

R = OfflineReasoner()


def _hit(chunk_id: str, title: str, text: str, rank: int = 1) -> Hit:
    return Hit(chunk_id=chunk_id, doc_id=chunk_id, title=title, text=text, score=10.0 / rank,
               rank=rank)  # fmt: skip


def _item(n: int, hit: Hit) -> EvidenceItem:
    return EvidenceItem(n=n, chunk_id=hit.chunk_id, title=hit.title, text=hit.text)


# ----------------------------------------------------------------------------- bridging


BRIDGE_HITS = [
    _hit(
        "a",
        "Quorra Nights",
        "Quorra Nights is a 1962 Velmarian drama film directed by Ilse "
        "Varga. It stars Tomas Brell and Noor Akande.",
        1,
    ),
    _hit("b", "Tomas Brell", "Tomas Brell is a Velmarian actor. He directed one film.", 2),
    _hit("c", "Ilse Varga", "Ilse Varga (born 4 May 1921) was a Velmarian film director.", 3),
]


def test_the_bridge_entity_is_the_one_the_anchor_passage_names_with_the_relation() -> None:
    hop = HopView(sub_question="director of Quorra Nights?", query="director of Quorra Nights?",
                  top_hits=BRIDGE_HITS, hit_ids=[h.chunk_id for h in BRIDGE_HITS])  # fmt: skip
    found = br.candidates(hop, BRIDGE_HITS)
    assert found[0].text == "Ilse Varga"
    assert found[0].near > 0 and 1 in found[0].hits
    assert "Velmarian" not in [c.text for c in found]  # an adjective is no entity
    assert "Quorra Nights" not in [c.text for c in found]  # the anchor is not its own bridge


def test_the_next_query_is_the_entity_and_the_relation_words_only() -> None:
    assert br.next_query("When was #1 born?", "Ilse Varga") == "Ilse Varga born"
    assert br.next_query("#1的法定代表人是谁？", "星河公司") == "星河公司法定代表人"


def test_bridge_reports_its_candidates_and_a_beam_of_clean_queries() -> None:
    hop = HopView(sub_question="director of Quorra Nights?", query="director of Quorra Nights?",
                  top_hits=BRIDGE_HITS, hit_ids=[h.chunk_id for h in BRIDGE_HITS])  # fmt: skip
    evidence = [_item(i, h) for i, h in enumerate(BRIDGE_HITS, 1)]
    query, usage = R.bridge("When was #1 born?", [hop], evidence)
    assert query == "Ilse Varga born"
    beam = usage.details["beam"]
    assert [b["query"] for b in beam][0] == "Ilse Varga born"
    assert all(len(b["query"].split()) <= 4 for b in beam)  # one entity each, no clutter
    assert usage.details["candidates"][0]["entity"] == "Ilse Varga"


def test_confirmation_prefers_the_candidate_whose_own_passage_holds_the_relation() -> None:
    own = [_hit("c", "Ilse Varga", "Ilse Varga (born 4 May 1921) was a film director.")]
    other = [_hit("b", "Tomas Brell", "Tomas Brell is an actor.")]
    assert br.confirm("Ilse Varga", "Ilse Varga born", own) > br.confirm(
        "Tomas Brell", "Tomas Brell born", other
    )


# ------------------------------------------------------------------------------ answers


def test_answer_types_follow_the_question_word_and_shape() -> None:
    assert ans.answer_type("When was Ilse Varga born?") == "date"
    assert ans.answer_type("Where is the Brell Museum?") == "place"
    assert ans.answer_type("How many staff does Kessler Mills employ?") == "number"
    assert ans.answer_type("Who directed Quorra Nights?") == "person"
    assert ans.answer_type("Is Kessler Mills older than Brant Hall?") == "yes_no"
    assert ans.answer_type("Which opened first, Kessler Mills or Brant Hall?") == "choice"
    assert ans.answer_type("违约金是多少？") == "number"
    assert ans.answer_type("为什么要延期交付？") == "explain"


def _view(query: str, hits: list[Hit], final: bool = True) -> HopView:
    return HopView(sub_question=query, query=query, hit_ids=[h.chunk_id for h in hits], final=final)


def test_the_short_answer_is_the_entity_of_the_expected_type_with_its_citation() -> None:
    hits = [
        _hit("p", "Ilse Varga", "Ilse Varga was born on 4 May 1921 in Ostrel. She died in 1990.")
    ]
    evidence = [_item(1, hits[0])]
    when = ans.short_answer("When was Ilse Varga born?", evidence, [_view("Ilse Varga born", hits)])
    assert when is not None and when.text == "4 May 1921" and when.n == 1
    where = ans.short_answer(
        "Where was Ilse Varga born?", evidence, [_view("Ilse Varga born", hits)]
    )
    assert where is not None and where.text == "Ostrel"


def test_a_choice_compares_the_values_the_comparison_word_asks_for() -> None:
    a = _hit("a", "Kessler Mills", "Kessler Mills opened in 1931 in Ostrel.")
    b = _hit("b", "Brant Hall", "Brant Hall opened in 1904.")
    evidence = [_item(1, a), _item(2, b)]
    first = ans.short_answer("Which opened first, Kessler Mills or Brant Hall?", evidence)
    last = ans.short_answer("Which opened last, Kessler Mills or Brant Hall?", evidence)
    assert first is not None and first.text == "Brant Hall" and first.n == 2
    assert last is not None and last.text == "Kessler Mills"
    same = [_item(1, a), _item(2, _hit("b", "Brant Hall", "Brant Hall opened in 1931."))]
    assert ans.short_answer("Which opened first, Kessler Mills or Brant Hall?", same) is None


def test_a_choice_compares_only_values_of_one_kind_from_passages_about_the_items() -> None:
    def decide(question: str, *texts: tuple[str, str]) -> str | None:
        found = [_item(i, _hit(f"h{i}", t, x)) for i, (t, x) in enumerate(texts, start=1)]
        short = ans.short_answer(question, found)
        return short.text if short else None

    taller = "Which peak is higher, Mount Orrel or Vask Peak?"
    # heights in one unit (the units lexicon converts): compared
    assert decide(taller, ("Mount Orrel", "Mount Orrel rises to 6,950 m above the valley."),
                  ("Vask Peak", "Vask Peak is 7.2 km high.")) == "Vask Peak"  # fmt: skip
    # a year against a height, or one side's value missing: no stated choice
    assert decide(taller, ("Mount Orrel", "Mount Orrel was first mapped in 1808 by surveyors."),
                  ("Vask Peak", "Vask Peak stands 7120 m above sea level.")) is None  # fmt: skip
    assert decide(taller, ("Mount Orrel", "Mount Orrel is a peak of the Dask range."),
                  ("Vask Peak", "Vask Peak stands 7120 m above sea level.")) is None  # fmt: skip
    # a passage about a longer name that holds the item is about something else
    newer = "Which game came out more recently, Harrow Deep or Torrent?"
    assert decide(newer, ("Harrow Deep", "Harrow Deep is a card game first published in 2004."),
                  ("Torrent Dice Game", "Torrent Dice Game is a spin-off published in 2011."),
                  ("Torrent", "Torrent is a board game first published in 1996.")) == "Harrow Deep"  # fmt: skip
    # the item's own page, not an expansion's whose title only starts with its name
    assert decide(newer, ("Harrow Deep", "Harrow Deep is a card game first published in 2004."),
                  ("Torrent: Islanders", "Torrent: Islanders is an expansion published in 2009."),
                  ("Torrent", "Torrent is a board game first published in 1996.")) == "Harrow Deep"  # fmt: skip
    # a size word ('more members') is never decided on the passages' first dates
    more = "Which band has more members, Harrow Deep or Torrent?"
    assert decide(more, ("Harrow Deep", "Harrow Deep is a band formed in 2004 in Ostrel."),
                  ("Torrent", "Torrent is a band formed in 1996 in Vask.")) is None  # fmt: skip
    assert decide("Which of Harrow Deep or Torrent came together first?",
                  ("Harrow Deep", "Harrow Deep is a band formed in 2004 in Ostrel."),
                  ("Torrent", "Torrent is a band formed in 1996 in Vask.")) == "Torrent"  # fmt: skip


def test_the_answer_states_the_answer_first_then_the_evidence_per_hop() -> None:
    hits = [
        _hit("a", "Quorra Nights", "Quorra Nights is a drama film directed by Ilse Varga."),
        _hit("c", "Ilse Varga", "Ilse Varga was born on 4 May 1921 in Ostrel."),
    ]
    evidence = [_item(1, hits[0]), _item(2, hits[1])]
    hops = [
        _view("director of Quorra Nights?", hits[:1], final=False),
        _view("Ilse Varga born", hits[1:]).model_copy(
            update={"sub_question": "When was #1 born?", "entity": "Ilse Varga"}
        ),
    ]
    text = "".join(
        p
        for p in R.answer("When was the director of Quorra Nights born?", evidence, [], hops)
        if isinstance(p, str)
    )
    lines = text.splitlines()
    assert leads_with(text, "4 May 1921") and lines[0].endswith("[2]"), text
    assert "directed by Ilse Varga." in lines[3] and lines[3].endswith("[1]"), text  # the link
    assert "Not found" not in text


def test_missing_pieces_are_named_in_words_and_nothing_is_stated() -> None:
    hits = [_hit("a", "Quorra Nights", "Quorra Nights is a drama film directed by Ilse Varga.")]
    evidence = [_item(1, hits[0])]
    born = HopView(sub_question="When was #1 born?", query="Ilse Varga born", entity="Ilse Varga",
                   final=True)  # fmt: skip
    hops = [_view("director of Quorra Nights?", hits, final=False), born]
    verdict = judge("When was the director of Quorra Nights born?", evidence, hops)
    assert not verdict.enough and verdict.missing == ["when was Ilse Varga born"]
    assert all("'" not in m for m in verdict.missing)  # words, not a token list
    text = "".join(
        p
        for p in R.answer(
            "When was the director of Quorra Nights born?", evidence, verdict.missing, hops
        )
        if isinstance(p, str)
    )
    first = text.splitlines()[0]
    # no answer is stated and nothing bold: the one sentence found may be quoted, but the
    # missing step is named (the fitted reader has no 'do not say' for a single passage yet)
    assert not first.startswith("Answer:") and "**" not in first, text
    assert "Looked for: when was Ilse Varga born" in text


def test_nothing_is_said_missing_when_nothing_is() -> None:
    hits = [_hit("c", "Ilse Varga", "Ilse Varga was born on 4 May 1921 in Ostrel.")]
    verdict = judge(
        "When was Ilse Varga born?", [_item(1, hits[0])], [_view("When was Ilse Varga born?", hits)]
    )
    assert verdict.enough and verdict.missing == []


# ---------------------------------------------------------------------------- follow-ups


def test_a_follow_up_is_rewritten_only_when_it_depends_on_the_conversation() -> None:
    history = [
        {"role": "user", "content": "Who supplies the Orlen turbines?"},
        {"role": "assistant", "content": "Answer: Kessler Mills [1]"},
    ]
    same = "How long does that burn-in run?"  # a demonstrative with its own noun
    assert rewrite_followup(same, history) == same
    assert rewrite_followup("Who founded Brant Hall?", history) == "Who founded Brant Hall?"
    assert rewrite_followup("What is its warranty?", history) == "What is Orlen's warranty?"
    assert rewrite_followup("When did he retire?", [
        {"role": "user", "content": "Who directed Quorra Nights?"},
        {"role": "assistant", "content": "Answer: Ilse Varga [1]"},
    ]) == "When did Ilse Varga retire?"  # fmt: skip
    assert rewrite_followup("What about the lessee?", [
        {"role": "user", "content": "Who is the auditor of the lessor?"},
    ]) == "Who is the auditor of the lessee?"  # fmt: skip


def test_he_means_the_person_the_reply_answered_with_not_a_later_name() -> None:
    # the reply names its answer first and adds a period and a licence after it
    assert rewrite_followup("and who's his deputy? his number too", [
        {"role": "user", "content": "who leads the night shift at Pier 4?"},
        {"role": "assistant", "content": "Tomas Reyl leads it for Q4 2026 (1 Oct – 31 Dec); "
         "his number is 0161 555 0102."},
    ]) == "and who's Tomas Reyl's deputy? his number too"  # fmt: skip
    assert rewrite_followup("那他的助理呢？", [
        {"role": "user", "content": "三号码头夜班组长是谁？"},
        {"role": "assistant", "content": "三号码头夜班组长是洪柏，手机 13700000000，持叉车证。"},
    ]) == "那洪柏的助理呢？"  # fmt: skip
    # a Latin name inside a Chinese reply, after the service's own capitalised name
    assert rewrite_followup("他的分机号多少？", [
        {"role": "user", "content": "route-hub是哪个组负责的？"},
        {"role": "assistant", "content": "route-hub（Routing Hub，Tier 2）由成都的Routing团队负责，"
         "组长是Mara Quill。"},
    ]) == "Mara Quill的分机号多少？"  # fmt: skip
    # 'he is the X' names a role: the person is the one named first
    assert rewrite_followup("when did he confirm the refund?", [
        {"role": "user", "content": "who handles refunds at Norvik?"},
        {"role": "assistant", "content": "Ansel Brandt - he is Norvik's Refunds Officer."},
    ]) == "when did Ansel Brandt confirm the refund?"  # fmt: skip


def test_and_with_a_clause_asks_its_own_question_about_the_same_thing() -> None:
    history = [
        {"role": "user", "content": "What uptime does the Velora contract promise?"},
        {"role": "assistant", "content": "99.9% in each calendar month."},
    ]
    rewritten = rewrite_followup(
        "and if we only reach 99.1% in a month, what do they get?", history
    )
    assert rewritten == "and if we only reach 99.1% in a month, what do Velora get?"
    # a thing alone still takes the previous question's place
    assert (
        rewrite_followup("and Norrby?", history) == "What uptime does the Norrby contract promise?"
    )


def test_route_keeps_greetings_simple() -> None:
    for greeting in ("hi", "Hello there!", "谢谢", "你好！"):
        decision, usage = R.route(greeting, [])
        assert decision.route == "simple" and usage.llm_calls == 0
    assert R.route("What is the notice period?", [])[0].route == "complex"


# ------------------------------------------------------------------------- hostile input


def test_long_or_odd_questions_decompose_without_blowing_up() -> None:
    many_commas = "Which " + "aa, " * 40 + "b?"  # once exponential in the choice pattern
    assert subs_of(many_commas)
    assert R.route("what is" + " " * 3000 + "x", [])[0].route in {"simple", "complex"}
    assert subs_of("What is ⟨5⟩ and ⟨0⟩?")  # our own span marks typed by a user
    subs = decompose_question(
        "Who founded the firm that makes pumps and where is the firm that makes pumps based?"
    )
    for sub in subs:  # a repeated sub-question is dropped, its #k follow the one kept
        refs = [int(k) for k in __import__("re").findall(r"#(\d+)", sub.question)]
        assert all(0 < k < sub.id for k in refs) and (sub.depends_on or 0) < sub.id


def test_yes_no_without_any_passage_on_it_is_not_found_rather_than_no() -> None:
    unrelated = [_item(1, _hit("x", "Weather", "It rained in Ostrel on Monday."))]
    assert ans.short_answer("Is Kessler Mills based in Brant?", unrelated) is None


def test_a_withdrawn_document_leaves_no_bridged_name_behind() -> None:
    from graph.result import QuestionResult

    hit = {"chunk_id": "c1", "doc_id": "d1", "snippet": "Quorra Nights was directed by Jane Roe."}
    public = {"chunk_id": "c2", "doc_id": "d2", "snippet": "She was born in 1921."}
    result = QuestionResult.model_validate({
        "question": "When was the director of Quorra Nights born?",
        "answer": "Answer: 1921 [1]", "short_answer": "1921",
        "sub_questions": [{"id": 1, "question": "director of Quorra Nights?"},
                          {"id": 2, "question": "When was #1 born?", "depends_on": 1},
                          {"id": 3, "question": "Jane Roe career", "follow_up": True}],
        "hops": [{"hop": 1, "sub_question": "director of Quorra Nights?",
                  "query": "director of Quorra Nights?", "hits": [hit]},
                 {"hop": 2, "sub_question": "When was #1 born?", "query": "Jane Roe born",
                  "bridged": True, "search_query": "Jane Roe 出生",
                  "bridge": {"chosen_entity": "Jane Roe"}, "hits": [public]}],
        "evidence": [{"n": 1, "chunk_id": "c2", "text": "She was born in 1921."}],
        "citations": [{"n": 1, "chunk_id": "c2"}],
        "evaluation": {"enough": False, "missing": ["when was Jane Roe born"],
                       "web_query": "Jane Roe born"},
        "trace": [{"node": "retrieve_hop", "started_ms": 0, "ended_ms": 1, "duration_ms": 1,
                   "details": {"hops": [{"query": "Jane Roe born"}]}}],
    })  # fmt: skip
    shown = result.without_documents({"d1"}, "withheld").to_json()
    assert "Jane Roe" not in repr(shown)
    assert shown["answer"] == "withheld" and shown["hops"][1]["query"] == "When was #1 born?"


def test_a_count_or_a_question_in_the_modifier_is_not_a_chain() -> None:
    """'K9 级别的工单一共有几张' counts rows filtered by the 的 phrase; 'X有哪台设备受到了…的影响'
    asks in the part before 的: neither is searched as 'first X, then #1的Y'."""
    for question in ("K9 级别的工单一共有几张？", "东区仓库有哪台设备受到了断电事件的影响？"):
        subs = decompose_question(question, None)
        assert len(subs) == 1 and "#1" not in subs[0].question, subs


def test_a_withdrawn_document_leaves_no_gap_or_count_behind() -> None:
    """Ranks, counts, evidence numbers and the answer step's tallies are those of what the
    reader still sees: a gap (rank 1 missing, evidence [2] alone) would show what was removed."""
    from graph.result import QuestionResult

    secret = {"chunk_id": "c1", "doc_id": "d1", "rank": 1, "new": True, "snippet": "Vault A."}
    public = {"chunk_id": "c2", "doc_id": "d2", "rank": 2, "new": True, "snippet": "Door B."}
    result = QuestionResult.model_validate({
        "question": "Where are the keys kept?", "answer": "Answer: Vault A [1] [2]",
        "hops": [{"hop": 1, "sub_question": "keys kept", "query": "keys kept",
                  "new_count": 2, "hits": [secret, public]}],
        "evidence": [{"n": 1, "chunk_id": "c1", "text": "Vault A."},
                     {"n": 2, "chunk_id": "c2", "text": "Door B."}],
        "citations": [{"n": 1, "chunk_id": "c1"}, {"n": 2, "chunk_id": "c2"}],
        "trace": [{"node": "generate_answer", "tokens": 900,
                   "details": {"evidence": 2, "citations": [1, 2]}}],
        "web_results": [{"title": "Vault A opening hours", "url": "https://example.org/a"}],
        "tokens": 900,
    })  # fmt: skip
    result.evidence.append(
        result.evidence[0].model_copy(
            update={"n": 3, "chunk_id": None, "url": "https://example.org/a", "text": "Vault A."}
        )
    )
    shown = result.without_documents({"d1"}, "withheld")
    assert not shown.web_results and shown.tokens == 0 and shown.trace[0].tokens == 0
    [hop] = shown.hops
    assert [(h.chunk_id, h.rank) for h in hop.hits] == [("c2", 1)] and hop.new_count == 1
    assert [(e.n, e.chunk_id) for e in shown.evidence] == [(1, "c2")]
    assert [(c.n, c.chunk_id) for c in shown.citations] == [(1, "c2")]
    assert all(not e.details for e in shown.trace)


def test_each_part_that_names_its_subject_is_read_for_its_own_kind() -> None:
    """'How many …, and when does contract KX-77 end?': the second part asks for a date, not
    the number the question's first words ask for."""
    from graph.offline.rules import rule_answer as compose_answer

    question = "How many staff work at Orrin Labs, and when does contract KX-77 end?"
    staff = EvidenceItem(n=1, chunk_id="a", title="Orrin Labs",
                         text="Orrin Labs employs 42 staff at its two sites.")  # fmt: skip
    term = EvidenceItem(n=2, chunk_id="b", title="Contracts",
                        text="Contract KX-77 was signed by 12 board members and ends on "
                        "30 June 2027.")  # fmt: skip
    hops = [
        HopView(sub_question=q, query=q, hit_ids=[cid], final=True)
        for q, cid in (
            ("How many staff work at Orrin Labs?", "a"),
            ("when does contract KX-77 end?", "b"),
        )
    ]
    first = "".join(compose_answer(question, [staff, term], [], hops)).split("\n\n")[0]
    assert first.splitlines() == ["Answer: 42 staff [1]", "Answer: 30 June 2027 [2]"]


def test_a_stated_cell_is_shown_with_its_row_key_not_the_cells_beside_it() -> None:
    """'What is the purchase cost of part QT-7?': the evidence line under '480' is the row's
    key and the asked cell; the list price beside it (620) would read as a second answer."""
    from graph.offline.rules import rule_answer as compose_answer

    question = "What is the purchase cost of part QT-7?"
    table = EvidenceItem(n=1, chunk_id="a", title="Parts price list",
                         text="Part | Name | Purchase cost | List price\n"
                         "QT-7 | Fan unit | 480 | 620\nQT-9 | Pump | 900 | 1100")  # fmt: skip
    hops = [HopView(sub_question=question, query=question, hit_ids=["a"], final=True)]
    answer = "".join(compose_answer(question, [table], [], hops))
    assert answer.startswith("Answer: 480 [1]")
    assert "- Part: QT-7; Purchase cost: 480 [1]" in answer and "620" not in answer


def test_the_one_row_a_question_names_by_a_value_answers_its_elliptical_part() -> None:
    """'保修到 2032 年 1 月 21 日为止的是哪台设备？它在哪个站点？': the question names one row by
    its date (written another way in the table, which goes on in a second chunk); the part
    '它在哪个站点' is read from that row, not from the rows it cannot tell apart."""
    from graph.offline.rules import rule_answer as compose_answer

    question = "保修到 2032 年 1 月 21 日为止的是哪台设备？它在哪个站点？"
    head = "设备编号 | 设备类型 | 所属站点 | 保修截止\n"
    first = EvidenceItem(n=1, chunk_id="a", title="设备台账",
                         text=head + "KX-1 | 泵 | 北区 | 2031-04-02\nKX-3 | 泵 | 东区 | 2030-05-05")  # fmt: skip
    rest = EvidenceItem(n=2, chunk_id="b", title="设备台账",
                        text=head + "KX-9 | 阀 | 南区 | 2032-01-21\nKX-8 | 阀 | 西区 | 2029-01-01")  # fmt: skip
    parts = ("保修到 2032 年 1 月 21 日为止的是哪台设备", "它在哪个站点")
    hops = [HopView(sub_question=p, query=p, hit_ids=["a", "b"], final=True) for p in parts]
    lines = "".join(compose_answer(question, [first, rest], [], hops)).split("\n\n")[0]
    assert [("KX-9" in ln, "**南区**" in ln or "**KX-9**" in ln) for ln in lines.splitlines()] == [
        (True, True),
        (True, True),
    ]


@pytest.mark.parametrize(
    "question",
    [
        "白沙县第一医院不同意把 CT 巡检往后挪，给出的理由是什么？",
        "北岭仓库拒绝了推迟盘点的申请，提出的条件是什么？",
    ],
)
def test_a_clause_that_borrows_the_scenes_subject_is_one_question(question: str) -> None:
    """'…不同意推迟，给出的理由是什么': the statement's subject is the asking clause's context;
    '给出的理由' is the reason given, not 'first find X给出, then #1的理由'."""
    subs = decompose_question(question, None)
    assert len(subs) == 1 and "#1" not in subs[0].question
    assert question.rstrip("？").split("，")[-1] in subs[0].question  # asked as written


def test_the_next_search_follows_the_code_of_the_row_the_question_describes() -> None:
    """'北岭县医院…那台DR…': the register row holding both is filed elsewhere under its code;
    the chase searches for that code, not for the most frequent name in the passages."""
    from graph.offline import _described_code

    register = _hit("r", "设备台账", "设备编号 | 设备类型 | 所属医院\nKQ-DR-7 | DR | 北岭县医院\n"
                    "KQ-CT-4 | CT | 北岭县医院\nKQ-CT-9 | CT | 南湖医院")  # fmt: skip
    hop = HopView(sub_question="x", query="x", top_hits=[register], hit_ids=["r"], final=True)
    question = "北岭县医院拒绝了推迟保养的申请，那台DR按计划应该哪天做保养？"
    assert _described_code(question, hop, [_item(1, register)]) == "KQ-DR-7"
    other = "北岭县医院的设备按计划应该哪天做保养？"  # two rows fit: no single code to follow
    assert _described_code(other, hop, [_item(1, register)]) == ""


def test_a_chain_after_a_statement_clause_still_splits_when_its_link_is_a_noun() -> None:
    """'…，他所在部门的经理是谁': the department first, then its manager; only a verb before 的
    ('给出的理由') makes the clause one question."""
    subs = decompose_question("张伟负责KX-77合同，他所在部门的经理是谁？", None)
    assert [s.depends_on for s in subs] == [None, 1] and subs[1].question.startswith("#1的")


def test_a_code_written_against_chinese_text_is_a_code() -> None:
    from graph.offline.values import codes_in

    assert codes_in("工单TK-310803-05的处理人是谁？合同KX-77何时到期？") == [
        "TK-310803-05",
        "KX-77",
    ]


@pytest.mark.parametrize(
    ("part", "asks"),
    [("What are the steps to return a part?", True), ("它放在哪个仓库", True),
     ("QT-9的呢", False), ("what about QT-9?", False), ("and KX-77?", False)],
)  # fmt: skip
def test_a_part_reads_for_its_own_kind_only_when_it_asks_by_itself(part: str, asks: bool) -> None:
    from graph.offline.rules import _ASKS_RE

    assert bool(_ASKS_RE.search(part)) is asks


def test_a_choice_the_words_leave_tied_is_decided_by_meaning_never_by_the_name() -> None:
    """'Which …, A or B?' when both passages hold as many of the question's words: the passage
    nearer in meaning to what is asked (the built-in embedder) decides, the other item named
    before or after it alphabetically never does; without the embedder nothing is stated."""
    items = [
        EvidenceItem(
            n=1, chunk_id="a", title="Orlo Vane", text="Orlo Vane is a ferry built at Kessel."
        ),
        EvidenceItem(
            n=2, chunk_id="b", title="Zell Marr", text="Zell Marr is a ferry built at Ostrand."
        ),
    ]
    question = "Which ferry was built at Kessel yards, Orlo Vane or Zell Marr?"
    assert ans.short_answer(question, items) is not None  # 'Kessel' is in one passage only
    tied = "Which ferry was made in a northern yard, Orlo Vane or Zell Marr?"
    assert ans.short_answer(tied, items) is None  # as many words each: no guess
    asked: list[str] = []

    def nearer_zell(query: str, texts: list[str]) -> list[float]:
        asked.append(query)
        return [0.70 if "Ostrand" in t else 0.60 for t in texts]

    found = ans.short_answer(tied, items, similarity=nearer_zell)
    assert found is not None and found.text == "Zell Marr" and found.n == 2
    assert asked and "Orlo" not in asked[0] and "Zell" not in asked[0]  # what is asked only
    flipped = ans.short_answer(
        tied, items, similarity=lambda q, t: [0.7 if "Kessel" in x else 0.6 for x in t]
    )
    assert flipped is not None and flipped.text == "Orlo Vane"
    close = ans.short_answer(tied, items, similarity=lambda q, t: [0.700, 0.695])
    assert close is None  # nearer by less than the margin: still a tie


def test_the_bridge_is_never_a_name_the_next_sub_question_gives_beside_it() -> None:
    """'cast member of ⟨A⟩?', then 'Who did #1 play in Glass Tide?': Glass Tide, however
    well the first hop's passages name it, is not who #1 is."""
    hits = [
        _hit(
            "a",
            "Harrow Deep",
            "Harrow Deep is a sequel to Glass Tide. Glass Tide and Harrow "
            "Deep both star Tova Brandt as the harbour master.",
            1,
        ),  # fmt: skip
        _hit("b", "Glass Tide", "Glass Tide is a 1969 Velmarian film. It stars Tova Brandt.", 2),
    ]
    hop = HopView(sub_question="cast member of Harrow Deep?", query="cast member of Harrow Deep?",
                  top_hits=hits, hit_ids=["a", "b"])  # fmt: skip
    assert br.candidates(hop, hits)[0].text == "Glass Tide"  # what the words alone would take
    evidence = [_item(1, hits[0]), _item(2, hits[1])]
    query, usage = R.bridge("Who did #1 play in Glass Tide?", [hop], evidence)
    assert query.startswith("Tova Brandt"), query


def test_a_later_sentence_of_the_anchors_own_page_still_says_the_relation() -> None:
    """'hall in which the 2019 Vask Awards were held?': the awards' own page says it in its
    second sentence ('The ceremony was held at Harrow Hall'), naming the awards only as 'the
    ceremony'; the first sentence's organiser is no hall."""
    hits = [
        _hit(
            "a",
            "2019 Vask Awards",
            "The 2019 Vask Awards was held on 3 May 2019 and was the "
            "12th edition of the Ostrel Music Guild's annual awards. The ceremony was held at "
            "Harrow Hall in Dunmere.",
            1,
        ),  # fmt: skip
        _hit("b", "Ostrel Music Guild", "The Ostrel Music Guild is a trade body in Dunmere.", 2),
    ]
    hop = HopView(sub_question="hall in which the 2019 Vask Awards were held?",
                  query="hall in which the 2019 Vask Awards were held?", top_hits=hits,
                  hit_ids=["a", "b"])  # fmt: skip
    assert br.candidates(hop, hits)[0].text == "Harrow Hall"


def test_a_candidate_named_as_the_kind_asked_is_the_bridge() -> None:
    """'meeting where the Vask Prize is awarded?': the league that awards it stands right
    after 'awarded by', but the 'Harbour Meetings' are a meeting."""
    text = (
        "The Vask Prize is awarded annually by the Ostrel Rowing League to its best club; the "
        "league hands it over at the Harbour Meetings."
    )
    hits = [_hit("a", "Vask Prize", text, 1)]
    hop = HopView(sub_question="meeting where the Vask Prize is awarded?",
                  query="meeting where the Vask Prize is awarded?", top_hits=hits,
                  hit_ids=["a"])  # fmt: skip
    assert br.asked_kind(hop.sub_question) == br.asked_kind("which meetings?")
    assert br.candidates(hop, hits)[0].text == "Harbour Meetings"
    assert br.asked_kind("director of Quorra Nights?") == ""


def test_a_sentence_that_refers_back_names_the_anchor_of_the_one_before() -> None:
    """'The project was led by X' after 'The Harbour Survey is a … project': X led the
    Harbour Survey; another project's sentence naming its own leader beside 'led' does not."""
    text = (
        "The Harbour Survey is a 2021 mapping project run for the port authority. The project "
        "was led by Pieter Vos. The Ridge Survey is a 2019 mapping project for the council, "
        "led by Noor Akande."
    )
    hits = [_hit("a", "Projects", text, 1)]
    asked = "The Harbour Survey is a mapping project led by which surveyor?"
    hop = HopView(sub_question=asked, query=asked, top_hits=hits, hit_ids=["a"])
    assert br.candidates(hop, hits)[0].text == "Pieter Vos"
