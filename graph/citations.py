"""The answer's [n] markers: which evidence they name, renumbered in order of first use."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from graph.claims import CITATION_RE
from graph.protocols import EvidenceItem
from graph.state import Citation


def cited_numbers(answer: str, known: Collection[int]) -> list[int]:
    """The `known` numbers the answer's [n] / [n, m] markers use, in order of first use."""
    used: list[int] = []
    for match in CITATION_RE.finditer(answer):
        for n in re.split(r"\s*[,，、]\s*", match.group(1)):
            if int(n) in known and int(n) not in used:
                used.append(int(n))
    return used


def find_citations(answer: str, items: Sequence[EvidenceItem]) -> list[Citation]:
    """The [n] markers the answer actually uses, resolved to their chunk or URL."""
    by_n = {item.n: item for item in items}
    return [citation(by_n[n]) for n in sorted(cited_numbers(answer, by_n))]


def renumber_citations(
    answer: str, items: Sequence[EvidenceItem]
) -> tuple[str, list[EvidenceItem], list[Citation]]:
    """Number the sources 1, 2, 3... in the order the answer first uses them, so the answer, the
    source cards and the trace agree and have no gaps; the unused evidence is numbered after
    them. The items keep their ranked order (recall is measured on it); markers that name no
    evidence item stay as written. (answer, items, citations)."""
    order = cited_numbers(answer, {item.n for item in items})
    order += [item.n for item in items if item.n not in order]
    new_n = {old: new for new, old in enumerate(order, start=1)}

    def marker(match: re.Match[str]) -> str:
        parts = re.split(r"(\s*[,，、]\s*)", match.group(1))
        return "[" + "".join(str(new_n.get(int(p), p)) if p.isdigit() else p for p in parts) + "]"

    text = CITATION_RE.sub(marker, answer)
    # The evidence keeps its ranked order (what recall is measured on); only numbers change.
    renumbered = [item.model_copy(update={"n": new_n[item.n]}) for item in items]
    return text, renumbered, find_citations(text, renumbered)


def citation(item: EvidenceItem) -> Citation:
    quote = " ".join(item.sentences) if item.sentences else item.text[:400]
    return {
        "n": item.n,
        "chunk_id": item.chunk_id,
        "url": item.url,
        "source": item.source,
        "title": item.title,
        "section": item.section,
        "page": item.page,
        "quote": quote,
    }
