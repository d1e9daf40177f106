"""Reading checks (issue 47): a document's own tables asked back through the real graph, a
table the parser read as lines flagged, the checks kept for the admin only and removed with
their document, and the stated-answer threshold chosen on them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hopwise.cli import main
from hopwise.selfcheck.calibration import MIN_ANSWERS, NEVER, calibrate
from hopwise.selfcheck.check import DocumentCheck, Outcome
from tests.graph.offline_app import offline_app

PARTS = """# Spare parts

Parts we keep in stock, with the bin each sits in.

| Part | Bin | Reorder at | Supplier |
| --- | --- | --- | --- |
| Hinge kit | B-14 | 40 units | Orrin Tools |
| Gasket ring | C-02 | 250 units | Palmer Seals |
| Drive belt | A-07 | 12 units | Quill Motion |
| Fan blade | D-31 | 8 units | Rook Air |
"""
# the same kind of table typed as text, its columns not lined up: read as lines, and flagged
SHIFTS = """Weekend shifts

Desk  Lead  Start
Front counter  Tamsin Vale  07:00
Loading bay north  Ivo Brask  by the  06:30 bell
Night office   Wren Adley 22:00
"""


# ---- the calibration


def pairs(
    right: int, wrong: int, p_right: float = 0.9, p_wrong: float = 0.9
) -> list[tuple[float, bool]]:
    return [(p_right, True)] * right + [(p_wrong, False)] * wrong


def test_too_few_self_test_answers_leave_the_fitted_threshold() -> None:
    c = calibrate(pairs(1, MIN_ANSWERS - 2), shipped=0.8)
    assert c.threshold == 0.8 and not c.moved and "needed" in c.reason


def test_a_corpus_read_worse_than_the_dev_sets_raises_the_threshold() -> None:
    # the confident answers are right, the middling ones often wrong
    found = pairs(20, 1, p_right=0.97, p_wrong=0.95) + pairs(10, 10, p_right=0.85, p_wrong=0.85)
    c = calibrate(found, shipped=0.8)
    assert c.threshold > 0.85 and c.moved
    assert c.stated == 21 and c.stated_right == 20  # at the chosen threshold: 95 % right
    assert c.stated_at_shipped == 41 and c.right_at_shipped == 30
    assert "raised" in c.reason


def test_no_threshold_precise_enough_stops_stating() -> None:
    c = calibrate(pairs(10, 15, p_right=0.9, p_wrong=0.99), shipped=0.8)
    assert c.threshold == NEVER and c.stated == 0 and "not stated" in c.reason


def test_a_corpus_read_well_lowers_it_only_down_to_the_floor_and_with_support() -> None:
    found = (
        pairs(30, 0, p_right=0.9)
        + pairs(25, 1, p_right=0.6, p_wrong=0.6)
        + pairs(5, 0, p_right=0.4)
    )
    assert calibrate(found, shipped=0.8).threshold == 0.8  # no floor: the fitted one stands
    lowered = calibrate(found, shipped=0.8, floor=0.5)
    assert lowered.threshold == 0.6 and lowered.stated == 56 and "lowered" in lowered.reason
    assert calibrate(found, shipped=0.8, floor=0.7).threshold == 0.8  # 0.6 is below the floor


# ---- checks through the real graph


def test_a_documents_table_is_asked_back_and_a_table_read_as_text_is_flagged(
    tmp_path: Path,
) -> None:
    with offline_app(tmp_path, {"parts.md": PARTS, "shifts.txt": SHIFTS}) as app:
        app.selfcheck.budget_s = 600.0  # all twelve questions, however busy the machine
        docs = {d.source: d for d in app.list_documents()}
        parts = app.selfcheck.check(docs["parts.md"]).summary()
        shifts = app.selfcheck.check(docs["shifts.txt"]).summary()
        assert parts["tables"] == 1 and parts["table_rows"] == 4 and parts["questions_asked"] >= 8
        assert (
            parts["right_first_lines"] >= parts["questions_asked"] - 2
        )  # a clean table reads well
        assert parts["stated_right"] <= parts["stated"] and parts["tables_read_as_text"] == []
        assert shifts["tables"] == 0
        assert shifts["tables_read_as_text"] == [
            "the table starting “Desk Lead Start” was read as text"
        ]
        assert set(app.selfcheck.checks()) == {d.doc_id for d in docs.values()}
        assert app.selfcheck.calibration is not None  # chosen again after each check


def test_a_check_reads_at_the_fitted_threshold_whatever_the_deployment_chose(
    tmp_path: Path,
) -> None:
    with offline_app(tmp_path, {"parts.md": PARTS}) as app:
        app.use_reader_threshold(NEVER)  # the deployment states nothing now
        check = app.selfcheck.check(app.list_documents()[0])
        assert check.stated > 0  # its pairs do not depend on the last calibration
        for o in check.outcomes:
            assert o.right == (o.expected.casefold() in o.got.casefold())
            assert 0 < o.stated_prob <= 1


def test_the_worst_misreadings_come_first() -> None:
    def outcome(kind: str, right: bool) -> Outcome:
        return Outcome(f"q {kind} {right}", "v", f"line {kind}", kind, right, 0.5, right, "cell")

    check = DocumentCheck("d", "s.md", 1, "c", outcomes=[
        outcome("not_found", False), outcome("quote", False), outcome("short", True),
        outcome("short", False), outcome("quote", True),
    ])  # fmt: skip
    assert [o.kind for o in check.misreadings()] == ["short", "quote", "not_found"]
    counts = (check.asked, check.right, check.stated, check.stated_right, check.abstained)
    assert counts == (5, 2, 2, 1, 1)
    assert check.summary()["misreadings"][0] == {"question": "q short False", "expected": "v",
                                                 "got": "line short", "kind": "short"}  # fmt: skip
    assert DocumentCheck.of(json.loads(json.dumps(check.as_json()))) == check


def test_the_threshold_in_use_decides_whether_a_short_answer_is_stated(tmp_path: Path) -> None:
    question = "What is the Bin of Gasket ring?"
    with offline_app(tmp_path, {"parts.md": PARTS}) as app:
        assert app.try_offline(question, ["all"]).answer.startswith("Answer: C-02")
        app.use_reader_threshold(NEVER)
        quoted = app.try_offline(question, ["all"]).answer
        assert not quoted.startswith("Answer:") and "C-02" in quoted.splitlines()[0]


def test_checks_stay_with_the_admin_and_go_with_their_document(tmp_path: Path) -> None:
    with offline_app(tmp_path, {"parts.md": PARTS}, groups=("stores",)) as app:
        doc = app.list_documents()[0]
        check = app.selfcheck.check(doc)
        assert check.asked and check.right  # asked as an admin reads: the restricted table
        assert app.list_threads() == [] and app.all_feedback() == []  # no chat, no history
        assert app.search("Gasket ring", ["all"]) == []  # a reader outside the group: nothing
        app.delete_document(doc.doc_id)
        assert app.selfcheck.log.all() == {} and app.selfcheck.checks() == {}


@pytest.mark.slow  # 10–40 s: the built-in model loads and embeds first, as in the app
def test_an_upload_is_checked_in_the_background(tmp_path: Path) -> None:
    with offline_app(tmp_path, {}) as app:
        app.selfcheck.limit = 4
        app.start_background_work()  # vectors, phrase keys and reading checks, as the app does
        try:
            [result] = app.ingest_uploads([("parts.md", PARTS.encode())], groups=None)
            deadline = time.monotonic() + 60
            while result.doc_id not in app.selfcheck.checks() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert app.selfcheck.checks()[result.doc_id].asked > 0
            assert app.selfcheck.pending() == []
        finally:
            app.close()


def test_the_selfcheck_command_prints_each_document_and_the_threshold(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOPWISE_EMBEDDINGS", "off")
    (data_dir.parent / "parts.md").write_text(PARTS, encoding="utf-8")
    assert main(["ingest", str(data_dir.parent / "parts.md")]) == 0
    capsys.readouterr()
    assert main(["selfcheck", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [doc] = out["documents"]
    assert doc["source"] == "parts.md" and doc["questions_asked"] > 0 and doc["tables"] == 1
    assert set(out["calibration"]) >= {"threshold", "shipped", "floor", "reason"}
    assert main(["selfcheck", "--document", "nope"]) == 1
    assert main(["selfcheck"]) == 0
    text = capsys.readouterr().out
    assert "parts.md" in text and "first lines right" in text and "stated-answer threshold" in text


STORES_ZH = """# 备件库位

| 备件 | 库位 | 供应商 |
| --- | --- | --- |
| 铰链套件 | B-14 | 奥林工具 |
| 密封圈 | C-02 | 帕尔默密封 |
| 传动带 | A-07 | 奎尔传动 |
"""


@pytest.mark.slow  # 10–15 s: two knowledge bases, every question of both documents: in .ci/run's slow suite
def test_with_documents_in_both_languages_some_questions_come_in_the_other(tmp_path: Path) -> None:
    with offline_app(tmp_path, {"parts.md": PARTS}) as alone:
        check = alone.selfcheck.check(alone.list_documents()[0])
        assert check.lang == "en" and not any(o.cross for o in check.outcomes)
    with offline_app(tmp_path / "both", {"parts.md": PARTS, "stores.md": STORES_ZH}) as app:
        app.selfcheck.budget_s = 600.0
        docs = {d.source: d for d in app.list_documents()}
        english = app.selfcheck.check(docs["parts.md"])
        chinese = app.selfcheck.check(docs["stores.md"])
    assert chinese.lang == "zh"
    crossed = [o for o in english.outcomes if o.cross]
    assert crossed and all(o.question.endswith("？") for o in crossed)  # a Chinese frame
    assert [o for o in chinese.outcomes if o.cross][0].question.startswith("What is the ")
    assert english.summary()["cross_language"]["asked"] == len(crossed)


def test_one_process_of_a_deployment_checks_what_was_left(tmp_path: Path) -> None:
    """Every process checks the uploads it receives; the documents left without a check (after
    a restart) are checked by the one process that holds the deployment's lease."""
    from types import SimpleNamespace

    from hopwise.database import SqliteDatabase
    from hopwise.selfcheck.worker import SelfChecker
    from hopwise.settings import Settings

    def process() -> SelfChecker:
        db = SqliteDatabase(tmp_path / "conversations.sqlite")
        return SelfChecker(SimpleNamespace(database=db, settings=Settings(data_dir=tmp_path)))  # type: ignore[arg-type]

    first, second = process(), process()
    assert first.sweeps() and not second.sweeps()
    first.stop()  # the process ends: another takes the role
    assert second.sweeps()
    second.stop()


def test_a_scanned_table_whose_cells_cannot_be_placed_is_flagged_on_its_page(
    tmp_path: Path,
) -> None:
    import io

    from PIL import Image, ImageDraw, ImageFont

    from ingest.pipeline import ingest_bytes

    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 28)
    image = Image.new("RGB", (1400, 500), "white")
    draw = ImageDraw.Draw(image)
    rows = [["Bay", "Crane", "Load"], ["B1", "Otter", "12 t"], ["B2", "Heron", "30 t"]]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            draw.text((80 + 400 * c, 80 + 60 * r), cell, font=font, fill="black")
    for x, cell in ((80, "B3"), (330, "under"), (560, "repair"), (880, "8 t")):  # no column
        draw.text((x, 260), cell, font=font, fill="black")
    data = io.BytesIO()
    image.save(data, format="PNG")
    with offline_app(tmp_path, {}) as app:
        done = ingest_bytes(data.getvalue(), "cranes.png", app.retriever, groups=["all"],
                            config=app.settings.ingest)  # fmt: skip
        assert done.status == "ingested", done.reason
        check = app.selfcheck.check(app.list_documents()[0])
    assert check.as_text == ["the table on page 1 starting “Bay Crane Load” was read as text"]


def test_columns_kept_as_lines_in_a_passage_are_a_table_read_as_text() -> None:
    from hopwise.selfcheck.check import text_table_at

    kept = "Kiln\tFuel\tPeak\nArden\twood\t1280 C\nBrell\tgas\t1190 C"  # a preformatted block
    assert text_table_at(kept)
    assert not text_table_at("Kiln | Fuel | Peak\nArden | wood | 1280 C\nBrell | gas | 1190 C")
    assert not text_table_at("The kilns are fired daily.  Arden burns wood.\nBrell burns gas.")
