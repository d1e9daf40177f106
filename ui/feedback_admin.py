"""The Admin page's feedback list: every reader's thumbs and comments, filtered, as CSV.

The admin page is gated (require_admin) before this is drawn. The filters and the CSV are pure
functions, so they are tested without Streamlit.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime
from typing import Any

import pandas as pd
import streamlit as st

from ui.files import Download, Reader, download_link
from ui.services import current_user, error_text, get_runner, password_unlocked

RATINGS = {"Any rating": None, "Up": 1, "Down": 0}  # words: emoji fonts are not everywhere
CSV_COLUMNS = (
    "created_at", "owner", "rating", "question", "answer", "comment", "thread_id",
    "answer_index", "trace",
)  # fmt: skip
TABLE_COLUMNS = ("when", "user", "rating", "question", "answer", "comment", "chat", "answer #")
CSV_NAME = "hopwise-feedback.csv"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def day_of(entry: dict[str, Any]) -> date:
    return datetime.fromtimestamp(float(entry["created_at"]), UTC).date()


def filter_feedback(
    entries: Iterable[dict[str, Any]],
    *,
    rating: int | None = None,
    user: str = "",
    text: str = "",
    days: Sequence[date] = (),
) -> list[dict[str, Any]]:
    """The entries with this rating, by this user, containing `text` (question, answer or
    comment, any case), given on a day within `days` (first, last)."""
    needle = text.strip().casefold()
    kept = []
    for entry in entries:
        if rating is not None and entry["rating"] != rating:
            continue
        if user and entry["owner"] != user:
            continue
        haystack = f"{entry['question']}\n{entry['answer']}\n{entry['comment']}".casefold()
        if needle and needle not in haystack:
            continue
        if days and not days[0] <= day_of(entry) <= days[-1]:
            continue
        kept.append(entry)
    return kept


def _cell(value: Any) -> str:
    """A CSV cell a spreadsheet shows as text: a leading =, +, -, @ (after any blanks, which
    spreadsheets skip) or a control character would start a formula."""
    text = "" if value is None else str(value)
    stripped = text.lstrip(" \u00a0")
    return (
        "'" + text
        if text.startswith(_FORMULA_START) or stripped.startswith(_FORMULA_START)
        else text
    )


def feedback_csv(entries: Iterable[dict[str, Any]]) -> str:
    """The entries as CSV, time in ISO UTC, rating as up/down, the trace JSON included."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for entry in entries:
        row = {
            **entry,
            "created_at": datetime.fromtimestamp(float(entry["created_at"]), UTC).isoformat(),
            "rating": "up" if entry["rating"] == 1 else "down",
        }
        writer.writerow([_cell(row[c]) for c in CSV_COLUMNS])
    return out.getvalue()


def feedback_table(entries: Iterable[dict[str, Any]]) -> pd.DataFrame:
    rows = [
        {
            "when": datetime.fromtimestamp(float(e["created_at"]), UTC).strftime("%Y-%m-%d %H:%M"),
            "user": e["owner"],
            "rating": "up" if e["rating"] == 1 else "down",
            "question": e["question"],
            "answer": e["answer"],
            "comment": e["comment"],
            "chat": e["thread_id"],
            "answer #": int(e["answer_index"]) + 1,
        }
        for e in entries
    ]
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def feedback_section() -> None:
    """Filters (rating, user, days, text), the table and Export CSV."""
    try:
        entries = get_runner().all_feedback()
    except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
        st.error(f"Could not read the feedback: {error_text(exc)}")
        return
    if not entries:
        st.caption("No feedback yet.")
        return
    users = sorted({str(e["owner"]) for e in entries})
    first, last = min(map(day_of, entries)), max(map(day_of, entries))
    with st.container(horizontal=True, vertical_alignment="bottom"):
        rating = st.selectbox("Rating", list(RATINGS), key="feedback_rating")
        user = st.selectbox("User", ["Everyone", *users], key="feedback_user")
        days = st.date_input(
            "Days", value=(first, last), min_value=first, max_value=last, key="feedback_days"
        )
    text = st.text_input("Search questions, answers and comments", key="feedback_text")
    select = functools.partial(
        filter_feedback,
        rating=RATINGS[rating],
        user="" if user == "Everyone" else user,
        text=text,
        days=tuple(days) if isinstance(days, tuple | list) else (days,),
    )
    shown = select(entries)
    st.caption(f"{len(shown)} of {len(entries)} feedback entries")
    st.dataframe(feedback_table(shown), hide_index=True, width="stretch")
    reader = current_user()
    if reader is not None:
        download_link(
            "Export CSV",
            functools.partial(feedback_download, select),
            user=reader,
            file_name=CSV_NAME,
            key=repr((select.keywords, len(entries))),
            admin_unlocked=password_unlocked(reader),
        )


def feedback_download(
    select: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], reader: Reader
) -> Download | None:
    """The filtered feedback as CSV, read when the link is fetched, for an admin only."""
    if not reader.admin:
        return None
    shown = select(get_runner().all_feedback())
    return Download(feedback_csv(shown).encode("utf-8"), CSV_NAME, "text/csv")
