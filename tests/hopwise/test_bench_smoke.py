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


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
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


PARSING_FILE_KEYS = {"path", "name", "format", "pages", "seconds", "pages_per_s", "chars", "error"}
PARSING_SCORES = {"recall", "precision", "order_recall", "glued_words"}


def test_bench_parsing_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tests.fakes.docs import make_corrupt_pdf, make_docx, make_markdown, make_pdf

    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf(folder), make_docx(folder), make_markdown(folder), make_corrupt_pdf(folder)
    (folder / "ignored.xyz").write_text("not a supported format")
    argv = ["bench", "parsing", str(folder), "--engines", "pypdf,pypdfium2,pdfplumber,absent"]
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"files", "summary"}
    files = {row["name"]: row for row in result["files"]}
    assert set(files) == {"manual.pdf", "policy.docx", "runbook.md", "broken.pdf"}
    assert all(set(row) >= PARSING_FILE_KEYS for row in files.values())
    assert "corrupt PDF" in files["broken.pdf"]["error"]  # reported, not raised
    good = [row for name, row in files.items() if name != "broken.pdf"]
    assert all(row["error"] is None and row["pages"] > 0 and row["chars"] > 0 for row in good)
    assert files["manual.pdf"]["pages"] == 3 and files["manual.pdf"]["pages_per_s"] > 0
    engines = files["manual.pdf"]["engines"]
    assert set(engines) == {"pypdf", "pypdfium2", "pdfplumber"}
    summary = result["summary"]
    assert summary["files"] == 4 and summary["failed"] == 1 and summary["pdf_files"] == 2
    assert summary["pages"] == 5 and summary["pages_per_s"] > 0
    assert any("absent" in note for note in summary["notes"])
    if summary["pdftotext"] is None:
        pytest.skip("pdftotext (poppler-utils) not installed: no recall to check")
    for scored in [files["manual.pdf"], *engines.values()]:
        assert set(scored) >= PARSING_SCORES
        assert 0.9 <= scored["recall"] <= 1  # the words pdftotext reads in a plain generated file
    assert files["manual.pdf"]["precision"] > 0.9 and files["broken.pdf"]["recall"] is None
    assert 0.9 <= summary["mean_recall"] <= 1 and summary["engines"]["pypdf"]["files"] == 2


def test_bench_parsing_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tests.fakes.docs import make_txt

    assert main(["bench", "parsing", str(make_txt(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "== bench parsing" in out and "notes.txt" in out and "totals" in out


def test_parsing_words_are_han_characters_and_casefolded_runs() -> None:
    from hopwise.bench.parsing import compare, reference, tokens

    assert tokens("Ｆｕｌｌ-width, CASE 违约金") == ["full", "width", "case", "违", "约", "金"]
    scores = compare(
        [tokens("deliverythegoodswithinthirtydays now")], reference("delivery the now")
    )
    assert (scores["recall"], scores["precision"], scores["glued_words"]) == (0.3333, 0.5, 1)


def test_parsing_order_drops_when_columns_are_read_across() -> None:
    from hopwise.bench.parsing import compare, reference, tokens

    left, right = ["alpha beta gamma", "delta epsilon zeta"], ["one two three", "four five six"]
    ref = reference("\n".join(left + right))  # column by column, as pdftotext reads it
    assert compare([tokens(" ".join(left + right))], ref)["order_recall"] == 1.0
    across = " ".join(f"{a} {b}" for a, b in zip(left, right, strict=True))
    scores = compare([tokens(across)], ref)  # row by row across the gutter: same words
    assert (scores["recall"], scores["order_recall"]) == (1.0, 0.0)


@pytest.mark.slow
def test_bench_startup_measures_a_fresh_app(capsys: pytest.CaptureFixture[str]) -> None:
    """A real `streamlit run ui/app.py` and Chromium (the slow suite has both)."""
    assert main(["bench", "startup", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    stages = ["server_s", "first_paint_s", "question_box_s", "ready_s", "first_answer_s"]
    times = [result[k] for k in stages]
    assert all(t > 0 for t in times) and times == sorted(times[:3]) + times[3:]
    assert result["ready_s"] <= result["first_answer_s"]


def test_bench_kbsearch_counts_hits_per_language_and_chooses_leaving_one_out(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path
) -> None:
    # two tiny knowledge bases of two languages each, written here
    for name, en_fact, zh_fact, question, gold in (
        ("kb-one", "The loading dock closes at 19:30 on weekdays.", "叉车每年检验一次，检验费八百元。",
         "When does the loading dock close on weekdays?", "19:30"),
        ("kb-two", "Badge renewals take four working days.", "会议室最多容纳二十四人。",
         "How long do badge renewals take?", "four working days"),
    ):  # fmt: skip
        root = tmp_path / "shared" / name
        (root / "docs").mkdir(parents=True)
        (root / "docs" / "en.md").write_text(f"# Site notes\n\n{en_fact}\n", encoding="utf-8")
        (root / "docs" / "zh.md").write_text(f"# 说明\n\n{zh_fact}\n", encoding="utf-8")
        (root / "manifest.json").write_text(json.dumps([
            {"file": "en.md", "lang": "en", "groups": ["all"]},
            {"file": "zh.md", "lang": "zh", "groups": ["all"]},
        ]), encoding="utf-8")  # fmt: skip
        (root / "questions.jsonl").write_text(json.dumps({
            "id": f"{name}-1", "question": question, "lang": "en",
            "must_contain": [gold], "supporting": ["docs/en.md"],
        }) + "\n", encoding="utf-8")  # fmt: skip
    argv = ["bench", "kbsearch", "--shared", str(tmp_path / "shared"), "--slots", "0,1", "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    for n in ("0", "1"):
        for name in ("kb-one", "kb-two"):
            same = result["slots"][n][name]["same"]
            assert same == [1, 1]  # its own words find it
            assert result["slots"][n][name]["other"] == [0, 0]
    assert result["held_out"]["kb-one"] == {"slots": 0, "hits": 1}  # a tie goes to fewer places
