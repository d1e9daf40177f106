"""Checks on a model's structured output against the question it answers: a decomposition
must be about the question and keep its codes, numbers and names; a bridge query must keep
the sub-question's anchors.
"""

from __future__ import annotations

import re

from graph import text as tx
from graph.schemas import (
    Decomposition,
)
from ingest.lang import CODE_RE


def check_decomposition(result: Decomposition, question: str = "") -> Decomposition | None:
    """1-8 non-empty sub-questions, each once, ids renumbered 1..n, dependencies only on earlier
    ones; None when one of them is about none of the question's terms and leans on no earlier
    step (a small model's '3' or a question of its own is no decomposition of this one)."""
    seen: set[str] = set()
    unique = []
    for sub in result.sub_questions:
        key = " ".join(sub.question.casefold().split())
        if key not in seen:
            seen.add(key)
            unique.append(sub)
    subs = tx.renumber_sub_questions(unique)
    asked = tx.term_set(question)
    for sub in subs:
        if (
            asked
            and not tx.term_set(sub.question) & asked
            and not tx.PLACEHOLDER_RE.search(sub.question)
        ):
            return None
    said = " ".join(f"{s.question} {s.search_query or ''}" for s in subs).casefold()
    if any(anchor.casefold() not in said for anchor in anchors_of(question)):
        return None  # a code, number or name the question gives was lost on the way
    return Decomposition(sub_questions=subs) if subs else None


def filled_in(sub_question: str, entity: str) -> str:
    """The sub-question with its placeholder written as the entity (or the entity after it)."""
    if not entity:
        return sub_question
    if tx.PLACEHOLDER_RE.search(sub_question):
        return tx.PLACEHOLDER_RE.sub(lambda _: entity, sub_question)
    return f"{sub_question} {entity}"


ANCHOR_NUMBER_RE = re.compile(r"(?<![\w.-])\d+(?:[.,]\d+)*(?![\w-])")


ANCHOR_NAME_RE = re.compile(r"(?<=[a-z,] )[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*")


def anchors_of(question: str) -> list[str]:
    """What a decomposition must keep of the question: its codes, numbers and the names inside
    it (capitalised words after its first)."""
    codes = CODE_RE.findall(question)
    rest = CODE_RE.sub(" ", question)
    return [*codes, *ANCHOR_NUMBER_RE.findall(rest), *ANCHOR_NAME_RE.findall(rest)]
