"""What the offline reasoner's steps share: a question's parts as its hops asked them, where
a chain broke, a step in words, a part's readable words, and `judge` (whether the evidence
answers every part: the sufficiency verdict).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline import answer as ans
from graph.offline import evidence as ev
from graph.offline import reader_checks as rc
from graph.offline import reader_units as ru
from graph.offline.decompose import decompose_question
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.units import without_planted
from graph.protocols import EvidenceItem, HopView
from graph.schemas import EvidenceVerdict

_IMAGE_RE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL_RE = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


def parts(question: str, hops: Sequence[HopView]) -> list[tuple[str, list[str] | None, str]]:
    """(what was searched, the chunk ids found for it or None for 'anywhere', the part in
    words) per part of the question."""
    asked = [h for h in hops if not h.follow_up]
    if asked:
        return [(h.query, h.hit_ids, in_words(h)) for h in asked]
    subs = decompose_question(question)
    return [
        (s.question, None, s.question) for s in subs if not tx.PLACEHOLDER_RE.search(s.question)
    ]


def broken_link(hops: Sequence[HopView]) -> HopView | None:
    """The step of a chain whose search found nothing said beside what it asked about, so the
    step after it (its #k) was searched with no entity; None when every link held."""
    asked = [h for h in hops if not h.follow_up]
    for before, after in itertools.pairwise(asked):
        if after.unlinked:
            return before
    return None


def in_words(hop: HopView) -> str:
    """The sub-question as a reader would say it: its #k written as the entity found."""
    if not tx.PLACEHOLDER_RE.search(hop.sub_question):
        return hop.sub_question
    if not hop.entity:
        return hop.query
    return tx.PLACEHOLDER_RE.sub(hop.entity, hop.sub_question)


def readable(part: str) -> str:
    """The words of a part: a Markdown link as its text; images and addresses dropped."""
    words = _URL_RE.sub(" ", _LINK_RE.sub(r"\1", _IMAGE_RE.sub(" ", part)))
    return tx.normalize_space(words) or part


def typed_fallback(
    question: str,
    part: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView],
    params: OfflineParams,
) -> ru.Reading | None:
    """When no unit covers the part well enough: the value of the expected kind that sits
    nearest the question's words in the last step's passages, quoted in its sentence (never
    stated: nothing covered the part). Its sentence holds what the question or the part asks
    of the names they give (a chain's last step: 'auditor' of 'auditor of ⟨the company
    found⟩?' when the question, 'the auditor of the purchaser', names nothing)."""
    short = ans.short_answer(question, evidence, hops, params)
    item = next((e for e in evidence if short and e.n == short.n), None)
    unit = ru.unit_holding(short.text, item) if short and item else None
    if unit is None or short is None or not rc.holds_anchors(unit, rc.anchors_of(question)):
        return None
    names = ru.names_in(evidence, params)
    asked = [
        r for r, said in ((rc.relation_of(s, names), s) for s in {question, part}) if r != said
    ]
    if asked and not any(rc.holds_relation(r, unit.context, unit.shown()) for r in asked):
        return None  # a value beside the names, not about what is asked of them
    return ru.Reading(unit, params.reader_min_score, short.text)


def judge(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView] = (),
    params: OfflineParams = PARAMS,
) -> EvidenceVerdict:
    """Enough when every part was answered by one passage (its terms held together) and a
    short answer of the expected type was found; else which parts are missing, in words."""
    evidence = without_planted(evidence)  # a message to the assistant supports nothing
    zh = tx.language_of(question) == "zh"
    missing: list[str] = []
    for asked, ids, said in parts(question, hops):
        pool = [e for e in evidence if ids is None or e.chunk_id in ids]
        if not any(ev.answers(asked, e.title, e.text, params) for e in pool):
            missing.append(ev.missing_line(said, zh))
    broken = broken_link(hops)
    if broken is not None:  # a later step had no entity to go on: its answer is no answer
        missing.insert(0, ev.missing_line(in_words(broken), zh))
    steps = [h for h in hops if not h.follow_up]
    short = ans.short_answer(question, evidence, steps, params)
    chained = bool(steps) and bool(tx.PLACEHOLDER_RE.search(steps[-1].sub_question))
    if short is not None and chained:  # a chain's answer holds what its last step asks
        step = in_words(steps[-1])  # ('auditor' of 'auditor of ⟨the company found⟩?')
        short = short if typed_fallback(question, step, evidence, steps, params) else None
    if not missing and short is not None:
        return EvidenceVerdict(enough=True)
    if not missing:
        missing.append(ev.missing_line(question, zh))
    web = tx.normalize_space(f"{question} {' '.join(missing[:1])}")
    return EvidenceVerdict(enough=False, missing=missing, web_query=web)
