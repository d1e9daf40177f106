"""The offline recall targets on the shared dev sets (slow: five indexes and ten runs, about a minute).

Targets (issue 5): evidence recall@10, adaptive vs single-shot, offline reasoning, BM25 only:
the built-in embedder's numbers are a benchmark in the README (embedding the five corpora
takes about 20 minutes on 2 cores, too long for a test).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hopwise.evaluation import evaluate
from hopwise.settings import load_settings

DEV = Path(__file__).resolve().parents[3] / "shared" / "eval" / "dev"
TARGETS = {
    "musique_en": 0.75,
    "2wiki_en": 0.85,
    "hotpot_en": 0.92,
    # Chinese sets: measured adaptive recall@10 (offline, k=10, BM25, deterministic) minus ~0.02.
    "rgbint_zh": 0.77,  # measured 0.7972 (single-shot 0.6806)
    "crud_zh": 0.98,  # measured 1.0 (single-shot 1.0); one missed gold window gives 0.9615
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not DEV.is_dir(), reason=f"dev sets not present at {DEV}"),
]


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_adaptive_offline_recall_meets_target_and_beats_single(name: str, data_dir: Path) -> None:
    settings = load_settings(embeddings="off")
    single = evaluate(DEV / name, settings, mode="single").report
    adaptive = evaluate(DEV / name, settings, mode="adaptive").report
    assert adaptive["reasoner"] == "offline"
    assert adaptive["errors"] == 0
    assert adaptive["recall_at"]["10"] >= TARGETS[name]
    assert adaptive["recall_at"]["10"] >= single["recall_at"]["10"]
