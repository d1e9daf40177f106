"""Features of an answer unit for a question: what the hand rules used to decide, as numbers
whose weights a fit decides (hopwise fit-reader; graph/offline/model.py applies them).

Every feature is general: coverage of the question's terms (weighted by how rare each is among
the units found), the built-in embedder's similarity (multilingual, so a Chinese unit can score
for an English question), the anchors the question names, a value of the kind asked, a column
header naming what is asked, an amount or date of the question inside the unit, the unit's
kind and its passage's rank.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from graph import text as tx
from graph.offline.asked import Asked, cjk_bigrams, content_terms
from graph.offline.units import FIELD_RE, Unit
from graph.offline.values import class_anchors, codes_in, date_keys, spans_of
from graph.protocols import Similarity
from ingest.phrases import text_phrases

UNIT_FEATURES = (
    "rel",  # weighted share of what is asked of the anchors (the terms outside any name)
    "rel_own",  # ... the unit itself holds
    "rel_x",  # rel × the anchors the unit (or its document) holds: what is asked, of what is named
    "codes",  # share of the question's codes and numbered classes ('KX-200', 'P1') in the unit
    "code_missing",  # a code or class the question names is not in the unit or its context
    "names",  # share of the question's names in the unit or its context
    "anchors_doc",  # share of the anchors the unit's document (its found passages) names
    "linked",  # the unit names a value that a unit holding the question's anchors gives
    "linked_rel",  # linked × rel: what is asked, of what the named thing leads to
    "linked_focus",  # how near in meaning to the question the header of the linking cell is
    "label_dense",  # a column header or field label of the unit, nearest in meaning to the question
    "label_best",  # label_dense relative to the best label's (0 best)
    "over_anchor",  # label_dense above the best of the units that hold the question's anchors
    "linked_over",  # linked × over_anchor: the named thing's own row lacks what is asked
    "cov",  # weighted share of the question's terms the unit itself holds
    "cov_ctx",  # ... with its context (headers, record fields, section, title)
    "cov_part",  # ... of the step read for (a chain's last step, its entity written in)
    "bigram",  # share of the question's Chinese character pairs the unit and context hold
    "dense",  # cosine to the question, relative to the best unit's (0 best)
    "dense_raw",  # the cosine itself
    "typed",  # the unit holds a value of the kind asked that the question does not give
    "header",  # a column header or field label names what is asked
    "row",
    "field",
    "record",
    "item",
    "list",  # a list whole (a procedure's steps)
    "explain_list",  # list × the question asks how or for steps
    "rank",  # log of its passage's rank
    "own_step",  # its passage was found by the step read for
    "echo",  # it says nothing the question does not
    "in_range",  # an amount of the question falls inside a range the unit states (1 bounded;
    # an open one by how near its bound is: 'over 300,000' for 400,000, not 'over 2 days')
    "date_hit",  # a full date of the question is in the unit
    "change",  # the unit states a change of a value ('amended to', '调整为')
    "foreign",  # the unit is in another language than the question
    "length",  # log of its length
    "rule_unit",  # the hand rules' first line quotes or states from this unit
    "rule_short",  # ... and states a short answer from it
)


@dataclass
class Scored:
    unit: Unit
    features: dict[str, float]
    score: float = 0.0  # the model's logit
    prob: float = 0.0  # softmax share among the question's units


_CHANGE_RE = re.compile(
    r"\b(?:amended|changed|increased|decreased|raised|lowered|reduced|replaced|superseded|"
    r"revised|updated|extended|shortened)\s+(?:to|by|from|with)\b|调整为|修改为|改为|提高到|提高至|"
    r"上调|下调|降低为|延长至|缩短为|变更为|取代|废止",
    re.IGNORECASE,
)
_RANGE_RE = re.compile(
    r"(?P<a>\d[\d,]*(?:\.\d+)?)\s*(?P<sa>万|千|k(?![a-z]))?\s*(?:元|kg|公斤|件|人|个|USD|EUR|GBP|£|\$)?"
    r"\s*(?:以上|起)?\s*(?:-|–|—|~|～|至|到|to|and)\s*(?P<b>\d[\d,]*(?:\.\d+)?)\s*(?P<sb>万|千|k(?![a-z]))?"
    r"|(?P<c>\d[\d,]*(?:\.\d+)?)\s*(?P<sc>万|千|k(?![a-z]))?\s*(?:元|kg|公斤|件|人|个)?\s*(?P<side>以上|以下|及以下|及以上|起|\+|or more|or less|and above|and below|up to)"
    r"|(?P<pre>over|above|under|below|up to|more than|less than|at least|at most|超过|不超过|低于|高于|不低于|不少于)\s*(?:[£$¥€]|USD|EUR|GBP|RMB|CNY)?\s*(?P<d>\d[\d,]*(?:\.\d+)?)\s*(?P<sd>万|千|k(?![a-z]))?",
    re.IGNORECASE,
)
_BELOW = frozenset({"under", "below", "up to", "less than", "at most", "不超过", "低于"})
_SCALES = {"万": 1e4, "千": 1e3, "k": 1e3, "K": 1e3}
_BIG = 1e18


def _num(text: str | None, scale: str | None) -> float:
    return float((text or "0").replace(",", "")) * _SCALES.get(scale or "", 1.0)


_PHONE_PART_RE = re.compile(r"0\d")  # '021-5550 1000': an area code, not a range's bound
_DIGITS_ON_RE = re.compile(r"[ \-]?\d")


def ranges_in(text: str) -> list[tuple[float, float]]:
    """The numeric ranges a text states ('5,000元以上至50,000元', 'over 300 kg', '50万以下');
    a phone or code's digit groups ('021-5550 1000', '2031-07') are none."""
    out = []
    for m in _RANGE_RE.finditer(text):
        if m.group("a"):
            if (
                _PHONE_PART_RE.match(m.group("a"))
                or _PHONE_PART_RE.match(m.group("b"))  # '1999-0415': a code's groups
                or _DIGITS_ON_RE.match(text, m.end("b"))
            ):
                continue
            lo, hi = _num(m.group("a"), m.group("sa")), _num(m.group("b"), m.group("sb"))
            if lo < hi:
                out.append((lo, hi))
        elif m.group("c"):
            value = _num(m.group("c"), m.group("sc"))
            low = m.group("side").lower() in ("以下", "及以下", "or less", "and below", "up to")
            out.append((0.0, value) if low else (value, _BIG))
        elif m.group("d"):
            value = _num(m.group("d"), m.group("sd"))
            low = m.group("pre").lower() in _BELOW
            out.append((0.0, value) if low else (value, _BIG))
    bounded = [(lo, hi) for lo, hi in out if lo > 0 and hi < _BIG]
    lows = [lo for lo, hi in out if hi >= _BIG]
    highs = [hi for lo, hi in out if lo == 0.0]
    if len(lows) == 1 and len(highs) == 1 and lows[0] < highs[0]:
        bounded.append((lows[0], highs[0]))  # 'below 99.5% but at least 99.0%'
    return bounded or out


@lru_cache(maxsize=65536)
def terms_of(text: str) -> frozenset[str]:
    """A text's term set (remembered: contexts repeat across a block's units)."""
    return frozenset(tx.term_set(text))


@lru_cache(maxsize=65536)
def bigrams_of(text: str) -> frozenset[str]:
    return cjk_bigrams(content_terms(text))


class TermIndex:
    """The question's terms weighted by how rare they are among the units found (a term most
    units hold tells them apart little), and which units hold each."""

    def __init__(self, asked: Asked, found: Sequence[Unit]) -> None:
        self.asked = asked
        self.texts = [f"{u.shown()} {u.referent}" for u in found]
        self.contexts = [u.context for u in found]
        self.own_terms = [terms_of(t) for t in self.texts]
        self.ctx_terms = [terms_of(c) for c in self.contexts]
        terms = list(dict.fromkeys(asked.terms + asked.part_terms))
        total = len(found) + 1
        self.weight: dict[str, float] = {}
        for term in terms:
            df = sum(1 for i in range(len(found)) if self.holds(term, i, own=False))
            self.weight[term] = math.log(total / (df + 0.5))

    def holds(self, term: str, i: int, own: bool) -> bool:
        if own:
            return any(tx.term_in(k, self.texts[i], self.own_terms[i]) for k in tx.kin(term))
        return self.holds(term, i, True) or any(
            tx.term_in(k, self.contexts[i], self.ctx_terms[i]) for k in tx.kin(term)
        )

    def coverage(self, terms: Sequence[str], i: int, own: bool) -> float:
        total = sum(self.weight.get(t, 0.0) for t in terms)
        if total <= 0:
            return 0.0
        held = sum(self.weight.get(t, 0.0) for t in terms if self.holds(t, i, own))
        return held / total


def relation_terms(asked: Asked) -> list[str]:
    """The question's terms outside its anchors: what is asked of the things it names."""
    named = " ".join(asked.codes + asked.names).casefold()
    terms = list(dict.fromkeys(asked.terms + asked.part_terms))
    return [t for t in terms if t.casefold() not in named] or terms


def _header_match(asked: Asked, unit: Unit) -> float:
    """How well a column header or a field's label names what is asked (its terms that are
    the question's, anchors aside)."""
    labels = [h for h, _ in unit.cells if h]
    field = FIELD_RE.match(unit.text) if not unit.cells else None
    if field:
        labels.append(field.group("label"))
    asked_terms = set(asked.terms) | set(asked.part_terms)
    best = 0.0
    for label in labels:
        terms = content_terms(label)
        if not terms:
            continue
        share = sum(1 for t in terms if t in asked_terms or any(t in a for a in asked_terms))
        best = max(best, share / len(terms))
    return best


def _typed(asked: Asked, unit: Unit) -> float:
    """1 when the unit holds a value of the kind asked the question does not give (for an
    amount, a code counts half: '多少' also asks for a serial or an extension)."""
    if asked.kind not in ("number", "date"):
        return 0.0
    shown = unit.shown()
    if any(v not in asked.question for v in spans_of(asked.kind, shown)):
        return 1.0
    codes = [c for c in codes_in(shown) if c not in asked.question]
    return 0.5 if asked.kind == "number" and codes else 0.0


def _in_range(asked: Asked, ranges: Sequence[tuple[float, float]]) -> float:
    """1 when a band holds an amount of the question (a bounded range, '0 to 8,000' and '50万以下'
    included); an open one ('over 300,000') by how near the amount is to its bound, so 'more
    than 2 days' says nothing of 40,000 yuan."""
    best = 0.0
    for a in asked.amounts:
        for lo, hi in ranges:
            if not lo <= a <= hi or a <= 0:
                continue
            if hi < _BIG:  # a band, the lowest ('0 to 8,000', '50万以下') included
                return 1.0
            best = max(best, lo / a)
    return best


def _echo(asked: Asked, unit: Unit) -> bool:
    shown = unit.shown()
    field = FIELD_RE.match(shown)
    said = tx.term_set(field.group("value") if field else shown)
    return bool(said) and said <= tx.term_set(asked.question)


def unit_features(
    asked: Asked,
    found: Sequence[Unit],
    similarity: Similarity | None = None,
    dense_units: int = 24,
) -> list[Scored]:
    """Every unit with its features (Scored.score still 0)."""
    if not found:
        return []
    index = TermIndex(asked, found)
    codes = [_folded(a) for a in asked.codes]
    names = [_folded(a) for a in asked.names]
    names += [k for k in keys_named(asked, found) if k not in names and k not in codes]
    anchors = codes + names
    relation = relation_terms(asked)
    around = [_folded(f"{u.shown()} {u.context}") for u in found]
    documents: dict[str, str] = {}
    for u, text in zip(found, around, strict=True):  # what each document's passages say
        documents[u.source] = f"{documents.get(u.source, _folded(u.title))} {text}"
    links = _links(found, around, anchors)
    label_sims = _label_meaning(asked, found, similarity)
    best_label = max(label_sims.values(), default=0.0)
    rows: list[dict[str, float]] = []
    for i, unit in enumerate(found):
        shown = unit.shown()
        place = around[i]
        held_codes = sum(1 for a in codes if a in place)
        held_names = sum(1 for a in names if a in place)
        held = (held_codes + held_names) / len(anchors) if anchors else 1.0
        in_doc = sum(1 for a in anchors if a in documents.get(unit.source, ""))
        in_doc_share = in_doc / len(anchors) if anchors else 1.0
        rel = index.coverage(relation, i, own=False)
        via = [h for v, h in links.items() if v in place] if held < 1.0 else []
        linked = 1.0 if via else 0.0
        bigrams = bigrams_of(shown) | bigrams_of(unit.context)
        ranges = ranges_in(shown) if asked.amounts else []
        rule_unit = 1.0 if _ruled(asked, unit, shown) else 0.0
        rows.append(
            {
                "rel": rel,
                "rel_own": index.coverage(relation, i, own=True),
                "rel_x": rel * max(held, in_doc_share),
                "codes": held_codes / len(codes) if codes else 0.0,
                "code_missing": 1.0 if held_codes < len(codes) else 0.0,
                "names": held_names / len(names) if names else 0.0,
                "anchors_doc": in_doc_share,
                "linked": linked,
                "linked_rel": linked * rel,
                "linked_focus": max((label_sims.get(h, 0.0) for h in via), default=0.0),
                "label_dense": max((label_sims.get(h, 0.0) for h in labels_of(unit)), default=0.0),
                "cov": index.coverage(asked.terms, i, own=True),
                "cov_ctx": index.coverage(asked.terms, i, own=False),
                "cov_part": index.coverage(asked.part_terms, i, own=False),
                "bigram": len(asked.bigrams & bigrams) / len(asked.bigrams)
                if asked.bigrams
                else 0.0,
                "typed": _typed(asked, unit),
                "header": _header_match(asked, unit),
                "row": 1.0 if unit.kind == "row" else 0.0,
                "field": 1.0 if unit.kind == "field" else 0.0,
                "record": 1.0 if unit.kind == "record" else 0.0,
                "item": 1.0 if unit.kind == "item" else 0.0,
                "list": 1.0 if unit.kind == "list" else 0.0,
                "explain_list": 1.0 if unit.kind == "list" and asked.kind == "explain" else 0.0,
                "rank": math.log1p(unit.rank),
                "own_step": 1.0 if asked.own and unit.chunk_id in asked.own else 0.0,
                "echo": 1.0 if _echo(asked, unit) else 0.0,
                "in_range": _in_range(asked, ranges),
                "date_hit": 1.0 if asked.dates and asked.dates & date_keys(shown) else 0.0,
                "change": 1.0 if _CHANGE_RE.search(shown) else 0.0,
                "foreign": 1.0 if unit.lang != asked.lang else 0.0,
                "length": math.log1p(len(shown)) / 6.0,
                "rule_unit": rule_unit,
                "rule_short": rule_unit * (asked.rule_kind == "short"),
            }
        )
    holders = [r["label_dense"] for r in rows if r["codes"] + r["names"] > 0 and anchors]
    anchor_label = max(holders, default=0.0)
    for r in rows:
        r["label_best"] = r["label_dense"] - best_label if r["label_dense"] else -1.0
        r["over_anchor"] = r["label_dense"] - anchor_label if holders and r["label_dense"] else 0.0
        r["linked_over"] = r["linked"] * max(0.0, r["over_anchor"])
    _dense(asked, found, rows, similarity, dense_units)
    return [Scored(u, r) for u, r in zip(found, rows, strict=True)]


# the features the built-in embedder's meaning decides: unknown (their mean) without it
MEANING_FEATURES = frozenset(
    {
        "linked_focus",
        "label_dense",
        "label_best",
        "over_anchor",
        "linked_over",
        "dense",
        "dense_raw",
    }
)
MAX_LABELS = 120  # distinct headers and labels compared in meaning, at most


def _label_meaning(
    asked: Asked, found: Sequence[Unit], similarity: Similarity | None
) -> dict[str, float]:
    """Each distinct column header and field label, by its cosine to the question (a label
    names what its cells hold, in whatever language: '分机' for 'desk extension')."""
    labels = list(dict.fromkeys(h for u in found for h in labels_of(u)))[:MAX_LABELS]
    if similarity is None or not labels:
        return {}
    try:
        values = similarity(asked.question, labels)
    except Exception:  # noqa: BLE001 - the words alone still decide
        return {}
    return dict(zip(labels, values, strict=True)) if len(values) == len(labels) else {}


def _ruled(asked: Asked, unit: Unit, shown: str) -> bool:
    """Whether the hand rules' first line comes from this unit: its passage, and the quote is
    the unit (or holds it) or the stated answer is in it."""
    if asked.rule_kind not in ("short", "quote") or asked.rule_n != unit.n:
        return False
    text, span = asked.rule_text, asked.rule_span
    if asked.rule_kind == "quote":
        return bool(text) and (text in shown or unit.text in text or shown in text)
    return bool(span) and _folded(span) in _folded(shown)


def _folded(text: str) -> str:
    return tx.fold(text).casefold()


_LINK_MIN = 3  # a value shorter than this links nothing ('是'), a numbered class aside ('P1')
_KEY_MIN = 3  # a row's or record's key shorter than this is no name the question gives


def keys_named(asked: Asked, found: Sequence[Unit]) -> list[str]:
    """The keys of the evidence's rows and records (a row's first cell, a record's key) the
    question gives: names the documents use ('notify-hub', '联丰汽配'), though written as
    no capitalised name or code."""
    question = _folded(asked.question)
    keys = {_folded(u.key.strip()) for u in found if u.key and u.kind in ("row", "field", "record")}
    return sorted(k for k in keys if len(k) >= _KEY_MIN and _named_in(k, question))


def _named_in(key: str, question: str) -> bool:
    if tx.has_cjk(key):
        return key in question
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(key)}(?![A-Za-z0-9_-])", question) is not None


def _links(found: Sequence[Unit], around: Sequence[str], anchors: Sequence[str]) -> dict[str, str]:
    """The values the units holding every anchor give besides the anchors (a row's other
    cells, a sentence's names and codes), each with the header it sits under ('' for none):
    what the named thing leads to."""
    if not anchors:
        return {}
    out: dict[str, str] = {}
    for unit, place in zip(found, around, strict=True):
        if not all(a in place for a in anchors):
            continue
        pairs = list(unit.cells) if unit.cells else [("", n) for n in text_phrases(unit.text)]
        pairs += [("", c) for c in codes_in(unit.shown())]
        for header, value in pairs:
            v = _folded(value.strip())
            if len(v) >= _LINK_MIN and not any(v in a or a in v for a in anchors):
                out.setdefault(v, header)
        for c in class_anchors(unit.shown()):
            if not any(c in a for a in anchors):
                out.setdefault(c, "")
    return out


def labels_of(unit: Unit) -> list[str]:
    """A row's column headers, a field line's label."""
    if unit.cells:
        return [h for h, _ in unit.cells if h]
    field = FIELD_RE.match(unit.text)
    return [field.group("label")] if field else []


def _dense(
    asked: Asked,
    found: Sequence[Unit],
    rows: list[dict[str, float]],
    similarity: Similarity | None,
    limit: int,
) -> None:
    """Meaning for the units best by words, and for the first units in another language (no
    word of the question is theirs): each one's cosine and its gap to the best one's."""
    order = sorted(range(len(found)), key=lambda i: -(rows[i]["cov_ctx"] + rows[i]["bigram"]))
    chosen = order[:limit]
    foreign = [i for i in range(len(found)) if rows[i]["foreign"]][: limit // 2]
    chosen = list(dict.fromkeys(chosen + foreign))
    sims: dict[int, float] = {}
    if similarity is not None and chosen:
        try:
            values = similarity(asked.part, [found[i].meant() for i in chosen])
        except Exception:  # noqa: BLE001 - the words alone still decide
            values = []
        if len(values) == len(chosen):
            sims = dict(zip(chosen, values, strict=True))
    top = max(sims.values(), default=0.0)
    low = min(sims.values(), default=0.0)
    for i, r in enumerate(rows):
        r["dense"] = sims.get(i, low) - top
        r["dense_raw"] = sims.get(i, low)
