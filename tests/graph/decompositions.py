"""How a test reads a decomposition: its shape (each step's dependency) or its questions."""

from __future__ import annotations

from graph.offline import decompose_question


def shape_of(question: str, table: dict[str, int] | None = None) -> list[int | None]:
    """The structure of a decomposition: each sub-question's dependency."""
    lookup = (lambda keys: {k: table[k] for k in keys if k in table}) if table else None
    return [s.depends_on for s in decompose_question(question, lookup)]


def subs_of(question: str, table: dict[str, int] | None = None) -> list[str]:
    lookup = (lambda keys: {k: table[k] for k in keys if k in table}) if table else None
    return [s.question for s in decompose_question(question, lookup)]
