"""The hand rules' reading of the evidence: the first line the rules wrote before the reader
was fitted (a short answer, a quote with its span in bold, or 'the documents do not say'),
kept as features of the fitted reader (graph/offline/features.py, candidates.py), whose
weights decide how far to trust it (hopwise fit-reader).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline import answer as ans
from graph.offline import crossread as xr
from graph.offline import foreign as fq
from graph.offline import intervals as iv
from graph.offline import reader as rd
from graph.offline import reader_rank as rr
from graph.offline import reader_spans as rs
from graph.offline import reader_units as ru
from graph.offline import records as recs
from graph.offline import shared as sh
from graph.offline import totals as tt
from graph.offline.kinds import answer_type
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.spans import question_spans
from graph.offline.steps import broken_link, in_words, readable, typed_fallback
from graph.offline.units import without_planted
from graph.protocols import EvidenceItem, HopView, Similarity
from graph.result import LOOKED_FOR_LEAD, NOT_SAID_LEAD, QUOTE_LEAD


def rule_answer(
    question: str,
    evidence: Sequence[EvidenceItem],
    missing: Sequence[str],
    hops: Sequence[HopView] = (),
    params: OfflineParams = PARAMS,
    similarity: Similarity | None = None,
) -> Iterator[str]:
    """First line(s), one per part asked: a short answer only when the reader is confident,
    else the best sentence quoted verbatim with its key span in bold, else that the documents
    do not say it. Then one supporting line per hop, in reasoning order."""
    evidence = without_planted(evidence)  # a message to the assistant answers nothing
    zh = tx.language_of(question) == "zh"
    asked = [h for h in hops if not h.follow_up]
    kind = answer_type(question)
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
    diff = tt.difference(question, evidence) if decided is None else None
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
    broken = None if decided or diff or common else broken_link(asked)
    if broken is not None:  # the chain stopped: say which link the documents do not give
        lines.append(_not_said(in_words(broken), zh))
    parts = [] if decided or diff or common or broken else _answer_parts(question, evidence, asked)
    chained = any(tx.PLACEHOLDER_RE.search(h.sub_question) for h in asked)
    for part, said, pool, own in parts:
        part = readable(part)  # an address or a link's markup is nothing to cover
        # a part that names what it asks about is a question of its own, with its own kind;
        # an elliptical one ('改成了多少？') is read as the question as a whole
        own_kind = answer_type(part) if len(parts) > 1 and question_spans(part) else kind
        if chained and len(parts) == 1 and _ASKS_RE.search(part):  # a chain's last step asks
            step_kind = answer_type(part)  # it: 'the place where …' led there, no more
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
        summed = tt.total(question, pool) if len(parts) == 1 else None
        if summed is None and len(parts) <= 2:  # the rows one table names, another's amounts
            summed = tt.linked_total(question, pool)
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
            reading = typed_fallback(question, part, evidence, asked, params)
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
            quote = rs.bold(_BULLET_RE.sub("", reading.unit.shown()), reading.span)
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


def _source_line(reading: ru.Reading, question: str) -> str:
    """How the unit a stated answer comes from shows in the evidence: a table row by its
    first cell, the cells the question names and the answer's cell; anything else whole."""
    unit = reading.unit
    named = [v for _, v in unit.cells if len(v) >= 3 and v in question]
    return recs.brief(unit.cells, [reading.stated or reading.span, *named]) or unit.shown()


def _row_line(unit: ru.Unit, question: str, stated: str) -> str:
    """A compared table row as the evidence shows it: its first cell, the cells the question
    names and the compared column (named in the answer line); else the whole row."""
    kept = [
        (h, v)
        for i, (h, v) in enumerate(unit.cells)
        if v and (i == 0 or (len(v) >= 3 and v in question) or (h and f"{h}: " in stated))
    ]
    return "; ".join(f"{h}: {v}" if h else v for h, v in kept) if len(kept) > 1 else unit.shown()


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
        return [(h.query, in_words(h), _own_first(items, h), frozenset(h.hit_ids)) for h in hops]
    finals = [h for h in hops if h.final]
    if not finals:
        return [(question, question, items, frozenset())]
    last = finals[-1]
    chained = len(hops) > 1 or tx.PLACEHOLDER_RE.search(last.sub_question)
    own = frozenset(last.hit_ids) if chained else frozenset()
    return [(in_words(last) if chained else question, question, _own_first(items, last), own)]


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
        ranked = rr.rank_units(part, pool, params)[:1]
        for score, unit in ranked:
            if score >= params.reader_min_score and unit.text not in used:
                used.add(unit.text)
                out.append((unit.n, (sources or {}).get(unit.text) or unit.shown()))
        if len(out) >= params.evidence_lines:
            break
    return out


@dataclass(frozen=True)
class RulePick:
    """The hand rules' first line, read back: what it states or quotes, and from where."""

    kind: str  # short | quote | not_found | none
    n: int | None = None  # the passage it cites
    text: str = ""  # the stated answer, or the quote
    span: str = ""  # the stated answer, or the quote's span in bold ('' when none)
    full: str = ""  # the rules' whole answer (first line, evidence lines)


_CITE_RE = re.compile(r"\[(\d+)\]")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")


def rule_pick(
    question: str,
    evidence: Sequence[EvidenceItem],
    missing: Sequence[str],
    hops: Sequence[HopView] = (),
    params: OfflineParams = PARAMS,
    similarity: Similarity | None = None,
) -> RulePick:
    """What the hand rules would lead with for this question (RulePick('none') when they
    fail on it: the features then say nothing)."""
    try:
        text = "".join(rule_answer(question, evidence, missing, hops, params, similarity))
    except Exception:  # noqa: BLE001 - the rules are one voice among the features
        return RulePick("none")
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    cite = _CITE_RE.search(first)
    n = int(cite.group(1)) if cite else None
    body = _CITE_RE.sub("", first).strip()
    if body.startswith(tuple(NOT_SAID_LEAD.values())):
        return RulePick("not_found")
    if body.startswith(tuple(QUOTE_LEAD.values())):
        quote = body.split("“", 1)[-1].rsplit("”", 1)[0]
        bold = _BOLD_RE.search(quote)
        return RulePick("quote", n, quote.replace("**", ""), bold.group(1) if bold else "", text)
    for lead in ("Answer:", "答案："):
        if body.startswith(lead):
            stated = body[len(lead) :].strip().replace("**", "")
            return RulePick("short", n, stated, stated, text)
    return RulePick("none")
