"""Aggregate per-question runs into the report: JSON object, Markdown table and PNG chart."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graph.result import answer_kind
from hopwise.evaluation import scoring as sc
from hopwise.evaluation.data import Question
from hopwise.evaluation.pipeline import QuestionRun


def score_question(q: Question, run: QuestionRun, *, unanswerable: bool) -> dict[str, Any]:
    """Every per-question metric (recall is over the ranked evidence the answer step got)."""
    ids = run.evidence_ids
    row: dict[str, Any] = {
        "id": q.id, "type": q.type, "error": run.error,
        "recall_at": {str(b): sc.recall_at(q.groups, ids, b) for b in sc.RECALL_BUDGETS},
        "all_hops_covered": {str(b): sc.all_covered(q.groups, ids, b) for b in sc.RECALL_BUDGETS},
        "first_hop": sc.hop_recall(q.groups, ids, 10, 0),
        "last_hop": sc.hop_recall(q.groups, ids, 10, -1),
        "short_answer": run.short_answer,
        "answer_kind": answer_kind(run.answer),  # short | quote | not_found | other
        "em": sc.exact_match(run.short_answer, q.golds),
        "f1": sc.token_f1(run.short_answer, q.golds),
        "contains": sc.contains_answer(run.answer, q.golds, q.answer_parts or None),
        "abstained": sc.abstained(run.answer, run.enough) if unanswerable else None,
        "enough": run.enough,
        "llm_calls": run.llm_calls, "tokens": run.tokens, "hops": run.hops,
        "stop_reason": run.stop_reason, "latency_ms": round(run.latency_ms, 2),
        "mode_used": run.mode_used, "queries": run.queries, "evidence_ids": ids[:20],
    }  # fmt: skip
    return row


def _mean(values: Sequence[float | None]) -> float:
    present = [float(v) for v in values if v is not None]
    return round(statistics.fmean(present), 4) if present else 0.0


def aggregate(
    rows: Sequence[dict[str, Any]],
    *,
    dataset: str,
    mode: str,
    k: int,
    unanswerable: bool,
    reasoner: str,
) -> dict[str, Any]:
    """The report object (`hopwise eval --json` prints exactly this)."""
    latencies = [r["latency_ms"] for r in rows]
    budgets = [str(b) for b in sc.RECALL_BUDGETS]
    return {
        "dataset": dataset,
        "n": len(rows),
        "mode": mode,
        "reasoner": reasoner,
        "k": k,
        "unanswerable": unanswerable,
        "recall_at": {b: _mean([r["recall_at"][b] for r in rows]) for b in budgets},
        "all_hops_covered": _mean([float(r["all_hops_covered"]["10"]) for r in rows]),
        "all_hops_covered_at": {
            b: _mean([float(r["all_hops_covered"][b]) for r in rows]) for b in budgets
        },
        "first_hop_recall": _mean([r["first_hop"] for r in rows]),
        "last_hop_recall": _mean([r["last_hop"] for r in rows]),
        "em": _mean([r["em"] for r in rows]),
        "f1": _mean([r["f1"] for r in rows]),
        "contains": _mean([r["contains"] for r in rows]),
        # the answers that state a short answer (not a quote, not 'the documents do not
        # say'): how many, and how right they are; a confident wrong line is the worst case
        "stated": sum(1 for r in rows if r.get("answer_kind") == "short"),
        "stated_em": _mean([r["em"] for r in rows if r.get("answer_kind") == "short"]),
        "stated_f1": _mean([r["f1"] for r in rows if r.get("answer_kind") == "short"]),
        "abstention": _mean([float(r["abstained"]) for r in rows]) if unanswerable else None,
        "llm_calls_mean": _mean([r["llm_calls"] for r in rows]),
        "tokens_mean": _mean([r["tokens"] for r in rows]),
        "hops_mean": _mean([r["hops"] for r in rows]),
        "latency_p50_ms": round(sc.percentile(latencies, 50), 2),
        "latency_p95_ms": round(sc.percentile(latencies, 95), 2),
        "stop_reasons": dict(Counter(r["stop_reason"] for r in rows).most_common()),
        "errors": sum(1 for r in rows if r["error"]),
    }


TABLE_HEADER = (
    "| dataset | mode | n | R@5 | R@10 | R@20 | all hops@10 | first hop | last hop | EM | F1 | "
    "contains | abstain | LLM calls | hops | p50 ms | p95 ms |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def mode_label(report: dict[str, Any]) -> str:
    """'adaptive', 'adaptive, unanswerable', 'gold (no decomposition: whole question)'."""
    label = report["mode"]
    if report["mode"] == "gold" and not report.get("gold_decomposed", 1.0):
        label += " (no decomposition: whole question)"
    return f"{label}, unanswerable" if report["unanswerable"] else label


def markdown_row(report: dict[str, Any]) -> str:
    r = report["recall_at"]
    abstain = "—" if report["abstention"] is None else f"{report['abstention']:.2f}"
    return (
        f"| {report['dataset']} | {mode_label(report)} | {report['n']} | {r['5']:.3f} | "
        f"{r['10']:.3f} | {r['20']:.3f} | {report['all_hops_covered']:.2f} | "
        f"{report['first_hop_recall']:.2f} | {report['last_hop_recall']:.2f} | "
        f"{report['em']:.2f} | {report['f1']:.2f} | {report['contains']:.2f} | {abstain} | "
        f"{report['llm_calls_mean']:.2f} | {report['hops_mean']:.2f} | "
        f"{report['latency_p50_ms']:.0f} | {report['latency_p95_ms']:.0f} |"
    )


def markdown_table(reports: Sequence[dict[str, Any]]) -> str:
    return "\n".join([TABLE_HEADER, *(markdown_row(r) for r in reports)]) + "\n"


def write_outputs(
    out_dir: Path, report: dict[str, Any], rows: Sequence[dict[str, Any]]
) -> dict[str, Path]:
    """Write this run's JSON (+ per-question rows) and refresh the summary table and chart.

    Every run's report is kept as NAME.MODE[.unanswerable].json in `out_dir`, so the summary
    and the chart compare all modes and datasets evaluated into the same folder.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = ".unanswerable" if report["unanswerable"] else ""
    stem = f"{report['dataset']}.{report['mode']}{suffix}"
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(
        json.dumps({**report, "questions": list(rows)}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    reports = load_reports(out_dir)
    table_path = out_dir / "summary.md"
    table_path.write_text(markdown_table(reports), encoding="utf-8")
    chart_path = out_dir / "recall.png"
    write_chart(reports, chart_path)
    return {"json": json_path, "markdown": table_path, "chart": chart_path}


MODE_ORDER = {"single": 0, "adaptive": 1, "gold": 2}


def load_reports(out_dir: Path) -> list[dict[str, Any]]:
    reports = []
    for path in sorted(out_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(data, dict) and "recall_at" in data and "mode" in data:
            data.pop("questions", None)
            reports.append(data)
    reports.sort(key=lambda r: (r["dataset"], r["unanswerable"], MODE_ORDER.get(r["mode"], 9)))
    return reports


def write_chart(reports: Sequence[dict[str, Any]], path: Path) -> None:
    """Grouped bars: recall@10 per dataset, one bar per mode (answerable runs only)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    answerable = [r for r in reports if not r["unanswerable"]]
    datasets = sorted({r["dataset"] for r in answerable})
    modes = sorted({r["mode"] for r in answerable}, key=lambda m: MODE_ORDER.get(m, 9))
    fig, ax = plt.subplots(figsize=(max(6, 1.8 * len(datasets) + 2), 4))
    width = 0.8 / max(1, len(modes))
    for i, mode in enumerate(modes):
        values = []
        for name in datasets:
            match = [r for r in answerable if r["dataset"] == name and r["mode"] == mode]
            values.append(match[0]["recall_at"]["10"] if match else 0.0)
        xs = [d + (i - (len(modes) - 1) / 2) * width for d in range(len(datasets))]
        bars = ax.bar(xs, values, width, label=mode)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(range(len(datasets)), datasets)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("evidence recall@10")
    ax.set_title("Hopwise evidence recall@10 by mode")
    if modes:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=len(modes), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
