"""Closed-class word lists, one file each, with their origin in README.md."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_HERE = Path(__file__).parent


@cache
def words(name: str) -> frozenset[str]:
    """The words of lexicon `name` (a file NAME.txt here), comments dropped."""
    out: set[str] = set()
    for line in (_HERE / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        out.update(line.split("#", 1)[0].split())
    return frozenset(out)


@cache
def table(name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The rows of lexicon `name` whose first field keys the rest (a type and its words, a
    unit and its size and names), comments dropped and "_" read as a space; rows of one field
    are left out."""
    rows = []
    for line in (_HERE / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) > 1:
            rows.append((fields[0], tuple(f.replace("_", " ") for f in fields[1:])))
    return tuple(rows)
