"""'Who leads the Harbor Analytics team?' names one team: the decomposition's first step
('Harbor Analytics team?') is resolved by the passage that says those very words, not by the
best other team its passages name."""

from __future__ import annotations

from pathlib import Path

from graph.offline import bridge as br
from graph.protocols import HopView
from ingest.models import Hit
from tests.graph.offline_app import offline_app

POLICY = """# Team charter

## Teams

The Quarry Billing team is led by Ottilie Brandt.
The Harbor Analytics team is led by Samir Oduya.
The Lantern Support team is led by Wen Hollis.

## Systems

The Ledgerline invoicing system is owned by the Quarry Billing team.
The Crateview warehouse scanner is owned by the Lantern Support team.
The Tidewatch Relay API is owned by the Harbor Analytics team.
"""


def _hit(text: str) -> Hit:
    return Hit(
        chunk_id="c1", doc_id="d", title="charter", source="charter.md", text=text, score=1.0
    )


def _hop(sub_question: str) -> HopView:
    return HopView(sub_question=sub_question, query=sub_question)


def test_a_bare_name_and_noun_the_passage_says_is_the_entity() -> None:
    hits = [
        _hit(
            "The Quarry Billing team is led by Ottilie Brandt. The Harbor Analytics team is led by Samir Oduya."
        )
    ]
    found = br.named_by_hop(_hop("Harbor Analytics team?"), hits)
    assert found is not None and found.text == "Harbor Analytics team"


def test_not_for_a_hop_that_asks_more_or_words_no_passage_says() -> None:
    hits = [
        _hit("The Harbor Analytics team is led by Samir Oduya. Samir Oduya was born in Lisbon.")
    ]
    assert br.named_by_hop(_hop("team that owns the Tidewatch dashboard?"), hits) is None
    assert br.named_by_hop(_hop("director of Harbor Analytics?"), hits) is None
    assert br.named_by_hop(_hop("Samir Oduya born?"), hits) is None  # asks for a date
    assert br.named_by_hop(_hop("Tidewatch performer?"), hits) is None  # not said: to find
    assert br.named_by_hop(_hop("#1 team?"), hits) is None


def test_the_named_team_s_lead_is_the_answer(tmp_path: Path) -> None:
    with offline_app(tmp_path, {"charter.md": POLICY}) as app:
        for team, lead in (("Harbor Analytics", "Samir Oduya"), ("Lantern Support", "Wen Hollis")):
            first = app.ask(f"Who leads the {team} team?", web=False).answer.splitlines()[0]
            assert lead in first, first
            assert not any(
                other in first
                for other in ("Ottilie Brandt", "Samir Oduya", "Wen Hollis")
                if other != lead
            )


def test_the_sentence_naming_the_anchor_gives_the_bridge() -> None:
    """Every sentence says 'is owned by'; only the last names the system asked about."""
    hits = [_hit(POLICY.split("## Systems")[1].strip())]
    question = "Which team owns the Tidewatch Relay API?"
    hop = HopView(sub_question=question, query=question)
    assert br.candidates(hop, hits)[0].text.startswith("Harbor Analytics")


def test_which_team_and_who_leads_that_team(tmp_path: Path) -> None:
    with offline_app(tmp_path, {"charter.md": POLICY}) as app:
        result = app.ask(
            "Which team owns the Tidewatch Relay API, and who leads that team?", web=False
        )
    first = result.answer.splitlines()[0]
    assert "Samir Oduya" in first and "Ottilie Brandt" not in first, first


def test_a_chinese_that_team_is_the_team_the_question_before_asked_for() -> None:
    from graph.offline.decompose import decompose_question

    subs = decompose_question("Tidewatch 看板由哪个团队负责？该团队的负责人是谁？")
    assert [(s.question, s.depends_on) for s in subs] == [
        ("Tidewatch 看板由哪个团队负责", None),
        ("#1的负责人是谁", 1),
    ]
    other = decompose_question("哪家供应商提供冷却泵？这家供应商的电话是多少？")
    assert other[-1].question == "#1的电话是多少" and other[-1].depends_on == 1
    unrelated = decompose_question("冷却泵由哪个团队负责？该仓库的电话是多少？")
    assert all(s.depends_on != 1 for s in unrelated)  # 'that warehouse' was never asked for


def test_the_nouns_after_a_name_in_a_relative_clause_stay_with_it(tmp_path: Path) -> None:
    from graph.offline.decompose import decompose_question

    subs = decompose_question("Who leads the team that owns the Ledgerline invoicing system?")
    assert [s.question for s in subs] == [
        "team that owns the Ledgerline invoicing system?",
        "Who leads #1?",
    ]
    # not over a verb that closes the question, nor outside a relative clause
    assert decompose_question("When did the director of film Quorra Nights die?")[-1].question == (
        "When did #1 die?"
    )
    with offline_app(tmp_path, {"charter.md": POLICY}) as app:
        answer = app.ask("Who leads the team that owns the Ledgerline invoicing system?", web=False)
    first = answer.answer.splitlines()[0]
    assert "Ottilie Brandt" in first and "Samir Oduya" not in first, first


def test_a_passage_about_something_else_gives_no_bridge_by_the_relation_word_alone() -> None:
    """The anchor's own passage says who wrote it ('a novel by …', no word 'author'); another
    passage says 'author of' about another book and shares a word with the title: the
    anchor's passage gives the bridge."""
    hits = [
        Hit(chunk_id="c1", doc_id="d1", title="Gull Lantern Night",
            text="Gull Lantern Night is a 1991 mystery novel by Perrin Ashdale.", score=1.0),
        Hit(chunk_id="c2", doc_id="d2", title="Osk Varro",
            text="Osk Varro was a sailor and poet. Osk Varro is credited as the author of "
            "\"The Lantern Charts\", a guide to night harbours.", score=0.9),
        Hit(chunk_id="c3", doc_id="d3", title="Mira Tolen",
            text="Mira Tolen is a teacher and author. She wrote a study of \"The Lantern "
            "Charts\" by Osk Varro.", score=0.8),
    ]  # fmt: skip
    hop = HopView(
        sub_question="author of Gull Lantern Night?", query="author of Gull Lantern Night?"
    )
    assert br.candidates(hop, hits)[0].text == "Perrin Ashdale"
