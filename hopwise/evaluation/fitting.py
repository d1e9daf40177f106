"""The reader's four models fitted on examples (hopwise/evaluation/fit.py), and the thresholds
that decide the first line, chosen on knowledge-base questions the units model did not see.

1. units: a softmax over a question's units (which unit holds the answer);
2. spans: a softmax over the right unit's spans (which span is the answer);
3. sure: logistic, the top unit holds the answer (fitted on out-of-fold unit scores);
4. state: logistic, the top unit's top span is the answer.
Thresholds: `state` the lowest probability at which stated answers are ≥ 95 % right,
`quote` the sure probability below which 'the documents do not say' is right more often than
a quote, `bold` the span share at which a bolded span is right at least `BOLD_PRECISION`.
numpy is needed here only; the app reads the fitted JSON (graph/offline/model.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from graph.offline.candidates import SPAN_FEATURES, Span, candidates
from graph.offline.features import UNIT_FEATURES
from graph.offline.model import Linear, ReaderModel, softmax
from graph.offline.reading import (
    STATE_FEATURES,
    SURE_FEATURES,
    Scored,
    state_features,
    sure_features,
)
from hopwise.evaluation.fit import Example, Gold
from hopwise.evaluation.kbgrade import normalise
from hopwise.evaluation.scoring import token_f1

STATE_PRECISION = 0.95
BOLD_PRECISION = 0.8
FOLDS = 4
SET_WEIGHTS = {"kb": 1.0, "self": 0.3, "dev": 0.5, "cmrc_zh": 0.25}


def set_weight(name: str, weights: dict[str, float] = SET_WEIGHTS) -> float:
    if name.startswith("self:"):
        return weights["self"]
    if name.startswith("kb-"):
        return weights["kb"]
    return weights.get(name, weights["dev"])


def _np() -> Any:
    import numpy as np

    return np


def standardise(rows: Any) -> tuple[Any, Any]:
    np = _np()
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    return mean, np.where(scale < 1e-6, 1.0, scale)


def fit_softmax(
    groups: Sequence[tuple[Any, Any, float]], l2: float = 0.02, steps: int = 400,
    rate: float = 0.05,
) -> tuple[Any, Any, Any]:  # fmt: skip
    """A conditional logit over groups (rows, soft labels, weight) with some right row."""
    np = _np()
    usable = [(x, y, wt) for x, y, wt in groups if y.sum() > 0 and len(y) > 1]
    dim = usable[0][0].shape[1]
    mean, scale = standardise(np.vstack([x for x, _, _ in usable]))
    data = [((x - mean) / scale, y / y.sum(), wt) for x, y, wt in usable]
    total = sum(wt for _, _, wt in data)
    w, m, v = np.zeros(dim), np.zeros(dim), np.zeros(dim)
    for step in range(1, steps + 1):
        grad = np.zeros(dim)
        for x, y, wt in data:
            s = x @ w
            p = np.exp(s - s.max())
            grad += wt * (x.T @ (p / p.sum() - y))
        grad = grad / total + l2 * w
        m, v = 0.9 * m + 0.1 * grad, 0.999 * v + 0.001 * grad * grad
        w -= rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w, mean, scale


def fit_logistic(
    rows: Any, labels: Any, weights: Any, l2: float = 0.02, steps: int = 600,
    rate: float = 0.05,
) -> tuple[Any, float, Any, Any]:  # fmt: skip
    """Logistic regression (w, bias, mean, scale), L2-penalised, fitted by Adam."""
    np = _np()
    mean, scale = standardise(rows)
    x = (rows - mean) / scale
    w, b = np.zeros(x.shape[1]), 0.0
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    total = weights.sum()
    for step in range(1, steps + 1):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        err = (p - labels) * weights
        grad, gb = x.T @ err / total + l2 * w, err.sum() / total
        m, v = 0.9 * m + 0.1 * grad, 0.999 * v + 0.001 * grad * grad
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb * gb
        w -= rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        b -= rate * (mb / (1 - 0.9**step)) / (np.sqrt(vb / (1 - 0.999**step)) + 1e-8)
    return w, float(b), mean, scale


def linear(names: Sequence[str], fitted: tuple[Any, ...], bias: float = 0.0) -> Linear:
    w, mean, scale = fitted
    return Linear(tuple(names), tuple(map(float, mean)), tuple(map(float, scale)),
                  tuple(map(float, w)), bias)  # fmt: skip


def fit_units(examples: Sequence[Example]) -> Linear:
    np = _np()
    groups = [
        (np.asarray(e.rows, dtype=float), np.asarray(e.labels, dtype=float), set_weight(e.set))
        for e in examples
        if e.rows
    ]
    return linear(UNIT_FEATURES, fit_softmax(groups))


def _fold(example: Example) -> int:
    return int(hashlib.sha1(f"{example.set}/{example.qid}".encode()).hexdigest(), 16) % FOLDS


def ranked(example: Example, model: Linear) -> list[Scored]:
    """The example's units scored by a units model, best first."""
    found = [
        Scored(u, dict(zip(UNIT_FEATURES, row, strict=True)))
        for u, row in zip(example.units, example.rows, strict=True)
    ]
    for s, label in zip(found, example.labels, strict=True):
        s.score = model.score(s.features)
        s.features["_label"] = float(label)
    for s, p in zip(found, softmax([s.score for s in found]), strict=True):
        s.prob = p
    return sorted(found, key=lambda s: (-s.score, s.unit.rank, s.unit.position))


def out_of_fold(examples: Sequence[Example]) -> dict[int, list[Scored]]:
    """Each example ranked by a units model fitted without its fold."""
    out: dict[int, list[Scored]] = {}
    for fold in range(FOLDS):
        model = fit_units([e for e in examples if _fold(e) != fold])
        for e in examples:
            if _fold(e) == fold and e.rows:
                out[id(e)] = ranked(e, model)
    return out


def span_right(gold: Gold, text: str) -> float:
    """How right a span is: a KB's every gold string in it, not much more; a dev set's F1."""
    answers = gold.span_answers or gold.answers
    if not answers:
        return 0.0
    if gold.kb:
        got = normalise(text)
        if any(f and f in got for f in gold.forbidden):
            return 0.0
        need = sum(len(a) for a in answers)
        return float(all(a in got for a in answers) and len(got) <= 3 * need + 12)
    return token_f1(text, gold.raw or answers)


def span_groups(
    examples: Sequence[Example], model: Linear | None = None
) -> list[tuple[Any, list[Span], Any, float]]:
    """(rows, spans, labels, weight) of each example's best right unit."""
    np = _np()
    out = []
    for e in examples:
        right = [i for i, y in enumerate(e.labels) if y]
        if not right:
            continue
        order = right
        if model is not None:
            scores = {
                i: model.score(dict(zip(UNIT_FEATURES, e.rows[i], strict=True))) for i in right
            }
            order = sorted(right, key=lambda i: -scores[i])
        spans = candidates(e.asked, e.units[order[0]])
        if len(spans) < 2:
            continue
        labels = np.asarray([span_right(e.gold, s.text) for s in spans], dtype=float)
        if labels.max() < 0.5:
            continue
        labels = np.where(labels >= labels.max() - 1e-9, labels, 0.0)
        rows = np.asarray([[s.features[f] for f in SPAN_FEATURES] for s in spans], dtype=float)
        out.append((rows, spans, labels, set_weight(e.set)))
    return out


def fit_spans(examples: Sequence[Example], units: Linear) -> Linear:
    groups = [(x, y, w) for x, _, y, w in span_groups(examples, units)]
    return linear(SPAN_FEATURES, fit_softmax(groups))


def score_spans(spans: list[Span], model: Linear) -> list[Span]:
    for span, p in zip(spans, softmax([model.score(s.features) for s in spans]), strict=True):
        span.prob = p
    return sorted(spans, key=lambda s: -s.prob)


def calibrations(
    examples: Sequence[Example], oof: dict[int, list[Scored]], spans: Linear
) -> tuple[Linear, Linear, dict[str, Any]]:
    """The sure and state models, and the rows the thresholds are chosen on."""
    np = _np()
    sure_x, sure_y, sure_w, kept = [], [], [], []
    for e in examples:
        found = oof.get(id(e))
        if not found:
            continue
        sure_x.append([sure_features(e.asked, found)[f] for f in SURE_FEATURES])
        sure_y.append(found[0].features["_label"])
        sure_w.append(set_weight(e.set))
        kept.append((e, found))
    sx, sy, sw = np.asarray(sure_x), np.asarray(sure_y), np.asarray(sure_w)
    w, b, mean, scale = fit_logistic(sx, sy, sw)
    sure = linear(SURE_FEATURES, (w, mean, scale), b)
    state_x, state_y, state_w, info = [], [], [], []
    for e, found in kept:
        sure_logit = sure.score(sure_features(e.asked, found))
        top_spans = score_spans(candidates(e.asked, found[0].unit), spans)
        if not top_spans:
            continue
        right = found[0].features["_label"] > 0 and span_right(e.gold, top_spans[0].text) >= 0.8
        state_x.append([state_features(sure_logit, top_spans)[f] for f in STATE_FEATURES])
        state_y.append(float(right))
        state_w.append(set_weight(e.set))
        info.append((e, found, sure_logit, top_spans))
    tx_, ty, tw = np.asarray(state_x), np.asarray(state_y), np.asarray(state_w)
    w, b, mean, scale = fit_logistic(tx_, ty, tw)
    state = linear(STATE_FEATURES, (w, mean, scale), b)
    return sure, state, {"rows": info}


def choose_state(pairs: Sequence[tuple[float, bool]], precision: float = STATE_PRECISION) -> float:
    """The lowest threshold whose stated answers (probability ≥ it) are right at `precision`
    or better, over every threshold above it too (so raising it never lowers precision)."""
    ordered = sorted(pairs, key=lambda p: -p[0])
    best = 1.01
    right = 0
    for k, (p, ok) in enumerate(ordered, 1):
        right += ok
        if right / k >= precision:
            best = p
        elif k >= 5:
            break
    return best


def fit_reader(examples: Sequence[Example], fitted_on: Sequence[str] = ()) -> ReaderModel:
    """The four models and thresholds from the examples."""
    from graph.offline.model import sigmoid

    units = fit_units(examples)
    spans = fit_spans(examples, units)
    oof = out_of_fold(examples)
    sure, state, info = calibrations(examples, oof, spans)
    kb_rows = [r for r in info["rows"] if r[0].set.startswith("kb-")]
    stated = [
        (sigmoid(state.score(state_features(logit, sp))),
         f[0].features["_label"] > 0 and span_right(e.gold, sp[0].text) >= 0.8)
        for e, f, logit, sp in kb_rows
    ]  # fmt: skip
    bolds = [(sp[0].prob, f[0].features["_label"] > 0 and span_right(e.gold, sp[0].text) >= 0.8)
             for e, f, _, sp in info["rows"] if e.answerable]  # fmt: skip  # bold: the answer
    quote = choose_quote([(sigmoid(logit), e.answerable, f[0].features["_label"] > 0)
                          for e, f, logit, _ in kb_rows])  # fmt: skip
    state_at = choose_state(stated)
    thresholds = {
        "state": state_at,
        "state_floor": state_floor(stated, state_at),
        "bold": choose_state(bolds, BOLD_PRECISION),
        "quote": quote,
    }
    return ReaderModel(units, spans, sure, state, thresholds, tuple(fitted_on))


def state_floor(
    pairs: Sequence[tuple[float, bool]], state: float, precision: float = STATE_PRECISION
) -> float:
    """The lowest threshold at or below `state` at which the stated answers (probability ≥ it)
    are still right at `precision` or better taken together: how far a deployment's own reading
    checks may lower the threshold (hopwise/selfcheck/calibration.py)."""
    for cut in sorted({p for p, _ in pairs if p <= state} | {state}):
        chosen = [ok for p, ok in pairs if p >= cut]
        if chosen and sum(chosen) >= precision * len(chosen):
            return cut
    return state


HONEST = (
    0.0  # what saying "the documents do not say" over a wrong quote is worth (see choose_quote)
)


def choose_quote(rows: Sequence[tuple[float, bool, bool]]) -> float:
    """The sure probability below which the first line says 'the documents do not say':
    (p, answerable, top unit right) per question. Each right first line counts 1; saying the
    documents do not say instead of quoting a wrong unit counts HONEST (it is no answer, but
    no wrong lead either)."""
    cuts = sorted({p for p, _, _ in rows} | {0.0})
    best, best_value = 0.0, -1.0
    for cut in cuts:
        value = sum(
            (1.0 if ok else 0.0) if p >= cut else (1.0 if not answerable else 0.0 if ok else HONEST)
            for p, answerable, ok in rows
        )
        if value > best_value:
            best, best_value = cut, value
    return best


# --- from recorded questions to a fitted reader --------------------------------------------


def fit_similarity(data_dir: Path) -> Any:
    """The built-in embedder's cosine for fitting, its vectors remembered under the data dir
    (without the embedder the dense features are 0 for every unit)."""
    from hopwise.evaluation.fit import CachedSimilarity

    try:
        from ingest.builtin_embedder import load_builtin_embedder

        embedder = load_builtin_embedder()
    except Exception:  # noqa: BLE001 - BM25-only machines still fit on words
        return CachedSimilarity(None, data_dir / "fit" / "vectors.pkl")
    np = _np()

    def embed(texts: Sequence[str], query: bool) -> list[Any]:
        if query:
            return [np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts]
        return list(np.asarray(embedder.embed_documents(list(texts)), dtype=np.float32))

    return CachedSimilarity(embed, data_dir / "fit" / "vectors.pkl")


def all_sets(records: Path, dev_sets: bool = False) -> list[str]:
    """The sets with records under `records`: knowledge bases (and their self-made
    questions), then, with `dev_sets`, the public dev sets (off by default: fitted on them too,
    the knowledge bases held out lost right first lines, docs/evaluation.md)."""
    from hopwise.evaluation.fit import DEV_SETS

    kbs = sorted(p.name for p in records.glob("kb-*") if (p / "reader-inputs.jsonl").is_file())
    own = [f"self:{k}" for k in kbs if (records / k / "self-inputs.jsonl").is_file()]
    dev = [d for d in DEV_SETS if (records / "dev" / f"{d}.adaptive.reader-inputs.jsonl").is_file()]
    return kbs + own + (dev if dev_sets else [])


def fit_from_records(
    records: Path,
    shared: Path,
    data_dir: Path,
    without: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
    dev_sets: bool = False,
) -> ReaderModel:
    """The reader fitted on every recorded set but the knowledge bases in `without` (and
    their self-made questions); the dev sets too with `dev_sets`."""
    from hopwise.evaluation.fit import load_examples

    sets = [s for s in all_sets(records, dev_sets) if s.removeprefix("self:") not in without]
    similarity = fit_similarity(data_dir)
    try:
        examples = load_examples(records, shared, similarity, sets, progress)
    finally:
        similarity.save()
    if not any(e.set.startswith("kb-") for e in examples):
        raise ValueError(f"{records}: no recorded knowledge-base questions to fit on")
    return fit_reader(examples, fitted_on=sets)
