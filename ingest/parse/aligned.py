"""Tables typed as text: lines whose columns are set apart by pipes, tabs or runs of spaces.

A run of at least `ALIGNED_LINES` lines, the first splitting into `MIN_COLUMNS` or more cells
and the rest into two or more, is a table (its first line the header) when every line has as
many cells, or when the cells line up under the first line's columns, an empty cell and all. A run that looks like a table but whose
columns cannot be told apart stays text, line by line, marked as a table read as text (the
reading check tells the admin where).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

ALIGNED_LINES = 3  # lines in a run before it is a table
MIN_COLUMNS = 3  # cells per line (two columns are a label and its value, not yet a table)
_GAP_RE = re.compile(r"\t+| {2,}")
_CELL_RE = re.compile(r"[^\t ]+(?: [^\t ]+)*")  # words one space apart: one cell


def cells_of(line: str) -> list[str]:
    """A line's cells: between pipes when it has them ('a | b | c'), else between gaps."""
    text = line.strip()
    if text.count("|") >= MIN_COLUMNS - 1:
        if text.startswith("|"):  # '| a | b |': the outer pipes are the table's edges
            text = text[1:].removesuffix("|")
        return [c.strip() for c in text.split("|")]  # 'a | b |': an empty last cell
    return [c for c in _GAP_RE.split(line.strip()) if c]


def _starts(line: str) -> list[int]:
    return [m.start() for m in _CELL_RE.finditer(line)]


def _by_columns(lines: list[str]) -> list[list[str]] | None:
    """Each line cut where the first line's cells start, when no cut splits a word and every
    cell starts at a column; None otherwise."""
    if any("\t" in ln or "|" in ln for ln in lines):
        return None
    starts = _starts(lines[0])
    rows = []
    for line in lines:
        if any(s < len(line) and s > 0 and line[s - 1] != " " for s in starts):
            return None  # a cut inside a word
        if any(s not in starts for s in _starts(line)):
            return None  # a cell that starts between columns
        bounds = [*starts, max(len(line), starts[-1] + 1)]
        rows.append([line[a:b].strip() for a, b in zip(bounds, bounds[1:], strict=False)])
    return rows


def table_end(widths: Sequence[int], start: int) -> int:
    """Where a table that starts at line `start` ends, from each line's number of cells: its
    first line has MIN_COLUMNS or more, the rest two or more (a row may leave cells empty once
    the table has begun). Fewer than ALIGNED_LINES lines from `start`: no table there."""
    end = start
    while end < len(widths) and widths[end] >= (MIN_COLUMNS if end == start else 2):
        end += 1
    return end


def split_aligned(text: str) -> Iterator[tuple[str, str | list[list[str]]]]:
    """The text in runs: ('text', lines), ('table', rows) and ('text_table', lines)."""
    lines = text.split("\n")
    widths = [len(cells_of(line)) for line in lines]
    plain: list[str] = []
    k = 0
    while k < len(lines):
        end = table_end(widths, k)
        if end - k < ALIGNED_LINES:
            plain.append(lines[k])
            k += 1
            continue
        if plain:
            yield "text", "\n".join(plain)
            plain = []
        run = [ln.rstrip() for ln in lines[k:end]]
        rows = [cells_of(ln) for ln in run] if len(set(widths[k:end])) == 1 else _by_columns(run)
        if rows is not None:
            yield "table", rows
        else:
            yield "text_table", "\n".join(run)
        k = end
    if plain:
        yield "text", "\n".join(plain)
