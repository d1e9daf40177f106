"""Run a whole evaluation: load the set, open its cached index, run every question, score."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopwise.app import meaning_similarity
from hopwise.evaluation.data import load_dataset
from hopwise.evaluation.index import open_index
from hopwise.evaluation.pipeline import Runner, build_reasoner
from hopwise.evaluation.record import FORMAT as RECORD_FORMAT
from hopwise.evaluation.record import Recording
from hopwise.evaluation.report import aggregate, score_question, write_outputs
from hopwise.settings import Settings

log = logging.getLogger(__name__)
EVIDENCE_FOR_SCORING = 20  # the largest recall budget: the answer step gets this many chunks


@dataclass
class EvalResult:
    report: dict[str, Any]
    rows: list[dict[str, Any]]
    outputs: dict[str, Path]


def eval_settings(settings: Settings, k: int) -> Settings:
    """The product settings with web off, `k` hits per search and room for recall@20."""
    return settings.model_copy(
        update={
            "web_search": False,
            "top_k": k,
            "max_evidence_chunks": max(settings.max_evidence_chunks, EVIDENCE_FOR_SCORING),
        }
    )


def write_inputs(path: Path, inputs: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in inputs), encoding="utf-8"
    )
    return path


def evaluate(
    prefix: str | Path,
    settings: Settings,
    *,
    mode: str = "adaptive",
    k: int = 10,
    limit: int | None = None,
    unanswerable: bool = False,
    out_dir: Path | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Evaluate one dataset in one mode; writes JSON, Markdown and PNG to `out_dir` if given."""
    dataset = load_dataset(prefix, limit=limit)
    if not dataset.questions:
        raise ValueError(f"{prefix}: no questions")
    excluded = (
        set().union(*(q.supporting_ids for q in dataset.questions)) if unanswerable else set()
    )
    settings = eval_settings(settings, k)
    store = open_index(dataset, settings, excluded=excluded)
    reasoner = Recording(build_reasoner(settings, meaning_similarity(store)))
    rows: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []  # the answer step's, per question (hopwise fit-reader)
    try:
        runner = Runner(mode, store, reasoner, settings, k)  # type: ignore[arg-type]
        for i, question in enumerate(dataset.questions, 1):
            run = runner.run(question)
            if run.error:
                log.warning("%s: %s", question.id, run.error)
            rows.append(score_question(question, run, unanswerable=unanswerable))
            given = reasoner.take()
            if given is not None:
                inputs.append({"format": RECORD_FORMAT, "id": question.id, **given})
            if on_progress:
                on_progress(i, len(dataset.questions))
    finally:
        store.close()
    report = aggregate(
        rows, dataset=dataset.name, mode=mode, k=k, unanswerable=unanswerable,
        reasoner=reasoner.name,
    )  # fmt: skip
    if mode == "gold":  # share of questions the dataset decomposes (others search whole)
        decomposed = sum(1 for q in dataset.questions if q.decomposition)
        report["gold_decomposed"] = round(decomposed / len(dataset.questions), 4)
    outputs = write_outputs(out_dir, report, rows) if out_dir is not None else {}
    if out_dir is not None:
        outputs["inputs"] = write_inputs(
            out_dir / f"{outputs['json'].stem}.reader-inputs.jsonl", inputs
        )
    return EvalResult(report, rows, outputs)
