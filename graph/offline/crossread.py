"""Reading a passage in the other language than the question's, by meaning.

The reader weighs a unit by the question's words it covers; a Chinese question about an
English table row (or the reverse) shares none of them but its codes and numbers, so the row
cannot win and the answer says the documents do not say it, with the row in the evidence.
The built-in embedder is multilingual: it places a question near a sentence of the same
meaning in either language. When nothing in the question's language answers, the unit in the
other language nearest the question in meaning is quoted verbatim, never stated (no span of it
is claimed to be the answer). Only when it clearly stands out among the other language's
units, holds every code the question names, and, for 'when' and 'how much', holds a value of
that kind the question does not give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline import reader_checks as rc
from graph.offline import reader_units as ru
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.values import spans_of
from graph.protocols import EvidenceItem, Similarity

_NUMBER_RE = re.compile(r"\d[\d,.:/-]*\d|\d")


def _gives_new(kind: str, text: str, question: str) -> bool:
    """The text holds a value of the kind whose figures the question does not give ('80
    files' is given by '80 个文件')."""
    given = set(_NUMBER_RE.findall(question))
    return any(
        not set(_NUMBER_RE.findall(span)) <= given or not _NUMBER_RE.search(span)
        for span in spans_of(kind, text)
    )


def candidates(
    question: str, items: Sequence[EvidenceItem], kind: str, params: OfflineParams = PARAMS
) -> list[ru.Unit]:
    """The other language's units of the first passages that could answer: holding every
    code the question names, a new value of the asked kind, and not only repeating it."""
    same = tx.language_of(question)
    anchors = rc.anchors_of(question)
    out: list[ru.Unit] = []
    seen: set[str] = set()
    for item in items[: params.reader_passages]:
        for unit in ru.units(item):
            shown = unit.shown()
            if shown in seen or tx.language_of(shown) == same or not tx.term_set(shown):
                continue
            seen.add(shown)
            if anchors and not rc.holds_anchors(unit, anchors):
                continue
            if rc.echoes(unit, question):
                continue
            if kind in ("date", "number") and not _gives_new(kind, shown, question):
                continue
            out.append(unit)
    return out


def bridging(question: str) -> set[str]:
    """What reads the same in either language: the question's codes and numbers, and its
    words in the other script (Latin words of a Chinese question, Chinese of an English one)."""
    zh = tx.language_of(question) == "zh"
    out = set()
    for token in tx.words(question):
        if tx.is_stopword(token) or len(token) < 2:
            continue
        if any(ch.isdigit() for ch in token) or (tx.has_cjk(token) != zh):
            out.add(tx.fold(token).casefold())
    out |= {tx.fold(c).casefold() for c in rc.anchors_of(question)}
    return out


def _bridged(unit: ru.Unit, tokens: set[str]) -> bool:
    place = tx.fold(f"{unit.context} {unit.shown()}").casefold()
    return any(t in place for t in tokens)


def read_across(
    question: str,
    items: Sequence[EvidenceItem],
    kind: str,
    similarity: Similarity | None,
    params: OfflineParams = PARAMS,
) -> ru.Unit | None:
    """The other language's unit nearest the question in meaning, for a question asking a
    date or an amount, when that unit stands out among the other language's candidates by
    `cross_read_margin` and shares a language-free token with the question; else None."""
    if similarity is None or kind not in ("date", "number"):
        return None
    tokens = bridging(question)
    found = [u for u in candidates(question, items, kind, params) if _bridged(u, tokens)]
    if not found:
        return None
    try:
        sims = similarity(question, [f"{u.context} {u.shown()}".strip() for u in found])
    except Exception:  # noqa: BLE001 - without meaning there is nothing to read across by
        return None
    if len(sims) != len(found):
        return None
    ranked = sorted(zip(sims, range(len(found)), found, strict=True), key=lambda x: (-x[0], x[1]))
    best, _, unit = ranked[0]
    if len(ranked) > 1 and best - ranked[1][0] < params.cross_read_margin:
        return None
    return unit
