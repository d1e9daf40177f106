"""Reasoning without a language model: the zero-configuration mode and the LLM's fallback.

One module per step: route (greetings, follow-ups), spans and decompose (structure, with the
knowledge base's phrases kept whole), bridge (the entity the previous hop found), evidence
(relevant sentences), answer (the short answer, then the evidence). Every threshold is in
params.OfflineParams.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence

from graph import text as tx
from graph.offline import answer as ans
from graph.offline import bridge as br
from graph.offline import crossread as xr
from graph.offline import evidence as ev
from graph.offline import foreign as fq
from graph.offline import intervals as iv
from graph.offline import reader as rd
from graph.offline import records as recs
from graph.offline import route as rt
from graph.offline import shared as sh
from graph.offline import values as vl
from graph.offline.decompose import decompose_question
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.spans import question_spans
from graph.protocols import EvidenceItem, HopView, PhraseLookup, Usage
from graph.result import LOOKED_FOR_LEAD, NOT_SAID_LEAD, QUOTE_LEAD
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
        self, params: OfflineParams = PARAMS, similarity: rd.Similarity | None = None
    ) -> None:
        self.params = params
        self.similarity = similarity  # meaning next to words when reading (built-in embedder)

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
        subs = decompose_question(_readable(question), phrases, self.params)
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
            named = br.named_by_hop(hop, hits)  # type: ignore[arg-type]
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
        if judge(question, evidence, hops, self.params).enough:
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
        return judge(question, evidence, hops, self.params), _usage()

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str | Usage]:
        yield from compose_answer(question, evidence, missing, hops, self.params, self.similarity)
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


def _broken_link(hops: Sequence[HopView]) -> HopView | None:
    """The step of a chain whose search found nothing said beside what it asked about, so the
    step after it (its #k) was searched with no entity; None when every link held."""
    asked = [h for h in hops if not h.follow_up]
    for before, after in itertools.pairwise(asked):
        if after.unlinked:
            return before
    return None


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
    evidence = rd.without_planted(evidence)  # a message to the assistant supports nothing
    zh = tx.language_of(question) == "zh"
    missing: list[str] = []
    for asked, ids, said in _parts(question, hops):
        pool = [e for e in evidence if ids is None or e.chunk_id in ids]
        if not any(ev.answers(asked, e.title, e.text, params) for e in pool):
            missing.append(ev.missing_line(said, zh))
    broken = _broken_link(hops)
    if broken is not None:  # a later step had no entity to go on: its answer is no answer
        missing.insert(0, ev.missing_line(_in_words(broken), zh))
    steps = [h for h in hops if not h.follow_up]
    short = ans.short_answer(question, evidence, steps, params)
    chained = bool(steps) and bool(tx.PLACEHOLDER_RE.search(steps[-1].sub_question))
    if short is not None and chained:  # a chain's answer holds what its last step asks
        step = _in_words(steps[-1])  # ('auditor' of 'auditor of ⟨the company found⟩?')
        short = short if _typed_fallback(question, step, evidence, steps, params) else None
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
    similarity: rd.Similarity | None = None,
) -> Iterator[str]:
    """First line(s), one per part asked: a short answer only when the reader is confident,
    else the best sentence quoted verbatim with its key span in bold, else that the documents
    do not say it. Then one supporting line per hop, in reasoning order."""
    evidence = rd.without_planted(evidence)  # a message to the assistant answers nothing
    zh = tx.language_of(question) == "zh"
    asked = [h for h in hops if not h.follow_up]
    kind = ans.answer_type(question)
    used: set[str] = set()
    lines: list[str] = []
    found_any = False
    decided = (
        ans.short_answer(question, evidence, asked, params, similarity)
        if kind in _DECIDED
        else None
    )
    path: list[tuple[int, str]] = []  # records a joined answer went through, in order
    if decided is not None:  # a choice or yes/no is decided by comparing values, not read
        lines.append(f"{'答案：' if zh else 'Answer: '}{decided.text} [{decided.n}]")
        path.extend(decided.shown)  # what each compared value was read from
        found_any = True
    sources: dict[str, str] = {}  # a stated answer's unit -> how its evidence line shows it
    quoted: set[str] = set()  # records the path already quotes (briefly)
    diff = recs.difference(question, evidence) if decided is None else None
    if diff is not None:  # one stated value minus another, both shown
        lines.append(f"{'答案：' if zh else 'Answer: '}{diff.answer} [{diff.n}]")
        path.extend((r.n, r.shown) for r in diff.rows)
        found_any = True
    common = sh.shared_trait(question, evidence) if not (decided or diff) else None
    if common is not None:  # 'what … do A and B have in common': what both sentences say
        marks = "".join(f"[{n}]" for n in dict.fromkeys(n for n, _ in common.cited))
        lines.append(f"Answer: {common.text} {marks}")
        path.extend(common.cited)
        found_any = True
    broken = None if decided or diff or common else _broken_link(asked)
    if broken is not None:  # the chain stopped: say which link the documents do not give
        lines.append(_not_said(_in_words(broken), zh))
    parts = [] if decided or diff or common or broken else _answer_parts(question, evidence, asked)
    chained = any(tx.PLACEHOLDER_RE.search(h.sub_question) for h in asked)
    for part, said, pool, own in parts:
        part = _readable(part)  # an address or a link's markup is nothing to cover
        # a part that names what it asks about is a question of its own, with its own kind;
        # an elliptical one ('改成了多少？') is read as the question as a whole
        own_kind = ans.answer_type(part) if len(parts) > 1 and question_spans(part) else kind
        if chained and len(parts) == 1 and _ASKS_RE.search(part):  # a chain's last step asks
            step_kind = ans.answer_type(part)  # it: 'the place where …' led there, no more
            own_kind = step_kind if step_kind != "entity" else own_kind
        asks = own_kind if own_kind != "entity" or _ASKS_RE.search(part) else kind  # 'QT-9的呢'

        # the one part is the asking clause of the question: the statements around it set
        # its scene, and their codes and classes are the part's ('K2' of '…的K2故障，…多少'); a
        # chain's last step is not ('Which team owns #1?': its code named the first step)
        clause = part.strip().rstrip("?？。.")
        scene = question if len(parts) == 1 and clause and clause in question else ""
        reading = (
            rd.read(part, question, asks, pool, params, own, similarity, scene) if pool else None
        )
        summed = recs.total(question, pool) if len(parts) == 1 else None
        if summed is None and len(parts) <= 2:  # the rows one table names, another's amounts
            summed = recs.linked_total(question, pool)
        if summed is not None:
            lead = "答案：" if zh else "Answer: "
            lines.append(f"{lead}{summed.answer} [{summed.n}]")
            path.extend((r.n, r.shown) for r in summed.rows)
            found_any = True
            continue
        between = iv.gap(part if len(parts) > 1 else question, pool, params)
        if between is not None:  # 'how many days': the two dates stated, subtracted
            lines.append(f"{'答案：' if zh else 'Answer: '}{between.answer} [{between.n}]")
            path.append((between.n, between.shown))
            quoted.add(between.shown)
            used.update(between.texts)
            found_any = True
            continue
        asked_part = part if len(parts) > 1 else question
        joined = (
            recs.join(asked_part, pool)
            or recs.through_sentence(asked_part, pool, params)
            or recs.own_field(asked_part, pool)
        )
        if joined is not None:  # the named record lacks the asked field; a shared value led on
            lead = "答案：" if zh else "Answer: "
            lines.append(f"{lead}{joined.answer} [{joined.target.n}]")
            target = recs.brief(joined.target.fields, [joined.answer, joined.via])
            quoted.add(joined.target.shown)  # shown briefly above: not again in full
            if joined.start is not joined.target:  # the record it was led from
                path.append((joined.start.n, joined.start.shown))
            path.append((joined.target.n, target or joined.target.shown))
            found_any = True
            continue
        unread = len(parts) == 1 and (reading is None or not reading.span)
        led = recs.lead(question, pool, kind, params) if unread else None
        if led is not None:
            lead = "答案：" if zh else "Answer: "  # the named record has no such value: its lead
            lines.append(f"{lead}{led.answer} [{led.path[-1].n}]")
            path.extend((r.n, line) for r, line in zip(led.path, led.lines, strict=True))
            found_any = True
            continue
        if (reading is None or reading.score < params.reader_min_score) and len(parts) == 1:
            reading = _typed_fallback(question, part, evidence, asked, params)
        single = reading is None and len(parts) == 1
        crossed = fq.quote(question, pool, asks, params) if single else None
        if crossed is not None:  # the named record, in the other language: its typed values
            lines.append(_quote_line(crossed.text, crossed.n, zh))
            path.append((crossed.n, crossed.record.shown))
            found_any = True
            continue
        unanswered = reading is None or (not reading.span and asks in ("date", "number"))
        across = xr.read_across(asked_part, pool, asks, similarity, params) if unanswered else None
        if across is not None:  # nothing in the question's language has the asked value
            lines.append(_quote_line(across.shown(), across.n, zh))
            found_any = True
            continue
        if reading is None:
            lines.append(_not_said(said, zh))
            continue
        found_any = True
        if reading.confident:  # its sentence follows as the first line of evidence
            lead = "答案：" if zh else "Answer: "
            quoted_units = [reading.unit, *reading.others]  # a comparison quotes every row
            marks = "".join(f"[{n}]" for n in dict.fromkeys(u.n for u in quoted_units))
            lines.append(f"{lead}{reading.stated or reading.span} {marks}")
            sources[reading.unit.text] = _source_line(reading, question)
            if reading.others:  # each compared row shows in the evidence, where it is
                for u in quoted_units:
                    sources[u.text] = _row_line(u, question, reading.stated)
                    path.append((u.n, sources[u.text]))
                quoted.update(u.shown() for u in quoted_units)
        else:
            used.add(reading.unit.text)
            quote = rd.bold(_BULLET_RE.sub("", reading.unit.shown()), reading.span)
            lines.append(_quote_line(quote, reading.unit.n, zh))
        if reading.via is not None:  # what put the subject in the read column's class
            path.append((reading.via.n, reading.via.shown()))
            used.add(reading.via.text)
    yield "\n".join(dict.fromkeys(lines)) + "\n"  # parts read the same way say it once
    if not found_any and missing:
        lead = LOOKED_FOR_LEAD["zh"] if zh else LOOKED_FOR_LEAD["en"] + " "
        yield "\n" + lead + "; ".join(dict.fromkeys(missing)) + "\n"
    if not found_any and evidence:
        yield ("\n" + OFFLINE_ONLY["zh" if zh else "en"] + "\n")
    held = asked[: asked.index(broken) + 1] if broken is not None else asked  # the links found
    # a broken chain shows the links it did find; the path a joined answer took is its evidence
    shown = (found_any or broken is not None) and not (path and len(parts) <= 1)
    support = _support_lines(question, evidence, held, used, params, sources) if shown else []
    support = list(
        dict.fromkeys(path + [s for s in support if s not in path and s[1] not in quoted])
    )[: params.evidence_lines + len(path)]
    if support:
        yield ("\n依据：\n" if zh else "\nEvidence:\n")
        for n, sentence in support:
            yield f"- {_BULLET_RE.sub('', sentence)} [{n}]\n"  # one bullet, never '- -'


_DECIDED = ("choice", "yes_no")
# A part that asks by itself ('What are the steps …'), not one that leans on the question
# before it ('QT-9的呢', 'what about QT-9') for what it asks.
_ASKS_RE = re.compile(
    r"^\s*(?:what|which|who|whom|whose|where|when|why|how)\b(?!\s+about\b)"
    r"|什么|哪|谁|多少|几|如何|怎么|怎样|为什么|为何",
    re.IGNORECASE,
)
_BULLET_RE = re.compile(r"^[-*+•]\s+")
OFFLINE_ONLY = {
    "zh": "（未配置语言模型时，我只根据已上传的文档回答；常识性问题请配置 HOPWISE_LLM_BASE_URL 和 "
    "HOPWISE_LLM_MODEL。）",
    "en": "(Without a language model I answer from your documents only; for general questions "
    "set HOPWISE_LLM_BASE_URL and HOPWISE_LLM_MODEL.)",
}


_IMAGE_RE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL_RE = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


def _source_line(reading: rd.Reading, question: str) -> str:
    """How the unit a stated answer comes from shows in the evidence: a table row by its
    first cell, the cells the question names and the answer's cell; anything else whole."""
    unit = reading.unit
    named = [v for _, v in unit.cells if len(v) >= 3 and v in question]
    return recs.brief(unit.cells, [reading.stated or reading.span, *named]) or unit.shown()


def _row_line(unit: rd.Unit, question: str, stated: str) -> str:
    """A compared table row as the evidence shows it: its first cell, the cells the question
    names and the compared column (named in the answer line); else the whole row."""
    kept = [
        (h, v)
        for i, (h, v) in enumerate(unit.cells)
        if v and (i == 0 or (len(v) >= 3 and v in question) or (h and f"{h}: " in stated))
    ]
    return "; ".join(f"{h}: {v}" if h else v for h, v in kept) if len(kept) > 1 else unit.shown()


def _readable(part: str) -> str:
    """The words of a part: a Markdown link as its text; images and addresses dropped."""
    words = _URL_RE.sub(" ", _LINK_RE.sub(r"\1", _IMAGE_RE.sub(" ", part)))
    return tx.normalize_space(words) or part


def _quote_line(text: str, n: int, zh: bool) -> str:
    """A first line that quotes the documents verbatim, never stating an answer."""
    lead = QUOTE_LEAD["zh"] if zh else QUOTE_LEAD["en"] + " "
    return f"{lead}“{text}” [{n}]"


def _not_said(what: str, zh: bool) -> str:
    what = tx.normalize_space(tx.PLACEHOLDER_RE.sub(" ", what)).rstrip("?？。.")
    return f"{NOT_SAID_LEAD['zh']}：{what}。" if zh else f"{NOT_SAID_LEAD['en']}: {what}."


def _answer_parts(
    question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView]
) -> list[tuple[str, str, list[EvidenceItem], frozenset[str]]]:
    """(what to read for, the part in words, its passages first, the ids its own search
    found) per line of the answer: each part of a question asked in parallel; the last step
    of a chain (the question itself when the chain was cut short)."""
    items = list(evidence)
    parallel = len(hops) > 1 and not any(tx.PLACEHOLDER_RE.search(h.sub_question) for h in hops)
    if parallel:
        return [(h.query, _in_words(h), _own_first(items, h), frozenset(h.hit_ids)) for h in hops]
    finals = [h for h in hops if h.final]
    if not finals:
        return [(question, question, items, frozenset())]
    last = finals[-1]
    chained = len(hops) > 1 or tx.PLACEHOLDER_RE.search(last.sub_question)
    own = frozenset(last.hit_ids) if chained else frozenset()
    return [(_in_words(last) if chained else question, question, _own_first(items, last), own)]


def _typed_fallback(
    question: str,
    part: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView],
    params: OfflineParams,
) -> rd.Reading | None:
    """When no unit covers the part well enough: the value of the expected kind that sits
    nearest the question's words in the last step's passages, quoted in its sentence (never
    stated: nothing covered the part). Its sentence holds what the question or the part asks
    of the names they give (a chain's last step: 'auditor' of 'auditor of ⟨the company
    found⟩?' when the question, 'the auditor of the purchaser', names nothing)."""
    short = ans.short_answer(question, evidence, hops, params)
    item = next((e for e in evidence if short and e.n == short.n), None)
    unit = rd.unit_holding(short.text, item) if short and item else None
    if unit is None or short is None or not rd.holds_anchors(unit, rd.anchors_of(question)):
        return None
    names = rd.names_in(evidence, params)
    asked = [
        r for r, said in ((rd.relation_of(s, names), s) for s in {question, part}) if r != said
    ]
    if asked and not any(rd.holds_relation(r, unit.context, unit.shown()) for r in asked):
        return None  # a value beside the names, not about what is asked of them
    return rd.Reading(unit, params.reader_min_score, short.text)


def _names_only(hop: HopView, after: HopView | None) -> bool:
    """A step that only named its entity ('Fenwick depot?', which the next step went on with
    as it is): any sentence naming it would do, so none is its evidence."""
    asked = hop.sub_question.strip().rstrip("?？").strip().casefold()
    return after is not None and bool(after.entity) and asked == after.entity.casefold()


def _own_first(items: list[EvidenceItem], hop: HopView) -> list[EvidenceItem]:
    order = {cid: i for i, cid in enumerate(hop.hit_ids)}
    mine = sorted((e for e in items if e.chunk_id in order), key=lambda e: order[e.chunk_id or ""])
    return mine + [e for e in items if e.chunk_id not in order]


def _support_lines(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView],
    used: set[str],
    params: OfflineParams,
    sources: dict[str, str] | None = None,
) -> list[tuple[int, str]]:
    """The best unit of each hop's own passages (the answering one first), then the question's;
    a stated answer's unit as `sources` shows it (a row trimmed to its naming cells). A hop
    whose best unit is already shown (the first line quotes it) adds nothing: the next best
    unit of its passages would be a neighbour, not evidence."""
    out: list[tuple[int, str]] = []
    parts = [
        (
            f"{h.query} {hops[i + 1].entity if i + 1 < len(hops) else ''}",
            _own_first(list(evidence), h),
        )
        for i, h in enumerate(hops)
        if not _names_only(h, hops[i + 1] if i + 1 < len(hops) else None)
    ] or [(question, list(evidence))]  # a hop's line names what the next hop went on with
    for part, pool in parts:
        ranked = rd.rank_units(part, pool, params)[:1]
        for score, unit in ranked:
            if score >= params.reader_min_score and unit.text not in used:
                used.add(unit.text)
                out.append((unit.n, (sources or {}).get(unit.text) or unit.shown()))
        if len(out) >= params.evidence_lines:
            break
    return out
