"""`hopwise ask` as a user runs it: a subprocess over a real Milvus Lite KB, offline reasoning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hopwise.app import open_store
from hopwise.cli import main
from hopwise.settings import load_settings
from ingest.pipeline import ingest_bytes

DOCS = {
    "inception.md": "# Inception\n\nInception is a 2010 film directed by Christopher Nolan.\n",
    "nolan.md": "# Christopher Nolan\n\nChristopher Nolan was born in London, England.\n",
}
KEYS = {
    "answer",
    "mode",
    "route",
    "route_reason",
    "standalone_question",
    "sub_questions",
    "hops",
    "evidence",
    "citations",
    "evaluation",
    "web_used",
    "web_results",
    "stop_reason",
    "llm_calls",
    "tokens",
    "timings_ms",
    "trace",
    "thread_id",
    "question",
}


def hopwise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hopwise", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_ask_text_then_json_follow_up_in_the_same_thread(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings()
    store = open_store(settings)
    for name, text in DOCS.items():
        ingest_bytes(text.encode(), name, store, groups=["all"], config=settings.ingest)
    store.close()

    assert main(["ask", "Who directed Inception?", "--no-web"]) == 0
    out = capsys.readouterr().out
    assert "Sources:" in out and "inception.md" in out.split("Sources:")[1]
    assert "mode offline" in out and "route complex" in out
    thread_id = out.rsplit("thread ", 1)[1].strip()

    follow = hopwise("ask", "Where was he born?", "--thread", thread_id, "--json")
    assert follow.returncode == 0, follow.stderr
    result = json.loads(follow.stdout)
    assert set(result) >= KEYS and result["mode"] == "offline"
    assert result["thread_id"] == thread_id
    assert result["standalone_question"] != "Where was he born?"  # rewritten from the thread
    assert "nolan.md" in {c["source"] for c in result["citations"]}
    hit = result["hops"][0]["hits"][0]
    assert {"chunk_id", "doc", "section", "page", "bm25", "dense", "fused", "new"} <= set(hit)
    assert (data_dir / "conversations.sqlite").exists()


def test_bad_history_file_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "history.json"
    bad.write_text('{"role": "user"}', encoding="utf-8")
    assert main(["ask", "and its penalty?", "--history", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("hopwise: error: --history must be a JSON list") and "\n" not in err
