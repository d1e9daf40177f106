"""Numbered classes in the hand reader ('一类', 'Tier 2', 'P1'): what a class is a class of, a
unit about another member than the asked one, and the class the evidence puts a question's
subject in when the question names none ('Tier 2 sites: Hollow Creek').
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from graph.offline.params import PARAMS, OfflineParams
from graph.offline.reader_units import Unit, unit_names, units
from graph.offline.values import class_anchors
from graph.protocols import EvidenceItem


def names_sibling(unit: Unit, anchors: Sequence[str]) -> bool:
    """Whether the unit itself names another member of a class the question names ('K1' or
    '二类' where 'K2' or '一类' is asked): it is about that member."""
    asked = [a for a in anchors if a in class_anchors(a.upper())]  # folded: 'k2' of 'K2'
    held = class_anchors(unit.shown())
    return any(
        c != a and class_kind(c) == class_kind(a) and a not in held for a in asked for c in held
    )


# A grade or priority written as a letter and a digit ('L4', 'P1'): an anchor when the question
# names it, but a row's own grade is often what is asked ('他是什么职级'), never read in.
_SHORT_CLASS_RE = re.compile(r"[a-z]\d")


def class_kind(anchor: str) -> str:
    """What a numbered class is a class of: '一类' -> '类', 'tier 2' -> 'tier', 'p1' -> 'p'."""
    if _SHORT_CLASS_RE.fullmatch(anchor):
        return anchor[0]
    return anchor.split()[0] if " " in anchor else anchor[-1]


def classes_matter(anchor: str, top: Sequence[tuple[float, Unit]]) -> bool:
    """Whether the units that could answer (beside the one giving the subject's class) tell
    classes of the anchor's kind apart: one of them names such a class (a row in its headers).
    Otherwise the subject's class has nothing to decide."""
    kind = class_kind(anchor)
    return any(
        class_kind(c) == kind
        for _, u in top
        for c in class_anchors(f"{u.context} {u.shown()}" if u.cells else u.shown())
    )


def _open_classes(text: str, named: set[str]) -> set[str]:
    """The classes a text names of kinds the question leaves open, letter-and-digit grades
    aside (a row's own grade is often what is asked)."""
    return {
        c
        for c in class_anchors(text)
        if class_kind(c) not in named and not _SHORT_CLASS_RE.fullmatch(c)
    }


def implied_class(
    question: str, items: Sequence[EvidenceItem], params: OfflineParams = PARAMS
) -> tuple[str, Unit] | None:
    """(the class, the unit saying so) for a question that names no numbered class of a kind
    but a subject that one unit of the evidence names with exactly one class of it ('Tier 2
    sites: Hollow Creek'), when other units name another class of that kind: the question is
    about that class's row, column or clause. None when no such unit, or when the question
    names a class of that kind itself ('P1' settles the priority, not the tier)."""
    named = {class_kind(c) for c in class_anchors(question)}  # kinds the question settles
    from graph.offline.spans import question_spans

    read = [replace(u, listed=()) for item in items for u in units(item)]  # a membership may
    # rank low: every passage; a list item by itself ('(1) Tier 1: …' apart from '(2) Tier 2: …')
    subjects = {s.text for s in question_spans(question)}
    subjects |= {n for n in unit_names(read, params) if n in question}
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
        if class_kind(anchor) in named:
            continue  # the question says which one ('Tier 1 sites'): nothing to read in
        if any(c != anchor and class_kind(c) == class_kind(anchor) for c in seen):
            return anchor, via
    return None
