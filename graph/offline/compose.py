"""The offline answer: a first line the fitted reader stands behind, then the evidence.

The first line is one of three, by the reader's probabilities (graph/offline/reading.py):
- a short answer ('Answer: 6127 [2]'), only when the model is at least as sure as the fit's
  `state` threshold (chosen for ≥ 95 % precision on knowledge bases the fit did not see);
- the best unit quoted verbatim, its answering span in bold only when the model is sure of
  that span (`bold`);
- 'The documents do not say ⟨what was asked⟩ directly.' when even the best unit is unlikely
  (`quote`) or is about another thing of the asked kind (a sibling of the code asked: its
  record is no answer), followed by the closest passages, each cited.
A value computed from stated ones (a sum, a difference, a choice between compared values:
graph/offline/operators.py) is stated with every value it used shown. Then the evidence: the
best unit of each earlier step of a chain (the link it followed), then the units after the
first in the reader's order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from graph import text as tx
from graph.offline.calc import number_word
from graph.offline.column_groups import bound_cells
from graph.offline.kinds import answer_type
from graph.offline.model import ReaderModel, load_model
from graph.offline.operators import compute
from graph.offline.reading import Reading, read
from graph.offline.units import Unit, without_planted
from graph.offline.values import codes_in
from graph.protocols import EvidenceItem, HopView, Similarity
from graph.result import LOOKED_FOR_LEAD, NOT_SAID_LEAD, QUOTE_LEAD

ANSWER_LEAD = {"en": "Answer: ", "zh": "答案："}
EVIDENCE_HEAD = {"en": "Evidence:", "zh": "依据："}
CLOSEST_HEAD = {"en": "Closest passages:", "zh": "最接近的段落："}
NOT_DIRECTLY = {"en": "directly", "zh": ""}
OFFLINE_ONLY = {
    "zh": "（未配置语言模型时，我只根据已上传的文档回答；常识性问题请配置 HOPWISE_LLM_BASE_URL 和 "
    "HOPWISE_LLM_MODEL。）",
    "en": "(Without a language model I answer from your documents only; for general questions "
    "set HOPWISE_LLM_BASE_URL and HOPWISE_LLM_MODEL.)",
}
_BULLET_RE = re.compile(r"^[-*+•]\s+")
EVIDENCE_LINES = 3  # evidence bullets after the first line, at most
# an evidence bullet is a unit the model finds at least this fraction as likely to hold the
# answer as the unit the first line uses (the rest are other topics of the same passages)
EVIDENCE_RATIO = 0.1
CLOSEST = 3  # closest passages after 'the documents do not say'
QUOTE_CHARS = 400  # a quoted unit longer than this is cut around its span


@dataclass
class Lead:
    """The first line and what it rests on."""

    line: str
    kind: str  # short | quote | not_found
    used: tuple[Unit, ...] = ()  # the units the line quotes or states from


def bold(text: str, span: str) -> str:
    """The text with the first standalone occurrence of span in bold; verbatim otherwise."""
    if not span or span == text:
        return text
    m = re.search(rf"(?<![A-Za-z0-9.\-])(?<!\d:){re.escape(span)}(?![A-Za-z0-9\-]|[.:]\d)", text)
    return text if m is None else f"{text[: m.start()]}**{span}**{text[m.end() :]}"


def clip(text: str, span: str, limit: int = QUOTE_CHARS) -> str:
    """A long unit cut to `limit` characters around its span (an ellipsis where cut)."""
    if len(text) <= limit:
        return text
    at = max(0, text.find(span)) if span else 0
    start = max(0, min(at - limit // 3, len(text) - limit))
    piece = text[start : start + limit]
    return ("…" if start else "") + piece + ("…" if start + limit < len(text) else "")


def quote_line(text: str, n: int, zh: bool) -> str:
    lead = QUOTE_LEAD["zh"] if zh else QUOTE_LEAD["en"] + " "
    return f"{lead}“{_BULLET_RE.sub('', text)}” [{n}]"


def not_said_line(what: str, zh: bool) -> str:
    what = tx.normalize_space(tx.PLACEHOLDER_RE.sub(" ", what)).rstrip("?？。.!！")
    if zh:
        return f"{NOT_SAID_LEAD['zh']}：{what}。"
    return f"{NOT_SAID_LEAD['en']} {NOT_DIRECTLY['en']}: {what}."


def lead_line(reading: Reading, model: ReaderModel, zh: bool) -> Lead:
    """The first line from a reading, by the model's thresholds."""
    top = reading.top
    if (
        top is None
        or reading.sure < model.threshold("quote", 0.2)
        or about_sibling(reading.asked.question, top.unit)
    ):
        return Lead(not_said_line(reading.asked.question, zh), "not_found")
    unit = top.unit
    span = reading.span
    # a row quoted without the column groups the question does not name ('Backup' asked:
    # the primary's phone stays out), and a span from such a group is no answer
    shown = replace(unit, cells=bound_cells(reading.asked.question, unit.cells)).shown()
    if (
        span is not None
        and span.source != "whole"
        and (span.text in shown or shown == unit.shown())
        and reading.stated >= model.threshold("state", 0.95)
    ):
        lead = ANSWER_LEAD["zh" if zh else "en"]
        return Lead(f"{lead}{span.text} [{unit.n}]", "short", (unit,))
    sure_span = (
        span is not None
        and span.source != "whole"
        and reading.asked.kind != "yes_no"  # a yes or no is no span of the quote
        and span.prob >= model.threshold("bold", 0.6)
    )
    text = clip(shown, span.text if span else "")
    return Lead(quote_line(bold(text, span.text) if sure_span and span else text, unit.n, zh),
                "quote", (unit,))  # fmt: skip


# a name numbered in brackets: '补充协议（二）', 'Annex (3)' (its last four characters kept; the
# name holds a letter, the number is one or two digits or a Chinese numeral up to 十)
_NUMBERED_RE = re.compile(
    r"([^\s（()）]{0,3}[^\W\d_])\s?[（(]\s*([一二三四五六七八九十]|[1-9]\d?)\s*[）)]"
)
# a code in a range or list of its like ('PX-301 to PX-310', 'PX-301/302'): it may hold any
_SERIES_RE = r"\s*(?:/|,|、|to|至|到|~|～|–|—|-|and|和)\s*[A-Z0-9]"
# the kinds of answer a sibling's unit cannot give: what it says is said of the other thing
# (a 'which' question may ask for the sibling itself: 'which firmware replaced FW-20?')
_SIBLING_KINDS = frozenset({"number", "date", "person", "place", "yes_no", "explain"})


def _shape(code: str) -> str:
    return re.sub(r"\d", "9", code)


def _numbered(text: str) -> list[tuple[str, str]]:
    """Codes and names numbered in brackets, each as (what it is one of, which one): a code by
    its shape ('PX-999', 'PX-301'), a name by its last word or two Chinese characters and its
    number, a number in words as its digits (('附录', '1') for '维修规程附录（一）')."""
    names = []
    for m in _NUMBERED_RE.finditer(text):
        stem = m.group(1)
        key = stem[-2:] if tx.has_cjk(stem[-1:]) else re.split(r"[^\w]", stem)[-1].casefold()
        which = m.group(2)
        names.append((key, which if which.isdigit() else f"{number_word(which) or 0:g}"))
    return [(_shape(c), c) for c in codes_in(text)] + names


def about_sibling(question: str, unit: Unit) -> bool:
    """Whether the unit is about another thing of the kind the question names: it holds a
    code of the same shape as one the question gives ('PX-301' for 'PX-302'), or the same name
    under another number ('补充协议（一）' for '补充协议（二）'), and none of the question's own,
    nor a range or list of them that may hold it; what it says is then not said of what is
    asked (for a question asking a value, a date, a person, a place, yes or no, or why)."""
    asked = _numbered(question)
    if not asked or answer_type(question) not in _SIBLING_KINDS:
        return False
    text = f"{unit.shown()} {unit.context} {unit.lead} {unit.referent}"
    held = set(_numbered(text))
    if held & set(asked):
        return False
    kinds = {kind for kind, _ in asked}
    siblings = [which for kind, which in held if kind in kinds]
    in_series = any(re.search(re.escape(c) + _SERIES_RE, text) for c in siblings)
    return bool(siblings) and not in_series


def compose(
    question: str,
    evidence: Sequence[EvidenceItem],
    missing: Sequence[str],
    hops: Sequence[HopView] = (),
    similarity: Similarity | None = None,
    model: ReaderModel | None = None,
    readings: list[Reading] | None = None,
) -> Iterator[str]:
    """The answer, as streamed pieces: the first line, then the evidence; the reading the
    first line came from is appended to `readings` when given (a value computed from stated
    ones has none)."""
    model = model or load_model()
    evidence = without_planted(evidence)
    zh = tx.language_of(question) == "zh"
    computed = compute(question, evidence, hops, similarity=similarity)
    if computed is not None:  # a value computed from stated ones, every one shown
        marks = "".join(f"[{n}]" for n in computed.cites)
        yield f"{ANSWER_LEAD['zh' if zh else 'en']}{computed.text} {marks}\n"
        used = list(dict.fromkeys(computed.shown))[: EVIDENCE_LINES + 2]
        if used:
            yield "\n" + EVIDENCE_HEAD["zh" if zh else "en"] + "\n"
            for n, line in used:
                yield f"- {clip(_BULLET_RE.sub('', line), '')} [{n}]\n"
        return
    reading = read(question, evidence, hops, similarity, model, missing=missing)
    if readings is not None:
        readings.append(reading)
    lead = lead_line(reading, model, zh)
    if lead.kind == "short" and _rules_agree(reading):  # the same answer, and the rules'
        yield reading.asked.rule_full  # own evidence lines (a chain shows every step)
        return
    yield lead.line + "\n"
    shown = {u.shown() for u in lead.used}
    rest = [s.unit for s in reading.ranked if s.unit.shown() not in shown]
    top_share = reading.top.prob if reading.top else 0.0
    likely = [s.unit for s in reading.ranked  # evidence: units nearly as likely as the lead
              if s.unit.shown() not in shown and s.prob >= EVIDENCE_RATIO * top_share]  # fmt: skip
    if lead.kind == "not_found":
        if missing:  # what the search looked for and did not find, in words
            lead_word = LOOKED_FOR_LEAD["zh"] if zh else LOOKED_FOR_LEAD["en"] + " "
            yield "\n" + lead_word + "; ".join(dict.fromkeys(missing)) + "\n"
        closest = _distinct(rest, CLOSEST)
        if closest:
            yield "\n" + CLOSEST_HEAD["zh" if zh else "en"] + "\n"
            for unit in closest:
                yield f"- “{clip(unit.shown(), '')}” [{unit.n}]\n"
        if not evidence:
            yield "\n" + OFFLINE_ONLY["zh" if zh else "en"] + "\n"
        return
    chain = [u for u in chain_units(reading, hops) if u.shown() not in shown]
    support = chain + (list(lead.used) if lead.kind == "short" else [])
    more = max(EVIDENCE_LINES - len(support), 1)
    support += _distinct([u for u in likely if u not in support], more)
    if support:
        yield "\n" + EVIDENCE_HEAD["zh" if zh else "en"] + "\n"
        for unit in support:
            yield f"- {clip(_BULLET_RE.sub('', unit.shown()), '')} [{unit.n}]\n"
    if missing and lead.kind == "quote":  # a part the search did not find, in words
        lead_word = LOOKED_FOR_LEAD["zh"] if zh else LOOKED_FOR_LEAD["en"] + " "
        yield "\n" + lead_word + "; ".join(dict.fromkeys(missing)) + "\n"


def chain_units(reading: Reading, hops: Sequence[HopView]) -> list[Unit]:
    """A chain's links in reasoning order: for each step before the last, the best unit of
    what that step found that names the entity the next step went on with."""
    out: list[Unit] = []
    for hop, after in zip(hops, hops[1:], strict=False):
        entity = after.entity.casefold()
        ids = set(hop.hit_ids or hop.new_chunk_ids)
        if not entity or not ids:
            continue
        link = next((s.unit for s in reading.ranked
                     if s.unit.chunk_id in ids and entity in s.unit.shown().casefold()), None)  # fmt: skip
        if link is not None and link not in out:
            out.append(link)
    return out


def _rules_agree(reading: Reading) -> bool:
    """Whether the hand rules state the answer the model states, from the same unit."""
    asked, top, span = reading.asked, reading.top, reading.span
    return (
        asked.rule_kind == "short"
        and bool(asked.rule_full)
        and top is not None
        and span is not None
        and top.features.get("rule_unit", 0.0) > 0
        and tx.fold(span.text).casefold() == tx.fold(asked.rule_span).casefold()
    )


def _distinct(found: Sequence[Unit], limit: int) -> list[Unit]:
    """The first units that say something new (not the same text twice)."""
    out: list[Unit] = []
    seen: set[str] = set()
    for unit in found:
        key = tx.normalize_space(unit.shown())
        if key in seen:
            continue
        seen.add(key)
        out.append(unit)
        if len(out) >= limit:
            break
    return out
