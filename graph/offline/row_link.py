"""A chain's link read from a table: a step that asks for something of a named thing ('backup
of ⟨X⟩?', '⟨X⟩的备岗？') over a table is answered by the cell under the column the step names,
in the row that holds the thing. One row, one column, one value, and no sentence of the
evidence that says the same of the thing (a change of the table: 'from 18 May X is backup'),
or no link from here: the sentence reader of graph/offline/bridge.py decides then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from graph import text as tx
from graph.offline.bridge import Candidate
from graph.offline.columns import header_match
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.row_compare import given, given_pieces, without
from graph.offline.units import pool_units
from graph.protocols import EvidenceItem, HopView
from ingest import lexicon

_LETTER_RE = re.compile(r"[^\W\d_]")
_PLACEHOLDERS = lexicon.words("placeholders")  # 'TBD', '待定': no one to link through


def _item(hit: Any, n: int) -> EvidenceItem:
    if isinstance(hit, EvidenceItem):
        return hit
    metadata = getattr(hit, "metadata", None) or {}
    return EvidenceItem(
        n=n, chunk_id=getattr(hit, "chunk_id", None), source=getattr(hit, "source", ""),
        title=getattr(hit, "title", ""), section=getattr(hit, "section", ""),
        text=getattr(hit, "text", ""), table_header=str(metadata.get("table_header", "")),
    )  # fmt: skip


def row_link(hop: HopView, hits: Sequence[Any], params: OfflineParams = PARAMS) -> Candidate | None:
    """The value the step asks for, from the one table row that holds what it names; None
    unless exactly one value answers (the column's header holds the step's words as no other
    column's does, and the value names something: not a number, not what the step gives)."""
    asked = tx.normalize_space(tx.PLACEHOLDER_RE.sub(" ", hop.sub_question))
    if not asked:
        return None
    units = pool_units([_item(h, i) for i, h in enumerate(hits, 1)])
    rows = [u for u in units if u.cells]
    prose = [u.text for u in units if not u.cells]
    found: dict[str, int] = {}
    for row in rows:
        anchors = dict(given_pieces(row, asked))
        if not anchors:
            continue
        rest = without(asked, anchors.values())
        scored = sorted(  # of two as near, the longer that holds the other ('副班组长', '班组长')
            ((header_match(rest, h), h, v) for h, v in row.cells if h and v and v not in anchors),
            key=lambda x: (-x[0], -len(x[1])),
        )
        if not scored or scored[0][0] < params.reader_column_sure:
            continue
        if len(scored) > 1 and scored[1][0] >= scored[0][0] and scored[1][1] not in scored[0][1]:
            continue  # two columns as near to what is asked: none is the link
        value, header = scored[0][2].strip(), scored[0][1]
        if any(  # a sentence says it of the thing (a change, an exception): it decides
            header_match(text, header) >= params.reader_column_sure and given(piece, text)
            for text in prose
            for piece in anchors.values()
        ):
            return None
        if value.casefold() in _PLACEHOLDERS:
            return None  # the asked cell is blank in words: the table names no one yet
        if _LETTER_RE.search(value) and not given(value, asked):
            found.setdefault(value, row.rank + 1)
    if len(found) != 1:
        return None
    ((value, rank),) = found.items()
    return Candidate(value, 1.0, {rank}, anchored=True)
