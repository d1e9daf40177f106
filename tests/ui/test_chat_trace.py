"""Chat and Hop trace pages under AppTest, on a small real knowledge base (Milvus Lite, offline
reasoning): cited answers, follow-ups in one thread, past chats after a restart, per-user groups,
and the trace of the last answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st

from tests.ui.apptools import assert_no_exception, fetch_link, new_app, texts
from tests.ui.markdown_tokens import message_text
from ui.auth import local_user

SUPPLY = b"""# Supply contract

## Delivery
The supplier Northwind Ltd shall deliver the turbines within thirty days of the order date.

## Penalties
Late delivery of the turbines incurs a penalty of two percent of the order value per week,
capped at ten percent of the order value.
"""
SALARIES = b"""# Salary bands

## Engineering
The salary band for senior engineers is 90,000 to 120,000 euros per year.
"""
SERVICING = b"""# Maintenance plan

## Servicing
The generators are serviced every six months by Kessler Mills under a framework agreement.
"""
KESSLER = b"""# Kessler Mills

Kessler Mills is an engineering firm based in Ostrel, founded in 1931.
"""
CONTRACT_ZH = """# 供货合同

## 违约责任
逾期交付的，供方应按每周合同金额的百分之二支付违约金，累计不超过合同金额的百分之十。
""".encode()
USERS = {
    "hana": {"password": "hana-pw", "groups": ["hr"]},
    "bob": {"password": "bob-pw", "groups": []},
}


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Path:
    """Two documents ingested through the app's own runner: one public, one for group hr."""
    from ingest.pipeline import ingest_bytes
    from ui.services import get_settings, get_store

    settings, store = get_settings(), get_store()
    docs = [
        ("supply.md", SUPPLY, ["all"]),
        ("salaries.md", SALARIES, ["hr"]),
        ("供货合同.md", CONTRACT_ZH, ["all"]),
        ("maintenance.md", SERVICING, ["all"]),
        ("kessler.md", KESSLER, ["all"]),
    ]
    for name, data, groups in docs:
        result = ingest_bytes(data, name, store, groups=groups, config=settings.ingest)
        assert result.status == "ingested", result.reason
    return app_data


def ask(at, question: str):
    at.chat_input[0].set_value(question).run()
    assert_no_exception(at)
    return at


def last_answer_text(at) -> str:
    assistant = [m for m in at.chat_message if m.name == "assistant"][-1]
    return message_text(assistant)


def test_chat_answers_from_the_knowledge_base_with_citations(kb: Path) -> None:
    at = new_app().run()
    assert_no_exception(at)
    assert "extracted from your documents" in texts(at)  # no LLM configured: the note
    assert "HOPWISE_LLM_BASE_URL" in texts(at)
    assert "no documents you can read" not in texts(at)
    ask(at, "What is the penalty for late delivery of the turbines?")
    answer = last_answer_text(at)
    assert "two percent" in answer
    assert "[1]" in answer
    assert "supply.md" in answer and "Penalties" in answer  # the source card: file · section
    assert "mode: offline" in answer and "route: complex" in answer
    assert any(s.label.startswith("Answered in") for s in at.status)


def test_chinese_question_gets_a_chinese_cited_answer(kb: Path) -> None:
    at = new_app().run()
    ask(at, "逾期交付的违约金是多少？")
    answer = last_answer_text(at)
    assert "百分之二" in answer and "[1]" in answer
    assert "供货合同.md · 供货合同 > 违约责任" in answer


def test_follow_up_uses_the_thread_and_chats_survive_a_restart(kb: Path) -> None:
    at = new_app().run()
    ask(at, "Who is the supplier of the turbines?")
    assert "Northwind" in last_answer_text(at)
    ask(at, "And within how many days must they deliver?")
    assert "thirty days" in last_answer_text(at)
    assert len([m for m in at.chat_message if m.name == "assistant"]) == 2

    st.cache_resource.clear()  # a restart: the runner (and its SQLite connection) is rebuilt
    again = new_app().run()
    assert_no_exception(again)
    titles = [b.label for b in again.sidebar.button]
    assert "Who is the supplier of the turbines?" in titles
    thread_button = next(b for b in again.sidebar.button if b.label.startswith("Who is the"))
    thread_button.click().run()
    assert len([m for m in again.chat_message if m.name == "assistant"]) == 2
    again.sidebar.button(key="new_chat").click().run()
    assert not again.chat_message


def test_trace_shows_the_last_answers_hops(kb: Path) -> None:
    at = new_app().run()
    ask(at, "What is the penalty for late delivery of the turbines?")
    trace_buttons = [b for b in at.button if b.label.startswith("Open hop trace")]
    trace_buttons[-1].click().run()
    assert_no_exception(at)
    assert "Hop trace" in texts(at)
    assert at.selectbox(key="trace_answer").value == 0
    shown = texts(at)
    assert "What is the penalty for late delivery of the turbines?" in shown
    assert "Query sent:" in shown and "Stop reason:" in shown
    assert "First searched for “" in shown and "The answer cites " in shown  # in words, first
    dot = at.get("graphviz_chart")[0].proto.spec
    assert '"retrieve_hop" [label="retrieve_hop\\n' in dot  # annotated with its duration
    assert '"search_web" [label="search_web"];' in dot  # not on the path: plain
    steps, hits = at.dataframe[0].value, at.dataframe[1].value
    assert list(steps["node"])[:2] == ["route_question", "decompose_question"]
    assert set(steps["mode"]) <= {"offline", "code"} and steps["LLM calls"].sum() == 0
    assert {"rank", "where", "bm25", "dense", "fused", "status"} <= set(hits.columns)
    assert "chunk_id" not in hits.columns and "None" not in hits.to_string()
    assert any(where.startswith("supply.md") for where in hits["where"])
    assert set(hits["status"]) <= {"new", "duplicate"}
    assert "cited" in hits.columns and any(c.startswith("[") for c in hits["cited"])
    claims = [e for e in at.expander if e.label.startswith("Claim check:")]
    assert claims and "the check does not judge whether they answer" in texts(at)
    got = fetch_link(at, "Download trace JSON", local_user())
    assert got.mime == "application/json" and got.file_name.endswith("-1.json")
    saved = json.loads(got.data)
    assert saved["question"] == "What is the penalty for late delivery of the turbines?"
    assert saved["trace"] and "bm25" in json.dumps(saved)  # the local operator sees scores


def test_chat_searches_only_the_users_groups(kb: Path) -> None:
    at = new_app(users=USERS).run()
    assert "Sign in" in texts(at)
    form = at.sidebar
    form.text_input[0].set_value("bob")
    form.text_input[1].set_value("wrong")
    at.sidebar.button[0].click().run()
    assert "Wrong credentials" in texts(at)
    at.sidebar.text_input[1].set_value("bob-pw")
    at.sidebar.button[0].click().run()
    assert "Signed in as **bob**" in texts(at)
    ask(at, "What is the salary band for senior engineers?")
    assert "salaries.md" not in last_answer_text(at)

    hana = new_app(users=USERS).run()
    hana.sidebar.text_input[0].set_value("hana")
    hana.sidebar.text_input[1].set_value("hana-pw")
    hana.sidebar.button[0].click().run()
    ask(hana, "What is the salary band for senior engineers?")
    answer = last_answer_text(hana)
    assert "salaries.md" in answer and "90,000" in answer
    # hana's chats are hers: bob's thread is not listed for her
    assert all(
        "salary" in b.label.lower() for b in hana.sidebar.button if b.key.startswith("thread_")
    )


def test_trace_json_is_the_result(kb: Path) -> None:
    from ui.formatting import trace_json
    from ui.services import get_runner

    runner = get_runner()
    thread = runner.list_threads()[0]
    result = runner.thread_answers(thread["thread_id"])[-1]
    data = json.loads(trace_json(result))
    assert data["thread_id"] == thread["thread_id"] and data["hops"] == result.to_json()["hops"]


def test_a_trace_link_opens_that_answer_but_not_another_users_chat(kb: Path) -> None:
    from ui.services import get_runner

    runner = get_runner()
    runner.ask("Who is the supplier of the turbines?", thread_id="local:older", owner="local")
    runner.ask("What is the penalty for late delivery?", thread_id="local:newer", owner="local")
    private = "Which salary band applies to senior engineers?"
    runner.ask(private, groups=("all", "hr"), thread_id="hana:private", owner="hana")
    first_thread, first_question = "local:older", "Who is the supplier of the turbines?"
    at = new_app()
    at.query_params.update({"thread": first_thread, "answer": "1"})
    at.run().switch_page("app_pages/trace.py").run()
    assert_no_exception(at)
    assert at.selectbox(key="trace_thread").value == first_thread
    assert at.subheader[0].value == first_question
    # picking another chat, then another answer, follows the pick (the URL follows it too)
    at.selectbox(key="trace_thread").set_value("local:newer").run()
    assert_no_exception(at)
    assert at.subheader[0].value == "What is the penalty for late delivery?"
    assert at.query_params["thread"] == "local:newer"
    runner.ask("And who pays it?", thread_id="local:newer", owner="local")
    at.run()
    at.selectbox(key="trace_answer").set_value(0).run()
    assert at.subheader[0].value == "What is the penalty for late delivery?"
    at.selectbox(key="trace_answer").set_value(1).run()
    assert at.subheader[0].value == "And who pays it?"
    assert at.query_params["answer"] == "2"
    at.run()  # another run with that URL stays put
    assert at.subheader[0].value == "And who pays it?"

    hana_thread = "hana:private"
    bob = new_app(users=USERS)
    bob.query_params.update({"thread": hana_thread, "answer": "1"})
    bob.run()
    bob.sidebar.text_input[0].set_value("bob")
    bob.sidebar.text_input[1].set_value("bob-pw")
    bob.sidebar.button[0].click().run()
    bob.switch_page("app_pages/trace.py").run()
    assert_no_exception(bob)
    options = " ".join(str(box.options) for box in bob.selectbox)
    assert hana_thread not in options and private not in options
    assert private not in texts(bob) and "90,000" not in texts(bob)


def test_trace_shows_the_bridge_candidates_and_why_the_entity_won(kb: Path) -> None:
    at = new_app().run()
    ask(at, "Where is the firm that services the generators based?")
    answer = [m for m in at.chat_message if m.name == "assistant"][-1]
    assert "Ostrel" in "\n".join(str(x.value) for x in answer.markdown)
    next(b for b in at.button if b.label.startswith("Open hop trace")).click().run()
    assert_no_exception(at)
    shown = texts(at)
    assert "Bridge entity: **Kessler Mills**" in shown
    tables = [d.value for d in at.dataframe if "candidate" in d.value.columns]
    assert tables and tables[0]["candidate"].iloc[0] == "Kessler Mills"
    assert {"score", "found in hits", "search confirmed"} <= set(tables[0].columns)


def test_open_hop_trace_puts_the_answer_in_the_address_and_the_address_opens_it(
    kb: Path,
) -> None:
    """Issue 46, item 5: the address names the page's answer, so a copied address opens it."""
    at = new_app().run()
    ask(at, "What is the penalty for late delivery of the turbines?")
    ask(at, "Who is the supplier of the turbines?")
    [b for b in at.button if b.label.startswith("Open hop trace")][0].click().run()
    assert_no_exception(at)
    thread = at.query_params["thread"]
    assert at.query_params["answer"] == "1" and thread
    pasted = new_app()  # the copied address in a new tab
    pasted.query_params.update({"thread": thread, "answer": "1"})
    pasted.run().switch_page("app_pages/trace.py").run()
    assert_no_exception(pasted)
    assert pasted.subheader[0].value == "What is the penalty for late delivery of the turbines?"
