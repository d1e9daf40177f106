"""Ingestion benchmark: pages/s for parsing + chunking generated PDF and DOCX files.

Files are generated in a temp dir (fpdf2 for PDF, python-docx for DOCX; English text, since
fpdf2's core fonts are Latin-only), then each goes through the product's parse_file and
chunk_document. Writing to Milvus is excluded here (`bench retrieval` measures it).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ingest.chunker import chunk_document
from ingest.parse import parse_file

PAGES_PER_FILE = 20
PARAGRAPHS_PER_PAGE = 6
_VOCABULARY = (
    "contract supplier delivery invoice penalty warranty clause service gateway restart "
    "approval policy employee remote access certificate rotation incident escalation "
    "audit budget quarter revenue customer order shipment inspection compliance security "
    "backup recovery network latency capacity release rollback monitoring alert threshold "
    "manager director committee schedule deadline payment amount percent days weeks"
)
_WORDS = _VOCABULARY.split()


def paragraph(rng: np.random.Generator, words: int = 60) -> str:
    """A few sentences of business-like English."""
    picked = rng.choice(_WORDS, size=words)
    sentences = [" ".join(picked[i : i + 12]).capitalize() + "." for i in range(0, words, 12)]
    return " ".join(sentences)


def make_pdf(path: Path, pages: int, rng: np.random.Generator) -> None:
    try:
        from fpdf import FPDF
    except ImportError as exc:  # a dev dependency: pip install -e '.[dev]'
        raise RuntimeError("bench ingestion needs fpdf2 (pip install fpdf2)") from exc
    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    for page in range(pages):
        pdf.add_page()
        pdf.set_font("helvetica", style="B", size=13)
        pdf.multi_cell(0, 7, f"Section {page + 1}: operations", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=10)
        for _ in range(PARAGRAPHS_PER_PAGE):
            pdf.multi_cell(0, 5, paragraph(rng), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
    pdf.output(str(path))


def make_docx(path: Path, pages: int, rng: np.random.Generator) -> None:
    """A DOCX with the same amount of text as `pages` PDF pages, headings and one table each."""
    from docx import Document

    doc = Document()
    for page in range(pages):
        doc.add_heading(f"Section {page + 1}: operations", level=1 + page % 2)
        for _ in range(PARAGRAPHS_PER_PAGE - 1):
            doc.add_paragraph(paragraph(rng))
        table = doc.add_table(rows=3, cols=3)
        for row in table.rows:
            for cell in row.cells:
                cell.text = " ".join(rng.choice(_WORDS, size=3))
    doc.save(str(path))


def time_files(paths: list[Path]) -> float:
    """Seconds to parse and chunk every file, the way the ingestion pipeline does."""
    start = time.perf_counter()
    for path in paths:
        parsed = parse_file(path)
        chunk_document(
            parsed, doc_id=path.stem, doc_version=1, groups=["all"],
            checksum=hashlib.sha256(path.read_bytes()).hexdigest(),
        )  # fmt: skip
    return time.perf_counter() - start


def run(args: Any) -> dict[str, Any]:
    """`hopwise bench ingestion --pages N`: N pages of PDF and N page-equivalents of DOCX."""
    pages = int(getattr(args, "pages", None) or 200)
    rng = np.random.default_rng(3)
    files = max(1, pages // PAGES_PER_FILE)
    per_file = max(1, pages // files)
    result: dict[str, Any] = {"pages": files * per_file, "files_per_format": files}
    with tempfile.TemporaryDirectory(prefix="hopwise-bench-") as tmp:
        for kind, make in (("pdf", make_pdf), ("docx", make_docx)):
            paths = [Path(tmp) / f"{kind}-{i}.{kind}" for i in range(files)]
            for path in paths:
                make(path, per_file, rng)
            time_files(paths[:1])  # warm-up: imports, tokenizer, worker start
            seconds = time_files(paths)
            result[f"{kind}_pages_per_s"] = round(files * per_file / seconds, 1)
            result[f"{kind}_seconds"] = round(seconds, 3)
    result.update(embedding_rates(int(getattr(args, "embed_chunks", None) or 64)))
    return result


EN_SENTENCE = "The maintenance team replaces the coolant filter after every 400 hours of use. "
ZH_SENTENCE = "维护团队每运行四百小时更换一次冷却液过滤器，并记录在设备台账中。"


def embedding_rates(count: int) -> dict[str, Any]:
    """Chunks/s of the built-in embedder on typical chunk sizes, all cores and one thread
    (the background worker's setting); {} where the model is not available."""
    try:
        from ingest.builtin_embedder import load_builtin_embedder

        models = {
            "all_cores": load_builtin_embedder(),
            "one_thread": load_builtin_embedder(threads=1),
        }
    except Exception as exc:  # noqa: BLE001 - report why instead of a number
        return {"embedding": f"unavailable: {exc}"}
    texts = {
        "en_500_chars": [f"{i}. " + EN_SENTENCE * 6 for i in range(count)],
        "zh_300_chars": [f"{i}。" + ZH_SENTENCE * 9 for i in range(count)],
    }
    out: dict[str, Any] = {"embedding_model": models["all_cores"].name}
    for label, embedder in models.items():
        for kind, batch in texts.items():
            embedder.embed_documents(batch[:2])  # warm-up
            start = time.perf_counter()
            for first in range(0, len(batch), 4):  # the worker's call size
                embedder.embed_documents(batch[first : first + 4])
            out[f"embed_{kind}_{label}_per_s"] = round(
                len(batch) / (time.perf_counter() - start), 1
            )
    return out
