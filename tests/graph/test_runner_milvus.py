"""Hopwise end to end on the real Milvus Lite store with offline reasoning (zh + en KB)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.offline import OfflineReasoner
from hopwise.app import Hopwise, open_store
from hopwise.settings import Settings
from ingest.pipeline import ingest_bytes
from ingest.store import MilvusStore

DOCS = {
    "inception.md": "# Inception\n\nInception is a 2010 science fiction film written and "
    "directed by Christopher Nolan. It stars Leonardo DiCaprio as a thief who steals secrets "
    "from dreams.\n",
    "nolan.md": "# Christopher Nolan\n\nChristopher Nolan is a British-American filmmaker. He "
    "was born in London, England, on 30 July 1970.\n\n## Career\n\nNolan studied English "
    "literature at University College London.\n",
    "tenet.md": "# Tenet\n\nTenet is a 2020 film. It was filmed in seven countries.\n",
    "供货合同.md": "# 供货合同\n\n## 违约责任\n\n甲方逾期交货的，每逾期一周应支付合同总额百分之五"
    "的违约金，累计不超过百分之二十。\n\n## 付款\n\n乙方应在收货后三十日内付款。\n",
}
SECRET = "# Acme penalties\n\nThe Acme supply contract penalty is 5% per late week. ZEBRA-SECRET.\n"


def settings_for(path: Path) -> Settings:
    return Settings(
        data_dir=path,
        web_search=False,
        llm_base_url=None,
        llm_model=None,
        embedding_base_url=None,
        milvus_uri=None,
    )


def build_kb(settings: Settings) -> MilvusStore:
    store = open_store(settings)
    for name, text in DOCS.items():
        ingest_bytes(text.encode(), name, store, groups=["all"], config=settings.ingest)
    ingest_bytes(SECRET.encode(), "acme.md", store, groups=["legal"], config=settings.ingest)
    return store


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, MilvusStore]]:
    settings = settings_for(tmp_path_factory.mktemp("kb"))
    store = build_kb(settings)
    yield settings, store
    store.close()


@pytest.fixture(scope="module")
def app(kb: tuple[Settings, MilvusStore]) -> Hopwise:
    settings, store = kb
    return Hopwise(settings, store, OfflineReasoner())  # in-memory threads


def cited_sources(result: dict) -> set[str]:
    return {c.source for c in result.citations}


def test_english_multi_hop_cites_both_documents(app: Hopwise) -> None:
    result = app.ask("Where was the director of Inception born?")
    assert result.mode == "offline" and result.llm_calls == 0
    assert {"inception.md", "nolan.md"} <= cited_sources(result)
    assert "London" in result.answer
    hit = result.hops[0].hits[0]
    assert hit.bm25 is not None and hit.fused is not None and hit.doc


def test_chinese_question_cites_the_contract_clause(app: Hopwise) -> None:
    result = app.ask("供货合同中逾期交货的违约金是多少？")
    first = result.citations[0]
    assert first.source == "供货合同.md" and "违约责任" in first.section
    assert "百分之五" in result.answer


def test_groups_are_enforced_on_the_real_store(app: Hopwise) -> None:
    question = "What is the Acme supply contract penalty?"
    outsider = json.dumps(app.ask(question, groups=["all"]).to_json(), ensure_ascii=False)
    assert "ZEBRA-SECRET" not in outsider and "acme.md" not in outsider
    insider = app.ask(question, groups=["legal"])
    assert "acme.md" in cited_sources(insider)


def test_threads_persist_across_restarts(kb: tuple[Settings, MilvusStore]) -> None:
    settings = kb[0]  # from_settings shares the embedded Milvus file, adds SQLite threads
    first = Hopwise.from_settings(settings)
    try:
        answer = first.ask("Who directed Inception?")
    finally:
        first.close()
    again = Hopwise.from_settings(settings)
    try:
        threads = again.list_threads()
        assert [t["thread_id"] for t in threads] == [answer.thread_id]
        assert threads[0]["title"] == "Who directed Inception?"
        saved = again.thread_answers(answer.thread_id)
        assert saved == [answer]
        follow = again.ask("Where was he born?", thread_id=answer.thread_id)
        # the thread's history (read back from SQLite) made the follow-up standalone
        assert follow.standalone_question != "Where was he born?"
        assert len(again.thread_answers(answer.thread_id)) == 2
    finally:
        again.close()
