"""Garbage in, one clear reason out: random and mutated files never escape as other errors."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.errors import IngestError
from ingest.parse import SUPPORTED_EXTENSIONS, parse_bytes
from tests.fakes import docs


def _check(data: bytes, name: str, **kw: float) -> None:
    try:
        doc = parse_bytes(data, name, **kw)
    except IngestError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert doc.text.strip()
    for block in doc.blocks:
        assert doc.text[block.start_char : block.end_char] == block.text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000), st.sampled_from(SUPPORTED_EXTENSIONS))
def test_random_bytes_give_a_document_or_a_reason(data: bytes, ext: str) -> None:
    _check(data, f"random{ext}")


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=400), st.sampled_from([".md", ".html", ".txt"]))
def test_random_text_gives_a_document_or_a_reason(text: str, ext: str) -> None:
    _check(text.encode("utf-8", "surrogatepass"), f"random{ext}")


@pytest.mark.slow
@pytest.mark.parametrize("maker", [docs.make_pdf, docs.make_docx, docs.make_html])
def test_mutated_real_files_never_hang_or_crash(tmp_path: Path, maker) -> None:
    path = maker(tmp_path)
    original = path.read_bytes()
    rng = random.Random(1234)
    for _ in range(150):
        data = bytearray(original)
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        _check(bytes(data), f"mutated{path.suffix}", timeout_s=10)
