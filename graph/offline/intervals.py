"""'How many days …' answered from two dates the documents state, not from a stated duration.

A notice handed over on one date for a change effective on another; a delivery after its
deadline. When the sentence that best answers the question (or it and the sentence beside
it, in the same passage) holds exactly two full dates and states no number of days itself,
the answer is the calendar days between them, shown with both dates and the sentence cited.
Business or working days need a calendar the documents do not give: those are left to the
reader, as is a sentence that states the duration in words ('within 7 days').
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline import reader_checks as rc
from graph.offline import reader_rank as rr
from graph.offline import reader_units as ru
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.values import asked_unit, date_keys, spans_of, unit_fits
from graph.protocols import EvidenceItem

_DAYS = ("day", "days", "天")  # as asked_unit gives them
_WORKING_RE = re.compile(r"\b(?:business|working|work)\s+days?\b|工作日", re.IGNORECASE)


@dataclass(frozen=True)
class Gap:
    answer: str  # '78 days: 2025-01-01 − 2024-10-15'
    n: int  # the citation of the passage holding both dates
    shown: str  # the sentence(s) the dates come from, for the evidence
    texts: tuple[str, ...]  # those sentences' units, not to be shown again


def _states_days(text: str, unit: str) -> bool:
    return any(unit_fits(span, unit) for span in spans_of("number", text))


def _pair(
    unit: ru.Unit, item_units: Sequence[ru.Unit], days: str
) -> tuple[list[tuple[int, int, int]], tuple[str, ...]] | None:
    """The two dates of the unit, or of it and one sentence beside it; None when there are
    not exactly two, or a sentence used states a number of days."""
    if unit.cells or _states_days(unit.text, days):
        return None
    own = sorted(date_keys(unit.text))
    if len(own) == 2:
        return own, (unit.text,)
    if len(own) != 1:
        return None
    at = next((i for i, u in enumerate(item_units) if u.text == unit.text), -1)
    found = []
    for j in (at - 1, at + 1) if at >= 0 else ():
        other = item_units[j] if 0 <= j < len(item_units) else None
        if other is None or other.cells or _states_days(other.text, days):
            continue
        keys = date_keys(other.text)
        if len(keys) == 1 and not keys & set(own):  # one other date, and only that one
            found.append((j, next(iter(keys)), other.text))
    if len(found) != 1:
        return None  # no date beside it, or one on either side: which is meant is unclear
    j, key, text = found[0]
    return sorted([own[0], key]), ((text, unit.text) if j < at else (unit.text, text))


def gap(question: str, items: Sequence[EvidenceItem], params: OfflineParams = PARAMS) -> Gap | None:
    """The calendar days between the two dates of the best-fitting sentence, when the
    question asks how many days and no sentence used states them; else None."""
    days = asked_unit(question)
    if days not in _DAYS or _WORKING_RE.search(question):
        return None
    ranked = rr.rank_units(question, items, params, "date")
    ranked = [(s, u) for s, u in ranked if not rc.echoes(u, question)]
    if not ranked or ranked[0][0] < params.reader_min_score:
        return None
    unit = ranked[0][1]
    item = next((e for e in items if e.n == unit.n), None)
    found = _pair(unit, ru.units(item), days) if item else None
    if found is None:
        return None
    (a, b), texts = found
    shown = " ".join(texts)
    try:
        early, late = dt.date(*a), dt.date(*b)
    except ValueError:
        return None  # not a calendar date ('2024-02-30')
    count = (late - early).days
    span = f"{late.isoformat()} − {early.isoformat()}"
    if tx.language_of(question) == "zh":  # a Chinese name in an English question: English
        return Gap(f"{count} 天：{span}", unit.n, shown, texts)
    return Gap(f"{count} day{'s' if count != 1 else ''}: {span}", unit.n, shown, texts)
