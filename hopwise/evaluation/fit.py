"""Fit the offline reader's weights on recorded questions (`hopwise fit-reader`).

The inputs are what the answer step was given for every question of the company knowledge
bases (`hopwise eval-kb DIR --out RECORDS/NAME`) and the public dev sets (`hopwise eval PREFIX
--out RECORDS/dev`): the evidence and the hops. Every evidence passage is cut into units
(graph/offline/units.py) with their features (graph/offline/features.py). A unit is labelled
right when it holds every gold string (a knowledge base's `must_contain`, inside a supporting
document: a row may hold a forbidden value beside the answer, which its span leaves out; a
dev set's answer or an alias, inside a supporting passage). The ranker is a softmax over a
question's units (conditional logit) with an L2 penalty, fitted by gradient descent with numpy;
the weights go to a small JSON file the app loads (graph/offline/reader_weights.json).

Leave one knowledge base out: fitted without a KB, judged on it; that is the number reported.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graph.offline.asked import Asked
from graph.offline.features import UNIT_FEATURES, unit_features
from graph.offline.reading import asked_with_rules
from graph.offline.units import Unit, pool_units, without_planted
from graph.protocols import EvidenceItem, HopView, Similarity
from hopwise.evaluation.kbgrade import normalise
from hopwise.evaluation.record import as_inputs, load_inputs
from hopwise.evaluation.scoring import normalize_answer

log = logging.getLogger(__name__)
KB_SETS = ("kb-dev", "kb-saas", "kb-freight")
DEV_SETS = ("hotpot_en", "2wiki_en", "musique_en", "cmrc_zh")


@dataclass
class Gold:
    answers: list[str]  # every one must be in a right unit (normalised)
    forbidden: list[str] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)  # supporting documents or passage ids
    kb: bool = True
    span_answers: list[str] = field(
        default_factory=list
    )  # what a right span holds (default: answers)
    raw: list[str] = field(default_factory=list)  # a dev set's answers as given (for F1)


@dataclass
class Example:
    """One recorded question: its units, their features and labels."""

    set: str
    qid: str
    question: str
    gold: Gold
    asked: Asked
    units: list[Unit]
    rows: list[list[float]]
    labels: list[int]

    @property
    def answerable(self) -> bool:
        return bool(self.gold.answers)


def kb_golds(root: Path) -> dict[str, Gold]:
    out = {}
    for line in (root / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        out[q["id"]] = Gold(
            [normalise(g) for g in q.get("must_contain") or []],
            [normalise(g) for g in q.get("must_not_contain") or []],
            {Path(s["file"] if isinstance(s, dict) else s).name for s in q.get("supporting") or []},
        )
    return out


def dev_golds(prefix: Path) -> dict[str, Gold]:
    out = {}
    path = Path(f"{prefix}.questions.jsonl")
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        answers = [a for a in [q.get("answer", ""), *(q.get("answer_aliases") or [])] if a]
        out[q["id"]] = Gold([normalize_answer(a) for a in answers], [],
                            set(q.get("supporting_ids") or []), kb=False, raw=answers)  # fmt: skip
    return out


def label(gold: Gold, shown: str, source: str, chunk_id: str) -> int:
    if not gold.answers:
        return 0
    if gold.kb:
        text = normalise(shown)
        if gold.sources and source and Path(source).name not in gold.sources:
            return 0
        return int(all(a in text for a in gold.answers))
    if gold.sources and chunk_id not in gold.sources:
        return 0
    text = normalize_answer(shown)
    return int(any(a and a in text for a in gold.answers))


class CachedSimilarity:
    """Cosine similarity from remembered vectors (each text and query embedded once, kept on
    disk between fits: the same units come back in many questions' evidence)."""

    def __init__(self, embed: Callable[[Sequence[str], bool], Any] | None, path: Path) -> None:
        self.embed, self.path = embed, path
        self.vectors: dict[str, Any] = {}
        if path.is_file():
            self.vectors = pickle.loads(path.read_bytes())
        self.dirty = False

    def _vectors(self, texts: Sequence[str], query: bool) -> list[Any]:
        keys = [
            ("q:" if query else "p:") + hashlib.sha1(t.encode()).hexdigest()[:20] for t in texts
        ]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True)
                                     if k not in self.vectors))  # fmt: skip
        if missing and self.embed is not None:
            for text, vector in zip(missing, self.embed(missing, query), strict=True):
                key = ("q:" if query else "p:") + hashlib.sha1(text.encode()).hexdigest()[:20]
                self.vectors[key] = vector
            self.dirty = True
        return [self.vectors.get(k) for k in keys]

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np

        (q,) = self._vectors([query], True)
        found = self._vectors(texts, False)
        if q is None:
            return [0.0] * len(texts)
        out = []
        for d in found:
            if d is None:
                out.append(0.0)
                continue
            norm = float(np.linalg.norm(d) * np.linalg.norm(q)) or 1.0
            out.append(float(np.dot(d, q)) / norm)
        return out

    def save(self) -> None:
        if self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.vectors))
            self.dirty = False


def examples_of(
    name: str,
    rows: dict[str, dict[str, Any]],
    golds: dict[str, Gold],
    similarity: Similarity | None,
) -> list[Example]:
    out = []
    for qid, row in rows.items():
        gold = golds.get(qid)
        if gold is None:
            continue
        question, evidence, missing, hops = as_inputs(row)
        out.append(example(name, qid, question, evidence, hops, gold, similarity, missing))
    return out


def example(
    name: str,
    qid: str,
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView],
    gold: Gold,
    similarity: Similarity | None,
    missing: Sequence[str] = (),
) -> Example:
    evidence = without_planted(evidence)
    asked = asked_with_rules(question, evidence, missing, hops, similarity)
    found = pool_units(evidence)
    scored = unit_features(asked, found, similarity)
    return Example(
        set=name,
        qid=qid,
        question=question,
        gold=gold,
        asked=asked,
        units=[s.unit for s in scored],
        rows=[[s.features[f] for f in UNIT_FEATURES] for s in scored],
        labels=[label(gold, s.unit.shown(), s.unit.source, s.unit.chunk_id) for s in scored],
    )


def load_examples(
    records: Path,
    shared: Path,
    similarity: Similarity | None,
    sets: Sequence[str] = KB_SETS + DEV_SETS,
    progress: Callable[[str], None] | None = None,
) -> list[Example]:
    """Every recorded question of the named sets (those with records), as examples."""
    out: list[Example] = []
    for name in sets:
        if name.startswith("self:"):
            rows = load_inputs(records / name.removeprefix("self:") / "self-inputs.jsonl")
            golds = self_golds(rows)
        elif name.startswith("kb-"):
            rows = load_inputs(records / name / "reader-inputs.jsonl")
            golds = kb_golds(shared / name) if rows else {}
        else:
            rows = load_inputs(records / "dev" / f"{name}.adaptive.reader-inputs.jsonl")
            golds = dev_golds(shared / "dev" / name) if rows else {}
        if progress:
            progress(f"{name}: {len(rows)} questions")
        out += examples_of(name, rows, golds, similarity)
    return out


# --- self-made questions: a knowledge base's tables and records asked back ---------------


def record_self_questions(
    kb_root: Path,
    out: Path,
    per_document: int = 6,
    chains: int = 30,
    seed: int = 0,
) -> int:
    """Ask each document's self-made questions and the KB's two-hop ones (graph/offline/
    selftest.py) through the real graph, as an admin reads (every group), and record what
    the answer step was given, with the answer and the key it must be bound to; returns how
    many were written."""
    from graph.offline.units import units
    from hopwise.app import Hopwise, build_reasoner, meaning_similarity
    from hopwise.evaluation.kb import load_kb, open_kb_store
    from hopwise.evaluation.record import FORMAT, Recording
    from hopwise.selfcheck.questions import chain_questions, self_questions
    from hopwise.settings import load_settings

    kb = load_kb(kb_root)
    groups = sorted({g for d in kb.documents for g in d["groups"]} | {"all"})
    settings = load_settings().model_copy(update={"web_search": False})
    store, scratch = open_kb_store(kb, settings)
    rows = []
    try:
        asked = []
        every: list[Unit] = []
        for doc in store.list_documents():
            hits = store.document_hits(doc.doc_id, groups, 1000)
            found = [u for i, h in enumerate(hits) for u in units(hit_item(h, i + 1))]
            every += found
            asked += self_questions(found, seed=seed, limit=per_document)
        asked += chain_questions(every, seed=seed, limit=chains)
        reasoner = Recording(build_reasoner(scratch, meaning_similarity(store)))
        app = Hopwise(scratch, store, reasoner, None, None)  # type: ignore[arg-type]
        for k, sq in enumerate(asked):
            try:
                app.ask(sq.question, groups=groups, web=False)
            except Exception:  # noqa: BLE001 - one failing question must not sink the record
                continue
            given = reasoner.take()
            if given is None:
                continue
            rows.append({"format": FORMAT, "id": f"self-{k}", **given, "answer": sq.answer,
                         "anchor": sq.anchor, "source": sq.source, "kind": sq.kind,
                         "lang": sq.lang})  # fmt: skip
    finally:
        store.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return len(rows)


def hit_item(hit: Any, n: int) -> EvidenceItem:
    """A search hit as the answer step sees it."""
    return EvidenceItem(
        n=n, chunk_id=hit.chunk_id, source=hit.source, title=hit.title, section=hit.section,
        page=hit.page, text=hit.text, score=hit.score,
        table_header=str(hit.metadata.get("table_header") or ""),
    )  # fmt: skip


def self_golds(rows: dict[str, dict[str, Any]]) -> dict[str, Gold]:
    """A self-made question's answer, bound to its key: a right unit holds both."""
    return {
        qid: Gold(
            [normalise(r["answer"]), normalise(r["anchor"])],
            [],
            {Path(r["source"]).name},
            span_answers=[normalise(r["answer"])],
        )
        for qid, r in rows.items()
    }
