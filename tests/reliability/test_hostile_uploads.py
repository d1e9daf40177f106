"""Hostile uploads: valid PDF/DOCX/HTML/TXT/MD files mutated by hypothesis go through the parse
worker (with its deadline) and the chunker; the only failure is IngestError, no parse outlives
the per-file timeout, chunks keep their invariants. A DOCX zip bomb and PDFs with a huge page
count are refused through the real pipeline, and an uploaded name can never become a path."""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopwise.app import open_store
from hopwise.settings import load_settings
from ingest.chunker import chunk_document, count_tokens
from ingest.errors import IngestError
from ingest.models import Block, ParsedDocument
from ingest.parse import MAX_PDF_PAGES, parse_bytes
from ingest.pipeline import ingest_bytes
from tests.fakes import docs
from tests.fakes.memory_store import MemoryStore

TIMEOUT_S = 5.0
SLACK_S = 5.0  # worker start-up after a kill, IPC


def _seed_files() -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        makers = [docs.make_pdf, docs.make_docx, docs.make_html, docs.make_markdown, docs.make_txt,
                  docs.make_pdf_with_hidden_text, docs.make_docx_with_hidden_text,
                  docs.make_html_with_hidden_text, docs.make_markdown_with_hidden_text]  # fmt: skip
        return {(path := make(root)).name: path.read_bytes() for make in makers}


SEEDS = _seed_files()

mutations = st.lists(
    st.tuples(st.sampled_from(["flip", "cut", "insert", "dup"]), st.integers(0, 2**31),
              st.binary(min_size=1, max_size=64)),
    min_size=1, max_size=12,
)  # fmt: skip


def mutate(data: bytes, steps: list[tuple[str, int, bytes]]) -> bytes:
    out = bytearray(data)
    for kind, where, blob in steps:
        at = where % (len(out) + 1)
        if kind == "flip" and out:
            out[at % len(out)] ^= blob[0] or 0xFF
        elif kind == "cut":
            del out[at : at + len(blob) * 16]
        elif kind == "insert":
            out[at:at] = blob
        elif kind == "dup":
            out[at:at] = out[at : at + len(blob) * 8]
    return bytes(out)


def parse_and_chunk(data: bytes, name: str) -> None:
    """Either IngestError (one line) or a document whose chunks are sound."""
    started = time.monotonic()
    try:
        doc = parse_bytes(data, name, timeout_s=TIMEOUT_S)
    except IngestError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    finally:
        assert time.monotonic() - started < TIMEOUT_S + SLACK_S
    check_chunks(doc, chunk_tokens=80, overlap=10)


def check_chunks(doc: ParsedDocument, chunk_tokens: int, overlap: int) -> None:
    chunks = chunk_document(
        doc, doc_id="d", doc_version=1, groups=["all"], checksum="c",
        chunk_tokens=chunk_tokens, overlap_tokens=overlap,
    )  # fmt: skip
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for c in chunks:
        assert c.text.strip()
        assert 0 <= c.start_char <= c.end_char <= len(doc.text)


FUZZ = settings(
    max_examples=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip


@FUZZ
@given(st.sampled_from(sorted(SEEDS)), mutations)
def test_mutated_valid_files_parse_or_give_a_reason(name: str, steps) -> None:
    parse_and_chunk(mutate(SEEDS[name], steps), name)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(SEEDS)), mutations)
def test_mutated_valid_files_long_run(name: str, steps) -> None:
    parse_and_chunk(mutate(SEEDS[name], steps), name)


blocks = st.lists(
    st.tuples(st.text(min_size=0, max_size=300), st.lists(st.text(max_size=20), max_size=3),
              st.one_of(st.none(), st.integers(1, 50)), st.sampled_from(["text", "heading", "table"])),
    max_size=25,
)  # fmt: skip


@FUZZ
@given(blocks, st.integers(1, 120), st.integers(0, 60))
def test_chunker_on_arbitrary_blocks(raw, chunk_tokens: int, overlap: int) -> None:
    """Any block structure (CJK, emoji, control characters, empty blocks, odd sizes)."""
    parts, out, pos = [], [], 0
    for text, path, page, kind in raw:
        out.append(Block(text=text, section_path=path, page=page, kind=kind, start_char=pos,
                         end_char=pos + len(text)))  # fmt: skip
        parts.append(text)
        pos += len(text) + 2
    doc = ParsedDocument(source="x.md", title="x", text="\n\n".join(parts), blocks=out)
    try:
        check_chunks(doc, chunk_tokens, min(overlap, chunk_tokens - 1) if chunk_tokens > 1 else 0)
    except (IngestError, ValueError) as exc:  # a refused configuration must say why
        assert str(exc)


def test_chunks_stay_near_the_size_limit() -> None:
    doc = parse_bytes(SEEDS["notes.txt"] * 20, "notes.txt")
    chunks = chunk_document(
        doc, doc_id="d", doc_version=1, groups=["all"], checksum="c", chunk_tokens=100,
        overlap_tokens=10,
    )  # fmt: skip
    assert len(chunks) > 5 and max(count_tokens(c.text) for c in chunks) <= 2 * 100


# ---- bombs through the real pipeline --------------------------------------------------------


def huge_count_pdf(count: int) -> bytes:
    """A small PDF with `count` pages: one page object referenced `count` times."""
    kids = b" ".join([b"3 0 R"] * count)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ]
    out, offsets = io.BytesIO(), []
    out.write(b"%PDF-1.4\n")
    for i, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def many_blank_pages_pdf(count: int) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(count):
        writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


@pytest.fixture
def settings_dir(tmp_path: Path):
    return load_settings(data_dir=tmp_path / "data", web_search=False, parse_timeout_s=TIMEOUT_S)


def test_bombs_are_refused_and_the_store_is_untouched(tmp_path: Path, settings_dir) -> None:
    store = MemoryStore()
    bomb = docs.make_zip_bomb_docx(tmp_path, inflated_mb=64).read_bytes()
    cases = {
        "bomb.docx": (bomb, "zip bomb"),
        "shared.pdf": (huge_count_pdf(100_000), "100000 pages, over the"),
        "blank.pdf": (many_blank_pages_pdf(MAX_PDF_PAGES + 1), f"{MAX_PDF_PAGES}-page limit"),
    }
    for name, (data, reason) in cases.items():
        started = time.monotonic()
        result = ingest_bytes(data, name, store, groups=["all"], config=settings_dir.ingest)
        assert result.status == "failed" and reason in (result.reason or ""), result
        assert time.monotonic() - started < TIMEOUT_S + SLACK_S
    assert store.list_documents() == []


# ---- names that try to be paths -------------------------------------------------------------

NAMES = [
    "../../evil.md", "/etc/evil.md", "..\\..\\evil.md", "a/b/../../../evil.md", "....//evil.md",
    "C:\\Windows\\evil.md", "./.././evil.md", "evil.md\x00.txt", "%2e%2e%2fevil.md",
]  # fmt: skip


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("via", ["ingest_bytes", "admin_upload"])
def test_path_names_never_leave_the_data_dir(tmp_path: Path, settings_dir, via: str) -> None:
    from hopwise.documents import ingest_uploads

    data = settings_dir.data_dir
    outside_before = tree(tmp_path.parent)
    body = b"# Evil\n\nThis upload tries to escape the data dir.\n"
    with open_store(settings_dir) as store:
        if via == "ingest_bytes":
            results = [
                ingest_bytes(body, n, store, groups=["all"], config=settings_dir.ingest)
                for n in NAMES
            ]
        else:
            results = ingest_uploads([(n, body) for n in NAMES], store, groups=["all"],
                                     settings=settings_dir)  # fmt: skip
        sources = {d.source for d in store.list_documents()}
    for name, result in zip(NAMES, results, strict=True):
        if result.status == "failed":
            assert result.reason and "/" not in result.source.strip("/"), result
            continue
        assert "/" not in result.source and "\\" not in result.source and result.source != ".."
        assert result.source.endswith(("evil.md", "evil.md.txt", "evil.md.txt")), name
    assert all("/" not in s and "\\" not in s for s in sources)
    new_outside = {
        p for p in tree(tmp_path.parent) - outside_before
        if not (tmp_path.parent / p).resolve().is_relative_to(data.resolve())
    }  # fmt: skip
    assert not any("evil" in p for p in new_outside), new_outside
    assert not any("evil" in p for p in tree(data))  # uploads are parsed in memory, not saved
