"""The pure display helpers over a QuestionResult: badges, source cards, status, DOT, timeline."""

from __future__ import annotations

from graph.result import QuestionResult, TraceEvent
from ui.formatting import (
    StatusNarrator,
    badges,
    hit_rows,
    source_cards,
    state_machine_dot,
    timeline_rows,
)


def event(node: str, started: float, ms: float, calls: int = 0, **details: object) -> TraceEvent:
    return TraceEvent.model_validate(
        {
            "node": node,
            "started_ms": started,
            "ended_ms": started + ms,
            "duration_ms": ms,
            "llm_calls": calls,
            "tokens": 10 * calls,
            "mode": "llm",
            "details": details,
        }
    )


RESULT = QuestionResult.model_validate(
    {
        "question": "q",
        "answer": "It is two percent [1], see [2].",
        "mode": "degraded",
        "route": "complex",
        "hops": [
            {
                "hop": 1,
                "sub_question": "s",
                "query": "s",
                "hits": [
                    {
                        "chunk_id": "c1",
                        "doc": "Supply",
                        "source": "supply.md",
                        "section": "Penalties",
                        "page": 2,
                        "bm25": 1.23456,
                        "dense": None,
                        "fused": 0.5,
                        "new": True,
                    },
                    {
                        "chunk_id": "c2",
                        "doc": "Supply",
                        "source": "supply.md",
                        "section": "",
                        "page": None,
                        "bm25": 0.5,
                        "dense": 0.2,
                        "fused": 0.1,
                        "new": False,
                    },
                ],
            }
        ],
        "evidence": [
            {"n": 1, "chunk_id": "c1", "source": "supply.md", "text": "FULL CHUNK TEXT"},
            {"n": 2, "url": "https://example.org/x", "source": "example.org", "text": "snippet"},
        ],
        "citations": [
            {
                "n": 1,
                "chunk_id": "c1",
                "url": None,
                "source": "supply.md",
                "section": "Penalties",
                "page": 2,
                "quote": "two percent",
            },
            {
                "n": 2,
                "chunk_id": None,
                "url": "https://example.org/x",
                "source": "example.org",
                "section": "",
                "page": None,
                "quote": "snippet",
            },
        ],
        "web_used": True,
        "llm_calls": 3,
        "total_ms": 1534.0,
        "trace": [
            event("route_question", 0, 10, 1, route="complex"),
            event(
                "decompose_question",
                10,
                20,
                1,
                sub_questions=[{"id": 1, "question": "q1"}, {"id": 2, "question": "q2 of #1"}],
            ),
            event("retrieve_hop", 30, 5, hops=[{"hop": 1, "sub_question_id": 1}]),
            event("plan_next_step", 35, 1, action="retrieve"),
            event("retrieve_hop", 36, 5, hops=[{"hop": 2, "sub_question_id": 2}]),
            event("plan_next_step", 41, 1, action="evaluate"),
            event("evaluate_evidence", 42, 3, 0, enough=False),
            event("search_web", 45, 100),
            event("evaluate_evidence", 145, 3, enough=True),
            event("generate_answer", 148, 50, 1),
        ],
    }
)


def test_badges_name_route_hops_web_mode_time_and_calls() -> None:
    line = badges(RESULT)
    for part in (
        "route: complex",
        "hops: 1",
        "web: used",
        "mode: degraded",
        "1.5 s",
        "LLM calls: 3",
    ):
        assert part in line
    assert ":orange-badge[mode: degraded]" in line


def test_source_cards_carry_location_quote_link_and_full_chunk() -> None:
    local, web = source_cards(RESULT)
    assert local["where"] == "supply.md · Penalties · p. 2"
    assert local["quote"] == "two percent" and local["full_text"] == "FULL CHUNK TEXT"
    assert web["url"] == "https://example.org/x" and web["chunk_id"] is None


def test_hit_rows_show_where_scores_and_new_or_duplicate_never_none() -> None:
    rows = hit_rows(RESULT.hops[0])
    assert rows[0]["bm25"] == "1.235" and rows[0]["dense"] == "" and rows[0]["status"] == "new"
    assert rows[1]["status"] == "duplicate" and rows[1]["where"].startswith("supply.md")
    assert all("chunk_id" not in row for row in rows)
    assert "None" not in str(rows)
    assert list(rows[0])[:4] == ["rank", "where", "fused", "status"]  # what a phone shows first
    hidden = hit_rows(RESULT.hops[0].model_copy(update={
        "hits": [h.model_copy(update={"fused": None}) for h in RESULT.hops[0].hits]
    }))  # fmt: skip
    assert list(hidden[0]) == ["rank", "where", "status", "section"]
    assert rows[0]["where"] == "supply.md · p. 2" and rows[0]["section"] == "Penalties"


def test_status_names_the_sub_question_searched_not_a_growing_count() -> None:
    narrator = StatusNarrator(web_allowed=True)
    labels = [narrator.after(e) for e in RESULT.trace]
    assert labels[0] == "Decomposing into sub-questions…"
    assert labels[1].startswith("Searching the documents (part 1 of 2): “")
    assert labels[2] == "Deciding what to look up next…"
    assert labels[3] == "Searching the documents (part 2 of 2): “q2 of …”…"
    assert labels[6] == "Searching the web…" and labels[8] == "Writing the answer…"
    assert not any("of 1" in str(label) for label in labels)
    follow = StatusNarrator()
    follow.after(event("decompose_question", 0, 1, sub_questions=[{"id": 1, "question": "Who?"}]))
    follow.after(event("retrieve_hop", 1, 1, hops=[{"sub_question_id": 1}]))
    again = follow.after(event("plan_next_step", 2, 1, action="retrieve"))
    assert again == "Searching the documents again, for what is still missing…"
    hostile = StatusNarrator()
    label = hostile.after(
        event("decompose_question", 0, 1, sub_questions=[{"question": "![x](http://e/) of #1"}])
    )
    assert "![x](" not in str(label) and "#1" not in str(label)
    offline = StatusNarrator(web_allowed=False)
    assert offline.after(event("evaluate_evidence", 0, 1, enough=False)) == "Writing the answer…"


def test_dot_highlights_the_taken_path_with_durations_and_counts() -> None:
    dot = state_machine_dot(RESULT.trace)
    assert '"retrieve_hop" [label="retrieve_hop\\n10 ms ×2"' in dot
    assert '"answer_directly" [label="answer_directly"];' in dot  # not taken: plain
    taken = '"search_web" -> "evaluate_evidence" [color="#2b6cb0"'
    assert taken in dot
    assert '"plan_next_step" -> "retrieve_hop" [label="retrieve", color=' in dot
    assert '"route_question" -> "answer_directly" [label="simple"];' in dot


def test_dot_draws_an_undesigned_transition_dashed() -> None:
    dot = state_machine_dot([event("route_question", 0, 1), event("generate_answer", 1, 1)])
    assert '"route_question" -> "generate_answer" [color="#2b6cb0", penwidth=2.5' in dot
    assert "style=dashed" in dot


def test_timeline_uses_recorded_offsets() -> None:
    rows = timeline_rows(RESULT.trace)
    assert rows[7]["step"] == "08 search_web"
    assert (rows[7]["start_ms"], rows[7]["end_ms"]) == (45, 145)
    assert sum(r["llm_calls"] for r in rows) == 3


def test_stop_reasons_read_as_words_with_the_raw_value_kept() -> None:
    from ui.formatting import stop_text

    assert stop_text("no_new_evidence") == "the last search found nothing new (no_new_evidence)"
    assert stop_text("") == "—" and stop_text("something_new") == "something_new"


def test_source_cards_stack_in_citation_order_on_a_phone() -> None:
    """Cards go in rows of two: a narrow screen stacks each row's columns, so the page reads
    [1], [2], [3], [4] top to bottom (one column per side would stack [1], [3], [2], [4])."""
    from streamlit.testing.v1 import AppTest

    def page() -> None:
        from graph.result import QuestionResult
        from ui.widgets import answer_block

        cited = [
            {"n": n, "url": f"https://example.org/{n}", "source": "example.org", "quote": f"q{n}"}
            for n in (1, 2, 3, 4)
        ]
        result = QuestionResult.model_validate(
            {
                "question": "q",
                "answer": "a [1] [2] [3] [4]",
                "evidence": [{**c, "text": c["quote"]} for c in cited],
                "citations": cited,
            }
        )
        answer_block(result, thread_id="t", index=0)

    at = AppTest.from_function(page, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    order = [h.value for h in at.subheader]  # each card's heading, in page order
    assert order == ["\\[1\\]", "\\[2\\]", "\\[3\\]", "\\[4\\]"]


def chain_result(**extra: object) -> QuestionResult:
    """Two steps: which team owns a system, then who leads that team (bridged)."""
    hit = {"doc": "Systems", "source": "systems.md", "section": "", "new": True}
    return QuestionResult.model_validate(
        {
            "question": "Who leads the team that owns the billing system?",
            "route": "complex",
            "sub_questions": [
                {"id": 1, "question": "Which team owns the billing system?"},
                {"id": 2, "question": "Who leads #1?", "depends_on": 1},
            ],
            "hops": [
                {
                    "hop": 1, "sub_question": "Which team owns the billing system?",
                    "query": "team owns billing system",
                    "hits": [{**hit, "chunk_id": "s1"}],
                    "evidence": [{"chunk_id": "s1", "text": "Ledger team owns billing."}],
                },
                {
                    "hop": 2, "sub_question": "Who leads Ledger team?", "query": "leads Ledger",
                    "bridged": True, "bridge": {"chosen_entity": "Ledger team"},
                    "hits": [{**hit, "chunk_id": "t1", "source": "teams.md"}],
                    "evidence": [{"chunk_id": "t1", "text": "Ana leads the Ledger team."}],
                },
            ],
            "evaluation": {"enough": True},
            "citations": [
                {"n": 1, "chunk_id": "s1", "source": "systems.md"},
                {"n": 2, "chunk_id": "t1", "source": "teams.md"},
            ],
            **extra,
        }
    )  # fmt: skip


def test_the_plain_summary_tells_the_path_in_words() -> None:
    from ui.formatting import plain_summary

    text = plain_summary(chain_result())
    assert text.startswith("The question was split into 2 parts, searched in order.")
    assert (
        "First searched for “Which team owns the billing system?”; found it in systems.md; "
        "the answer cites [1] from this step." in text
    )
    assert "Then searched for “Who leads Ledger team?”, using “Ledger team” from the step" in text
    assert "found it in teams.md" in text and "judged enough" in text
    assert text.endswith("The answer cites 2 passages of systems.md and teams.md.")
    failed = plain_summary(chain_result(evaluation={"enough": False, "missing": ["a phone"]},
                                        web_error="x", citations=[]))  # fmt: skip
    assert "Still missing: a phone." in failed and "The web search was unavailable." in failed
    assert failed.endswith("The answer cites no passage.")
    simple = QuestionResult.model_validate({"question": "hi", "route": "simple"})
    assert plain_summary(simple) == "Answered directly: this question did not need the documents."


def test_the_trace_says_which_steps_the_answers_citations_came_from() -> None:
    """A step whose passages the answer does not cite says so, in the summary and in its hits
    table (a second hop that looked up the wrong thing is not the path the answer took)."""
    from ui.formatting import cited_chunks, hit_rows, plain_summary

    result = chain_result(citations=[{"n": 1, "chunk_id": "s1", "source": "systems.md"}])
    text = plain_summary(result)
    assert "found it in systems.md; the answer cites [1] from this step." in text
    assert "found it in teams.md; the answer does not use what this step found." in text
    cited = cited_chunks(result)
    assert [row["cited"] for row in hit_rows(result.hops[0], cited=cited)] == ["[1]"]
    assert [row["cited"] for row in hit_rows(result.hops[1], cited=cited)] == [""]
    assert "cited" not in hit_rows(result.hops[0])[0]  # no column without the answer's citations


def test_the_claim_rows_say_what_was_checked() -> None:
    from ui.formatting import claim_rows

    claims = [
        {"claim": "Ana leads the\nLedger team.", "cites": [2], "verdict": "supported",
         "why": "facts found"},
        {"claim": "It has 9 people.", "cites": [], "verdict": "uncited", "why": "states 9"},
    ]  # fmt: skip
    result = chain_result(trace=[{"node": "check_claims", "details": {"claims": claims}}])
    assert claim_rows(result) == [
        {"claim": "Ana leads the Ledger team.", "cites": "[2]", "verdict": "supported",
         "why": "facts found"},
        {"claim": "It has 9 people.", "cites": "", "verdict": "uncited", "why": "states 9"},
    ]  # fmt: skip
    assert claim_rows(chain_result()) == []


def test_the_plain_summary_says_the_entity_where_the_step_wrote_a_placeholder() -> None:
    from ui.formatting import plain_summary

    result = chain_result()
    result.hops[1].sub_question = "Who leads #1?"
    text = plain_summary(result)
    assert "Then searched for “Who leads Ledger team?”, using “Ledger team”" in text
    assert "#1" not in text
    result.hops[1].bridged = False
    assert "Then searched for “Who leads what step 1 found?”" in plain_summary(result)


def test_the_plain_summary_says_what_the_claim_check_found_in_plain_words() -> None:
    from ui.formatting import plain_summary

    def checked(n: int, **more: object) -> QuestionResult:
        details = {"checked": n, "removed": 0, "fell_back": False, "claims": [], **more}
        return chain_result(trace=[{"node": "check_claims", "details": details}])

    assert plain_summary(checked(1)).endswith(
        "The values and names of its one claim are in the passage it cites."
    )
    assert plain_summary(checked(3)).endswith(
        "The values and names of all 3 claims are in the passages they cite."
    )
    rerun = {"offline_rerun": {"hops": 2, "sub_questions": [], "stop_reason": "enough"}}
    replaced = plain_summary(checked(2, fell_back=True, **rerun))
    assert replaced.endswith(
        "The model's answer failed the check of its 2 claims against their sources, so offline "
        "reasoning asked the whole question again (2 hops) and its answer is shown."
    )
    unwritten = plain_summary(checked(1, fell_back=True, unwritten=True, **rerun))
    assert unwritten.endswith(
        "The model could not write the answer; the claim check stood in: offline reasoning asked "
        "the whole question again (2 hops) and its answer is shown."
    )


def test_the_plain_summary_shows_document_text_as_text() -> None:
    from tests.ui.markdown_tokens import live_parts
    from ui.formatting import plain_summary

    hostile = chain_result()
    hostile.hops[0].sub_question = "![x](http://127.0.0.1:9/p.png) <b>bold</b> [link](http://e.x)"
    text = plain_summary(hostile)
    assert not live_parts(text)


def test_every_stop_reason_the_graph_can_give_has_words() -> None:
    from typing import get_args

    from graph.state import StopReason
    from ui.formatting import STOP_TEXT, stop_text

    reasons = [r for r in get_args(StopReason) if r]
    assert len(reasons) >= 9 and set(reasons) == set(STOP_TEXT)
    assert stop_text("") == "—" and stop_text("deadline").endswith("(deadline)")
