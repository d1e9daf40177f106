"""The reader: for one part of a question, the sentence (or table row, or field line) of the
evidence that best answers it, and inside it the span of the expected type.

A passage is cut into units a reader would point at: a sentence, a field line of a log or a
form ('Label: value'), a table row read with its column headers. A unit is scored by how much
of the part it covers, itself and with its context (the block's first line, the section, the
title), so a field line under '[TAG-7]' answers a question about TAG-7. Inside the unit, the
span is the value of the expected type attached to what is asked: the cell under the asked
column, the number next to the asked noun, the date next to the asked event. Headings,
navigation and table-of-contents lines are never units.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from graph import text as tx
from graph.offline.addresses import address_level, asked_level
from graph.offline.evidence import heading_like, nearness, relevance
from graph.offline.namelists import NAMED_KINDS, ORG_WORDS
from graph.offline.nations import as_asked, asks_which_country, nation_keys
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.roles import asks_cast, role_spans
from graph.offline.slots import fills_slot, labelled_values
from graph.offline.units import addresses_assistant as addresses_assistant
from graph.offline.units import looks_like_data  # one definition, the answer units'
from graph.offline.units import table_cells as table_cells
from graph.offline.units import without_planted as without_planted
from graph.offline.values import (
    DATE_RE,
    asked_unit,
    asks_clock,
    class_anchors,
    clock_times,
    codes_in,
    date_keys,
    names_of_kind,
    numeric_value,
    range_end,
    range_pair,
    range_side,
    side_time,
    spans_of,
    unit_fits,
)
from graph.protocols import EvidenceItem, Similarity
from ingest import lexicon
from ingest.lang import CODE_RE, FIELD_LABEL
from ingest.phrases import text_phrases

_CELL_SEP = " | "
_LIST_RE = re.compile(r"^(?:[-*•]|\d{1,2}[.)、]|[（(]?\d{1,2}[）)])\s*")
_TOC_RE = re.compile(r"(?:\.{4,}|…{2,}|·{4,})\s*\d+\s*$")
# A 'Label: value' line (ingest.lang.FIELD_LABEL); records.py reads its fields with it too.
FIELD_RE = re.compile(rf"^(?P<label>{FIELD_LABEL})[:：]\s*(?P<value>\S.*)$")


@dataclass(frozen=True)
class Unit:
    """One thing a reader can quote, with where it sits."""

    text: str  # verbatim (a row: its cells joined by ' | ')
    context: str  # the block's first line, the section and the title
    n: int  # the citation of its passage
    rank: int  # its passage's place in the evidence order
    cells: tuple[tuple[str, str], ...] = ()  # (column header, value) for a table row
    listed: tuple[str, ...] = ()  # the whole list when the unit is one of its items
    title: str = ""  # its passage's title: what 'The club …' or 'He …' is about
    referent: str = ""  # the names 'He …' / 'The project …' may refer back to, the sentence before
    heading: str = ""  # the last heading of its section ('Odile Marsh' of 'Staff > Odile Marsh')

    def meant(self) -> str:
        """What the embedder compares: the unit as shown; a sentence that opens by referring
        back ('He …', 'The club …') after its passage's title, what it refers to ('Harrow
        Deep: The club was formed in 1993')."""
        shown = self.shown()
        if not self.title or self.cells or not tx.refers_back(shown):
            return shown
        return f"{self.title}: {shown}"

    def shown(self) -> str:
        """How the unit is quoted: a row as 'header: value' pairs, a list in full."""
        if self.cells:
            return "; ".join(f"{h}: {v}" if h else v for h, v in self.cells if v)
        return " ".join(self.listed) if self.listed else self.text


@dataclass
class Reading:
    unit: Unit
    score: float  # how well the unit answers the part (0..1+)
    span: str = ""  # the answer inside it, '' when none of the expected type
    confident: bool = False
    stated: str = ""  # the answer line's text when not the span (a comparison, a country)
    others: tuple[Unit, ...] = ()  # the other units the stated line quotes (compared rows)
    via: Unit | None = None  # the unit that put the question's subject in the read column's class


_RULE_RE = re.compile(r"[-=_*#·~]{6,}")


def _furniture(line: str, item: EvidenceItem) -> bool:
    """A heading, the document's title or a section name, a banner in capitals or a rule
    line: where an answer sits, never one."""
    folded = tx.normalize_space(_RULE_RE.sub(" ", line)).casefold()
    if not folded or folded in item.title.casefold() or folded in item.section.casefold():
        return True
    letters = [c for c in line if c.isascii() and c.isalpha()]
    shouting = len(letters) >= 12 and sum(c.isupper() for c in letters) > 0.8 * len(letters)
    return shouting or (heading_like(line) and not FIELD_RE.match(line))


def _record_fields(lines: Sequence[str], params: OfflineParams = PARAMS) -> list[str]:
    """A block that is a record (a log entry or a form: mostly 'Label: value' lines): its short
    field lines, which say what each of its fields belongs to ('Type: delay notice', the order
    number); [] for prose."""
    fields = [ln for ln in lines if FIELD_RE.match(ln)]
    if len(lines) < 3 or len(fields) * 2 < len(lines):
        return []
    return [ln for ln in fields if len(ln) <= params.reader_record_field_chars]


def _subject(sentence: str) -> str:
    """The names a sentence gives: what a next sentence that refers back ('He …', 'The
    conference …') may be about."""
    return " ".join(text_phrases(sentence))


def units(item: EvidenceItem, params: OfflineParams = PARAMS) -> list[Unit]:
    """The passage's units in order: sentences, field lines, table rows with their headers."""
    out: list[Unit] = []
    where = " ".join(p for p in (item.title, item.section) if p)
    for block in _lists_joined(re.split(r"\n\s*\n", item.text)):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = lines[0]
        rows = [ln for ln in lines if ln.count("|") >= 1 and len(table_cells(ln)) >= 2]
        if len(rows) >= 2 and len(rows) >= len(lines) - 1:
            header = table_cells(rows[0])
            if looks_like_data(header):  # a table cut by the chunker: its header came along
                carried = table_cells(item.table_header) if item.table_header else []
                header = carried if len(carried) == len(header) else [""] * len(header)
                rows = ["", *rows]
            for row in rows[1:]:
                cells = table_cells(row)
                pairs = tuple(zip(header + [""] * (len(cells) - len(header)), cells, strict=False))
                out.append(
                    Unit(row, f"{' '.join(header)} {where}", item.n, 0, pairs, title=item.title)
                )
            continue
        items = [ln for ln in lines if _LIST_RE.match(ln)]
        listed = tuple(items) if len(items) >= 2 else ()
        record = _record_fields(lines)
        for line in lines:
            if _TOC_RE.search(line):
                continue
            # a short field line ('内容：…', 'Reason: …') is one value, whatever its stops; any
            # other line is read sentence by sentence, however short
            whole = len(line) <= params.reader_field_line_chars and FIELD_RE.match(line)
            sentences = [line] if whole else tx.split_sentences(line) or [line]
            for k, sentence in enumerate(sentences):
                opening = sentences[0] if sentence != sentences[0] else ""  # what it is about
                fields = " ".join(f for f in record if f != line)  # the record it belongs to
                context = f"{head if line != head else ''} {fields} {opening} {where}".strip()
                if _furniture(sentence, item):
                    continue
                listing = listed if line in items else ()
                before = _subject(sentences[k - 1]) if k and tx.refers_back(sentence) else ""
                out.append(
                    Unit(sentence, context, item.n, 0, listed=listing, title=item.title,
                         referent=before, heading=re.split(r"\s*>\s*", item.section)[-1])
                )  # fmt: skip
    return out


def _lists_joined(blocks: Sequence[str]) -> list[str]:
    """Blocks in order, a run of list items that each stand alone ('1. Sign in …', '2. Attach
    …': parsers give every item its own block) joined into the one list they are."""
    out: list[str] = []
    listed_before = False
    for block in blocks:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        listed = bool(lines) and all(_LIST_RE.match(ln.strip()) for ln in lines)
        if listed and listed_before:
            out[-1] = f"{out[-1]}\n{block.strip()}"
        else:
            out.append(block)
        listed_before = listed
    return out


def relation_of(part: str, names: Sequence[str] = ()) -> str:
    """The part without the names it gives: what is asked about them ('legal representative'
    of 'Who is the legal representative of Acme Ltd.?'). Names are the phrases the text itself
    marks (capitalised, tagged, quoted, codes) and `names`: the values the evidence uses as
    names (its table cells and field values) that the part repeats."""
    from graph.offline.spans import question_spans

    rest = tx.PLACEHOLDER_RE.sub(" ", part)
    found = {*text_phrases(rest), *(s.text for s in question_spans(rest)), *codes_in(rest)}
    found |= {n for n in names if n in rest}
    for name in sorted(found, key=len, reverse=True):
        rest = rest.replace(name, " ")
    return rest if tx.term_set(rest) else part


def names_in(items: Sequence[EvidenceItem], params: OfflineParams = PARAMS) -> list[str]:
    """What the passages use as names: their table cells and the labels and values of their
    field lines, when short enough to be one ('Site: North depot', 'North depot: A. Moss')."""
    return _unit_names([u for item in items[: params.reader_passages] for u in units(item)], params)


def _unit_names(found: Sequence[Unit], params: OfflineParams) -> list[str]:
    shortest, longest = params.reader_name_chars
    out: set[str] = set()
    for unit in found:
        values = [v for _, v in unit.cells]
        field = FIELD_RE.match(unit.text)
        values += [field.group("label"), field.group("value").strip()] if field else []
        out |= {v for v in values if shortest <= len(v) <= longest}
    return sorted(out)


_ORDINAL_RE = re.compile(r"[（(][一二三四五六七八九十\d]{1,3}[）)]")
_CHANGE_WORDS = {key: [w for k, ws in lexicon.table("changes") if k == key for w in ws]
                 for key in ("change", "proposal")}  # fmt: skip
_CHANGES = sorted(_CHANGE_WORDS["change"], key=len, reverse=True)
_PROPOSAL_RE = re.compile(
    "|".join(
        rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in _CHANGE_WORDS["proposal"]
    ),  # fmt: skip
    re.IGNORECASE,
)


def states_change(text: str, kind: str, params: OfflineParams = PARAMS, about: str = "") -> bool:
    """Whether the text changes a value of the asked kind ('… was amended to 6 hours',
    '…修改为6小时'): what holds now, over an earlier statement of that value. A change only
    asked for in its clause ('we request an extension to …', '申请…延长至') holds nothing yet."""
    return bool(changed_value(text, kind, params, about=about))


def requests_change(text: str, kind: str, params: OfflineParams = PARAMS, about: str = "") -> bool:
    """Whether the text only asks for a change of a value ('requests that the time be
    extended to 36 hours'): the value it names does not hold."""
    return bool(changed_value(text, kind, params, requested=True, about=about))


_CLAUSE_END_RE = re.compile(r"[，,。；;!?！？]|\.\s")


def changed_value(
    text: str, kind: str, params: OfflineParams = PARAMS, requested: bool = False,
    about: str = "",
) -> str:  # fmt: skip
    """The value a change phrase sets ('7 hours' of '… is amended to 7 hours'), of a change
    that holds, or with `requested`, of one its clause only asks for ('申请…延长至'); with
    `about` (what is asked), only a change of it: its clause names a word of it ('the visit
    time … is amended to', not '截止日期调整为' for when an extension was agreed); ''."""
    folded = text.casefold()
    kinds = [kind] if kind in ("number", "date") else ["number", "date"]
    for phrase in _CHANGES:
        for m in re.finditer(re.escape(phrase), folded):
            clause = _CLAUSE_END_RE.split(text[: m.start()])[-1]
            if bool(_PROPOSAL_RE.search(clause)) != requested:
                continue
            if about and not holds_relation(about, "", clause):
                continue
            after = text[m.end() : m.end() + params.reader_change_reach]
            found = next((spans_of(k, after)[0] for k in kinds if spans_of(k, after)), "")
            if found:
                return found
    return ""


def anchors_of(question: str) -> list[str]:
    """What names one thing among its like: codes ('KX-200'), numbered parts ('（二）') and
    numbered classes ('一类站点', 'Tier 2'). A unit that answers the question holds each of them,
    itself or in its context."""
    found = (*CODE_RE.finditer(question), *_ORDINAL_RE.finditer(question))
    return [m.group(0) for m in found] + class_anchors(question)


def holds_anchors(unit: Unit, anchors: Sequence[str]) -> bool:
    place = tx.fold(f"{unit.context} {unit.shown()}").casefold()
    return all(tx.fold(a).casefold() in place for a in anchors)


def echoes(unit: Unit, question: str) -> bool:
    """A unit that tells nothing the question does not: a field whose value the question
    gives ('Order: PO-7' for a question about PO-7), a sentence of only the question's words."""
    shown = unit.shown()
    field = FIELD_RE.match(shown)
    said = tx.term_set(field.group("value") if field else shown)
    return bool(said) and said <= tx.term_set(question)


def holds_relation(relation: str, context: str, text: str) -> bool:
    """Whether the text (or its context) holds a word of what is asked, or of the same relation
    ('employs' for 'work'): a content word, not a number or a lone Chinese character ('年' of
    '2023 年的营业收入' is no sign of revenue)."""
    words = {t for t in tx.term_set(relation) | set(tx.coverage_terms(relation))
             if not t.isdigit() and not (tx.has_cjk(t) and len(t) == 1)}  # fmt: skip
    words |= tx.cue_terms(relation)  # 'What city is X from?': where X was born
    if not words:
        return relevance(relation, context, text) > 0
    passage = f"{context} {text}"
    terms = tx.term_set(passage)
    return any(tx.holds_kin(w, passage, terms) for w in words)


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
    relation = relation_of(part, _unit_names([u for _, _, found in read for u in found], params))
    anchors = list(dict.fromkeys([*anchors_of(part), *anchors_of(scene)]))  # the scene's too:
    # '东坡仓的K2故障，上门时限是多少' asks of K2 though its one part is the asking clause
    requested = not _PROPOSAL_RE.search(part)  # a question about a request reads requests
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
                (s - params.reader_other_member if _names_sibling(u, anchors) else s, o, u)
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


def _given(question: str) -> str:
    return tx.fold(question).casefold().replace(" ", "")


def _in_question(span: str, question: str) -> bool:
    """Whether the question gives this value itself (a date in another format too): what it
    names a row or sentence by is never its answer."""
    if tx.fold(span).casefold().replace(" ", "") in _given(question):
        return True
    if _fuller_name(span, question):
        return True
    days = date_keys(span)
    return bool(days) and days <= date_keys(question)


_MONTHS = "|".join(sorted(tx.MONTHS, key=len, reverse=True))
# 'March 3', '22 April': a day of a month, no name of a place or a person
_MONTH_DAY_RE = re.compile(
    rf"(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}\s+(?:{_MONTHS})", re.IGNORECASE
)
_SUFFIX_RE = re.compile(r"(?:Jr|Sr)\.?|I{2,3}|IV")


def _fuller_name(span: str, question: str) -> bool:
    """A name the question gives, written fuller ('Vela Anna Maria Pruss' for 'Vela Pruss',
    'Ivo Lund Jr.' for 'Ivo Lund'): its first and last words the same."""
    words = [w for w in span.split() if not _SUFFIX_RE.fullmatch(w)]  # 'Jr.', 'III'
    if len(words) < 2 or not words[0][:1].isupper():
        return False
    return (words[0], words[-1]) in _name_ends(question)


@functools.lru_cache(maxsize=1024)
def _name_ends(question: str) -> frozenset[tuple[str, str]]:
    """(first word, last word) of each name of two or more words the question gives: asked
    for every span a sentence offers, so read once per question."""
    return frozenset(
        (n.split()[0], n.split()[-1]) for n in text_phrases(question) if len(n.split()) >= 2
    )


def header_match(question: str, header: str) -> float:
    """How much a column header is what the question asks about."""
    if not header:
        return 0.0
    terms = tx.term_set(header)
    q = tx.term_set(question)
    if not terms:
        return 0.0
    by_terms = len(terms & q) / len(terms)
    classes, asked = set(class_anchors(header)), set(class_anchors(question))
    if classes and asked and not classes & asked:  # the column of another class than the asked
        return 0.0
    if tx.has_cjk(header):
        core = re.sub(r"[（(].*?[）)]", "", header).strip()
        if core and core in question:
            return 1.0
    return by_terms


def read_row(
    part: str, question: str, unit: Unit, kind: str, params: OfflineParams = PARAMS
) -> tuple[str, bool, str]:
    """(the answering cell, confident, its header) of a table row."""
    scored = []
    for header, value in unit.cells:
        if not value or _in_question(value, question) or value in {"—", "-", "/"}:
            continue
        match = header_match(part, header)
        if kind in ("number", "date") and not spans_of(kind, value) and not re.search(r"\d", value):
            continue  # no value of the asked kind: a row of only such cells holds no answer
        scored.append((match, header, value))
    if not scored:
        return "", False, ""
    scored.sort(key=lambda x: -x[0])
    best, header, value = scored[0]
    second = scored[1][0] if len(scored) > 1 else 0.0
    from graph.offline.records import asked_head

    if asked_head(question, [h for h, _ in unit.cells]) not in ("", header):
        return value, False, header  # the question asks another column ('the contact for the site')
    asked_dates = date_keys(question)
    anchored = any(
        _in_question(v, question) or (asked_dates and date_keys(v) & asked_dates)
        for _, v in unit.cells
        if len(v) >= 3
    )
    sure = best >= params.reader_column_sure and second < params.reader_column_rival
    return value, sure and anchored, header


def compare_rows(
    question: str, rows: Sequence[Unit], direction: int, params: OfflineParams = PARAMS
) -> Reading | None:
    """'A and B, which expires first?': the column the question asks about, each named row's
    value in it, and the row the comparison word picks, with every value shown."""
    if direction == 0 or len(rows) < 2:
        return None
    headers = [h for h, _ in rows[0].cells if h]
    scored = sorted(((header_match(question, h), h) for h in headers), key=lambda x: -x[0])
    if not scored or scored[0][0] < params.reader_column_min:
        return None
    column = scored[0][1]
    values = []
    for row in rows:
        cells = dict(row.cells)
        key = next((v for _, v in row.cells if _in_question(v, question)), "")
        value = numeric_value(cells.get(column, ""))
        if value is None or not key:
            return None
        values.append((value, key, cells[column], row))
    value, key, shown, row = (min if direction < 0 else max)(values, key=lambda x: x[0])
    others = "; ".join(f"{k}: {c}" for _, k, c, _ in values if k != key)
    line = f"{key} ({column}: {shown}; {others})"
    compared = tuple(r for _, _, _, r in values if r is not row)
    return Reading(row, 1.0, key, True, stated=line, others=compared)


def read_sentence(
    part: str, question: str, unit: Unit, kind: str, params: OfflineParams = PARAMS
) -> tuple[str, bool]:
    """(the span of the expected type nearest to what is asked, confident) in a sentence:
    a lone value of the asked kind, or a name clearly nearer the asked relation than any
    other name of the sentence."""
    given = f"{question} {part}"
    marker = _LIST_RE.match(unit.text)  # '2. Attach …': the item's number is no amount
    text = unit.text[marker.end() :] if marker else unit.text
    if kind in ("number", "date"):
        found = [s for s in spans_of(kind, text) if not _in_question(s, given)]
        times = [t for t in clock_times(text) if not _in_question(t, given)]
        clock = asks_clock(part) if kind == "number" else not found  # 'when does it close':
        if clock and times:  # a time of day when the sentence states no date
            ended = range_end(text, times, part) or side_time(text, times, part)
            if ended:  # the range's asked end, or the time after 'closes at'
                return ended, False
            found = times
    elif kind in NAMED_KINDS:  # 'an American director', 'a Tamil song': the one named
        listed = [(k, s) for k, s in NAMED_KINDS[kind].find(text) if not _in_question(s, given)]
        if not listed:
            return "", False
        return listed[0][1], len({key for key, _ in listed}) == 1
    elif kind in ("person", "place", "entity"):
        found = [s for s in names_of_kind(kind, unit.text)
                 if not _in_question(s, given) and not _MONTH_DAY_RE.fullmatch(s)]  # fmt: skip
        found = [_with_particle(unit.text, s) for s in found] if kind == "place" else found
        lead = _title_word_lead(unit)  # 'Tibbet debuted …' on the page 'Old Tibbet'
        found += [lead] if lead and not _in_question(lead, given) else []
        found += [s for s in spans_of("code", unit.text) if not _in_question(s, given)]
        if kind == "entity":  # 'what channel': 'channel 44'
            found += [s for s in labelled_values(part, unit.text) if not _in_question(s, given)]
        cast = [s for s in role_spans(part, unit.text) if not _in_question(s, given)]
        if asks_cast(part):  # 'Who did X play?': only a role the sentence gives X answers
            return (cast[0], len(cast) == 1) if cast else (found[0] if found else "", False)
    else:
        found = []
    found = list(dict.fromkeys(found))
    if kind == "person" and any(_recipient_of(text, s, part) for s in found):
        return "", False  # 'X was sold to ⟨Y⟩': Y received it, and who sold it goes unsaid
    if kind == "person":  # 'who': a person's name before an organisation's, unless the
        found = [s for s in found if _of_asked_kind(kind, part, s)  # organisation did what
                 or _agent_of(text, s, part)] or found  # is asked: 'acquired by ⟨org⟩'  # fmt: skip
    if not found and not (kind == "person" and _pronoun_subject(unit)):
        return "", False
    asked = tx.term_set(tx.PLACEHOLDER_RE.sub(" ", part))
    named = found + text_phrases(tx.PLACEHOLDER_RE.sub(" ", given))
    asked -= set().union(*(tx.term_set(s) for s in named))  # the relation's words, not names
    asked = tx.kin_of(asked) | tx.cue_terms(part)  # 'die': 'died'
    wanted = asked_unit(question) if kind == "number" else ""
    if kind == "number" and len(found) > 1:  # 'followed by X, which handled 284,510'
        owned = _owned_value(text, found, text_phrases(tx.PLACEHOLDER_RE.sub(" ", part)))
        if owned and (not wanted or unit_fits(owned, wanted) or not any(
                unit_fits(s, wanted) for s in found)):  # fmt: skip
            return owned, False  # X's own value, of the asked unit if any is
    if wanted:  # 'how many days': a value in days, not the percentage beside it
        fitting = [s for s in found if unit_fits(s, wanted)]
        if not fitting:
            near = sorted(((nearness(unit.text, s, asked), s) for s in found), key=lambda x: -x[0])
            return near[0][1], False
        found = fitting
    near = sorted(((nearness(unit.text, s, asked), s) for s in found), key=lambda x: -x[0])
    meant = _pronoun_subject(unit) if kind == "person" else ""
    if meant and not _in_question(meant, given):  # 'He has also served as the host …': he
        pronoun_near = nearness(unit.text, unit.text.split()[0], asked)  # is whom the page
        if pronoun_near > (near[0][0] if near else 0.0):  # is about
            return meant, False
    if not near:
        return "", False
    ranged = range_end(text, found, part) if kind == "date" else ""
    if ranged:  # 'X (3 May 1901 – 9 June 1980)': 'when did X die' asks the range's end
        return ranged, False
    if kind in ("number", "date"):
        said = _in_asked_clause(text, [s for _, s in near], asked)
        near = [n for n in near if n[1] in said] + [n for n in near if n[1] not in said]
        both = _coordinated(text, near[0][1], found) if kind == "date" else ""
        whole = _counted_noun(text, near[0][1], part) if kind == "number" else ""
        return both or whole or near[0][1], len(near) == 1
    from graph.offline.answer import cue_fit

    near = sorted(  # a name in the slot is next to what is asked, however far its words
        ((_slotted(n, part, unit.text, s, params) * cue_fit(kind, unit.text, s), s)
         for n, s in near),
        key=lambda x: -x[0],
    )  # fmt: skip
    if kind == "place":  # 'born X in Y': a name after 'in' / 'at' is the place, not X
        cued = [n for n in near if cue_fit(kind, unit.text, n[1]) > 1.0]
        near = cued + [n for n in near if n not in cued]
    level = asked_level(part) if kind in ("place", "entity") else ""
    if level and (wider := address_level(unit.text, near[0][1], level)):
        return wider, False  # 'what county': 'Hertfordshire' of 'Royston, Hertfordshire'
    best, second = near[0][0], (near[1][0] if len(near) > 1 else 0.0)
    clear = best > 0 and best >= params.reader_name_margin * second  # next to the relation
    fits = cue_fit(kind, unit.text, near[0][1]) >= 1.0  # 'by X' is no place, 'in X' no person
    if asks_which_country(part) and not nation_keys(near[0][1]):
        fits = False  # 'which country': a continent or a region is no country to state
    return near[0][1], kind in ("person", "place") and clear and fits


def _counted_noun(text: str, span: str, part: str) -> str:
    """An amount read with the whole noun the question counts: '312 duplicate invoice' goes on
    to 'emails' when the question says it ('how many duplicate invoice emails'); '' when the
    words after it are not the question's."""
    at = text.find(span)
    if at < 0 or tx.has_cjk(span):
        return ""
    asked = tx.term_set(part)
    more = 0
    for word in re.findall(r"[A-Za-z][\w-]*", text[at + len(span) :])[:3]:
        terms = tx.term_set(word)
        if not terms or not terms <= asked:
            break
        more += 1
    if not more:
        return ""
    tail = re.match(rf"(?:\W*[A-Za-z][\w-]*){{{more}}}", text[at + len(span) :])
    return f"{span}{tail.group(0)}" if tail else ""


# where one clause of a sentence ends and another, with its own verb, begins
_CLAUSE_RE = re.compile(
    r"[;；]|,\s*(?:but|and|while|whereas|although|though|yet)\b|，\s*(?:但|而|并且)"
)


def _coordinated(text: str, span: str, found: Sequence[str]) -> str:
    """Two dates said of one event ('won the cup in 1903 and 1961'): both, as the text says
    them; '' for one date alone or a range ('between 1903 and 1961')."""
    at = text.find(span)
    if at < 0 or re.search(r"\b(?:between|from)\s+$", text[:at], re.IGNORECASE):
        return ""
    for other in found:
        m = re.match(rf"\s*(?:and|&|和|及)\s*{re.escape(other)}(?![\w])", text[at + len(span) :])
        if other != span and m:
            return text[at : at + len(span) + m.end()]
    return ""


def _in_asked_clause(text: str, spans: Sequence[str], asked: set[str]) -> list[str]:
    """The values said in a clause that holds a word of what is asked ('married in 1702, but
    died in 1709': 1709 for 'when did she die'); all of them when no clause tells them apart."""
    clauses = _CLAUSE_RE.split(text)
    if len(clauses) < 2 or not asked:
        return list(spans)
    kept = [
        s for s in spans
        if any(_value_at(c, s) is not None and tx.term_set(c) & asked for c in clauses)
    ]  # fmt: skip
    return kept or list(spans)


def _owned_value(text: str, found: Sequence[str], subjects: Sequence[str]) -> str:
    """The one value a sentence says right after the part's subject, before it names anything
    else: 'A (31,000); B (12,400); C (3,100)' gives B 12,400; '… followed by B, which handled
    284,510' gives B 284,510. '' when no subject of the part has exactly one such value."""
    owned: set[str] = set()
    for subject in subjects:
        for m in re.finditer(rf"(?<![\w-]){re.escape(subject)}(?![\w-])", text):
            rest = text[m.end() :]
            others = [n for n in text_phrases(rest) if n != subject and n not in found]
            stop = min((rest.find(n) for n in others if rest.find(n) >= 0), default=len(rest))
            held = [v for v in found if (at := _value_at(rest, v)) is not None and at < stop]
            if len(held) == 1:
                owned.add(held[0])
    return next(iter(owned)) if len(owned) == 1 else ""


def _value_at(text: str, value: str) -> int | None:
    """Where a value stands in the text as a whole token ('12' is not the start of '120')."""
    m = re.search(rf"(?<![\w.,]){re.escape(value)}(?![\w])", text)
    return m.start() if m else None


_PARTICLES = "|".join(  # 'La', 'Le', 'Den' … ('The Orlen depot' is no place 'The Orlen')
    w.capitalize()
    for w in lexicon.words("connectors")
    if w.isalpha() and len(w) > 1 and not tx.is_stopword(w)
)
_PARTICLE_RE = re.compile(rf"\b(?:{_PARTICLES})\s+$")


def _with_particle(text: str, span: str) -> str:
    """A place name with the capitalised particle it opens with ('La Versane', 'Le Havre'),
    which a name's own words leave out at its start."""
    at = text.find(span)
    m = _PARTICLE_RE.search(text[:at]) if at > 0 else None
    return text[m.start() : at + len(span)] if m else span


_PRONOUN_RE = re.compile(r"^(?:He|She)\b")


def _pronoun_subject(unit: Unit) -> str:
    """Whom a sentence opening 'He …' / 'She …' is about: its section's heading or its page's
    title when that is a person's name (two to four capitalised words) the sentence before
    names too; else ''."""
    if not _PRONOUN_RE.match(unit.text):
        return ""
    for named in (unit.heading, unit.title):  # the section it sits in, then the page
        name = re.sub(r"\s*\([^()]*\)", "", named).strip()
        words = name.split()
        if (
            2 <= len(words) <= 4
            and all(re.fullmatch(r"[A-Z][\w.'’-]*", w) for w in words)
            and words[-1] in unit.referent.split()
        ):
            return name
    return ""


def _title_word_lead(unit: Unit) -> str:
    """The capitalised word a sentence opens with when it is a word of its passage's title
    ('Tibbet' on the page 'Old Tibbet'): a name, though any sentence opens capitalised."""
    first = re.match(r"([A-Z][\w'’-]+)\b(?![\w'’-])", unit.text)
    if not first or not unit.title or tx.is_stopword(first.group(1).lower()):
        return ""
    return first.group(1) if first.group(1) in re.findall(r"[\w'’-]+", unit.title) else ""


def _slotted(near: float, part: str, sentence: str, span: str, params: OfflineParams) -> float:
    """A name's nearness, more for one where the part leaves its answer's slot ('role in X',
    'X (born …) is a … actress', 'X first appeared in'): as near as a name can be (a
    parenthesis between the subject and 'actress' keeps it no farther), times the slot weight."""
    if not fills_slot(part, sentence, span):
        return near
    return max(near, 1.0) * params.reader_slot_weight


def _rows_named(question: str, unit: Unit, ranked: Sequence[Unit]) -> list[Unit]:
    """The rows of the unit's table that hold one of the codes the question names, in
    order, one row per code."""
    if not unit.cells:
        return []
    rows: list[Unit] = []
    for code in dict.fromkeys(m.group(0) for m in CODE_RE.finditer(question)):
        row = next((u for u in ranked if u.cells and u.context == unit.context
                    and any(v == code for _, v in u.cells)), None)  # fmt: skip
        if row is not None and row not in rows:
            rows.append(row)
    asked = date_keys(question)  # a reverse lookup names its row by a value ('until 2031-01-02')
    for u in ranked if asked else ():
        if u not in rows and same_table(u, unit) and any(date_keys(v) & asked for _, v in u.cells):
            rows.append(u)
    return rows


def same_table(one: Unit, other: Unit) -> bool:
    """Two rows of one table: the same context, or the same column headers (a table that goes
    on in the next chunk carries its header row there)."""
    if not one.cells or not other.cells:
        return False
    return one.context == other.context or [h for h, _ in one.cells] == [h for h, _ in other.cells]


def read(
    part: str,
    question: str,
    kind: str,
    items: Sequence[EvidenceItem],
    params: OfflineParams = PARAMS,
    own: frozenset[str] = frozenset(),
    similarity: Similarity | None = None,
    scene: str = "",
) -> Reading | None:
    """The best unit for the part and the answer inside it; `scene` is the question around a
    part that is its only one (its codes and classes name what the part asks of). A question
    that names no class but a subject the evidence puts in one ('Hollow Creek' of 'Tier 2
    sites: Hollow Creek') is read as asking about that class, when the evidence tells classes
    of that kind apart."""
    ranked = rank_units(part, items, params, kind, own, similarity, scene)
    implied = implied_class(question, items, params)
    via = implied[1].text if implied is not None else None  # the membership itself aside,
    top = [(sc, u) for sc, u in ranked if sc >= params.reader_min_score and u.text != via]
    if implied is not None and _classes_matter(implied[0], top[: params.reader_class_top]):
        part, question = f"{part} ({implied[0]})", f"{question} ({implied[0]})"
        ranked = rank_units(part, items, params, kind, own, similarity, scene)
    else:
        implied = None
    if not ranked:
        return None
    ranked = [(s, u) for s, u in ranked if not echoes(u, part)] or ranked  # says nothing new
    if kind in NAMED_KINDS:  # a unit naming no country / language answers no question of one
        ranked = [(s, u) for s, u in ranked if NAMED_KINDS[kind].find(u.text)] or ranked
    if kind == "number":  # a unit with no amount cannot answer (a time may be said in words)
        ranked = [(s, u) for s, u in ranked if u.cells or spans_of(kind, u.text)] or ranked[:0]
        if not ranked:
            return None
    if kind in ("place", "person"):  # a close second that names one, over a first that
        ranked = _naming_first(part, question, kind, ranked, params)  # names no place
    score, unit = ranked[0]
    tied = [u for s, u in ranked if s >= score - 1e-6 and u.cells and u.context == unit.context]
    codes = set(codes_in(question))
    table = next((u for _, u in ranked if u.cells and any(v in codes for _, v in u.cells)), unit)
    named = _rows_named(question, table, [u for _, u in ranked])
    if len(named) > 1:  # the question names several rows ('A and B, which …'): all of them
        from graph.offline.answer import comparison_direction

        compared = compare_rows(question, named, comparison_direction(question), params)
        if compared is not None:
            return compared
        if table is unit:
            tied = named
    elif named and same_table(named[0], unit):  # the one row the question names
        unit, tied = named[0], [named[0]]  # ('保修到 2031 年 3 月 9 日的设备', 'QT-7's cost')
    if len(tied) > 1:  # rows the part cannot tell apart: the reader sees them all
        rows = tied[: params.reader_tied_rows]
        unit = Unit(" / ".join(u.text for u in rows), unit.context, unit.n, unit.rank,
                    listed=tuple(u.shown() + ";" for u in rows))  # fmt: skip
        return Reading(unit, score)
    reading = Reading(unit, score, via=implied[1] if implied is not None else None)
    if unit.cells:
        reading.span, confident, header = read_row(part, question, unit, kind, params)
    elif changed := changed_value(unit.text, kind, params, about=relation_of(part)):
        reading.span, confident = changed, True  # the value it changes to, none beside it
    else:
        reading.span, confident = read_sentence(part, question, unit, kind, params)
    stated = relevance(relation_of(part), "", unit.shown()) >= params.reader_state_relation
    if kind in NAMED_KINDS and reading.span:  # 'X … was an American director' says X's
        stated = stated or _names_subject(part, unit, reading.span)  # nationality in no word
    if kind == "nation" and reading.span:  # of it; 'which country': 'United States'
        country = as_asked(question, reading.span)
        reading.stated = country if country != reading.span else ""
    if kind == "date" and reading.span and _YEAR_ASKED_RE.search(part):  # 'in what year':
        reading.span = year_of(reading.span) or reading.span  # the year of the date read
    # a value said of one member of a class ('二类网点…修改为6小时') is not stated for a
    # question that does not say which member it asks of: quoted, its member in view
    said = {_class_kind(c) for c in class_anchors(question)}  # ('类' of '一类站点', 'p' of 'P1')
    said |= {_class_kind(implied[0])} if implied is not None else set()
    unsaid = any(_class_kind(c) not in said for c in class_anchors(unit.text))
    reading.confident = (
        confident
        and bool(reading.span)
        and stated
        and score >= params.reader_state_score
        and not unsaid
        and _of_asked_kind(kind, part, reading.span)
    )
    return reading


def _naming_first(
    part: str, question: str, kind: str, ranked: list[tuple[float, Unit]], params: OfflineParams
) -> list[tuple[float, Unit]]:
    """The ranking with the best unit that holds a name of the asked kind first, when the top
    one holds none ('X (born March 3, 1951) is a filmmaker' for 'X's place of birth'): as a
    unit without an amount answers no 'how many', among the next few that score enough to
    answer at all (`reader_min_score`); as it was otherwise."""
    if not ranked or ranked[0][1].cells or read_sentence(part, question, ranked[0][1], kind)[0]:
        return ranked
    for i, (sc, u) in enumerate(ranked[1 : 1 + params.reader_next_units], start=1):
        if sc < params.reader_min_score:
            break
        if not u.cells and read_sentence(part, question, u, kind)[0]:
            return [ranked[i], *ranked[:i], *ranked[i + 1 :]]
    return ranked


_YEAR_ASKED_RE = re.compile(r"\b(?:what|which)\s+year\b|哪一?年|何年", re.IGNORECASE)


def year_of(span: str) -> str:
    """The year a date states ('1981' of 'April 12, 1981', '2024年' of '2024年3月5日'), or ''
    when the span is a year already or names none."""
    zh = re.search(r"(\d{4})\s*年", span)
    if zh:
        year = zh.group(1) + "年"
    else:
        found = re.findall(r"(?<![\d.])\d{3,4}(?:\s*(?:BC|BCE|AD|CE)\b)?(?!\d|\.\d)", span)
        year = found[-1] if found else ""
    return year if year and year != span.strip() else ""


def _of_asked_kind(kind: str, part: str, span: str) -> bool:
    """Whether a span may be stated as the answer's kind: an organisation's name ('Bank of
    America', '… Party') or a date is no person for 'who' (unless the part names such an
    organisation as what it asks: 'what party … who ran'), and a country no answer to 'which
    county' (read and quoted instead, the sentence in view)."""
    if kind == "person":
        if any(c.isdigit() for c in span):  # 'May 27' is a date, no one's name
            return False
        named_org = any(w.strip(".,").lower() in ORG_WORDS for w in span.split())
        if named_org and not ORG_WORDS & set(tx.words(part)):  # 'what party … who ran'
            return False
    return not (asked_level(part) and nation_keys(span))


def _agent_of(text: str, span: str, part: str) -> bool:
    """Whether the text says the span did what the part asks ('was acquired by ⟨span⟩' for
    'who bought …'): 'by' right after a word of the asked relation (or its kin)."""
    return _after_asked_verb(text, span, part, "by")


def _recipient_of(text: str, span: str, part: str) -> bool:
    """Whether the text gives the span as who received what is asked ('was sold to ⟨span⟩' for
    'who sold …'; a sentence that says so names no seller but by 'by', read apart), when the
    part does not ask for a receiver ('who was it sold to')."""
    asks_receiver = re.search(r"\bto\b", part, re.IGNORECASE)
    return not asks_receiver and _after_asked_verb(text, span, part, "to")


def _after_asked_verb(text: str, span: str, part: str, preposition: str) -> bool:
    """Whether the span follows a word of the part's relation (or its kin) and the
    preposition ('acquired by ⟨span⟩', 'sold to ⟨span⟩')."""
    asked = tx.kin_of(tx.term_set(tx.PLACEHOLDER_RE.sub(" ", part)))
    pattern = rf"(\w+)\s+{preposition}\s+(?:the\s+)?{re.escape(span)}"
    return any(set(tx.tokenize(m.group(1))) & asked for m in re.finditer(pattern, text))


def _names_subject(part: str, unit: Unit, span: str) -> bool:
    """Whether the unit says the span of what the part asks about: the name, then 'is' / 'was'
    and a few words, then the span ('Ann Lee (born 1950) was an American …', 'Tidewater is a
    1998 Tamil song'); not 'a 1915 American film directed by Ann Lee', nor 'Ann Lee starred in
    a French film'."""
    low = unit.text.lower()
    at = low.find(span.lower())
    names = [n.lower() for n in text_phrases(tx.PLACEHOLDER_RE.sub(" ", part))]
    starts = [low.find(n) + len(n) for n in names if 0 <= low.find(n) < at]
    return any(_SAID_OF_RE.search(low[start:at]) for start in starts)


# between the subject and the span: a copula and at most four words ('was an', 'is a 1998')
_SAID_OF_RE = re.compile(r"\b(?:is|was|are|were|is\s+also|was\s+also)\s+(?:[\w'’-]+\s+){0,4}$")


def _names_sibling(unit: Unit, anchors: Sequence[str]) -> bool:
    """Whether the unit itself names another member of a class the question names ('K1' or
    '二类' where 'K2' or '一类' is asked): it is about that member."""
    asked = [a for a in anchors if a in class_anchors(a.upper())]  # folded: 'k2' of 'K2'
    held = class_anchors(unit.shown())
    return any(
        c != a and _class_kind(c) == _class_kind(a) and a not in held for a in asked for c in held
    )


# A grade or priority written as a letter and a digit ('L4', 'P1'): an anchor when the question
# names it, but a row's own grade is often what is asked ('他是什么职级'), never read in.
_SHORT_CLASS_RE = re.compile(r"[a-z]\d")


def _class_kind(anchor: str) -> str:
    """What a numbered class is a class of: '一类' -> '类', 'tier 2' -> 'tier', 'p1' -> 'p'."""
    if _SHORT_CLASS_RE.fullmatch(anchor):
        return anchor[0]
    return anchor.split()[0] if " " in anchor else anchor[-1]


def _classes_matter(anchor: str, top: Sequence[tuple[float, Unit]]) -> bool:
    """Whether the units that could answer (beside the one giving the subject's class) tell
    classes of the anchor's kind apart: one of them names such a class (a row in its headers).
    Otherwise the subject's class has nothing to decide."""
    kind = _class_kind(anchor)
    return any(
        _class_kind(c) == kind
        for _, u in top
        for c in class_anchors(f"{u.context} {u.shown()}" if u.cells else u.shown())
    )


def _open_classes(text: str, named: set[str]) -> set[str]:
    """The classes a text names of kinds the question leaves open, letter-and-digit grades
    aside (a row's own grade is often what is asked)."""
    return {
        c
        for c in class_anchors(text)
        if _class_kind(c) not in named and not _SHORT_CLASS_RE.fullmatch(c)
    }


def implied_class(
    question: str, items: Sequence[EvidenceItem], params: OfflineParams = PARAMS
) -> tuple[str, Unit] | None:
    """(the class, the unit saying so) for a question that names no numbered class of a kind
    but a subject that one unit of the evidence names with exactly one class of it ('Tier 2
    sites: Hollow Creek'), when other units name another class of that kind: the question is
    about that class's row, column or clause. None when no such unit, or when the question
    names a class of that kind itself ('P1' settles the priority, not the tier)."""
    named = {_class_kind(c) for c in class_anchors(question)}  # kinds the question settles
    from graph.offline.spans import question_spans

    read = [replace(u, listed=()) for item in items for u in units(item)]  # a membership may
    # rank low: every passage; a list item by itself ('(1) Tier 1: …' apart from '(2) Tier 2: …')
    subjects = {s.text for s in question_spans(question)}
    subjects |= {n for n in _unit_names(read, params) if n in question}
    subjects = {s.casefold() for s in subjects if len(s) >= 2 and not class_anchors(s)}
    if not subjects:
        return None
    seen = {c for u in read for c in class_anchors(f"{u.context} {u.shown()}")}
    for subject in sorted(subjects, key=len, reverse=True):
        classes: set[str] = set()  # every class named with the subject, rows by their headers
        via: Unit | None = None
        for unit in read:
            if subject not in unit.shown().casefold():
                continue
            around = f"{unit.context} {unit.shown()}" if unit.cells else unit.shown()
            classes |= _open_classes(around, named)  # a row's class may be in its headers
            if via is None and len(_open_classes(unit.shown(), named)) == 1:
                via = unit
        if len(classes) != 1 or via is None:
            continue  # named with no class, or with several ('P1' in a row of every tier)
        (anchor,) = classes
        if _class_kind(anchor) in named:
            continue  # the question says which one ('Tier 1 sites'): nothing to read in
        if any(c != anchor and _class_kind(c) == _class_kind(anchor) for c in seen):
            return anchor, via
    return None


def unit_holding(span: str, item: EvidenceItem) -> Unit | None:
    """The unit of a passage that holds a span (to quote a value found some other way)."""
    return next((u for u in units(item) if span in u.text), None)


def bold(text: str, span: str) -> str:
    """The text with the first standalone occurrence of span in bold (never a piece of a
    longer number, date or code); verbatim otherwise."""
    if not span:
        return text
    m = re.search(rf"(?<![A-Za-z0-9.\-]){re.escape(span)}(?![A-Za-z0-9\-]|\.\d)", text)
    if m is None and (pronoun := _PRONOUN_RE.match(text)):  # whom 'He …' is about, in
        return f"[**{span}**]{text[pronoun.end() :]}"  # brackets: the quote's one change
    return text if m is None else f"{text[: m.start()]}**{span}**{text[m.end() :]}"
