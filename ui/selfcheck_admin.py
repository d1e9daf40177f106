"""The Admin page's reading check: how reliably Hopwise reads each document (questions its own
tables and records answer, asked back offline; hopwise/selfcheck) and the stated-answer
threshold chosen on the results.

The admin page is gated (require_admin) before this is drawn. Every document-derived string
(file names, questions, values, first lines) is untrusted: sentences go through `ui.safe`,
question-by-question rows through dataframes (cells are drawn as plain text). The sentences are
pure functions, tested without Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from ui import safe
from ui.documents import count_text
from ui.services import error_text, get_runner, get_settings

if TYPE_CHECKING:
    from hopwise.selfcheck.calibration import Calibration
    from hopwise.selfcheck.check import DocumentCheck, Outcome
    from ingest.models import DocumentInfo

FLASH_KEY = "hopwise_selfcheck_flash"  # what the last "Check all documents again" did
STATED = "Stated answers (“Answer: …”)"
WHAT_HAPPENED = {
    "short": "stated another value",
    "quote": "quoted a passage without the value",
    "not_found": "said the documents do not say",
    "other": "answered without the value",
}
MISREADING_COLUMNS = ("question", "expected", "first line shown", "what happened")
GOOD, FAIR = 0.9, 0.7  # a score's colour: green from GOOD, orange from FAIR, red below
TEXT_TABLE_FIX = (
    "Its rows are searched as lines, not by column. To have it read as a table, line its "
    "columns up, or separate them with tabs or pipes (|), or save it as a table in Markdown, "
    "DOCX or HTML, and upload it again."
)
FOLLOW_S = 3.0  # while documents wait for their check: how often the page looks again


def percent(share: float) -> str:
    return f"{share * 100:.0f} %"


def score_sentence(check: DocumentCheck) -> str:
    """'10 of 12 self-test questions answered right on the first line (83 %)', or why there
    is no score."""
    if check.generated == 0:
        if check.as_text:
            return "Nothing to ask about: the table below was read as text"
        return "No tables, records or labelled values to ask about"
    if check.score is None:
        return "The time budget ran out before the first self-test question was asked"
    return (
        f"{check.right} of {count_text(check.asked, 'self-test question')} answered right on "
        f"the first line ({percent(check.score)})"
    )


def details_sentence(check: DocumentCheck) -> str:
    """Stated answers, abstentions and the structure found, in one line."""
    found = (
        f"found {count_text(check.tables, 'table')} ({count_text(check.table_rows, 'row')}), "
        f"{count_text(check.records, 'record')}"
    )
    if not check.asked:
        return found
    stated = f"{count_text(check.stated, 'stated answer')}, {check.stated_right} right"
    crossed = [o for o in check.outcomes if o.cross]
    other = (f" · asked in the other language (its names and columns as written): "
             f"{sum(o.right for o in crossed)} of {len(crossed)} right" if crossed else "")  # fmt: skip
    return f"{stated} · {count_text(check.abstained, 'abstention')}{other} · {found}"


def budget_note(check: DocumentCheck, budget_s: float) -> str:
    return (
        f"The time budget ({budget_s:g} s) stopped the check after {check.asked} of "
        f"{count_text(check.generated, 'question')}: the score is of those asked."
    )


def checked_when(check: DocumentCheck) -> str:
    when = datetime.fromtimestamp(check.checked_at, UTC).strftime("%-d %b %Y, %H:%M UTC")
    return f"Checked {when} in {check.seconds:.1f} s"


def badge(score: float | None) -> str:
    """The score as a coloured badge (our own Markdown, no document text in it)."""
    if score is None:
        return ""
    colour = "green" if score >= GOOD else "orange" if score >= FAIR else "red"
    return f":{colour}-badge[{percent(score)}]"


def threshold_text(value: float) -> str:
    return "never stated" if value > 1 else f"threshold {value:.2f}"


def calibration_sentence(calibration: Calibration | None) -> str:
    """The threshold in use against the fitted one, and why (literal Markdown)."""
    if calibration is None:
        return f"{STATED}: the fitted threshold is in use; the reading checks could not be read."
    used, fitted = threshold_text(calibration.threshold), f"{calibration.shipped:.2f}"
    if not calibration.moved:
        head = f"{used} (as fitted)"
    elif used == f"threshold {fitted}":  # moved by less than two decimals can show
        head = f"threshold {calibration.threshold:.3f} (fitted {calibration.shipped:.3f})"
    else:
        head = f"{used} (fitted {fitted})"
    return safe.escape_inline(f"{STATED}: {head} — {calibration.reason}")


def calibration_counts(calibration: Calibration) -> str:
    if not calibration.answers:
        return "No self-test answer the reader could state yet."
    line = (
        f"{count_text(calibration.answers, 'self-test answer')} the reader could state; at the "
        f"threshold in use {calibration.stated} stated, {calibration.stated_right} of them right"
    )
    if calibration.moved:
        line += (
            f" (at the fitted one {calibration.stated_at_shipped} stated, "
            f"{calibration.right_at_shipped} right)"
        )
    return line + "."


def overall_sentence(documents: Sequence[DocumentInfo], checks: dict[str, DocumentCheck]) -> str:
    asked = sum(c.asked for c in checks.values())
    right = sum(c.right for c in checks.values())
    done = f"{len(checks)} of {count_text(len(documents), 'document')} checked"
    if not asked:
        return done + "."
    questions = count_text(asked, "self-test question")
    return f"{done}: {right} of {questions} answered right ({percent(right / asked)})."


def misreadings_table(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    rows = [(o.question, o.expected, o.got, WHAT_HAPPENED.get(o.kind, o.kind)) for o in outcomes]
    return pd.DataFrame(rows, columns=MISREADING_COLUMNS)


def queue_all() -> None:
    """The button's callback (before the page is drawn, so the list shows them waiting)."""
    try:
        runner = get_runner()
        ids = [d.doc_id for d in runner.list_documents()]
        runner.selfcheck.enqueue(ids)
    except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
        failed = f"Could not queue the checks: {error_text(exc)}"
        st.session_state[FLASH_KEY] = ("error", safe.escape_inline(failed))
        return
    st.session_state[FLASH_KEY] = (
        "info",
        f"Queued {count_text(len(ids), 'document')} for a new reading check.",
    )


def status_text(
    check: DocumentCheck | None, waiting: bool, background: bool, now: bool = False
) -> str:
    """Where a document's check is ('' when its current check is all there is to say):
    being checked `now`, or waiting its turn."""
    if waiting and now and background:
        return "Checking again…" if check else "Checking…"
    if waiting:
        return "Waiting to be checked again" if check else "Waiting"
    return "" if check else "Not checked yet"


def document_card(
    doc: DocumentInfo,
    check: DocumentCheck | None,
    waiting: bool,
    background: bool,
    now: bool = False,
) -> None:
    """One document: its score and numbers, or why there are none yet."""
    with st.container(border=True):
        status = status_text(check, waiting, background, now)
        title = safe.escape_inline(doc.title or doc.source)
        marks = [badge(None if check is None else check.score), status and f":gray-badge[{status}]"]
        st.markdown(" ".join([f"**{title}**", *(m for m in marks if m)]))
        name = safe.escape_inline(doc.source)
        if check is None:
            st.caption(name)
            return
        st.markdown(score_sentence(check))
        st.caption(f"{name} · {details_sentence(check)} · {checked_when(check)}")
        for place in check.as_text:
            st.warning(
                safe.escape_inline(place[:1].upper() + place[1:]) + ". " + TEXT_TABLE_FIX,
                icon=":material/table:",
            )
        if not check.complete:
            st.caption(budget_note(check, budget_s=get_settings().selfcheck_budget_s))
        wrong = check.misreadings()
        if wrong:
            with st.expander(f"Misreadings ({len(wrong)})"):
                st.dataframe(misreadings_table(wrong), hide_index=True, width="stretch")


def selfcheck_section() -> None:
    """Caption, threshold, one card per document, and "Check all documents again"."""
    st.caption(
        "Hopwise asks itself questions that each document's own tables and records answer, "
        "offline, and checks the first line of each answer against the value the document "
        "states. Only admins see this."
    )
    try:
        runner, settings = get_runner(), get_settings()
        documents = runner.list_documents()
        checks = runner.selfcheck.checks()
        queue = tuple(runner.selfcheck.pending())
        running = runner.selfcheck.running
        calibration = runner.selfcheck.calibration
    except Exception as exc:  # noqa: BLE001 - shown, never a stack trace
        st.error(safe.escape_inline(f"Could not read the reading checks: {error_text(exc)}"))
        return
    if calibration is not None and calibration.threshold > 1:  # nothing is stated any more
        st.warning(calibration_sentence(calibration))
    else:
        st.markdown(calibration_sentence(calibration))
    if calibration is not None and calibration.answers:
        st.caption(calibration_counts(calibration))
    if not documents:
        st.caption("No documents to check yet.")
        return
    st.caption(overall_sentence(documents, checks))
    if queue and not settings.selfcheck:
        st.caption(
            "Background reading checks are off here (HOPWISE_SELFCHECK=off): the documents "
            "marked Waiting are checked once they are on."
        )
    for doc in documents:
        document_card(doc, checks.get(doc.doc_id), doc.doc_id in queue, settings.selfcheck,
                      now=doc.doc_id == running)  # fmt: skip
    st.button(
        "Check all documents again",
        key="admin_selfcheck_again",
        on_click=queue_all,
        disabled=not settings.selfcheck,
        help=None
        if settings.selfcheck
        else "Background reading checks are off here (HOPWISE_SELFCHECK=off).",
    )
    flash = st.session_state.pop(FLASH_KEY, None)
    if flash:
        kind, text = flash
        (st.error if kind == "error" else st.info)(text)
    if queue and settings.selfcheck:
        st.caption("Checks run in the background, one document at a time; this list follows them.")
        follow_checks(queue)


@st.fragment(run_every=FOLLOW_S)
def follow_checks(waiting: tuple[str, ...]) -> None:
    """While documents wait for their check: draw the page again when the queue moves."""
    try:
        moved = tuple(get_runner().selfcheck.pending()) != waiting
    except Exception:  # noqa: BLE001 - the next look, or the next page, says more
        return
    if moved:
        st.rerun(scope="app")
