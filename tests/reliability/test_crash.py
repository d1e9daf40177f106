"""kill -9 a `hopwise ingest` that is replacing a large document (v1 -> v2) in the middle of
its write. After the restart the document list and search show exactly one complete version
(never a mix, never orphan chunks), and re-running the ingest completes the new version.

Embedded Milvus Lite: the kill point is found by polling the database file's change counter
(the first write is the store marking v2 pending), then waiting a little. Remote server: the
test polls the manifest itself until it shows the pending version."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopwise.app import open_store
from hopwise.settings import Settings, load_settings
from ingest.pipeline import doc_id_for, ingest_paths
from ingest.store import MilvusStore
from tests.reliability.conftest import ROOT, cli_env, run_cli, server_on

CHUNKS = {1: 200, 2: 5000}  # paragraphs = chunks at 60 tokens; v2 takes ~2-3 s to write
TAG = {1: "alpha-edition", 2: "beta-edition"}
WORDS = [
    "turbine",
    "contract",
    "delivery",
    "penalty",
    "warranty",
    "clause",
    "supplier",
    "order",
    "invoice",
    "audit",
]
SMALL_CHUNKS = {"HOPWISE_CHUNK_TOKENS": "60", "HOPWISE_CHUNK_OVERLAP_TOKENS": "0"}


def write_version(path: Path, version: int) -> None:
    rng = random.Random(version)
    paragraphs = [
        f"Paragraph {i} {TAG[version]}: " + " ".join(rng.choice(WORDS) for _ in range(40)) + "."
        for i in range(CHUNKS[version])
    ]
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")


def settings_for(data: Path, **extra: str) -> Settings:
    return load_settings(
        data_dir=data, web_search=False, chunk_tokens=60, chunk_overlap_tokens=0, **extra
    )


def start_ingest(doc: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hopwise", "ingest", str(doc)], env=env, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def change_counter(db: Path) -> int:
    """SQLite's file change counter (header bytes 24-27): moves on every committed write."""
    with open(db, "rb") as handle:
        handle.seek(24)
        return int.from_bytes(handle.read(4), "big")


def kill(proc: subprocess.Popen[str]) -> bool:
    """SIGKILL; True when the process was still running (so it really died mid-way)."""
    alive = proc.poll() is None
    if alive:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    return alive


def check_one_complete_version(store: MilvusStore, doc_id: str) -> int:
    """Exactly one version visible, complete, no chunk of the other left behind."""
    info = store.get_document(doc_id)
    assert info is not None
    version = info.version
    chunks = store.get_chunks(doc_id)
    assert len(chunks) == info.chunks == CHUNKS[version]
    assert {c.doc_version for c in chunks} == {version}
    assert all(TAG[version] in c.text for c in chunks)
    hits = store.search("paragraph turbine edition", ["all"], k=50)
    assert hits and {h.doc_version for h in hits} == {version}
    assert all(TAG[version] in h.text for h in hits)
    return version


def finish_and_check(doc: Path, store: MilvusStore, settings: Settings) -> None:
    """Re-running the ingest completes v2 and leaves no orphan chunk."""
    [result] = ingest_paths([doc], store, config=settings.ingest)
    assert result.status in {"ingested", "skipped"}, result.reason
    assert check_one_complete_version(store, doc_id_for(doc.name)) == 2
    assert store.count_rows("") == CHUNKS[2]  # raw count: not one orphan, visible or not


def kill_embedded_ingest(tmp_path: Path, delay_s: float) -> tuple[Path, Path, bool]:
    """v1 ingested, then a `hopwise ingest` of v2 killed delay_s after its first write."""
    data, doc = tmp_path / "data", tmp_path / "big.txt"
    env = cli_env(data, **SMALL_CHUNKS)
    write_version(doc, 1)
    with open_store(settings_for(data)) as store:
        assert ingest_paths([doc], store, config=settings_for(data).ingest)[0].status == "ingested"
    write_version(doc, 2)
    db = data / "milvus.db"
    before = change_counter(db)
    proc = start_ingest(doc, env)
    deadline = time.monotonic() + 60
    while change_counter(db) == before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(delay_s)
    return data, doc, kill(proc)


@pytest.mark.parametrize(
    "delay_s",
    [pytest.param(0.2, marks=pytest.mark.slow), pytest.param(0.0, marks=pytest.mark.slow)]
    + [pytest.param(d, marks=pytest.mark.slow) for d in (0.05, 0.5, 1.0, 1.5, 3.0)],
)
def test_kill_9_of_an_embedded_ingest(tmp_path: Path, delay_s: float) -> None:
    data, doc, died_midway = kill_embedded_ingest(tmp_path, delay_s)
    env = cli_env(data, **SMALL_CHUNKS)
    doc_id = doc_id_for(doc.name)

    listing = run_cli("docs", "list", "--json", env=env)  # the restart (repairs on open)
    assert listing.returncode == 0, listing.stderr
    [info] = json.loads(listing.stdout)
    version = info["version"]
    assert info["doc_id"] == doc_id and info["chunks"] == CHUNKS[version]

    settings = settings_for(data)
    with open_store(settings) as store:  # search, chunks, raw counts
        assert check_one_complete_version(store, doc_id) == version
        assert store.count_rows("") == CHUNKS[version]  # repaired: no orphan of the other version
        finish_and_check(doc, store, settings)
    if delay_s < 1.0:
        assert died_midway, "the ingest finished before the kill; make the document bigger"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    srv = server_on(tmp_path / "server.db")
    srv.start()
    try:
        yield srv.uri
    finally:
        srv.stop()


@pytest.mark.parametrize(
    "after_pending_s", [0.3] + [pytest.param(d, marks=pytest.mark.slow) for d in (0.0, 0.1, 0.6)]
)
def test_kill_9_of_a_remote_ingest_once_v2_is_pending(
    tmp_path: Path, server: str, after_pending_s: float
) -> None:
    data, doc = tmp_path / "data", tmp_path / "big.txt"
    settings = settings_for(data, milvus_uri=server)
    doc_id = doc_id_for(doc.name)
    write_version(doc, 1)
    with open_store(settings) as store:
        assert ingest_paths([doc], store, config=settings.ingest)[0].status == "ingested"
        write_version(doc, 2)
        proc = start_ingest(doc, cli_env(data, HOPWISE_MILVUS_URI=server, **SMALL_CHUNKS))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            row = store._manifest_row(doc_id)
            if row and int(row["pending_version"]) == 2:
                break
            time.sleep(0.01)
        time.sleep(after_pending_s)
        assert kill(proc), "the ingest finished before the kill"
        # the switch to v2 is one manifest write: before it v1 is the complete visible version,
        # after it v2 (a fast server can finish the inserts before a late kill point)
        switched = int((store._manifest_row(doc_id) or {}).get("active_version", 1))

        # another process's transition is not repaired (it may still be writing), yet only
        # one complete version is visible meanwhile
        assert check_one_complete_version(store, doc_id) == switched
    with open_store(settings) as store:  # a restarted app sees the same
        assert check_one_complete_version(store, doc_id) == switched
        finish_and_check(doc, store, settings)
