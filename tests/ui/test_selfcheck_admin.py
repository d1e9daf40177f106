"""The Admin page's reading check (AppTest, Milvus Lite, offline reasoning): each document's
score, numbers and misreadings, the threshold chosen on them and why, a hostile file name,
heading and cell shown as text, nothing of it for anyone but an admin, and "Check all documents again"
queueing every document. The sentences themselves are checked as plain functions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from hopwise.selfcheck.calibration import Calibration
from hopwise.selfcheck.check import DocumentCheck, Outcome
from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app, texts
from tests.ui.markdown_tokens import links, live_parts, shown_text
from ui.selfcheck_admin import budget_note, calibration_sentence, score_sentence

ADMIN_PAGE = "app_pages/admin.py"
# Two tables share a key (Arden), and the first one's notes name the second one's columns: what
# the second says of Arden is read from the first.
KILNS = b"""# Kilns

## Kilns
| Kiln | Fuel | Peak | Notes |
| --- | --- | --- | --- |
| Arden | wood | 1280 C | Fired by Arden Peak crew, fuel is coal on Sundays |
| Brell | gas | 1190 C | Brell fuel is wood in winter |
| Corra | coal | 1250 C | Corra peak 1300 C at night |

## Spares
| Kiln | Fuel | Peak |
| --- | --- | --- |
| Arden | coal | 900 C |
| Dorne | oil | 1100 C |
"""
HOSTILE_NAME = "<img src=x onerror=alert(1)> [link](x).html"
LINK, IMAGE = "[link](http://x)", "![i](http://x/i) <img src=x onerror=alert(1)>"
YARDS = b"""<html><body><h1>Yards</h1>
<table><tr><th>Yard</th><th>Gate</th><th>Keeper</th></tr>
<tr><td>Pim</td><td>west arch</td><td>Ro Tesk</td></tr>
<tr><td>Quill</td><td>north arch</td><td>Ada Brum</td></tr></table>
</body></html>"""
# what a check says of a table read as text under a hostile heading, and of a hostile cell
# misread (stored as the document's check: the page, not the parser, is under test here)
HOSTILE_PLACE = f"the table under “Sheds {LINK} {IMAGE}” was read as text"
HOSTILE_MISREADING = Outcome(
    f"What is the Gate of {LINK}?", IMAGE, f"Answer: {LINK} [1]", "short", False, 0.9, False, "cell"
)
PROSE = b"# Notes\n\nThe ferry leaves at dawn and comes back before dusk.\n"
USERS = {
    "root": {"password": "root-pw", "groups": [], "admin": True},
    "ivo": {"password": "ivo-pw", "groups": []},
}


@pytest.fixture(scope="module")
def kb(app_data: Path) -> Iterator[dict[str, Any]]:
    """Four documents: three checked now (in this thread), one never; no background checker,
    so what is queued stays queued."""
    from hopwise.selfcheck.worker import SelfChecker
    from ingest.pipeline import ingest_bytes
    from ui.services import get_runner, get_settings

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOPWISE_EMBEDDINGS", "off")  # keyword search: these tests read the page
        mp.setattr(SelfChecker, "start", lambda self: None)
        get_settings.clear()
        runner = get_runner()
        store, settings = runner.knowledge_base(), get_settings()
        files = [
            ("kilns.md", KILNS),
            (HOSTILE_NAME, YARDS),
            ("notes.md", PROSE),
            ("later.md", PROSE),
        ]
        for name, data in files:
            done = ingest_bytes(data, name, store, groups=["all"], config=settings.ingest)
            assert done.status == "ingested", done.reason
        by_source = {d.source: d for d in runner.list_documents()}
        checks = {n: runner.selfcheck.check(by_source[n]) for n, _ in files[:3]}
        hostile = checks[HOSTILE_NAME]
        hostile.as_text, hostile.outcomes = [HOSTILE_PLACE], [*hostile.outcomes, HOSTILE_MISREADING]
        runner.selfcheck.log.put(hostile)
        runner.selfcheck.recalibrate()
        assert runner.selfcheck.pending() == []
        yield {"runner": runner, "checks": checks, "docs": by_source}
        get_settings.clear()


def admin_page(**secrets: object):
    at = new_app(**secrets).run()
    at.switch_page(ADMIN_PAGE).run()
    assert_no_exception(at)
    return at


def signed_in_admin():
    at = admin_page()
    at.text_input[0].set_value(ADMIN_PASSWORD)
    at.button[0].click().run()
    assert_no_exception(at)
    assert "Reading check" in texts(at)
    return at


def page_markdown(at) -> list[str]:
    """Every string the page renders as Markdown (bodies, captions, alerts, labels)."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for kind in (at.info, at.success, at.warning, at.error, at.subheader, at.title):
        parts += [e.value for e in kind]
    parts += [e.label for e in at.expander] + [b.label for b in at.button]
    return [str(p) for p in parts]


def shown(at) -> str:
    return "\n".join(shown_text(m) for m in page_markdown(at))


def test_an_admin_reads_each_documents_score_numbers_and_the_threshold(kb) -> None:
    at = signed_in_admin()
    page = shown(at)
    kilns = kb["checks"]["kilns.md"]
    assert kilns.asked and kilns.score is not None
    assert (
        f"{kilns.right} of {kilns.asked} self-test questions answered right on the first line "
        f"({kilns.score * 100:.0f} %)"
    ) in page
    assert f"{kilns.stated} stated answers, {kilns.stated_right} right" in page
    assert "found 2 tables (5 rows), 0 records" in page
    assert "No tables, records or labelled values to ask about" in page  # notes.md
    assert "Not checked yet" in page  # later.md
    assert "3 of 4 documents checked" in page

    calibration = kb["runner"].selfcheck.calibration
    assert calibration is not None and calibration.reason in page
    assert f"threshold {calibration.threshold:.2f}" in page

    misread = [c for c in kb["checks"].values() if c.misreadings()]
    labels = [e.label for e in at.expander if e.label.startswith("Misreadings")]
    assert sorted(labels) == sorted(f"Misreadings ({len(c.misreadings())})" for c in misread)
    tables = [d.value for d in at.dataframe if "first line shown" in d.value.columns]
    assert sorted(len(t) for t in tables) == sorted(len(c.misreadings()) for c in misread)


def test_a_hostile_file_name_heading_and_cell_show_as_text(kb) -> None:
    at = signed_in_admin()
    for markdown in page_markdown(at):  # our own bold, italics and code (other sections)
        assert live_parts(markdown, allow=frozenset({"strong", "em", "code_inline"})) == [], (
            markdown
        )
        assert links(markdown) == [] and "](" not in markdown, markdown
    page = shown(at)
    assert HOSTILE_NAME in page  # the name itself, as text
    assert HOSTILE_PLACE[0].upper() + HOSTILE_PLACE[1:] in page
    assert HOSTILE_MISREADING.question not in page  # a misreading is a table's row, not Markdown
    rows = pd.concat([d.value for d in at.dataframe if "first line shown" in d.value.columns])
    row = rows[rows["question"] == HOSTILE_MISREADING.question].iloc[0]
    assert (row["expected"], row["first line shown"]) == (IMAGE, f"Answer: {LINK} [1]")


@pytest.mark.parametrize("who", ["signed out", "not an admin", "no admin password"])
def test_only_an_admin_sees_the_reading_check(kb, who: str) -> None:
    if who == "no admin password":  # the local user before the admin password
        at = admin_page()
    else:
        at = new_app(users=USERS).run()
        if who == "not an admin":
            at.sidebar.text_input[0].set_value("ivo")
            at.sidebar.text_input[1].set_value("ivo-pw")
            at.sidebar.button[0].click().run()
        at.switch_page(ADMIN_PAGE).run()
        assert_no_exception(at)
    page = shown(at)
    kilns = kb["checks"]["kilns.md"]
    assert "Reading check" not in page and "self-test" not in page
    assert f"{kilns.right} of {kilns.asked}" not in page and "kilns.md" not in page
    assert not at.dataframe and not [b for b in at.button if b.key == "admin_selfcheck_again"]


def test_check_all_documents_again_queues_every_document(
    kb, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = signed_in_admin()
    assert "Checking" not in shown(at) and "Waiting" not in shown(at)
    at.button(key="admin_selfcheck_again").click().run()
    assert_no_exception(at)
    assert "Queued 4 documents for a new reading check." in [i.value for i in at.info]
    docs = kb["docs"]
    assert set(kb["runner"].selfcheck.pending()) == {d.doc_id for d in docs.values()}
    page = shown(at)
    assert page.count("Waiting to be checked again") == 3 and page.count("Waiting") == 4
    assert "Not checked yet" not in page and "Checking" not in page  # none is being checked
    from hopwise.selfcheck.worker import SelfChecker

    later = docs["later.md"].doc_id  # the one without a check, being checked now
    monkeypatch.setattr(SelfChecker, "running", property(lambda self: later))
    page = shown(at.run())
    assert page.count("Checking…") == 1 and page.count("Waiting to be checked again") == 3


def fitted_at(threshold: float, reason: str) -> Calibration:
    """A calibration against a fitted threshold of 0.84."""
    return Calibration(threshold, 0.84, 0.8, 30, 20, 19, 25, 21, reason)


def test_sentences_for_the_edges() -> None:
    assert shown_text(calibration_sentence(fitted_at(0.86, "why"))) == (
        "Stated answers (“Answer: …”): threshold 0.86 (fitted 0.84) — why"
    )
    never = shown_text(calibration_sentence(fitted_at(1.01, "no")))
    assert "never stated (fitted 0.84)" in never
    assert "threshold 0.84 (as fitted)" in shown_text(calibration_sentence(fitted_at(0.84, "ok")))
    assert "could not be read" in calibration_sentence(None)

    cut = DocumentCheck("d", "a.md", 1, "c", generated=12, complete=False)
    assert "ran out before the first" in score_sentence(cut)
    cut.outcomes = [Outcome("q", "v", "Answer: v", "short", True, 0.9, True, "cell")] * 2
    assert score_sentence(cut) == (
        "2 of 2 self-test questions answered right on the first line (100 %)"
    )
    assert budget_note(cut, 60) == (
        "The time budget (60 s) stopped the check after 2 of 12 questions: the score is of "
        "those asked."
    )
