"""Cross-lingual retrieval benchmark: questions in one language, passages in the other.

The probe (hopwise/bench/probes/crosslingual_dev.jsonl, see its README) asks English questions
about the Chinese dev corpora and Chinese questions about the English ones. Each question is
searched in its corpus's eval index (hopwise/evaluation/index.py, the same indexes `hopwise
eval` builds) with BM25 only and with the built-in embedder (vectors beside the chunks, fused
by language-aware weighted RRF), and we report hit@5 / hit@10: whether a passage holding the
answer is among the first 5 / 10 hits.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from hopwise.evaluation.data import load_dataset
from hopwise.evaluation.halves import half_of
from hopwise.evaluation.index import open_index
from hopwise.settings import load_settings

PROBE = Path(__file__).resolve().parent / "probes" / "crosslingual_dev.jsonl"
DEV_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "dev"
TARGET = 0.8  # hit@5, each direction, with the built-in embedder


def load_probe(path: Path = PROBE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def run(args: Any) -> dict[str, Any]:
    dev_dir = Path(getattr(args, "dev_dir", None) or DEV_DIR)
    probe = load_probe(Path(getattr(args, "probe", None) or PROBE))
    if not dev_dir.exists():
        return {"error": f"dev sets not found at {dev_dir}"}
    base = load_settings()
    results: dict[str, Any] = {"questions": len(probe), "modes": {}}
    by_set: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in probe:
        by_set[item["set"]].append(item)
    for mode in ("off", "builtin"):
        settings = base.model_copy(update={"embeddings": mode})
        hits: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        model = "bm25"
        for name, items in sorted(by_set.items()):
            dataset = load_dataset(dev_dir / name)
            with open_index(dataset, settings) as store:
                if store.vectors is not None:
                    model = store.vectors.embedder.name
                elif mode == "builtin":
                    model = f"bm25 ({store.embedding_problem or 'no embedder'})"
                for item in items:
                    found = [h.chunk_id for h in store.search(item["question"], ["all"], k=10)]
                    gold = set(item["gold_ids"])
                    direction = f"{item['lang']}->{'zh' if item['lang'] == 'en' else 'en'}"
                    row = (bool(gold & set(found[:5])), bool(gold & set(found[:10])))
                    hits[direction].append(row)
                    hits[f"half {half_of(item['question'])}"].append(row)
        results["modes"]["bm25" if mode == "off" else "hybrid"] = {
            "model": model,
            **{
                direction: {
                    "n": len(rows),
                    "hit@5": round(sum(a for a, _ in rows) / len(rows), 3),
                    "hit@10": round(sum(b for _, b in rows) / len(rows), 3),
                }
                for direction, rows in sorted(hits.items())
            },
        }
    hybrid = results["modes"]["hybrid"]
    results["target_hit@5"] = TARGET
    results["target_met"] = all(
        hybrid[d]["hit@5"] >= TARGET for d in hybrid if "->" in d and isinstance(hybrid[d], dict)
    )
    return results
