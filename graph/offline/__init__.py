"""Reasoning without a language model: the zero-configuration mode and the LLM's fallback.

One module per step: route (greetings, follow-ups), spans and decompose (structure, with the
knowledge base's phrases kept whole), bridge (the entity the previous hop found), evidence
(relevant sentences), answer (the short answer, then the evidence). Every threshold is in
params.OfflineParams.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from graph import text as tx
from graph.offline import bridge as br
from graph.offline import evidence as ev
from graph.offline import records as recs
from graph.offline import route as rt
from graph.offline import steps as st
from graph.offline import values as vl
from graph.offline.compose import compose
from graph.offline.decompose import decompose_question
from graph.offline.model import ReaderModel
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.reading import Reading
from graph.offline.row_link import row_link
from graph.protocols import EvidenceItem, HopView, PhraseLookup, Similarity, Usage
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

    def __init__(
        self,
        params: OfflineParams = PARAMS,
        similarity: Similarity | None = None,
        model: ReaderModel | None = None,
    ) -> None:
        self.params = params
        self.similarity = similarity  # meaning next to words when reading (built-in embedder)
        self.model = model  # the fitted reader (default: graph/offline/reader_weights.json)
        # the readings behind first lines, kept when a caller sets a list (the reading checks)
        self.readings: list[Reading] | None = None

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
        subs = decompose_question(st.readable(question), phrases, self.params)
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
        unlinked: list[str] = []
        for k in dict.fromkeys(tx.placeholder_ids(sub_question)) or [len(earlier)]:
            hop = earlier[k - 1] if 0 < k <= len(earlier) else earlier[-1]
            hits = [e for e in evidence if e.chunk_id] or hop.top_hits
            named = br.named_by_hop(hop, hits) or row_link(hop, hits, self.params)  # type: ignore[arg-type]
            found = [named] if named else br.candidates(hop, hits, "", self.params)  # type: ignore[arg-type]
            found = _not_named_in(sub_question, found)
            if hop.entity and not br.linked(found):  # nothing found is said of the entity
                unlinked.append(f"#{k}")
                found = []
            near = [c for c in found if c.score >= self.params.bridge_beam_share * found[0].score]
            entities[k] = near[: self.params.bridge_beam]  # a clear winner is not second-guessed
            shown += [{"for": f"#{k}", **c.why()} for c in found[:5]]
        if not any(entities.values()):
            query = tx.normalize_space(tx.PLACEHOLDER_RE.sub(" ", sub_question))
            return query, _usage(candidates=shown, unlinked=unlinked) if unlinked else _usage()
        # one query per candidate of the first placeholder; the others take their best
        first, *rest = [k for k in entities if entities[k]]
        fixed = " ".join(entities[k][0].text for k in rest)
        hop = earlier[first - 1] if 0 < first <= len(earlier) else earlier[-1]
        beam = [
            {"entity": c.text, "score": c.score, "previous": hop.query,
             "kind": br.asked_kind(hop.sub_question),
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
        if st.judge(question, evidence, hops, self.params).enough:
            return None
        last = hops[-1]
        found = br.candidates(last, last.top_hits, question, self.params)
        if not found or not last.top_hits:
            return None
        held = tx.term_set(f"{last.top_hits[0].title} {last.top_hits[0].text}")
        rest = [w for w in tx.content_words(question) if tx.stem(w) not in held and w not in held]
        entity = _described_code(question, last, evidence) or found[0].text
        query = br.next_query(" ".join(rest), entity, self.params)
        searched = {tx.normalize_space(h.query).lower() for h in hops}
        return query if rest and query.lower() not in searched else None

    def evaluate(
        self, question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView] = ()
    ) -> tuple[EvidenceVerdict, Usage]:
        return st.judge(question, evidence, hops, self.params), _usage()

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str | Usage]:
        yield from compose(question, evidence, missing, hops, self.similarity, self.model,
                           self.readings)  # fmt: skip
        yield _usage()

    def answer_directly(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> Iterator[str | Usage]:
        yield rt.direct_reply(question)
        yield _usage()


def _not_named_in(sub_question: str, found: list[br.Candidate]) -> list[br.Candidate]:
    """The candidates for #k that the sub-question does not name beside it: in 'Who did #1
    play in ⟨film⟩?' #1 is not the film (kept all when that leaves none)."""
    own = f" {tx.normalize_space(tx.PLACEHOLDER_RE.sub(' ', sub_question)).casefold()} "
    kept = [c for c in found if not re.search(rf"\W{re.escape(c.text.casefold())}\W", own)]
    return kept or found


def _described_code(question: str, hop: HopView, evidence: Sequence[EvidenceItem]) -> str:
    """The code of the one record a question describes by its values instead of naming it
    ('北湾县医院那台DR…' is the register row holding both: KX-DR-02), from the hop's best
    passages: what other documents file it under, so the next search looks for that. '' when
    the question names a code itself or no single record is described."""
    if vl.codes_in(question):
        return ""
    best = {hit.chunk_id for hit in hop.top_hits[:3]}
    rows = recs.described(question, recs.records([e for e in evidence if e.chunk_id in best]))
    codes = {found[0] for r in rows if r.fields and (found := vl.codes_in(r.fields[0][1]))}
    return codes.pop() if len(codes) == 1 else ""


judge = st.judge
