"""Reasoning without a language model: the zero-configuration mode and the LLM's fallback.

One module per step: route (greetings, follow-ups), spans and decompose (structure, with the
knowledge base's phrases kept whole), bridge (the entity the previous hop found), evidence
(relevant sentences), answer (the short answer, then the evidence). Every threshold is in
params.OfflineParams.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from graph import text as tx
from graph.offline import answer as ans
from graph.offline import bridge as br
from graph.offline import evidence as ev
from graph.offline import route as rt
from graph.offline.decompose import decompose_question
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.spans import PhraseLookup
from graph.protocols import EvidenceItem, HopView, Usage
from graph.schemas import (
    Decomposition,
    EvidenceSentence,
    EvidenceVerdict,
    PlanDecision,
    RouteDecision,
)
from ingest.models import Hit

__all__ = ["OfflineReasoner", "decompose_question", "direct_reply", "rewrite_followup"]
direct_reply = rt.direct_reply
rewrite_followup = rt.rewrite_followup


def _usage(**details: object) -> Usage:
    return Usage(mode="offline", details=dict(details))


class OfflineReasoner:
    """Reasoner with no model: structure, corpus phrases, term overlap, verbatim extraction."""

    name = "offline"

    def __init__(self, params: OfflineParams = PARAMS) -> None:
        self.params = params

    def route(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> tuple[RouteDecision, Usage]:
        standalone = rt.rewrite_followup(question, history)
        simple = rt.is_simple(question)
        return RouteDecision(
            standalone_question=standalone,
            route="simple" if simple else "complex",
            reason=simple or "May need facts from the knowledge base.",
        ), _usage()

    def decompose(
        self,
        question: str,
        phrases: PhraseLookup | None = None,
        documents_language: str | None = None,
    ) -> tuple[Decomposition, Usage]:
        """Offline, a question in another language than the documents is left to the dense
        channel (the built-in multilingual embedder): there is no translator here."""
        subs = decompose_question(question, phrases, self.params)
        return Decomposition(sub_questions=subs), _usage()

    def bridge(
        self, sub_question: str, earlier: Sequence[HopView], evidence: Sequence[EvidenceItem]
    ) -> tuple[str, Usage]:
        """Each #k becomes the best entity hop k found; the query is that entity plus the
        sub-question's own words. The candidates and their scores go to the trace."""
        if not earlier:
            return tx.normalize_space(tx.PLACEHOLDER_RE.sub(" ", sub_question)), _usage()
        entities: dict[int, list[br.Candidate]] = {}
        shown: list[dict[str, object]] = []
        for k in dict.fromkeys(tx.placeholder_ids(sub_question)) or [len(earlier)]:
            hop = earlier[k - 1] if 0 < k <= len(earlier) else earlier[-1]
            hits = [e for e in evidence if e.chunk_id] or hop.top_hits
            found = br.candidates(hop, hits, "", self.params)  # type: ignore[arg-type]
            entities[k] = found[: self.params.bridge_beam]
            shown += [{"for": f"#{k}", **c.why()} for c in found[:5]]
        if not any(entities.values()):
            return tx.normalize_space(tx.PLACEHOLDER_RE.sub(" ", sub_question)), _usage()
        # one query per candidate of the first placeholder; the others take their best
        first, *rest = [k for k in entities if entities[k]]
        fixed = " ".join(entities[k][0].text for k in rest)
        hop = earlier[first - 1] if 0 < first <= len(earlier) else earlier[-1]
        beam = [
            {"entity": c.text, "score": c.score, "previous": hop.query,
             "query": br.next_query(sub_question, f"{c.text} {fixed}".strip(), self.params)}
            for c in entities[first]
        ]  # fmt: skip
        return beam[0]["query"], _usage(candidates=shown, beam=beam)  # type: ignore[return-value]

    def extract(
        self, sub_question: str, hits: Sequence[Hit]
    ) -> tuple[list[EvidenceSentence], Usage]:
        return ev.extract(sub_question, hits, self.params), _usage()

    def plan(
        self,
        question: str,
        remaining: Sequence[str],
        hops: Sequence[HopView],
        evidence: Sequence[EvidenceItem],
    ) -> tuple[PlanDecision, Usage]:
        """Retrieve while sub-questions remain; after parts searched apart, the whole
        question once, so passages naming several parts are found too."""
        if remaining:
            return PlanDecision(action="retrieve", reason="Sub-questions remain."), _usage()
        searched = {tx.normalize_space(h.query).lower() for h in hops}
        parallel = len(hops) > 1 and not any(tx.PLACEHOLDER_RE.search(h.sub_question) for h in hops)
        if parallel and tx.normalize_space(question).lower() not in searched:
            return PlanDecision(
                action="retrieve",
                reason="The parts were searched apart; the whole question joins them.",
                follow_up=question,
            ), _usage()
        chase = self._chase(question, hops, evidence)
        if chase:
            return PlanDecision(
                action="retrieve",
                reason="The answer is not there yet; following the entity the last hop found.",
                follow_up=chase,
            ), _usage()
        return PlanDecision(action="evaluate", reason="Every sub-question was searched."), _usage()

    def _chase(
        self, question: str, hops: Sequence[HopView], evidence: Sequence[EvidenceItem]
    ) -> str | None:
        """One more hop when the question is not answered yet: the best entity the last hop
        found, with the question's words that its top passage did not already hold."""
        if not hops or len(hops) >= self.params.chase_max_hops:
            return None
        if judge(question, evidence, hops, self.params).enough:
            return None
        last = hops[-1]
        found = br.candidates(last, last.top_hits, question, self.params)
        if not found or not last.top_hits:
            return None
        held = tx.term_set(f"{last.top_hits[0].title} {last.top_hits[0].text}")
        rest = [w for w in tx.content_words(question) if tx.stem(w) not in held and w not in held]
        query = br.next_query(" ".join(rest), found[0].text, self.params)
        searched = {tx.normalize_space(h.query).lower() for h in hops}
        return query if rest and query.lower() not in searched else None

    def evaluate(
        self, question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView] = ()
    ) -> tuple[EvidenceVerdict, Usage]:
        return judge(question, evidence, hops, self.params), _usage()

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str | Usage]:
        yield from compose_answer(question, evidence, missing, hops, self.params)
        yield _usage()

    def answer_directly(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> Iterator[str | Usage]:
        yield rt.direct_reply(question)
        yield _usage()


def _parts(question: str, hops: Sequence[HopView]) -> list[tuple[str, list[str] | None, str]]:
    """(what was searched, the chunk ids found for it or None for 'anywhere', the part in
    words) per part of the question."""
    asked = [h for h in hops if not h.follow_up]
    if asked:
        return [(h.query, h.hit_ids, _in_words(h)) for h in asked]
    subs = decompose_question(question)
    return [
        (s.question, None, s.question) for s in subs if not tx.PLACEHOLDER_RE.search(s.question)
    ]


def _in_words(hop: HopView) -> str:
    """The sub-question as a reader would say it: its #k written as the entity found."""
    if not tx.PLACEHOLDER_RE.search(hop.sub_question):
        return hop.sub_question
    if not hop.entity:
        return hop.query
    return tx.PLACEHOLDER_RE.sub(hop.entity, hop.sub_question)


def judge(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView] = (),
    params: OfflineParams = PARAMS,
) -> EvidenceVerdict:
    """Enough when every part was answered by one passage (its terms held together) and a
    short answer of the expected type was found; else which parts are missing, in words."""
    zh = tx.language_of(question) == "zh"
    missing: list[str] = []
    for asked, ids, said in _parts(question, hops):
        pool = [e for e in evidence if ids is None or e.chunk_id in ids]
        if not any(ev.answers(asked, e.title, e.text, params) for e in pool):
            missing.append(ev.missing_line(said, zh))
    short = ans.short_answer(question, evidence, [h for h in hops if not h.follow_up], params)
    if not missing and short is not None:
        return EvidenceVerdict(enough=True)
    if not missing:
        missing.append(ev.missing_line(question, zh))
    web = tx.normalize_space(f"{question} {' '.join(missing[:1])}")
    return EvidenceVerdict(enough=False, missing=missing, web_query=web)


def compose_answer(
    question: str,
    evidence: Sequence[EvidenceItem],
    missing: Sequence[str],
    hops: Sequence[HopView] = (),
    params: OfflineParams = PARAMS,
) -> Iterator[str]:
    """First line: the answer with its citation (or that none was found); then one line of
    evidence per hop in reasoning order; then what is missing, in words, if anything is."""
    zh = tx.language_of(question) == "zh"
    asked = [h for h in hops if not h.follow_up]
    short = ans.short_answer(question, evidence, asked, params) if evidence else None
    if short is not None:
        cite = f" [{short.n}]" if short.n else ""
        yield (f"答案：{short.text}{cite}\n" if zh else f"Answer: {short.text}{cite}\n")
    else:
        yield ("知识库中没有找到答案。\n" if zh else "Not found in the knowledge base.\n")
    lines = _evidence_lines(question, evidence, asked, params)
    if lines:
        yield ("\n依据：\n" if zh else "\nEvidence:\n")
        for n, sentence in lines:
            yield f"- {sentence} [{n}]\n"
    if missing:
        yield ("\n未找到：" if zh else "\nNot found: ") + "; ".join(missing) + "\n"


def _evidence_lines(
    question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView], params: OfflineParams
) -> list[tuple[int, str]]:
    """The best sentence for each hop (its own passages first), then the best overall."""
    out: list[tuple[int, str]] = []
    used: set[str] = set()
    # a hop's line answers its own query and, second, names what the next hop searched for
    asked_parts: list[tuple[str, str, list[str] | None]] = [
        (h.query, hops[i + 1].query if i + 1 < len(hops) else "", h.hit_ids)
        for i, h in enumerate(hops)
    ]
    for own, following, ids in asked_parts or [(question, "", None)]:
        asked = f"{own} {following}"
        pool = [e for e in evidence if ids is None or e.chunk_id in ids] or list(evidence)
        scored = [
            (ev.relevance(own, e.title, e.text)
             + (0.5 * ev.relevance(following, e.title, e.text) if following else 0.0), -i, e)
            for i, e in enumerate(pool)
        ]  # fmt: skip
        for _, _, item in sorted(scored, key=lambda x: (-x[0], -x[1]))[:2]:
            sentence = next(
                (s for s in (item.sentences or ev.best_sentences(asked, item.text, 1))
                 if s.strip() not in used), None,
            )  # fmt: skip
            if sentence:
                used.add(sentence.strip())
                out.append((item.n, sentence.strip()))
                break
        if len(out) >= params.evidence_lines:
            break
    return out
