"""The OpenAI-compatible embedder over real HTTP (langchain-openai -> local stub server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hopwise.app import build_embedder
from hopwise.settings import load_settings
from ingest.embeddings import EmbeddingError, OpenAICompatibleEmbedder
from ingest.models import Chunk
from ingest.store import MilvusStore
from tests.fakes.openai_stub import StubOpenAIServer, embed_text
from tests.ingest.conftest import free_port


@pytest.fixture(scope="module")
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer() as server:
        yield server


def test_embeds_raw_strings_and_probes_the_dimension(stub: StubOpenAIServer) -> None:
    stub.clear()
    embedder = OpenAICompatibleEmbedder(base_url=stub.url, model="bge-m3", api_key="k")
    assert embedder.dim == 256 and embedder.name == "bge-m3"
    vectors = embedder.embed_documents(["违约金条款", "payment terms"])
    assert vectors[0] == pytest.approx(embed_text("违约金条款", 256))
    assert embedder.embed_query("payment terms") == pytest.approx(vectors[1])
    bodies = [r.json for r in stub.requests if r.path.endswith("/embeddings")]
    assert bodies[-2]["input"] == ["违约金条款", "payment terms"]  # strings, not token ids
    assert all("dimensions" not in b for b in bodies)  # not every server accepts it


def test_dimensions_sent_only_to_models_that_take_it(stub: StubOpenAIServer) -> None:
    embedder = OpenAICompatibleEmbedder(base_url=stub.url, model="text-embedding-3-small", dim=64)
    assert len(embedder.embed_query("hello")) == 64


def test_wrong_dimension_is_a_clear_error(stub: StubOpenAIServer) -> None:
    embedder = OpenAICompatibleEmbedder(base_url=stub.url, model="bge-m3", dim=384)
    with pytest.raises(EmbeddingError, match="256-d vectors"):
        embedder.embed_documents(["x"])


def test_unreachable_endpoint_is_an_embedding_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    embedder = OpenAICompatibleEmbedder(base_url=url, model="m", dim=8, timeout_s=2, max_retries=0)
    with pytest.raises(EmbeddingError, match="embedding endpoint failed"):
        embedder.embed_query("x")


def test_build_embedder_from_settings(data_dir: Path, stub: StubOpenAIServer) -> None:
    assert build_embedder(load_settings()) is None
    settings = load_settings(
        embedding_base_url=stub.url, embedding_model="bge-m3", embedding_dim=256
    )
    embedder = build_embedder(settings)
    assert embedder is not None and embedder.dim == 256 and embedder.name == "bge-m3"


def test_hybrid_store_over_http_embeddings(milvus_lite_db: str, stub: StubOpenAIServer) -> None:
    embedder = OpenAICompatibleEmbedder(base_url=stub.url, model="bge-m3", dim=256)
    store = MilvusStore(milvus_lite_db, collection="http_embed", embedder=embedder)
    try:
        texts = ["付款期限为三十日。", "The gateway restarts nightly.", "违约金按日计算。"]
        store.replace_document(
            [
                Chunk(chunk_id=f"d-{i}", doc_id="d", text=t, source="d.txt")
                for i, t in enumerate(texts)
            ]
        )
        hits = store.search("违约金怎么算", ["all"], k=3)
        assert hits[0].chunk_id == "d-2"
        assert hits[0].bm25_score and hits[0].dense_score and hits[0].dense_score > 0.3
        assert store.get_chunks("d")[0].embedding_version == "bge-m3"
        assert store.stats()["embedding_model"] == "bge-m3"
    finally:
        store.drop()
        store.close()
