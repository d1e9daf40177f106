"""Column groups of a table row: a name column and the columns that belong to it ('Backup',
'Backup phone'; '班组长', '班组长手机'). A value is bound to its group: when the question names
one group of a row and not another, the quoted row leaves the other group out, so a follow-up
about the backup never shows the primary's number beside the backup's (issue 44, item 6).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx

Cells = tuple[tuple[str, str], ...]


def column_groups(headers: Sequence[str]) -> dict[str, list[str]]:
    """Each header that heads a group -> its members, itself first: a header is a member of
    another's group when it starts with it ('Backup phone' of 'Backup', '班组长手机' of
    '班组长'); only heads with a member, and none of them a head itself, form a group."""
    groups: dict[str, list[str]] = {}
    for head in headers:
        if not head:
            continue
        members = [
            h
            for h in headers
            if h != head and h.casefold().startswith(head.casefold()) and _continues(head, h)
        ]
        if members:
            groups[head] = [head, *members]
    # '班组' before '班组长' and '班组长手机' is a family's prefix, not a group of its own
    return {h: m for h, m in groups.items() if not any(x in groups for x in m[1:])}


def _continues(head: str, header: str) -> bool:
    """'Backup' heads 'Backup phone' (a word follows), not 'Backups'; '班组长' heads '班组长手机'."""
    rest = header[len(head) :]
    return bool(rest) and (tx.has_cjk(rest[:1]) or not rest[:1].isalnum())


def named_heads(question: str, heads: Sequence[str]) -> set[str]:
    """The heads the question names, a longer head's occurrence not counting for a shorter one
    inside it ('副班组长' is not '班组长')."""
    q = question.casefold()
    spans: dict[str, list[tuple[int, int]]] = {}
    for head in heads:
        h = head.casefold()
        pattern = re.escape(h) if tx.has_cjk(h) else rf"(?<!\w){re.escape(h)}(?!\w)"
        spans[head] = [(m.start(), m.end()) for m in re.finditer(pattern, q)]
    named = set()
    for head, found in spans.items():
        inside = [
            (s, e) for other, others in spans.items() if len(other) > len(head) for s, e in others
        ]
        if any(not any(s2 <= s and e <= e2 for s2, e2 in inside) for s, e in found):
            named.add(head)
    return named


def bound_cells(question: str, cells: Cells) -> Cells:
    """The row's cells without the groups the question does not name, when it names one: a
    cell whose value the question gives (the row's anchor) and the cells of no group stay."""
    groups = column_groups([h for h, _ in cells])
    named = named_heads(question, list(groups))
    if not named or named == set(groups):
        return cells
    dropped = {m for head, members in groups.items() if head not in named for m in members}
    dropped -= {m for head in named for m in groups[head]}
    kept = tuple((h, v) for h, v in cells if h not in dropped or _given(v, question))
    return kept if len(kept) < len(cells) else cells


def _given(value: str, question: str) -> bool:
    """The question gives this value as a whole ('Ida Brandt'), not as a piece of a word or a
    number ('2' of 'line 2')."""
    if len(value.strip()) < 2:
        return False
    v = re.escape(value.strip().casefold())
    pattern = v if tx.has_cjk(value) else rf"(?<![\w.-]){v}(?![\w.-])"
    return re.search(pattern, question.casefold()) is not None
