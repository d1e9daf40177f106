"""The ingestion pipeline against the real embedded Milvus store: versions, skips, bad input."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hopwise.settings import Settings, load_settings
from ingest.models import PARSER_VERSION, IngestResult
from ingest.pipeline import doc_id_for, ingest_bytes, ingest_file, ingest_paths
from ingest.store import MilvusStore
from tests.fakes import docs
from tests.fakes.hash_embedder import HashEmbedder


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(
        data_dir=tmp_path / "data", max_upload_mb=1, chunk_tokens=120, chunk_overlap_tokens=15,
        parse_timeout_s=30,
    )  # fmt: skip


@pytest.fixture(scope="module")
def shared_store(milvus_lite_db: str) -> Iterator[MilvusStore]:
    """One collection for the module (creating one costs ~1 s); tests use distinct file names."""
    kb = MilvusStore(milvus_lite_db, collection=f"p_{uuid.uuid4().hex[:12]}")
    yield kb
    kb.close()


@pytest.fixture
def store(shared_store: MilvusStore) -> Iterator[MilvusStore]:
    """The shared store, emptied before each test."""
    for doc in shared_store.list_documents():
        shared_store.delete_document(doc.doc_id)
    yield shared_store


def snapshot(store: MilvusStore) -> tuple[list[dict[str, Any]], int]:
    return [d.model_dump() for d in store.list_documents()], store.count_chunks()


def test_ingest_every_format_from_a_folder(tmp_path: Path, store, settings) -> None:
    folder = tmp_path / "kb"
    (folder / "sub").mkdir(parents=True)
    docs.make_pdf(folder)
    docs.make_docx(folder / "sub")
    docs.make_markdown(folder)
    docs.make_html(folder / "sub")
    docs.make_txt(folder, encoding="gb18030")
    (folder / ".hidden.md").write_text("# secret\n\nnot for the index.")
    (folder / "photo.gif").write_bytes(b"GIF89a....")
    progress: list[tuple[int, int, str]] = []

    results = ingest_paths(
        [folder], store, config=settings.ingest,
        on_progress=lambda done, total, r: progress.append((done, total, r.source)),
    )  # fmt: skip

    by_source = {r.source: r for r in results}
    assert sorted(by_source) == sorted(
        ["handbook.html", "manual.pdf", "notes.txt", "photo.gif", "policy.docx", "runbook.md"]
    )
    assert by_source["photo.gif"].status == "skipped"
    assert "unsupported file type .gif" in (by_source["photo.gif"].reason or "")
    ingested = [r for r in results if r.status == "ingested"]
    assert len(ingested) == 5 and all(r.version == 1 and r.chunks > 0 for r in ingested)
    assert [p[0] for p in progress] == list(range(1, 7)) and {p[1] for p in progress} == {6}
    documents = store.list_documents()
    assert len(documents) == 5
    assert store.count_chunks() == sum(r.chunks for r in ingested)
    assert all(d.groups == ["all"] for d in documents)
    assert by_source["runbook.md"].doc_id == doc_id_for("runbook.md")
    hits = store.search("违约金 百分之二", ["all"], k=3)
    assert hits and hits[0].source == "notes.txt"
    pdf_hit = store.search("warranty lasts two years", ["all"], k=1)[0]
    assert pdf_hit.source == "manual.pdf" and pdf_hit.page == 3 and pdf_hit.title == "Supply Manual"


def test_same_bytes_skip_and_changed_bytes_make_a_new_version(tmp_path, store, settings) -> None:
    path = docs.make_markdown(tmp_path, "faq.md", "# FAQ\n\nThe gadget colour is ultramarine.")
    first = ingest_file(path, store, config=settings.ingest)
    assert (first.status, first.version) == ("ingested", 1)
    again = ingest_file(path, store, config=settings.ingest)
    assert (again.status, again.version, again.reason) == ("skipped", 1, "unchanged")
    before = snapshot(store)

    docs.make_markdown(tmp_path, "faq.md", "# FAQ\n\nThe gadget colour is vermilion now.")
    second = ingest_file(path, store, config=settings.ingest)
    assert (second.status, second.version, second.doc_id) == ("ingested", 2, first.doc_id)
    info = store.get_document(first.doc_id)
    assert info is not None and info.version == 2
    assert store.count_chunks() == before[1] - first.chunks + second.chunks
    assert {c.doc_version for c in store.get_chunks(first.doc_id)} == {2}
    assert store.search("ultramarine", ["all"]) == []
    assert store.search("vermilion", ["all"])[0].chunk_id.startswith(f"{first.doc_id}-v2-")


def test_same_bytes_with_new_groups_is_a_new_version(tmp_path, store, settings) -> None:
    path = docs.make_markdown(tmp_path, "hr.md", "# Salaries\n\nBands are reviewed in March.")
    assert ingest_file(path, store, config=settings.ingest).version == 1
    result = ingest_file(path, store, groups=["hr"], config=settings.ingest)
    assert (result.status, result.version) == ("ingested", 2)
    assert store.search("bands reviewed March", ["all"]) == []
    assert store.search("bands reviewed March", ["all", "hr"])[0].groups == ["hr"]


BAD_FILES: list[tuple[Callable[[Path], Path], str]] = [
    (lambda d: docs.make_unsupported(d), "unsupported file type .xyz"),
    (lambda d: docs.make_empty(d), "empty file"),
    (lambda d: docs.make_empty(d, "blank.md", b" \n\n \n"), "empty file"),
    (lambda d: docs.make_corrupt_pdf(d), "corrupt PDF"),
    (lambda d: docs.make_encrypted_pdf(d), "encrypted PDF"),
    (lambda d: docs.make_corrupt_docx(d), "corrupt DOCX"),
    (lambda d: docs.make_zip_bomb_docx(d), "zip bomb"),
    (lambda d: docs.make_binary_txt(d), "binary file, not text"),
    (lambda d: docs.make_oversize(d), "over the 1 MB limit"),
    (lambda d: docs.make_undecodable_txt(d), "cannot decode text"),
    (
        lambda d: docs.make_empty(d, "scan.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
        "corrupt image",
    ),
    # a broken upload under the name of a good document must not touch its current version
    (lambda d: docs.make_corrupt_pdf(d, "manual.pdf"), "corrupt PDF"),
    (lambda d: docs.make_encrypted_pdf(d, "manual.pdf"), "encrypted PDF"),
    (lambda d: docs.make_corrupt_docx(d, "policy.docx"), "corrupt DOCX"),
]


def test_bad_input_matrix_leaves_the_store_exactly_as_before(tmp_path, store, settings) -> None:
    good = tmp_path / "good"
    good.mkdir()
    docs.make_pdf(good)
    docs.make_docx(good)
    assert all(r.status == "ingested" for r in ingest_paths([good], store, config=settings.ingest))
    before = snapshot(store)
    for i, (make, reason) in enumerate(BAD_FILES):
        folder = tmp_path / f"bad{i}"
        folder.mkdir()
        path = make(folder)
        result = ingest_file(path, store, config=settings.ingest)
        assert result.status == "failed", path.name
        assert reason in (result.reason or ""), (path.name, result.reason)
        assert "\n" not in (result.reason or "")
        assert snapshot(store) == before, path.name
        via_bytes = ingest_bytes(path.read_bytes(), path.name, store, config=settings.ingest)
        assert via_bytes.status == "failed" and snapshot(store) == before
    assert store.search("warranty", ["all"])[0].source == "manual.pdf"


def test_bad_group_name_fails_without_writing(tmp_path, store, settings) -> None:
    path = docs.make_markdown(tmp_path, "x.md", "# X\n\nSome text.")
    result = ingest_file(path, store, groups=["ok", "bad group!"], config=settings.ingest)
    assert result.status == "failed" and "invalid group name" in (result.reason or "")
    assert snapshot(store) == ([], 0)


class FailingEmbedder(HashEmbedder):
    """Works until `broken` is set, then fails like an unreachable embeddings endpoint."""

    broken = False

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.broken:
            raise ConnectionError("embeddings endpoint refused the connection")
        return super().embed_documents(texts)


def test_store_failure_keeps_the_previous_version(tmp_path, milvus_lite_db, settings) -> None:
    embedder = FailingEmbedder(32)
    kb = MilvusStore(milvus_lite_db, collection=f"f_{uuid.uuid4().hex[:12]}", embedder=embedder)
    try:
        path = docs.make_markdown(tmp_path, "ops.md", "# Ops\n\nThe pager rotates weekly.")
        assert ingest_file(path, kb, config=settings.ingest).status == "ingested"
        before = snapshot(kb)
        docs.make_markdown(tmp_path, "ops.md", "# Ops\n\nThe pager rotates daily.")
        embedder.broken = True
        result = ingest_file(path, kb, config=settings.ingest)
        assert result.status == "failed"
        assert "refused the connection" in (result.reason or "")
        assert snapshot(kb) == before
        embedder.broken = False
        assert kb.search("pager rotates", ["all"])[0].text.endswith("weekly.")
    finally:
        kb.close()


def test_uploaded_names_are_base_names(store, settings) -> None:
    result = ingest_bytes(b"# T\n\nBody text.", "../../etc/evil.md", store, config=settings.ingest)
    assert (result.status, result.source) == ("ingested", "evil.md")
    assert store.list_documents()[0].source == "evil.md"


def test_batch_with_duplicate_names_and_missing_paths(tmp_path, store, settings) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    docs.make_markdown(a, "same.md", "# A\n\nFirst copy.")
    docs.make_markdown(b, "same.md", "# B\n\nSecond copy.")
    results: list[IngestResult] = ingest_paths(
        [a, b, tmp_path / "missing.pdf"], store, config=settings.ingest
    )
    assert [r.status for r in results] == ["ingested", "failed", "failed"]
    assert "same file name" in (results[1].reason or "")
    assert "no such file" in (results[2].reason or "")
    assert store.get_document(doc_id_for("same.md")).version == 1  # type: ignore[union-attr]


def test_reingest_without_groups_keeps_a_restricted_documents_readers(
    tmp_path, store, settings
) -> None:
    path = docs.make_markdown(tmp_path, "pay.md", "# Pay\n\nThe bonus pool is settled in April.")
    assert ingest_file(path, store, groups=["finance"], config=settings.ingest).version == 1
    again = ingest_file(path, store, config=settings.ingest)  # a routine re-run with no --groups
    assert (again.status, again.version) == ("skipped", 1)
    assert store.search("bonus pool settled April", ["all"]) == []
    assert store.get_document(again.doc_id).groups == ["finance"]


def test_running_headers_are_kept_with_the_document_not_in_its_chunks(store, settings) -> None:
    from tests.ingest.test_real_documents import hand_pdf, lines

    pages = [
        lines(
            (770, b"Acme Field Guide"),
            (640, b"Page body %d with its own words." % n),
            (30, b"Page %d of 4" % n),
        )
        for n in range(1, 5)
    ]
    result = ingest_bytes(hand_pdf(pages), "guide.pdf", store, config=settings.ingest)
    assert result.status == "ingested"
    info = store.get_document(result.doc_id)
    assert info is not None and info.furniture == ["Acme Field Guide", "Page 1 of 4"]
    assert info.parser.startswith(f"{PARSER_VERSION} ") and "pypdfium2-" in info.parser
    assert not any("Acme Field Guide" in c.text for c in store.get_chunks(result.doc_id))
