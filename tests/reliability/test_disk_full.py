"""A full disk loses nothing: replacing a document on a disk without room is refused within
seconds, in one line that names the disk and the path, and the previous version stays listed
and searchable. Faults injected at every write step (ENOSPC from the write layer) roll back or
finish cleanly, and a knowledge base that an engine left inconsistent is repaired on open."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ingest.config import IngestConfig
from ingest.pipeline import doc_id_for, ingest_bytes
from ingest.store import MilvusStore, StoreError

CONFIG = IngestConfig()


def document(parts: int, word: str) -> bytes:
    """A Markdown file of `parts` sections that all mention `word`."""
    return "\n\n".join(
        f"## Part {i}\n" + f"The {word} gearbox section {i} describes maintenance step {i}. " * 30
        for i in range(parts)
    ).encode()


def visible(store: MilvusStore, word: str) -> int:
    """How many of the top hits for `word` contain it."""
    return sum(word in hit.text for hit in store.search(f"{word} gearbox", ["all"], k=5))


def listing(store: MilvusStore) -> list[tuple[str, int, int]]:
    return [(d.source, d.version, d.chunks) for d in store.list_documents()]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 24 MB tmpfs, or a skip saying why this machine cannot mount one."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if shutil.which("mount") is None:  # the ENOSPC injection tests below still run
        pytest.skip(
            "a real small disk needs `mount` (absent here); simulated ENOSPC covers the logic"
        )
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        reason = done.stderr.strip() or "not root"
        pytest.skip(
            f"a real small disk needs a tmpfs mount, refused here ({reason}); "
            "simulated ENOSPC covers the logic"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill the disk, then give back `leave` bytes."""
    filler = disk / "filler"
    # unbuffered: a buffered writer keeps the bytes a partial write left and raises ENOSPC
    # again when it is closed (seen when the free space is not a multiple of the block)
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_a_real_full_disk_keeps_the_previous_version(small_disk: Path) -> None:
    store = MilvusStore(str(small_disk / "milvus.db"))
    try:
        first = ingest_bytes(document(150, "copper"), "big.md", store, config=CONFIG)
        assert first.status == "ingested", first.reason
        filler = fill(small_disk, leave=28 * 1024)

        started = time.monotonic()
        second = ingest_bytes(document(2500, "cobalt"), "big.md", store, config=CONFIG)
        took = time.monotonic() - started
        assert second.status == "failed"
        assert "disk full" in second.reason and str(small_disk) in second.reason
        assert "Retry run out" not in second.reason and took < 60  # no 75-retry storm
        assert listing(store) == [("big.md", 1, first.chunks)]
        assert visible(store, "copper") and not visible(store, "cobalt")
    finally:
        store.close()

    # reopening on the full disk still reads; after space is freed the new version goes in
    with MilvusStore(str(small_disk / "milvus.db")) as store:
        assert listing(store) == [("big.md", 1, first.chunks)] and visible(store, "copper")
    filler.unlink()
    with MilvusStore(str(small_disk / "milvus.db")) as store:
        again = ingest_bytes(document(2500, "cobalt"), "big.md", store, config=CONFIG)
        assert again.status == "ingested" and again.version == 2, again.reason
        assert visible(store, "cobalt") and not visible(store, "copper")


def test_an_open_on_a_full_disk_says_so_and_still_reads(
    small_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with MilvusStore(str(small_disk / "milvus.db")) as store:
        assert ingest_bytes(document(20, "copper"), "a.md", store, config=CONFIG).status == (
            "ingested"
        )
    fill(small_disk, leave=16 * 1024)
    with MilvusStore(str(small_disk / "milvus.db")) as store:
        assert visible(store, "copper")
        result = ingest_bytes(document(5, "nickel"), "b.md", store, config=CONFIG)
        assert result.status == "failed" and "disk full" in result.reason
        with pytest.raises(StoreError, match="disk full"):
            store.delete_document(doc_id_for("a.md"))
        assert visible(store, "copper")
    assert any("disk full" in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------- simulated ENOSPC


class Fault:
    """Raise ENOSPC from one store write call (the `nth` call of `method`). The background
    phrase keys of earlier writes are finished first, so the count is the write's own calls."""

    def __init__(self, store: MilvusStore, method: str, nth: int = 1) -> None:
        store.build_phrases()
        self.calls = 0
        client: Any = store.client
        real = getattr(client, method)

        def failing(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == nth:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(*args, **kwargs)

        setattr(client, method, failing)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MilvusStore]:
    with MilvusStore(str(tmp_path / "milvus.db")) as opened:
        yield opened


# (write call, which call): every write of a replacement, before and after the switch
BEFORE_SWITCH = [("upsert", 1), ("delete", 1), ("insert_columns", 1), ("insert_columns", 3)]
AFTER_SWITCH_DELETE = 2  # the first delete clears leftovers of the new version, before it


@pytest.mark.parametrize(("method", "nth"), BEFORE_SWITCH)
def test_enospc_before_the_switch_keeps_the_old_version(
    store: MilvusStore, method: str, nth: int
) -> None:
    old = ingest_bytes(document(40, "copper"), "big.md", store, config=CONFIG)
    assert old.status == "ingested"
    Fault(store, method, nth)
    new_bytes = document(1200, "cobalt")
    failed = ingest_bytes(new_bytes, "big.md", store, config=CONFIG)
    assert failed.status == "failed" and "disk full" in failed.reason, failed.reason
    assert str(Path(store.uri).parent) in failed.reason
    assert listing(store) == [("big.md", 1, old.chunks)]
    assert store.count_chunks() == old.chunks
    assert visible(store, "copper") and not visible(store, "cobalt")
    retry = ingest_bytes(new_bytes, "big.md", store, config=CONFIG)  # never "unchanged"
    assert retry.status == "ingested" and retry.version == 2, retry.reason
    assert listing(store) == [("big.md", 2, retry.chunks)] and not visible(store, "copper")


def test_enospc_removing_the_old_version_after_the_switch(tmp_path: Path) -> None:
    path = str(tmp_path / "milvus.db")
    with MilvusStore(path) as store:
        old = ingest_bytes(document(40, "copper"), "big.md", store, config=CONFIG)
        Fault(store, "delete", AFTER_SWITCH_DELETE)
        new = ingest_bytes(document(300, "cobalt"), "big.md", store, config=CONFIG)
        assert new.status == "ingested" and new.version == 2  # the new version is live
        assert listing(store) == [("big.md", 2, new.chunks)]
        assert visible(store, "cobalt") and not visible(store, "copper")  # old hidden
        assert store.count_chunks() == new.chunks
        assert old.chunks
    with MilvusStore(path) as store:  # the cleanup is retried on open
        assert store.count_rows(f'doc_id == "{doc_id_for("big.md")}" and doc_version == 1') == 0
        assert listing(store) == [("big.md", 2, new.chunks)]


def test_a_manifest_that_names_a_lost_version_is_repaired_on_open(tmp_path: Path) -> None:
    """The engine accepted v2 and the switch, the v1 delete failed, then v2's rows were lost
    (what a full disk did to Milvus Lite): the next open restores v1, and the v2 bytes are not
    "unchanged"."""
    path = str(tmp_path / "milvus.db")
    doc_id = doc_id_for("big.md")
    v2 = document(300, "cobalt")
    with MilvusStore(path) as store:
        old = ingest_bytes(document(40, "copper"), "big.md", store, config=CONFIG)
        Fault(store, "delete", AFTER_SWITCH_DELETE)
        assert ingest_bytes(v2, "big.md", store, config=CONFIG).status == "ingested"
        store.client.delete(store.collection, filter=f'doc_id == "{doc_id}" and doc_version == 2')
    with MilvusStore(path) as store:
        assert store.repairs and "version 1 restored" in store.repairs[0]
        assert listing(store) == [("big.md", 1, old.chunks)] and visible(store, "copper")
        again = ingest_bytes(v2, "big.md", store, config=CONFIG)
        assert again.status == "ingested", again.reason
        assert visible(store, "cobalt")


def test_a_listed_document_with_missing_chunks_is_corrected_on_open(tmp_path: Path) -> None:
    path = str(tmp_path / "milvus.db")
    doc_id = doc_id_for("big.md")
    data = document(60, "copper")
    with MilvusStore(path) as store:
        full = ingest_bytes(data, "big.md", store, config=CONFIG)
        assert ingest_bytes(document(5, "zinc"), "small.md", store, config=CONFIG).chunks
        lost = f'doc_id == "{doc_id}" and start_char > 2000'
        store.client.delete(store.collection, filter=lost)  # rows gone behind its back
    with MilvusStore(path) as store:
        [note] = store.repairs
        assert "big.md" in note and f"of {full.chunks} chunks" in note
        docs = {d.source: d for d in store.list_documents()}
        assert 0 < docs["big.md"].chunks < full.chunks and docs["big.md"].checksum == ""
        assert docs["small.md"].checksum  # the intact document is untouched
        assert store.count_chunks() == sum(d.chunks for d in docs.values())
        again = ingest_bytes(data, "big.md", store, config=CONFIG)  # not "unchanged"
        assert again.status == "ingested" and again.chunks == full.chunks
    with MilvusStore(path) as store:
        assert store.repairs == []  # consistent now: one count query, nothing to do
