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
