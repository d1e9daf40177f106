"""`hopwise eval-kb`: a small company knowledge base of our own, asked as its users would, with
a restricted document; and our grader against the shared set's own grader where it exists."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from hopwise.cli import main
from hopwise.evaluation.kbgrade import abstains, grade, normalise

SHARED = Path(__file__).resolve().parents[3] / "shared" / "eval" / "kb-dev"

DOCS = {
    "fleet.md": "# Fleet register\n\nVan | Depot | Service due\n--- | --- | ---\nVN-31 | North yard | 2031-04-02\n"
    "VN-47 | Harbour yard | 2031-06-19\n",
    "rates.md": "# Rates\n\nThe night rate for a driver is 48 per hour.\n",
}
QUESTIONS = [
    {"id": "q-1", "question": "Hello! What can you do?", "type": "simple_general",
     "must_contain": [], "must_not_contain": [], "needs_groups": []},
    {"id": "q-2", "question": "When is VN-47 due for service?", "type": "single_hop",
     "must_contain": ["2031-06-19"], "must_not_contain": ["2031-04-02"], "needs_groups": []},
    {"id": "q-3", "question": "What is the night rate for a driver?", "type": "acl_finance",
     "must_contain": ["48"], "must_not_contain": [], "needs_groups": ["payroll"]},
    {"id": "q-4", "question": "Who painted the north yard gate?", "type": "unanswerable",
     "must_contain": [], "must_not_contain": [], "needs_groups": []},
]  # fmt: skip


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    for name, text in DOCS.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    manifest = [
        {"file": "fleet.md", "groups": ["all"]},
        {"file": "rates.md", "groups": ["payroll"]},
    ]
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = "".join(json.dumps(q) + "\n" for q in QUESTIONS)
    (root / "questions.jsonl").write_text(lines, encoding="utf-8")
    return root


def run_eval_kb(kb_dir: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """`hopwise eval-kb DIR --out OUT --json` as a user runs it; the printed report."""
    assert main(["eval-kb", str(kb_dir), "--out", str(out), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(autouse=True)
def _keywords_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPWISE_EMBEDDINGS", "off")  # the built-in embedder is measured elsewhere


def test_eval_kb_asks_as_users_grades_per_half_and_probes_restricted_documents(
    kb_dir: Path,
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    report = run_eval_kb(kb_dir, out, capsys)
    rows = {r["id"]: r for r in map(json.loads, (out / "answers.jsonl").read_text().splitlines())}
    assert set(rows) == {"q-1", "q-2", "q-3", "q-4"}
    assert rows["q-1"]["correct"] and rows["q-1"]["mode"] == "offline"
    assert rows["q-2"]["correct"] and "2031-06-19" in rows["q-2"]["answer"], rows["q-2"]["answer"]
    assert rows["q-3"]["groups"] == ["all", "payroll"] and rows["q-3"]["correct"]
    probe = json.loads((out / "probes.jsonl").read_text().splitlines()[0])
    assert probe["groups"] == ["all"] and "48" not in probe["answer"] and probe["correct"]
    assert report["halves"]["all"]["leaks"] == 0
    assert report["halves"]["all"]["total"]["n"] == 4
    assert {"A", "B", "all"} >= set(report["halves"]) and "all" in report["halves"]
    assert rows["q-2"]["citations"] and rows["q-2"]["citations"][0]["source"] == "fleet.md"


def test_grading_rules() -> None:
    q = {"type": "single_hop", "must_contain": ["2024-06-18"], "must_not_contain": ["2024-06-20"],
         "needs_groups": []}  # fmt: skip
    assert grade(q, "Approved: 2024年6月18日 [1]", ["all"]) == (True, "")
    assert not grade(q, "2024-06-18, not 2024/6/20", ["all"])[0]
    assert normalise("12,800 元") == "12800元"
    assert abstains("The documents do not say: who signed it.")
    assert abstains("文档中没有说明：签订日期。") and not abstains("Hello! I'm Hopwise.")
    leak = {**q, "needs_groups": ["finance"]}
    assert grade(leak, "It is 2024-06-18.", ["all"]) == (False, "leaked ['2024-06-18']")


@pytest.mark.skipif(not (SHARED / "grade.py").exists(), reason="../shared/eval/kb-dev is absent")
def test_our_grader_agrees_with_the_shared_one() -> None:
    spec = importlib.util.spec_from_file_location("kbdev_grade", SHARED / "grade.py")
    assert spec and spec.loader
    theirs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(theirs)
    questions = [json.loads(x) for x in (SHARED / "questions.jsonl").read_text().splitlines()]
    answers = ["", "文档中没有说明：这一点。", "The documents do not say.", "Hello!"]
    for q in questions:
        for answer in [*answers, q["answer"], " ".join(q["must_contain"])]:
            for groups in (["all"], ["all", "finance"]):
                assert grade(q, answer, groups)[0] == theirs.grade_one(q, answer, groups)[0]


def test_eval_kb_runs_through_a_configured_model_and_counts_its_calls(
    kb_dir: Path,
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.fakes.openai_stub import StubOpenAIServer, plausible_responder

    with StubOpenAIServer(responder=plausible_responder) as stub:
        monkeypatch.setenv("HOPWISE_LLM_BASE_URL", stub.url)
        monkeypatch.setenv("HOPWISE_LLM_MODEL", "stub-model")
        monkeypatch.setenv("HOPWISE_LLM_API_KEY", "sk-test")
        report = run_eval_kb(kb_dir, tmp_path / "o", capsys)
        assert stub.request_count > 0
    assert report["reasoner"] == "llm"
    assert report["halves"]["all"]["llm_calls_mean"] > 0
    rows = [json.loads(x) for x in (tmp_path / "o" / "answers.jsonl").read_text().splitlines()]
    assert all(r["mode"] in ("llm", "degraded") for r in rows if r["type"] != "simple_general")
