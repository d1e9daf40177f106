"""LangChain's own standard suite (langchain-tests) against the knowledge base's VectorStore view.

The store is a real Milvus Lite knowledge base with the suite's deterministic fake embeddings as
its dense channel, so hybrid BM25 + dense search answers every read. Every test of the suite is
expected to pass; none is overridden or skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from ingest.embeddings import LangChainEmbedder
from ingest.langchain_view import KnowledgeBaseVectorStore, as_langchain_vectorstore
from ingest.store import MilvusStore


@pytest.fixture(scope="module")
def shared_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusStore]:
    embedder = LangChainEmbedder(
        VectorStoreIntegrationTests.get_embeddings(), name="deterministic-fake-6"
    )
    path = tmp_path_factory.mktemp("lc-standard") / "milvus.db"
    with MilvusStore(str(path), embedder=embedder) as store:
        yield store


class TestKnowledgeBaseVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, shared_kb: MilvusStore) -> Iterator[KnowledgeBaseVectorStore]:
        try:
            yield as_langchain_vectorstore(shared_kb)
        finally:  # empty again for the next test, through the knowledge base's own delete
            for doc in shared_kb.list_documents():
                shared_kb.delete_document(doc.doc_id)


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[MilvusStore]:
    embedder = LangChainEmbedder(
        VectorStoreIntegrationTests.get_embeddings(), name="deterministic-fake-6"
    )
    store = MilvusStore(str(tmp_path / "milvus.db"), embedder=embedder)
    yield store
    store.close()


def test_langchain_writes_are_knowledge_base_documents(kb: MilvusStore) -> None:
    view = as_langchain_vectorstore(kb, write_groups=["hr"])
    ids = view.add_documents(
        [Document(page_content="Parental leave is sixteen weeks.", metadata={"source": "hr.md"})]
    )
    docs = kb.list_documents()
    assert [d.doc_id for d in docs] == ids and docs[0].groups == ["hr"]
    assert docs[0].source == "hr.md" and docs[0].chunks == 1
    # readers without the group see nothing, through every read path
    public = as_langchain_vectorstore(kb)
    assert public.similarity_search("parental leave", k=5) == []
    assert public.get_by_ids(ids) == []
    hr = as_langchain_vectorstore(kb, groups=["hr"])
    assert [d.id for d in hr.similarity_search("parental leave", k=5)] == ids
    hr.delete(ids)
    assert kb.list_documents() == [] and kb.count_chunks() == 0


def test_uploaded_chunks_come_back_with_their_record(kb: MilvusStore) -> None:
    from tests.ingest.test_store_contract import make_chunks

    kb.replace_document(make_chunks("contract", ["Late payment costs 0.5% per day."]))
    view = as_langchain_vectorstore(kb)
    [doc] = view.similarity_search("late payment", k=1)
    assert doc.id == "contract-v1-0" and doc.metadata["doc_id"] == "contract"
    assert doc.metadata["source"] == "contract.md" and doc.metadata["page"] == 1
    assert [d.id for d in view.get_by_ids(["contract-v1-0"])] == ["contract-v1-0"]
    assert len(view.max_marginal_relevance_search("late payment", k=1, fetch_k=5)) == 1


def test_bm25_only_view_refuses_mmr_and_oversized_documents(tmp_path: Path) -> None:
    with MilvusStore(str(tmp_path / "milvus.db")) as store:
        view = as_langchain_vectorstore(store)
        [doc_id] = view.add_texts(["Rotate the certificates every ninety days."])
        assert [d.id for d in view.similarity_search("certificates", k=3)] == [doc_id]
        with pytest.raises(ValueError, match="BM25-only"):
            view.max_marginal_relevance_search("certificates")
        with pytest.raises(ValueError, match="split it first"):
            view.add_texts(["x" * 70_000])
        with pytest.raises(ValueError, match="ids"):
            view.delete()
