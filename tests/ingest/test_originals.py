"""Originals kept by content: stored once per SHA-256, written atomically, removed with the last
document that lists them, never left behind by a failed ingest; the directory is a setting."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from hopwise.settings import load_settings
from ingest.config import IngestConfig
from ingest.models import Chunk
from ingest.originals import OriginalStore, delete_document, mime_type
from ingest.pipeline import ingest_bytes, ingest_paths
from tests.fakes import docs
from tests.fakes.memory_store import MemoryStore

CONFIG = IngestConfig(max_upload_mb=1, chunk_tokens=120, chunk_overlap_tokens=15)
GUIDE = b"# Guide\n\n## Setup\nTurn the valve clockwise until the gauge reads four bar.\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def kept_files(root: Path) -> list[Path]:
    """Every original under root (temp files and locks are not originals)."""
    return sorted(p for p in root.glob("??/*") if p.is_file() and not p.name.startswith("."))


class FailingWrite(MemoryStore):
    """A store whose write fails after parsing and chunking succeeded (e.g. a full disk)."""

    def replace_document(self, chunks: Iterable[Chunk]) -> None:
        list(chunks)
        raise OSError(28, "No space left on device")


def test_an_original_is_kept_at_its_checksum_and_read_back(tmp_path: Path) -> None:
    originals, store = OriginalStore(tmp_path / "o"), MemoryStore()
    result = ingest_bytes(GUIDE, "guide.md", store, config=CONFIG, originals=originals)
    assert result.status == "ingested"
    doc = store.get_document(result.doc_id or "")
    assert doc is not None and doc.checksum == sha(GUIDE)
    path = tmp_path / "o" / sha(GUIDE)[:2] / sha(GUIDE)
    assert path.read_bytes() == GUIDE and originals.read(doc.checksum) == GUIDE
    assert kept_files(tmp_path / "o") == [path]  # no temp file left over
    assert mime_type("guide.md") == "text/markdown" and mime_type("scan.JPG") == "image/jpeg"


def test_the_same_bytes_under_two_names_are_kept_once_until_both_are_deleted(
    tmp_path: Path,
) -> None:
    originals, store = OriginalStore(tmp_path / "o"), MemoryStore()
    first = ingest_bytes(GUIDE, "guide.md", store, config=CONFIG, originals=originals)
    second = ingest_bytes(GUIDE, "copy.md", store, config=CONFIG, originals=originals)
    assert first.doc_id != second.doc_id
    assert len(kept_files(tmp_path / "o")) == 1

    assert delete_document(store, first.doc_id or "", originals) > 0
    assert originals.read(sha(GUIDE)) == GUIDE  # copy.md still lists these bytes
    delete_document(store, second.doc_id or "", originals)
    assert kept_files(tmp_path / "o") == []
    assert delete_document(store, second.doc_id or "", originals) == 0  # already gone


def test_a_new_version_replaces_the_old_original(tmp_path: Path) -> None:
    originals, store = OriginalStore(tmp_path / "o"), MemoryStore()
    ingest_bytes(GUIDE, "guide.md", store, config=CONFIG, originals=originals)
    changed = GUIDE.replace(b"four", b"five")
    result = ingest_bytes(changed, "guide.md", store, config=CONFIG, originals=originals)
    assert result.status == "ingested" and result.version == 2
    assert [p.name for p in kept_files(tmp_path / "o")] == [sha(changed)]


@pytest.mark.parametrize(
    "name, data",
    [("broken.pdf", b"%PDF-1.4 not a pdf"), ("empty.md", b""), ("blank.txt", b"   \n\n  ")],
)
def test_a_file_that_fails_to_parse_keeps_nothing(tmp_path: Path, name: str, data: bytes) -> None:
    originals, store = OriginalStore(tmp_path / "o"), MemoryStore()
    result = ingest_bytes(data, name, store, config=CONFIG, originals=originals)
    assert result.status == "failed"
    assert kept_files(tmp_path / "o") == [] and store.list_documents() == []


def test_a_failed_store_write_removes_the_original_it_wrote(tmp_path: Path) -> None:
    originals = OriginalStore(tmp_path / "o")
    result = ingest_bytes(GUIDE, "guide.md", FailingWrite(), config=CONFIG, originals=originals)
    assert result.status == "failed" and "No space left" in (result.reason or "")
    assert kept_files(tmp_path / "o") == []


def test_a_failed_write_keeps_the_original_another_document_still_lists(tmp_path: Path) -> None:
    originals, store = OriginalStore(tmp_path / "o"), FailingWrite()
    MemoryStore.replace_document(store, _chunks_of(GUIDE, "doc-kept"))  # written before
    assert originals.put(GUIDE)
    result = ingest_bytes(GUIDE, "twin.md", store, config=CONFIG, originals=originals)
    assert result.status == "failed"
    assert originals.read(sha(GUIDE)) == GUIDE  # still listed by doc-kept


def test_an_original_that_cannot_be_written_fails_the_ingest_and_changes_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "o"
    root.mkdir()
    (root / sha(GUIDE)[:2]).write_text("a file where the folder should be")
    store = MemoryStore()
    result = ingest_bytes(GUIDE, "guide.md", store, config=CONFIG, originals=OriginalStore(root))
    assert result.status == "failed" and "original file could not be kept" in (result.reason or "")
    assert store.list_documents() == []


def test_an_unchanged_re_upload_keeps_the_original_a_pre_originals_ingest_lacked(
    tmp_path: Path,
) -> None:
    originals, store = OriginalStore(tmp_path / "o"), MemoryStore()
    ingest_bytes(GUIDE, "guide.md", store, config=CONFIG)  # before originals were kept
    assert originals.read(sha(GUIDE)) is None
    result = ingest_bytes(GUIDE, "guide.md", store, config=CONFIG, originals=originals)
    assert result.status == "skipped" and originals.read(sha(GUIDE)) == GUIDE


def test_a_folder_ingest_keeps_every_file(tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    pdf, md = docs.make_pdf(folder), docs.make_markdown(folder)
    originals, store = OriginalStore(tmp_path / "o"), MemoryStore()
    results = ingest_paths([folder], store, config=CONFIG, originals=originals)
    assert {r.status for r in results} == {"ingested"}
    assert {p.name for p in kept_files(tmp_path / "o")} == {
        sha(pdf.read_bytes()),
        sha(md.read_bytes()),
    }


def test_a_write_is_atomic_and_leaves_no_temp_file_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    originals = OriginalStore(tmp_path / "o")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        originals.put(GUIDE)
    assert not any(p.is_file() for p in (tmp_path / "o").glob("??/*"))
    assert originals.read(sha(GUIDE)) is None


def test_the_directory_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOPWISE_ORIGINALS_DIR", raising=False)
    monkeypatch.setenv("HOPWISE_DATA_DIR", str(tmp_path / "data"))
    assert load_settings().originals_root == tmp_path / "data" / "originals"
    monkeypatch.setenv("HOPWISE_ORIGINALS_DIR", str(tmp_path / "elsewhere"))
    assert load_settings().originals_root == tmp_path / "elsewhere"


def test_only_sha256_names_are_paths(tmp_path: Path) -> None:
    originals = OriginalStore(tmp_path / "o")
    for bad in ("../../etc/passwd", "", "A" * 64):
        assert originals.read(bad) is None
        with pytest.raises(ValueError):
            originals.path(bad)


def _chunks_of(data: bytes, doc_id: str) -> list[Chunk]:
    return [
        Chunk(
            chunk_id=f"{doc_id}-v1-00000",
            doc_id=doc_id,
            text=data.decode(),
            checksum=sha(data),
            source=f"{doc_id}.md",
        )  # fmt: skip
    ]


def test_the_cli_keeps_originals_and_docs_delete_removes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hopwise.cli import main
    from ingest.pipeline import doc_id_for

    for key in list(os.environ):
        if key.startswith("HOPWISE_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOPWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOPWISE_ORIGINALS_DIR", str(tmp_path / "kept"))
    monkeypatch.setenv("HOPWISE_EMBEDDINGS", "off")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "guide.md").write_bytes(GUIDE)
    assert main(["ingest", str(tmp_path / "guide.md")]) == 0
    assert [p.name for p in kept_files(tmp_path / "kept")] == [sha(GUIDE)]
    assert main(["docs", "delete", doc_id_for("guide.md")]) == 0
    assert "(1 chunk)" in capsys.readouterr().out
    assert kept_files(tmp_path / "kept") == []
