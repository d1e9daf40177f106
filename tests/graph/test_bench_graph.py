"""The graph benchmark runs on a tiny dev set and reports its numbers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hopwise.bench.graph import run

PASSAGES = [
    {
        "id": "p1",
        "title": "Inception",
        "text": "Inception is a 2010 film directed by Christopher Nolan.",
    },
    {"id": "p2", "title": "Christopher Nolan", "text": "Christopher Nolan was born in London."},
    {"id": "p3", "title": "Tenet", "text": "Tenet is a 2020 film directed by Christopher Nolan."},
]
QUESTIONS = [
    {"id": "q1", "question": "Where was the director of Inception born?", "answer": "London"},
    {
        "id": "q2",
        "question": "Which film came out first, Inception or Tenet?",
        "answer": "Inception",
    },
]


def test_bench_reports_overhead_first_token_and_calls(tmp_path: Path) -> None:
    for name, rows in (("tiny.corpus", PASSAGES), ("tiny.questions", QUESTIONS)):
        lines = "\n".join(json.dumps(r) for r in rows)
        (tmp_path / f"{name}.jsonl").write_text(lines, encoding="utf-8")
    report = run(argparse.Namespace(dev_dir=str(tmp_path), limit=5))
    tiny = report["sets"]["tiny"]
    economy, every = tiny["economy"], tiny["every_step_to_model"]
    assert economy["questions"] == 2 and economy["overhead_ms"]["p50"] > 0
    assert economy["first_token_overhead_ms"]["p50"] > 0
    assert economy["llm_calls_per_complex_question"] < every["llm_calls_per_complex_question"]
    assert (
        report["summary"]["economy"]["llm_calls_per_complex_question"]
        == (economy["llm_calls_per_complex_question"])
    )
