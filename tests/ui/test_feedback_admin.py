"""The admin feedback list's filters and CSV, as plain functions."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime

from ui.feedback_admin import feedback_csv, feedback_table, filter_feedback


def entry(owner: str, rating: int, day: int, comment: str = "") -> dict[str, object]:
    return {
        "thread_id": f"t-{owner}-{day}", "answer_index": 0, "owner": owner, "rating": rating,
        "comment": comment, "question": f"Question of day {day}", "answer": "An answer [1].",
        "trace": '{"trace": []}',
        "created_at": datetime(2025, 5, day, 12, tzinfo=UTC).timestamp(),
    }  # fmt: skip


ENTRIES = [entry("uma", 1, 3), entry("ivo", 0, 5, "Missing the DATE"), entry("uma", 0, 9)]


def test_filters_combine() -> None:
    assert [e["thread_id"] for e in filter_feedback(ENTRIES, rating=0)] == ["t-ivo-5", "t-uma-9"]
    assert [e["thread_id"] for e in filter_feedback(ENTRIES, user="uma")] == ["t-uma-3", "t-uma-9"]
    assert [e["thread_id"] for e in filter_feedback(ENTRIES, text="missing the date")] == [
        "t-ivo-5"
    ]
    assert [e["thread_id"] for e in filter_feedback(ENTRIES, text="day 9")] == ["t-uma-9"]
    week = (date(2025, 5, 4), date(2025, 5, 9))
    assert [e["thread_id"] for e in filter_feedback(ENTRIES, days=week)] == ["t-ivo-5", "t-uma-9"]
    assert filter_feedback(ENTRIES, rating=1, user="ivo") == []
    assert filter_feedback(ENTRIES) == ENTRIES


def test_csv_has_every_column_and_no_formulas() -> None:
    hostile = entry("@mallory", 0, 7, "+SUM(A1)")
    rows = list(csv.DictReader(io.StringIO(feedback_csv([*ENTRIES, hostile]))))
    assert [r["rating"] for r in rows] == ["up", "down", "down", "down"]
    assert (
        rows[0]["created_at"] == "2025-05-03T12:00:00+00:00" and rows[0]["trace"] == '{"trace": []}'
    )
    assert rows[3]["owner"] == "'@mallory" and rows[3]["comment"] == "'+SUM(A1)"
    assert list(feedback_table([]).columns)[:3] == ["when", "user", "rating"]
    padded = [entry("ivo", 1, 3, c) for c in ("  =HYPERLINK(1)", "\n=1+1", "\u00a0-2", "a=b")]
    comments = [r["comment"] for r in csv.DictReader(io.StringIO(feedback_csv(padded)))]
    assert comments == ["'  =HYPERLINK(1)", "'\n=1+1", "'\u00a0-2", "a=b"]
