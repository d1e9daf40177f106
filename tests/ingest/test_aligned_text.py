"""Tables typed in plain text: columns set apart by pipes, tabs or runs of spaces become table
rows; columns that do not line up stay lines, marked as a table read as text (issue 47)."""

from __future__ import annotations

from ingest.chunker import chunk_document
from ingest.parse.aligned import split_aligned
from ingest.parse.text import parse_txt

# a table typed as text whose columns do not line up: read as lines, and flagged
SHIFTS = """Weekend shifts

Desk  Lead  Start
Front counter  Tamsin Vale  07:00
Loading bay north  Ivo Brask  by the  06:30 bell
Night office   Wren Adley 22:00
"""


def test_columns_set_apart_by_spaces_are_table_rows() -> None:
    text = "Stock\n\nPart      Bin     Supplier\nHinge kit B-14    Orrin Tools\n"
    aligned = "Part        Bin     Supplier\nHinge kit   B-14    Orrin Tools\nFan blade   D-31\nDrive belt  A-07    Quill Motion\n"
    doc = parse_txt(f"{text}\n{aligned}".encode(), "stock.txt")
    rows = [b.text for b in doc.blocks if b.kind == "table"]
    assert rows == [
        "Part | Bin | Supplier",
        "Hinge kit | B-14 | Orrin Tools",
        "Fan blade | D-31",  # an empty last cell, lined up under its column
        "Drive belt | A-07 | Quill Motion",
    ]


def test_pipe_rows_of_a_log_are_table_rows_and_prose_stays_prose() -> None:
    log = "\n".join(f"2031-01-0{d} 10:00 | W-{d} | parcel {d} | done |" for d in range(1, 5))
    prose = ("We ship daily.  Orders before noon  go out the same day.\n"
             "Returns take a week.  Call us first.\n")  # fmt: skip
    kinds = [k for k, _ in split_aligned(f"{prose}\n{log}")]
    assert kinds == ["text", "table"]
    doc = parse_txt(f"{prose}\n\n{log}\n".encode(), "log.txt")
    assert [b.kind for b in doc.blocks] == ["text"] + ["table"] * 4
    assert doc.blocks[1].text == "2031-01-01 10:00 | W-1 | parcel 1 | done"


def test_columns_that_do_not_line_up_stay_lines_marked_as_a_table_read_as_text() -> None:
    doc = parse_txt(SHIFTS.encode(), "shifts.txt")
    kinds = [b.kind for b in doc.blocks]
    assert "table" not in kinds and "text_table" in kinds
    block = next(b for b in doc.blocks if b.kind == "text_table")
    assert block.text.splitlines()[1] == "Front counter Tamsin Vale 07:00"  # one row a line


def test_a_chunk_of_a_table_read_as_text_says_so_with_the_tables_first_line() -> None:
    doc = parse_txt(SHIFTS.encode(), "shifts.txt")
    [chunk] = chunk_document(doc, doc_id="d", doc_version=1, groups=["all"], checksum="c")
    assert chunk.metadata["table_as_text"] == "Desk Lead Start"


def test_two_tables_and_the_prose_between_them_keep_their_order() -> None:
    text = "Bay  Crane  Load\nB1  Otter  12 t\nB2  Heron  30 t\nLoads are weighed.\nx | y | z\n1 | 2 | 3\n4 | 5 | 6"
    assert [k for k, _ in split_aligned(text)] == ["table", "text", "table"]
