"""`hopwise ingest | docs | search` as a user runs them: real subprocesses on a tmp data dir.

Each call starts Milvus Lite, so the suite makes few calls and shares one knowledge base.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes import docs


@dataclass
class KB:
    home: Path
    files: Path
    first: subprocess.CompletedProcess[str]


def hopwise(kb_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {
        "HOPWISE_DATA_DIR": str(kb_home / "data"),
        "HOPWISE_WEB_SEARCH": "off",
        "PYTHONWARNINGS": "ignore",
    }
    return subprocess.run(
        [sys.executable, "-m", "hopwise", *args],
        cwd=kb_home, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KB:
    home = tmp_path_factory.mktemp("cli")
    files = home / "files"
    files.mkdir()
    docs.make_markdown(files, "contract.md", "# 合同\n\n违约金为合同金额的百分之五。")
    docs.make_docx(files)
    docs.make_binary_txt(files)
    return KB(home, files, hopwise(home, "ingest", str(files), "--groups", "legal"))


def test_ingest_prints_one_line_per_file_and_fails_on_bad_input(kb: KB) -> None:
    assert kb.first.returncode == 1, kb.first.stderr
    lines = kb.first.stdout.strip().splitlines()
    assert lines == [
        "ingested  contract.md  (1 chunks, v1)",
        "failed  image.txt  (binary file, not text)",
        lines[2],
    ]
    assert re.fullmatch(r"ingested  policy\.docx  \(\d+ chunks, v1\)", lines[2])
    assert "Traceback" not in kb.first.stderr


def test_reingest_is_skipped_and_json_lists_results(kb: KB) -> None:
    docs.make_markdown(kb.files, "extra.md", "# Extra\n\n违约金 is also mentioned here.")
    proc = hopwise(
        kb.home, "ingest", str(kb.files / "contract.md"), str(kb.files / "extra.md"),
        "--groups", "legal", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert [(r["source"], r["status"], r["version"]) for r in results] == [
        ("contract.md", "skipped", 1),
        ("extra.md", "ingested", 1),
    ]
    assert {"path", "source", "status", "doc_id", "version", "chunks", "reason"} <= set(results[0])


def test_docs_list_json(kb: KB) -> None:
    listed = hopwise(kb.home, "docs", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    documents = {d["source"]: d for d in json.loads(listed.stdout)}
    assert set(documents) == {"contract.md", "policy.docx", "extra.md"}
    for d in documents.values():
        assert {"doc_id", "title", "source", "version", "chunks", "groups"} <= set(d)
        assert d["version"] == 1 and d["chunks"] >= 1 and d["groups"] == ["legal"]
    assert documents["policy.docx"]["title"] == "Travel Policy"


@pytest.mark.slow  # ~10 s of CLI subprocesses: in .ci/run's slow suite
def test_search_json_respects_groups(kb: KB) -> None:
    found = hopwise(kb.home, "search", "违约金 百分之五", "--groups", "legal", "-k", "1", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert len(hits) == 1
    top = hits[0]
    keys = {"chunk_id", "doc_id", "source", "section", "page", "text", "score"}
    assert keys | {"bm25_score", "dense_score"} <= set(top)
    assert top["source"] == "contract.md" and top["section"] == "合同"
    assert top["bm25_score"] > 0 and top["dense_score"] is None
    # without the group every document here is invisible
    hidden = hopwise(kb.home, "search", "违约金 百分之五", "--json")
    assert hidden.returncode == 0 and json.loads(hidden.stdout) == []


def test_docs_delete(
    kb: KB, data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hopwise.cli import main
    from ingest.pipeline import doc_id_for

    doc_id = doc_id_for("extra.md")
    deleted = hopwise(kb.home, "docs", "delete", doc_id)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.startswith(f"deleted  {doc_id}  (1 chunk)")
    # an unknown id is a clear error (in-process: the entry point is covered above)
    monkeypatch.setenv("HOPWISE_DATA_DIR", str(kb.home / "data"))
    assert main(["docs", "delete", doc_id]) == 1
    assert f"no document with id '{doc_id}'" in capsys.readouterr().err


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_empty_groups_is_an_error_not_public(kb: KB) -> None:
    before = json.loads(hopwise(kb.home, "docs", "list", "--json").stdout)
    new = kb.files / "new-note.md"
    new.write_text("# Note\n\nThe vault code rotates weekly.", encoding="utf-8")
    refused = hopwise(kb.home, "ingest", str(new), "--groups", "")
    assert refused.returncode != 0 and "--groups is empty" in refused.stderr
    assert json.loads(hopwise(kb.home, "docs", "list", "--json").stdout) == before
    new.unlink()
