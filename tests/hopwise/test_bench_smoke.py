"""Each benchmark runs tiny through the real CLI: a smoke test, never a timed test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopwise.cli import main

RETRIEVAL_KEYS = {
    "insert_per_s", "bm25_p50_ms", "bm25_p95_ms", "hybrid_p50_ms", "hybrid_p95_ms",
    "side_hybrid_p50_ms", "side_fill_per_s",
}  # fmt: skip


def test_bench_retrieval_json(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    assert main(["bench", "retrieval", "--chunks", "200", "--queries", "20", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= RETRIEVAL_KEYS and result["chunks"] == 200
    assert all(result[k] > 0 for k in RETRIEVAL_KEYS)
    assert not (data_dir / "milvus.db").exists()  # a scratch database, never the user's


def test_bench_ingestion_table_and_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["bench", "ingestion", "--pages", "4", "--embed-chunks", "4", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "== bench ingestion" in out and "pdf_pages_per_s" in out
    saved = json.loads((tmp_path / "ingestion.json").read_text())
    assert saved["pages"] == 4 and saved["pdf_pages_per_s"] > 0 and saved["docx_pages_per_s"] > 0
    assert saved["embed_zh_300_chars_one_thread_per_s"] > 0  # the built-in model's rate


def test_bench_graph_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    dev = Path(__file__).resolve().parents[3] / "shared" / "eval" / "dev"
    args = ["bench", "graph", "--limit", "2", "--json"]
    if dev.exists():
        args += ["--sets", "musique_en", "--dev-dir", str(dev)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.strip() == "hopwise bench graph: not available yet" or "sets" in json.loads(out)


@pytest.mark.slow
def test_bench_all_writes_every_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "results"
    argv = ["bench", "all", "--sizes", "200,300", "--queries", "10", "--pages", "2"]
    argv += ["--embed-chunks", "2"]
    argv += ["--limit", "1", "--out", str(out_dir)]
    dev = Path(__file__).resolve().parents[3] / "shared" / "eval" / "dev"
    if dev.exists():
        argv += ["--sets", "musique_en", "--dev-dir", str(dev)]
    assert main(argv) == 0
    combined = json.loads((out_dir / "all.json").read_text())
    assert set(combined) == {"retrieval", "ingestion", "graph"}
    assert set(combined["retrieval"]) == {"200", "300"}
    assert set(combined["retrieval"]["300"]) >= RETRIEVAL_KEYS
    for name in ("retrieval", "ingestion", "graph"):
        assert (out_dir / f"{name}.json").exists()
    assert "results written to" in capsys.readouterr().out


def test_a_benchmark_module_not_built_yet_is_reported() -> None:
    from hopwise.commands.bench import NOT_AVAILABLE, runner

    assert runner("no_such_benchmark") is None
    assert runner("retrieval") is not None and NOT_AVAILABLE == "not available yet"
