"""The fitted reader: every unit of the evidence scored for a question, the best one's spans
scored, and how sure the model is of each, all by weights a fit chose (graph/offline/model.py).

`read` is what the answer's first line is decided from: the ranked units with their shares,
`sure` (the top unit holds the answer), its best span and `stated` (that span is the answer).
"""

from __future__ import annotations

import math
from collections.abc import Sequence, Set
from dataclasses import dataclass, field

from graph.offline.asked import Asked, read_question
from graph.offline.candidates import Span, candidates
from graph.offline.features import MEANING_FEATURES, Scored, unit_features
from graph.offline.model import ReaderModel, load_model, sigmoid, softmax
from graph.offline.rules import rule_pick
from graph.offline.units import pool_units, without_planted
from graph.protocols import EvidenceItem, HopView, Similarity

SURE_FEATURES = (
    "top_share",  # the top unit's softmax share
    "margin",  # its logit's lead over the second's
    "top_logit",
    "cov_ctx",
    "cov",
    "bigram",
    "rel_x",
    "codes",
    "code_missing",
    "names",
    "linked",
    "dense_raw",
    "typed",
    "header",
    "foreign",
    "units",  # log of how many units were read
    "rule_found",  # the hand rules quote or state something
    "rule_top",  # ... from the top unit
    "rule_short",  # ... as a short answer from the top unit
    "asks_value",  # the question asks a number or a date
    "incomplete",  # the judge found the evidence short of a part of the question
    "incomplete_untyped",  # ... and the top unit holds no value of the asked kind
)
STATE_FEATURES = (
    "sure_logit",  # the sure model's logit
    "span_share",  # the span's softmax share among the unit's spans
    "span_margin",
    "kind",
    "header",
    "cell",
    "value",
    "whole",
    "aligned",
    "length",
    "repeated",
    "rule_span",
)


@dataclass
class Reading:
    asked: Asked
    ranked: list[Scored]  # best first; .prob is the share among the question's units
    sure: float = 0.0  # P(the top unit holds the answer)
    spans: list[Span] = field(default_factory=list)  # the top unit's, best first
    stated: float = 0.0  # P(the top span is the answer)

    @property
    def top(self) -> Scored | None:
        return self.ranked[0] if self.ranked else None

    @property
    def span(self) -> Span | None:
        return self.spans[0] if self.spans else None


def sure_features(asked: Asked, ranked: Sequence[Scored]) -> dict[str, float]:
    top = ranked[0]
    second = ranked[1].score if len(ranked) > 1 else top.score - 5.0
    f = top.features
    return {
        "top_share": top.prob,
        "margin": min(top.score - second, 10.0),
        "top_logit": top.score,
        "cov_ctx": f["cov_ctx"],
        "cov": f["cov"],
        "bigram": f["bigram"],
        "rel_x": f["rel_x"],
        "codes": f["codes"],
        "code_missing": f["code_missing"],
        "names": f["names"],
        "linked": f["linked"],
        "dense_raw": f["dense_raw"],
        "typed": f["typed"],
        "header": f["header"],
        "foreign": f["foreign"],
        "units": math.log1p(len(ranked)),
        "rule_found": 1.0 if asked.rule_kind in ("short", "quote") else 0.0,
        "rule_top": f["rule_unit"],
        "rule_short": f["rule_short"],
        "asks_value": 1.0 if asked.kind in ("number", "date") else 0.0,
        "incomplete": 1.0 if asked.incomplete else 0.0,
        "incomplete_untyped": float(
            asked.incomplete and asked.kind in ("number", "date") and not f["typed"]
        ),  # fmt: skip
    }


def state_features(sure_logit: float, spans: Sequence[Span]) -> dict[str, float]:
    top = spans[0]
    second = spans[1].prob if len(spans) > 1 else 0.0
    f = top.features
    return {
        "sure_logit": sure_logit,
        "span_share": top.prob,
        "span_margin": top.prob - second,
        **{k: f[k] for k in ("kind", "header", "cell", "value", "whole", "aligned", "length",
                             "repeated", "rule_span")},
    }  # fmt: skip


def rank(
    asked: Asked, found: Sequence[Scored], model: ReaderModel, unknown: Set[str] = frozenset()
) -> list[Scored]:
    for s in found:
        s.score = model.units.score(s.features, unknown)
    shares = softmax([s.score for s in found])
    for s, p in zip(found, shares, strict=True):
        s.prob = p
    return sorted(found, key=lambda s: (-s.score, s.unit.rank, s.unit.position))


def spans_of(
    asked: Asked, ranked: Sequence[Scored], model: ReaderModel, depth: int = 5
) -> list[Span]:
    """The top unit's spans, best first; a span other top units state too counts as repeated."""
    if not ranked:
        return []
    spans = candidates(asked, ranked[0].unit)
    others = [s.unit.shown() for s in ranked[1:depth]]
    for span in spans:
        span.features["repeated"] = min(3.0, sum(1.0 for o in others if span.text in o)) / 3.0
    scores = [model.spans.score(s.features) for s in spans]
    for span, p in zip(spans, softmax(scores), strict=True):
        span.prob = p
    return sorted(spans, key=lambda s: -s.prob)


def asked_with_rules(
    question: str,
    evidence: Sequence[EvidenceItem],
    missing: Sequence[str],
    hops: Sequence[HopView],
    similarity: Similarity | None,
    part: str = "",
) -> Asked:
    """The question's view with the hand rules' first line in it."""
    asked = read_question(question, hops, part)
    asked.incomplete = bool(missing)
    pick = rule_pick(question, evidence, missing, hops, similarity=similarity)
    asked.rule_kind, asked.rule_n, asked.rule_text, asked.rule_span, asked.rule_full = (
        pick.kind, pick.n, pick.text, pick.span, pick.full)  # fmt: skip
    return asked


def read(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView] = (),
    similarity: Similarity | None = None,
    model: ReaderModel | None = None,
    part: str = "",
    missing: Sequence[str] = (),
) -> Reading:
    """The evidence read for the question (or for `part`, a step of it)."""
    model = model or load_model()
    asked = asked_with_rules(question, evidence, missing, hops, similarity, part)
    found = unit_features(asked, pool_units(without_planted(evidence)), similarity)
    unknown = MEANING_FEATURES if similarity is None else frozenset()  # no embedder: no meaning
    ranked = rank(asked, found, model, unknown)
    reading = Reading(asked, ranked)
    if not ranked:
        return reading
    sure_logit = model.sure.score(sure_features(asked, ranked), unknown)
    reading.sure = sigmoid(sure_logit)
    reading.spans = spans_of(asked, ranked, model)
    if reading.spans:
        reading.stated = sigmoid(model.state.score(state_features(sure_logit, reading.spans)))
    return reading
