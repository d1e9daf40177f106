"""The span inside the hand reader's unit: the value of the expected type attached to what
is asked. In a table row, the cell under the asked column (read_row; two rows the question
names compared on it, compare_rows); in a sentence, the number next to the asked noun, the
date next to the asked event, the name nearest the asked relation whose cue fits the kind
(read_sentence); never a value the question gives itself. bold shows the span in its unit.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.addresses import address_level, asked_level
from graph.offline.answer_spans import cue_fit
from graph.offline.columns import asked_head, header_match
from graph.offline.evidence import nearness
from graph.offline.namelists import NAMED_KINDS, ORG_WORDS
from graph.offline.nations import asks_which_country, nation_keys
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.reader_units import LIST_RE, Reading, Unit
from graph.offline.roles import asks_cast, role_spans
from graph.offline.slots import fills_slot, labelled_values
from graph.offline.values import (
    asked_unit,
    asks_clock,
    clock_times,
    date_keys,
    names_of_kind,
    numeric_value,
    range_end,
    side_time,
    spans_of,
    unit_fits,
)
from ingest import lexicon
from ingest.phrases import text_phrases


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
    marker = LIST_RE.match(unit.text)  # '2. Attach …': the item's number is no amount
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
        found = [s for s in found if of_asked_kind(kind, part, s)  # organisation did what
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


def of_asked_kind(kind: str, part: str, span: str) -> bool:
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


def bold(text: str, span: str) -> str:
    """The text with the first standalone occurrence of span in bold (never a piece of a
    longer number, date or code); verbatim otherwise."""
    if not span:
        return text
    m = re.search(rf"(?<![A-Za-z0-9.\-]){re.escape(span)}(?![A-Za-z0-9\-]|\.\d)", text)
    if m is None and (pronoun := _PRONOUN_RE.match(text)):  # whom 'He …' is about, in
        return f"[**{span}**]{text[pronoun.end() :]}"  # brackets: the quote's one change
    return text if m is None else f"{text[: m.start()]}**{span}**{text[m.end() :]}"
