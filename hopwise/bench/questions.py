"""Question latency while the built-in model embeds in the background, and when it is idle.

`hopwise bench questions`: the small knowledge base of `bench llm` plus filler chunks (synthetic
Chinese, so the embedding worker has minutes of work) in a scratch data dir, the built-in model
in its product layout (vectors beside the chunks, filled by the EmbeddingWorker), offline
reasoning. While the worker embeds, the questions are asked in turns with the worker yielding to
them (the store's busy signal, the default) and not yielding (its bound set to 0); then, once
every chunk has its vector, the same questions again with the worker idle.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hopwise.bench.llm import KB_DIR, load_questions
from hopwise.bench.retrieval import percentile, synthetic_chunks

FILLER = 600  # chunks the worker embeds while questions are asked (~15-40 s of the model)


def register_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--filler", type=int, default=FILLER, help=f"chunks left to embed ({FILLER})"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    from hopwise.app import Hopwise, build_reasoner, meaning_similarity, open_store
    from hopwise.settings import load_settings
    from ingest.busy import YIELD_MAX_S
    from ingest.pipeline import ingest_paths
    from ingest.vectors import EmbeddingWorker, wait_until_complete

    questions = [q["question"] for q in load_questions(KB_DIR / "questions.jsonl")]
    documents = [p for p in sorted(KB_DIR.iterdir()) if p.suffix == ".md" and p.name != "README.md"]
    with tempfile.TemporaryDirectory(prefix="hopwise-bench-questions-") as scratch:
        settings = load_settings().model_copy(
            update={"data_dir": Path(scratch), "milvus_uri": None, "llm_base_url": None,
                    "llm_model": None, "web_search": False, "embeddings": "builtin"}
        )  # fmt: skip
        settings.ensure_data_dir()
        store = open_store(settings)
        try:
            if store.vectors is None:
                return {"status": f"unavailable: {store.embedding_problem or 'no model'}"}
            ingest_paths(documents, store, groups=["all"], config=settings.ingest)
            store.replace_document(synthetic_chunks(int(getattr(args, "filler", FILLER))))
            store.build_phrases()
            app = Hopwise(settings, store, build_reasoner(settings, meaning_similarity(store)))
            app.ask(questions[0], web=False, save=False)  # warm-up: the model, the graph
            worker = EmbeddingWorker(store.vectors).start()
            timed: dict[str, list[float]] = {"yielding": [], "not_yielding": []}
            turn = 0
            while not store.vectors.coverage().complete and turn < 20 * len(questions):
                mode = "yielding" if turn % 2 == 0 else "not_yielding"
                store.busy.max_wait_s = YIELD_MAX_S if mode == "yielding" else 0.0
                timed[mode].append(ask_ms(app, questions[turn // 2 % len(questions)]))
                turn += 1
            store.busy.max_wait_s = YIELD_MAX_S
            worker.stop()
            wait_until_complete(EmbeddingWorker(store.vectors), timeout_s=3600)
            idle = [ask_ms(app, q) for q in questions for _ in range(2)]
        finally:
            store.close()
    return {
        "questions": len(questions),
        "filler_chunks": int(getattr(args, "filler", FILLER)),
        **summary("idle", idle),
        **summary("embedding_yielding", timed["yielding"]),
        **summary("embedding_not_yielding", timed["not_yielding"]),
    }


def ask_ms(app: Any, question: str) -> float:
    started = time.perf_counter()
    app.ask(question, web=False, save=False)
    return (time.perf_counter() - started) * 1000


def summary(name: str, values: list[float]) -> dict[str, Any]:
    if not values:
        return {f"{name}_asked": 0}
    return {
        f"{name}_asked": len(values),
        f"{name}_p50_ms": round(statistics.median(values), 1),
        f"{name}_p95_ms": round(percentile(values, 95), 1),
    }
