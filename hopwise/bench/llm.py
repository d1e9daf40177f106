"""`hopwise bench llm [--base-url URL --model NAME]`: what a real model does in the graph.

Asks the questions of a knowledge base (by default the small English one bundled in
probes/llm_kb, ingested into a scratch store) through the LLM reasoner, against the endpoint
given or else the configured one (HOPWISE_LLM_BASE_URL, HOPWISE_LLM_MODEL), and reports per
question the seconds (median, 95th percentile, most), the model calls and tokens, whether
offline reasoning stood in and whether the model was bypassed (graph.llm_health); per graph
step the share of model outputs that parsed, fell back or timed out; how often the answer
contains the expected string. The claim check's work is counted too. Nothing is timed as a
test; the numbers are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import SecretStr

KB_DIR = Path(__file__).parent / "probes" / "llm_kb"
TIMEOUT_WORDS = ("timeout", "deadline", "did not finish")


def register_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base-url", dest="base_url", default=None,
        help="OpenAI-compatible URL (default: HOPWISE_LLM_BASE_URL)",
    )  # fmt: skip
    parser.add_argument(
        "--model", default=None, help="model name at that endpoint (default: HOPWISE_LLM_MODEL)"
    )
    parser.add_argument(
        "--api-key", dest="api_key", default=None,
        help="key, if it needs one (default: HOPWISE_LLM_API_KEY)",
    )  # fmt: skip
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="ask the questions this many times in a row (how a failing model is bypassed)",
    )  # fmt: skip
    parser.add_argument(
        "--pause", type=float, default=0.0,
        help="seconds between questions, as users ask them (not counted in their time)",
    )  # fmt: skip
    parser.add_argument(
        "--kb", type=Path, default=KB_DIR, help="folder of documents + questions.jsonl"
    )
    parser.add_argument("--limit", type=int, default=None, help="questions asked at most")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from hopwise.app import Hopwise, build_reasoner, meaning_similarity, open_store
    from hopwise.settings import load_settings
    from ingest.pipeline import ingest_paths

    configured = load_settings()
    base_url = args.base_url or configured.llm_base_url
    model = args.model or configured.llm_model
    if not base_url or not model:
        raise ValueError(
            "no model to benchmark: pass --base-url and --model, or set HOPWISE_LLM_BASE_URL "
            "and HOPWISE_LLM_MODEL"
        )
    questions = load_questions(Path(args.kb) / "questions.jsonl")[: args.limit]
    questions = questions * max(1, int(getattr(args, "repeat", 1) or 1))
    documents = [p for p in sorted(Path(args.kb).iterdir()) if p.suffix in (".md", ".txt")]
    documents = [p for p in documents if p.name != "README.md"]
    with tempfile.TemporaryDirectory(prefix="hopwise-bench-llm-") as scratch:
        settings = configured.model_copy(
            update={
                "data_dir": Path(scratch),
                "milvus_uri": None,
                "llm_base_url": base_url,
                "llm_model": model,
                "web_search": False,
                **({"llm_api_key": SecretStr(args.api_key)} if args.api_key else {}),
            }
        )
        settings.ensure_data_dir()
        store = open_store(settings)
        try:
            ingest_paths(documents, store, groups=["all"], config=settings.ingest)
            if store.vectors is not None:
                from ingest.vectors import EmbeddingWorker, wait_until_complete

                wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=600)
            app = Hopwise(settings, store, build_reasoner(settings, meaning_similarity(store)))
            pause = float(getattr(args, "pause", 0.0) or 0.0)
            rows = []
            for i, question in enumerate(questions):
                if i and pause > 0:
                    time.sleep(pause)  # a user's pace: the model's 30 s cooldown passes
                rows.append(ask_one(app, question))
            health = app.llm_health.snapshot() if app.llm_health is not None else {}
        finally:
            store.close()
    return {**summarise(rows, model), "llm_health": health}


def load_questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def ask_one(app: Any, question: dict[str, Any]) -> dict[str, Any]:
    from graph.result import lead_line

    started = time.perf_counter()
    result = app.ask(question["question"], web=False)
    seconds = time.perf_counter() - started
    steps = []
    for event in result.trace:
        errors = " ".join(event.details.get("errors") or [])
        outcome = event.mode
        if event.mode == "fallback" and any(w in errors for w in TIMEOUT_WORDS):
            outcome = "timeout"
        steps.append({"node": event.node, "outcome": outcome, "calls": event.llm_calls,
                      "seconds": event.duration_ms / 1000})  # fmt: skip
    check: dict[str, Any] = next((e.details for e in result.trace if e.node == "check_claims"), {})
    expected = str(question.get("answer") or "")
    first = lead_line(result.answer)
    return {
        "id": question["id"],
        "seconds": round(seconds, 2),
        "calls": result.llm_calls,
        "tokens": result.tokens,
        "mode": result.mode,
        "cited": bool(result.citations),
        "has_expected": bool(expected) and expected.casefold() in result.answer.casefold(),
        "expected": expected,
        "first_line": first[:160],
        "offline_stood_in": result.mode != "llm",
        "model": str(result.llm_health.get("this_question", "")),  # use | probe | bypass
        "steps": steps,
        "claims_checked": int(check.get("checked") or 0),
        "claims_removed": int(check.get("removed") or 0),
        "fell_back": bool(check.get("fell_back")),
    }


def summarise(rows: list[dict[str, Any]], model: str) -> dict[str, Any]:
    per_step: dict[str, Counter[str]] = defaultdict(Counter)
    step_seconds: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        for step in row["steps"]:
            if step["calls"] or step["outcome"] in ("fallback", "timeout"):
                per_step[step["node"]][step["outcome"]] += 1
                step_seconds[step["node"]].append(step["seconds"])
    steps = {
        node: {
            "model_outputs": sum(counts.values()),
            "parsed": round(counts["llm"] / sum(counts.values()), 2),
            "fell_back": round(counts["fallback"] / sum(counts.values()), 2),
            "timed_out": round(counts["timeout"] / sum(counts.values()), 2),
            "seconds_mean": round(statistics.mean(step_seconds[node]), 2),
        }
        for node, counts in sorted(per_step.items())
    }
    answerable = [r for r in rows if r["expected"]]
    seconds = sorted(r["seconds"] for r in rows)
    return {
        "model": model,
        "questions": len(rows),
        "seconds_mean": round(statistics.mean(seconds), 2) if rows else 0,
        "seconds_median": round(statistics.median(seconds), 2) if rows else 0,
        "seconds_p95": seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))] if rows else 0,
        "seconds_max": round(max(seconds), 2) if rows else 0,
        "offline_stood_in": f"{sum(r['offline_stood_in'] for r in rows)}/{len(rows)}",
        "model_bypassed": f"{sum(r['model'] == 'bypass' for r in rows)}/{len(rows)}",
        "calls_mean": round(statistics.mean(r["calls"] for r in rows), 2) if rows else 0,
        "tokens_mean": round(statistics.mean(r["tokens"] for r in rows)) if rows else 0,
        "answers_cited": sum(r["cited"] for r in rows),
        "answers_degraded": sum(r["mode"] == "degraded" for r in rows),
        "expected_in_answer": f"{sum(r['has_expected'] for r in answerable)}/{len(answerable)}",
        "claims_checked": sum(r["claims_checked"] for r in rows),
        "claims_removed": sum(r["claims_removed"] for r in rows),
        "answers_fell_back": sum(r["fell_back"] for r in rows),
        "steps": steps,
        "rows": rows,
    }


def print_table(name: str, result: dict[str, Any], file: Any = None) -> None:
    file = file or sys.stdout
    print(f"== bench {name}: {result['model']}, {result['questions']} questions", file=file)
    for key in ("seconds_median", "seconds_p95", "seconds_mean", "seconds_max",
                "offline_stood_in", "model_bypassed", "calls_mean", "tokens_mean",
                "answers_cited", "answers_degraded", "expected_in_answer", "claims_checked",
                "claims_removed", "answers_fell_back"):  # fmt: skip
        print(f"  {key:<20} {result.get(key, '')}", file=file)
    if result.get("llm_health"):
        health = result["llm_health"]
        print(f"  {'llm_health':<20} {health.get('state')} "
              f"({health.get('failing_questions')} failing in a row)", file=file)  # fmt: skip
    print(f"  {'step':<20} {'outputs':>7} {'parsed':>7} {'fell back':>9} {'timed out':>9} "
          f"{'s/step':>7}", file=file)  # fmt: skip
    for node, s in result["steps"].items():
        print(f"  {node:<20} {s['model_outputs']:>7} {s['parsed']:>7.0%} {s['fell_back']:>9.0%} "
              f"{s['timed_out']:>9.0%} {s['seconds_mean']:>7}", file=file)  # fmt: skip
    for row in result["rows"]:
        mark = "✓" if row["has_expected"] else ("·" if not row["expected"] else "✗")
        print(f"  {mark} {row['id']:<8} {row['seconds']:>6}s {row['calls']} calls "
              f"{row['mode']:<8} {row.get('model', ''):<6} {row['first_line']}",
              file=file)  # fmt: skip
