"""Writes to one document are serialised: a delete during a re-ingest, or the same file name
uploaded twice at once, end in one well-defined state that both writers were told the truth
about. Threads stand for two admins in one app process (embedded Milvus Lite); subprocesses
for the CLI beside the app against a Milvus server (Lite's gRPC server on loopback)."""

from __future__ import annotations

import fcntl
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ingest.config import IngestConfig
from ingest.models import IngestResult
from ingest.pipeline import doc_id_for, ingest_bytes
from ingest.store import MilvusStore
from tests.reliability.conftest import ROOT, cli_env, server_on

CONFIG = IngestConfig()
NAME = "big.md"
DOC_ID = doc_id_for(NAME)


def document(parts: int, word: str) -> bytes:
    return "\n\n".join(
        f"## Part {i}\n" + f"The {word} relay section {i} lists inspection item {i}. " * 30
        for i in range(parts)
    ).encode()


def assert_consistent(store: MilvusStore) -> None:
    """Every listed document is stored exactly as listed; nothing else is stored."""
    docs = store.list_documents()
    rows = store.count_rows("")
    assert rows == sum(d.chunks for d in docs), (rows, [(d.source, d.chunks) for d in docs])
    for doc in docs:
        expr = f'doc_id == "{doc.doc_id}" and doc_version == {doc.version}'
        assert store.count_rows(expr) == doc.chunks


def words_found(store: MilvusStore, word: str, groups: list[str]) -> int:
    return sum(word in h.text for h in store.search(f"{word} relay", groups, k=5))


def when_inserting(store: MilvusStore) -> threading.Event:
    """An event set once the store starts inserting chunk rows (a write is under way)."""
    started = threading.Event()
    client: Any = store.client
    real = client.insert_columns

    def insert_columns(*args: Any, **kwargs: Any) -> Any:
        started.set()
        time.sleep(0.05)  # widen the window another writer would have slipped into
        return real(*args, **kwargs)

    client.insert_columns = insert_columns
    return started


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MilvusStore]:
    with MilvusStore(str(tmp_path / "milvus.db")) as opened:
        yield opened


def test_a_delete_during_a_reingest_waits_and_deletes_what_it_left(store: MilvusStore) -> None:
    assert ingest_bytes(document(20, "amber"), NAME, store, config=CONFIG).status == "ingested"
    inserting = when_inserting(store)
    results: dict[str, Any] = {}
    upload = threading.Thread(
        target=lambda: results.update(
            ingest=ingest_bytes(document(1500, "cedar"), NAME, store, config=CONFIG)
        )
    )
    upload.start()
    assert inserting.wait(60)
    results["deleted"] = store.delete_document(DOC_ID)  # the other admin, mid-upload
    upload.join(120)
    ingest: IngestResult = results["ingest"]
    assert ingest.status == "ingested" and ingest.version == 2
    assert results["deleted"] == ingest.chunks  # deleted exactly what the upload wrote
    assert store.list_documents() == [] and store.count_rows("") == 0
    assert_consistent(store)


def test_a_reingest_after_a_delete_starts_again_at_version_one(store: MilvusStore) -> None:
    assert ingest_bytes(document(800, "amber"), NAME, store, config=CONFIG).status == "ingested"
    with store.document_lock(DOC_ID):  # a delete holds the document ...
        results: dict[str, Any] = {}
        upload = threading.Thread(
            target=lambda: results.update(
                ingest=ingest_bytes(document(30, "cedar"), NAME, store, config=CONFIG)
            )
        )
        upload.start()
        time.sleep(0.5)
        assert "ingest" not in results  # ... and the upload waits for it
        assert store.delete_document(DOC_ID) > 0
    upload.join(60)
    assert results["ingest"].status == "ingested" and results["ingest"].version == 1
    assert [(d.version, d.chunks) for d in store.list_documents()] == [
        (1, results["ingest"].chunks)
    ]
    assert words_found(store, "cedar", ["all"]) and not words_found(store, "amber", ["all"])
    assert_consistent(store)


def test_the_same_name_uploaded_twice_at_once_keeps_one_whole_version(
    store: MilvusStore,
) -> None:
    results: list[IngestResult] = []
    uploads = [
        threading.Thread(
            target=lambda data=data, groups=groups: results.append(
                ingest_bytes(data, NAME, store, groups=groups, config=CONFIG)
            )
        )
        for data, groups in ((document(300, "amber"), ["hr"]), (document(400, "cedar"), None))
    ]
    for upload in uploads:
        upload.start()
    for upload in uploads:
        upload.join(120)
    assert sorted(r.status for r in results) == ["ingested", "ingested"]
    assert sorted(r.version for r in results) == [1, 2]
    last = max(results, key=lambda r: r.version)
    [doc] = store.list_documents()
    assert (doc.version, doc.chunks) == (2, last.chunks)
    assert_consistent(store)
    chunk_ids = [c.chunk_id for c in store.get_chunks(DOC_ID)]
    assert len(chunk_ids) == len(set(chunk_ids)) == last.chunks
    amber, cedar = (words_found(store, w, ["all", "hr"]) for w in ("amber", "cedar"))
    assert bool(amber) != bool(cedar)  # one content, never both


# --------------------------------------------------------------------------- two processes


def cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hopwise", *args], env=env, cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def lock_is_held(path: Path) -> bool:
    if not path.exists():
        return False
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_two_processes_delete_and_reingest_against_a_server(tmp_path: Path) -> None:
    server = server_on(tmp_path / "server.db")
    server.start()
    try:
        data_dir = tmp_path / "data"
        env = cli_env(data_dir, HOPWISE_MILVUS_URI=server.uri)
        folder = tmp_path / "files"
        folder.mkdir()
        (folder / NAME).write_bytes(document(20, "amber"))
        first = cli("ingest", str(folder / NAME), env=env)
        assert first.wait(120) == 0, first.communicate()
        (folder / NAME).write_bytes(document(1500, "cedar"))

        lock = MilvusStore(server.uri, lock_dir=data_dir / "locks").locks.path_for(DOC_ID)
        upload = cli("ingest", str(folder / NAME), env=env)
        deadline = time.monotonic() + 120
        while not lock_is_held(lock) and upload.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert upload.poll() is None, "the upload ended before its write could be raced"
        delete = cli("docs", "delete", DOC_ID, env=env)
        up_out, up_err = upload.communicate(timeout=180)
        del_out, del_err = delete.communicate(timeout=180)
        assert upload.returncode == 0, up_err
        assert delete.returncode == 0, del_err
        ingested = [line for line in up_out.splitlines() if "ingested" in line]
        assert ingested and "v2" in ingested[0], up_out
        chunks = int(re.search(r"\((\d+) chunks", ingested[0]).group(1))  # type: ignore[union-attr]
        assert f"({chunks} chunks)" in del_out, (up_out, del_out)  # deleted all the upload wrote
        with MilvusStore(server.uri) as store:
            assert store.list_documents() == [] and store.count_rows("") == 0
    finally:
        server.stop()
