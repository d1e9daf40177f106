"""Answers computed from stated values, not read: a choice or a yes/no settled by comparing
what the passages say of each item, one value minus another, a sum or a count over a table's
rows, the days between two dates, and what two things have in common. Each is stated only
with every value it used shown as evidence; none of them guesses (each returns None unless
its own conditions hold).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graph.offline import intervals as iv
from graph.offline import shared as sh
from graph.offline import totals as tt
from graph.offline.answer import short_answer
from graph.offline.kinds import answer_type
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.row_compare import compare_named_rows
from graph.protocols import EvidenceItem, HopView, Similarity


@dataclass
class Computed:
    text: str  # the answer line without its lead
    cites: list[int]  # its citations
    shown: list[tuple[int, str]]  # (citation, line) of every value it used
    how: str  # which computation: rows | choice | yes_no | difference | common | total | gap


def compute(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView] = (),
    params: OfflineParams = PARAMS,
    similarity: Similarity | None = None,
) -> Computed | None:
    """The computed answer, or None when no computation applies."""
    steps = [h for h in hops if not h.follow_up]
    rows = compare_named_rows(question, evidence, similarity, params)
    if rows is not None:  # named rows of one table compared on the asked column
        return Computed(rows.text, rows.cites, rows.shown, "rows")
    kind = answer_type(question)
    if kind in ("choice", "yes_no"):
        decided = short_answer(question, evidence, steps, params, similarity)
        if decided is not None and decided.n is not None:
            return Computed(decided.text, [decided.n], list(decided.shown), kind)
        return None
    diff = tt.difference(question, evidence)
    if diff is not None:
        return Computed(diff.answer, [diff.n], [(r.n, r.shown) for r in diff.rows], "difference")
    common = sh.shared_trait(question, evidence)
    if common is not None:
        cites = list(dict.fromkeys(n for n, _ in common.cited))
        return Computed(common.text, cites, list(common.cited), "common")
    summed = tt.total(question, evidence) or tt.linked_total(question, evidence)
    if summed is not None:
        return Computed(summed.answer, [summed.n], [(r.n, r.shown) for r in summed.rows], "total")
    between = iv.gap(question, evidence, params)
    if between is not None:
        return Computed(between.answer, [between.n], [(between.n, between.shown)], "gap")
    return None
