"""A value is bound to its subject: a number, date or code a claim states must sit in the same
unit as the name it is said of (the sentence, the record, the table row) and, in a row, in
the same column group as that name ('Backup' → 'Backup phone', not 'Primary phone'). A value
that is in the source but bound to another name supports nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from graph import text as tx
from graph.offline.asked import anchors_of
from graph.offline.units import Unit, units
from graph.offline.values import codes_in
from graph.protocols import EvidenceItem
from ingest.phrases import text_phrases


def _folded(text: str) -> str:
    return tx.fold(text).casefold().replace(",", "")


def _group(header: str) -> set[str]:
    """A column header's words ('Backup phone' -> {'backup', 'phone'})."""
    return set(tx.content_words(header.casefold()))


def _row_binds(unit: Unit, value: str, name: str) -> bool:
    """In a row: the name is the row's key, or its cell's header shares a word with the
    value's cell's header (its column group)."""
    name_cells = [i for i, (_, v) in enumerate(unit.cells) if name in _folded(v)]
    value_cells = [i for i, (_, v) in enumerate(unit.cells) if value in _folded(v)]
    if not name_cells or not value_cells:
        return name in _folded(unit.context) and bool(value_cells)  # named by the table's title
    if 0 in name_cells:
        return True
    return any(
        i == j or _group(unit.cells[i][0]) & _group(unit.cells[j][0])
        for i in name_cells
        for j in value_cells
    )


def bound(value: str, names: Sequence[str], found: Sequence[Unit]) -> bool:
    """Whether some unit holds the value together with one of the names, bound to it."""
    value = _folded(value)
    folded = [_folded(n) for n in names if n.strip()]
    for unit in found:
        text = _folded(unit.shown())
        if value not in text:
            continue
        for name in folded:
            if unit.cells:
                if _row_binds(unit, value, name):
                    return True
            elif name in text or name in _folded(unit.context):
                return True
    return False


_LINK_MIN = 3


def _values(unit: Unit) -> set[str]:
    """What a unit names that another may name too: its cells, names and codes."""
    found = [v for _, v in unit.cells] if unit.cells else text_phrases(unit.text)
    found += codes_in(unit.shown())
    return {_folded(v.strip()) for v in found if len(v.strip()) >= _LINK_MIN}


def linked(value: str, names: Sequence[str], found: Sequence[Unit]) -> bool:
    """Whether a unit holding the value names something a unit holding one of the names
    names too: the value is said of what the named thing leads to (a chain's last step)."""
    value = _folded(value)
    folded = [_folded(n) for n in names if n.strip()]
    holding = [u for u in found if value in _folded(u.shown())]
    naming = [u for u in found if any(n in _folded(f"{u.shown()} {u.context}") for n in folded)]
    return any(
        (_values(u) & _values(w)) - {value}
        for u in holding
        for w in naming
        if w.shown() != u.shown()  # another unit: one unit binds by itself or not at all
    )


def unbound_values(
    values: Sequence[str],
    claim: str,
    question: str,
    cited: Sequence[EvidenceItem],
    evidence: Sequence[EvidenceItem] = (),
) -> list[str]:
    """The values a claim states that no cited unit binds to the names the claim (or, when it
    names none, the question) says them of, directly or through a unit of the evidence they
    both name; [] when there is no name to bind to."""
    names = anchors_of(claim) or anchors_of(question)
    names = [n for n in names if not any(_folded(n) == _folded(v) for v in values)]
    if not names or not values:
        return []
    found = [u for item in cited for u in units(item)]
    everything = found + [u for item in evidence if item not in cited for u in units(item)]
    return [v for v in values if not bound(v, names, found) and not linked(v, names, everything)]
