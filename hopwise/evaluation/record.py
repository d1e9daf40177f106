"""What the answer step was given, per question: the reader's inputs, kept so the reader's
weights can be fitted and judged without asking every question again (hopwise fit-reader).

`Recording` wraps a reasoner: every method is the wrapped one's; `answer` also keeps its
arguments (the standalone question, the numbered evidence, what was missing, the hops).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from graph.protocols import EvidenceItem, HopView, Reasoner, Usage

FORMAT = "reader-inputs-1"


class Recording:
    """A reasoner that keeps the answer step's inputs of the question being asked."""

    def __init__(self, inner: Reasoner) -> None:
        self.inner = inner
        self.name = inner.name
        self.last: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str | Usage]:
        self.last = {
            "question": question,
            "evidence": [e.model_dump(mode="json") for e in evidence],
            "missing": list(missing),
            "hops": [h.model_dump(mode="json") for h in hops],
        }
        yield from self.inner.answer(question, evidence, missing, hops)

    def take(self) -> dict[str, Any] | None:
        """The inputs of the last answer step, once (None when no answer step ran)."""
        last, self.last = self.last, None
        return last


def load_inputs(path: Path) -> dict[str, dict[str, Any]]:
    """Recorded inputs by question id ({} when the file is absent)."""
    if not path.is_file():
        return {}
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {r["id"]: r for r in rows if r.get("format") == FORMAT}


def as_inputs(row: dict[str, Any]) -> tuple[str, list[EvidenceItem], list[str], list[HopView]]:
    """A recorded row as the answer step's arguments."""
    return (
        row["question"],
        [EvidenceItem.model_validate(e) for e in row["evidence"]],
        list(row["missing"]),
        [HopView.model_validate(h) for h in row["hops"]],
    )
