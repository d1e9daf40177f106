"""Access control across every path a reader has: `hopwise search` and `hopwise ask`
(subprocesses), Hopwise.ask offline and with the LLM over the stub server, the chat page and the
eval harness. Two documents are readable by group `finance` only; readers without it ask about
them in many ways, including quoting their text verbatim. Nothing restricted may appear in hits,
evidence, citations, answers, traces, web queries, logs, LLM requests or the checkpoint file."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st

from graph.offline import OfflineReasoner
from graph.protocols import WebResult
from hopwise.app import Hopwise, open_checkpointer, open_store
from hopwise.settings import Settings, load_settings
from ingest.pipeline import ingest_bytes
from ingest.store import MilvusStore
from tests.fakes.hash_embedder import HashEmbedder
from tests.fakes.openai_stub import StubOpenAIServer, plausible_responder
from tests.fakes.web import FakeWebSearch
from tests.reliability.conftest import cli_env, run_cli
from tests.reliability.leaks import LEDGER, leaked
from tests.ui.apptools import assert_no_exception, new_app

INJECTION = 'all" or 1==1 or "'

PUBLIC = {
    "orion-handbook.md": """# Orion Handbook

## Office
The Orion project office is in Lisbon and opens at nine every weekday.

## Budget
The Orion budget review happens every March with the finance team.

## Vault
The Orion archive vault stores paper contracts; facilities issue its access code.
""",
    "赤霄项目简介.md": """# 赤霄项目简介

赤霄项目由上海团队负责，项目例会每周三召开。

赤霄项目的预算由财务部审核，合作方名单由法务部维护。
""",
}
RESTRICTED = {
    "falcon-ledger-zqx.md": """# Falcon Vault Ledger

## Codes
The Falcon vault access code is QZX-7731-VAULT.

## Prices
The Falcon acquisition price was 48,213,907 euros, approved in March.

## Partners
Project Orion's hidden partner is Kestrel Dynamics ZQXMARK1.

## Audit
Auditor note: the ledger seal is LX-5520-OMEGA.
""",
    "玄武备忘录-zqx.md": """# 玄武并购备忘录

赤霄项目的收购价格为九千七百万元，代号玄武零七。

赤霄项目的秘密合作方是青鸾科技ZQXMARK2。

审计印章为白泽九九。
""",
}
# Distinctive strings of the restricted documents: values, markers, titles, source names.
SECRETS = [
    "QZX-7731-VAULT", "48,213,907", "Kestrel Dynamics", "ZQXMARK1", "ZQXMARK2",
    "LX-5520-OMEGA", "Falcon Vault Ledger", "vault access code is", "hidden partner is",
    "falcon-ledger-zqx", "玄武并购备忘录", "九千七百万元", "玄武零七", "青鸾科技", "白泽九九",
    "秘密合作方是", "玄武备忘录-zqx",
]  # fmt: skip
QUESTIONS = [
    "What is the Falcon vault access code?",
    "Falcon acquisition price",
    "Who is Project Orion's hidden partner?",
    "Kestrel Dynamics",
    "QZX-7731-VAULT",
    "The Falcon vault access code is QZX-7731-VAULT.",
    "The Falcon acquisition price was 48,213,907 euros, approved in March.",
    "Project Orion's hidden partner is Kestrel Dynamics ZQXMARK1.",
    "ZQXMARK1",
    "Falcon Vault Ledger",
    "What does the Falcon Vault Ledger say about prices and partners?",
    "Where is the Orion vault and what is its access code?",
    "When is the Orion budget review and what was the acquisition price?",
    "codes prices partners audit seal",
    "vault ledger acquisition euros approved March",
    "Which partner did Orion hide, and where is its office?",
    "赤霄项目的收购价格是多少？",
    "玄武零七是什么代号？",
    "赤霄项目的秘密合作方是谁？",
    "赤霄项目的收购价格为九千七百万元，代号玄武零七。",
    "青鸾科技ZQXMARK2",
    "玄武并购备忘录",
    "赤霄项目的预算由谁审核，收购价格是多少？",
    "收购 价格 代号 合作方 审计",
    "赤霄项目的合作方和例会时间是什么？",
]
READERS = [["all"], ["staff", "ops"]]


class Corpus:
    """The data dir, and every id the restricted documents got (doc ids, chunk ids)."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.secret_ids: list[str] = []

    @property
    def secrets(self) -> list[str]:
        return SECRETS + self.secret_ids

    def never_typed(self, questions: list[str]) -> list[str]:
        """Secrets no question quoted: these may not appear anywhere, the saved chats included."""
        return [s for s in self.secrets if not any(s.lower() in q.lower() for q in questions)]


def settings_for(data: Path, **overrides: Any) -> Settings:
    return load_settings(**{"data_dir": data, "web_search": False, **overrides})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """Public and finance-only documents in an embedded store, closed again (so `hopwise`
    subprocesses can open it)."""
    data = tmp_path_factory.mktemp("acl") / "data"
    with pytest.MonkeyPatch.context() as mp:
        import os

        for key in list(os.environ):
            if key.startswith("HOPWISE_"):
                mp.delenv(key, raising=False)
        mp.setenv("HOPWISE_DATA_DIR", str(data))
        mp.setenv("HOPWISE_WEB_SEARCH", "off")
        settings = settings_for(data)
        found = Corpus(data)
        with open_store(settings) as store:
            for docs, groups in ((PUBLIC, ["all"]), (RESTRICTED, ["finance"])):
                for name, text in docs.items():
                    result = ingest_bytes(
                        text.encode(), name, store, groups=groups, config=settings.ingest
                    )
                    assert result.status == "ingested", result.reason
                    if groups == ["finance"]:
                        found.secret_ids.append(str(result.doc_id))
                        found.secret_ids += [c.chunk_id for c in store.get_chunks(result.doc_id)]
        yield found


def seen_in(result: Any) -> str:
    """Everything a result (or any JSON-like value) shows, as one string to search."""

    def plain(value: Any) -> Any:
        return value.model_dump(mode="json") if hasattr(value, "model_dump") else str(value)

    return json.dumps(result, ensure_ascii=False, default=plain)


def assert_no_leak(path: str, seen: str, corpus: Corpus, asked: str = "") -> None:
    found = LEDGER.check(path, seen, corpus.secrets, asked)
    assert not found, f"{path} leaked {found} for {asked!r}"


# ---- the CLI, as subprocesses (the store is closed in this process meanwhile) ---------------


def test_cli_search_and_ask_leak_nothing(corpus: Corpus) -> None:
    env = cli_env(corpus.data)
    quoted = "The Falcon vault access code is QZX-7731-VAULT."
    search = run_cli("-v", "search", quoted, "--groups", "staff", "--json", env=env)
    assert search.returncode == 0, search.stderr
    hits = json.loads(search.stdout)
    assert hits and all(h["doc_id"] not in corpus.secret_ids for h in hits)
    assert_no_leak("cli-search", search.stdout + search.stderr, corpus, quoted)

    asked = "赤霄项目的收购价格为九千七百万元，代号玄武零七。合作方是谁？"
    ask = run_cli("-v", "ask", asked, "--groups", "staff,ops", "--json", "--no-web", env=env)
    assert ask.returncode == 0, ask.stderr
    assert_no_leak("cli-ask", ask.stdout + ask.stderr, corpus, asked)
    result = json.loads(ask.stdout)
    assert result["groups"] == ["staff", "ops"] and result["answer"]


@pytest.mark.slow  # ~9 s of CLI subprocesses: in .ci/run's slow suite
def test_cli_rejects_a_filter_injection_in_groups_and_doc_ids(corpus: Corpus) -> None:
    env = cli_env(corpus.data)
    search = run_cli("search", "QZX-7731-VAULT", "--groups", INJECTION, "--json", env=env)
    assert search.returncode != 0 and "invalid group name" in search.stderr
    assert len(search.stderr.strip().splitlines()) == 1 and "Traceback" not in search.stderr
    assert_no_leak("cli-search-injection", search.stdout, corpus)

    delete = run_cli("docs", "delete", 'x" or doc_id != "', env=env)
    assert delete.returncode == 1 and "no document" in delete.stderr


# ---- in process: the store, Hopwise offline and with the LLM, logs, the checkpoint file ----


CRAFTED_IDS = [
    'x" or doc_id != "',
    "x' or doc_id != '",
    '\\" or doc_id != \\"',
    "x\\",
    'x") or (true',
]


def test_crafted_doc_ids_cannot_widen_a_filter(corpus: Corpus) -> None:
    """Every value in a Milvus expression is quoted: ids built to break out of the quotes match
    nothing, delete nothing, and a crafted group name is refused before any search."""
    store_settings = settings_for(corpus.data)
    with open_store(store_settings) as store:
        before = [d.doc_id for d in store.list_documents()]
        assert len(before) == len(PUBLIC) + len(RESTRICTED)  # nothing deleted by the CLI test
        for doc_id in CRAFTED_IDS:
            assert store.get_document(doc_id) is None and store.get_chunks(doc_id) == []
            assert store.delete_document(doc_id) == 0
        assert [d.doc_id for d in store.list_documents()] == before
        with pytest.raises(ValueError, match="invalid group name"):
            store.search("QZX-7731-VAULT", [INJECTION])
        with pytest.raises(ValueError, match="invalid group name"):  # `hopwise ask --groups`
            Hopwise(store_settings, store, OfflineReasoner()).ask("QZX", groups=[INJECTION])


def test_store_search_enforces_groups_for_every_query(corpus: Corpus) -> None:
    with open_store(settings_for(corpus.data)) as store:
        sweep(store, corpus, "store-search")


def test_hybrid_search_enforces_groups_in_both_channels(corpus: Corpus) -> None:
    """The dense channel carries the same filter: a hybrid store over the same documents."""
    settings = settings_for(corpus.data)
    with open_store(settings, embedder=HashEmbedder(64)) as store:
        assert store.collection != "hopwise_chunks"  # its own collection, dense vectors in it
        for docs, groups in ((PUBLIC, ["all"]), (RESTRICTED, ["finance"])):
            for name, text in docs.items():
                result = ingest_bytes(
                    text.encode(), name, store, groups=groups, config=settings.ingest
                )
                assert result.status in {"ingested", "skipped"}, result.reason
        sweep(store, corpus, "hybrid-search", readers=[["staff"]])


def test_background_vectors_carry_the_acl(corpus: Corpus) -> None:
    """The built-in model's vectors live beside the chunks; its dense requests are filtered
    too. The vectors of every document, restricted ones included, are filled first."""
    from ingest.vectors import EmbeddingWorker, wait_until_complete

    with open_store(settings_for(corpus.data)) as store:
        assert store.vectors is not None  # the default: built-in embeddings
        assert wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=300)
        restricted = store.vectors.count(
            " or ".join(f'doc_id == "{doc_id}"' for doc_id in sorted(corpus.secret_ids))
        )
        assert restricted > 0  # the restricted vectors exist: only the filter keeps them out
        sweep(store, corpus, "background-vectors-search")


def sweep(store: MilvusStore, corpus: Corpus, path: str, readers=READERS) -> None:
    """Every question for every reader, then the positive control for finance."""
    for question in QUESTIONS:
        for groups in readers:
            hits = store.search(question, groups, k=20)
            assert all(h.doc_id not in corpus.secret_ids for h in hits)
            seen = seen_in({"hits": [h.model_dump() for h in hits]})
            assert_no_leak(path, seen, corpus, question)
    allowed = store.search("QZX-7731-VAULT", ["finance"], k=5)
    assert allowed and allowed[0].doc_id in corpus.secret_ids


def test_offline_ask_leaks_nothing_anywhere(
    corpus: Corpus, caplog: pytest.LogCaptureFixture
) -> None:
    """Many questions, web fallback on (fake, recording its queries), every log line captured;
    afterwards the SQLite checkpoint file holds no restricted string no one typed."""
    caplog.set_level(logging.DEBUG)
    settings = settings_for(corpus.data, web_search=True)
    web = FakeWebSearch([WebResult(title="Lisbon", url="https://example.org", snippet="Lisbon")])
    app = Hopwise(
        settings, open_store(settings), OfflineReasoner(), web,
        open_checkpointer(settings.checkpoint_path),
    )  # fmt: skip
    try:
        typed = ""  # one conversation: follow-ups may reuse what the reader typed before
        for question in QUESTIONS:
            web.queries.clear()
            caplog.clear()
            typed += "\n" + question
            result = app.ask(question, groups=["staff"], thread_id="acl-offline")
            seen = "\n".join([seen_in(result), *web.queries, caplog.text])
            assert_no_leak("ask-offline", seen, corpus, typed)
        finance = Hopwise(settings, app.retriever, OfflineReasoner())  # chats kept in memory
        granted = finance.ask("What is the Falcon vault access code?", groups=["finance"])
        assert "QZX-7731-VAULT" in granted.answer  # positive control
    finally:
        app.close()
    saved = b"".join(p.read_bytes() for p in corpus.data.glob("conversations.sqlite*"))
    never = corpus.never_typed([*QUESTIONS, "合作方是谁"])
    assert "LX-5520-OMEGA" in never and "白泽九九" in never and corpus.secret_ids[0] in never
    assert saved and [s for s in never if s.encode() in saved] == []


def test_llm_ask_sends_nothing_restricted_to_the_model(corpus: Corpus) -> None:
    with StubOpenAIServer(responder=plausible_responder) as stub:
        settings = settings_for(
            corpus.data, llm_base_url=stub.url, llm_model="stub", llm_api_key="k",
            llm_max_retries=0, llm_economy=False,
        )  # fmt: skip
        app = Hopwise.from_settings(settings)
        try:
            for question in QUESTIONS[::3]:
                stub.requests.clear()
                result = app.ask(question, groups=["staff"])
                assert result.mode == "llm", result.trace
                prompts = "\n".join(r.prompt_text for r in stub.requests)
                assert prompts, "the model was never asked"
                assert_no_leak("ask-llm", seen_in(result) + prompts, corpus, question)
        finally:
            app.close()


def test_eval_harness_reads_only_its_own_index(corpus: Corpus, tmp_path: Path) -> None:
    """The harness takes no reader groups: it indexes its dataset into a separate database
    (groups all) and never opens the knowledge base, so nothing of it can surface."""
    from hopwise.evaluation import evaluate

    prefix = tmp_path / "mini"
    passages = [
        {"id": "p1", "title": "Orion", "text": "The Orion office is in Lisbon."},
        {"id": "p2", "title": "Lisbon", "text": "Lisbon is the capital of Portugal."},
    ]
    question = {
        "id": "q1", "question": "What is the Falcon vault access code near the Orion office?",
        "answer": "Lisbon", "supporting_ids": ["p1"], "lang": "en",
    }  # fmt: skip
    Path(f"{prefix}.corpus.jsonl").write_text("\n".join(json.dumps(p) for p in passages))
    Path(f"{prefix}.questions.jsonl").write_text(json.dumps(question))
    result = evaluate(prefix, settings_for(corpus.data), mode="adaptive")
    assert_no_leak("eval", seen_in(result.report), corpus, question["question"])


# ---- the chat page ------------------------------------------------------------------------


@pytest.fixture
def chat_env(corpus: Corpus) -> Iterator[None]:
    users = {"bob": {"password": "bob-pw", "groups": ["staff"]}}
    with pytest.MonkeyPatch.context() as mp:
        import os

        for key in list(os.environ):
            if key.startswith("HOPWISE_"):
                mp.delenv(key, raising=False)
        mp.setenv("HOPWISE_DATA_DIR", str(corpus.data))
        mp.setenv("HOPWISE_WEB_SEARCH", "off")
        mp.setenv("HOPWISE_USERS", json.dumps(users))
        mp.chdir(corpus.data.parent)
        st.cache_resource.clear()
        try:
            yield
        finally:
            st.cache_resource.clear()


def page_text(at: Any) -> str:
    parts: list[Any] = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "code", "text"):
        parts += [getattr(e, "value", "") for e in getattr(at, kind)]
    if "hopwise_answers" in at.session_state:  # every result the chat holds, trace included
        parts.append(seen_in(at.session_state["hopwise_answers"]))
    return "\n".join(str(p) for p in parts)


def test_chat_page_leaks_nothing(corpus: Corpus, chat_env: None) -> None:
    at = new_app().run()
    at.sidebar.text_input[0].set_value("bob")
    at.sidebar.text_input[1].set_value("bob-pw")
    at.sidebar.button[0].click().run()
    typed = ""  # the page shows the whole conversation, the reader's own questions included
    for question in (QUESTIONS[5], QUESTIONS[2], QUESTIONS[19], QUESTIONS[13]):
        typed += "\n" + question
        at.chat_input[0].set_value(question).run()
        assert_no_exception(at)
        assert_no_leak("chat", page_text(at), corpus, typed)
    at.switch_page("app_pages/trace.py").run()
    assert_no_exception(at)
    assert not leaked(page_text(at), corpus.never_typed(QUESTIONS))


def test_zero_leaks_in_at_least_50_attempts() -> None:
    """The ledger over this module: at least 50 attempts through all paths, no leak."""
    print(f"access control: {LEDGER.summary()}")
    assert LEDGER.attempts >= 50
    assert {"cli-search", "cli-ask", "store-search", "ask-offline", "ask-llm", "chat"} <= set(
        LEDGER.by_path
    )
    assert LEDGER.leaks == []
