"""An answer, then the evidence: the short answer chosen by the type the question expects.

The type comes from the question word (ingest/lexicon/answer_types.txt: a person, a date, a
place, a number with its unit) or the question's shape (yes/no; a choice between named
items). Candidates of that type are read from the sentences of the passages found for the
last sub-question, scored by how well their sentence matches it and how close they sit to
its relation words; a name the question already gives is never its answer.

Here the answer read from sentences; the spans of a kind and Short are in answer_spans.py,
choices and yes/no in answer_compare.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from graph import text as tx
from graph.offline.answer_compare import choice, yes_no
from graph.offline.answer_spans import Short, cue_fit, kind_spans
from graph.offline.evidence import nearness
from graph.offline.kinds import answer_type
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.values import range_pair, range_side
from graph.protocols import EvidenceItem, HopView
from ingest.phrases import text_phrases

if TYPE_CHECKING:
    from graph.protocols import Similarity


def short_answer(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView] = (),
    params: OfflineParams = PARAMS,
    similarity: Similarity | None = None,
) -> Short | None:
    """The answer as briefly as the question allows, with the passage that says it (the
    built-in embedder's `similarity` breaks a choice its words leave tied)."""
    if not evidence:
        return None
    kind = answer_type(question)
    if kind == "choice":
        return choice(question, evidence, hops, params, similarity)
    if kind == "yes_no":
        return yes_no(question, evidence, hops, params)
    parallel = len(hops) > 1 and not any(tx.PLACEHOLDER_RE.search(h.sub_question) for h in hops)
    if parallel:  # 'A和B的X': one answer per part, in the question's order
        parts = [_one(kind, h.query, question, evidence, [h], params) for h in hops]
        found = [p for p in parts if p is not None]
        if not found:
            return None
        joiner = "；" if tx.has_cjk(question) else "; "
        return Short(joiner.join(p.text for p in found), found[0].n, min(p.score for p in found))
    finals = [h for h in hops if h.final]
    if hops and not finals:  # the chain was cut short: answer the question itself
        return _one(kind, question, question, evidence, (), params)
    focus = finals[-1] if finals else None
    return _one(kind, focus.query if focus else question, question, evidence, hops, params)


def _one(
    kind: str,
    focus: str,
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView],
    params: OfflineParams,
) -> Short | None:
    """The answer to one part: `focus` asks for it; the whole question names what it is not."""
    items = _focus_items(evidence, hops)
    if kind == "explain":
        return _best_sentence(focus, items)
    best = _best_span(kind, focus, question, items, params)
    if best and best.score >= params.answer_min_score:
        return best
    if kind == "entity":  # 'what is the refund window': the answer is said, not named
        sentence = _best_sentence(focus, items)
        if sentence and sentence.score >= params.relevant_coverage:
            return sentence
    return None


def _best_sentence(focus: str, items: Sequence[EvidenceItem]) -> Short | None:
    """For 'why' and 'how' questions: the sentence that best matches what is asked."""
    from graph.offline.evidence import best_sentences, relevance

    scored = [(relevance(focus, e.title, e.text), -i, e) for i, e in enumerate(items[:8])]
    if not scored:
        return None
    score, _, item = max(scored, key=lambda x: (x[0], x[1]))
    sentences = item.sentences or best_sentences(focus, item.text, 1)
    return Short(sentences[0].strip(), item.n, score) if sentences else None


def _focus_items(evidence: Sequence[EvidenceItem], hops: Sequence[HopView]) -> list[EvidenceItem]:
    """The last hop's passages first (in its rank order), then the rest."""
    if not hops:
        return list(evidence)
    order = {cid: i for i, cid in enumerate(hops[-1].hit_ids)}
    first = sorted(
        (e for e in evidence if e.chunk_id in order), key=lambda e: order[e.chunk_id or ""]
    )
    return first + [e for e in evidence if e.chunk_id not in order]


def _best_span(
    kind: str,
    focus: str,
    question: str,
    items: Sequence[EvidenceItem],
    params: OfflineParams = PARAMS,
) -> Short | None:
    focus_terms = tx.term_set(tx.PLACEHOLDER_RE.sub(" ", focus))
    given = tx.term_set(question) | tx.term_set(focus)
    given_names = {n.lower() for n in text_phrases(question) + text_phrases(focus)}
    anchors = [n.lower() for n in text_phrases(focus)]
    scores: dict[str, Short] = {}
    ranged = range_side(focus) if kind == "date" else ""  # 'when did X die': a range's end
    for rank, item in enumerate(items[: params.span_passages], start=1):
        for sentence in item.sentences or tx.split_sentences(item.text)[: params.span_sentences]:
            overlap = len(focus_terms & tx.term_set(f"{item.title} {sentence}"))
            if not overlap:
                continue
            base = overlap / (len(focus_terms) or 1) / math.sqrt(rank)
            place = f"{item.title} {item.section} {sentence}".lower()
            if anchors and not any(a in place for a in anchors):
                base *= params.span_off_topic  # about something else than what is asked
            spans = kind_spans(kind, sentence)
            spans = [x for x in spans if not any(x != y and x in y for y in spans)]
            if ranged and (pair := range_pair(sentence, spans)):  # the asked end only
                spans = [x for x in spans if x not in pair or x == pair[ranged == "end"]]
            for span in spans:
                terms = tx.term_set(span)
                if span.lower() in given_names or (terms and terms <= given):
                    continue
                near = nearness(sentence, span, focus_terms)
                score = base * (1 + near) * cue_fit(kind, sentence, span, params)
                key = span.lower()
                if key in scores:
                    scores[key].score += score * params.span_repeat
                else:
                    scores[key] = Short(span, item.n, score)
    return max(scores.values(), key=lambda s: s.score, default=None)
