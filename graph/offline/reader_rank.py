"""The hand reader's ranking: every unit of the passages a part is read in, best first.

A unit is scored by how much of the part it covers, itself and with its context, and a
little more for a value of the expected kind, a column or field line the part names, or a
change that holds now; less for a unit outside the part's own search, without the anchors
the part names, about another member, country or year, or that only echoes the part. The
built-in embedder's meaning then moves units whose words tie.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from graph import text as tx
from graph.offline.columns import header_match
from graph.offline.evidence import relevance
from graph.offline.namelists import NAMED_KINDS
from graph.offline.nations import nation_keys
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.reader_checks import (
    PROPOSAL_RE,
    anchors_of,
    echoes,
    holds_anchors,
    holds_relation,
    relation_of,
    requests_change,
    states_change,
)
from graph.offline.reader_classes import names_sibling
from graph.offline.reader_units import Unit, unit_names, units
from graph.offline.roles import asks_cast, role_spans
from graph.offline.units import FIELD_RE
from graph.offline.values import (
    DATE_RE,
    asks_clock,
    clock_times,
    date_keys,
    range_pair,
    range_side,
    spans_of,
)
from graph.protocols import EvidenceItem, Similarity
from ingest.phrases import text_phrases

# 'what year' / 'in which month': the noun names the kind of the answer, not a word of it
_ASKED_TIME_RE = re.compile(r"\b(what|which)\s+(?:year|date|day|month)\b", re.IGNORECASE)


def _read_items(
    part: str, items: Sequence[EvidenceItem], params: OfflineParams
) -> list[tuple[int, EvidenceItem]]:
    """(rank, passage) of the passages a part is read in: the first ones, and a little further
    down those that name what the part asks about ('Rolf Aske (1611–1680), …' on another
    page, for 'when did Rolf Aske die')."""
    names = [n for n in text_phrases(tx.PLACEHOLDER_RE.sub(" ", part)) if len(n.split()) > 1]
    first = list(enumerate(items[: params.reader_passages]))
    later = [
        (rank, item)
        for rank, item in enumerate(items[: params.reader_named_passages])
        if rank >= params.reader_passages and any(n in item.text for n in names)
    ]
    return first + later


def _unit_score(
    part: str, related: bool, unit: Unit, rank: int, params: OfflineParams, kind: str = ""
) -> float:
    """Coverage of the part by the unit alone and with its context; a unit that holds none of
    the relation's words (not `related`) is about the names only, not about what is asked. For
    a date or an amount, a sentence that refers back ('He was hired on …', 'The conference was
    first held in …') covers the names of the sentence before it as its own; for a name, such
    a sentence mostly restates its subject ('He is the former champion') and is left as is."""
    referent = unit.referent if kind in ("date", "number") else ""
    own = relevance(part, "", f"{referent} {unit.shown()}")
    whole = relevance(part, unit.context, unit.shown())
    score = params.reader_own_weight * own + (1 - params.reader_own_weight) * whole
    if not related:
        score *= params.reader_no_relation
    return score / (1 + params.reader_rank_decay * rank)


def rank_units(
    part: str,
    items: Sequence[EvidenceItem],
    params: OfflineParams = PARAMS,
    kind: str = "",
    own: frozenset[str] = frozenset(),
    similarity: Similarity | None = None,
    scene: str = "",
) -> list[tuple[float, Unit]]:
    """Every unit of the first passages, best first (ties: the earlier passage); a unit that
    holds a value of the expected kind (a full date more than a bare year) and a word of what
    is asked, or a column the part names, is worth a little more; one outside the passages
    the part's own search found (`own`, chunk ids) a little less: those answered an earlier
    step."""
    scored: list[tuple[float, int, Unit]] = []
    order = 0
    read = [(rank, item, units(item)) for rank, item in _read_items(part, items, params)]
    relation = relation_of(part, unit_names([u for _, _, found in read for u in found], params))
    anchors = list(dict.fromkeys([*anchors_of(part), *anchors_of(scene)]))  # the scene's too:
    # '东坡仓的K2故障，上门时限是多少' asks of K2 though its one part is the asking clause
    requested = not PROPOSAL_RE.search(part)  # a question about a request reads requests
    clock = kind == "number" and asks_clock(part)  # 'what time does it close': 8点至6点
    side = range_side(part) if kind == "date" or clock else ""  # 'when did X die': its end
    asked_fields = False  # a record line the part names by its label was found
    # 'which actor from the US': a unit that gives its subject another country is about
    # someone else (not when the country is what is asked, nor for two countries asked)
    nation = nation_keys(part) if kind not in NAMED_KINDS else frozenset()
    dated_kinds = _year_kinds(f"{part} {scene}")  # 'the 2004 album' -> {('2004', 'album')}
    cast_asked = kind in ("person", "entity") and asks_cast(part)
    covered = _ASKED_TIME_RE.sub(r"\1", part)  # 'What year did X die': no sentence says 'year'
    for rank, item, found in read:
        elsewhere = bool(own) and item.chunk_id not in own
        for unit in found:
            if unit.listed and kind != "explain":  # the list is the answer to 'how' only:
                unit = replace(unit, listed=())  # a value is read from its own item
            related = relation == part or holds_relation(relation, unit.context, unit.shown())
            # 'an American director' says a nationality in no word of 'nationality', and
            # '(4 March 1911 – 19 July 1979)' when one was born and died
            listed = kind in NAMED_KINDS and bool(NAMED_KINDS[kind].find(unit.text))
            values = clock_times(unit.text) if clock else spans_of(kind, unit.text)
            ranged = bool(side) and range_pair(unit.text, values) is not None
            cast = cast_asked and bool(role_spans(part, unit.text))
            related = related or listed or ranged or cast  # 'who did X play': 'X as R'
            if cast_asked and not cast:  # ... and a sentence giving X no role does not say it
                related = False
            score = _unit_score(covered, related, unit, rank, params, kind)
            score += params.reader_type_bonus if listed or cast else 0.0
            if elsewhere:
                score *= params.reader_other_step
            anchored = not anchors or holds_anchors(unit, anchors)
            if not anchored:
                score *= params.reader_missing_anchor
            if echoes(unit, part):
                score *= params.reader_echo
            if len(nation) == 1 and (held := nation_keys(unit.text)) and not nation & held:
                score *= params.reader_other_nation
            if dated_kinds and _other_year(dated_kinds, unit.text):  # 'the 2004 album': a
                score *= params.reader_other_year  # '1999 … album' is another one
            if not related:
                pass  # a value beside the names only is no sign of the asked one
            elif kind == "date" and DATE_RE.search(unit.text):
                score += params.reader_type_bonus
            elif kind in ("number", "date") and spans_of(kind, unit.text):
                score += params.reader_type_bonus / (2 if kind == "date" else 1)
            elif kind == "explain" and unit.listed:  # 'how do I …': the steps, as listed
                score += params.reader_type_bonus
            if (
                related
                and anchored
                and kind != "explain"
                and states_change(unit.text, kind, params, relation)
            ):
                score += params.reader_change_bonus  # the value as changed holds now
            elif requested and requests_change(unit.text, kind, params, relation):
                score *= params.reader_requested  # a change asked for: not the value that holds
            if (
                unit.cells
                and max((header_match(part, h) for h, _ in unit.cells), default=0) >= 0.99
            ):
                score += params.reader_type_bonus
            if asked_field(part, unit, anchors):  # a record's line the part names by label
                score += params.reader_type_bonus
                asked_fields = True
            scored.append((score, order, unit))
            order += 1
    if asked_fields:  # beside the asked line, the line of the code itself only names the record
        scored = [
            (score * params.reader_echo if _key_line(unit, anchors) else score, o, unit)
            for score, o, unit in scored
        ]
    scored.sort(key=lambda x: (-x[0], x[1]))
    if similarity is not None and len(scored) > 1:
        scored = _with_meaning(part, scored, similarity, params)
    if anchors:  # a unit about another member ('K1' where 'K2' is asked), however near in
        scored = sorted(  # meaning (it names the same subject), is no answer for this one
            (
                (s - params.reader_other_member if names_sibling(u, anchors) else s, o, u)
                for s, o, u in scored
            ),  # fmt: skip
            key=lambda x: (-x[0], x[1]),
        )
    scored = sorted(_named_by_date(part, scored, params), key=lambda x: (-x[0], x[1]))
    return [(s, u) for s, _, u in scored]


# 'a 1990 radio serial', 'the 2004 album': a year that says which one of a kind
_YEAR_KIND_RE = re.compile(
    r"\b(?:a|an|the)\s+(?P<year>1[5-9]\d{2}|20\d{2})\s+(?P<words>(?:[A-Za-z][\w-]*\s+){0,5}?)"
    r"(?P<noun>[a-z][\w-]*)\b(?=\s+(?:that|which|who|in|of|by|for|with|from|about|[a-z]+ed|"
    r"[a-z]+ing)\b|\s*[,.?;:)]|\s*$)"
)


def _year_kinds(text: str) -> set[tuple[str, str]]:
    """(year, kind noun) pairs a text names one thing of a kind by ('a 1990 radio
    serial' -> ('1990', 'serial'))."""
    return {(m.group("year"), tx.stem(m.group("noun"))) for m in _YEAR_KIND_RE.finditer(text)}


def _other_year(asked: set[tuple[str, str]], text: str) -> bool:
    """Whether a unit calls a thing of an asked kind by another year only ('a 1999 … album'
    for 'the 2004 album'): about another one of that kind."""
    said = _year_kinds(text)
    return any(
        any(noun == n and year != y for y, n in said)
        and not any(noun == n and year == y for y, n in said)
        for year, noun in asked
    )


def _key_line(unit: Unit, anchors: Sequence[str]) -> bool:
    """A record's 'Label: value' line that holds a code the part names: the record's key."""
    field = FIELD_RE.match(unit.text)
    value = tx.fold(field.group("value")).casefold() if field and not unit.cells else ""
    return bool(value) and any(tx.fold(a).casefold() in value for a in anchors)


def asked_field(part: str, unit: Unit, anchors: Sequence[str]) -> bool:
    """A 'Label: value' line whose label the part names as what it asks ('Expected arrival'
    of 'the expected arrival of part RX-7'), as a column header names a cell. Not when the
    label only modifies a word after it ('修复' of '修复截止日期', 'repair' of 'repair
    deadline'), nor the line holding the code the part names ('Part: RX-7 x 40': the record's
    key, whose label only says what the code is)."""
    field = FIELD_RE.match(unit.text)
    if unit.cells or not field or _key_line(unit, anchors):
        return False
    label = tx.fold(field.group("label")).casefold().strip()
    asked = tx.fold(part).casefold()
    at = asked.find(label)
    if not label or at < 0 or header_match(part, field.group("label")) < 0.99:
        return False
    after = tx.words(asked[at + len(label) :])[:1]
    return not after or tx.is_stopword(after[0]) or after[0] in tx.EN_QUESTION_WORDS


def _named_by_date(
    part: str, scored: list[tuple[float, int, Unit]], params: OfflineParams
) -> list[tuple[float, int, Unit]]:
    """The one table row holding the full date the part gives ('valid until 30 September
    2025', a row that says 2025-09-30) is worth reading whatever its words: a date reads the
    same in both languages, words do not. Read, not stated: it only reaches the reader's
    threshold. Only a row: a sentence that merely happens on that day is about something
    else."""
    days = date_keys(part)
    if not days:
        return scored
    holders = [
        i for i, (_, _, unit) in enumerate(scored) if unit.cells and days <= date_keys(unit.shown())
    ]  # fmt: skip
    if len(holders) != 1:
        return scored
    score, order, unit = scored[holders[0]]
    scored[holders[0]] = (max(score, params.reader_min_score), order, unit)
    return scored


def _with_meaning(
    part: str,
    scored: list[tuple[float, int, Unit]],
    similarity: Similarity,
    params: OfflineParams,
) -> list[tuple[float, int, Unit]]:
    """The built-in embedder's view of the best units: each gives up to `reader_dense_weight`
    by how far its similarity to the part falls below the best unit's (relative to the spread
    of the candidates), so a paraphrase ('national holiday' for a public holiday row) or a
    question in the other language can win where the words tie."""
    head = scored[: params.reader_dense_units]
    try:
        sims = similarity(part, [u.meant() for _, _, u in head])
    except Exception:  # noqa: BLE001 - the words alone still decide
        return scored
    if len(sims) != len(head):
        return scored
    # a line that only repeats what the part gives ('Order: PO-7' for a question about PO-7)
    # is nearest it in meaning by saying nothing new: it sets no bar for the others
    telling = [sim for (_, _, unit), sim in zip(head, sims, strict=True) if not echoes(unit, part)]
    best = max(telling or sims)
    # cosines closer than the embedder's noise do not tell units apart, however few they are
    spread = max(best - sorted(sims)[len(sims) // 2], params.reader_dense_noise)
    tables: dict[str, float] = {}  # rows of one table compete as the table: the words decide
    for (_, _, unit), sim in zip(head, sims, strict=True):  # between rows, or show them all
        if unit.cells:
            tables[unit.context] = max(sim, tables.get(unit.context, sim))
    sims = [tables[u.context] if u.cells else s for (_, _, u), s in zip(head, sims, strict=True)]
    adjusted = [
        (score - params.reader_dense_weight * min(1.0, max(0.0, best - sim) / spread), order, unit)
        for (score, order, unit), sim in zip(head, sims, strict=True)
    ]
    rest = [(score - params.reader_dense_weight, o, u) for score, o, u in scored[len(head) :]]
    return sorted(adjusted + rest, key=lambda x: (-x[0], x[1]))
